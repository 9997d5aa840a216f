"""Statistical checks of the samplers (uniform residues, ternary values, rounded Gaussians), shared by the
CPU, host-build and GPU tests.

Every threshold is set so that a correct sampler fails a check with probability at most about 1e-9, from
bounds that need no tuning to the sample: Pearson's chi-square against the exact chi-square tail
(closed form for an even number of degrees of freedom; an odd one uses the next even one, which is
larger), with expected counts of thousands per bucket; means by Bernstein's inequality, which holds
for any number of bounded samples. Each check raises AssertionError naming what failed.
"""

from __future__ import annotations

import math

import numpy as np

P_FAIL = 1e-9


def chi2_threshold(dof: int, p: float = P_FAIL) -> float:
    """t with P(chi-square(dof) > t) <= p."""
    k = dof + dof % 2  # chi-square(k) dominates chi-square(k - 1)

    def tail(t):  # exact for even k: e^(-t/2) sum_{i < k/2} (t/2)^i / i!
        term, total = 1.0, 1.0
        for i in range(1, k // 2):
            term *= t / 2 / i
            total += term
        return math.exp(-t / 2) * total

    lo, hi = 0.0, 2.0 * k + 200.0
    while tail(hi) > p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if tail(mid) > p else (lo, mid)
    return hi


def bernstein(n: int, variance: float, bound: float, p: float = P_FAIL) -> float:
    """t with P(|mean of n iid samples - expectation| >= t) <= p, for samples within `bound` of their
    expectation and of the given variance: 2 exp(-n t^2 / (2 (variance + bound t / 3))) = p."""
    log = math.log(2 / p)
    a = 2 * log * bound / 3
    return (a + math.sqrt(a * a + 8 * n * log * variance)) / (2 * n)


def chi_square(observed, expected) -> float:
    observed = np.asarray(observed, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    return float(np.sum((observed - expected) ** 2 / expected))


def _check_chi(observed, expected, what):
    stat, limit = chi_square(observed, expected), chi2_threshold(len(expected) - 1)
    assert stat <= limit, f"{what}: chi-square {stat:.1f} over {len(expected) - 1} degrees of freedom > {limit:.1f}"


def check_uniform(values, q: int, what: str = "uniform", buckets: int = 64):
    """values: uint64 samples that must be uniform on [0, q). Chi-square over `buckets` intervals of equal
    width (every value its own bucket for q <= 4 buckets) and over the residues mod `buckets` (low bits)."""
    values = np.asarray(values, dtype=np.uint64).ravel()
    n, q = values.size, int(q)
    assert values.size and int(values.max()) < q, f"{what}: a value >= q = {q}"
    if q <= 4 * buckets:
        _check_chi(np.bincount(values.astype(np.int64), minlength=q), np.full(q, n / q), f"{what} mod {q}: values")
        return
    width = -(-q // buckets)
    count = -(-q // width)
    sizes = np.array([min(width, q - b * width) for b in range(count)], dtype=np.float64)
    high = np.bincount((values // np.uint64(width)).astype(np.int64), minlength=count)
    _check_chi(high, n * sizes / q, f"{what} mod {q}: intervals of width {width}")
    per, extra = divmod(q, buckets)
    sizes = np.array([per + (r < extra) for r in range(buckets)], dtype=np.float64)
    low = np.bincount((values % np.uint64(buckets)).astype(np.int64), minlength=buckets)
    _check_chi(low, n * sizes / q, f"{what} mod {q}: residues mod {buckets}")


def check_ternary(values, what: str = "ternary"):
    """values: int64 samples that must be uniform on {-1, 0, 1}: proportions (chi-square) and the mean."""
    values = np.asarray(values).ravel()
    n = values.size
    assert set(np.unique(values).tolist()) <= {-1, 0, 1}, f"{what}: values outside {{-1, 0, 1}}"
    counts = np.bincount(values + 1, minlength=3)
    _check_chi(counts, np.full(3, n / 3), f"{what}: proportions {counts / n}")
    mean, limit = float(np.mean(values)), bernstein(n, 2 / 3, 1.0)
    assert abs(mean) <= limit, f"{what}: mean {mean:.3g}, allowed +-{limit:.3g}"


def gaussian_pmf(sigma: float) -> tuple[int, np.ndarray]:
    """(K, p): the rounded Gaussian of the samplers, z ~ N(0, sigma^2) conditioned on |z| <= 6 sigma and
    rounded to the nearest integer; p[k + K] = P(e = k) for |k| <= K = round(6 sigma)."""
    cut = 6.0 * sigma
    top = round(cut)

    def cdf(x):
        return 0.5 * (1 + math.erf(x / (sigma * math.sqrt(2))))

    p = np.array([cdf(min(k + 0.5, cut)) - cdf(max(k - 0.5, -cut)) for k in range(-top, top + 1)])
    return top, p / p.sum()


def check_gaussian(values, sigma: float, what: str = "gaussian"):
    """values: int64 samples of the rounded Gaussian with parameter sigma: the largest |e| (a hard bound),
    the mean and the variance against the exact distribution (Bernstein), and its shape (chi-square)."""
    values = np.asarray(values).ravel().astype(np.int64)
    n = values.size
    top, p = gaussian_pmf(sigma)
    k = np.arange(-top, top + 1, dtype=np.float64)
    assert int(np.abs(values).max()) <= top, f"{what}: |e| = {int(np.abs(values).max())} beyond round(6 sigma) = {top}"
    variance = float(np.sum(p * k**2))
    fourth = float(np.sum(p * k**4))
    mean, limit = float(np.mean(values)), bernstein(n, variance, top)
    assert abs(mean) <= limit, f"{what}: mean {mean:.4g}, allowed +-{limit:.3g}"
    second = float(np.mean(values.astype(np.float64) ** 2))
    limit = bernstein(n, fourth - variance**2, top * top)
    assert abs(second - variance) <= limit, (
        f"{what}: variance {second:.4f}, expected {variance:.4f} for sigma {sigma} (allowed +-{limit:.3g})"
    )
    # shape: every value its own bin, the tails beyond +-c merged so each bin expects at least 1000
    c = top
    while c > 1 and n * float(p[: top - c + 1].sum()) < 1000:
        c -= 1
    observed = np.bincount(np.clip(values, -c, c) + c, minlength=2 * c + 1)
    expected = n * np.concatenate([[p[: top - c + 1].sum()], p[top - c + 1 : top + c], [p[top + c :].sum()]])
    _check_chi(observed, expected, f"{what}: shape")
