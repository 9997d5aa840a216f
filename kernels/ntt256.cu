// NTTs over 256-bit prime fields (field256.cuh) on (batch, n) elements of 32 bytes, limb-interleaved as the
// API holds them ((batch, n, 4) uint64, standard form), in place after the first pass.
//
// Two radix-2 transforms, both built from one pass kernel that runs up to 11 consecutive stages in shared
// memory (a block holds 2^11 elements: 64 KiB), two stages per round trip through it where they pair up:
//  * DIF (Gentleman-Sande butterflies, natural in -> bit-reversed out): passes from the top index bits down.
//    With the index split as (high H, pass bits t: k of them, low bits r: L of them), the pass computes for
//    each (H, r) the K = 2^k point DIF along t with root w^(n/K), then multiplies position t by
//    w_M^(r * bitrev_k(t)) (M = 2^(L+k), w_M = w^(n/M)): the twiddles of a 4-step split, so the remaining
//    passes are independent M/K-point transforms along r.
//  * DIT (Cooley-Tukey butterflies, bit-reversed in -> natural out): the mirror image, passes from the low
//    bits up, multiplying position t by w_M^(r * bitrev_k(t)) before the K-point DIT along t.
// Sub-transform twiddles come from one small table of w^(e n / K_top) (K_top = min(n, 2^11)); the
// 4-step twiddles from two tables of sqrt(n) entries (w^e = high[e >> b] * low[e & (2^b - 1)]), so no
// table of size n is ever built. All constants are in Montgomery form (see field256.cuh).
// Inverse transforms get n^-1 from a 4-step twiddle table pre-multiplied by it (host side: one pass reads
// that table), or, for one-pass sizes, from the optional factor applied on the stores (use_scale).
#include "field256.cuh"
#include "launch.cuh"

// Threads per block, and elements per block of ntt256_pass at most: passed by the loader from
// hebatch/backend/kernels.py; the defaults serve builds without them, and tests/test_kernel_boundary.py
// checks that the two agree.
#ifndef NTT256_THREADS
#define NTT256_THREADS 256
#endif
#ifndef NTT256_LOG_BLOCK
#define NTT256_LOG_BLOCK 11
#endif
static_assert(NTT256_THREADS >= 32 && NTT256_THREADS <= 1024 && (NTT256_THREADS & (NTT256_THREADS - 1)) == 0,
              "NTT256_THREADS: a power of two of at most 1024 threads");
static_assert(NTT256_LOG_BLOCK >= 1 && (32 << NTT256_LOG_BLOCK) <= 64 * 1024,
              "NTT256_LOG_BLOCK: a block's elements (32 bytes each) within 64 KiB of shared memory");

// The parameters of one ntt256_pass launch (NTT256_PASS_PARAMS of hebatch/backend/kernels.py, field by field).
struct Ntt256PassParams {
    const Fe* sub_tw;   // in-block twiddles w^(e n / K_top), K_top = 2^log_ktop
    const Fe* tw_low;   // 4-step twiddles: the direct table (tw_direct), else the low and high sqrt(n) tables
    const Fe* tw_high;
    const Fe* scale;    // the factor of the stores (use_scale)
    long long total_lanes;  // independent sub-transforms of the batch
    int log_n, log_k, log_low, log_c, log_ktop, tw_bits, use_scale, tw_direct;
};

// The parameters of twiddle_grid256 (GRID256_PARAMS of hebatch/backend/kernels.py).
struct Grid256Params {
    const Fe* low;
    const Fe* high;
    long long rows, cols;
    u64 row0, row_step, col0, col_step, mask;
    int bits;
};

// w^e from the two-level table, as a Montgomery-form multiplier.
template <class F>
__device__ __forceinline__ Fe power_from_tables(u64 e, const Fe* __restrict__ low, const Fe* __restrict__ high,
                                                int bits, const PDigits<F>& pd) {
    const Fe lo = low[e & ((1ull << bits) - 1)];
    const Fe hi = high[e >> bits];
    return mont_mul<F>(hi, lo, pd);  // (a R)(b R) R^-1 = ab R
}
template <class F>
__device__ __forceinline__ Fe power_from_tables(u64 e, const Fe* __restrict__ low, const Fe* __restrict__ high,
                                                int bits) {
    return power_from_tables<F>(e, low, high, bits, load_p_digits<F>());
}

// The 4-step twiddle w_M^(r bitrev_k(t)) of pass position (r, t): one read of the direct table (tw_direct:
// M entries, entry (bitrev_k(t) << log_low) + r, consecutive r contiguous as the lanes of a block) or, for
// passes whose M is too large for one, the product of two entries of the sqrt(n) tables.
template <class F>
__device__ __forceinline__ Fe four_step_twiddle(long long r, int t, int log_k, int log_low, int tw_shift,
                                                const Fe* __restrict__ tw_low, const Fe* __restrict__ tw_high,
                                                int tw_bits, int tw_direct, const PDigits<F>& pd) {
    const u32 k1 = __brev((u32)t) >> (32 - log_k);
    if (tw_direct) return tw_low[((long long)k1 << log_low) + r];
    return power_from_tables<F>(((u64)r * k1) << tw_shift, tw_low, tw_high, tw_bits, pd);
}

// One pass: k = log_k stages on every group of K elements spaced 2^log_low apart. Lanes (one per
// independent sub-transform, flat index f = (H, r) over the whole batch) go 2^log_c to a block.
// Element (f, t) lives at ((f >> L) << (L + k)) + (t << L) + (f & (2^L - 1)).
// BITREV_IN: the first pass of a transform whose input and output orders are the same reads its input
// bit-reversed, position i of each row from in[bitrev_n(i)], in place of a permutation pass before it (an
// instance of its own, so the other passes' code is as without it). Such a pass has no twiddles on its loads (a
// DIT's first pass has no low bits, a DIF's twiddles come on the stores).
// Its reads run along natural positions: with low bits (a DIF's first pass), a lane's K elements are one run, so
// consecutive threads take consecutive bitrev_k(t); without (a DIT's), element (f, t) comes from
// (bitrev_k(t), bitrev(f)), so the lanes go to blocks in bit-reversed order (block lane g is f = bitrev(g)
// within its row): each t is then a run of 2^log_c consecutive positions.
// 3 blocks of 64 KiB share an SM (228 KiB); the register cap of 3 blocks (85 a thread) keeps registers from
// lowering that.
template <class F, bool DIT, bool BITREV_IN>
__global__ void __launch_bounds__(NTT256_THREADS, 3)
    ntt256_pass(const Fe* __restrict__ in, Fe* __restrict__ out, KERNEL_PARAMS Ntt256PassParams prm) {
    const long long total_lanes = prm.total_lanes;
    const int log_n = prm.log_n, log_k = prm.log_k, log_low = prm.log_low, log_c = prm.log_c,
              log_ktop = prm.log_ktop, tw_bits = prm.tw_bits, use_scale = prm.use_scale, tw_direct = prm.tw_direct;
    const Fe* __restrict__ sub_tw = prm.sub_tw;
    const Fe* __restrict__ tw_low = prm.tw_low;
    const Fe* __restrict__ tw_high = prm.tw_high;
    const Fe* __restrict__ scale = prm.scale;
    extern __shared__ __align__(32) unsigned char smem_raw[];
    const PDigits<F> pd = load_p_digits<F>();
    Fe* sm = reinterpret_cast<Fe*>(smem_raw);
    const int K = 1 << log_k, E = K << log_c, C = 1 << log_c;
    const long long lane0 = (long long)blockIdx.x << log_c;
    const long long low_mask = (1ll << log_low) - 1;
    const int tw_shift = log_n - log_low - log_k;  // exponent of w_M in powers of w: n / M
    const int lane_bits = log_n - log_k;          // lanes of a row: 2^lane_bits
    const bool lanes_reversed = BITREV_IN && log_low == 0 && lane_bits > 0;
    // where lanes_reversed: the lane that block lane g (lane0 + c) runs
    auto reversed_lane = [&](long long g) {
        const long long row_lane = g & ((1ll << lane_bits) - 1);
        return (g - row_lane) | (long long)(__brevll((u64)row_lane) >> (64 - lane_bits));
    };
    auto position = [&](long long f, int t) {
        return ((f >> log_low) << (log_low + log_k)) + ((long long)t << log_low) + (f & low_mask);
    };

    // loads: consecutive threads take consecutive r (contiguous in memory) where there are low bits,
    // consecutive t otherwise (then t is the contiguous index). The DIF's loop (no twiddles) is written once
    // per mapping.
    auto load = [&](auto contiguous_t) {
        constexpr bool KNOWN = decltype(contiguous_t)::value;  // log_low == 0 known at compile time
        for (int e = threadIdx.x; e < E; e += NTT256_THREADS) {
            int c, t;
            if (KNOWN || log_low == 0) {
                t = e & (K - 1);
                c = e >> log_k;
            } else {
                c = e & (C - 1);
                t = e >> log_c;
            }
            const long long f = lane0 + c;
            if (f < total_lanes) {
                Fe v = in[position(f, t)];
                if (DIT && !KNOWN && log_low > 0)
                    v = mont_mul<F>(v, four_step_twiddle<F>(f & low_mask, t, log_k, log_low, tw_shift, tw_low, tw_high,
                                                            tw_bits, tw_direct, pd), pd);
                sm[c * K + t] = v;
            }
        }
    };
    if constexpr (BITREV_IN) {
        const long long row_mask = (1ll << log_n) - 1;
        for (int e = threadIdx.x; e < E; e += NTT256_THREADS) {
            int c, t;
            if (lanes_reversed) {
                c = e & (C - 1);
                t = e >> log_c;
            } else {
                c = e >> log_k;
                t = (int)(__brev((u32)(e & (K - 1))) >> (32 - log_k));
            }
            if (lane0 + c < total_lanes) {
                const long long i = position(lanes_reversed ? reversed_lane(lane0 + c) : lane0 + c, t);
                sm[c * K + t] = in[(i & ~row_mask) | (long long)(__brevll((u64)(i & row_mask)) >> (64 - log_n))];
            }
        }
    } else if (!DIT && log_low == 0) {
        load(Bool<true>());
    } else {
        load(Bool<false>());
    }
    __syncthreads();

    // stages: half-size h = K/2 .. 1 (DIF) or 1 .. K/2 (DIT); butterfly j of a group uses w_K^(j K / 2h),
    // entry j 2^(log_ktop - 1 - log h) of the sub table. Two stages at a time where they pair up: a thread takes
    // four elements through both stages in registers (two butterflies each), so a pass makes half as many
    // round trips through shared memory and barriers; an odd stage count starts with one radix-2 stage.
    auto twiddle = [&](int j, int log_h) { return sub_tw[j << (log_ktop - 1 - log_h)]; };
    // one butterfly: DIF (a + b, (a - b) w) or DIT (a + w b, a - w b); w = 1 when log_h == 0
    auto butterfly = [&](Fe& a, Fe& b, int j, int log_h) {
        if (log_h == 0) {
            const Fe s = fadd<F>(a, b);
            b = fsub<F>(a, b);
            a = s;
        } else if (DIT) {
            const Fe wb = mont_mul<F>(b, twiddle(j, log_h), pd);
            b = fsub<F>(a, wb);
            a = fadd<F>(a, wb);
        } else {
            const Fe d = fsub_unreduced<F>(a, b);  // (a - b + p) w: exact, see fsub_unreduced
            a = fadd<F>(a, b);
            b = mont_mul<F>(twiddle(j, log_h), d, pd);
        }
    };
    // the first of the 2^m elements, spaced 2^log_r apart, that unit u of a stage (or pair) takes; j = its offset
    // in its group of 2^(log_r + m)
    auto unit_at = [&](int u, int m, int log_r, int& j) {
        const int c = u >> (log_k - m);
        const int q = u & ((K >> m) - 1);
        j = q & ((1 << log_r) - 1);
        return sm + c * K + ((q >> log_r) << (log_r + m)) + j;
    };
    int s = 0;
    if (log_k & 1) {
        const int log_h = DIT ? 0 : log_k - 1;
        const int h = 1 << log_h;
        for (int b = threadIdx.x; b < (E >> 1); b += NTT256_THREADS) {
            int j;
            Fe* x = unit_at(b, 1, log_h, j);
            Fe a = x[0], y = x[h];
            butterfly(a, y, j, log_h);
            x[0] = a;
            x[h] = y;
        }
        __syncthreads();
        s = 1;
    }
    for (; s < log_k; s += 2) {
        // DIF: stages of half-size h then h/2 on x[j + {0, h/2, h, 3h/2}] of a group of 2h;
        // DIT: stages of half-size h then 2h on x[j + {0, h, 2h, 3h}] of a group of 4h
        const int log_h = DIT ? s : log_k - 1 - s;
        const int log_r = DIT ? log_h : log_h - 1;  // log of the spacing of the four elements
        const int r = 1 << log_r;
        for (int g = threadIdx.x; g < (E >> 2); g += NTT256_THREADS) {
            int j;
            Fe* x = unit_at(g, 2, log_r, j);
            Fe x0 = x[0], x1 = x[r], x2 = x[2 * r], x3 = x[3 * r];
            if (DIT) {
                butterfly(x0, x1, j, log_h);
                butterfly(x2, x3, j, log_h);
                butterfly(x0, x2, j, log_h + 1);
                butterfly(x1, x3, j + r, log_h + 1);
            } else {
                butterfly(x0, x2, j, log_h);
                butterfly(x1, x3, j + r, log_h);
                butterfly(x0, x1, j, log_h - 1);
                butterfly(x2, x3, j, log_h - 1);
            }
            x[0] = x0;
            x[r] = x1;
            x[2 * r] = x2;
            x[3 * r] = x3;
        }
        __syncthreads();
    }

    // stores (same mapping as the loads), with the DIF's 4-step twiddles and the optional factor; written once
    // per lane order, so that the usual one has no test per element
    Fe factor;
    if (use_scale) factor = scale[0];
    auto store = [&](auto reversed) {
        for (int e = threadIdx.x; e < E; e += NTT256_THREADS) {
            int c, t;
            if (log_low == 0) {
                t = e & (K - 1);
                c = e >> log_k;
            } else {
                c = e & (C - 1);
                t = e >> log_c;
            }
            if (lane0 + c < total_lanes) {
                const long long f = decltype(reversed)::value ? reversed_lane(lane0 + c) : lane0 + c;
                Fe v = sm[c * K + t];
                if (!DIT && log_low > 0)
                    v = mont_mul<F>(v, four_step_twiddle<F>(f & low_mask, t, log_k, log_low, tw_shift, tw_low,
                                                            tw_high, tw_bits, tw_direct, pd), pd);
                if (use_scale) v = mont_mul<F>(v, factor, pd);
                out[position(f, t)] = v;
            }
        }
    };
    if constexpr (BITREV_IN) {
        if (lanes_reversed) {
            store(Bool<true>());
            return;
        }
    }
    store(Bool<false>());
}

// out[row, i] = in[row, i] * base^i, base^i = high[i >> bits] * low[i & (2^bits - 1)] (Montgomery form):
// the coset shift of coset NTTs, from two tables of sqrt(n) powers.
template <class F>
__global__ void scale_by_powers256(const Fe* __restrict__ in, Fe* __restrict__ out, long long total, int log_n,
                                   const Fe* __restrict__ low, const Fe* __restrict__ high, int bits) {
    const long long n_mask = (1ll << log_n) - 1;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const u64 i = (u64)(idx & n_mask);
        out[idx] = mont_mul<F>(in[idx], power_from_tables<F>(i, low, high, bits));
    }
}

// y[i, j] = x[i, j] * root^E, E = ((row0 + row_step i)(col0 + col_step j)) mod N for a root of power-of-two
// order N (N divides 2^64, so wrapping 64-bit products keep E exact; mask = N - 1): the twiddle step of a
// 4-step transform spread over devices, on one block of its matrix. x and y are (rows, cols) elements.
template <class F>
__global__ void twiddle_grid256(const Fe* __restrict__ x, Fe* __restrict__ y, KERNEL_PARAMS Grid256Params prm) {
    const long long rows = prm.rows, cols = prm.cols;
    const u64 row0 = prm.row0, row_step = prm.row_step, col0 = prm.col0, col_step = prm.col_step, mask = prm.mask;
    const int bits = prm.bits;
    const Fe* __restrict__ low = prm.low;
    const Fe* __restrict__ high = prm.high;
    const long long total = rows * cols;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long i = idx / cols, j = idx - i * cols;
        const u64 e = ((row0 + row_step * (u64)i) * (col0 + col_step * (u64)j)) & mask;
        y[idx] = mont_mul<F>(x[idx], power_from_tables<F>(e, low, high, bits));
    }
}

// Elementwise field operations for tests: out[0] = a b, out[1] = a + b, out[2] = a - b (standard form;
// the product is mont_mul(mont_mul(a, b), R^2 mod p)).
template <class F>
__global__ void field_ops256(const Fe* __restrict__ a, const Fe* __restrict__ b, const Fe* __restrict__ r2,
                             Fe* __restrict__ out, long long count) {
    const Fe rr = r2[0];
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < count;
         idx += (long long)gridDim.x * blockDim.x) {
        const Fe x = a[idx], y = b[idx];
        out[idx] = mont_mul<F>(mont_mul<F>(x, y), rr);
        out[count + idx] = fadd<F>(x, y);
        out[2 * count + idx] = fsub<F>(x, y);
    }
}

// Instantiations for nvcc builds (NVRTC compiles only what the name expressions ask for): taking a kernel's
// address instantiates it.
#ifndef __CUDACC_RTC__
#define NTT256_INSTANTIATE(F)                                                                                  \
    extern void* const ntt256_kernels_##F[] = {                                                                \
        (void*)&ntt256_pass<F, false, false>, (void*)&ntt256_pass<F, true, false>,                             \
        (void*)&ntt256_pass<F, false, true>,  (void*)&ntt256_pass<F, true, true>,                              \
        (void*)&scale_by_powers256<F>,        (void*)&field_ops256<F>,                                         \
        (void*)&twiddle_grid256<F>};
NTT256_INSTANTIATE(BN254Fr)
NTT256_INSTANTIATE(BLS12_381Fr)
NTT256_INSTANTIATE(BLS12_377Fr)
#undef NTT256_INSTANTIATE
#endif
