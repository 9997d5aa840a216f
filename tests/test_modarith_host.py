"""kernels/modarith.cuh's Goldilocks butterfly built for the CPU, against Python integers: it keeps values
lazily anywhere below 2^64, so the edges (values at and above P, products near P) are checked directly;
random transform inputs almost never reach them."""

import ctypes
import itertools

import numpy as np
import pytest

from .host_kernels import compiler, host_library

P = 2**64 - 2**32 + 1

SOURCE = r"""
#include "modarith.cuh"
// rounds butterflies per element, each round's outputs the next round's inputs; then reduce()
extern "C" void goldilocks_ct(const u64* x, const u64* y, const u64* w, u64* out_x, u64* out_y, u64* reduced,
                              long long count, int rounds) {
    const ModConst c = {};
    const Goldilocks g(c);
    for (long long i = 0; i < count; ++i) {
        u64 a = x[i], b = y[i];
        const Tw64 t = {w[i], 0};
        for (int r = 0; r < rounds; ++r) g.ct(a, b, t);
        out_x[i] = a;
        out_y[i] = b;
        reduced[i] = g.reduce(a);
    }
}
"""

pytestmark = pytest.mark.skipif(compiler() is None, reason="needs a C++ compiler")


def _run(x, y, w, rounds):
    lib = host_library(SOURCE, headers=("modarith.cuh",))
    x, y, w = (np.array(v, dtype=np.uint64) for v in (x, y, w))
    out_x, out_y, reduced = (np.empty_like(x) for _ in range(3))
    args = [ctypes.c_void_p(a.ctypes.data) for a in (x, y, w, out_x, out_y, reduced)]
    lib.goldilocks_ct(*args, ctypes.c_longlong(len(x)), ctypes.c_int(rounds))
    return out_x, out_y, reduced


def _edges(rng):
    fixed = [0, 1, 2, 2**32 - 1, 2**32, P - 2, P - 1, P, P + 1, 2**64 - 2, 2**64 - 1]
    return (
        fixed
        + [int(v) for v in rng.integers(0, 2**64, size=4, dtype=np.uint64)]
        + [P + int(v) for v in rng.integers(0, 2**32 - 1, size=4, dtype=np.uint64)]
    )


@pytest.mark.parametrize("rounds", [1, 2, 7])
def test_goldilocks_butterfly_on_lazy_values_matches_python_ints(rounds):
    rng = np.random.default_rng()
    edges = _edges(rng)
    twiddles = [0, 1, 2, P - 1, P - 2**32] + [int(v) for v in rng.integers(0, P, size=3, dtype=np.uint64)]
    cases = list(itertools.product(edges, edges, twiddles))
    x, y, w = (list(c) for c in zip(*cases))
    got_x, got_y, reduced = _run(x, y, w, rounds)
    for i, (a, b, t) in enumerate(cases):
        for _ in range(rounds):
            a, b = (a + t * b) % P, (a - t * b) % P
        assert int(got_x[i]) % P == a and int(got_y[i]) % P == b, (x[i], y[i], w[i])
        assert int(reduced[i]) == a, (x[i], y[i], w[i])
