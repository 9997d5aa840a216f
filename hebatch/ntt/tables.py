"""Twiddle tables on the host, built with exact vectorised arithmetic and cached per (modulus, root, n).

Radix-2 layout (shared by the CPU code and the CUDA kernels): stage s of a length-n Cooley-Tukey
transform has m = 2^s butterfly groups; group i multiplies by entry m + i of the table, where
  cyclic (root w):       entry 2^s + i = w   ** (bitrev_s(i)         << (log n - 1 - s))
  negacyclic (root psi): entry 2^s + i = psi ** ((2 bitrev_s(i) + 1) << (log n - 1 - s))
so every stage reads a contiguous slice and the negacyclic psi powers need no extra pass. The
inverse (Gentleman-Sande) table holds the inverses of the same entries. Entry 0 is unused (1).

The GPU's multi-pass merge transforms store the stages of their last pass in another order
(`last_pass_order`): that pass gives its lanes consecutive bit-reversed high indices, and in this order
neighbouring lanes read neighbouring entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..arith import bitrev_indices, modops, power_lookup, powers, with_companions
from ..field import KIND_GOLDILOCKS, modulus_info

U64 = np.uint64


def stage_exponents(log_n: int, negacyclic: bool) -> np.ndarray:
    """The exponent of the root at each radix-2 table entry (entry 0 -> 0)."""
    exps = [np.zeros(1, dtype=np.int64)]
    for s in range(log_n):
        brv = bitrev_indices(s)
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
        ops = modops(q)
        tables = (fwd, ops.shoup(fwd[None])[0], inv, ops.shoup(inv[None])[0])
        n_inv_shoup = info.shoup(n_inv)
    for t in tables:
        if t is not None:
            t.setflags(write=False)
    return Radix2Twiddles(*tables, n_inv, n_inv_shoup, bitrev_indices(log_n))


@dataclass(frozen=True)
class GpuPassTables:
    """Per-limb tables and the scalar parameters of one ntt_pass launch (see kernels/ntt.cu)."""

    sub: np.ndarray | None  # sub-transform (or merge) table with companions
    tw_mode: int = 0  # 0: no multiplication at the store; 1: zeta^E from one table; 2: from two
    z_high: np.ndarray | None = None
    z_low: np.ndarray | None = None
    z_bits: int = 0
    z_mask: int = 0
    exponent: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)  # c_p, alpha, beta, gamma, delta
    post_mode: int = 0  # last pass of an inverse: 1: post[k] (or post[0]); 2: two tables over the output index
    post_high: np.ndarray | None = None
    post_low: np.ndarray | None = None
    post_bits: int = 0
    post_mask: int = 0
    post_by_output: int = 0  # post table indexed by the output position (merge) or the sub-output k (4-step)


def _post_tables(q, n, word_bits, scale_root, log_count, index_mask, single_max_log=None):
    """post factor n^-1 * scale_root^J; mode 1 (one table, J & index_mask) or 2 (two tables)."""
    n_inv = pow(n, -1, q)
    if scale_root is None:  # cyclic: n^-1 for every J
        one = np.array([n_inv], dtype=U64)
        return dict(
            post_mode=1,
            post_low=with_companions(q, one, word_bits),
            post_mask=0,
            post_high=with_companions(q, np.array([1], dtype=U64), word_bits),
        )
    high, low, bits = power_lookup(q, scale_root, log_count, scale=n_inv, single_max_log=single_max_log)
    two = len(high) > 1
    return dict(
        post_mode=2 if two else 1,
        post_high=with_companions(q, high, word_bits),
        post_low=with_companions(q, low, word_bits),
        post_bits=bits,
        post_mask=(1 << bits) - 1 if two else index_mask,
    )


def gpu_fourstep_tables(
    q: int, root: int, n: int, negacyclic: bool, inverse: bool, digits: tuple[int, ...], word_bits: int
) -> list[GpuPassTables]:
    """Tables of the 4-step passes for one limb. root: psi (negacyclic) or w, as in the plan."""
    log_n = n.bit_length() - 1
    w = root * root % q if negacyclic else root
    if inverse:
        w, root = pow(w, -1, q), pow(root, -1, q)
    zeta, log_z = (root, log_n + 1) if negacyclic else (w, log_n)
    out = []
    c_p = 1  # product of the earlier digits' sizes
    for index, d in enumerate(digits):
        n_p = 1 << d
        last = index == len(digits) - 1
        if negacyclic and not inverse and index == 0:  # psi^(j1 N1) folded into the first sub-transform
            sub = radix2_twiddles(q, pow(root, n // n_p, q), n_p, True).fwd
        else:
            sub = radix2_twiddles(q, pow(w, n // n_p, q), n_p, False).fwd
        fields = dict(sub=with_companions(q, sub, word_bits))
        if not last:
            high, low, bits = power_lookup(q, zeta, log_z)
            if not negacyclic:
                exponent = (c_p, 1, 0, 1, 0)
            elif inverse:
                exponent = (c_p, 1, 0, 2, 1)
            elif index == 0:
                exponent = (1, 2, 1, 1, 0)
            else:
                exponent = (2 * c_p, 1, 0, 1, 0)
            fields.update(
                tw_mode=2 if len(high) > 1 else 1,
                z_high=with_companions(q, high, word_bits),
                z_low=with_companions(q, low, word_bits),
                z_bits=bits,
                z_mask=(1 << log_z) - 1,
                exponent=exponent,
            )
        elif inverse:  # n^-1, and psi^-(c_P k) for negacyclic transforms
            fields.update(_post_tables(q, n, word_bits, pow(root, c_p, q) if negacyclic else None, d, n_p - 1))
        out.append(GpuPassTables(**fields))
        c_p *= n_p
    return out


def last_pass_order(log_n: int, bits: int) -> np.ndarray:
    """Entry of the radix-2 table held at each position of a merge table whose last pass covers the stages
    from `bits` on: group i = o 2^(s - bits) + r (o < 2^bits) of stage s >= bits sits at position
    2^s + r 2^bits + bitrev_bits(o), since that pass's lanes are consecutive values of bitrev_bits(o)
    (kernels/ntt.cu, LANES_BITREV_ORDERED). Earlier stages, and every stage when bits = 0, keep their order."""
    order = np.arange(1 << log_n, dtype=np.int64)
    if bits == 0:
        return order
    brv = bitrev_indices(bits)
    for s in range(bits, log_n):
        pos = np.arange(1 << s, dtype=np.int64)
        order[(1 << s) + pos] = (1 << s) + ((brv[pos & ((1 << bits) - 1)] << (s - bits)) | (pos >> bits))
    return order


def merge_table_spec(q: int, root: int, n: int, negacyclic: bool, inverse: bool) -> tuple[int, bool]:
    """(table root, negacyclic form) of the shared table of merge passes: the forward transform's own
    table; the inverse runs the cyclic transform with w^-1 (w = psi^2 when negacyclic)."""
    if not inverse:
        return root, negacyclic
    w = root * root % q if negacyclic else root
    return pow(w, -1, q), False


def merge_table(
    q: int, root: int, n: int, negacyclic: bool, inverse: bool, word_bits: int, last_bits: int = 0
) -> np.ndarray:
    """The shared table of merge passes with companions, (n, 2), its stages from `last_bits` on in the last
    pass's order (last_pass_order; 0: natural), built here (the GPU backend builds large ones on the
    device, entry for entry the same). Entry 0, no stage's, holds the ratio of a stage's entries of odd groups
    2k + 1 to those of groups 2k, one constant for every stage from stage 1 on: the last pass multiplies by it
    instead of reading half of the last two stages (kernels/ntt.cu, PAIRED)."""
    table_root, form = merge_table_spec(q, root, n, negacyclic, inverse)
    natural = radix2_twiddles(q, table_root, n, form).fwd
    table = natural[last_pass_order(n.bit_length() - 1, last_bits)]
    if n >= 4:  # from the last stage's groups 1 and 0 (natural order: entries n/2 + 1 and n/2)
        table[0] = int(natural[n // 2 + 1]) * pow(int(natural[n // 2]), -1, q) % q
    return with_companions(q, table, word_bits)


def gpu_merge_tables(
    q: int,
    root: int,
    n: int,
    negacyclic: bool,
    inverse: bool,
    word_bits: int,
    with_sub: bool = True,
    last_bits: int = 0,
    post_one_table: bool = False,
) -> GpuPassTables:
    """Merge (radix-2) passes share the full table (merge_table, in the order of a last pass from stage
    `last_bits` on; None when not with_sub: the caller builds it); the inverse multiplies output j by n^-1
    (psi^-j n^-1 when negacyclic) in the last pass, from one table of n entries where post_one_table, else
    (above 2^SINGLE_LEVEL_MAX_LOG points) as the product of two."""
    sub = merge_table(q, root, n, negacyclic, inverse, word_bits, last_bits) if with_sub else None
    if not inverse:
        return GpuPassTables(sub=sub)
    post = _post_tables(
        q,
        n,
        word_bits,
        pow(root, -1, q) if negacyclic else None,
        n.bit_length() - 1,
        n - 1,
        n.bit_length() - 1 if post_one_table else None,
    )
    return GpuPassTables(sub=sub, post_by_output=1, **post)
