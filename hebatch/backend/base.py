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

    def choose_algorithm(self, n: int, rows: int, moduli: tuple[int, ...]) -> str:
        """The algorithm for algorithm="auto": `rows` transforms of length n."""
        return "radix2"

    def fourstep_split(self, n: int) -> tuple[int, int] | None:
        """n1 x n2 for 4-step plans; None for the default split."""
        return None

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
