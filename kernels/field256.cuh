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

// a b R^-1 mod p for a, b < p (CIOS: one word of b, then one Montgomery reduction step, four times).
// Every partial sum x y + t + c fits 128 bits; the running value stays below 2p, so the result needs one
// conditional subtraction.
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

__device__ __forceinline__ Fe load_fe(const Fe* __restrict__ p) { return *p; }
