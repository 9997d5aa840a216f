"""Twiddle tables on the host, built with exact vectorised arithmetic and cached per (modulus, root, n).

Radix-2 layout (shared by the CPU code and the CUDA kernels): stage s of a length-n Cooley-Tukey
transform has m = 2^s butterfly groups; group i multiplies by entry m + i of the table, where
  cyclic (root w):       entry 2^s + i = w   ** (bitrev_s(i)         << (log n - 1 - s))
  negacyclic (root psi): entry 2^s + i = psi ** ((2 bitrev_s(i) + 1) << (log n - 1 - s))
so every stage reads a contiguous slice and the negacyclic psi powers need no extra pass. The
inverse (Gentleman-Sande) table holds the inverses of the same entries. Entry 0 is unused (1).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..backend.numpy_arith import ModOps
from ..field import KIND_GOLDILOCKS, modulus_info

U64 = np.uint64


@lru_cache(maxsize=32)
def bitrev_permutation(log_n: int) -> np.ndarray:
    """perm[i] = i with its low log_n bits reversed (int64 indices)."""
    perm = np.zeros(1, dtype=np.int64)
    for _ in range(log_n):
        perm = np.concatenate([perm * 2, perm * 2 + 1])
    perm.setflags(write=False)
    return perm


def _ops(q: int) -> ModOps:
    return ModOps((modulus_info(q),), depth=1)


@lru_cache(maxsize=128)
def powers(q: int, root: int, count: int) -> np.ndarray:
    """root ** e mod q for e = 0 .. count-1 (1-D, read-only)."""
    table = _ops(q).powers([root], count)[0]
    table.setflags(write=False)
    return table


def stage_exponents(log_n: int, negacyclic: bool) -> np.ndarray:
    """The exponent of the root at each radix-2 table entry (entry 0 -> 0)."""
    exps = [np.zeros(1, dtype=np.int64)]
    for s in range(log_n):
        brv = bitrev_permutation(s)
        e = 2 * brv + 1 if negacyclic else brv
        exps.append(e << (log_n - 1 - s))
    return np.concatenate(exps)


@dataclass(frozen=True)
class Radix2Twiddles:
    """Tables for one modulus: forward, inverse, their Shoup companions (None for Goldilocks),
    n^-1 with its companion, and the bit-reversal permutation of length n."""

    fwd: np.ndarray
    fwd_shoup: np.ndarray | None
    inv: np.ndarray
    inv_shoup: np.ndarray | None
    n_inv: int
    n_inv_shoup: int | None
    perm: np.ndarray


@lru_cache(maxsize=256)
def radix2_twiddles(q: int, root: int, n: int, negacyclic: bool) -> Radix2Twiddles:
    log_n = n.bit_length() - 1
    exps = stage_exponents(log_n, negacyclic)
    count = n if negacyclic else max(n // 2, 1)
    fwd = powers(q, root, count)[exps]
    inv = powers(q, pow(root, -1, q), count)[exps]
    info = modulus_info(q)
    n_inv = pow(n, -1, q)
    if info.kind == KIND_GOLDILOCKS:
        tables = (fwd, None, inv, None)
        n_inv_shoup = None
    else:
        ops = _ops(q)
        tables = (fwd, ops.shoup(fwd[None])[0], inv, ops.shoup(inv[None])[0])
        n_inv_shoup = info.shoup(n_inv)
    for t in tables:
        if t is not None:
            t.setflags(write=False)
    return Radix2Twiddles(*tables, n_inv, n_inv_shoup, bitrev_permutation(log_n))


def shoup_or_none(q: int, table: np.ndarray) -> np.ndarray | None:
    """Shoup companions of a 1-D table of residues, or None where the modulus has no Shoup form."""
    if modulus_info(q).kind == KIND_GOLDILOCKS:
        return None
    return _ops(q).shoup(table[None])[0]
