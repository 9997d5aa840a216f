"""NTT plans: one per (moduli, roots, n, negacyclic, algorithm), cached, carrying lazily built tables.

A plan is what the transforms layer hands a backend: the moduli and their constants, the roots,
the algorithm and its shape, the host tables and the GPU launch plan. The CPU backend keeps derived
host data (stacked tables) in `plan.cache`, so that it is built once per plan; the GPU backend keeps
its device tables in the backend's one table cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np

import hebatch.arith as arith
import hebatch.ntt.launch as launch
import hebatch.ntt.recipes as recipes
import hebatch.ntt.tables as tables

from ..backend import TABLE_MODES, arith_name
from ..field import KIND_GOLDILOCKS, Modulus, modulus_info

ALGORITHMS = ("auto", "radix2", "4step")


@dataclass(frozen=True, eq=False)
class NTTPlan:
    n: int
    moduli: tuple[int, ...]
    roots: tuple[int, ...]  # psi per limb when negacyclic, else w
    negacyclic: bool
    algorithm: str  # "radix2" or "4step" (never "auto")
    # GPU passes of 2^a and 2^b points for a split (2^a, 2^b) (4-step: n1 x n2; merge: the stages cut in two);
    # None: each backend's recipe
    split: tuple[int, int] | None = None
    radix_log: int | None = None  # log2 elements per thread of the GPU passes; None: the recipe's RADIX_LOG
    # GPU multi-pass merge: the last pass reads its twiddles in its lanes' order (recipes.ordered_last_pass)
    ordered_last: bool = False
    # GPU merge inverse: the post factor from one table of n entries (recipes.post_one_table)
    post_one_table: bool = False
    # log2 columns per block of GPU multi-pass transforms; None: the recipe's (recipes.few_blocks_lanes)
    lanes_log: int | None = None
    # GPU merge with ordered_last: the last two stages read their even groups' entries only (recipes.paired_last_stage)
    paired_last: bool = False
    cache: dict = field(default_factory=dict, repr=False)

    @property
    def log_n(self) -> int:
        return self.n.bit_length() - 1

    @property
    def n1(self) -> int:
        """4-step column-transform length (CPU 4-step): the given split, else the squarest."""
        return (self.split or default_split(self.n))[0]

    @property
    def n2(self) -> int:
        return self.n // self.n1

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

    def gpu_passes(self, word_bytes: int) -> tuple[recipes.Pass, ...]:
        digits = None
        if self.split is not None and 1 < self.split[0] < self.n:
            digits = (self.split[0].bit_length() - 1, self.split[1].bit_length() - 1)
        return recipes.gpu_passes(self.algorithm, self.log_n, word_bytes, digits, self.radix_log, self.lanes_log)

    def gpu_pass_modes(self, inverse: bool, word_bits: int) -> list[tuple[int, int]]:
        """(store-twiddle mode, post mode) of each GPU pass, as gpu_pass_tables builds them, without
        building tables (values of TABLE_MODES: none, one lookup table, two)."""
        digits = [p.log_np for p in self.gpu_passes(word_bits // 8)]
        fourstep = self.algorithm == "4step" and len(digits) > 1
        modes = []
        for index, d in enumerate(digits):
            last = index == len(digits) - 1
            tw = TABLE_MODES["none"]
            if fourstep and not last:
                two = self.log_n + self.negacyclic > arith.SINGLE_LEVEL_MAX_LOG
                tw = TABLE_MODES["two" if two else "one"]
            post = TABLE_MODES["none"]
            if inverse and last:
                span = d if fourstep else self.log_n
                two = span > arith.SINGLE_LEVEL_MAX_LOG and not self.post_one_table
                post = TABLE_MODES["two" if self.negacyclic and two else "one"]
            modes.append((tw, post))
        return modes

    def gpu_launches(
        self,
        idx: tuple[int, ...],
        pass_tables: list[dict],
        rows: int,
        word_bits: int,
        fuse: bool = False,
        l2_bytes: int = 0,
    ) -> list[launch.Launch]:
        """The finished GPU launch plan of one transform of `rows` rows of limbs `idx` on a GPU with `l2_bytes` of
        L2 cache (see launch.py)."""
        arith = arith_name([self.moduli[i] for i in idx], word_bits)
        return launch.transform_launches(self, pass_tables, rows, word_bits, arith, fuse, len(idx), l2_bytes)

    def gpu_pass_tables(
        self, idx: tuple[int, ...], inverse: bool, word_bits: int, merge_sub: bool = True
    ) -> list[dict]:
        """Per pass: the scalar parameters and the tables of limbs `idx`, stacked (limbs, size, 2).
        merge_sub=False leaves the shared table of merge passes out ("sub" None, see `merge_specs`)."""
        digits = tuple(p.log_np for p in self.gpu_passes(word_bits // 8))
        per_limb = []
        for i in idx:
            q, root = self.moduli[i], self.roots[i]
            if self.algorithm == "radix2" or len(digits) == 1:
                merge = tables.gpu_merge_tables(
                    q,
                    root,
                    self.n,
                    self.negacyclic,
                    inverse,
                    word_bits,
                    merge_sub,
                    self.merge_last_bits(word_bits),
                    self.post_one_table,
                )
                per_limb.append([merge] * len(digits))
            else:
                per_limb.append(
                    tables.gpu_fourstep_tables(q, root, self.n, self.negacyclic, inverse, digits, word_bits)
                )
        passes = []
        for index in range(len(digits)):
            first = per_limb[0][index]
            entry = {}
            for field_name in tables.GpuPassTables.__dataclass_fields__:
                value = getattr(first, field_name)
                if isinstance(value, np.ndarray):
                    value = np.stack([getattr(limb[index], field_name) for limb in per_limb])
                entry[field_name] = value
            if len(digits) > 1 and self.algorithm == "radix2" and index < len(digits) - 1:
                entry.update(post_mode=TABLE_MODES["none"], post_high=None, post_low=None)  # only the last pass scales
            passes.append(entry)
        return passes

    def merge_last_bits(self, word_bits: int) -> int:
        """The first stage of the last GPU pass of a multi-pass merge transform whose table stores the stages
        from there on in that pass's order (ordered_last, tables.last_pass_order); 0 for other plans."""
        passes = self.gpu_passes(word_bits // 8)
        return passes[-1].s0 if self.ordered_last and self.algorithm == "radix2" and len(passes) > 1 else 0

    def merge_specs(self, idx: tuple[int, ...], inverse: bool) -> list[tuple[int, int, bool]]:
        """Per limb of `idx`: (modulus, table root, negacyclic form) of the shared table of merge passes."""
        return [
            (self.moduli[i],) + tables.merge_table_spec(self.moduli[i], self.roots[i], self.n, self.negacyclic, inverse)
            for i in idx
        ]

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
def make_plan(
    n: int,
    moduli: tuple[int, ...],
    roots: tuple[int, ...],
    negacyclic: bool,
    algorithm: str,
    split: tuple[int, int] | None = None,
    radix_log: int | None = None,
    ordered_last: bool = False,
    post_one_table: bool = False,
    lanes_log: int | None = None,
    paired_last: bool = False,
) -> NTTPlan:
    """The cached plan for these (already validated) arguments; `algorithm` is resolved."""
    if split is not None and split[0] * split[1] != n:
        raise ValueError(f"split {split} needs n1 * n2 = n = {n}")
    if radix_log is not None and not 1 <= radix_log <= recipes.RADIX_LOG:
        raise ValueError(f"radix_log must be in 1..{recipes.RADIX_LOG}, got {radix_log}")
    if post_one_table and not (algorithm == "radix2" and n <= 1 << recipes.POST_ONE_TABLE_MAX_LOG):
        raise ValueError(f"post_one_table needs a merge transform of at most 2^{recipes.POST_ONE_TABLE_MAX_LOG} points")
    if lanes_log is not None and not 0 <= lanes_log <= recipes.MULTI_PASS_LANES_LOG:
        raise ValueError(f"lanes_log must be in 0..{recipes.MULTI_PASS_LANES_LOG}, got {lanes_log}")
    if paired_last and not (ordered_last and algorithm == "radix2"):
        raise ValueError("paired_last needs a merge transform with ordered_last")
    return NTTPlan(
        n, moduli, roots, negacyclic, algorithm, split, radix_log, ordered_last, post_one_table, lanes_log, paired_last
    )
