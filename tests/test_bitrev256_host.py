"""kernels/ntt256.cu's tiled bit-reversal permutation run on the CPU (every CUDA thread a host thread, so
__syncthreads is a real barrier), against the permutation computed in NumPy."""

import ctypes

import numpy as np
import pytest

from hebatch.backend.kernels import BITREV256_TILE_BITS, KERNEL_DEFINES

from .host_kernels import RUN_GRID, THREADED_PRELUDE, compiler, host_library

pytestmark = pytest.mark.skipif(compiler() is None, reason="no host C++ compiler")

PRELUDE = (
    THREADED_PRELUDE
    + r"""
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
"""
)

SOURCE = (
    r"""
#include "ntt256.cu"
"""
    + RUN_GRID
    + r"""
extern "C" void host_bitrev_tiles(unsigned grid, const void* in, void* out, long long tiles, int log_n) {
    run_grid(grid, NTT256_THREADS, [=] { bitrev_tiles256((const Fe*)in, (Fe*)out, tiles, log_n); });
}
"""
)


def _library():
    return host_library(
        SOURCE,
        headers=("field256.cuh", "ntt256.cu"),
        defines=("FIELD256_HOST_CHAINS",) + tuple(f"{k}={v}" for k, v in KERNEL_DEFINES["ntt256.cu"]),
        prelude=PRELUDE,
        flags=("-pthread",),
    )


def _bitrev(i, bits):
    return int(format(i, f"0{bits}b")[::-1], 2)


@pytest.mark.parametrize("batch,log_n,grid", [(1, 2 * BITREV256_TILE_BITS, 1), (3, 9, 2), (2, 11, 5)])
def test_bitrev_tiles_matches_the_permutation(batch, log_n, grid):
    """grid below the tile count: blocks take several tiles in turn (the shared tile reused)."""
    rng = np.random.default_rng()
    n = 1 << log_n
    x = rng.integers(0, 2**64, size=(batch, n, 4), dtype=np.uint64)
    out = np.zeros_like(x)
    tiles = batch * n >> (2 * BITREV256_TILE_BITS)
    fn = _library().host_bitrev_tiles
    fn.restype = None
    fn(
        ctypes.c_uint(grid),
        ctypes.c_void_p(x.ctypes.data),
        ctypes.c_void_p(out.ctypes.data),
        ctypes.c_longlong(tiles),
        ctypes.c_int(log_n),
    )
    perm = np.array([_bitrev(i, log_n) for i in range(n)])
    want = np.empty_like(x)
    want[:, perm] = x
    assert (out == want).all()
