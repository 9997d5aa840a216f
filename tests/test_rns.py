"""RnsOps (NumPy) against Python-int oracles on fresh random data."""

import math
import random

import numpy as np
import pytest

import hebatch as hb
from hebatch.backend import RnsOps, get

from . import rns_checks

N = 64
MODULI = tuple(hb.ntt_primes(61, N, 2) + hb.ntt_primes(40, N, 2) + hb.ntt_primes(30, N, 1))


@pytest.fixture
def ops():
    return get("cpu").rns


def rand_residues(rng, shape, moduli):
    out = np.empty(shape + (len(moduli), N), dtype=np.uint64)
    for i, q in enumerate(moduli):
        out[..., i, :] = np.array([rng.randrange(q) for _ in range(math.prod(shape) * N)], dtype=np.uint64).reshape(
            shape + (N,)
        )
    return out


def as_int(a):
    return [[int(v) for v in row] for row in a]


def test_backend_get(ops):
    """One way in: an array, a device word or an array module gives the same cached engines."""
    assert isinstance(ops, RnsOps) and get(np).rns is ops and ops.xp is np
    assert get(np.zeros(3, dtype=np.uint64)) is get("cpu") is get(np)
    assert get("cpu").ntt.xp is np and get("cpu").ntt256 is get("cpu").ntt256
    with pytest.raises(ValueError, match="'auto', 'cpu', 'gpu'"):
        get("tpu")
    with pytest.raises(TypeError, match="x must be a NumPy or CuPy array"):
        get([1, 2, 3])


# The Python-int oracles of tests/rns_checks.py (shared with the GPU and host-kernel tests)
@pytest.mark.parametrize("lead, limbs", [((), 1), ((3,), 5), ((2, 2), 3)])
def test_elementwise_and_lifts(ops, lead, limbs):
    moduli = rns_checks.moduli_for(N, limbs)
    rns_checks.check_elementwise(ops, np.random.default_rng(), lead, N, moduli, np.asarray)
    rns_checks.check_lifts(ops, np.random.default_rng(), lead, N, moduli, np.asarray)


@pytest.mark.parametrize("limbs", [3, 20])
def test_base_convert(ops, limbs):
    src = tuple(hb.ntt_primes(61, N, limbs))
    dst = tuple(hb.ntt_primes(59, N, 3)) + (hb.ntt_primes(30, N, 1)[0],)
    rns_checks.check_base_convert(ops, np.random.default_rng(), (2,), N, src, dst, np.asarray)


@pytest.mark.parametrize("limbs", [1, 4])
def test_scale_round_gives_messages_exactly(ops, limbs):
    """The generic scale and round (the CPU backend's decryption step) against Python-int rounding."""
    q, bsk, _, t = rns_checks.behz_bases(N, limbs)
    rns_checks.check_scale_round(ops, ops, np.random.default_rng(), (3,), N, q, bsk[0], t, np.asarray)


def test_automorphism(ops):
    rns_checks.check_automorphism(ops, np.random.default_rng(), (2,), N, MODULI, np.asarray)


def test_ntt_negacyclic_product(ops):
    rng = random.Random()
    a, b = rand_residues(rng, (1,), MODULI), rand_residues(rng, (1,), MODULI)
    got = hb.intt(
        ops.mul(hb.ntt(a, MODULI, negacyclic=True), hb.ntt(b, MODULI, negacyclic=True), MODULI), MODULI, negacyclic=True
    )
    for i, q in enumerate(MODULI):
        x, y = as_int(a[0])[i], as_int(b[0])[i]
        want = [0] * N
        for u in range(N):
            for v in range(N):
                sign = -1 if u + v >= N else 1
                want[(u + v) % N] = (want[(u + v) % N] + sign * x[u] * y[v]) % q
        assert as_int(got[0])[i] == want


def test_random(ops):
    rns_checks.check_random(ops, np.asarray)
