// Arithmetic in 256-bit prime fields (the scalar fields of zk-SNARK curves). No system headers.
//
// An element is four little-endian 64-bit limbs (struct Fe, 32 bytes), fully reduced (< p).
// Multiplication is Montgomery's (CIOS, R = 2^256): mont_mul(a, b) = a b R^-1 mod p. Kernels keep data in
// standard form and every constant multiplier (twiddles, n^-1, coset powers) in Montgomery form
// (c R mod p), so that mont_mul(x, c R) = x c: no conversion pass is ever needed.
//
// A field is a struct of compile-time constants (p, -p^-1 mod 2^64); kernels are templated on it. The
// Montgomery product reads the modulus digits from device memory, not immediates (see load_p_digits).
// The host (hebatch/backend/gpu/ntt256.py) names the struct per field, and tests/test_gpu_zk.py checks
// these constants against hebatch/field.py.
#pragma once

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned __int128 u128;

struct __align__(32) Fe {
    u64 v[4];
};

#ifdef FIELD256_HOST_CHAINS
// Host builds for tests (tests/test_field256_host.py): every asm carry chain below has a C++ twin under this
// macro doing the same arithmetic, so that the code around the chains runs on the CPU exactly as written.
// x + y + c_in (c_in in {0, 1}); c_out = the carry, x - y - b_in; b_out = the borrow (as PTX's carry flag).
inline u64 host_add(u64 x, u64 y, u64 c_in, u64& c_out) {
    const u128 s = (u128)x + y + c_in;
    c_out = (u64)(s >> 64);
    return (u64)s;
}
inline u64 host_sub(u64 x, u64 y, u64 b_in, u64& b_out) {
    const u128 d = (u128)x - y - b_in;
    b_out = (u64)(d >> 64) & 1;
    return (u64)d;
}
// acc[0..8] += x (y0 + y1 2^64 + y2 2^128 + y3 2^192) + c_in (mod 2^288), as the chains of mont_mul.
inline void host_mad_pairs(u32* acc, u32 x, u32 y0, u32 y1, u32 y2, u32 y3, u32 c_in) {
    const u32 y[4] = {y0, y1, y2, y3};
    u64 c = c_in;
    for (int j = 0; j < 4; ++j) {
        const u128 s = (u128)x * y[j] + (((u64)acc[2 * j + 1] << 32) | acc[2 * j]) + c;
        acc[2 * j] = (u32)s;
        acc[2 * j + 1] = (u32)((u64)s >> 32);
        c = (u64)(s >> 64);
    }
    acc[8] += (u32)c;
}
#endif

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
#ifndef FIELD256_HOST_CHAINS
    asm("sub.cc.u64 %0, %5, %9;\n\t"
        "subc.cc.u64 %1, %6, %10;\n\t"
        "subc.cc.u64 %2, %7, %11;\n\t"
        "subc.cc.u64 %3, %8, %12;\n\t"
        "subc.u64 %4, %13, 0;"
        : "=l"(d0), "=l"(d1), "=l"(d2), "=l"(d3), "=l"(borrow)
        : "l"(s0), "l"(s1), "l"(s2), "l"(s3), "l"(F::P0), "l"(F::P1), "l"(F::P2), "l"(F::P3), "l"(c));
#else
    u64 bw;
    d0 = host_sub(s0, F::P0, 0, bw);
    d1 = host_sub(s1, F::P1, bw, bw);
    d2 = host_sub(s2, F::P2, bw, bw);
    d3 = host_sub(s3, F::P3, bw, bw);
    borrow = host_sub(c, 0, bw, bw);
#endif
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
#ifndef FIELD256_HOST_CHAINS
    asm("add.cc.u64 %0, %5, %9;\n\t"
        "addc.cc.u64 %1, %6, %10;\n\t"
        "addc.cc.u64 %2, %7, %11;\n\t"
        "addc.cc.u64 %3, %8, %12;\n\t"
        "addc.u64 %4, 0, 0;"
        : "=l"(s0), "=l"(s1), "=l"(s2), "=l"(s3), "=l"(c)
        : "l"(a.v[0]), "l"(a.v[1]), "l"(a.v[2]), "l"(a.v[3]), "l"(b.v[0]), "l"(b.v[1]), "l"(b.v[2]), "l"(b.v[3]));
#else
    s0 = host_add(a.v[0], b.v[0], 0, c);
    s1 = host_add(a.v[1], b.v[1], c, c);
    s2 = host_add(a.v[2], b.v[2], c, c);
    s3 = host_add(a.v[3], b.v[3], c, c);
#endif
    return reduce_once<F>(s0, s1, s2, s3, c);
}

// a - b mod p for a, b < p: the difference, plus p where it borrowed.
template <class F>
__device__ __forceinline__ Fe fsub(const Fe& a, const Fe& b) {
    u64 d0, d1, d2, d3, borrow;
    Fe r;
#ifndef FIELD256_HOST_CHAINS
    asm("sub.cc.u64 %0, %5, %9;\n\t"
        "subc.cc.u64 %1, %6, %10;\n\t"
        "subc.cc.u64 %2, %7, %11;\n\t"
        "subc.cc.u64 %3, %8, %12;\n\t"
        "subc.u64 %4, 0, 0;"
        : "=l"(d0), "=l"(d1), "=l"(d2), "=l"(d3), "=l"(borrow)
        : "l"(a.v[0]), "l"(a.v[1]), "l"(a.v[2]), "l"(a.v[3]), "l"(b.v[0]), "l"(b.v[1]), "l"(b.v[2]), "l"(b.v[3]));
    asm("add.cc.u64 %0, %4, %8;\n\t"
        "addc.cc.u64 %1, %5, %9;\n\t"
        "addc.cc.u64 %2, %6, %10;\n\t"
        "addc.u64 %3, %7, %11;"
        : "=l"(r.v[0]), "=l"(r.v[1]), "=l"(r.v[2]), "=l"(r.v[3])
        : "l"(d0), "l"(d1), "l"(d2), "l"(d3), "l"(F::P0 & borrow), "l"(F::P1 & borrow), "l"(F::P2 & borrow),
          "l"(F::P3 & borrow));
#else
    u64 bw, c;
    d0 = host_sub(a.v[0], b.v[0], 0, bw);
    d1 = host_sub(a.v[1], b.v[1], bw, bw);
    d2 = host_sub(a.v[2], b.v[2], bw, bw);
    d3 = host_sub(a.v[3], b.v[3], bw, bw);
    borrow = host_sub(0, 0, bw, bw);
    r.v[0] = host_add(d0, F::P0 & borrow, 0, c);
    r.v[1] = host_add(d1, F::P1 & borrow, c, c);
    r.v[2] = host_add(d2, F::P2 & borrow, c, c);
    r.v[3] = host_add(d3, F::P3 & borrow, c, c);
#endif
    return r;
}

// a - b + p for a, b < p, with no conditional step: in [1, 2p), below 2^256 as 2p < 2^256 for these fields
// (a + p cannot carry out, the subtraction cannot borrow). Not reduced, but exact as the second factor of
// mont_mul, which takes any value below 2^256 there.
template <class F>
__device__ __forceinline__ Fe fsub_unreduced(const Fe& a, const Fe& b) {
    Fe r;
#ifndef FIELD256_HOST_CHAINS
    asm("add.cc.u64 %0, %4, %12;\n\t"
        "addc.cc.u64 %1, %5, %13;\n\t"
        "addc.cc.u64 %2, %6, %14;\n\t"
        "addc.u64 %3, %7, %15;\n\t"
        "sub.cc.u64 %0, %0, %8;\n\t"
        "subc.cc.u64 %1, %1, %9;\n\t"
        "subc.cc.u64 %2, %2, %10;\n\t"
        "subc.u64 %3, %3, %11;"
        : "=l"(r.v[0]), "=l"(r.v[1]), "=l"(r.v[2]), "=l"(r.v[3])
        : "l"(a.v[0]), "l"(a.v[1]), "l"(a.v[2]), "l"(a.v[3]), "l"(b.v[0]), "l"(b.v[1]), "l"(b.v[2]), "l"(b.v[3]),
          "l"(F::P0), "l"(F::P1), "l"(F::P2), "l"(F::P3));
#else
    u64 c, bw;
    r.v[0] = host_add(a.v[0], F::P0, 0, c);
    r.v[1] = host_add(a.v[1], F::P1, c, c);
    r.v[2] = host_add(a.v[2], F::P2, c, c);
    r.v[3] = host_add(a.v[3], F::P3, c, c);
    r.v[0] = host_sub(r.v[0], b.v[0], 0, bw);
    r.v[1] = host_sub(r.v[1], b.v[1], bw, bw);
    r.v[2] = host_sub(r.v[2], b.v[2], bw, bw);
    r.v[3] = host_sub(r.v[3], b.v[3], bw, bw);
#endif
    return r;
}

// a b R^-1 mod p for a < p and any b < 2^256 (CIOS: one word of b, then one Montgomery reduction step per
// word). Every partial sum x y + t + c fits its double word; the running value t stays below 2p (round i:
// t' = (t + a b_i + m p) / 2^w <= (2p - 1 + 2 (2^w - 1) p) / 2^w < 2p), so the result needs one conditional
// subtraction.
//
// Default: 32-bit digits (w = 32) in PTX multiply-add carry chains, arranged so that every chain is a run of
// (mad.lo.cc, madc.hi.cc) pairs on adjacent digits: such a pair is one 32 x 32 + 64 -> 64-bit multiply-add
// with carry in and out, which ptxas issues as one IMAD.WIDE.U32.X, with no ALU instruction for the carries.
// The running value is t = even + odd 2^32 + lone, three parts in digit positions:
//   even: 9 digits at positions 0..8; the products of the even digits of a (and of p) land on its pairs
//         (0, 1), (2, 3), (4, 5), (6, 7), carries on 8;
//   odd:  9 digits at positions 1..9; the products of the odd digits land on its pairs (1, 2) .. (7, 8),
//         carries on 9;
//   lone: one digit at position 0, left over from the previous round's shift.
// A round: even_0 += lone, its carry entering the chain odd += a_odd b_i at position 1; even += a_even b_i;
// m = even_0 (-p^-1) mod 2^32; even += m p_even (even_0 becomes 0, its carry inside the pair); odd += m p_odd.
// Then t / 2^32: odd moves to positions 0..8 and becomes the next even; even's digit 1 becomes the next lone
// (position 0); even's digits 2..8 become the next odd (positions 1..7). Every digit keeps its register
// pair, so ptxas needs no moves. 8 rounds x 16 wide multiply-adds.
// No part overflows its 9 digits: each is <= t < 2p before a round and grows by < 2 p 2^32 + 1 in it, and
// 2p (2^32 + 1) + 1 < 2^288 for p < 2^255.
//
// The chains need both factors in registers (ptxas splits a pair with an immediate or uniform-register
// factor into two IMADs), so the modulus digits come from device memory (load_p_digits, once per kernel,
// passed to mont_mul; mont_mul(a, b) loads them itself).
//
// With FIELD256_U128 defined: the same CIOS on 64-bit words in portable C++ (unsigned __int128), a
// reference to compare against when debugging.
template <class F>
struct PDigits {
    u32 d[8];
    u32 pinv;
};

// The modulus digits in a writable device array, so that neither the compiler nor ptxas folds them into
// immediates; two identical copies read at the thread's parity, so that ptxas cannot prove them
// warp-uniform either (it would keep them in uniform registers, which the wide multiply-add cannot take).
#define FIELD256_P_DIGITS(F)                                                                                   \
    (u32)F::P0, (u32)(F::P0 >> 32), (u32)F::P1, (u32)(F::P1 >> 32), (u32)F::P2, (u32)(F::P2 >> 32), (u32)F::P3, \
        (u32)(F::P3 >> 32)
template <class F>
__device__ __align__(16) u32 field256_p_digits[2][8] = {{FIELD256_P_DIGITS(F)}, {FIELD256_P_DIGITS(F)}};
#undef FIELD256_P_DIGITS
template <class F>
__device__ u32 field256_pinv[2] = {(u32)F::P_INV_NEG, (u32)F::P_INV_NEG};

template <class F>
__device__ __forceinline__ PDigits<F> load_p_digits() {
    const uint4* src = reinterpret_cast<const uint4*>(field256_p_digits<F>[threadIdx.x & 1]);
    const uint4 lo = src[0], hi = src[1];
    PDigits<F> pd;
    pd.d[0] = lo.x, pd.d[1] = lo.y, pd.d[2] = lo.z, pd.d[3] = lo.w;
    pd.d[4] = hi.x, pd.d[5] = hi.y, pd.d[6] = hi.z, pd.d[7] = hi.w;
    pd.pinv = field256_pinv<F>[threadIdx.x & 1];
    return pd;
}

#ifdef FIELD256_U128
template <class F>
__device__ __forceinline__ Fe mont_mul(const Fe& a, const Fe& b, const PDigits<F>&) {
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
// acc[0..8] += x (y0 + y1 2^64 + y2 2^128 + y3 2^192) (x and the y one digit each): product j's low half on
// digit 2j, its high half on 2j + 1, the carry out of digit 7 into digit 8. One asm statement per chain so
// the carry flag never crosses statements.
#ifndef FIELD256_HOST_CHAINS
#define FIELD256_MAD_PAIRS(acc, x, y0, y1, y2, y3)                                                             \
    asm("mad.lo.cc.u32 %0, %9, %10, %0;\n\t"                                                                   \
        "madc.hi.cc.u32 %1, %9, %10, %1;\n\t"                                                                  \
        "madc.lo.cc.u32 %2, %9, %11, %2;\n\t"                                                                  \
        "madc.hi.cc.u32 %3, %9, %11, %3;\n\t"                                                                  \
        "madc.lo.cc.u32 %4, %9, %12, %4;\n\t"                                                                  \
        "madc.hi.cc.u32 %5, %9, %12, %5;\n\t"                                                                  \
        "madc.lo.cc.u32 %6, %9, %13, %6;\n\t"                                                                  \
        "madc.hi.cc.u32 %7, %9, %13, %7;\n\t"                                                                  \
        "addc.u32 %8, %8, 0;"                                                                                  \
        : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3]), "+r"(acc[4]), "+r"(acc[5]), "+r"(acc[6]),   \
          "+r"(acc[7]), "+r"(acc[8])                                                                           \
        : "r"(x), "r"(y0), "r"(y1), "r"(y2), "r"(y3))

// low += lone, its carry (one position up) entering the chain acc[0..8] += x (y0 + .. + y3 2^192) at digit 0.
#define FIELD256_ADD_MAD_PAIRS(low, lone, acc, x, y0, y1, y2, y3)                                              \
    asm("add.cc.u32 %9, %9, %10;\n\t"                                                                          \
        "madc.lo.cc.u32 %0, %11, %12, %0;\n\t"                                                                 \
        "madc.hi.cc.u32 %1, %11, %12, %1;\n\t"                                                                 \
        "madc.lo.cc.u32 %2, %11, %13, %2;\n\t"                                                                 \
        "madc.hi.cc.u32 %3, %11, %13, %3;\n\t"                                                                 \
        "madc.lo.cc.u32 %4, %11, %14, %4;\n\t"                                                                 \
        "madc.hi.cc.u32 %5, %11, %14, %5;\n\t"                                                                 \
        "madc.lo.cc.u32 %6, %11, %15, %6;\n\t"                                                                 \
        "madc.hi.cc.u32 %7, %11, %15, %7;\n\t"                                                                 \
        "addc.u32 %8, %8, 0;"                                                                                  \
        : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3]), "+r"(acc[4]), "+r"(acc[5]), "+r"(acc[6]),   \
          "+r"(acc[7]), "+r"(acc[8]), "+r"(low)                                                                \
        : "r"(lone), "r"(x), "r"(y0), "r"(y1), "r"(y2), "r"(y3))
#else
#define FIELD256_MAD_PAIRS(acc, x, y0, y1, y2, y3) host_mad_pairs(acc, x, y0, y1, y2, y3, 0)
#define FIELD256_ADD_MAD_PAIRS(low, lone, acc, x, y0, y1, y2, y3)                                              \
    do {                                                                                                       \
        const u64 sum_ = (u64)low + lone;                                                                      \
        low = (u32)sum_;                                                                                       \
        host_mad_pairs(acc, x, y0, y1, y2, y3, (u32)(sum_ >> 32));                                             \
    } while (0)
#endif

template <class F>
__device__ __forceinline__ Fe mont_mul(const Fe& a, const Fe& b, const PDigits<F>& pd) {
    const u32 a0 = (u32)a.v[0], a1 = (u32)(a.v[0] >> 32), a2 = (u32)a.v[1], a3 = (u32)(a.v[1] >> 32),
              a4 = (u32)a.v[2], a5 = (u32)(a.v[2] >> 32), a6 = (u32)a.v[3], a7 = (u32)(a.v[3] >> 32);
    const u32 p0 = pd.d[0], p1 = pd.d[1], p2 = pd.d[2], p3 = pd.d[3], p4 = pd.d[4], p5 = pd.d[5], p6 = pd.d[6],
              p7 = pd.d[7];
    // even[k] at position k, odd[k] at position k + 1, lone at position 0
    u32 even[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, odd[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, lone = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const u32 bi = (u32)(b.v[i >> 1] >> (32 * (i & 1)));
        if (i == 0) {
            FIELD256_MAD_PAIRS(odd, bi, a1, a3, a5, a7);
        } else {
            FIELD256_ADD_MAD_PAIRS(even[0], lone, odd, bi, a1, a3, a5, a7);
        }
        FIELD256_MAD_PAIRS(even, bi, a0, a2, a4, a6);
        const u32 m = even[0] * pd.pinv;
        FIELD256_MAD_PAIRS(even, m, p0, p2, p4, p6);  // even[0] becomes 0
        FIELD256_MAD_PAIRS(odd, m, p1, p3, p5, p7);
        // divide by 2^32: odd -> even, even[1] -> lone, even[2..8] -> odd[0..6]
        const u32 next_lone = even[1];
        u32 next_odd[9];
#pragma unroll
        for (int j = 0; j < 7; ++j) next_odd[j] = even[j + 2];
        next_odd[7] = 0;
        next_odd[8] = 0;
#pragma unroll
        for (int j = 0; j < 9; ++j) {
            even[j] = odd[j];
            odd[j] = next_odd[j];
        }
        lone = next_lone;
    }
    // t = even + odd 2^32 + lone < 2p < 2^256: digits 8 and up of the sum are zero, so an 8-digit sum is exact
    u32 s[8];
#ifndef FIELD256_HOST_CHAINS
    asm("add.cc.u32 %0, %8, %16;\n\t"
        "addc.cc.u32 %1, %9, %17;\n\t"
        "addc.cc.u32 %2, %10, %18;\n\t"
        "addc.cc.u32 %3, %11, %19;\n\t"
        "addc.cc.u32 %4, %12, %20;\n\t"
        "addc.cc.u32 %5, %13, %21;\n\t"
        "addc.cc.u32 %6, %14, %22;\n\t"
        "addc.u32 %7, %15, %23;"
        : "=r"(s[0]), "=r"(s[1]), "=r"(s[2]), "=r"(s[3]), "=r"(s[4]), "=r"(s[5]), "=r"(s[6]), "=r"(s[7])
        : "r"(even[0]), "r"(even[1]), "r"(even[2]), "r"(even[3]), "r"(even[4]), "r"(even[5]), "r"(even[6]),
          "r"(even[7]), "r"(lone), "r"(odd[0]), "r"(odd[1]), "r"(odd[2]), "r"(odd[3]), "r"(odd[4]), "r"(odd[5]),
          "r"(odd[6]));
#else
    u64 c = 0;
    const u32 high[8] = {lone, odd[0], odd[1], odd[2], odd[3], odd[4], odd[5], odd[6]};
    for (int j = 0; j < 8; ++j) {
        const u64 sum = (u64)even[j] + high[j] + c;
        s[j] = (u32)sum;
        c = sum >> 32;
    }
#endif
    return reduce_once<F>(((u64)s[1] << 32) | s[0], ((u64)s[3] << 32) | s[2], ((u64)s[5] << 32) | s[4],
                          ((u64)s[7] << 32) | s[6], 0);
}
#undef FIELD256_MAD_PAIRS
#undef FIELD256_ADD_MAD_PAIRS
#endif

// mont_mul with the modulus digits loaded here (for kernels that multiply once or twice per element).
template <class F>
__device__ __forceinline__ Fe mont_mul(const Fe& a, const Fe& b) {
    return mont_mul<F>(a, b, load_p_digits<F>());
}

