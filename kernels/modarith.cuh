// Modular arithmetic for hebatch's kernels. No system headers: compiles with NVRTC and nvcc.
//
// Four reduction kinds, each a struct with the interface the NTT kernels are templated on (ct, mul_tw, mul,
// reduce for butterfly outputs, reduce_product for products, mul_tw_reduced); Mod64 also has add and sub for the
// RNS kernels:
//   Mod64     q < 2^62, uint64 words. Butterflies keep values lazily in [0, 4q) (Harvey); twiddles are
//             multiplied with an estimate of Shoup's quotient; general products use the Barrett variant of
//             Shivdikar et al. (mu = floor(2^(2m+1)/q), at most one correction).
//   Mod60     q < 2^60: Mod64 with butterfly values in [0, 16q), one conditional subtraction every other stage.
//   Goldilocks q = 2^64 - 2^32 + 1, uint64 words, reduction by shifts and adds (2^64 = 2^32 - 1 and
//             2^96 = -1 mod q); butterflies and products keep any value below 2^64 (reduce() ends it).
//   Mod32     q < 2^31, uint32 words, values in [0, 2q), 32-bit Shoup and Barrett.
#pragma once

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned __int128 u128;

// A twiddle factor with its Shoup companion floor(w * 2^wordbits / q) (unused for Goldilocks).
struct __align__(16) Tw64 {
    u64 w, wq;
};
struct __align__(8) Tw32 {
    u32 w, wq;
};

// Per-modulus constants, laid out as the host uploads them (MODCONST_DTYPE of hebatch/backend/kernels.py,
// checked field by field in tests/test_kernel_boundary.py): one row per limb.
struct ModConst {
    u64 q;
    u64 mu;  // Barrett: floor(2^(2m+1) / q)
    u32 m;   // bit length of q
    u32 pad;
};

// Shoup's remainder x w + qhat (2^64 - q) mod 2^64 in 32-bit PTX, the tail of the asm blocks of shoup_mul and
// Mod64::mul_tw (see there), which name their operands alike: %0, %1 the result's halves; %2, %3 x; %4, %5 w; %8, %9
// 2^64 - q; q0, q1 the quotient's halves, registers of the block. r = x0 w0 + q0 nq0 (64 bits), then 2^32 (x1 w0 +
// x0 w1 + q1 nq0 + q0 nq1). The tail is text, not a function: an asm block of its own made nvcc lay out the inverse
// passes' loads differently (up to 1.5x their global loads, 1.02x their instructions).
#define SHOUP_REMAINDER_PTX              \
    "mul.lo.u32 %0, %2, %4;\n\t"         \
    "mul.hi.u32 %1, %2, %4;\n\t"         \
    "mad.lo.cc.u32 %0, q0, %8, %0;\n\t"  \
    "madc.hi.u32 %1, q0, %8, %1;\n\t"    \
    "mad.lo.u32 %1, %3, %4, %1;\n\t"     \
    "mad.lo.u32 %1, %2, %5, %1;\n\t"     \
    "mad.lo.u32 %1, q1, %8, %1;\n\t"     \
    "mad.lo.u32 %1, q0, %9, %1;\n\t"

// x * w mod q in [0, q) for any x < 2^64, a constant w < q with wq = floor(w 2^64 / q) (Shoup, exact quotient:
// [0, 2q) before the one subtraction).
// On the device one chain of 32-bit multiply-adds: the exact quotient, then the remainder as Mod64::mul_tw forms it
// (there, why).
__device__ __forceinline__ u64 shoup_mul(u64 x, const Tw64& t, u64 q) {
#ifdef __CUDA_ARCH__
    const u64 neg_q = 0 - q;
    u32 r0, r1;
    asm("{\n\t.reg .u32 m0, m1, m2, q0, q1;\n\t"
        "mul.hi.u32 m0, %2, %6;\n\t"  // m = x1 wq0 + x0 wq1 + hi(x0 wq0), 65 bits
        "mad.lo.cc.u32 m0, %3, %6, m0;\n\t"
        "madc.hi.u32 m1, %3, %6, 0;\n\t"
        "mad.lo.cc.u32 m0, %2, %7, m0;\n\t"
        "madc.hi.cc.u32 m1, %2, %7, m1;\n\t"
        "addc.u32 m2, 0, 0;\n\t"
        "mad.lo.cc.u32 q0, %3, %7, m1;\n\t"  // qhat = x1 wq1 + m / 2^32
        "madc.hi.u32 q1, %3, %7, m2;\n\t"
        SHOUP_REMAINDER_PTX "}"
        : "=&r"(r0), "=&r"(r1)  // written before the last inputs are read
        : "r"((u32)x), "r"((u32)(x >> 32)), "r"((u32)t.w), "r"((u32)(t.w >> 32)), "r"((u32)t.wq),
          "r"((u32)(t.wq >> 32)), "r"((u32)neg_q), "r"((u32)(neg_q >> 32)));
    const u64 r = (u64)r1 << 32 | r0;
#else
    const u64 r = x * t.w + __umul64hi(x, t.wq) * (0 - q);  // -qhat q as qhat (2^64 - q): one multiply-add
#endif
    return r >= q ? r - q : r;
}

// x >= c ? x - c : x, given nc = 2^64 - c (0 < c < 2^64): x >= c exactly when x + nc carries, so one
// carry chain both subtracts and compares. On the device the carry selects directly (no 64-bit compare);
// host builds run the C++ twin.
__device__ __forceinline__ u64 sub_if_carry(u64 x, u64 nc) {
#ifdef __CUDA_ARCH__
    u32 r0, r1;
    asm("{\n\t.reg .u32 t0, t1, k;\n\t.reg .pred c;\n\t"
        "add.cc.u32 t0, %2, %4;\n\t"
        "addc.cc.u32 t1, %3, %5;\n\t"
        "addc.u32 k, 0, 0;\n\t"
        "setp.ne.u32 c, k, 0;\n\t"
        "selp.u32 %0, t0, %2, c;\n\t"
        "selp.u32 %1, t1, %3, c;\n\t}"
        : "=r"(r0), "=r"(r1)
        : "r"((u32)x), "r"((u32)(x >> 32)), "r"((u32)nc), "r"((u32)(nc >> 32)));
    return (u64)r1 << 32 | r0;
#else
    const u64 t = x + nc;
    return t < x ? t : x;
#endif
}

struct Mod64 {
    typedef u64 T;
    typedef Tw64 Tw;
    static constexpr bool ALTERNATE_STAGES = false;  // see Mod60
    u64 q, neg_q, neg_two_q, mu;  // 2^64 - q, and 2^64 - 2q: the butterflies' conditional subtraction of 2q
    u32 m;

    __device__ __forceinline__ explicit Mod64(const ModConst& c)
        : q(c.q), neg_q(0 - c.q), neg_two_q(0 - 2 * c.q), mu(c.mu), m(c.m) {}

    // x * w mod q, lazily in [0, 4q), for any x < 2^64. Shoup's quotient floor(x wq / 2^64) is
    // estimated without the lowest partial product and the carries of the middle ones: the estimate
    // is at most 2 below it (and Shoup's at most 1 below floor(x w / q)), which saves a third of the
    // multiplier instructions for one more conditional subtraction in the butterfly. The remainder is
    // x w + qhat (2^64 - q) mod 2^64: products that accumulate.
    // On the device it is one chain of 32-bit multiply-adds: the estimate's two cross terms summed first, then
    // the remainder's low word with its carry, then the high word's four partial products. nvcc's code for the
    // C++ twin (host builds) spent zero-extending moves and separate 64-bit adds on the same sums: the ntt_pass
    // instances took up to 1.17x these instructions (median 1.14x; cuobjdump, sm_90, nvcc 13), and the 60-bit
    // prime's transforms 1.02x-1.09x this time on an H100 (benchmarks/results/ntt-ptx-products-ab-H100-80GB-HBM3-
    // 2026-11-27.json, with Shoup's product below).
    // tests/test_modarith_model.py runs the asm against the formula.
    __device__ __forceinline__ T mul_tw(T x, const Tw& t) const {
#ifdef NTT_EXACT_SHOUP  // a tuning knob: Shoup's exact quotient (result in [0, 2q))
        return x * t.w + __umul64hi(x, t.wq) * neg_q;
#elif defined(__CUDA_ARCH__)
        u32 r0, r1;
        asm("{\n\t.reg .u32 a, b, q0, q1;\n\t"
            "mul.hi.u32 a, %2, %7;\n\t"  // qhat = x1 wq1 + hi(x0 wq1) + hi(x1 wq0)
            "mul.hi.u32 b, %3, %6;\n\t"
            "add.cc.u32 a, a, b;\n\t"
            "addc.u32 b, 0, 0;\n\t"
            "mad.lo.cc.u32 q0, %3, %7, a;\n\t"
            "madc.hi.u32 q1, %3, %7, b;\n\t"
            SHOUP_REMAINDER_PTX "}"
            : "=&r"(r0), "=&r"(r1)  // written before the last inputs are read
            : "r"((u32)x), "r"((u32)(x >> 32)), "r"((u32)t.w), "r"((u32)(t.w >> 32)), "r"((u32)t.wq),
              "r"((u32)(t.wq >> 32)), "r"((u32)neg_q), "r"((u32)(neg_q >> 32)));
        return (u64)r1 << 32 | r0;
#else
        const u32 x0 = (u32)x, x1 = (u32)(x >> 32), w0 = (u32)t.wq, w1 = (u32)(t.wq >> 32);
        const u64 qhat = (u64)x1 * w1 + __umulhi(x0, w1) + __umulhi(x1, w0);
        return x * t.w + qhat * neg_q;
#endif
    }
    // x * w mod q in [0, q) for any x < 2^64 (where an inverse stores its post-factor product)
    __device__ __forceinline__ T mul_tw_reduced(T x, const Tw& t) const { return reduce_product(mul_tw(x, t)); }
    // Cooley-Tukey butterfly on values in [0, 4q): (x, y) -> (x + w y, x - w y), outputs in [0, 4q).
    __device__ __forceinline__ void ct(T& x, T& y, const Tw& t) const {
        const T a = sub_if_carry(x, neg_two_q);
        const T b = sub_if_carry(mul_tw(y, t), neg_two_q);
        x = a + b;
        y = a - b - neg_two_q;  // a - b + 2q
    }
    // [0, 4q) -> [0, q)
    __device__ __forceinline__ T reduce(T x) const {
        x = sub_if_carry(x, neg_two_q);
        return x >= q ? x - q : x;
    }
    // a product (mul_tw's [0, 4q), or mul's [0, q)) -> [0, q); Mod60 inherits it, its reduce starting from 16q
    __device__ __forceinline__ T reduce_product(T x) const { return Mod64::reduce(x); }
    // a * b mod q for a, b < q (Barrett, one correction).
    __device__ __forceinline__ T mul(T a, T b) const {
        u128 x = (u128)a * b;
        u64 c = (u64)(x >> (m - 2));
        u64 quot = (u64)(((u128)c * mu) >> (m + 3));
        u64 r = (u64)x - quot * q;
        return r >= q ? r - q : r;
    }
    __device__ __forceinline__ T add(T a, T b) const {
        T s = a + b;
        return s >= q ? s - q : s;
    }
    __device__ __forceinline__ T sub(T a, T b) const { return a >= b ? a - b : a + q - b; }
};

// Mod64 for q < 2^60: butterfly values lazily in [0, 16q), and only every other stage subtracts (8q, from x,
// when x >= 8q): after such a stage values are below 12q (x < 8q, w y < 4q), after one without it below 16q.
// ntt_pass ends every pass with a subtracting stage, so passes hand on values below 12q.
struct Mod60 : Mod64 {
    static constexpr bool ALTERNATE_STAGES = true;
    u64 neg_four_q, neg_eight_q;  // 2^64 - 4q, 2^64 - 8q

    __device__ __forceinline__ explicit Mod60(const ModConst& c)
        : Mod64(c), neg_four_q(0 - 4 * c.q), neg_eight_q(0 - 8 * c.q) {}

    // inputs below 16q, outputs below 12q
    __device__ __forceinline__ void ct(T& x, T& y, const Tw& t) const {
        const T a = sub_if_carry(x, neg_eight_q);
        const T b = mul_tw(y, t);
        x = a + b;
        y = a - b - neg_four_q;  // a - b + 4q
    }
    // x * w mod q in [0, q) for any x < 2^64 by Shoup's exact quotient (shoup_mul), fewer instructions than the
    // estimate's two subtractions (60-bit inverses 0.98x-0.99x on an H100; with 62-bit moduli the dense-rows 2^12
    // inverse ran 1.03x, so Mod64 keeps the estimate)
    __device__ __forceinline__ T mul_tw_reduced(T x, const Tw& t) const { return shoup_mul(x, t, q); }
    // inputs below 12q, outputs below 16q
    __device__ __forceinline__ void ct_unreduced(T& x, T& y, const Tw& t) const {
        const T b = mul_tw(y, t);
        y = x - b - neg_four_q;
        x = x + b;
    }
    // [0, 16q) -> [0, q)
    __device__ __forceinline__ T reduce(T x) const {
        return Mod64::reduce(sub_if_carry(sub_if_carry(x, neg_eight_q), neg_four_q));
    }
};

struct Goldilocks {
    typedef u64 T;
    typedef Tw64 Tw;
    static constexpr bool ALTERNATE_STAGES = false;
    static constexpr u64 P = 0xFFFFFFFF00000001ull;
    static constexpr u64 EPS = 0xFFFFFFFFull;  // 2^64 mod P

    __device__ __forceinline__ explicit Goldilocks(const ModConst&) {}

    // lo + hi 2^64 mod P as some value below 2^64 (lazy: not always below P), from lo - hh + hl (2^32 - 1)
    // for hi = hh 2^32 + hl. A borrow out of lo - hh leaves the value 2^64 = EPS too large, a carry out of the
    // sum EPS too small; neither correction can wrap again. On the device each step is one carry chain in
    // 32-bit halves (the flag is turned into a mask, never carried from an add into a subtract); host builds
    // run the C++ twin.
    __device__ __forceinline__ static u64 reduce128(u64 lo, u64 hi) {
#ifdef __CUDA_ARCH__
        u32 r0, r1;
        asm("{\n\t.reg .u32 t0, t1, m, u0, u1;\n\t.reg .pred c;\n\t"
            "sub.cc.u32 t0, %2, %5;\n\t"  // t = lo - hh
            "subc.cc.u32 t1, %3, 0;\n\t"
            "subc.u32 m, 0, 0;\n\t"  // m = 2^32 - 1 on a borrow
            "sub.cc.u32 t0, t0, m;\n\t"  // t -= EPS
            "subc.u32 t1, t1, 0;\n\t"
            "sub.cc.u32 u0, 0, %4;\n\t"  // u = hl 2^32 - hl
            "subc.u32 u1, %4, 0;\n\t"
            "add.cc.u32 t0, t0, u0;\n\t"  // t + u
            "addc.cc.u32 t1, t1, u1;\n\t"
            "addc.u32 m, 0, 0;\n\t"
            "setp.ne.u32 c, m, 0;\n\t"
            "selp.u32 m, 0xFFFFFFFF, 0, c;\n\t"
            "add.cc.u32 %0, t0, m;\n\t"  // += EPS on a carry
            "addc.u32 %1, t1, 0;\n\t}"
            : "=r"(r0), "=r"(r1)
            : "r"((u32)lo), "r"((u32)(lo >> 32)), "r"((u32)hi), "r"((u32)(hi >> 32)));
        return (u64)r1 << 32 | r0;
#else
        const u64 hh = hi >> 32, hl = hi & EPS;
        u64 t = lo - hh;
        if (lo < hh) t -= EPS;
        const u64 u = (hl << 32) - hl;
        const u64 r = t + u;
        return r < u ? r + EPS : r;
#endif
    }
    // a * b mod P, lazily below 2^64, for any a, b < 2^64.
    __device__ __forceinline__ T mul(T a, T b) const {
        const u128 p = (u128)a * b;
        return reduce128((u64)p, (u64)(p >> 64));
    }
    __device__ __forceinline__ T mul_tw(T x, const Tw& t) const { return mul(x, t.w); }
    // Cooley-Tukey butterfly on lazy values: any x, y < 2^64 stand for their residues mod P, and so do the
    // outputs. Each 2^64 wrapped by a + b is worth +EPS, each borrowed by a - b -EPS; with the product b
    // itself lazy, a second wrap (or borrow) can follow the first correction, but not a third.
    __device__ __forceinline__ void ct(T& x, T& y, const Tw& t) const {
        const T a = x, b = mul(y, t.w);
#ifdef __CUDA_ARCH__
        u32 s0, s1, d0, d1;
        asm("{\n\t.reg .u32 m;\n\t.reg .pred c;\n\t"
            "add.cc.u32 %0, %4, %6;\n\t"  // s = a + b
            "addc.cc.u32 %1, %5, %7;\n\t"
            "addc.u32 m, 0, 0;\n\t"
            "setp.ne.u32 c, m, 0;\n\t"
            "selp.u32 m, 0xFFFFFFFF, 0, c;\n\t"
            "add.cc.u32 %0, %0, m;\n\t"  // += EPS per wrap
            "addc.cc.u32 %1, %1, 0;\n\t"
            "addc.u32 m, 0, 0;\n\t"
            "setp.ne.u32 c, m, 0;\n\t"
            "selp.u32 m, 0xFFFFFFFF, 0, c;\n\t"
            "add.cc.u32 %0, %0, m;\n\t"
            "addc.u32 %1, %1, 0;\n\t"
            "sub.cc.u32 %2, %4, %6;\n\t"  // d = a - b
            "subc.cc.u32 %3, %5, %7;\n\t"
            "subc.u32 m, 0, 0;\n\t"
            "sub.cc.u32 %2, %2, m;\n\t"  // -= EPS per borrow
            "subc.cc.u32 %3, %3, 0;\n\t"
            "subc.u32 m, 0, 0;\n\t"
            "sub.cc.u32 %2, %2, m;\n\t"
            "subc.u32 %3, %3, 0;\n\t}"
            : "=r"(s0), "=r"(s1), "=r"(d0), "=r"(d1)
            : "r"((u32)a), "r"((u32)(a >> 32)), "r"((u32)b), "r"((u32)(b >> 32)));
        x = (u64)s1 << 32 | s0;
        y = (u64)d1 << 32 | d0;
#else
        u64 s = a + b;
        if (s < b) {
            s += EPS;
            if (s < EPS) s += EPS;
        }
        u64 d = a - b;
        if (a < b) {
            const bool again = d < EPS;
            d -= EPS;
            if (again) d -= EPS;
        }
        x = s;
        y = d;
#endif
    }
    // lazy [0, 2^64) -> [0, P)
    __device__ __forceinline__ T reduce(T x) const { return x >= P ? x - P : x; }
    __device__ __forceinline__ T reduce_product(T x) const { return reduce(x); }
    __device__ __forceinline__ T mul_tw_reduced(T x, const Tw& t) const { return reduce(mul(x, t.w)); }
};

struct Mod32 {
    typedef u32 T;
    typedef Tw32 Tw;
    static constexpr bool ALTERNATE_STAGES = false;
    u32 q, two_q;
    u64 mu;
    u32 m;

    __device__ __forceinline__ explicit Mod32(const ModConst& c) : q((u32)c.q), two_q(2 * (u32)c.q), mu(c.mu), m(c.m) {}

    // x * w mod q in [0, 2q) for any x < 2^32.
    __device__ __forceinline__ T mul_tw(T x, const Tw& t) const {
        u32 hi = __umulhi(x, t.wq);
        return x * t.w - hi * q;
    }
    // values in [0, 2q) -> outputs in [0, 2q)
    __device__ __forceinline__ void ct(T& x, T& y, const Tw& t) const {
        T a = x >= q ? x - q : x;
        T b = mul_tw(y, t);
        b = b >= q ? b - q : b;
        x = a + b;
        y = a - b + q;
    }
    __device__ __forceinline__ T reduce(T x) const { return x >= q ? x - q : x; }
    __device__ __forceinline__ T reduce_product(T x) const { return reduce(x); }  // mul_tw's [0, 2q), mul's [0, q)
    __device__ __forceinline__ T mul_tw_reduced(T x, const Tw& t) const { return reduce(mul_tw(x, t)); }
    __device__ __forceinline__ T mul(T a, T b) const {
        u64 x = (u64)a * b;
        u64 c = x >> (m - 2);
        u64 quot = (u64)(((u128)c * mu) >> (m + 3));
        u32 r = (u32)(x - quot * q);
        return r >= q ? r - q : r;
    }
};
