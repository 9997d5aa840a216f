"""The CPU engine's samplers: every random bit from os.urandom, and the statistics of each distribution
(tests/sampler_stats.py). Also checks that those statistical checks reject biased samplers, so a passing
check means something."""

import math

import numpy as np
import pytest

from hebatch.backend import get

from . import sampler_stats

MODULI = (3, 5, 17, 257, 65537, 1073692673, 2**61 - 1, 4611686018425815041, 2**62 - 57)


@pytest.fixture(scope="module")
def ops():
    return get("cpu").rns


def test_samples_come_from_os_urandom(ops, monkeypatch):
    from hebatch.backend.cpu import rns

    requested = []

    def zeros(count):
        requested.append(count)
        return bytes(count)

    monkeypatch.setattr(rns.os, "urandom", zeros)
    monkeypatch.setattr(np.random, "default_rng", None)  # NumPy's generators are never consulted
    u = ops.random_uniform((2, 3, 16), MODULI[-3:])
    assert (u == 0).all() and sum(requested) == 8 * u.size
    requested.clear()
    t = ops.random_ternary((5, 7))
    assert (t == -1).all() and sum(requested) == t.size
    requested.clear()

    def pattern(count):  # 64-bit words 2^63 (u1 = 1/2 + 2^-53) and 0 (u2 = 0): z = sigma sqrt(2 ln 2) cos 0
        requested.append(count)
        return (b"\x00" * 7 + b"\x80") * (count // 16) + bytes(count // 2)

    monkeypatch.setattr(rns.os, "urandom", pattern)
    e = ops.random_gaussian((9,), 3.2)
    assert (e == round(3.2 * math.sqrt(-2 * math.log(0.5 + 2.0**-53)))).all() and sum(requested) == 16 * 9


def test_uniform_statistics(ops):
    u = ops.random_uniform((32, len(MODULI), 4096), MODULI)
    for i, q in enumerate(MODULI):
        sampler_stats.check_uniform(u[:, i, :], q, what=f"cpu uniform limb {i}")


def test_ternary_statistics(ops):
    sampler_stats.check_ternary(ops.random_ternary((16, 1 << 16)), what="cpu ternary")


@pytest.mark.parametrize("sigma", [3.2, 19.0])
def test_gaussian_statistics(ops, sigma):
    sampler_stats.check_gaussian(ops.random_gaussian((1 << 20,), sigma), sigma, what=f"cpu gaussian sigma {sigma}")


def test_gaussian_rejects_bad_sigma(ops):
    for sigma in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="sigma"):
            ops.random_gaussian((4,), sigma)


# -- the checks themselves ---------------------------------------------------------------------------------


def test_thresholds():
    # exact for two degrees of freedom: P(chi2_2 > t) = exp(-t / 2)
    assert sampler_stats.chi2_threshold(2) == pytest.approx(-2 * math.log(1e-9), rel=1e-9)
    assert sampler_stats.chi2_threshold(1) == sampler_stats.chi2_threshold(2)
    # chi2_63 (64 buckets): the 1e-9 quantile lies between the mean and a generous bound
    assert 63 + 6 * math.sqrt(2 * 63) < sampler_stats.chi2_threshold(63) < 63 + 12 * math.sqrt(2 * 63)
    # Bernstein: sqrt(2 v log(2/p) / n) leading term for small bound
    n, v = 10**6, 1.0
    assert sampler_stats.bernstein(n, v, 1e-9) == pytest.approx(math.sqrt(2 * v * math.log(2e9) / n), rel=1e-6)


def test_pmf_matches_the_parameter():
    for sigma in (3.2, 19.0):
        top, p = sampler_stats.gaussian_pmf(sigma)
        k = np.arange(-top, top + 1)
        assert top == round(6 * sigma) and p.sum() == pytest.approx(1.0)
        # rounding adds about 1/12 to the variance of a Gaussian (Sheppard)
        assert float(np.sum(p * k**2)) == pytest.approx(sigma**2 + 1 / 12, rel=1e-6)


def _words(rng, count):
    return rng.integers(0, 2**64, size=count, dtype=np.uint64, endpoint=False)


def test_checks_reject_biased_samples():
    rng = np.random.default_rng()
    # one 64-bit word mod q with 2^64 = 4 q + r, r ~ 0.4 q: the values below r come 5/4 as often
    q = 4150517416584649137
    assert 2**64 // q == 4
    with pytest.raises(AssertionError, match="chi-square"):
        sampler_stats.check_uniform(_words(rng, 1 << 17) % np.uint64(q), q)
    # a value outside [0, q)
    with pytest.raises(AssertionError, match=">= q"):
        sampler_stats.check_uniform(np.full(8, 17, dtype=np.uint64), 17)
    # low bits: only even values
    with pytest.raises(AssertionError, match="residues"):
        sampler_stats.check_uniform((rng.integers(0, 2**61, size=1 << 17, dtype=np.uint64) * np.uint64(2)), 2**62 - 57)
    # ternary from 4-bit nibbles mod 3: P(-1) = 6/16
    with pytest.raises(AssertionError, match="proportions"):
        sampler_stats.check_ternary(rng.integers(0, 16, size=1 << 20) % 3 - 1)
    # a Gaussian of sigma 3.3 checked as sigma 3.2, and a continuous-then-truncated one (biased toward 0)
    z = rng.normal(0.0, 3.3, size=1 << 20)
    with pytest.raises(AssertionError, match="variance"):
        sampler_stats.check_gaussian(np.rint(z[np.abs(z) <= 6 * 3.2]).astype(np.int64), 3.2)
    # cut below the hard bound (round(6 sigma) = 19) so the shifted samples fail on their mean alone:
    # uncut, one of 2^20 draws lands beyond 19.45 about once in a thousand runs
    z = rng.normal(0.0, 3.2, size=1 << 20)
    z = z[np.abs(z) < 18.5]
    with pytest.raises(AssertionError):
        sampler_stats.check_gaussian(np.trunc(z).astype(np.int64), 3.2)
    with pytest.raises(AssertionError, match="beyond"):
        sampler_stats.check_gaussian(np.array([0, 20, -1]), 3.2)
    with pytest.raises(AssertionError, match="mean"):
        sampler_stats.check_gaussian(np.rint(z + 0.05).astype(np.int64), 3.2)
