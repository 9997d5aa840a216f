"""The public transforms against exact oracles, on every backend present (CPU always)."""

import random

import galois
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hebatch as hb
from hebatch.field import default_root

from .conftest import to_host
from .oracle import convolve, naive_ntt, random_residues, spot_check_ntt

MAX_LOG_N = 16
# One modulus per size class, each = 1 mod 2^17 so it serves every n up to 2^16 (both kinds).
MODULI = {
    "30bit": hb.ntt_primes(30, 2**MAX_LOG_N, 1)[0],
    "50bit": hb.ntt_primes(50, 2**MAX_LOG_N, 1)[0],
    "60bit": hb.ntt_primes(60, 2**MAX_LOG_N, 1)[0],
    "61bit": hb.ntt_primes(61, 2**MAX_LOG_N, 1)[0],
    "62bit": hb.ntt_primes(62, 2**MAX_LOG_N, 1)[0],
    "goldilocks": hb.GOLDILOCKS,
    "babybear": hb.BABYBEAR,
}
ALGORITHMS = ["radix2", "4step"]


def draw(xp, q, shape, dtype=np.uint64):
    return xp.asarray(random_residues(np.random.default_rng(), q, shape, dtype))


@pytest.mark.parametrize("name", MODULI)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("negacyclic", [False, True])
def test_small_sizes_against_definition(xp, name, algorithm, negacyclic):
    q = MODULI[name]
    for log_n in range(1, 7):
        n = 2**log_n
        x = draw(xp, q, n)
        y = hb.ntt(x, q, negacyclic=negacyclic, algorithm=algorithm)
        root = default_root(q, n, negacyclic)
        assert to_host(y).tolist() == naive_ntt(to_host(x), q, root, negacyclic)
        # the inverse against its definition: x_j = n^-1 r^-j sum_k y_k w^-jk (r = psi, or 1 if cyclic)
        z = draw(xp, q, n)
        got = to_host(hb.intt(z, q, negacyclic=negacyclic, algorithm=algorithm)).tolist()
        root_inv, n_inv = pow(root, -1, q), pow(n, -1, q)
        w_inv = root_inv * root_inv % q if negacyclic else root_inv
        sums = naive_ntt(to_host(z), q, w_inv, False)
        twist = root_inv if negacyclic else 1
        assert got == [v * n_inv * pow(twist, j, q) % q for j, v in enumerate(sums)]
        assert to_host(hb.intt(y, q, negacyclic=negacyclic, algorithm=algorithm)).tolist() == to_host(x).tolist()


@pytest.mark.parametrize("name", MODULI)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_all_sizes_random_points(xp, name, algorithm):
    """Every n from 2^7 to 2^16: forward at random points by Horner evaluation, exact round trip."""
    q = MODULI[name]
    rng = random.Random()
    for log_n in range(7, MAX_LOG_N + 1):
        n = 2**log_n
        for negacyclic in (False, True):
            x = draw(xp, q, n)
            y = hb.ntt(x, q, negacyclic=negacyclic, algorithm=algorithm)
            spot_check_ntt(
                to_host(x),
                to_host(y),
                q,
                default_root(q, n, negacyclic),
                negacyclic,
                points=3 if log_n > 13 else 6,
                rng=rng,
            )
            assert (to_host(hb.intt(y, q, negacyclic=negacyclic, algorithm=algorithm)) == to_host(x)).all()


@pytest.mark.parametrize("name", ["30bit", "60bit", "goldilocks", "babybear"])
def test_matches_galois(xp, name):
    """galois.ntt (cyclic, w = g^((q-1)/n), g the smallest generator) as an independent library."""
    q = MODULI[name]
    for log_n in (1, 3, 8, 11, 12):
        n = 2**log_n
        x = draw(xp, q, n)
        expected = [int(v) for v in galois.ntt([int(v) for v in to_host(x)], modulus=q)]
        for algorithm in ALGORITHMS:
            assert to_host(hb.ntt(x, q, algorithm=algorithm)).tolist() == expected
        # negacyclic = cyclic NTT of x_j psi^j
        psi = default_root(q, n, True)
        twisted = [int(v) * pow(psi, j, q) % q for j, v in enumerate(to_host(x))]
        expected = [int(v) for v in galois.ntt(twisted, modulus=q)]
        assert to_host(hb.ntt(x, q, negacyclic=True)).tolist() == expected


@pytest.mark.parametrize("negacyclic", [False, True])
@pytest.mark.parametrize("log_n", [1, 4, 10, 14])
def test_polymul_convolution_theorem(xp, negacyclic, log_n):
    n = 2**log_n
    qs = [MODULI["60bit"], MODULI["goldilocks"], MODULI["30bit"]]
    a = xp.stack([draw(xp, q, (2, n)) for q in qs], axis=1)  # (2, L, n)
    b = xp.stack([draw(xp, q, (2, n)) for q in qs], axis=1)
    c = to_host(hb.polymul(a, b, qs, negacyclic=negacyclic))
    ah, bh = to_host(a), to_host(b)
    for i in range(2):
        for limb, q in enumerate(qs):
            assert c[i, limb].tolist() == convolve(ah[i, limb], bh[i, limb], q, negacyclic)


def test_polymul_large_and_broadcast(xp):
    q = MODULI["61bit"]
    n = 2**16
    a = draw(xp, q, (1, n))
    b = draw(xp, q, (3, n))
    c = to_host(hb.polymul(a, b, q))
    assert c.shape == (3, n)
    k = random.randrange(3)
    assert c[k].tolist() == convolve(to_host(a)[0], to_host(b)[k], q, True)
    # squaring with a is b
    s = to_host(hb.polymul(a, a, q, negacyclic=False))
    assert s[0].tolist() == convolve(to_host(a)[0], to_host(a)[0], q, False)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_rns_batch_equals_single_limb(xp, algorithm):
    n = 2**10
    qs = hb.ntt_primes(60, n, 2) + [hb.GOLDILOCKS] + hb.ntt_primes(31, n, 1) + hb.ntt_primes(45, n, 1)
    x = xp.stack([draw(xp, q, (3, 2, n)) for q in qs], axis=2)  # (3, 2, L, n)
    for negacyclic in (False, True):
        y = hb.ntt(x, qs, negacyclic=negacyclic, algorithm=algorithm)
        assert y.shape == x.shape and y.dtype == x.dtype and type(y) is type(x)
        for limb, q in enumerate(qs):
            single = hb.ntt(xp.ascontiguousarray(x[:, :, limb, :]), q, negacyclic=negacyclic, algorithm=algorithm)
            assert (to_host(single) == to_host(y[:, :, limb, :])).all()
        spot_check_ntt(to_host(x)[2, 1, 3], to_host(y)[2, 1, 3], qs[3], default_root(qs[3], n, negacyclic), negacyclic)
        assert (to_host(hb.intt(y, qs, negacyclic=negacyclic, algorithm=algorithm)) == to_host(x)).all()


def test_uint32(xp):
    n = 2**12
    qs = [hb.BABYBEAR, MODULI["30bit"]]
    x = xp.stack([draw(xp, q, (4, n), np.uint32) for q in qs], axis=1)
    for algorithm in ALGORITHMS:
        y = hb.ntt(x, qs, negacyclic=True, algorithm=algorithm)
        assert y.dtype == np.uint32 and y.shape == x.shape
        wide = hb.ntt(x.astype(np.uint64), qs, negacyclic=True, algorithm=algorithm)
        assert (to_host(y) == to_host(wide)).all()
        assert (to_host(hb.intt(y, qs, negacyclic=True, algorithm=algorithm)) == to_host(x)).all()


def test_root_override(xp):
    q = MODULI["50bit"]
    n = 32
    x = draw(xp, q, n)
    w = pow(default_root(q, n, False), 3, q)
    assert to_host(hb.ntt(x, q, root=w)).tolist() == naive_ntt(to_host(x), q, w, False)
    psi = pow(default_root(q, n, True), 5, q)
    y = hb.ntt(x, q, negacyclic=True, root=psi)
    assert to_host(y).tolist() == naive_ntt(to_host(x), q, psi, True)
    assert (to_host(hb.intt(y, q, negacyclic=True, root=psi)) == to_host(x)).all()
    qs = [q, MODULI["30bit"]]
    xs = xp.stack([draw(xp, p, n) for p in qs])
    roots = [w, pow(default_root(qs[1], n, False), 7, qs[1])]
    ys = to_host(hb.ntt(xs, qs, root=roots))
    for limb in range(2):
        assert ys[limb].tolist() == naive_ntt(to_host(xs)[limb], qs[limb], roots[limb], False)


def test_inputs_untouched_and_inplace(xp):
    q = MODULI["60bit"]
    x = draw(xp, q, (4, 256))
    keep = x.copy()
    y = hb.ntt(x, q, negacyclic=True)
    assert (x == keep).all()
    assert not (y == x).all()
    z = hb.polymul(x, y, q)
    assert (x == keep).all() and z.shape == x.shape
    same = hb.ntt(x, q, negacyclic=True, inplace=True)
    assert same is x and (to_host(x) == to_host(y)).all()
    hb.intt(x, q, negacyclic=True, inplace=True)
    assert (x == keep).all()


def test_non_contiguous_input(xp):
    q = MODULI["61bit"]
    base = draw(xp, q, (64, 6))
    x = base.T  # (6, 64) view with stride
    y = hb.ntt(x, q)
    assert (to_host(y) == to_host(hb.ntt(xp.ascontiguousarray(x), q))).all()


def test_empty_batch(xp):
    x = xp.zeros((0, 3, 16), dtype=np.uint64)
    assert hb.ntt(x, list(hb.ntt_primes(60, 16, 3))).shape == (0, 3, 16)


# -- property tests ----------------------------------------------------------------------------

SETTINGS = settings(max_examples=40, deadline=None)
moduli_st = st.sampled_from(list(MODULI.values()))


@SETTINGS
@given(
    q=moduli_st,
    log_n=st.integers(1, 11),
    negacyclic=st.booleans(),
    algorithm=st.sampled_from(ALGORITHMS),
    seed=st.integers(0, 2**32 - 1),
    batch=st.integers(1, 3),
)
def test_property_round_trip(q, log_n, negacyclic, algorithm, seed, batch):
    x = random_residues(np.random.default_rng(seed), q, (batch, 2**log_n))
    y = hb.ntt(x, q, negacyclic=negacyclic, algorithm=algorithm)
    assert (hb.intt(y, q, negacyclic=negacyclic, algorithm=algorithm) == x).all()
    assert (hb.ntt(hb.intt(x, q, negacyclic=negacyclic), q, negacyclic=negacyclic) == x).all()


@SETTINGS
@given(
    q=moduli_st,
    log_n=st.integers(1, 11),
    negacyclic=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
    scalar=st.integers(0, 2**64),
)
def test_property_linearity(q, log_n, negacyclic, seed, scalar):
    rng = np.random.default_rng(seed)
    n = 2**log_n
    a, b = random_residues(rng, q, n), random_residues(rng, q, n)
    c = scalar % q
    mixed = np.array([(c * int(u) + int(v)) % q for u, v in zip(a, b)], dtype=np.uint64)
    fa, fb = hb.ntt(a, q, negacyclic=negacyclic), hb.ntt(b, q, negacyclic=negacyclic)
    expected = [(c * int(u) + int(v)) % q for u, v in zip(fa, fb)]
    assert hb.ntt(mixed, q, negacyclic=negacyclic).tolist() == expected


def test_ntt_spread_is_the_transform_of_each_row_on_every_limb():
    from hebatch.ntt import ntt_spread

    rng = np.random.default_rng()
    moduli = [hb.ntt_primes(40, 2**12, 1)[0]] + hb.ntt_primes(60, 2**12, 2)
    n = 64
    x = rng.integers(0, max(moduli), size=(3, n), dtype=np.uint64)
    got = ntt_spread(x, moduli, negacyclic=True)
    assert got.shape == (3, len(moduli), n)
    for b in range(3):
        for limb, q in enumerate(moduli):
            row = [int(v) % q for v in x[b]]
            psi = default_root(q, n, True)
            want = [sum(v * pow(psi, j * (2 * k + 1), q) for j, v in enumerate(row)) % q for k in range(n)]
            assert [int(v) for v in got[b, limb]] == want
    with pytest.raises(ValueError):
        ntt_spread(x[:, :48], moduli)


def test_intt_product_is_the_inverse_of_the_pointwise_product(xp):
    from hebatch.ntt import intt_product

    rng = np.random.default_rng()
    moduli = hb.ntt_primes(60, 2**12, 2)
    n = 256
    q = np.array(moduli, dtype=np.uint64)[:, None]
    a = rng.integers(0, 2**63, size=(3, 2, n), dtype=np.uint64) % q
    b = rng.integers(0, 2**63, size=(3, 2, n), dtype=np.uint64) % q
    for bb in (b, b[1]):  # b of a's shape, and one b for every item
        prod = np.array(
            [
                [[int(x) * int(y) % int(m) for x, y in zip(ra, rb)] for ra, rb, m in zip(ia, ib, moduli)]
                for ia, ib in zip(a, np.broadcast_to(bb, a.shape))
            ],
            dtype=np.uint64,
        )
        want = hb.intt(prod, moduli, negacyclic=True)
        got = intt_product(xp.asarray(a), xp.asarray(bb), moduli, negacyclic=True)
        assert (to_host(got) == want).all()
    with pytest.raises(ValueError, match="b must have"):
        intt_product(xp.asarray(a), xp.asarray(b[:, :1]), moduli)
