// Butterflies of kernels/modarith.cuh in registers alone, for benchmarks/butterfly_throughput.py: no memory traffic in
// the loop, so the time is what the arithmetic's instructions cost on the ALU and multiply-add pipes, the bound they
// set on an NTT pass whatever its memory does.
#include "modarith.cuh"

// Each thread keeps 16 values and 8 twiddles in registers. A round is one radix-16 step as ntt_steps runs it: 4 stages
// of 8 Cooley-Tukey butterflies, stage u pairing e and e + 8 / 2^u, group j of stage u taking twiddle (j + u) mod 8;
// arithmetics with A::ALTERNATE_STAGES (Mod60) skip the reduction in stages 0 and 2, as a pass of 4 stages does
// (its last stage reduces). Values are reduced to [0, q) when stored.
template <class A>
__global__ void butterfly_rounds(typename A::T* __restrict__ x, const typename A::Tw* __restrict__ tw,
                                 const ModConst* __restrict__ consts, int rounds) {
    const A arith(consts[0]);
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    typename A::T v[16];
    typename A::Tw w[8];
#pragma unroll
    for (int e = 0; e < 16; ++e) v[e] = x[i + e * stride];
#pragma unroll
    for (int b = 0; b < 8; ++b) w[b] = tw[(i & 31) * 8 + b];
    for (int r = 0; r < rounds; ++r) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const int half = 8 >> u;
#pragma unroll
            for (int b = 0; b < 8; ++b) {
                const int j = b / half, e = j * 2 * half + b % half;
                const typename A::Tw& t = w[(j + u) & 7];
                if constexpr (A::ALTERNATE_STAGES) {
                    if ((u & 1) == 0)
                        arith.ct_unreduced(v[e], v[e + half], t);
                    else
                        arith.ct(v[e], v[e + half], t);
                } else {
                    arith.ct(v[e], v[e + half], t);
                }
            }
        }
    }
#pragma unroll
    for (int e = 0; e < 16; ++e) x[i + e * stride] = arith.reduce(v[e]);
}
