// Probe (benchmarks/ntt_cluster_probe.py; not a library kernel): a 2^14-point negacyclic merge NTT of 64-bit words
// in one launch, each row held by a cluster of 4 CTAs (sm_90 thread-block clusters). CTA c loads columns m in
// [1024 c, 1024 (c + 1)) of the row's four quarters, runs the transform's first two stages on them, writes quarter
// j's results into CTA j's shared memory (distributed shared memory), and after the cluster barrier runs stages
// 2..13 on its own quarter with ntt.cu's ntt_steps (the merge table, s0 = 2, h = c). STORE_THROUGH_CLUSTER: the
// outputs go through the cluster's shared memory once more, so that every CTA stores a contiguous quarter; else
// each CTA stores every fourth output. MIN_BLOCKS: CTAs per SM of the launch bounds.
#include "ntt.cu"

__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void st_cluster(const void* local, unsigned rank, u64 v) {
    unsigned a = (unsigned)__cvta_generic_to_shared(local), r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
    asm volatile("st.shared::cluster.u64 [%0], %1;" ::"r"(r), "l"(v) : "memory");
}

template <class A, bool STORE_THROUGH_CLUSTER, int MIN_BLOCKS>
__global__ void __cluster_dims__(4, 1, 1) __launch_bounds__(256, MIN_BLOCKS)
    cluster_ntt_2p14(const u64* __restrict__ in, u64* __restrict__ out, const ModConst* __restrict__ consts,
                     const Tw64* __restrict__ table) {
    extern __shared__ unsigned char smem_raw[];
    u64* smem = reinterpret_cast<u64*>(smem_raw);
    const int tid = threadIdx.x;
    const unsigned rank = cluster_rank();
    const long long row = blockIdx.x >> 2;
    const A arith(consts[0]);
    const u64* src = in + row * 16384 + rank * 1024 + tid;
    u64 v[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) v[i][j] = src[j * 4096 + i * 256];
    const Tw64 w1 = table[1], w2a = table[2], w2b = table[3];
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // stage 0 pairs quarters (0, 2), (1, 3); stage 1 pairs (0, 1), (2, 3)
        arith.ct(v[i][0], v[i][2], w1);
        arith.ct(v[i][1], v[i][3], w1);
        arith.ct(v[i][0], v[i][1], w2a);
        arith.ct(v[i][2], v[i][3], w2b);
    }
    cluster_sync();  // every CTA of the cluster has started (its shared memory may be written)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) st_cluster(smem + rank * 1024 + tid + i * 256, j, v[i][j]);
    cluster_sync();
    u64 x[16];
#pragma unroll
    for (int e = 0; e < 16; ++e) x[e] = smem[e * 256 + tid];
    __syncthreads();
    const Tw64 pair{};
    // quarter `rank` is the sub-transform with global bits above it o = rank: stages 2..13 (s0 = 2, h = rank)
    ntt_steps<A, 12, 0, 4, false, false, 0>(x, smem, 0, tid, table, 2, (long long)rank, pair, arith);
    // element e holds sub-output k = bitrev_16(e) 256 + tid: natural output position 4 k + bitrev_2(rank)
    const unsigned v_lane = ((rank & 1) << 1) | (rank >> 1);
    if (STORE_THROUGH_CLUSTER) {
        // position j = 4 k + v goes to CTA j >> 12 at j & 4095, so that every CTA stores one contiguous quarter
        cluster_sync();  // every CTA has read its shared memory (ntt_steps' last exchange)
#pragma unroll
        for (int e = 0; e < 16; ++e) {
            const int ebr = (int)(__brev((u32)e) >> 28);
            const unsigned j = ((((unsigned)ebr << 8) | tid) << 2) | v_lane;
            st_cluster(smem + (j & 4095), j >> 12, arith.reduce(x[e]));
        }
        cluster_sync();
        u64* dst = out + row * 16384 + rank * 4096 + tid;
#pragma unroll
        for (int e = 0; e < 16; ++e) dst[e * 256] = smem[e * 256 + tid];
    } else {
        u64* dst = out + row * 16384 + v_lane;
#pragma unroll
        for (int e = 0; e < 16; ++e) {
            const int ebr = (int)(__brev((u32)e) >> 28);
            dst[((long long)((ebr << 8) | tid)) * 4] = arith.reduce(x[e]);
        }
    }
}
