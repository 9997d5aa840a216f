"""kernels/rns.cu built for the CPU with the system C++ compiler, launched like CuPy kernels.

The RNS kernels are grid-stride loops with no shared memory or synchronisation, so running every
(block, thread) of a small emulated grid one after the other computes exactly what the GPU computes.
A small prelude maps the CUDA built-ins they use to host code. `HostModule().get_function(name)`
returns a callable with CuPy's RawKernel signature: fn(grid, block, args), args NumPy arrays (passed
as pointers) and NumPy scalars (passed by their C type).
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import pathlib
import shutil
import subprocess
import tempfile
from functools import lru_cache

import numpy as np

from hebatch.backend.gpu.loader import kernel_dir

PRELUDE = r"""
#include <cmath>
struct HostDim3 { unsigned x, y, z; };
static HostDim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
extern "C" void host_set_dims(unsigned bx, unsigned by, unsigned tx, unsigned gx, unsigned gy, unsigned bdx) {
    blockIdx = {bx, by, 0}; threadIdx = {tx, 0, 0}; gridDim = {gx, gy, 1}; blockDim = {bdx, 1, 1};
}
#define __global__
#define __device__
#define __forceinline__ inline
#define __align__(n) __attribute__((aligned(n)))
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline long long __double2ll_rn(double x) { return std::llrint(x); }
static inline double cospi(double x) { return std::cos(M_PI * x); }
using std::sqrt; using std::log; using std::fabs;
"""

_CTYPES = {
    np.dtype(np.int64): ctypes.c_int64,
    np.dtype(np.uint64): ctypes.c_uint64,
    np.dtype(np.int32): ctypes.c_int32,
    np.dtype(np.uint32): ctypes.c_uint32,
    np.dtype(np.float64): ctypes.c_double,
}


def compiler() -> str | None:
    return shutil.which("g++") or shutil.which("clang++")


@lru_cache(maxsize=2)
def _library(source_name: str) -> ctypes.CDLL:
    return host_library((kernel_dir() / source_name).read_text(), headers=("modarith.cuh", "chacha20.cuh"))


def host_library(source: str, headers=(), defines=(), prelude: str = PRELUDE, flags=()) -> ctypes.CDLL:
    """source (C++ using kernel headers) built with the prelude as a shared library, cached by content
    (source, prelude, the named headers of kernels/, the defines and flags)."""
    text = prelude + source + "".join((kernel_dir() / h).read_text() for h in headers) + repr((defines, flags))
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    build = pathlib.Path(tempfile.gettempdir()) / f"hebatch-host-kernels-{digest}"
    lib = build / "kernels.so"
    if not lib.exists():
        build.mkdir(parents=True, exist_ok=True)
        (build / "prelude.h").write_text(prelude)
        (build / "kernels.cpp").write_text(source)
        tmp = build / f"kernels.{np.random.default_rng().integers(1 << 30)}.so"
        subprocess.run(
            [
                compiler(),
                "-std=c++17",
                "-O2",
                "-fPIC",
                "-shared",
                "-include",
                str(build / "prelude.h"),
                *flags,
                *[f"-D{d}" for d in defines],
                f"-I{kernel_dir()}",
                "-o",
                str(tmp),
                str(build / "kernels.cpp"),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        tmp.replace(lib)
    return ctypes.CDLL(str(lib))


def _c_arg(value):
    if isinstance(value, np.ndarray):  # like CuPy: the address of the first element (views included)
        return ctypes.c_void_p(value.ctypes.data)
    if isinstance(value, np.generic):
        return _CTYPES[value.dtype](value)
    raise TypeError(f"kernel argument of type {type(value).__name__}: pass NumPy arrays or NumPy scalars")


class HostModule:
    """get_function(name) -> a CuPy-like kernel callable running on the CPU.

    emulated_grid: at most this many blocks along x and y and threads per block are run (the kernels'
    grid-stride loops then cover the rest), keeping the emulation fast whatever grid is asked for.
    """

    def __init__(self, source_name: str = "rns.cu", emulated_grid=(2, 3, 4)):
        self.lib = _library(source_name)
        self.emulated_grid = emulated_grid

    def get_function(self, name: str):
        fn = getattr(self.lib, name)
        fn.restype = None
        set_dims = self.lib.host_set_dims
        gx_max, gy_max, bx_max = self.emulated_grid

        def launch(grid, block, args, **_):
            grid = tuple(grid) + (1,) * (2 - len(grid))
            gx, gy = min(grid[0], gx_max), min(grid[1], gy_max)
            bdx = min(block[0], bx_max)
            c_args = [_c_arg(a) for a in args]
            for by, bx, tx in itertools.product(range(gy), range(gx), range(bdx)):
                set_dims(bx, by, tx, gx, gy, bdx)
                fn(*c_args)

        return launch


THREADED_PRELUDE = r"""
// CUDA's execution model on host threads: every thread of a block is a host thread, __syncthreads a
// real barrier, shared memory one static buffer (blocks run one after the other).
#include <pthread.h>
#include <thread>
#include <vector>
struct HostDim3 { unsigned x, y, z; };
static HostDim3 blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
static thread_local HostDim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0};
static pthread_barrier_t host_block_barrier;
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
#define __global__
#define __device__
#define __shared__
#define __forceinline__ inline
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
alignas(32) unsigned char smem_raw[65536];
static inline void __syncthreads() { pthread_barrier_wait(&host_block_barrier); }
static inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
static inline unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
"""

# run_grid(grid, block, body): body() as every thread of every block (after THREADED_PRELUDE).
RUN_GRID = r"""
template <class Body>
static void run_grid(unsigned grid, unsigned block, Body body) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    pthread_barrier_init(&host_block_barrier, nullptr, block);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < block; ++t)
        threads.emplace_back([=] {
            threadIdx = {t, 0, 0};
            for (unsigned b = 0; b < grid; ++b) {
                blockIdx = {b, 0, 0};
                body();
                __syncthreads();
            }
        });
    for (auto& th : threads) th.join();
    pthread_barrier_destroy(&host_block_barrier);
}
"""
