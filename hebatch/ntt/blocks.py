"""One NTT computed in blocks: the 4-step algorithm with its matrix split across devices.

x of n = n1 * n2 points is viewed row-major as A[j1][j2] = x[j1 * n2 + j2]. With w the cyclic root
(psi^2 for negacyclic transforms), X[k1 + n1 * k2] = sum_j2 w^(n1 j2 k2) w^(j2 k1) sum_j1 A[j1][j2] w^(n2 j1 k1):

1. column step (`column_block`): a block of columns c0 <= j2 < c1 of A, transposed so that the
   length-n1 column transforms run along the last axis, then multiplied by the twiddles
   -> rows c0..c1 of Y[j2][k1];
2. a transpose of Y into Z[k1][j2] (between devices: the all-to-all);
3. row step (`row_block`): a block of rows of Z, length-n2 transforms -> D[k1][k2] = X[k1 + n1 * k2];
4. X in natural order is D transposed (X viewed row-major as [k2][k1]).

Negacyclic transforms need no extra pass: X[k] = sum_j x[j] psi^(j(2k+1)) splits into negacyclic
column transforms with root psi^n2 and twiddles psi^(j2 (2 k1 + 1)); the inverse puts psi^-m into
negacyclic row transforms with root psi^n1 and twiddles psi^-((2 j2 + 1) m1). Every sub-transform is
an ordinary `ntt` call with `root=`, so blocks run on any backend.

Over a multi-limb hb.PrimeField (spec.field set) every block carries a trailing limb axis:
A is (n1, n2, limbs), column blocks (n1, R, limbs), row blocks (R, n2, limbs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backend import get
from ..device import device_of
from ..field import PrimeField, modulus_info
from .api import ntt
from .plan import default_split
from .validate import _as_int, _check_flag

U64 = np.uint64


@dataclass(frozen=True)
class FourStepSpec:
    """How one transform of n = n1 * n2 points splits into column and row transforms.

    Sub-transforms: `ntt(..., root=col_root, negacyclic=col_negacyclic, inverse=inverse)` on
    length n1 and the same with row_* on length n2. Twiddles: entry (i, j) of the column-step block
    starting at column c0 of A is multiplied by
        tw_root ** ((tw_row_scale * (c0 + i) + tw_row_offset) * (tw_col_start + tw_col_step * j)).
    """

    n: int
    n1: int
    n2: int
    modulus: int
    root: int  # w (cyclic) or psi (negacyclic) of the whole transform, as hb.ntt's root=
    negacyclic: bool
    inverse: bool
    col_root: int
    col_negacyclic: bool
    row_root: int
    row_negacyclic: bool
    tw_root: int
    tw_row_scale: int
    tw_row_offset: int
    tw_col_start: int
    tw_col_step: int
    field: PrimeField | None = None  # a multi-limb field: blocks carry a trailing limb axis

    @property
    def ring(self):
        """What the sub-transforms take as their modulus: the field, or the int modulus."""
        return self.modulus if self.field is None else self.field

    @property
    def tail(self) -> tuple[int, ...]:
        """The trailing axes of every element: (limbs,) for a multi-limb field, else ()."""
        return () if self.field is None else (self.field.limbs,)

    def twiddle_rows(self, col0: int) -> tuple[int, int]:
        """(row0, row_step) of `twiddle_grid` for the column-step block starting at column col0 of A."""
        return self.tw_row_scale * col0 + self.tw_row_offset, self.tw_row_scale


def four_step_spec(
    n: int, modulus, root: int, *, negacyclic: bool = False, inverse: bool = False, split: tuple[int, int] | None = None
) -> FourStepSpec:
    """The spec of one transform with already validated n, modulus and root (w, or psi if negacyclic).

    modulus: an int, or a multi-limb hb.PrimeField. split: (n1, n2) with n1 * n2 = n, both at least
    2; default as square as possible (n1 <= n2).
    """
    field = modulus if isinstance(modulus, PrimeField) and modulus.limbs > 1 else None
    if isinstance(modulus, PrimeField):
        modulus = modulus.p
    negacyclic, inverse = _check_flag(negacyclic, "negacyclic"), _check_flag(inverse, "inverse")
    n1, n2 = split or default_split(n)
    if n1 * n2 != n or n1 < 2 or n2 < 2:
        raise ValueError(f"split {n1} x {n2} does not fit n={n}: need n1 * n2 = n with n1, n2 >= 2")
    q = modulus
    w = root * root % q if negacyclic else root
    w_inv = pow(w, -1, q)
    col_root, row_root = pow(w, n2, q), pow(w, n1, q)
    col_nega = row_nega = False
    tw_root, row_scale, row_offset, col_start, col_step = w, 1, 0, 0, 1
    if inverse:
        tw_root = w_inv
    if negacyclic and not inverse:
        col_root, col_nega = pow(root, n2, q), True
        tw_root, col_start, col_step = root, 1, 2  # psi^(j2 (2 k1 + 1))
    elif negacyclic and inverse:
        row_root, row_nega = pow(root, n1, q), True
        tw_root, row_scale, row_offset = pow(root, -1, q), 2, 1  # psi^-((2 j2 + 1) m1)
    return FourStepSpec(
        n,
        n1,
        n2,
        q,
        root,
        negacyclic,
        inverse,
        col_root,
        col_nega,
        row_root,
        row_nega,
        tw_root,
        row_scale,
        row_offset,
        col_start,
        col_step,
        field,
    )


def column_block(block, spec: FourStepSpec, col0: int):
    """Step 1 on the columns col0 .. col0 + R of A: `block` is A[:, col0:col0+R] (shape (n1, R), any
    strides, entries < modulus). Returns rows col0 .. col0 + R of Y[j2][k1], shape (R, n1), uint64.
    Over a multi-limb field, shapes (n1, R, limbs) -> (R, n1, limbs)."""
    backend = get(device_of(block, "x")).ntt
    if block.ndim != 2 + len(spec.tail) or block.shape[0] != spec.n1 or tuple(block.shape[2:]) != spec.tail:
        raise ValueError(f"a column block must have shape {(spec.n1, 'columns') + spec.tail}, got {block.shape}")
    if spec.field is not None:
        cols = backend.xp.ascontiguousarray(block.swapaxes(0, 1), dtype=U64)
        y = ntt(cols, spec.field, root=spec.col_root, negacyclic=spec.col_negacyclic, inverse=spec.inverse)
        row0, row_step = spec.twiddle_rows(col0)
        return field_twiddle_grid(y, spec.field, spec.tw_root, row0, spec.tw_col_start, row_step, spec.tw_col_step)
    cols = backend.xp.empty(block.shape[::-1], dtype=U64)
    cols[...] = block.T  # the transpose, so that the column transforms run along the last axis
    y = ntt(cols, spec.modulus, root=spec.col_root, negacyclic=spec.col_negacyclic, inverse=spec.inverse, inplace=True)
    row0, row_step = spec.twiddle_rows(col0)
    return twiddle_grid(y, spec.modulus, spec.tw_root, row0, spec.tw_col_start, row_step, spec.tw_col_step, out=y)


def row_block(block, spec: FourStepSpec):
    """Step 3 on rows of Z[k1][j2] (shape (R, n2), uint64; (R, n2, limbs) over a multi-limb field):
    returns those rows of D[k1][k2]."""
    backend = get(device_of(block, "x")).ntt
    if block.ndim != 2 + len(spec.tail) or block.shape[1] != spec.n2 or tuple(block.shape[2:]) != spec.tail:
        raise ValueError(f"a row block must have shape {('rows', spec.n2) + spec.tail}, got {block.shape}")
    # rows come out of the column transforms: already reduced, so no entry scan (a read and a GPU wait)
    return ntt(
        backend.xp.ascontiguousarray(block, dtype=U64),
        spec.ring,
        root=spec.row_root,
        negacyclic=spec.row_negacyclic,
        inverse=spec.inverse,
        check=False,
    )


def twiddle_grid(x, modulus, root, row0, col0, row_step=1, col_step=1, *, out=None):
    """x[i, j] * root ** ((row0 + row_step * i) * (col0 + col_step * j)) mod modulus, exactly.

    The twiddle multiplication of a 4-step NTT on one block of its matrix (see
    `Backend.twiddle_grid_mul`). x: 2-D uint64 NumPy or CuPy array with entries < modulus (not
    checked: blocks come from transforms). modulus: a prime < 2**62 or hb.GOLDILOCKS; root:
    0 < root < modulus; row0, col0, row_step, col_step: ints >= 0. out: None, or a uint64 array of
    x's shape and backend (x itself for in place). Returns the result on x's device.
    """
    backend = get(device_of(x, "x")).ntt
    if x.ndim != 2:
        raise ValueError(f"x must be a 2-D block (rows, columns), got shape {x.shape}")
    if x.dtype != U64:
        raise TypeError(f"x must have dtype uint64, got {x.dtype}")
    q = modulus_info(_as_int(modulus, "modulus")).q
    root = _as_int(root, "root")
    if not 0 < root < q:
        raise ValueError(f"root must satisfy 0 < root < modulus = {q}, got {root}")
    offsets = [
        _as_int(v, name) for v, name in ((row0, "row0"), (col0, "col0"), (row_step, "row_step"), (col_step, "col_step"))
    ]
    for value, name in zip(offsets, ("row0", "col0", "row_step", "col_step")):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    if out is not None:
        if get(device_of(out, "out")).ntt is not backend or out.shape != x.shape or out.dtype != U64:
            raise ValueError(f"out must be a uint64 {backend.name} array of shape {x.shape}")
        if not backend.writeable(out):
            raise ValueError("out must be writeable")
    return backend.twiddle_grid_mul(x, q, root, *offsets, out=out)


def field_twiddle_grid(x, field: PrimeField, root: int, row0: int, col0: int, row_step: int = 1, col_step: int = 1):
    """`twiddle_grid` over a multi-limb field: x (rows, columns, limbs) uint64, standard form, by the
    field engine of x's backend."""
    return get(device_of(x, "x")).ntt256.twiddle_grid(x, field, root, row0, col0, row_step, col_step)


__all__ = ["FourStepSpec", "field_twiddle_grid", "four_step_spec", "column_block", "row_block", "twiddle_grid"]
