"""RnsOps (NumPy) against Python-int oracles on fresh random data."""

import math
import random

import numpy as np
import pytest

import hebatch as hb
from hebatch.backend.rns import RnsOps, rns_ops

N = 64
MODULI = tuple(hb.ntt_primes(61, N, 2) + hb.ntt_primes(40, N, 2) + hb.ntt_primes(30, N, 1))


@pytest.fixture
def ops():
    return rns_ops("cpu")


def rand_residues(rng, shape, moduli):
    out = np.empty(shape + (len(moduli), N), dtype=np.uint64)
    for i, q in enumerate(moduli):
        out[..., i, :] = np.array([rng.randrange(q) for _ in range(math.prod(shape) * N)],
                                  dtype=np.uint64).reshape(shape + (N,))
    return out


def as_int(a):
    return [[int(v) for v in row] for row in a]


def test_rns_ops_factory(ops):
    assert isinstance(ops, RnsOps) and rns_ops(np) is ops and ops.xp is np
    with pytest.raises(ValueError, match="rns_ops"):
        rns_ops("tpu")


def test_elementwise(ops):
    rng = random.Random()
    a, b, c = (rand_residues(rng, (3,), MODULI) for _ in range(3))
    scalars = [rng.randrange(2**200) for _ in MODULI]
    got = {
        "add": ops.add(a, b, MODULI), "sub": ops.sub(a, b, MODULI), "neg": ops.neg(a, MODULI),
        "mul": ops.mul(a, b, MODULI), "mul_add": ops.mul_add(a, b, c, MODULI),
        "mul_scalar": ops.mul_scalar(a, scalars, MODULI),
    }
    for k in range(3):
        for i, q in enumerate(MODULI):
            x, y, z = (as_int(v[k])[i] for v in (a, b, c))
            want = {
                "add": [(u + v) % q for u, v in zip(x, y)], "sub": [(u - v) % q for u, v in zip(x, y)],
                "neg": [(-u) % q for u in x], "mul": [(u * v) % q for u, v in zip(x, y)],
                "mul_add": [(u * v + w) % q for u, v, w in zip(x, y, z)],
                "mul_scalar": [(u * scalars[i]) % q for u in x],
            }
            for name in want:
                assert as_int(got[name][k])[i] == want[name], name


def test_limb_broadcast(ops):
    rng = random.Random()
    a = rand_residues(rng, (2,), MODULI)
    b = rand_residues(rng, (2,), (MODULI[-1],))  # limb axis of size 1, values < every modulus
    got = ops.mul(a, b, MODULI)
    for k in range(2):
        for i, q in enumerate(MODULI):
            assert as_int(got[k])[i] == [(int(u) * int(v)) % q for u, v in zip(a[k, i], b[k, 0])]


def test_reduce_from_signed_centered_lift(ops):
    rng = random.Random()
    x = np.array([[rng.randrange(2**64) for _ in range(N)]], dtype=np.uint64)
    got = ops.reduce(x, MODULI)
    assert got.shape == (len(MODULI), N)
    for i, q in enumerate(MODULI):
        assert as_int(got)[i] == [int(v) % q for v in x[0]]
    s = np.array([rng.randrange(-2**61, 2**61) for _ in range(N)], dtype=np.int64)
    got = ops.from_signed(s, MODULI)
    for i, q in enumerate(MODULI):
        assert as_int(got)[i] == [int(v) % q for v in s]
    m = rng.randrange(2**40, 2**62)
    x = np.array([[rng.randrange(m) for _ in range(N)]], dtype=np.uint64)
    got = ops.centered_lift(x, m, MODULI)
    for i, q in enumerate(MODULI):
        want = [(int(v) if int(v) <= m // 2 else int(v) - m) % q for v in x[0]]
        assert as_int(got)[i] == want


@pytest.mark.parametrize("limbs", [3, 20])
def test_base_convert(ops, limbs):
    rng = random.Random()
    src = tuple(hb.ntt_primes(61, N, limbs))
    dst = tuple(hb.ntt_primes(59, N, 3)) + (hb.ntt_primes(30, N, 1)[0],)
    x = rand_residues(rng, (2,), src)
    got = ops.base_convert(x, src, dst)
    big_q = math.prod(src)
    for k in range(2):
        cols = as_int(x[k])
        for c in range(N):
            acc = sum((cols[i][c] * pow(big_q // q, -1, q) % q) * (big_q // q) for i, q in enumerate(src))
            crt = acc % big_q
            assert (acc - crt) // big_q < limbs
            for j, p in enumerate(dst):
                assert int(got[k, j, c]) == acc % p


@pytest.mark.parametrize("g", [3, 5, 2 * N - 1, 2 * N - 3])
def test_automorphism(ops, g):
    rng = random.Random()
    x = rand_residues(rng, (2,), MODULI)
    got = ops.automorphism(x, g, MODULI, ntt_form=False)
    for k in range(2):
        for i, q in enumerate(MODULI):
            want = [0] * N
            for e, v in enumerate(as_int(x[k])[i]):
                d = (e * g) % (2 * N)
                if d >= N:
                    want[d - N] = (want[d - N] - v) % q
                else:
                    want[d] = (want[d] + v) % q
            assert as_int(got[k])[i] == want
    # NTT form: the automorphism commutes with the transform
    via_ntt = hb.intt(ops.automorphism(hb.ntt(x, MODULI, negacyclic=True), g, MODULI, ntt_form=True), MODULI,
                      negacyclic=True)
    assert np.array_equal(via_ntt, got)


def test_ntt_negacyclic_product(ops):
    rng = random.Random()
    a, b = rand_residues(rng, (1,), MODULI), rand_residues(rng, (1,), MODULI)
    got = hb.intt(ops.mul(hb.ntt(a, MODULI, negacyclic=True), hb.ntt(b, MODULI, negacyclic=True), MODULI), MODULI,
                  negacyclic=True)
    for i, q in enumerate(MODULI):
        x, y = as_int(a[0])[i], as_int(b[0])[i]
        want = [0] * N
        for u in range(N):
            for v in range(N):
                sign = -1 if u + v >= N else 1
                want[(u + v) % N] = (want[(u + v) % N] + sign * x[u] * y[v]) % q
        assert as_int(got[0])[i] == want


def test_random(ops):
    u = ops.random_uniform((4, len(MODULI), 4096), MODULI)
    assert u.dtype == np.uint64 and u.shape == (4, len(MODULI), 4096)
    for i, q in enumerate(MODULI):
        assert int(u[:, i].max()) < q and int(u[:, i].max()) > q // 2  # spread over the range
    t = ops.random_ternary((8, 4096))
    assert t.dtype == np.int64 and set(np.unique(t).tolist()) == {-1, 0, 1}
    assert all(abs(int((t == v).sum()) - 8 * 4096 / 3) < 600 for v in (-1, 0, 1))
    e = ops.random_gaussian((8, 4096), 3.2)
    assert e.dtype == np.int64 and int(np.abs(e).max()) <= 19
    assert 2.9 < float(e.std()) < 3.5 and abs(float(e.mean())) < 0.2
    assert not np.array_equal(ops.random_ternary((64,)), ops.random_ternary((64,)))
