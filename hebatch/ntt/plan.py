"""NTT plans: one per (moduli, roots, n, negacyclic, algorithm), cached, carrying lazily built tables.

A plan is what the transforms layer hands a backend: the moduli and their constants, the roots,
the algorithm and its shape, and the host tables. Backends may keep derived data (device copies,
stacked tables) in `plan.cache`, so that it is built once per plan and device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np

from ..field import KIND_GOLDILOCKS, Modulus, modulus_info
from . import tables

ALGORITHMS = ("auto", "radix2", "4step")


@dataclass(frozen=True, eq=False)
class NTTPlan:
    n: int
    moduli: tuple[int, ...]
    roots: tuple[int, ...]  # psi per limb when negacyclic, else w
    negacyclic: bool
    algorithm: str  # "radix2" or "4step" (never "auto")
    n1: int = 0  # 4-step rows (column-transform length); n = n1 * n2
    n2: int = 0
    cache: dict = field(default_factory=dict, repr=False)

    @property
    def log_n(self) -> int:
        return self.n.bit_length() - 1

    @property
    def limbs(self) -> int:
        return len(self.moduli)

    @cached_property
    def infos(self) -> tuple[Modulus, ...]:
        return tuple(modulus_info(q) for q in self.moduli)

    @cached_property
    def cyclic_roots(self) -> tuple[int, ...]:
        """w per limb: psi^2 for negacyclic plans."""
        if self.negacyclic:
            return tuple(r * r % q for r, q in zip(self.roots, self.moduli))
        return self.roots

    @cached_property
    def limb_groups(self) -> tuple[tuple[tuple[int, ...], bool], ...]:
        """Limb indices grouped by reduction kind: ((indices, is_goldilocks), ...)."""
        gold = tuple(i for i, m in enumerate(self.infos) if m.kind == KIND_GOLDILOCKS)
        rest = tuple(i for i, m in enumerate(self.infos) if m.kind != KIND_GOLDILOCKS)
        return tuple((idx, g) for idx, g in ((rest, False), (gold, True)) if idx)

    def radix2_twiddles(self) -> list[tables.Radix2Twiddles]:
        return [tables.radix2_twiddles(q, r, self.n, self.negacyclic) for q, r in zip(self.moduli, self.roots)]

    def fourstep_sub_twiddles(self) -> tuple[list, list]:
        """Cyclic radix-2 tables of the column (length n1, root w^n2) and row (length n2, root w^n1)
        transforms. Their `inv` tables are the forward tables of the inverse roots."""
        cols, rows = [], []
        for q, w in zip(self.moduli, self.cyclic_roots):
            cols.append(tables.radix2_twiddles(q, pow(w, self.n2, q), self.n1, False))
            rows.append(tables.radix2_twiddles(q, pow(w, self.n1, q), self.n2, False))
        return cols, rows

    def fourstep_dense_twiddles(self, limb: int):
        """Full twiddle matrices of limb `limb`: w^(j2 k1) laid out [j2][k1], w^-(j2 k1) laid out
        [k1][j2], and for negacyclic plans psi^j and psi^-j (else None). n entries each."""
        q, w = self.moduli[limb], self.cyclic_roots[limb]
        j2 = np.arange(self.n2, dtype=np.int64)[:, None]
        k1 = np.arange(self.n1, dtype=np.int64)[None, :]
        expo = (j2 * k1) % self.n
        tw = tables.powers(q, w, self.n)[expo]
        itw = tables.powers(q, pow(w, -1, q), self.n)[expo.T]
        pre = post = None
        if self.negacyclic:
            psi = self.roots[limb]
            pre, post = tables.powers(q, psi, self.n), tables.powers(q, pow(psi, -1, q), self.n)
        return tw, itw, pre, post


def default_split(n: int) -> tuple[int, int]:
    """n1 x n2 with n1 <= n2, as square as possible."""
    log_n = n.bit_length() - 1
    n1 = 1 << (log_n // 2)
    return n1, n // n1


@lru_cache(maxsize=256)
def make_plan(n: int, moduli: tuple[int, ...], roots: tuple[int, ...], negacyclic: bool,
              algorithm: str, split: tuple[int, int] | None = None) -> NTTPlan:
    """The cached plan for these (already validated) arguments; `algorithm` is resolved."""
    if algorithm == "4step":
        n1, n2 = split or default_split(n)
        if n1 * n2 != n:
            raise ValueError(f"4-step split {n1} x {n2} does not fit n={n}")
        return NTTPlan(n, moduli, roots, negacyclic, "4step", n1, n2)
    return NTTPlan(n, moduli, roots, negacyclic, "radix2")

