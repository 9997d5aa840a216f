"""Noise budgets, exact with Python ints."""

from __future__ import annotations

import math

import numpy as np


def budgets(phase, q, factor: int = 1):
    """Bits of noise budget of every item of a phase (..., L, n) (a host array over the limbs q):
    bits(Q) - bits(max |[factor v]_Q|) - 1, at least 0, v the phase as an integer mod Q = prod(q).
    BFV measures factor = t (SEAL's definition), BGV factor = 1. Vectorized over items and coefficients:
    CRT to an integer mod Q, times factor, centred, the largest magnitude."""
    q = tuple(int(p) for p in q)
    x = np.asarray(phase)
    batch = x.shape[:-2]
    flat = x.reshape((-1, len(q), x.shape[-1]))
    big_q = math.prod(q)
    v = sum(flat[:, i].astype(object) * ((big_q // p) * pow(big_q // p, -1, p)) for i, p in enumerate(q))
    w = (v * factor) % big_q
    norm = np.zeros(0, dtype=object)
    if len(flat):
        norm = np.asarray(np.where(w > big_q // 2, big_q - w, w)).max(axis=-1)
    out = np.array([max(0, big_q.bit_length() - int(m).bit_length() - 1) for m in norm], dtype=np.int64)
    return out.reshape(batch)


__all__ = ["budgets"]
