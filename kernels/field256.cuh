// Arithmetic in 256-bit prime fields (the scalar fields of zk-SNARK curves). No system headers.
//
// An element is four little-endian 64-bit limbs (struct Fe, 32 bytes), fully reduced (< p).
// Multiplication is Montgomery's (CIOS, R = 2^256): mont_mul(a, b) = a b R^-1 mod p. Kernels keep data in
// standard form and every constant multiplier (twiddles, n^-1, coset powers) in Montgomery form
// (c R mod p), so that mont_mul(x, c R) = x c: no conversion pass is ever needed.
//
// A field is a struct of compile-time constants (p, -p^-1 mod 2^64); kernels are templated on it, so the
// modulus limbs become immediates. The host (hebatch/backend/gpu_zk.py) names the struct per field, and
// tests/test_gpu_zk.py checks these constants against hebatch/field.py.
#pragma once

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned __int128 u128;

struct __align__(32) Fe {
    u64 v[4];
};

// The scalar field of BN254 (alt_bn128), 254 bits.
struct BN254Fr {
    static constexpr u64 P0 = 0x43e1f593f0000001ull, P1 = 0x2833e84879b97091ull, P2 = 0xb85045b68181585dull,
                         P3 = 0x30644e72e131a029ull;
    static constexpr u64 P_INV_NEG = 0xc2e1f593efffffffull;
};
// The scalar field of BLS12-381, 255 bits.
struct BLS12_381Fr {
    static constexpr u64 P0 = 0xffffffff00000001ull, P1 = 0x53bda402fffe5bfeull, P2 = 0x3339d80809a1d805ull,
                         P3 = 0x73eda753299d7d48ull;
    static constexpr u64 P_INV_NEG = 0xfffffffeffffffffull;
};
// The scalar field of BLS12-377, 253 bits.
struct BLS12_377Fr {
    static constexpr u64 P0 = 0x0a11800000000001ull, P1 = 0x59aa76fed0000001ull, P2 = 0x60b44d1e5c37b001ull,
                         P3 = 0x12ab655e9a2ca556ull;
    static constexpr u64 P_INV_NEG = 0x0a117fffffffffffull;
};

// s - p if s >= p (s given with a carry word c in {0, 1}, s < 2p), else s. One PTX block so the carry
// flag never crosses an asm boundary.
template <class F>
__device__ __forceinline__ Fe reduce_once(u64 s0, u64 s1, u64 s2, u64 s3, u64 c) {
    u64 d0, d1, d2, d3, borrow;
    asm("sub.cc.u64 %0, %5, %9;\n\t"
        "subc.cc.u64 %1, %6, %10;\n\t"
        "subc.cc.u64 %2, %7, %11;\n\t"
        "subc.cc.u64 %3, %8, %12;\n\t"
        "subc.u64 %4, %13, 0;"
        : "=l"(d0), "=l"(d1), "=l"(d2), "=l"(d3), "=l"(borrow)
        : "l"(s0), "l"(s1), "l"(s2), "l"(s3), "l"(F::P0), "l"(F::P1), "l"(F::P2), "l"(F::P3), "l"(c));
    // borrow == 0: (c, s) >= p, take the difference; borrow == 2^64 - 1: s < p, keep s
    Fe r;
    const bool keep = borrow != 0;
    r.v[0] = keep ? s0 : d0;
    r.v[1] = keep ? s1 : d1;
    r.v[2] = keep ? s2 : d2;
    r.v[3] = keep ? s3 : d3;
    return r;
}

// a + b mod p for a, b < p.
template <class F>
__device__ __forceinline__ Fe fadd(const Fe& a, const Fe& b) {
    u64 s0, s1, s2, s3, c;
    asm("add.cc.u64 %0, %5, %9;\n\t"
        "addc.cc.u64 %1, %6, %10;\n\t"
        "addc.cc.u64 %2, %7, %11;\n\t"
        "addc.cc.u64 %3, %8, %12;\n\t"
        "addc.u64 %4, 0, 0;"
        : "=l"(s0), "=l"(s1), "=l"(s2), "=l"(s3), "=l"(c)
        : "l"(a.v[0]), "l"(a.v[1]), "l"(a.v[2]), "l"(a.v[3]), "l"(b.v[0]), "l"(b.v[1]), "l"(b.v[2]), "l"(b.v[3]));
    return reduce_once<F>(s0, s1, s2, s3, c);
}

// a - b mod p for a, b < p: the difference, plus p where it borrowed.
template <class F>
__device__ __forceinline__ Fe fsub(const Fe& a, const Fe& b) {
    u64 d0, d1, d2, d3, borrow;
    asm("sub.cc.u64 %0, %5, %9;\n\t"
        "subc.cc.u64 %1, %6, %10;\n\t"
        "subc.cc.u64 %2, %7, %11;\n\t"
        "subc.cc.u64 %3, %8, %12;\n\t"
        "subc.u64 %4, 0, 0;"
        : "=l"(d0), "=l"(d1), "=l"(d2), "=l"(d3), "=l"(borrow)
        : "l"(a.v[0]), "l"(a.v[1]), "l"(a.v[2]), "l"(a.v[3]), "l"(b.v[0]), "l"(b.v[1]), "l"(b.v[2]), "l"(b.v[3]));
    Fe r;
    asm("add.cc.u64 %0, %4, %8;\n\t"
        "addc.cc.u64 %1, %5, %9;\n\t"
        "addc.cc.u64 %2, %6, %10;\n\t"
        "addc.u64 %3, %7, %11;"
        : "=l"(r.v[0]), "=l"(r.v[1]), "=l"(r.v[2]), "=l"(r.v[3])
        : "l"(d0), "l"(d1), "l"(d2), "l"(d3), "l"(F::P0 & borrow), "l"(F::P1 & borrow), "l"(F::P2 & borrow),
          "l"(F::P3 & borrow));
    return r;
}

// a b R^-1 mod p for a, b < p (CIOS: one word of b, then one Montgomery reduction step per word).
// Every partial sum x y + t + c fits its double word; the running value stays below 2p, so the result needs
// one conditional subtraction.
//
// Default: 32-bit digits with PTX multiply-add carry chains (mad.lo/hi.cc.u32), 8 rounds of
// t += a b_i; t += m p; t >>= 32 (m = t_0 (-p^-1) mod 2^32): 2 x 128 multiply-adds, the native IMAD
// width. With FIELD256_U128 defined: the same algorithm on 64-bit words in portable C++ (unsigned __int128),
// a reference to compare against when debugging.
#ifdef FIELD256_U128
template <class F>
__device__ __forceinline__ Fe mont_mul(const Fe& a, const Fe& b) {
    u64 t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const u64 bi = b.v[i];
        u128 s = (u128)a.v[0] * bi + t0;
        t0 = (u64)s;
        s = (u128)a.v[1] * bi + t1 + (u64)(s >> 64);
        t1 = (u64)s;
        s = (u128)a.v[2] * bi + t2 + (u64)(s >> 64);
        t2 = (u64)s;
        s = (u128)a.v[3] * bi + t3 + (u64)(s >> 64);
        t3 = (u64)s;
        s = (u128)t4 + (u64)(s >> 64);
        t4 = (u64)s;
        const u64 t5 = (u64)(s >> 64);
        // add m p with m = -t0 p^-1 mod 2^64, which zeroes the low word; shift down one word
        const u64 m = t0 * F::P_INV_NEG;
        s = (u128)m * F::P0 + t0;
        s = (u128)m * F::P1 + t1 + (u64)(s >> 64);
        t0 = (u64)s;
        s = (u128)m * F::P2 + t2 + (u64)(s >> 64);
        t1 = (u64)s;
        s = (u128)m * F::P3 + t3 + (u64)(s >> 64);
        t2 = (u64)s;
        s = (u128)t4 + (u64)(s >> 64);
        t3 = (u64)s;
        t4 = t5 + (u64)(s >> 64);
    }
    return reduce_once<F>(t0, t1, t2, t3, t4);
}
#else
// t[0..9] += x * y[0..7] (x one digit): the low halves of the products at digit j, the high halves at
// j + 1, each chain in one asm statement so the carry flag never crosses statements.
#define FIELD256_MAD_ROW(x, y0, y1, y2, y3, y4, y5, y6, y7)                                                    \
    asm("mad.lo.cc.u32 %0, %10, %11, %0;\n\t"                                                                  \
        "madc.lo.cc.u32 %1, %10, %12, %1;\n\t"                                                                 \
        "madc.lo.cc.u32 %2, %10, %13, %2;\n\t"                                                                 \
        "madc.lo.cc.u32 %3, %10, %14, %3;\n\t"                                                                 \
        "madc.lo.cc.u32 %4, %10, %15, %4;\n\t"                                                                 \
        "madc.lo.cc.u32 %5, %10, %16, %5;\n\t"                                                                 \
        "madc.lo.cc.u32 %6, %10, %17, %6;\n\t"                                                                 \
        "madc.lo.cc.u32 %7, %10, %18, %7;\n\t"                                                                 \
        "addc.cc.u32 %8, %8, 0;\n\t"                                                                           \
        "addc.u32 %9, %9, 0;\n\t"                                                                              \
        "mad.hi.cc.u32 %1, %10, %11, %1;\n\t"                                                                  \
        "madc.hi.cc.u32 %2, %10, %12, %2;\n\t"                                                                 \
        "madc.hi.cc.u32 %3, %10, %13, %3;\n\t"                                                                 \
        "madc.hi.cc.u32 %4, %10, %14, %4;\n\t"                                                                 \
        "madc.hi.cc.u32 %5, %10, %15, %5;\n\t"                                                                 \
        "madc.hi.cc.u32 %6, %10, %16, %6;\n\t"                                                                 \
        "madc.hi.cc.u32 %7, %10, %17, %7;\n\t"                                                                 \
        "madc.hi.cc.u32 %8, %10, %18, %8;\n\t"                                                                 \
        "addc.u32 %9, %9, 0;"                                                                                  \
        : "+r"(t[0]), "+r"(t[1]), "+r"(t[2]), "+r"(t[3]), "+r"(t[4]), "+r"(t[5]), "+r"(t[6]), "+r"(t[7]),   \
          "+r"(t[8]), "+r"(t[9])                                                                               \
        : "r"(x), "r"(y0), "r"(y1), "r"(y2), "r"(y3), "r"(y4), "r"(y5), "r"(y6), "r"(y7))

template <class F>
__device__ __forceinline__ Fe mont_mul(const Fe& a, const Fe& b) {
    constexpr u32 pinv = (u32)F::P_INV_NEG;  // -p^-1 mod 2^32: the low digit of -p^-1 mod 2^64
    const u32 a0 = (u32)a.v[0], a1 = (u32)(a.v[0] >> 32), a2 = (u32)a.v[1], a3 = (u32)(a.v[1] >> 32),
              a4 = (u32)a.v[2], a5 = (u32)(a.v[2] >> 32), a6 = (u32)a.v[3], a7 = (u32)(a.v[3] >> 32);
    const u32 p0 = (u32)F::P0, p1 = (u32)(F::P0 >> 32), p2 = (u32)F::P1, p3 = (u32)(F::P1 >> 32),
              p4 = (u32)F::P2, p5 = (u32)(F::P2 >> 32), p6 = (u32)F::P3, p7 = (u32)(F::P3 >> 32);
    u32 t[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const u32 bi = (u32)(b.v[i >> 1] >> (32 * (i & 1)));
        FIELD256_MAD_ROW(bi, a0, a1, a2, a3, a4, a5, a6, a7);
        const u32 m = t[0] * pinv;
        FIELD256_MAD_ROW(m, p0, p1, p2, p3, p4, p5, p6, p7);  // t[0] becomes 0
#pragma unroll
        for (int j = 0; j < 9; ++j) t[j] = t[j + 1];
        t[9] = 0;
    }
    return reduce_once<F>(((u64)t[1] << 32) | t[0], ((u64)t[3] << 32) | t[2], ((u64)t[5] << 32) | t[4],
                          ((u64)t[7] << 32) | t[6], t[8]);
}
#undef FIELD256_MAD_ROW
#endif

__device__ __forceinline__ Fe load_fe(const Fe* __restrict__ p) { return *p; }
