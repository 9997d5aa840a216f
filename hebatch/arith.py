"""Exact host arithmetic on uint64 NumPy arrays: the one home of the modular helpers, bit
reversal, power tables and Shoup companions that the transform plans and both backends use.

No floats and no Python-object arrays: 64x64 -> 128-bit products are assembled from 32-bit
halves, reductions follow the same algorithms as the CUDA kernels (Barrett after Shivdikar et al.
for q < 2^62, Shoup for multiplication by precomputed constants, shift-and-add for Goldilocks).
NumPy's shifts by >= 64 bits give 0, which the 128-bit helpers rely on (checked in the tests).

A `ModOps` holds the constants of L moduli, shaped (L, 1, ..., 1) so that they broadcast against
arrays whose limb axis sits `depth` axes before the end.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .field import KIND_GOLDILOCKS, Modulus, modulus_info

U64 = np.uint64
_MASK32 = U64(0xFFFFFFFF)
_EPS = U64(0xFFFFFFFF)  # 2^64 mod Goldilocks = 2^32 - 1


def mul_wide(a, b):
    """(hi, lo) of the exact 128-bit products a * b of uint64 arrays."""
    a0, a1 = a & _MASK32, a >> U64(32)
    b0, b1 = b & _MASK32, b >> U64(32)
    p00, p01, p10 = a0 * b0, a0 * b1, a1 * b0
    mid = (p00 >> U64(32)) + (p01 & _MASK32) + (p10 & _MASK32)
    hi = a1 * b1 + (p01 >> U64(32)) + (p10 >> U64(32)) + (mid >> U64(32))
    return hi, a * b


def mul_hi(a, b):
    """High 64 bits of the 128-bit products a * b."""
    return mul_wide(a, b)[0]


def shr128(hi, lo, s):
    """Low 64 bits of (hi:lo) >> s for 0 <= s <= 127 (s may be an array)."""
    s = np.asarray(s, dtype=U64)
    small = (lo >> s) | (hi << (U64(64) - np.minimum(s, U64(64))))
    big = hi >> (np.maximum(s, U64(64)) - U64(64))
    return np.where(s < U64(64), small, big)


def goldilocks_reduce(hi, lo):
    """(hi:lo) mod 2^64 - 2^32 + 1, using 2^64 = 2^32 - 1 and 2^96 = -1 (mod p)."""
    p = U64(2**64 - 2**32 + 1)
    hh, hl = hi >> U64(32), hi & _MASK32
    t0 = lo - hh
    t0 = np.where(lo < hh, t0 - _EPS, t0)  # borrow: the wrapped value is 2^64 too big
    t1 = (hl << U64(32)) - hl
    r = t0 + t1
    r = np.where(r < t1, r + _EPS, r)  # carry: the wrapped value is 2^64 too small
    return np.where(r >= p, r - p, r)


class ModOps:
    """Modular arithmetic for L moduli of one kind, broadcast over a limb axis."""

    def __init__(self, moduli: tuple[Modulus, ...], depth: int = 1):
        kinds = {m.kind == KIND_GOLDILOCKS for m in moduli}
        if len(kinds) != 1:
            raise ValueError("ModOps needs moduli of one kind: Goldilocks and Barrett moduli apart")
        self.moduli = tuple(moduli)
        self.goldilocks = kinds.pop()
        self.depth = depth
        shape = (len(moduli),) + (1,) * depth

        def column(values):
            return np.array(values, dtype=U64).reshape(shape)

        self.q = column([m.q for m in moduli])
        if not self.goldilocks:
            self.mu = column([m.barrett_mu for m in moduli])
            self.shift_in = column([m.barrett_shift_in for m in moduli])
            self.shift_out = column([m.barrett_shift_out for m in moduli])
            # 2^64 = A q + B, used for Shoup companions: floor(w 2^64 / q) = w A + floor(w B / q)
            self.two64_quot = column([2**64 // m.q for m in moduli])
            self.two64_rem = column([2**64 % m.q for m in moduli])

    def at_depth(self, depth: int) -> ModOps:
        return self if depth == self.depth else ModOps(self.moduli, depth)

    # -- additive ----------------------------------------------------------------------------
    def add(self, a, b):
        s = a + b
        if self.goldilocks:  # a + b can pass 2^64: the wrapped sum minus q is still right
            return np.where((s < a) | (s >= self.q), s - self.q, s)
        return np.where(s >= self.q, s - self.q, s)

    def sub(self, a, b):
        d = a - b
        return np.where(a < b, d + self.q, d)

    def neg(self, a):
        return np.where(a == U64(0), a, self.q - a)

    # -- multiplicative ----------------------------------------------------------------------
    def _barrett_divmod(self, hi, lo):
        """floor(x / q) and x mod q for x = hi:lo < q^2 (one correction, per the seed 004 bound)."""
        c = shr128(hi, lo, self.shift_in)
        ph, pl = mul_wide(c, self.mu)
        quot = shr128(ph, pl, self.shift_out)
        rem = lo - quot * self.q
        over = rem >= self.q
        return np.where(over, quot + U64(1), quot), np.where(over, rem - self.q, rem)

    def reduce_wide(self, hi, lo):
        if self.goldilocks:
            return goldilocks_reduce(hi, lo)
        return self._barrett_divmod(hi, lo)[1]

    def mul(self, a, b):
        """a * b mod q for arrays of residues (both operands vary)."""
        return self.reduce_wide(*mul_wide(a, b))

    def shoup(self, w):
        """Shoup companions floor(w * 2^64 / q) of residues w (Barrett moduli only)."""
        if self.goldilocks:
            raise ValueError("Shoup multiplication needs q < 2^63; Goldilocks uses its own reduction")
        quot, _ = self._barrett_divmod(*mul_wide(w, self.two64_rem))
        return w * self.two64_quot + quot

    def mul_shoup(self, a, w, w_shoup):
        """a * w mod q for a fixed multiplier w with companion w_shoup (plain product for Goldilocks)."""
        if self.goldilocks:
            return self.mul(a, w)
        r = a * w - mul_hi(a, w_shoup) * self.q
        return np.where(r >= self.q, r - self.q, r)

    def powers(self, roots, count: int):
        """(len(roots), count) table of roots[r] ** e, e = 0 .. count-1, built by doubling.

        roots: one per limb, or any number of bases when there is a single modulus."""
        step = np.asarray(roots, dtype=U64).reshape(-1, 1)  # roots ** filled
        out = np.empty((step.shape[0], count), dtype=U64)
        out[:, 0] = 1
        ops = self.at_depth(1)
        filled = 1
        while filled < count:
            k = min(filled, count - filled)
            out[:, filled : filled + k] = ops.mul(out[:, :k], step)
            step = ops.mul(step, step)
            filled += k
        return out


@lru_cache(maxsize=32)
def bitrev_indices(log_n: int) -> np.ndarray:
    """i with its low log_n bits reversed, for i < 2^log_n (int64, read-only)."""
    perm = np.zeros(1, dtype=np.int64)
    for _ in range(log_n):
        perm = np.concatenate([perm * 2, perm * 2 + 1])
    perm.setflags(write=False)
    return perm


# ---------------------------------------------------------------------------------------------
# Tables of one modulus: powers, Shoup companions, two-level power lookups.
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def modops(q: int) -> ModOps:
    """The ModOps of one modulus q (limb axis of depth 1)."""
    return ModOps((modulus_info(q),), depth=1)


@lru_cache(maxsize=128)
def powers(q: int, root: int, count: int) -> np.ndarray:
    """root ** e mod q for e = 0 .. count-1 (1-D, read-only)."""
    table = modops(q).powers([root], count)[0]
    table.setflags(write=False)
    return table


def shoup_or_none(q: int, table: np.ndarray) -> np.ndarray | None:
    """Shoup companions of a 1-D table of residues, or None where the modulus has no Shoup form."""
    if modulus_info(q).kind == KIND_GOLDILOCKS:
        return None
    return modops(q).shoup(table[None])[0]


# ---------------------------------------------------------------------------------------------
# GPU tables: twiddles paired with their Shoup companions, one (size, 2) array per limb.
# ---------------------------------------------------------------------------------------------

SINGLE_LEVEL_MAX_LOG = 16  # zeta^E tables up to 2^16 entries; above, zeta^E = high[E >> b] * low[E & mask]


def with_companions(q: int, table: np.ndarray, word_bits: int) -> np.ndarray:
    """(size, 2) array of (w, floor(w * 2^word_bits / q)); Goldilocks has no companion (0)."""
    out = np.zeros((len(table), 2), dtype=np.uint64)
    out[:, 0] = table
    if word_bits == 32:
        out[:, 1] = (table.astype(np.uint64) << np.uint64(32)) // np.uint64(q)
    else:
        comp = shoup_or_none(q, table)
        if comp is not None:
            out[:, 1] = comp
    return out.astype(np.uint32) if word_bits == 32 else out


def power_lookup(q: int, zeta: int, log_count: int, scale: int = 1, single_max_log: int | None = None):
    """Tables for zeta^E * scale, E < 2^log_count: (high, low, bits) with zeta^E * scale =
    high[E >> bits] * low[E & (2^bits - 1)], or low[E] alone (high = [1]) up to 2^single_max_log entries
    (None: SINGLE_LEVEL_MAX_LOG)."""
    single = SINGLE_LEVEL_MAX_LOG if single_max_log is None else single_max_log
    bits = log_count if log_count <= single else (log_count + 1) // 2
    low = powers(q, zeta, 1 << bits)
    high = powers(q, pow(zeta, 1 << bits, q), 1 << (log_count - bits))
    if scale != 1:
        target = low if len(high) == 1 else high
        scaled = modops(q).mul(target[None].copy(), np.array([[scale]], dtype=U64))[0]
        low, high = (scaled, high) if len(high) == 1 else (low, scaled)
    return high, low, bits


# ---------------------------------------------------------------------------------------------
# Ring automorphisms x(X) -> x(X^g) of Z_q[X]/(X^n + 1) as gather tables.
# ---------------------------------------------------------------------------------------------


def automorphism_tables(n: int, galois_elt: int, ntt_form: bool):
    """Gather indices (and, on coefficients, negation flags) of x -> x(X^g), as NumPy arrays.

    Coefficients: out[(i g mod 2n) mod n] = +-x[i], negated when i g mod 2n >= n.
    NTT values X[k] = x(psi^(2k+1)): out[k] = X[k'] with 2k'+1 = g (2k+1) mod 2n."""
    if galois_elt % 2 == 0 or not 0 < galois_elt < 2 * n:
        raise ValueError(f"galois_elt must be odd and in (0, 2n) = (0, {2 * n}), got {galois_elt}")
    i = np.arange(n, dtype=np.int64)
    if ntt_form:
        src = ((galois_elt * (2 * i + 1)) % (2 * n) - 1) // 2
        return src, None
    k = (i * galois_elt) % (2 * n)
    dest = k % n
    src = np.empty(n, dtype=np.int64)
    negate = np.empty(n, dtype=bool)
    src[dest] = i
    negate[dest] = k >= n
    return src, negate
