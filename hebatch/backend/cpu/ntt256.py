"""NumPy backend for multi-limb prime fields (the 256-bit scalar fields of zk provers): exact CPU reference.

Elements arrive as (batch, n, limbs) uint64 arrays of 64-bit limbs in standard form. Inside, each
element is split into digits of 28 bits (10 for 256-bit fields), held in uint64 words and laid out
digit-major (digits, batch, n), so that every operation is a whole-array NumPy operation over many
elements at once. 28 bits leave room to add up every digit product of a Montgomery multiplication
(2 * 10 products < 2^56 each) in one 64-bit word without splitting them into halves.
Multiplication is Montgomery with the internal radix R' = 2^(28 digits) by operand scanning;
twiddles are kept in this Montgomery form, so that mont_mul(x, w R') = x w leaves data in
standard form throughout. Work runs in slabs of about `CHUNK` elements so that the temporaries
stay in cache.

Radix-2 Cooley-Tukey (natural in, bit-reversed out) for forward transforms and Gentleman-Sande
(bit-reversed in, natural out, with n^-1 folded into the last stage) for inverse ones; other
orderings are a bit-reversal permutation before or after.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...arith import bitrev_indices
from ...field import PrimeField
from ..interface import FieldNTT

U64 = np.uint64
DIGIT_BITS = 28
MASK = U64((1 << DIGIT_BITS) - 1)
_LIMB_BITS = 64
_SHIFT = U64(DIGIT_BITS)
_SIGN = U64(63)
CHUNK = 1 << 13
"""Elements per slab: (digits x CHUNK) uint64 temporaries of 640 KiB for 10 digits."""

ORDERS = ("natural", "bitrev")


# -- digits <-> limbs ----------------------------------------------------------------------------


def digit_count(limbs: int) -> int:
    """Digits of DIGIT_BITS covering `limbs` 64-bit limbs."""
    return -(-_LIMB_BITS * limbs // DIGIT_BITS)


def to_digits(x: np.ndarray) -> np.ndarray:
    """(..., limbs) uint64 limbs -> (digits, ...) DIGIT_BITS-bit digits in uint64 (little-endian, contiguous)."""
    limbs = np.moveaxis(np.asarray(x, dtype=U64), -1, 0)
    count = limbs.shape[0]
    out = np.empty((digit_count(count),) + limbs.shape[1:], dtype=U64)
    for k in range(out.shape[0]):
        limb, offset = divmod(DIGIT_BITS * k, _LIMB_BITS)
        digit = limbs[limb] >> U64(offset)
        if offset + DIGIT_BITS > _LIMB_BITS and limb + 1 < count:  # the digit straddles two limbs
            digit = digit | (limbs[limb + 1] << U64(_LIMB_BITS - offset))
        np.bitwise_and(digit, MASK, out=out[k])
    return out


def from_digits(d: np.ndarray, limbs: int | None = None) -> np.ndarray:
    """Inverse of `to_digits`: (digits, ...) digits < 2^DIGIT_BITS -> contiguous (..., limbs) uint64."""
    limbs = limbs or d.shape[0] * DIGIT_BITS // _LIMB_BITS
    out = np.zeros((limbs,) + d.shape[1:], dtype=U64)
    for k in range(d.shape[0]):
        limb, offset = divmod(DIGIT_BITS * k, _LIMB_BITS)
        if limb < limbs:
            out[limb] |= d[k] << U64(offset)  # bits past 64 fall off here and land in the next limb
        if offset + DIGIT_BITS > _LIMB_BITS and limb + 1 < limbs:
            out[limb + 1] |= d[k] >> U64(_LIMB_BITS - offset)
    return np.ascontiguousarray(np.moveaxis(out, 0, -1))


def int_digits(value: int, count: int) -> np.ndarray:
    """A Python int as a (count, 1) column of DIGIT_BITS-bit digits."""
    mask = (1 << DIGIT_BITS) - 1
    return np.array([(value >> (DIGIT_BITS * k)) & mask for k in range(count)], dtype=U64).reshape(count, 1)


# -- the arithmetic of one field on digit arrays ---------------------------------------------------


class FieldDigits:
    """Modular add, sub and Montgomery multiplication for one field on (digits, C) arrays.

    Every input is a reduced element (< p); the second operand may be a (digits, 1) column.
    Column sums stay below 2^62: a digit position receives at most 2 * digits products (< 2^56)
    and a carry, so products are added whole and carries are propagated once per operation.
    Montgomery radix: R' = 2^(DIGIT_BITS digits) (internal; the field's R is for the limb layout).
    """

    def __init__(self, field: PrimeField):
        if field.p >= 1 << (64 * field.limbs - 1):
            raise ValueError(f"{field.name}: p must be below 2^(64 limbs - 1) so that 2p fits the limbs")
        self.field = field
        self.limbs = field.limbs
        self.d = digit_count(field.limbs)
        assert 2 * self.d * (1 << 2 * DIGIT_BITS) < 1 << 63, "digit sums must fit 63 bits"
        self.p = int_digits(field.p, self.d)
        self.p_inv0 = U64((-pow(field.p, -1, 1 << DIGIT_BITS)) % (1 << DIGIT_BITS))
        self.radix = 1 << (DIGIT_BITS * self.d)  # R'

    def montgomery_column(self, value: int) -> np.ndarray:
        """value R' mod p as a (digits, 1) column: the multiplier for which mont_mul(x, .) = x value."""
        return int_digits(value % self.field.p * self.radix % self.field.p, self.d)

    def montgomery_digits(self, values) -> np.ndarray:
        """(digits, len(values)): v R' mod p of each Python int v."""
        p = self.field.p
        return to_digits(self.field.to_limbs([v % p * self.radix % p for v in values]))

    def _normalize(self, acc, count):
        """Propagate carries through acc[0:count] so each digit is < 2^DIGIT_BITS; the carry out of digit
        count-1 is dropped."""
        for k in range(count - 1):
            acc[k + 1] += acc[k] >> _SHIFT
            acc[k] &= MASK
        acc[count - 1] &= MASK
        return acc

    def _sub_borrow(self, a, b):
        """(a - b mod R', borrow out as 0/1 per element)."""
        out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=U64)
        borrow = np.zeros(out.shape[1:], dtype=U64)
        for k in range(self.d):
            t = a[k] - b[k] - borrow  # wraps below zero: |t| <= 2^DIGIT_BITS, so bit 63 is the sign
            borrow = t >> _SIGN
            np.bitwise_and(t, MASK, out=out[k])
        return out, borrow

    def _reduce_once(self, r):
        """r < 2p -> r mod p."""
        d, borrow = self._sub_borrow(r, self.p)
        return np.where(borrow.astype(bool), r, d)

    def add(self, a, b):
        s = a + b
        return self._reduce_once(self._normalize(s, self.d))  # a + b < 2p < R': no carry out

    def sub(self, a, b):
        d, borrow = self._sub_borrow(a, b)
        d += self.p * borrow  # a - b + R' + p, and the R' falls off in the normalisation
        return self._normalize(d, self.d)

    def mont_mul(self, a, b):
        """a b R'^-1 mod p for (digits, C) arrays a and b (b may be a (digits, 1) column)."""
        d = self.d
        count = a.shape[1]
        acc = np.zeros((2 * d + 1, count), dtype=U64)
        prod = np.empty((d, count), dtype=U64)

        def accumulate(i, x, y):  # acc += x * y * 2^(DIGIT_BITS i), x (C,) and y (d, C) or (d, 1)
            np.multiply(x, y, out=prod)
            acc[i : i + d] += prod

        for i in range(d):
            accumulate(i, a[i], b)
        m = np.empty(count, dtype=U64)
        for i in range(d):  # Montgomery reduction, one digit at a time
            np.bitwise_and(acc[i], MASK, out=m)
            m *= self.p_inv0
            m &= MASK
            accumulate(i, m, self.p)
            acc[i + 1] += acc[i] >> _SHIFT  # acc[i] is now 0 mod 2^DIGIT_BITS: carry the rest up
        high = self._normalize(acc[d:], d + 1)  # (a b + M p) / R' < 2p < R': acc[2d] ends 0
        return self._reduce_once(high[:d])


@lru_cache(maxsize=8)
def field_digits(field: PrimeField) -> FieldDigits:
    return FieldDigits(field)


def montgomery_powers(field: PrimeField, base: int, count: int) -> np.ndarray:
    """(digits, count): base^e R' mod p for e < count, by repeated doubling with mont_mul (read-only)."""
    ops = field_digits(field)
    p = field.p
    out = np.empty((ops.d, count), dtype=U64)
    out[:, :1] = ops.montgomery_column(1)
    filled = 1
    while filled < count:
        k = min(filled, count - filled)
        step = ops.montgomery_column(pow(base, filled, p))
        _blockwise(ops.mont_mul, out[:, :k], step, out[:, filled : filled + k])
        filled += k
    out.setflags(write=False)
    return out


def _blockwise(fn, a, b, out):
    """out = fn(a, b) over column slabs of CHUNK (b: same width as a, or a (digits, 1) column)."""
    width = a.shape[1]
    for s in range(0, width, CHUNK):
        e = min(s + CHUNK, width)
        out[:, s:e] = fn(a[:, s:e], b if b.shape[1] == 1 else b[:, s:e])
    return out


# -- transforms --------------------------------------------------------------------------------


def _stage_slabs(groups: int, t: int):
    """(g0, g1, t0, t1) slabs covering groups x t butterflies with about CHUNK butterflies each."""
    if t >= CHUNK:
        for g in range(groups):
            for t0 in range(0, t, CHUNK):
                yield g, g + 1, t0, min(t0 + CHUNK, t)
    else:
        step = max(1, CHUNK // t)
        for g0 in range(0, groups, step):
            yield g0, min(g0 + step, groups), 0, t


def _slab_twiddles(tw, g0, g1, m, t):
    """Twiddles of groups g0..g1 (group g uses column g mod m of tw), each repeated over its t butterflies;
    a (digits, 1) column for a single group."""
    if g1 - g0 == 1:
        return tw[:, g0 % m : g0 % m + 1]
    return np.repeat(tw[:, np.arange(g0, g1) % m], t, axis=1)


def _ct_stage(a, ops: FieldDigits, tw, m):
    """One Cooley-Tukey stage in place on a (digits, batch, n): m groups, butterflies
    (u, w) -> (u + tw w, u - tw w), tw in Montgomery form, shape (digits, m)."""
    d, batch, n = a.shape
    t = n // (2 * m)
    v = a.reshape(d, batch * m, 2, t)
    for g0, g1, t0, t1 in _stage_slabs(batch * m, t):
        u = v[:, g0:g1, 0, t0:t1].reshape(d, -1)
        w = v[:, g0:g1, 1, t0:t1].reshape(d, -1)
        wt = w if m == 1 else ops.mont_mul(w, _slab_twiddles(tw, g0, g1, m, t1 - t0))  # stage 0: w^0 = 1
        shape = (d, g1 - g0, t1 - t0)
        total, diff = ops.add(u, wt), ops.sub(u, wt)  # both before writing: u may be a view of a
        v[:, g0:g1, 0, t0:t1] = total.reshape(shape)
        v[:, g0:g1, 1, t0:t1] = diff.reshape(shape)


def _gs_stage(a, ops: FieldDigits, tw, h, scale=None):
    """One Gentleman-Sande stage in place: h groups, (u, w) -> (u + w, tw (u - w)); with `scale`
    (a Montgomery column), the sum is multiplied by it too (n^-1 on the last stage)."""
    d, batch, n = a.shape
    t = n // (2 * h)
    v = a.reshape(d, batch * h, 2, t)
    for g0, g1, t0, t1 in _stage_slabs(batch * h, t):
        u = v[:, g0:g1, 0, t0:t1].reshape(d, -1)
        w = v[:, g0:g1, 1, t0:t1].reshape(d, -1)
        total = ops.add(u, w)
        if scale is not None:
            total = ops.mont_mul(total, scale)
        diff = ops.mont_mul(ops.sub(u, w), _slab_twiddles(tw, g0, g1, h, t1 - t0))
        shape = (d, g1 - g0, t1 - t0)
        v[:, g0:g1, 0, t0:t1] = total.reshape(shape)
        v[:, g0:g1, 1, t0:t1] = diff.reshape(shape)


def _stage_twiddles(powers, log_n, s):
    """Twiddles of stage s (m = 2^s groups): group i uses root^(bitrev_s(i) << (log n - 1 - s))."""
    return powers[:, bitrev_indices(s) << (log_n - 1 - s)]


def _check_order(value, name):
    if not isinstance(value, str) or value not in ORDERS:
        raise ValueError(f"{name} must be 'natural' or 'bitrev', got {value!r}")


# The tables of the last two transforms (a forward and its inverse) are kept: 80 bytes per entry, so
# a larger cache would hold gigabytes at 2^24; coset powers are made per call (cheaper than the NTT).
twiddle_powers = lru_cache(maxsize=2)(montgomery_powers)


class NumpyFieldNTT(FieldNTT):
    """Field NTTs on NumPy arrays x of shape (batch, n, limbs) uint64, standard form, entries < p.

    forward: X[k] = sum_j x[j] root^(jk) (root a primitive n-th root of unity), inverse: its exact
    inverse (root^-1, scaled by n^-1); orders "natural" or "bitrev" (index bits reversed) for the
    input and the output independently. Arguments are trusted (validated by hebatch.ntt).
    """

    name = "cpu"
    xp = np

    @staticmethod
    def _digits_in(x, input_order, output_order, permute_from):
        """(log n, x as digits), permuted to bit-reversed positions when given in order `permute_from`
        (the stages of both directions run with the natural order on one side, bit-reversed on the other)."""
        _check_order(input_order, "input_order")
        _check_order(output_order, "output_order")
        log_n = x.shape[1].bit_length() - 1
        a = to_digits(x)
        if input_order == permute_from:
            a = np.ascontiguousarray(a[..., bitrev_indices(log_n)])
        return log_n, a

    def forward(self, x, field: PrimeField, root: int, input_order="natural", output_order="natural", *, plan=None):
        ops = field_digits(field)
        log_n, a = self._digits_in(x, input_order, output_order, permute_from="bitrev")
        n = 1 << log_n
        powers = twiddle_powers(field, root, n // 2)
        for s in range(log_n):
            _ct_stage(a, ops, _stage_twiddles(powers, log_n, s), 1 << s)
        if output_order == "natural":
            a = a[..., bitrev_indices(log_n)]
        return from_digits(a, field.limbs)

    def inverse(self, y, field: PrimeField, root: int, input_order="natural", output_order="natural", *, plan=None):
        ops = field_digits(field)
        log_n, a = self._digits_in(y, input_order, output_order, permute_from="natural")
        n = 1 << log_n
        powers = twiddle_powers(field, pow(root, -1, field.p), n // 2)
        n_inv = ops.montgomery_column(pow(n, -1, field.p))
        for s in reversed(range(log_n)):
            tw = _stage_twiddles(powers, log_n, s)
            if s == 0:
                tw = ops.mont_mul(np.ascontiguousarray(tw), n_inv)
            _gs_stage(a, ops, tw, 1 << s, n_inv if s == 0 else None)
        if output_order == "bitrev":
            a = a[..., bitrev_indices(log_n)]
        return from_digits(a, field.limbs)

    def scale_by_powers(self, x, field: PrimeField, base: int):
        """x[:, j] * base^j for each batch item (the coset shift of coset NTTs)."""
        ops = field_digits(field)
        batch, n, _ = x.shape
        a = to_digits(x).reshape(ops.d, batch * n)
        powers = montgomery_powers(field, base % field.p, n)
        out = np.empty_like(a)
        for s in range(0, batch * n, CHUNK):
            e = min(s + CHUNK, batch * n)
            cols = np.arange(s, e) % n
            out[:, s:e] = ops.mont_mul(a[:, s:e], powers[:, cols])
        return from_digits(out.reshape(ops.d, batch, n), field.limbs)

    def mul(self, a, b, field: PrimeField):
        """Elementwise a * b mod p of (..., limbs) arrays of one shape."""
        ops = field_digits(field)
        da, db = to_digits(a).reshape(ops.d, -1), to_digits(b).reshape(ops.d, -1)
        r2 = ops.montgomery_column(ops.radix)  # mont_mul(., R'^2) multiplies by R': undoes the R'^-1
        out = np.empty_like(da)
        _blockwise(lambda u, v: ops.mont_mul(ops.mont_mul(u, v), r2), da, db, out)
        return from_digits(out.reshape((ops.d,) + a.shape[:-1]), field.limbs)

    def twiddle_grid(self, x, field: PrimeField, root: int, row0: int, col0: int, row_step: int = 1, col_step: int = 1):
        """x[i, j] * root^((row0 + row_step i)(col0 + col_step j)) for x of shape (rows, cols, limbs):
        the twiddle step of a 4-step transform on one block of its matrix."""
        ops = field_digits(field)
        p = field.p
        rows, cols, _ = x.shape
        # Row i: start_i = root^(e_i col0) and step_i = root^(e_i col_step), e_i = row0 + row_step i,
        # both geometric progressions in i; then entry j is start_i * step_i^j, filled by doubling.
        start, step = [], []
        s, s_ratio = pow(root, row0 * col0, p), pow(root, row_step * col0, p)
        t, t_ratio = pow(root, row0 * col_step, p), pow(root, row_step * col_step, p)
        for _ in range(rows):
            start.append(s)
            step.append(t)
            s, t = s * s_ratio % p, t * t_ratio % p
        grid = np.empty((ops.d, rows, cols), dtype=U64)
        grid[:, :, 0] = ops.montgomery_digits(start)
        filled = 1
        while filled < cols:
            k = min(filled, cols - filled)
            factor = np.repeat(ops.montgomery_digits(step), k, axis=1)  # step_i^filled, per row
            grid[:, :, filled : filled + k] = ops.mont_mul(
                np.ascontiguousarray(grid[:, :, :k]).reshape(ops.d, -1), factor
            ).reshape(ops.d, rows, k)
            step = [v * v % p for v in step] if 2 * filled < cols else step
            filled += k
        a = to_digits(x).reshape(ops.d, -1)
        out = np.empty_like(a)
        _blockwise(ops.mont_mul, a, grid.reshape(ops.d, -1), out)
        return from_digits(out.reshape(ops.d, rows, cols), field.limbs)
