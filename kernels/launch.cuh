// What every kernel file shares about its launch interface. No system headers.
//
// Kernels take their buffers as pointer arguments and everything else as one parameter struct passed by
// value. The struct's layout is defined once in Python (a NumPy structured dtype in
// hebatch/backend/kernels.py) and checked against the C++ definition field by field
// (tests/test_kernel_boundary.py: offsetof/sizeof static_asserts compiled with the host compiler and nvcc).
#pragma once

// A by-value kernel parameter read straight from the parameter space, never copied to local memory
// (CUDA 11.7 and later; plain by-value parameters elsewhere, such as host builds of the kernels).
#if defined(__CUDACC__) && (__CUDACC_VER_MAJOR__ > 11 || (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 7))
#define KERNEL_PARAMS const __grid_constant__
#else
#define KERNEL_PARAMS const
#endif

// A run-time switch turned compile-time: `if (c) f(Bool<true>()); else f(Bool<false>());` gives the compiler
// one copy of f's loop per value with no test inside, as it makes by itself of loops that test a scalar
// kernel argument but not always of loops that test a struct field.
template <bool B>
struct Bool {
    static constexpr bool value = B;
};
