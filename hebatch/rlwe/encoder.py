"""The batch encoder's slot layout and the rotation index math of the ring Z_t[X]/(X^n + 1), t = 1 mod 2n.

Slots form a 2 x n/2 matrix: slot i of row 0 is the plaintext's value at psi^(3^i), slot i of row 1 its
value at psi^(-3^i) (psi a primitive 2n-th root of unity mod t), so X -> X^3 rotates both rows left by
one and X -> X^-1 swaps them (SEAL's and HElib's layout).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from . import ring


@cache
def _slot_index(n: int) -> np.ndarray:
    idx = np.empty(n, dtype=np.int64)
    pos = 1
    for i in range(n // 2):
        idx[i] = (pos - 1) // 2
        idx[n // 2 + i] = (2 * n - pos - 1) // 2
        pos = pos * 3 % (2 * n)
    idx.setflags(write=False)
    return idx


def slot_index(n: int) -> np.ndarray:
    """NTT position (natural order: X[k] = m(psi^(2k+1))) of each of the n slots, a read-only host array."""
    return _slot_index(int(n))


def encode(ops, n: int, t: int, index, values):
    """Slot values (..., n), ints in [0, t), -> plaintext coefficients (..., n) uint64 mod t on the
    engine's device; `index` is slot_index(n) on that device. TypeError / ValueError name `values`."""
    xp = ops.xp
    if not hasattr(values, "dtype"):
        values = np.asarray(values)
    if values.dtype.kind not in "iu":
        raise TypeError(f"values must be an integer array, got dtype {values.dtype}")
    if values.ndim < 1 or values.shape[-1] != n:
        raise ValueError(f"values must have shape (..., n) with n = {n}, got {tuple(values.shape)}")
    values = ops.asarray(values)
    if values.size and bool(((values < 0) | (values >= t)).any()):  # one reduction, one wait
        raise ValueError(f"values must lie in [0, t) = [0, {t})")
    slots = xp.zeros(values.shape, dtype=np.uint64)
    slots[..., index] = values.astype(np.uint64)
    return ring.intt(slots[..., None, :], (t,))[..., 0, :]


def decode(data, t: int, index):
    """Plaintext coefficients (..., n) mod t -> slot values (..., n), uint64 in [0, t)."""
    evals = ring.ntt(data[..., None, :], (t,))[..., 0, :]
    return evals[..., index]


def galois_element(n: int, step) -> int:
    """The Galois element 3^step mod 2n that rotates both rows left by `step` (negative: right)."""
    if not isinstance(step, (int, np.integer)):
        raise TypeError(f"step must be an int, got {type(step).__name__}")
    return pow(3, int(step) % (n // 2), 2 * n)


def column_element(n: int) -> int:
    """The Galois element 2n - 1 (X -> X^-1) that swaps the two rows."""
    return 2 * n - 1


def rotation_steps(n: int, rotations) -> list[int]:
    """The steps of keygen's `rotations`: a list of int steps, or "pow2" for +-2^i (SEAL's default), from
    which any step is composed."""
    if isinstance(rotations, str):
        if rotations != "pow2":
            raise ValueError(f"rotations must be a list of int steps or 'pow2', got {rotations!r}")
        rotations = [sign << i for i in range((n // 2).bit_length() - 1) for sign in (1, -1)]
    if isinstance(rotations, (int, np.integer)) or any(not isinstance(k, (int, np.integer)) for k in rotations):
        raise TypeError(f"rotations must be a list of int steps, got {rotations!r}")
    return [int(k) for k in rotations]


def galois_elements(n: int, steps, columns: bool) -> list[int]:
    """The distinct Galois elements (1 left out) of the row rotations by `steps` and, if `columns`, of
    the row swap, in that order: the elements keygen makes keys for."""
    elements: list[int] = []
    for g in [galois_element(n, k) for k in steps] + ([column_element(n)] if columns else []):
        if g != 1 and g not in elements:
            elements.append(g)
    return elements


def rotation_plan(n: int, step, available) -> list[int] | None:
    """The Galois elements to apply, in order, to rotate the rows left by `step` with keys for the
    elements `available`: the step's own element if there is a key for it (or it is 1), else the
    elements of the powers of two that sum to the step (mod n/2), or None if a key is missing."""
    elt = galois_element(n, step)
    if elt == 1 or elt in available:
        return [elt]
    half = n // 2
    k = int(step) % half
    parts = [galois_element(n, 1 << i) for i in range(half.bit_length()) if k >> i & 1]
    return parts if all(g in available for g in parts) else None


__all__ = [
    "slot_index",
    "encode",
    "decode",
    "galois_element",
    "column_element",
    "rotation_steps",
    "galois_elements",
    "rotation_plan",
]
