import random

import numpy as np
import pytest

import hebatch as hb
from hebatch import arith as na
from hebatch.field import modulus_info

from .oracle import random_residues

EDGES = [0, 1, 2, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1]


def u64(values):
    return np.array(values, dtype=np.uint64)


def test_numpy_shift_semantics():
    """The 128-bit helpers rely on shifts by >= 64 bits giving 0."""
    x = u64([5, 2**64 - 1])
    assert (x << np.uint64(64)).tolist() == [0, 0]
    assert (x >> u64([64, 100])).tolist() == [0, 0]


def test_mul_wide_exact():
    rng = random.Random()
    a = EDGES + [rng.randrange(2**64) for _ in range(3000)]
    b = EDGES[::-1] + [rng.randrange(2**64) for _ in range(3000)]
    a, b = a[: len(b)], b[: len(a)]
    hi, lo = na.mul_wide(u64(a), u64(b))
    for x, y, high, low in zip(a, b, hi.tolist(), lo.tolist()):
        assert (high << 64) | low == x * y


def test_shr128():
    rng = random.Random()
    for _ in range(200):
        v = rng.randrange(2**128)
        s = rng.randrange(128)
        got = na.shr128(u64([v >> 64]), u64([v & (2**64 - 1)]), s)
        assert int(got[0]) == (v >> s) & (2**64 - 1)


def test_goldilocks_reduce():
    p = hb.GOLDILOCKS
    rng = random.Random()
    vals = [0, 1, p - 1, p, p + 1, 2**64 - 1, 2**128 - 1, (p - 1) ** 2, 2**96, 2**96 - 1, 2**64 * (2**32 - 1)]
    vals += [rng.randrange(2**128) for _ in range(5000)]
    hi = u64([v >> 64 for v in vals])
    lo = u64([v & (2**64 - 1) for v in vals])
    assert na.goldilocks_reduce(hi, lo).tolist() == [v % p for v in vals]


MODULI = (
    [hb.GOLDILOCKS, hb.BABYBEAR, 5, 97]
    + hb.ntt_primes(62, 2, 2)
    + hb.ntt_primes(61, 2, 1)
    + hb.ntt_primes(50, 2, 1)
    + hb.ntt_primes(33, 2, 1)
    + hb.ntt_primes(30, 2, 1)
)


@pytest.mark.parametrize("q", MODULI)
def test_modops_exact(q):
    rng = np.random.default_rng()
    ops = na.ModOps((modulus_info(q),), depth=1)
    edge = [0, 1, q - 1, q - 2, q // 2]
    a = np.concatenate([u64(edge * len(edge)), random_residues(rng, q, 4000)]).reshape(1, -1)
    b = np.concatenate([u64([e for e in edge for _ in edge]), random_residues(rng, q, 4000)]).reshape(1, -1)
    A, B = [int(v) for v in a[0]], [int(v) for v in b[0]]
    assert ops.add(a, b)[0].tolist() == [(x + y) % q for x, y in zip(A, B)]
    assert ops.sub(a, b)[0].tolist() == [(x - y) % q for x, y in zip(A, B)]
    assert ops.neg(a)[0].tolist() == [(-x) % q for x in A]
    assert ops.mul(a, b)[0].tolist() == [x * y % q for x, y in zip(A, B)]
    if q != hb.GOLDILOCKS:
        bs = ops.shoup(b)
        assert bs[0].tolist() == [(y << 64) // q for y in B]
        assert ops.mul_shoup(a, b, bs)[0].tolist() == [x * y % q for x, y in zip(A, B)]
    else:
        with pytest.raises(ValueError):
            ops.shoup(b)
    root = random.randrange(1, q)
    pw = ops.powers([root], 70)[0].tolist()
    assert pw == [pow(root, e, q) for e in range(70)]


def test_modops_per_limb_broadcast():
    qs = hb.ntt_primes(60, 8, 3) + [hb.BABYBEAR]
    ops = na.ModOps(tuple(modulus_info(q) for q in qs), depth=1)
    rng = np.random.default_rng()
    a = np.stack([random_residues(rng, q, (5, 16)) for q in qs], axis=1)  # (5, L, 16)
    b = np.stack([random_residues(rng, q, (5, 16)) for q in qs], axis=1)
    got = ops.mul(a, b)
    for limb, q in enumerate(qs):
        ref = [[int(x) * int(y) % q for x, y in zip(ra, rb)] for ra, rb in zip(a[:, limb], b[:, limb])]
        assert got[:, limb].tolist() == ref


def test_modops_refuses_mixed_kinds():
    with pytest.raises(ValueError):
        na.ModOps((modulus_info(hb.GOLDILOCKS), modulus_info(hb.BABYBEAR)))
