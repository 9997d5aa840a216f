"""Moduli given as a sequence must be ordered (list, tuple, 1-D array) and distinct, in every entry point."""

import dask.array as da
import numpy as np
import pytest

import hebatch as hb
from hebatch import dist

N = 16
Q1, Q2 = hb.ntt_primes(50, 2 * N, 2)


def x2():
    rng = np.random.default_rng()
    return np.stack([rng.integers(0, min(Q1, Q2), size=N, dtype=np.uint64) for _ in range(2)])


CALLS = {
    "ntt": lambda x, m: hb.ntt(x, m),
    "intt": lambda x, m: hb.intt(x, m),
    "polymul": lambda x, m: hb.polymul(x, x, m),
    "dist.ntt": lambda x, m: dist.ntt(da.from_array(x), m, device="cpu"),
    "dist.polymul": lambda x, m: dist.polymul(da.from_array(x), da.from_array(x), m, device="cpu"),
}


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize(
    "moduli",
    [
        lambda: {Q1, Q2},
        lambda: {Q1: 0, Q2: 1},
        lambda: frozenset((Q1, Q2)),
        lambda: iter([Q1, Q2]),
        lambda: (q for q in (Q1, Q2)),
        lambda: np.array([[Q1, Q2]], dtype=np.uint64),
    ],
    ids=["set", "dict", "frozenset", "iterator", "generator", "2d-array"],
)
def test_unordered_or_odd_moduli_raise_typeerror(call, moduli):
    with pytest.raises(TypeError, match="modulus"):
        CALLS[call](x2(), moduli())


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize(
    "moduli", [[Q1, Q1], (Q2, Q2), np.array([Q1, Q1], dtype=np.uint64)], ids=["list", "tuple", "array"]
)
def test_duplicate_moduli_raise_valueerror(call, moduli):
    with pytest.raises(ValueError, match="distinct"):
        CALLS[call](x2(), moduli)


@pytest.mark.parametrize(
    "moduli", [[Q1, Q2], (Q1, Q2), np.array([Q1, Q2], dtype=np.uint64)], ids=["list", "tuple", "array"]
)
def test_sequences_of_distinct_moduli_work(moduli):
    x = x2()
    assert np.array_equal(hb.intt(hb.ntt(x, moduli), moduli), x)
