// Throughput probe of the 256-bit Montgomery product (kernels/field256.cuh) and of the integer pipes it runs on,
// for the multiply floor of the 256-bit NTTs. Every thread runs independent chains of products in registers
// (no memory traffic), 16 blocks of 256 threads per SM; each line prints the best of 5 timed launches as
// operations per second and per SM clock. Build and run on the GPU:
//     nvcc -O3 -arch=sm_90 -std=c++17 -I kernels -o /tmp/field256_throughput benchmarks/field256_throughput.cu
//     /tmp/field256_throughput
// mont_*: products mont_mul(x, y) (4 chains a thread); bfly: DIF butterflies (sum, and the product of the
// unreduced difference); wide_pairs: 32 x 32 + 64-bit multiply-adds with carry, as mont_mul chains them
// (IMAD.WIDE.U32.X); imad32: 32-bit multiply-adds (IMAD); dfma: double-precision FMAs.
#include <cuda_runtime.h>

#include <cstdio>

#include "field256_fp64.cuh"

#define CH 4  // independent chains a thread

// Each thread's chains x (and the common factor, its last input) from io, run `step` iters times, stored back.
template <class Step>
__device__ __forceinline__ void run_chains(Fe* io, int iters, Step&& step) {
    const long long id = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    Fe x[CH];
    for (int j = 0; j < CH; ++j) x[j] = io[id * CH + j];
    const Fe factor = io[id * CH + CH - 1];
    for (int i = 0; i < iters; ++i) step(x, factor);
    for (int j = 0; j < CH; ++j) io[id * CH + j] = x[j];
}
template <class F>
__global__ void __launch_bounds__(256) k_mont(Fe* io, int iters) {
    const PDigits<F> pd = load_p_digits<F>();
    run_chains(io, iters, [&](Fe (&x)[CH], const Fe& y) {
#pragma unroll
        for (int j = 0; j < CH; ++j) x[j] = mont_mul<F>(x[j], y, pd);
    });
}
template <class F>
__global__ void __launch_bounds__(256) k_mont_fp64(Fe* io, int iters) {
    run_chains(io, iters, [&](Fe (&x)[CH], const Fe& y) {
#pragma unroll
        for (int j = 0; j < CH; ++j) x[j] = mont_mul_fp64<F>(x[j], y);
    });
}
template <class F>
__global__ void __launch_bounds__(256) k_bfly_fp64(Fe* io, int iters) {
    run_chains(io, iters, [&](Fe (&x)[CH], const Fe& w) {
#pragma unroll
        for (int j = 0; j < CH; j += 2) {
            const Fe a = x[j], b = x[j + 1];
            x[j] = fadd<F>(a, b);
            x[j + 1] = mont_mul_fp64<F>(w, fsub_unreduced<F>(a, b));
        }
    });
}
// Odd warps take the FP64 product, even warps the integer one: the two use different pipes. Capped at 3
// blocks an SM (85 registers a thread), as ntt256_pass.
template <class F>
__global__ void __launch_bounds__(256, 3) k_mont_mix(Fe* io, int iters) {
    const PDigits<F> pd = load_p_digits<F>();
    const bool fp64 = (threadIdx.x >> 5) & 1;
    run_chains(io, iters, [&](Fe (&x)[CH], const Fe& y) {
        if (fp64) {
#pragma unroll
            for (int j = 0; j < CH; ++j) x[j] = mont_mul_fp64<F>(x[j], y);
        } else {
#pragma unroll
            for (int j = 0; j < CH; ++j) x[j] = mont_mul<F>(x[j], y, pd);
        }
    });
}
template <class F>
__global__ void __launch_bounds__(256, 3) k_bfly_mix(Fe* io, int iters) {
    const PDigits<F> pd = load_p_digits<F>();
    const bool fp64 = (threadIdx.x >> 5) & 1;
    run_chains(io, iters, [&](Fe (&x)[CH], const Fe& w) {
#pragma unroll
        for (int j = 0; j < CH; j += 2) {
            const Fe a = x[j], b = x[j + 1];
            x[j] = fadd<F>(a, b);
            const Fe d = fsub_unreduced<F>(a, b);
            x[j + 1] = fp64 ? mont_mul_fp64<F>(w, d) : mont_mul<F>(w, d, pd);
        }
    });
}
template <class F>
__global__ void __launch_bounds__(256) k_bfly(Fe* io, int iters) {
    const PDigits<F> pd = load_p_digits<F>();
    run_chains(io, iters, [&](Fe (&x)[CH], const Fe& w) {
#pragma unroll
        for (int j = 0; j < CH; j += 2) {
            const Fe a = x[j], b = x[j + 1];
            x[j] = fadd<F>(a, b);
            x[j + 1] = mont_mul<F>(w, fsub_unreduced<F>(a, b), pd);
        }
    });
}
__global__ void __launch_bounds__(256) k_wide(unsigned* io, int iters) {
    const long long id = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    unsigned a[8], x = io[id] | 1, y0 = io[id + 1], y1 = io[id + 2], y2 = io[id + 3], y3 = io[id + 4];
    for (int j = 0; j < 8; ++j) a[j] = io[id + j];
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            asm volatile("mad.lo.cc.u32 %0, %8, %9, %0;\n\tmadc.hi.cc.u32 %1, %8, %9, %1;\n\t"
                "madc.lo.cc.u32 %2, %8, %10, %2;\n\tmadc.hi.cc.u32 %3, %8, %10, %3;\n\t"
                "madc.lo.cc.u32 %4, %8, %11, %4;\n\tmadc.hi.cc.u32 %5, %8, %11, %5;\n\t"
                "madc.lo.cc.u32 %6, %8, %12, %6;\n\tmadc.hi.u32 %7, %8, %12, %7;"
                : "+r"(a[0]), "+r"(a[1]), "+r"(a[2]), "+r"(a[3]), "+r"(a[4]), "+r"(a[5]), "+r"(a[6]), "+r"(a[7])
                : "r"(x), "r"(y0), "r"(y1), "r"(y2), "r"(y3));
            x += a[r];
        }
    }
    unsigned s = 0;
    for (int j = 0; j < 8; ++j) s ^= a[j];
    io[id] = s;
}
__global__ void __launch_bounds__(256) k_imad(unsigned* io, int iters) {
    const long long id = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    unsigned a[8], x = io[id] | 1;
    for (int j = 0; j < 8; ++j) a[j] = io[id + j];
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int r = 0; r < 8; ++r)
#pragma unroll
            for (int j = 0; j < 8; ++j) a[j] = a[j] * x + a[(j + 1) & 7];
    }
    unsigned s = 0;
    for (int j = 0; j < 8; ++j) s ^= a[j];
    io[id] = s;
}
__global__ void __launch_bounds__(256) k_dfma(double* io, int iters) {
    const long long id = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    double a[8], x = io[id];
    for (int j = 0; j < 8; ++j) a[j] = io[id + j];
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int r = 0; r < 8; ++r)
#pragma unroll
            for (int j = 0; j < 8; ++j) a[j] = fma(a[j], x, a[(j + 1) & 7]);
    }
    double s = 0;
    for (int j = 0; j < 8; ++j) s += a[j];
    io[id] = s;
}
int main() {
    int dev = 0, sms, clk;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev);
    const int blocks = sms * 16, threads = 256;
    const long long nthreads = (long long)blocks * threads;
    void* buf;
    cudaMalloc(&buf, nthreads * CH * 32 + 64);
    cudaMemset(buf, 7, nthreads * CH * 32 + 64);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    auto timeit = [&](const char* name, auto launch, double ops_per_thread) {
        launch();
        cudaDeviceSynchronize();
        float best = 1e9;
        for (int r = 0; r < 5; ++r) {
            cudaEventRecord(e0);
            launch();
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (ms < best) best = ms;
        }
        const double ops = ops_per_thread * nthreads;
        printf("%-12s %8.3f ms  %.3e ops/s  %.2f ops/clk/SM (clk %d kHz, %d SMs) err=%s\n", name, best,
               ops / best * 1e3, ops / (best * 1e-3) / (sms * (double)clk * 1e3), clk, sms,
               cudaGetErrorString(cudaGetLastError()));
    };
    const int it = 256;
    timeit("mont_bls381", [&] { k_mont<BLS12_381Fr><<<blocks, threads>>>((Fe*)buf, it); }, (double)it * CH);
    timeit("mont_bn254", [&] { k_mont<BN254Fr><<<blocks, threads>>>((Fe*)buf, it); }, (double)it * CH);
    timeit("bfly_bls381", [&] { k_bfly<BLS12_381Fr><<<blocks, threads>>>((Fe*)buf, it); }, (double)it * CH / 2);
    timeit("mont_fp64_bls381", [&] { k_mont_fp64<BLS12_381Fr><<<blocks, threads>>>((Fe*)buf, it); }, (double)it * CH);
    timeit("mont_fp64_bn254", [&] { k_mont_fp64<BN254Fr><<<blocks, threads>>>((Fe*)buf, it); }, (double)it * CH);
    timeit("bfly_fp64_bls381", [&] { k_bfly_fp64<BLS12_381Fr><<<blocks, threads>>>((Fe*)buf, it); },
           (double)it * CH / 2);
    timeit("mont_mix_bls381", [&] { k_mont_mix<BLS12_381Fr><<<blocks, threads>>>((Fe*)buf, it); }, (double)it * CH);
    timeit("bfly_mix_bls381", [&] { k_bfly_mix<BLS12_381Fr><<<blocks, threads>>>((Fe*)buf, it); },
           (double)it * CH / 2);
    timeit("wide_pairs", [&] { k_wide<<<blocks, threads>>>((unsigned*)buf, it * 4); }, (double)it * 4 * 4 * 4);
    timeit("imad32", [&] { k_imad<<<blocks, threads>>>((unsigned*)buf, it); }, (double)it * 64);
    timeit("dfma", [&] { k_dfma<<<blocks, threads>>>((double*)buf, it); }, (double)it * 64);
    return 0;
}
