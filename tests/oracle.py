"""Exact Python-int references for the transforms (independent of hebatch's own code paths)."""

from __future__ import annotations

import random

import numpy as np


def generator(q: int) -> int:
    """Smallest generator of Z_q^*, by trial division of q - 1 (independent of hebatch.field)."""
    m, factors, p = q - 1, set(), 2
    while p * p <= m:
        while m % p == 0:
            factors.add(p)
            m //= p
        p += 1
    if m > 1:
        factors.add(m)
    return next(g for g in range(2, q) if all(pow(g, (q - 1) // f, q) != 1 for f in factors))


def naive_ntt(x, q: int, root: int, negacyclic: bool) -> list[int]:
    """Direct O(n^2) evaluation of the contract's definition."""
    n = len(x)
    xs = [int(v) for v in x]
    if negacyclic:
        return [sum(v * pow(root, j * (2 * k + 1), q) for j, v in enumerate(xs)) % q for k in range(n)]
    return [sum(v * pow(root, j * k, q) for j, v in enumerate(xs)) % q for k in range(n)]


def evaluate(x, q: int, point: int) -> int:
    """x(point) mod q by Horner's rule."""
    acc = 0
    for v in reversed([int(c) for c in x]):
        acc = (acc * point + v) % q
    return acc


def spot_check_ntt(x, y, q: int, root: int, negacyclic: bool, points: int = 6, rng=random) -> None:
    """Assert y = NTT(x) at `points` random indices k (plus k = 0 and k = n - 1)."""
    n = len(x)
    ks = {0, n - 1} | {rng.randrange(n) for _ in range(points)}
    for k in ks:
        point = pow(root, 2 * k + 1, q) if negacyclic else pow(root, k, q)
        assert int(y[k]) == evaluate(x, q, point), f"NTT mismatch at k={k} (n={n}, q={q})"


def convolve(a, b, q: int, negacyclic: bool) -> list[int]:
    """Exact product in Z_q[x]/(x^n -+ 1) by Kronecker substitution into one big Python int."""
    n = len(a)
    slot = (2 * q.bit_length() + n.bit_length()) // 8 + 2  # bytes per coefficient: no carries

    def pack(v):
        return int.from_bytes(b"".join(int(c).to_bytes(slot, "little") for c in v), "little")

    raw = (pack(a) * pack(b)).to_bytes(slot * 2 * n, "little")
    full = [int.from_bytes(raw[i * slot : (i + 1) * slot], "little") for i in range(2 * n - 1)]
    out = full[:n]
    for i in range(n, 2 * n - 1):
        out[i - n] += -full[i] if negacyclic else full[i]
    return [v % q for v in out]


def random_residues(rng: np.random.Generator, q: int, shape, dtype=np.uint64) -> np.ndarray:
    """Uniform residues mod q (q up to 2^64) of the given shape and dtype."""
    if q <= 2**63:
        return rng.integers(0, q, size=shape, dtype=np.uint64).astype(dtype)
    hi = rng.integers(0, 2**32, size=shape, dtype=np.uint64)
    lo = rng.integers(0, 2**32, size=shape, dtype=np.uint64)
    v = (hi << np.uint64(32)) | lo
    return np.where(v >= np.uint64(q), v - np.uint64(q), v).astype(dtype)
