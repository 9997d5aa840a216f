// A 256-bit Montgomery product on the FP64 pipe, for benchmarks/field256_throughput.cu: the same contract as
// kernels/field256.cuh's mont_mul, another instruction mix. Not used by the kernels: on an H100 it ran
// slower than mont_mul (benchmarks/results/zk-field256-fp64-probe-H100-80GB-HBM3-2026-11-26.json).
// tests/test_field256_host.py checks it against Python ints.
#pragma once
#include "field256.cuh"

// a b R^-1 mod p (R = 2^256) for a < p and any b < 2^256, as mont_mul, computed with double-precision FMAs:
// a and b as five 52-bit digits (doubles), each digit product x y < 2^104 split exactly by two FMAs into
//   h = RZ(x y + 2^104) = 2^104 + H 2^52 (H = floor(x y / 2^52): the sum's ulp is 2^52, rounding toward zero),
//   l = x y + (2^104 + 2^52 - h) = L + 2^52 (L = x y mod 2^52, exact: an integer below 2^53),
// whose bit patterns are (bits of 2^104) + H and (bits of 2^52) + L. Columns (one 64-bit integer per 2^(52k))
// add those patterns; every column starts at minus the sum of the constant parts it will receive, so it holds
// its true value once all its terms are in (the constant parts are multiples of 2^52, so its low 52 bits are
// right all along). Montgomery reduction in the same digits: rounds 0..3 remove 52 bits each, round 4 the
// last 48 (m = t_i (-p^-1) mod 2^52 or 2^48 on the integer pipe), so R stays 2^256 and the result is
// (t >> 256) < 2p, reduced once. A column holds at most 10 digits of each kind plus a carry: < 2^57.
// ptxas (CUDA 13, sm_90) makes it 100 DFMA, 61 DADD, 120 IADD3, 38 IMAD and 67 other integer instructions
// against mont_mul's 128 wide multiply-adds (IMAD.WIDE.U32.X, which issue at half the DFMA rate).
#ifndef FIELD256_HOST_CHAINS
__device__ __forceinline__ double fp64_fma_rz(double x, double y, double z) { return __fma_rz(x, y, z); }
__device__ __forceinline__ u64 fp64_bits(double x) { return (u64)__double_as_longlong(x); }
__device__ __forceinline__ double fp64_from_bits(u64 b) { return __longlong_as_double((long long)b); }
#else
inline u64 fp64_bits(double x) {
    u64 b;
    __builtin_memcpy(&b, &x, 8);
    return b;
}
inline double fp64_from_bits(u64 b) {
    double x;
    __builtin_memcpy(&x, &b, 8);
    return x;
}
// RZ(x y + z) for integer-valued doubles with |x y + z| < 2^126: the exact integer, truncated to 53 bits.
inline double fp64_fma_rz(double x, double y, double z) {
    const __int128 v = (__int128)x * (__int128)y + (__int128)z;
    unsigned __int128 m = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    double scale = 1.0;
    while (m >> 53) {
        m >>= 1;
        scale *= 2.0;
    }
    const double r = (double)(u64)m * scale;
    return v < 0 ? -r : r;
}
#endif

constexpr u64 FP64_M52 = (1ull << 52) - 1;
constexpr u64 FP64_ONE_BITS = 0x4330000000000000ull;  // 2^52: a digit d is the double with bits ONE_BITS + d, less 2^52
constexpr u64 FP64_HIGH_BITS = 0x4670000000000000ull;  // 2^104
constexpr double FP64_TWO52 = 4503599627370496.0;
constexpr double FP64_TWO104 = FP64_TWO52 * FP64_TWO52;

// The five 52-bit digits of x < 2^256 as doubles.
__device__ __forceinline__ void fp64_digits(const Fe& x, double (&d)[5]) {
    const u64 k[5] = {x.v[0] & FP64_M52, ((x.v[0] >> 52) | (x.v[1] << 12)) & FP64_M52,
                      ((x.v[1] >> 40) | (x.v[2] << 24)) & FP64_M52, ((x.v[2] >> 28) | (x.v[3] << 36)) & FP64_M52,
                      x.v[3] >> 16};
#pragma unroll
    for (int i = 0; i < 5; ++i) d[i] = fp64_from_bits(k[i] | FP64_ONE_BITS) - FP64_TWO52;
}

// col[k] += the low half of x y, col[k + 1] += the high half (as bit patterns, see above).
__device__ __forceinline__ void fp64_mad(u64* col, int k, double x, double y) {
    const double h = fp64_fma_rz(x, y, FP64_TWO104);
    const double l = fp64_fma_rz(x, y, (FP64_TWO104 + FP64_TWO52) - h);
    col[k] += fp64_bits(l);
    col[k + 1] += fp64_bits(h);
}

template <class F>
__device__ __forceinline__ Fe mont_mul_fp64(const Fe& a, const Fe& b) {
    constexpr double P[5] = {(double)(F::P0 & FP64_M52), (double)(((F::P0 >> 52) | (F::P1 << 12)) & FP64_M52),
                             (double)(((F::P1 >> 40) | (F::P2 << 24)) & FP64_M52),
                             (double)(((F::P2 >> 28) | (F::P3 << 36)) & FP64_M52), (double)(F::P3 >> 16)};
    double x[5], y[5];
    fp64_digits(a, x);
    fp64_digits(b, y);
    // column k receives 2 #{i + j = k} low and 2 #{i + j = k - 1} high patterns (the product and the reduction)
    u64 col[10];
#pragma unroll
    for (int k = 0; k < 10; ++k) {
        const u64 lows = k <= 4 ? k + 1 : (k <= 8 ? 9 - k : 0);
        const u64 highs = k >= 1 && k <= 5 ? k : (k >= 6 ? 10 - k : 0);
        col[k] = 0 - 2 * (lows * FP64_ONE_BITS + highs * FP64_HIGH_BITS);
    }
#pragma unroll
    for (int i = 0; i < 5; ++i)
#pragma unroll
        for (int j = 0; j < 5; ++j) fp64_mad(col, i + j, x[i], y[j]);
#pragma unroll
    for (int i = 0; i < 5; ++i) {
        const u64 m = (col[i] * F::P_INV_NEG) & (i < 4 ? FP64_M52 : (1ull << 48) - 1);
        const double md = fp64_from_bits(m | FP64_ONE_BITS) - FP64_TWO52;
#pragma unroll
        for (int j = 0; j < 5; ++j) fp64_mad(col, i + j, md, P[j]);
        if (i < 4) col[i + 1] += col[i] >> 52;
    }
    // t / 2^256: col[4] >> 48 at bit 0, col[5] at bit 4, col[6 + j] at bit 56 + 52 j
    col[6] += col[5] >> 52;
    u64 low = ((col[5] & FP64_M52) << 4) + (col[4] >> 48);
    col[6] += low >> 56;
    low &= (1ull << 56) - 1;
#pragma unroll
    for (int k = 6; k < 9; ++k) {
        col[k + 1] += col[k] >> 52;
        col[k] &= FP64_M52;
    }
    return reduce_once<F>(low | (col[6] << 56), (col[6] >> 8) | (col[7] << 44), (col[7] >> 20) | (col[8] << 32),
                          (col[8] >> 32) | (col[9] << 20), 0);
}
