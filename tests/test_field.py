import random

import pytest

import hebatch as hb
from hebatch import field

from .oracle import generator


def trial_division_prime(m: int) -> bool:
    if m < 2:
        return False
    p = 2
    while p * p <= m:
        if m % p == 0:
            return False
        p += 1
    return True


def test_constants():
    assert hb.GOLDILOCKS == 18446744069414584321
    assert hb.BABYBEAR == 2013265921
    assert field.two_adicity(hb.GOLDILOCKS) == 32
    assert field.two_adicity(hb.BABYBEAR) == 27


def test_is_prime_matches_trial_division():
    for m in range(-5, 5000):
        assert field.is_prime(m) == trial_division_prime(m), m
    rng = random.Random()
    for _ in range(300):
        m = rng.randrange(10**6, 10**9)
        assert field.is_prime(m) == trial_division_prime(m), m


@pytest.mark.parametrize(
    "composite",
    [
        561,
        1105,
        2047,
        3215031751,
        25326001,
        3825123056546413051,  # Carmichael / strong pseudoprimes
        318665857834031151167461,  # strong pseudoprime to the first 12 prime bases
        (2**61 - 1) * (2**31 - 1),
        hb.GOLDILOCKS * hb.BABYBEAR,
    ],
)
def test_is_prime_rejects_pseudoprimes(composite):
    assert not field.is_prime(composite)


@pytest.mark.parametrize(
    "prime",
    [
        2**61 - 1,
        2**31 - 1,
        hb.GOLDILOCKS,
        hb.BABYBEAR,
        2**127 - 1,
        0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001,
    ],
)
def test_is_prime_accepts_primes(prime):
    assert field.is_prime(prime)


@pytest.mark.parametrize(
    "bits,n,count", [(20, 16, 8), (30, 1024, 5), (50, 4096, 4), (60, 2**16, 3), (62, 2**17, 2), (17, 8, 30)]
)
def test_ntt_primes(bits, n, count):
    primes = hb.ntt_primes(bits, n, count)
    assert len(primes) == count
    assert primes == sorted(primes, reverse=True)
    assert all(p < 2**bits and p % (2 * n) == 1 and field.is_prime(p) for p in primes)
    # nothing skipped: no prime = 1 mod 2n between consecutive results, or above the first
    top = (2**bits - 1) // (2 * n) * (2 * n) + 1
    candidates = range(top, primes[-1] - 1, -2 * n)
    expected = [c for c in candidates if c < 2**bits and field.is_prime(c)]
    assert expected == primes
    assert hb.ntt_primes(bits, n, count) == primes  # deterministic


def test_ntt_primes_small_exact():
    expected = [p for p in range(2**12 - 1, 1, -1) if p % 32 == 1 and trial_division_prime(p)][:6]
    assert hb.ntt_primes(12, 16, 6) == expected


@pytest.mark.parametrize(
    "args,error",
    [
        ((60, 1000, 2), ValueError),
        ((60, 16, 0), ValueError),
        ((1, 16, 1), ValueError),
        ((8, 64, 5), ValueError),
        ((60.0, 16, 1), TypeError),
        ((60, 16, True), TypeError),
    ],
)
def test_ntt_primes_rejects(args, error):
    with pytest.raises(error):
        hb.ntt_primes(*args)


def test_primitive_root_small_primes_exhaustive():
    for q in [p for p in range(3, 2000) if trial_division_prime(p)]:
        g = hb.primitive_root(q)
        assert g == generator(q), q
        assert len({pow(g, e, q) for e in range(q - 1)}) == q - 1


@pytest.mark.parametrize("q,g", [(hb.GOLDILOCKS, 7), (hb.BABYBEAR, 31), (998244353, 3), (2**61 - 1, 37)])
def test_primitive_root_known(q, g):
    assert hb.primitive_root(q) == g


def test_primitive_root_large_ntt_primes():
    rng = random.Random()
    for q in hb.ntt_primes(62, 2**16, 3) + hb.ntt_primes(50, 2 ** rng.randrange(4, 17), 2):
        g = hb.primitive_root(q)
        for p in field.factorize(q - 1):
            assert pow(g, (q - 1) // p, q) != 1
        assert all(any(pow(h, (q - 1) // p, q) == 1 for p in field.factorize(q - 1)) for h in range(2, g))


def test_primitive_root_rejects():
    with pytest.raises(ValueError, match="prime"):
        hb.primitive_root(15)
    with pytest.raises(TypeError):
        hb.primitive_root(7.0)


def test_factorize():
    rng = random.Random()
    for _ in range(50):
        m = rng.randrange(2, 2**62)
        f = field.factorize(m)
        prod = 1
        for p, e in f.items():
            assert field.is_prime(p)
            prod *= p**e
        assert prod == m


def test_roots_of_unity():
    q = hb.ntt_primes(60, 1024, 1)[0]
    for n in [2, 64, 1024]:
        w = field.root_of_unity(q, n)
        assert pow(w, n, q) == 1 and pow(w, n // 2, q) == q - 1
        field.check_root(w, q, n, False)
        psi = field.default_root(q, n, True)
        assert pow(psi, n, q) == q - 1
        field.check_root(psi, q, n, True)
        with pytest.raises(ValueError, match="root"):
            field.check_root(w * w % q, q, n, False)
    with pytest.raises(ValueError, match="not 1 mod"):
        field.root_of_unity(q, 2**40)


def test_barrett_constants_model():
    """The kernels' Barrett reduction (seed 004, Algorithm 4) needs at most one correction."""
    rng = random.Random()
    for q in hb.ntt_primes(62, 16, 3) + hb.ntt_primes(40, 16, 2) + hb.ntt_primes(33, 16, 1) + [hb.BABYBEAR, 97, 5]:
        info = field.modulus_info(q)
        m = info.bits
        assert info.barrett_mu == 2 ** (2 * m + 1) // q
        xs = [0, 1, q - 1, q, q * q - 1, 2 ** (2 * m) - 1] + [rng.randrange(2 ** (2 * m)) for _ in range(2000)]
        for x in xs:
            quot = ((x >> (m - 2)) * info.barrett_mu) >> (m + 3)
            assert 0 <= x - quot * q < 2 * q, (q, x)
            assert info.barrett_reduce(x) == x % q


def test_shoup_and_montgomery_constants():
    q = hb.ntt_primes(60, 16, 1)[0]
    info = field.modulus_info(q)
    assert (q * info.montgomery_q_inv_neg) % 2**64 == 2**64 - 1
    assert info.montgomery_r2 == 2**128 % q
    w = random.randrange(q)
    assert info.shoup(w) == (w << 64) // q


def test_modulus_info_rejects():
    with pytest.raises(ValueError, match="too large"):
        field.modulus_info(2**62 + 135)
    with pytest.raises(ValueError, match="not prime"):
        field.modulus_info(2**40)
    assert field.modulus_info(hb.GOLDILOCKS).kind == field.KIND_GOLDILOCKS
    assert field.modulus_info(hb.BABYBEAR).kind == field.KIND_U32
