"""The backend interface: what the transforms and schemes layers may ask of an array library.

Arrays reaching a backend are already validated and shaped (batch, limbs, n) with dtype uint64;
`plan` is an `hebatch.ntt.plan.NTTPlan` (moduli, roots, algorithm, tables). A backend never
modifies its inputs unless it is handed them as `out`.

Order: `natural=False` lets a forward transform leave its output in the backend's internal order
(bit-reversed for radix-2, transposed blocks for 4-step) and lets the inverse take that order back,
so NTT -> pointwise -> INTT pipelines skip permutations. Only pointwise work may happen in between.
"""

from __future__ import annotations

import abc

import numpy as np


class Backend(abc.ABC):
    name: str
    xp = None  # the array module (numpy, cupy)

    def work_dtype(self, dtype, moduli):
        """The dtype the backend computes in for data of `dtype` (inputs are converted to it)."""
        return np.dtype(np.uint64)

    def writeable(self, x) -> bool:
        return True

    def shares_memory(self, a, b) -> bool:
        return bool(self.xp.shares_memory(a, b))

    def check_same_device(self, a, b) -> None:
        """Raise ValueError if a and b live on different devices."""

    def broadcast_to(self, x, shape):
        return self.xp.broadcast_to(x, shape)

    def twiddle_grid_mul(self, x, modulus: int, root: int, row0: int, col0: int,
                         row_step: int = 1, col_step: int = 1, *, out=None):
        """The twiddle step of a 4-step NTT on one block of its n1 x n2 matrix.

        Returns y with, for every 0 <= i < R and 0 <= j < C,
            y[i, j] = x[i, j] * root ** ((row0 + row_step * i) * (col0 + col_step * j))  mod modulus
        (row_step = col_step = 1: the entry of the whole matrix at (row0 + i, col0 + j) times
        root^(row * col); a step of 2 with an odd start gives the odd exponents of negacyclic twiddles).

        x: 2-D (R, C) uint64 array of this backend, entries < modulus, any strides. modulus: an int,
        a prime < 2**62 or GOLDILOCKS. root: an int with 0 < root < modulus (its order is not
        assumed). row0, col0, row_step, col_step: Python ints >= 0; the exponents are exact integers
        (they may pass 2**64; reducing them mod modulus - 1 is allowed). All arguments are already
        validated by `hebatch.ntt.twiddle_grid`. Exact: bit for bit the same residues on every backend.
        Powers come from per-row bases and exponent splitting (tables of about R * sqrt(C) entries),
        never from a table of the whole transform size.
        out: None for a new array, or an (R, C) uint64 array of this backend to write into (it may be
        x itself). Returns the result; x is not modified unless it is `out`. On a GPU the work runs on
        the current stream.
        """
        raise NotImplementedError(f"the {self.name} backend has no twiddle_grid_mul")

    @abc.abstractmethod
    def owns(self, x) -> bool:
        """True if x is an array of this backend's type."""

    @abc.abstractmethod
    def forward(self, x, plan, *, natural: bool = True, out=None):
        """NTT of every (batch, limb) row of x."""

    @abc.abstractmethod
    def inverse(self, y, plan, *, natural: bool = True, out=None):
        """Exact inverse of `forward` (scaled by n^-1)."""

    @abc.abstractmethod
    def pointwise_mul(self, a, b, plan, *, out=None):
        """a * b mod q per limb; a and b broadcast along the batch axis."""

    def inverse_product(self, a, b, plan):
        """inverse(a * b) of two spectra in the internal order (a backend may fuse the product)."""
        return self.inverse(self.pointwise_mul(a, b, plan), plan, natural=False)
