// Modular arithmetic for hebatch's kernels. No system headers: compiles with NVRTC and nvcc.
//
// Three reduction kinds, each a struct with the interface the NTT kernels are templated on (ct, mul_tw,
// mul, reduce); Mod64 also has add and sub for the RNS kernels:
//   Mod64     q < 2^62, uint64 words. Butterflies keep values lazily in [0, 4q) (Harvey); twiddles are
//             multiplied with an estimate of Shoup's quotient; general products use the Barrett variant of
//             Shivdikar et al. (mu = floor(2^(2m+1)/q), at most one correction).
//   Goldilocks q = 2^64 - 2^32 + 1, uint64 words, reduction by shifts and adds (2^64 = 2^32 - 1 and
//             2^96 = -1 mod q); butterflies keep any value below 2^64, products are fully reduced.
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

struct Mod64 {
    typedef u64 T;
    typedef Tw64 Tw;
    u64 q, two_q, mu;
    u32 m;

    __device__ __forceinline__ explicit Mod64(const ModConst& c) : q(c.q), two_q(2 * c.q), mu(c.mu), m(c.m) {}

    // x * w mod q, lazily in [0, 4q), for any x < 2^64. Shoup's quotient floor(x wq / 2^64) is
    // estimated without the lowest partial product and the carries of the middle ones: the estimate
    // is at most 2 below it (and Shoup's at most 1 below floor(x w / q)), which saves a third of the
    // multiplier instructions for one more conditional subtraction in the butterfly.
    __device__ __forceinline__ T mul_tw(T x, const Tw& t) const {
#ifdef NTT_EXACT_SHOUP  // a tuning knob: Shoup's exact quotient (result in [0, 2q))
        const u64 qhat = __umul64hi(x, t.wq);
#else
        const u32 x0 = (u32)x, x1 = (u32)(x >> 32), w0 = (u32)t.wq, w1 = (u32)(t.wq >> 32);
        const u64 qhat = (u64)x1 * w1 + __umulhi(x0, w1) + __umulhi(x1, w0);
#endif
        return x * t.w - qhat * q;
    }
    // Cooley-Tukey butterfly on values in [0, 4q): (x, y) -> (x + w y, x - w y), outputs in [0, 4q).
    __device__ __forceinline__ void ct(T& x, T& y, const Tw& t) const {
        T a = x >= two_q ? x - two_q : x;
        T b = mul_tw(y, t);
        b = b >= two_q ? b - two_q : b;
        x = a + b;
        y = a - b + two_q;
    }
    // [0, 4q) -> [0, q)
    __device__ __forceinline__ T reduce(T x) const {
        x = x >= two_q ? x - two_q : x;
        return x >= q ? x - q : x;
    }
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

struct Goldilocks {
    typedef u64 T;
    typedef Tw64 Tw;
    static constexpr u64 P = 0xFFFFFFFF00000001ull;
    static constexpr u64 EPS = 0xFFFFFFFFull;  // 2^64 mod P

    __device__ __forceinline__ explicit Goldilocks(const ModConst&) {}

    __device__ __forceinline__ static u64 reduce128(u64 lo, u64 hi) {
        u64 hh = hi >> 32, hl = hi & EPS;
        u64 t0 = lo - hh;
        if (lo < hh) t0 -= EPS;  // borrow: wrapped value is 2^64 too large, 2^64 = EPS
        u64 t1 = (hl << 32) - hl;
        u64 r = t0 + t1;
        if (r < t1) r += EPS;  // carry
        return r >= P ? r - P : r;
    }
    __device__ __forceinline__ T mul(T a, T b) const { return reduce128(a * b, __umul64hi(a, b)); }
    __device__ __forceinline__ T mul_tw(T x, const Tw& t) const { return mul(x, t.w); }
    // Cooley-Tukey butterfly on lazy values: any x, y < 2^64 stand for their residues mod P. With b < P,
    // a + b wraps at most once and one 2^64 = EPS correction cannot wrap again (a + b - 2^64 < P), and
    // a - b + P >= 0 undoes a borrow; no comparison with P is needed until reduce().
    __device__ __forceinline__ void ct(T& x, T& y, const Tw& t) const {
        const T b = mul(y, t.w);
        const T a = x;
        const T s = a + b, d = a - b;
        x = s < b ? s + EPS : s;
        y = a < b ? d - EPS : d;
    }
    // lazy [0, 2^64) -> [0, P)
    __device__ __forceinline__ T reduce(T x) const { return x >= P ? x - P : x; }
};

struct Mod32 {
    typedef u32 T;
    typedef Tw32 Tw;
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
    __device__ __forceinline__ T mul(T a, T b) const {
        u64 x = (u64)a * b;
        u64 c = x >> (m - 2);
        u64 quot = (u64)(((u128)c * mu) >> (m + 3));
        u32 r = (u32)(x - quot * q);
        return r >= q ? r - q : r;
    }
};
