// RNS element-wise kernels, fast base conversion, automorphisms and random sampling for BFV.
//
// Data is uint64, C-contiguous (batch, limbs, n); a kernel walks rows (batch * limbs) along grid y and
// coefficients along grid x with grid-stride loops, so any grid (down to 1 x 1 blocks of 1 thread) covers
// everything. Operands are addressed by (pointer, batch stride, limb stride) in elements; a stride of 0
// broadcasts that axis. The coefficient stride is always 1. Limb l of a result uses consts[l].
//
// Reductions: Mod64 (modarith.cuh) for products of two reduced values; `wide_reduce` for any 128-bit
// value (reduce, base conversion sums, random words), with ratio = floor(2^128 / q) per modulus.
// Random words come from ChaCha20 (chacha20.cuh); see the sampling section at the end.
#include "chacha20.cuh"
#include "modarith.cuh"

#define RNS_MAX_SRC 64  // source limbs of one base conversion (checked on the host)

// floor(2^128 / q) as two words, one entry per limb.
struct __align__(16) WideRatio {
    u64 lo, hi;
};

// x1 * 2^64 + x0 mod q for any 128-bit value and q < 2^63. The quotient estimate is the exact
// floor(x * ratio / 2^128), which is floor(x / q) or one less, so one correction finishes.
__device__ __forceinline__ u64 wide_reduce(u64 x1, u64 x0, u64 q, const WideRatio& r) {
    const u64 lo_lo_hi = __umul64hi(x0, r.lo);
    const u128 mid = (u128)lo_lo_hi + (u64)(x1 * r.lo) + (u64)(x0 * r.hi);
    const u64 quot = x1 * r.hi + __umul64hi(x1, r.lo) + __umul64hi(x0, r.hi) + (u64)(mid >> 64);
    const u64 rem = x0 - quot * q;
    return rem >= q ? rem - q : rem;
}

// A sum of up to 2^31 products of two words below 2^64, kept exactly as two parts: e (five 32-bit digits at
// positions 0..4) takes a0 b0 + a1 b1 2^64, o (three digits at positions 1..3) takes a0 b1 + a1 b0 (a = a0 +
// a1 2^32, b likewise). On the device each part is one carry chain of 32-bit multiply-adds per product on
// register pairs: four wide multiply-adds (IMAD.WIDE.U32(.X)) and two to three adds per product in the
// conversions' loops, plus about two moves where ptxas keeps a sum's digits out of one aligned pair (nvcc 13,
// sm_90, the fast floor's loop); total() adds the parts once. Host builds run the C++ twin.
struct ProductSum {
    u32 e[5], o[3];
    __device__ __forceinline__ ProductSum() : e{0, 0, 0, 0, 0}, o{0, 0, 0} {}
    __device__ __forceinline__ void add_product(u64 a, u64 b) {
        const u32 a0 = (u32)a, a1 = (u32)(a >> 32), b0 = (u32)b, b1 = (u32)(b >> 32);
#ifdef __CUDA_ARCH__
        asm("mad.lo.cc.u32 %0, %8, %10, %0;\n\t"
            "madc.hi.cc.u32 %1, %8, %10, %1;\n\t"
            "madc.lo.cc.u32 %2, %9, %11, %2;\n\t"
            "madc.hi.cc.u32 %3, %9, %11, %3;\n\t"
            "addc.u32 %4, %4, 0;\n\t"
            "mad.lo.cc.u32 %5, %8, %11, %5;\n\t"
            "madc.hi.cc.u32 %6, %8, %11, %6;\n\t"
            "addc.u32 %7, %7, 0;\n\t"
            "mad.lo.cc.u32 %5, %9, %10, %5;\n\t"
            "madc.hi.cc.u32 %6, %9, %10, %6;\n\t"
            "addc.u32 %7, %7, 0;"
            : "+r"(e[0]), "+r"(e[1]), "+r"(e[2]), "+r"(e[3]), "+r"(e[4]), "+r"(o[0]), "+r"(o[1]), "+r"(o[2])
            : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
#else
        const u64 lo = (u64)a0 * b0, hi = (u64)a1 * b1, cross0 = (u64)a0 * b1, cross1 = (u64)a1 * b0;
        u64 c = 0;
        const u64 ev[4] = {lo & 0xffffffffu, lo >> 32, hi & 0xffffffffu, hi >> 32};
        for (int i = 0; i < 4; ++i) {
            const u64 t = (u64)e[i] + ev[i] + c;
            e[i] = (u32)t;
            c = t >> 32;
        }
        e[4] += (u32)c;
        const u64 cross[2] = {cross0, cross1};
        for (int k = 0; k < 2; ++k) {
            const u64 x = cross[k];
            const u64 t0 = (u64)o[0] + (x & 0xffffffffu), t1 = (u64)o[1] + (x >> 32) + (t0 >> 32);
            o[0] = (u32)t0;
            o[1] = (u32)t1;
            o[2] += (u32)(t1 >> 32);
        }
#endif
    }
    // The sum as lo + mid 2^64 + top 2^128.
    __device__ __forceinline__ void total(u64& lo, u64& mid, u32& top) const {
        const u64 t1 = (u64)e[1] + o[0], t2 = (u64)e[2] + o[1] + (t1 >> 32), t3 = (u64)e[3] + o[2] + (t2 >> 32);
        lo = (u64)(u32)t1 << 32 | e[0];
        mid = (u64)(u32)t3 << 32 | (u32)t2;
        top = e[4] + (u32)(t3 >> 32);
    }
    // The sum mod q; r128 = 2^128 mod q carries the top word in.
    __device__ __forceinline__ u64 reduce(u64 q, const WideRatio& r, u64 r128) const {
        u64 lo, mid;
        u32 top;
        total(lo, mid, top);
        u64 v = wide_reduce(mid, lo, q, r);
        if (top) {
            const u128 t = (u128)(top % q) * r128 + v;
            v = wide_reduce((u64)(t >> 64), (u64)t, q, r);
        }
        return v;
    }
};

// Destination rows of a base conversion done together: each pass over the source values feeds this many
// sums, so a source value is read once per tile rather than once per destination (a tuning knob). With two
// rows instead of four, the BEHZ conversions of a BFV product took 58-62 registers a thread instead of 78-100
// and 0.78x-0.98x of the GPU time on an H100 on 2026-11-26 (three rows: 0.81x-0.94x; one row: as fast as two
// in a batch of 64; benchmarks/results/bfv-conversion-tile-ab-H100-80GB-HBM3-2026-11-26.json).
#ifndef RNS_CONV_TILE
#define RNS_CONV_TILE 2
#endif
static_assert(RNS_CONV_TILE >= 1 && RNS_CONV_TILE <= 4, "RNS_CONV_TILE: 1 to 4 rows a pass");

// finish(j0 + d, acc_d) for d < TILE, acc_d the exact sum_i y_i * f[d][i] (f row-major [TILE][count]).
template <int TILE, class Finish>
__device__ __forceinline__ void dot_tile(const u64* y, int count, const u64* __restrict__ f, int j0, Finish& finish) {
    ProductSum acc[TILE];
    for (int i = 0; i < count; ++i) {
        const u64 v = y[i];
#pragma unroll
        for (int d = 0; d < TILE; ++d) acc[d].add_product(v, f[(long long)d * count + i]);
    }
#pragma unroll
    for (int d = 0; d < TILE; ++d) finish(j0 + d, acc[d]);
}

// For j < rows: finish(j, acc) with acc the exact sum_i y_i * factors[j][i], factors row-major [rows][count].
// finish may add more products to acc before it reduces it (one reduction per destination). Rows go in tiles
// of RNS_CONV_TILE and one last tile of the rows left, so no sum is taken for a row that is not there.
template <class Finish>
__device__ __forceinline__ void dot_rows(const u64* y, int count, const u64* __restrict__ factors, int rows,
                                         Finish&& finish) {
    int j0 = 0;
    for (; j0 + RNS_CONV_TILE <= rows; j0 += RNS_CONV_TILE)
        dot_tile<RNS_CONV_TILE>(y, count, factors + (long long)j0 * count, j0, finish);
    const int left = rows - j0;
    const u64* f = factors + (long long)j0 * count;
    if (RNS_CONV_TILE > 3 && left == 3) dot_tile<3>(y, count, f, j0, finish);
    if (RNS_CONV_TILE > 2 && left == 2) dot_tile<2>(y, count, f, j0, finish);
    if (RNS_CONV_TILE > 1 && left == 1) dot_tile<1>(y, count, f, j0, finish);
}

#define ROWS_LOOP(rows)                                                            \
    for (long long row = blockIdx.y; row < (rows); row += gridDim.y)
#define COLS_LOOP(n)                                                                               \
    for (long long col = blockIdx.x * (long long)blockDim.x + threadIdx.x; col < (n);           \
         col += (long long)gridDim.x * blockDim.x)

// ------------------------------------------------------------------------------------------------
// Element-wise arithmetic. out: (batch, limbs, n) contiguous.
// ------------------------------------------------------------------------------------------------

// OP 0: a + b, 1: a - b, 2: a * b, 3: a * b + c, 4: -a.
template <int OP>
__device__ __forceinline__ void elementwise(u64* __restrict__ out, const u64* __restrict__ a, long long a_bs,
                                            long long a_ls, const u64* __restrict__ b, long long b_bs,
                                            long long b_ls, const u64* __restrict__ c, long long c_bs,
                                            long long c_ls, long long batch, int limbs, long long n,
                                            const ModConst* __restrict__ consts) {
    ROWS_LOOP(batch * limbs) {
        const long long bi = row / limbs;
        const int l = (int)(row - bi * limbs);
        const Mod64 M(consts[l]);
        const u64* pa = a + bi * a_bs + l * a_ls;
        const u64* pb = OP == 4 ? pa : b + bi * b_bs + l * b_ls;
        const u64* pc = OP == 3 ? c + bi * c_bs + l * c_ls : pa;
        u64* po = out + row * n;
        COLS_LOOP(n) {
            const u64 x = pa[col];
            u64 r;
            if (OP == 0) r = M.add(x, pb[col]);
            else if (OP == 1) r = M.sub(x, pb[col]);
            else if (OP == 2) r = M.mul(x, pb[col]);
            else if (OP == 3) r = M.add(M.mul(x, pb[col]), pc[col]);
            else r = x == 0 ? 0 : M.q - x;
            po[col] = r;
        }
    }
}

#define ELEMENTWISE_ARGS                                                                                     \
    u64 *__restrict__ out, const u64 *__restrict__ a, long long a_bs, long long a_ls, const u64 *__restrict__ b, \
        long long b_bs, long long b_ls, const u64 *__restrict__ c, long long c_bs, long long c_ls,              \
        long long batch, int limbs, long long n, const ModConst *__restrict__ consts
#define ELEMENTWISE_PASS out, a, a_bs, a_ls, b, b_bs, b_ls, c, c_bs, c_ls, batch, limbs, n, consts

extern "C" __global__ void rns_add(ELEMENTWISE_ARGS) { elementwise<0>(ELEMENTWISE_PASS); }
extern "C" __global__ void rns_sub(ELEMENTWISE_ARGS) { elementwise<1>(ELEMENTWISE_PASS); }
extern "C" __global__ void rns_mul(ELEMENTWISE_ARGS) { elementwise<2>(ELEMENTWISE_PASS); }
extern "C" __global__ void rns_mul_add(ELEMENTWISE_ARGS) { elementwise<3>(ELEMENTWISE_PASS); }
extern "C" __global__ void rns_neg(ELEMENTWISE_ARGS) { elementwise<4>(ELEMENTWISE_PASS); }

// out = a * s_l mod q_l, one reduced scalar per limb with its Shoup companion.
extern "C" __global__ void rns_mul_scalar(u64* __restrict__ out, const u64* __restrict__ a, long long a_bs,
                                          long long a_ls, const Tw64* __restrict__ scalars, long long batch,
                                          int limbs, long long n, const ModConst* __restrict__ consts) {
    ROWS_LOOP(batch * limbs) {
        const long long bi = row / limbs;
        const int l = (int)(row - bi * limbs);
        const u64 q = consts[l].q;
        const Tw64 s = scalars[l];
        const u64* pa = a + bi * a_bs + l * a_ls;
        u64* po = out + row * n;
        COLS_LOOP(n) po[col] = shoup_mul(pa[col], s, q);
    }
}

// MODE 0 (reduce): any uint64 x -> x mod q_l.
// MODE 1 (from_signed): int64 x with |x| < 2^62 -> x mod q_l.
// MODE 2 (centered_lift): x in [0, m) -> v = x or x - m (x > m / 2) -> v mod q_l.
template <int MODE>
__device__ __forceinline__ void lift(u64* __restrict__ out, const u64* __restrict__ x, long long x_bs,
                                     long long x_ls, u64 m, long long batch, int limbs, long long n,
                                     const ModConst* __restrict__ consts, const WideRatio* __restrict__ ratios) {
    const u64 half = m >> 1;
    ROWS_LOOP(batch * limbs) {
        const long long bi = row / limbs;
        const int l = (int)(row - bi * limbs);
        const u64 q = consts[l].q;
        const WideRatio r = ratios[l];
        const u64* px = x + bi * x_bs + l * x_ls;
        u64* po = out + row * n;
        COLS_LOOP(n) {
            const u64 v = px[col];
            u64 res;
            if (MODE == 0) {
                res = wide_reduce(0, v, q, r);
            } else {
                bool negative;
                u64 magnitude;
                if (MODE == 1) {
                    negative = (long long)v < 0;
                    magnitude = negative ? (u64)0 - v : v;
                } else {
                    negative = v > half;
                    magnitude = negative ? m - v : v;
                }
                const u64 red = wide_reduce(0, magnitude, q, r);
                res = negative && red != 0 ? q - red : red;
            }
            po[col] = res;
        }
    }
}

#define LIFT_ARGS                                                                                          \
    u64 *__restrict__ out, const u64 *__restrict__ x, long long x_bs, long long x_ls, u64 m, long long batch, \
        int limbs, long long n, const ModConst *__restrict__ consts, const WideRatio *__restrict__ ratios
#define LIFT_PASS out, x, x_bs, x_ls, m, batch, limbs, n, consts, ratios

extern "C" __global__ void rns_reduce(LIFT_ARGS) { lift<0>(LIFT_PASS); }
extern "C" __global__ void rns_from_signed(LIFT_ARGS) { lift<1>(LIFT_PASS); }
extern "C" __global__ void rns_centered_lift(LIFT_ARGS) { lift<2>(LIFT_PASS); }

// ------------------------------------------------------------------------------------------------
// Fast base conversion: x (batch, src_limbs, n) -> out (batch, dst_limbs, n), each addressed by its batch
// stride (x_bs, out_bs: an item's limbs are contiguous rows, the batch items may be slices of larger arrays),
//   out_j = sum_i [x_i * qhat_inv_i]_{q_i} * qhat_ij  mod p_j,  qhat_ij = (Q / q_i) mod p_j.
// One thread per (batch item, coefficient): the src_limbs scaled residues are computed once, then
// each destination sum is accumulated exactly (ProductSum, RNS_CONV_TILE destinations per pass over
// the residues) and reduced once.
// ------------------------------------------------------------------------------------------------
extern "C" __global__ void rns_base_convert(u64* __restrict__ out, long long out_bs, const u64* __restrict__ x,
                                            long long x_bs, long long batch, int src_limbs, int dst_limbs, long long n,
                                            const ModConst* __restrict__ src_consts,
                                            const Tw64* __restrict__ qhat_inv,
                                            const ModConst* __restrict__ dst_consts,
                                            const WideRatio* __restrict__ dst_ratios,
                                            const u64* __restrict__ dst_r128,
                                            const u64* __restrict__ qhat_mod_p) {  // [dst_limbs][src_limbs]
    ROWS_LOOP(batch) {
        const u64* px = x + row * x_bs;
        u64* po = out + row * out_bs;
        COLS_LOOP(n) {
            u64 y[RNS_MAX_SRC];
            for (int i = 0; i < src_limbs; ++i) y[i] = shoup_mul(px[i * n + col], qhat_inv[i], src_consts[i].q);
            dot_rows(y, src_limbs, qhat_mod_p, dst_limbs, [&](int j, ProductSum& acc) {
                po[j * n + col] = acc.reduce(dst_consts[j].q, dst_ratios[j], dst_r128[j]);
            });
        }
    }
}

// Key-switching digits of `alpha` limbs each, all in one launch: x (batch, limbs, n) -> out (batch, digits,
// dst_limbs, n), digit k the fast base conversion (as rns_base_convert) of x's limbs k alpha .. min((k + 1) alpha,
// limbs) - 1 to every destination limb. One thread per (batch item, digit, coefficient).
// src_w[i] = (Q_k / q_i)^-1 mod q_i (Shoup), Q_k the product of limb i's digit; factors: digit k's block at
// k dst_limbs alpha, row-major [dst_limbs][the digit's limb count], (Q_k / q_i) mod p_j.
extern "C" __global__ void rns_digit_convert(u64* __restrict__ out, const u64* __restrict__ x, long long x_bs,
                                             long long batch, int limbs, int alpha, int digits, int dst_limbs,
                                             long long n, const ModConst* __restrict__ src_consts,
                                             const Tw64* __restrict__ src_w, const ModConst* __restrict__ dst_consts,
                                             const WideRatio* __restrict__ dst_ratios,
                                             const u64* __restrict__ dst_r128, const u64* __restrict__ factors) {
    ROWS_LOOP(batch * digits) {
        const long long bi = row / digits;
        const int k = (int)(row - bi * digits);
        const int i0 = k * alpha, count = limbs - i0 < alpha ? limbs - i0 : alpha;
        const u64* px = x + bi * x_bs + (long long)i0 * n;
        const u64* f = factors + (long long)k * dst_limbs * alpha;
        u64* po = out + row * dst_limbs * n;
        COLS_LOOP(n) {
            u64 y[RNS_MAX_SRC];
            for (int i = 0; i < count; ++i) y[i] = shoup_mul(px[i * n + col], src_w[i0 + i], src_consts[i0 + i].q);
            dot_rows(y, count, f, dst_limbs, [&](int j, ProductSum& acc) {
                po[j * n + col] = acc.reduce(dst_consts[j].q, dst_ratios[j], dst_r128[j]);
            });
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Key-switching inner product: out[b, c] = sum_k x[b, k] * key[k, c] mod q_l over every limb l,
// for `parts` key components at once (x read once). x: (batch, digits, limbs, n) with strides
// (x_bs, x_ks, n); key: (digits, parts, limbs, n) contiguous; out: (batch, parts, limbs, n).
// Rows are ordered limb first, so the blocks running at once share one limb's key rows and find them in L2
// (ordered item first, every few items streamed the whole key from memory again).
// ------------------------------------------------------------------------------------------------
#define RNS_MAX_PARTS 4

// PARTS is a compile-time constant so the accumulators stay in registers.
template <int PARTS>
__device__ __forceinline__ void inner_product_body(u64* __restrict__ out, const u64* __restrict__ x, long long x_bs,
                                                   long long x_ks, const u64* __restrict__ key, int digits,
                                                   long long batch, int limbs, long long n,
                                                   const ModConst* __restrict__ consts,
                                                   const WideRatio* __restrict__ ratios,
                                                   const u64* __restrict__ r128) {
    const long long part_stride = limbs * n, digit_stride = PARTS * part_stride;
    ROWS_LOOP(batch * limbs) {
        const int l = (int)(row / batch);
        const long long bi = row - l * batch;
        const u64 q = consts[l].q;
        const WideRatio r = ratios[l];
        const u64 r2 = r128[l];
        const u64* px = x + bi * x_bs + l * n;
        const u64* pk = key + l * n;
        u64* po = out + bi * PARTS * part_stride + l * n;
        COLS_LOOP(n) {
            ProductSum acc[PARTS];
            for (int k = 0; k < digits; ++k) {
                const u64 v = px[k * x_ks + col];
#pragma unroll
                for (int c = 0; c < PARTS; ++c) acc[c].add_product(v, pk[k * digit_stride + c * part_stride + col]);
            }
#pragma unroll
            for (int c = 0; c < PARTS; ++c) po[c * part_stride + col] = acc[c].reduce(q, r, r2);
        }
    }
}

// One kernel per number of key components, each with the registers it needs (the two-part kernel of key
// switching holds twice the warps it would in one kernel sized for four): rns_inner_product<PARTS>.
#define INNER_PRODUCT_KERNEL(PARTS)                                                                                \
    extern "C" __global__ void rns_inner_product##PARTS(                                                           \
        u64* __restrict__ out, const u64* __restrict__ x, long long x_bs, long long x_ks, const u64* __restrict__ key, \
        int digits, long long batch, int limbs, long long n, const ModConst* __restrict__ consts,                  \
        const WideRatio* __restrict__ ratios, const u64* __restrict__ r128) {                                      \
        inner_product_body<PARTS>(out, x, x_bs, x_ks, key, digits, batch, limbs, n, consts, ratios, r128);          \
    }
INNER_PRODUCT_KERNEL(1)
INNER_PRODUCT_KERNEL(2)
INNER_PRODUCT_KERNEL(3)
INNER_PRODUCT_KERNEL(4)

// ------------------------------------------------------------------------------------------------
// Fused steps of BFV (each equals a composition of the primitives above, residue for residue).
// Inputs with a batch stride (`*_bs`, elements between batch items) may be views into larger arrays;
// inside an item, limbs are n apart and coefficients adjacent.
// ------------------------------------------------------------------------------------------------

// sum_i y_i * c_i mod q, exactly.
__device__ __forceinline__ u64 dot_mod(const u64* y, const u64* c, int count, u64 q, const WideRatio& r, u64 r128) {
    ProductSum acc;
    for (int i = 0; i < count; ++i) acc.add_product(y[i], c[i]);
    return acc.reduce(q, r, r128);
}

// v in [0, m) lifted to (-m/2, m/2] and reduced mod q (the centered_lift of one value).
__device__ __forceinline__ u64 centered_mod(u64 v, u64 m, u64 q, const WideRatio& r) {
    const bool negative = v > (m >> 1);
    const u64 mag = negative ? m - v : v;
    const u64 red = m <= q ? mag : wide_reduce(0, mag, q, r);  // below m, so already reduced when m <= q
    return negative && red != 0 ? q - red : red;
}

// Coefficient `col` of x(X^g) in Z_q[X]/(X^n + 1), read from x's coefficients: x_i with i g = col mod 2n, or minus
// x_i with i g = col + n; that is i = col g^-1 mod 2n (g_inv), the sign from whether it reaches n.
__device__ __forceinline__ u64 galois_image_at(const u64* __restrict__ x, long long col, u64 g_inv, long long n,
                                               u64 q) {
    const u64 e = ((u64)col * g_inv) & (2 * (u64)n - 1);
    const u64 v = x[e & (u64)(n - 1)];
    return e >= (u64)n && v != 0 ? q - v : v;
}

// Key-switching mod-down: x (batch, limbs + 1, n) over (q_0 .. q_{L-1}, p) ->
//   out_l = (x_l - centered(x_p)) * p^-1 mod q_l  [+ add_l], out (batch, limbs, n).
// Item b of add is at (b / add_parts) add_bs + (b % add_parts) add_ps: the batch's last axis may have a stride
// of its own (the parts c0, c1 of a 3-part ciphertext, read in place). Items whose part b % add_parts is below
// added_parts take the add (0: none do). ROTATED (rns_mod_down_rotated): they take add(X^g) instead, g_inv = g^-1
// mod 2n (a rotation's c0, added to the first part only); a kernel of its own, so that the plain one keeps its code.
#define MOD_DOWN_ARGS                                                                                           \
    u64 *__restrict__ out, const u64 *__restrict__ x, long long x_bs, const u64 *__restrict__ add, long long add_bs, \
        int add_parts, long long add_ps, int added_parts, u64 add_g_inv, u64 p, const Tw64 *__restrict__ p_inv,     \
        long long batch, int limbs, long long n, const ModConst *__restrict__ consts,                              \
        const WideRatio *__restrict__ ratios
#define MOD_DOWN_PASS \
    out, x, x_bs, add, add_bs, add_parts, add_ps, added_parts, add_g_inv, p, p_inv, batch, limbs, n, consts, ratios
template <bool ROTATED>
__device__ __forceinline__ void mod_down(MOD_DOWN_ARGS) {
    ROWS_LOOP(batch * limbs) {
        const long long bi = row / limbs;
        const int l = (int)(row - bi * limbs);
        const Mod64 M(consts[l]);
        const WideRatio r = ratios[l];
        const u64* px = x + bi * x_bs;
        const u64* pa = add + (bi / add_parts) * add_bs + (bi % add_parts) * add_ps + l * n;
        const bool adds = (int)(bi % add_parts) < added_parts;
        u64* po = out + row * n;
        COLS_LOOP(n) {
            const u64 lifted = centered_mod(px[limbs * n + col], p, M.q, r);
            u64 v = shoup_mul(M.sub(px[l * n + col], lifted), p_inv[l], M.q);
            if (adds) v = M.add(v, ROTATED ? galois_image_at(pa, col, add_g_inv, n, M.q) : pa[col]);
            po[col] = v;
        }
    }
}
extern "C" __global__ void rns_mod_down(MOD_DOWN_ARGS) { mod_down<false>(MOD_DOWN_PASS); }
extern "C" __global__ void rns_mod_down_rotated(MOD_DOWN_ARGS) { mod_down<true>(MOD_DOWN_PASS); }

// Tensor product of two 2-component ciphertexts in NTT form: a, b (batch, 2, limbs, n) ->
// out (batch, 3, limbs, n) = (a0 b0, a0 b1 + a1 b0, a1 b1).
extern "C" __global__ void rns_tensor(u64* __restrict__ out, const u64* __restrict__ a, long long a_bs,
                                      const u64* __restrict__ b, long long b_bs, long long batch, int limbs,
                                      long long n, const ModConst* __restrict__ consts) {
    const long long comp = limbs * n;
    ROWS_LOOP(batch * limbs) {
        const long long bi = row / limbs;
        const int l = (int)(row - bi * limbs);
        const Mod64 M(consts[l]);
        const u64* pa = a + bi * a_bs + l * n;
        const u64* pb = b + bi * b_bs + l * n;
        u64* po = out + bi * 3 * comp + l * n;
        COLS_LOOP(n) {
            const u64 a0 = pa[col], a1 = pa[comp + col], b0 = pb[col], b1 = pb[comp + col];
            po[col] = M.mul(a0, b0);
            po[comp + col] = M.add(M.mul(a0, b1), M.mul(a1, b0));
            po[2 * comp + col] = M.mul(a1, b1);
        }
    }
}

// BEHZ exact extension from q to B_sk with Montgomery reduction by m~ (SmMRq):
//   y_j = FastBConv(m~ x, q -> B_sk u {m~})_j, r = -y_m~ / q mod m~,
//   out_j = (y_j + centered(r) * (Q mod b_j)) / m~ mod b_j.
// The division by m~ is folded into the tables, and the centred term joins the exact sum as one more product, so
// each destination is reduced once: out_j = sum_i y_i (f_ji / m~) + |centered(r)| (+-Q / m~) mod b_j.
// src_w_i = m~ (Q/q_i)^-1 mod q_i (Shoup); factors [dst_limbs + 1][src_limbs]: rows j (Q/q_i) m~^-1 mod b_j, the
// last row (Q/q_i) mod m~; dst tables have dst_limbs + 1 rows (B_sk then m~); q_terms[j] = (Q m~^-1 mod b_j,
// -Q m~^-1 mod b_j), the second for a negative centred r.
// The items of x come from two sources (x then x2 within each lead item, x_parts and parts - x_parts of them:
// the pair of ciphertexts of a product, read where they are), and when copy_q the source rows are also written
// to out_q (the q rows above the extension in one (..., parts, q + B_sk, n) array), so no stacked copy is made.
// Item `row` (of batch = lead items * parts) is part k = row % parts of lead item row / parts.
extern "C" __global__ void rns_behz_extend(u64* __restrict__ out, long long out_bs, u64* __restrict__ out_q,
                                           int copy_q, const u64* __restrict__ x, long long x_bs,
                                           const u64* __restrict__ x2, long long x2_bs, int x_parts, int parts,
                                           long long batch, int src_limbs, int dst_limbs, long long n,
                                           const ModConst* __restrict__ src_consts, const Tw64* __restrict__ src_w,
                                           const ModConst* __restrict__ dst_consts,
                                           const WideRatio* __restrict__ dst_ratios,
                                           const u64* __restrict__ dst_r128, const u64* __restrict__ factors,
                                           u64 neg_q_inv_mt_w, u64 neg_q_inv_mt_wq, const u64* __restrict__ q_terms) {
    Tw64 neg_q_inv_mt;
    neg_q_inv_mt.w = neg_q_inv_mt_w;
    neg_q_inv_mt.wq = neg_q_inv_mt_wq;
    const long long part_size = (long long)src_limbs * n;
    ROWS_LOOP(batch) {
        const long long item = row / parts;
        const int k = (int)(row - item * parts);
        const u64* px = k < x_parts ? x + item * x_bs + k * part_size : x2 + item * x2_bs + (k - x_parts) * part_size;
        u64* po = out + row * out_bs;
        u64* pq = out_q + row * out_bs;
        COLS_LOOP(n) {
            u64 y[RNS_MAX_SRC];
            for (int i = 0; i < src_limbs; ++i) {
                const u64 v = px[i * n + col];
                if (copy_q) pq[i * n + col] = v;
                y[i] = shoup_mul(v, src_w[i], src_consts[i].q);
            }
            const u64 mt = dst_consts[dst_limbs].q;
            const u64 y_mt = dot_mod(y, factors + (long long)dst_limbs * src_limbs, src_limbs, mt,
                                     dst_ratios[dst_limbs], dst_r128[dst_limbs]);
            const u64 r = shoup_mul(y_mt, neg_q_inv_mt, mt);
            const int negative = r > (mt >> 1);
            const u64 mag = negative ? mt - r : r;
            dot_rows(y, src_limbs, factors, dst_limbs, [&](int j, ProductSum& acc) {
                acc.add_product(mag, q_terms[2 * j + negative]);
                po[j * n + col] = acc.reduce(dst_consts[j].q, dst_ratios[j], dst_r128[j]);
            });
        }
    }
}

// Tables of one conversion's sources and destinations, and those the BEHZ fast floor (rns_behz_floor) and the
// Shenoy-Kumaresan conversion (rns_behz_sk) add, as each kernel takes them; the fused rns_behz_floor_sk takes both.
struct ConversionTables {
    const ModConst* src_consts;
    const Tw64* src_w;
    const ModConst* dst_consts;
    const WideRatio* dst_ratios;
    const u64* dst_r128;
    const u64* factors;
};
struct FloorTables {
    ConversionTables c;
    const u64* t_q_inv;
};
struct SkTables {
    ConversionTables c;
    Tw64 mb_inv_msk;
    const u64* mb_terms;
};

// BEHZ fast floor of t d / q into B_sk for one coefficient: d given over q (d_q_at(i)) and over B_sk (d_b_at(j));
//   out_j = (t d_b_j - FastBConv(t d_q, q -> B_sk)_j) * Q^-1 mod b_j, emitted as emit(j, out_j),
// as one exact sum reduced once: out_j = sum_i y_i (-(Q/q_i) Q^-1) + d_b_j (t Q^-1) mod b_j.
// src_w_i = t (Q/q_i)^-1 mod q_i (Shoup); factors [dst_limbs][src_limbs] -(Q/q_i) Q^-1 mod b_j;
// t_q_inv[j] = t Q^-1 mod b_j.
template <class Dq, class Db, class Emit>
__device__ __forceinline__ void behz_floor_column(Dq&& d_q_at, Db&& d_b_at, int src_limbs, int dst_limbs,
                                                  const FloorTables& tb, Emit&& emit) {
    const ConversionTables& c = tb.c;
    u64 y[RNS_MAX_SRC];
    for (int i = 0; i < src_limbs; ++i) y[i] = shoup_mul(d_q_at(i), c.src_w[i], c.src_consts[i].q);
    dot_rows(y, src_limbs, c.factors, dst_limbs, [&](int j, ProductSum& acc) {
        acc.add_product(d_b_at(j), tb.t_q_inv[j]);
        emit(j, acc.reduce(c.dst_consts[j].q, c.dst_ratios[j], c.dst_r128[j]));
    });
}

// Shenoy-Kumaresan conversion from B_sk = B u {m_sk} to q for one coefficient: x_at(i) for i < src_limbs over B,
// x_at(src_limbs) over m_sk;
//   c = FastBConv(x_B, B -> q u {m_sk}), alpha = (c_msk - x_msk) M_B^-1 mod m_sk,
//   out_j = c_j - centered(alpha) * (M_B mod q_j) mod q_j, emitted as emit(j, out_j),
// the centred term joining c_j's exact sum as one more product (one reduction per destination).
// src_w_i = (M_B/b_i)^-1 mod b_i (Shoup); factors [dst_limbs + 1][src_limbs], the last row mod m_sk;
// dst tables have dst_limbs + 1 rows (q then m_sk); mb_terms[j] = (-M_B mod q_j, M_B mod q_j), the second for a
// negative centred alpha.
template <class X, class Emit>
__device__ __forceinline__ void behz_sk_column(X&& x_at, int src_limbs, int dst_limbs, const SkTables& tb,
                                               Emit&& emit) {
    const ConversionTables& c = tb.c;
    u64 y[RNS_MAX_SRC];
    for (int i = 0; i < src_limbs; ++i) y[i] = shoup_mul(x_at(i), c.src_w[i], c.src_consts[i].q);
    const Mod64 Ms(c.dst_consts[dst_limbs]);
    const u64 c_msk = dot_mod(y, c.factors + (long long)dst_limbs * src_limbs, src_limbs, Ms.q,
                              c.dst_ratios[dst_limbs], c.dst_r128[dst_limbs]);
    const u64 alpha = shoup_mul(Ms.sub(c_msk, x_at(src_limbs)), tb.mb_inv_msk, Ms.q);
    const int negative = alpha > (Ms.q >> 1);
    const u64 mag = negative ? Ms.q - alpha : alpha;
    dot_rows(y, src_limbs, c.factors, dst_limbs, [&](int j, ProductSum& acc) {
        acc.add_product(mag, tb.mb_terms[2 * j + negative]);
        emit(j, acc.reduce(c.dst_consts[j].q, c.dst_ratios[j], c.dst_r128[j]));
    });
}

#define FLOOR_TABLE_ARGS                                                                                         \
    const ModConst *__restrict__ f_src_consts, const Tw64 *__restrict__ f_src_w,                                 \
        const ModConst *__restrict__ f_dst_consts, const WideRatio *__restrict__ f_dst_ratios,                   \
        const u64 *__restrict__ f_dst_r128, const u64 *__restrict__ f_factors, const u64 *__restrict__ t_q_inv
#define FLOOR_TABLES {{f_src_consts, f_src_w, f_dst_consts, f_dst_ratios, f_dst_r128, f_factors}, t_q_inv}
#define SK_TABLE_ARGS                                                                                            \
    const ModConst *__restrict__ s_src_consts, const Tw64 *__restrict__ s_src_w,                                 \
        const ModConst *__restrict__ s_dst_consts, const WideRatio *__restrict__ s_dst_ratios,                   \
        const u64 *__restrict__ s_dst_r128, const u64 *__restrict__ s_factors, u64 mb_inv_msk_w, u64 mb_inv_msk_wq, \
        const u64 *__restrict__ mb_terms
#define SK_TABLES                                                                                                 \
    {{s_src_consts, s_src_w, s_dst_consts, s_dst_ratios, s_dst_r128, s_factors}, {mb_inv_msk_w, mb_inv_msk_wq},   \
     mb_terms}

// behz_floor_column over d_q (batch, src_limbs, n) and d_b (batch, dst_limbs, n) -> out (batch, dst_limbs, n).
extern "C" __global__ void rns_behz_floor(u64* __restrict__ out, const u64* __restrict__ d_q, long long dq_bs,
                                          const u64* __restrict__ d_b, long long db_bs, long long batch,
                                          int src_limbs, int dst_limbs, long long n, FLOOR_TABLE_ARGS) {
    const FloorTables tb = FLOOR_TABLES;
    ROWS_LOOP(batch) {
        const u64* pq = d_q + row * dq_bs;
        const u64* pb = d_b + row * db_bs;
        u64* po = out + row * dst_limbs * n;
        COLS_LOOP(n) {
            behz_floor_column([&](int i) { return pq[i * n + col]; }, [&](int j) { return pb[j * n + col]; },
                              src_limbs, dst_limbs, tb, [&](int j, u64 v) { po[j * n + col] = v; });
        }
    }
}

// behz_sk_column over x (batch, src_limbs + 1, n) -> out (batch, dst_limbs, n).
extern "C" __global__ void rns_behz_sk(u64* __restrict__ out, long long out_bs, const u64* __restrict__ x,
                                       long long x_bs, long long batch, int src_limbs, int dst_limbs, long long n,
                                       SK_TABLE_ARGS) {
    const SkTables tb = SK_TABLES;
    ROWS_LOOP(batch) {
        const u64* px = x + row * x_bs;
        u64* po = out + row * out_bs;
        COLS_LOOP(n) {
            behz_sk_column([&](int i) { return px[i * n + col]; }, src_limbs, dst_limbs, tb,
                           [&](int j, u64 v) { po[j * n + col] = v; });
        }
    }
}

// The fast floor into B_sk (b_limbs + 1 rows: B, then m_sk) and Shenoy-Kumaresan back to q (q_limbs rows) in one
// pass, the B_sk values of a coefficient kept in the thread: behz_sk(behz_floor(d_q, d_b)) without writing and
// reading them back. d_q (batch, q_limbs, n), d_b (batch, b_limbs + 1, n) -> out (batch, q_limbs, n).
extern "C" __global__ void rns_behz_floor_sk(u64* __restrict__ out, long long out_bs, const u64* __restrict__ d_q,
                                             long long dq_bs, const u64* __restrict__ d_b, long long db_bs,
                                             long long batch, int q_limbs, int b_limbs, long long n,
                                             FLOOR_TABLE_ARGS, SK_TABLE_ARGS) {
    const FloorTables floor_tb = FLOOR_TABLES;
    const SkTables sk_tb = SK_TABLES;
    ROWS_LOOP(batch) {
        const u64* pq = d_q + row * dq_bs;
        const u64* pb = d_b + row * db_bs;
        u64* po = out + row * out_bs;
        COLS_LOOP(n) {
            u64 fl[RNS_MAX_SRC + 1];
            behz_floor_column([&](int i) { return pq[i * n + col]; }, [&](int j) { return pb[j * n + col]; },
                              q_limbs, b_limbs + 1, floor_tb, [&](int j, u64 v) { fl[j] = v; });
            behz_sk_column([&](int i) { return fl[i]; }, b_limbs, q_limbs, sk_tb,
                           [&](int j, u64 v) { po[j * n + col] = v; });
        }
    }
}

// BFV decryption's scale and round, c0 added on the way: v = x (+ add) over q (batch, src_limbs, n) ->
//   z_m = FastBConv(t gamma v, q -> {t, gamma})_m * (-Q^-1) mod m for m in {t, gamma},
//   out = (z_t - centered(z_gamma)) * gamma^-1 mod t, out (batch, n).
// src_w_i = t gamma (Q/q_i)^-1 mod q_i (Shoup); dst tables have 2 rows (t then gamma); factors [2][src_limbs];
// neg_q_inv[m] = -Q^-1 mod m (Shoup); gamma_inv = gamma^-1 mod t (Shoup).
extern "C" __global__ void rns_scale_round(u64* __restrict__ out, const u64* __restrict__ x, long long x_bs,
                                           const u64* __restrict__ add, long long add_bs, int has_add,
                                           long long batch, int src_limbs, long long n,
                                           const ModConst* __restrict__ src_consts, const Tw64* __restrict__ src_w,
                                           const ModConst* __restrict__ dst_consts,
                                           const WideRatio* __restrict__ dst_ratios,
                                           const u64* __restrict__ dst_r128, const u64* __restrict__ factors,
                                           const Tw64* __restrict__ neg_q_inv, const Tw64* __restrict__ gamma_inv) {
    const Mod64 Mt(dst_consts[0]);
    const u64 gamma = dst_consts[1].q;
    ROWS_LOOP(batch) {
        const u64* px = x + row * x_bs;
        const u64* pa = add + row * add_bs;
        u64* po = out + row * n;
        COLS_LOOP(n) {
            u64 y[RNS_MAX_SRC];
            for (int i = 0; i < src_limbs; ++i) {
                const Mod64 M(src_consts[i]);
                const u64 v = has_add ? M.add(px[i * n + col], pa[i * n + col]) : px[i * n + col];
                y[i] = shoup_mul(v, src_w[i], M.q);
            }
            const u64 zt = shoup_mul(dot_mod(y, factors, src_limbs, Mt.q, dst_ratios[0], dst_r128[0]), neg_q_inv[0], Mt.q);
            const u64 zg = shoup_mul(dot_mod(y, factors + src_limbs, src_limbs, gamma, dst_ratios[1], dst_r128[1]),
                                     neg_q_inv[1], gamma);
            po[col] = shoup_mul(Mt.sub(zt, centered_mod(zg, gamma, Mt.q, dst_ratios[0])), gamma_inv[0], Mt.q);
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Automorphisms x(X) -> x(X^g), g odd, in Z_q[X]/(X^n + 1). Rows are independent (the sign needs q).
// ------------------------------------------------------------------------------------------------

// Coefficients: x_i X^i -> x_i X^(i g mod 2n), negated when i g mod 2n >= n. x and out are addressed by
// their batch strides (x_bs, out_bs; an item's limbs contiguous). ACCUMULATE: out += the image (in place;
// each output coefficient is written by exactly one input coefficient, so rows need no synchronisation).
template <bool ACCUMULATE>
__device__ __forceinline__ void automorphism_coeff(u64* __restrict__ out, long long out_bs, const u64* __restrict__ x,
                                                   long long x_bs, long long batch, int limbs, int log_n, u64 g,
                                                   const ModConst* __restrict__ consts) {
    const long long n = 1ll << log_n;
    const u64 mask = 2 * (u64)n - 1;
    ROWS_LOOP(batch * limbs) {
        const long long bi = row / limbs;
        const int l = (int)(row - bi * limbs);
        const u64 q = consts[l].q;
        const u64* px = x + bi * x_bs + l * n;
        u64* po = out + bi * out_bs + l * n;
        COLS_LOOP(n) {
            const u64 e = ((u64)col * g) & mask;
            const u64 v = px[col];
            const u64 image = e >= (u64)n ? (v == 0 ? 0 : q - v) : v;
            u64* dst = po + (e & (u64)(n - 1));
            if (ACCUMULATE) {
                const u64 s = *dst + image;
                *dst = s >= q ? s - q : s;
            } else {
                *dst = image;
            }
        }
    }
}
#define AUTOMORPHISM_COEFF_ARGS                                                                             \
    u64 *__restrict__ out, long long out_bs, const u64 *__restrict__ x, long long x_bs, long long batch,   \
        int limbs, int log_n, u64 g, const ModConst *__restrict__ consts
#define AUTOMORPHISM_COEFF_PASS out, out_bs, x, x_bs, batch, limbs, log_n, g, consts
extern "C" __global__ void rns_automorphism_coeff(AUTOMORPHISM_COEFF_ARGS) {
    automorphism_coeff<false>(AUTOMORPHISM_COEFF_PASS);
}
extern "C" __global__ void rns_automorphism_coeff_add(AUTOMORPHISM_COEFF_ARGS) {
    automorphism_coeff<true>(AUTOMORPHISM_COEFF_PASS);
}

// Negacyclic NTT values in natural order: X_k = x(psi^(2k+1)), so the image has
// Y_k = X_k' with 2k' + 1 = g (2k + 1) mod 2n (a permutation, no signs). out (batch, limbs, n) contiguous.
extern "C" __global__ void rns_automorphism_ntt(u64* __restrict__ out, const u64* __restrict__ x, long long x_bs,
                                                long long batch, int limbs, int log_n, u64 g) {
    const long long n = 1ll << log_n;
    const u64 mask = 2 * (u64)n - 1;
    ROWS_LOOP(batch * limbs) {
        const long long bi = row / limbs;
        const int l = (int)(row - bi * limbs);
        const u64* px = x + bi * x_bs + l * n;
        u64* po = out + row * n;
        COLS_LOOP(n) {
            const u64 src = ((((u64)(2 * col + 1)) * g) & mask) >> 1;
            po[col] = px[src];
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Random sampling from ChaCha20 (RFC 8439, chacha20.cuh) under a 256-bit key drawn from os.urandom by the
// host (one key per engine and device), passed as four little-endian 64-bit words k0..k3.
//
// Nonce of one sampling call = (stream, call low 32 bits, call high 32 bits). `call` is a 64-bit number
// that rns_sampler_claim takes from the engine's device counter with an atomic add just before the
// sampler, in stream order; the sampler reads it from device memory, never from a launch argument. A CUDA
// graph that recorded a claim and a sampler therefore claims a fresh number at every replay, and calls on
// concurrent streams never share one. `stream` is 0, or the attempt number of the Gaussian's redraws.
// The 32-bit block counter runs from 0 within a call; the host refuses calls of more than 2^32 blocks, so
// no (key, nonce, counter) is ever used twice.
//
// Draw i of a call (stream s) is the little-endian 128-bit integer X_i of its keystream bytes
// [16 i, 16 i + 16): block i / 4, words 4 (i % 4) .. 4 (i % 4) + 3; lo = X_i mod 2^64, hi = X_i >> 64.
// Uniform: X_i mod q_l (wide_reduce; statistical distance below q / 2^128 < 2^-66 from uniform).
// Ternary: X_i mod 3, minus 1 (2^64 = 1 mod 3, so (hi mod 3 + lo mod 3) mod 3; distance below 2^-126).
// Gaussian: Box-Muller on u1 = ((lo >> 11) + 1) 2^-53 in (0, 1] and u2 = (hi >> 11) 2^-53 in [0, 1):
//   z = sigma sqrt(-2 ln u1) cos(2 pi u2); |z| > 6 sigma is redrawn from stream 1, 2, ... (same draw
//   index), and after SAMPLER_GAUSS_ATTEMPTS rejections (probability < 2^-400) clamped to +-6 sigma;
//   the sample is z rounded to the nearest integer (ties to even).
// tests/sampler_model.py states the same mapping in Python; the host tests compare it with this code.
// ------------------------------------------------------------------------------------------------

#define SAMPLER_DRAWS_PER_BLOCK 4  // 128-bit draws per 64-byte ChaCha20 block
#define SAMPLER_GAUSS_ATTEMPTS 16
#ifndef SAMPLER_GAUSS_CUT
#define SAMPLER_GAUSS_CUT 6.0  // in units of sigma; host tests build a small cut to exercise the redraws
#endif

struct SamplerKey {
    u32 w[8];
};

__device__ __forceinline__ SamplerKey sampler_key(u64 k0, u64 k1, u64 k2, u64 k3) {
    const u64 k[4] = {k0, k1, k2, k3};
    SamplerKey key;
    for (int i = 0; i < 4; ++i) {
        key.w[2 * i] = (u32)k[i];
        key.w[2 * i + 1] = (u32)(k[i] >> 32);
    }
    return key;
}

// Keystream block `block` of (call, stream).
__device__ __forceinline__ void sampler_block(const SamplerKey& key, u64 call, u32 stream, u64 block, u32* out) {
    const u32 nonce[3] = {stream, (u32)call, (u32)(call >> 32)};
    chacha20_block(key.w, (u32)block, nonce, out);
}

// Draw j (0..3) of a block as (lo, hi).
__device__ __forceinline__ void sampler_draw(const u32* w, int j, u64& lo, u64& hi) {
    lo = (u64)w[4 * j] | ((u64)w[4 * j + 1] << 32);
    hi = (u64)w[4 * j + 2] | ((u64)w[4 * j + 3] << 32);
}

#define SAMPLER_GROUPS_LOOP(groups)                                                                 \
    for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < (groups);            \
         g += (long long)gridDim.x * blockDim.x)

// *call = the engine's next call number (launch with one thread, on the sampler's stream, just before it).
extern "C" __global__ void rns_sampler_claim(u64* __restrict__ counter, u64* __restrict__ call) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
        *call = atomicAdd(counter, (u64)1);
#else
        *call = (*counter)++;  // host build (tests): one thread runs at a time
#endif
    }
}

// A test hook: out[16 b .. 16 b + 15] = the ChaCha20 block (key, counter + b, nonce) for b < blocks, to
// compare with RFC 8439's vectors on the device.
extern "C" __global__ void rns_chacha20_blocks(u32* __restrict__ out, long long blocks, u64 k0, u64 k1, u64 k2,
                                               u64 k3, u32 counter, u32 n0, u32 n1, u32 n2) {
    const SamplerKey key = sampler_key(k0, k1, k2, k3);
    const u32 nonce[3] = {n0, n1, n2};
    SAMPLER_GROUPS_LOOP(blocks) chacha20_block(key.w, counter + (u32)g, nonce, out + 16 * g);
}

// out (count uint64, C order of (..., limbs, n)): element i uniform mod q_l, l = (i / n) % limbs.
extern "C" __global__ void rns_random_uniform(u64* __restrict__ out, long long count, int limbs, long long n,
                                             const ModConst* __restrict__ consts,
                                             const WideRatio* __restrict__ ratios, u64 k0, u64 k1, u64 k2, u64 k3,
                                             const u64* __restrict__ call_slot) {
    const SamplerKey key = sampler_key(k0, k1, k2, k3);
    const u64 call = *call_slot;
    SAMPLER_GROUPS_LOOP((count + SAMPLER_DRAWS_PER_BLOCK - 1) / SAMPLER_DRAWS_PER_BLOCK) {
        u32 w[16];
        sampler_block(key, call, 0, g, w);
#pragma unroll
        for (int j = 0; j < SAMPLER_DRAWS_PER_BLOCK; ++j) {
            const long long i = g * SAMPLER_DRAWS_PER_BLOCK + j;
            if (i < count) {
                const int l = (int)((i / n) % limbs);
                u64 lo, hi;
                sampler_draw(w, j, lo, hi);
                out[i] = wide_reduce(hi, lo, consts[l].q, ratios[l]);
            }
        }
    }
}

// out (count int64): uniform in {-1, 0, 1}.
extern "C" __global__ void rns_random_ternary(long long* __restrict__ out, long long count, u64 k0, u64 k1, u64 k2,
                                             u64 k3, const u64* __restrict__ call_slot) {
    const SamplerKey key = sampler_key(k0, k1, k2, k3);
    const u64 call = *call_slot;
    SAMPLER_GROUPS_LOOP((count + SAMPLER_DRAWS_PER_BLOCK - 1) / SAMPLER_DRAWS_PER_BLOCK) {
        u32 w[16];
        sampler_block(key, call, 0, g, w);
#pragma unroll
        for (int j = 0; j < SAMPLER_DRAWS_PER_BLOCK; ++j) {
            const long long i = g * SAMPLER_DRAWS_PER_BLOCK + j;
            if (i < count) {
                u64 lo, hi;
                sampler_draw(w, j, lo, hi);
                out[i] = (long long)((hi % 3 + lo % 3) % 3) - 1;
            }
        }
    }
}

// out (count int64): rounded Gaussian of standard deviation sigma, cut at 6 sigma (see above).
extern "C" __global__ void rns_random_gaussian(long long* __restrict__ out, long long count, double sigma, u64 k0,
                                              u64 k1, u64 k2, u64 k3, const u64* __restrict__ call_slot) {
    const SamplerKey key = sampler_key(k0, k1, k2, k3);
    const u64 call = *call_slot;
    const double bound = SAMPLER_GAUSS_CUT * sigma;
    SAMPLER_GROUPS_LOOP((count + SAMPLER_DRAWS_PER_BLOCK - 1) / SAMPLER_DRAWS_PER_BLOCK) {
        const long long first = g * SAMPLER_DRAWS_PER_BLOCK;
        double z[SAMPLER_DRAWS_PER_BLOCK];
        unsigned pending = 0;  // bit j: draw j of this block still needs a value within the cut
#pragma unroll
        for (int j = 0; j < SAMPLER_DRAWS_PER_BLOCK; ++j) {
            z[j] = 0.0;
            if (first + j < count) pending |= 1u << j;
        }
        for (u32 attempt = 0; attempt < SAMPLER_GAUSS_ATTEMPTS && pending; ++attempt) {
            u32 w[16];
            sampler_block(key, call, attempt, g, w);
#pragma unroll
            for (int j = 0; j < SAMPLER_DRAWS_PER_BLOCK; ++j) {
                if (pending >> j & 1u) {
                    u64 lo, hi;
                    sampler_draw(w, j, lo, hi);
                    const double u1 = (double)((lo >> 11) + 1) * 0x1.0p-53;  // (0, 1]
                    const double u2 = (double)(hi >> 11) * 0x1.0p-53;        // [0, 1)
                    const double v = sigma * sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
                    z[j] = v;
                    if (fabs(v) <= bound) pending &= ~(1u << j);
                }
            }
        }
#pragma unroll
        for (int j = 0; j < SAMPLER_DRAWS_PER_BLOCK; ++j) {
            if (first + j < count) {
                const double v = pending >> j & 1u ? (z[j] > 0 ? bound : -bound) : z[j];
                out[first + j] = __double2ll_rn(v);
            }
        }
    }
}
