"""NumPy implementation of the RNS primitives (exact, on uint64 words; no floats in the arithmetic)."""

from __future__ import annotations

import math
import os
from functools import lru_cache

import numpy as np

from ...arith import ModOps, automorphism_tables
from ...field import modulus_info
from ..interface import RnsOps

U64 = np.uint64
_BLOCK_WORDS = 1 << 15  # words per limb row and block in blocked loops (L2-sized working set)


@lru_cache(maxsize=256)
def _mod_ops(moduli: tuple[int, ...]) -> ModOps:
    return ModOps(tuple(modulus_info(int(q)) for q in moduli), depth=1)


def _column(values) -> np.ndarray:
    return np.array([int(v) for v in values], dtype=U64).reshape(-1, 1)


@lru_cache(maxsize=256)
def _scalar_constants(moduli: tuple[int, ...], scalars: tuple[int, ...]):
    """Reduced multipliers and their Shoup companions, as (L, 1) columns."""
    if len(scalars) != len(moduli):
        raise ValueError(f"scalars: need one per limb ({len(moduli)}), got {len(scalars)}")
    ops = _mod_ops(moduli)
    w = _column(s % q for s, q in zip(scalars, moduli))
    return w, ops.shoup(w)


@lru_cache(maxsize=128)
def _bconv_constants(src: tuple[int, ...], dst: tuple[int, ...]):
    """[(Q/q_i)^-1]_{q_i} per source limb, and (Q/q_i) mod p_j with Shoup companions per source limb."""
    big_q = math.prod(src)
    q_hat = [big_q // q for q in src]
    q_hat_inv = tuple(pow(h % q, -1, q) for h, q in zip(q_hat, src))
    ops = _mod_ops(dst)
    per_src = []
    for h in q_hat:
        w = _column(h % p for p in dst)
        per_src.append((w, ops.shoup(w)))
    return q_hat_inv, per_src


@lru_cache(maxsize=64)
def _automorphism_tables(n: int, galois_elt: int, ntt_form: bool):
    return automorphism_tables(n, galois_elt, ntt_form)


def _secure_words(count: int) -> np.ndarray:
    """count uniform uint64 words from the operating system's CSPRNG."""
    return np.frombuffer(os.urandom(8 * count), dtype=U64).copy()


class NumpyRnsOps(RnsOps):
    """RnsOps on NumPy uint64 arrays: 128-bit products from 32-bit halves, Barrett and Shoup reductions."""

    xp = np
    name = "cpu"

    def asarray(self, x):
        return np.ascontiguousarray(x)

    def to_host(self, x):
        return np.asarray(x)

    def add(self, a, b, moduli):
        return _mod_ops(tuple(moduli)).add(a, b)

    def sub(self, a, b, moduli):
        return _mod_ops(tuple(moduli)).sub(a, b)

    def neg(self, a, moduli):
        return _mod_ops(tuple(moduli)).neg(a)

    def mul(self, a, b, moduli):
        return _mod_ops(tuple(moduli)).mul(a, b)

    def mul_scalar(self, a, scalars, moduli):
        moduli = tuple(moduli)
        w, w_shoup = _scalar_constants(moduli, tuple(int(s) for s in scalars))
        return _mod_ops(moduli).mul_shoup(a, w, w_shoup)

    def mul_add(self, a, b, c, moduli):
        ops = _mod_ops(tuple(moduli))
        return ops.add(ops.mul(a, b), c)

    def reduce(self, x, moduli):
        return np.remainder(x, _column(moduli))  # exact unsigned integer division

    def from_signed(self, x, moduli):
        x = np.asarray(x, dtype=np.int64)
        if x.ndim < 2 or x.shape[-2] != 1:
            x = x[..., None, :]
        q = _column(moduli)
        r = np.remainder(np.abs(x).astype(U64), q)
        return np.where((x < 0) & (r != 0), q - r, r)

    def base_convert(self, x, src, dst):
        src, dst = tuple(src), tuple(dst)
        if x.shape[-2] != len(src):
            raise ValueError(f"x: limb axis has {x.shape[-2]} limbs, the source base {len(src)}")
        q_hat_inv, per_src = _bconv_constants(src, dst)
        n = x.shape[-1]
        lead = x.shape[:-2]
        flat = np.ascontiguousarray(x).reshape((-1, len(src), n))
        out = np.empty((flat.shape[0], len(dst), n), dtype=U64)
        ops = _mod_ops(dst)
        # Blocks of coefficients small enough for the cache: each term is a few passes over one block.
        width = max(256, min(n, _BLOCK_WORDS // max(len(src), len(dst))))
        for m in range(flat.shape[0]):
            for c in range(0, n, width):
                v = self.mul_scalar(flat[m, :, c : c + width], q_hat_inv, src)
                acc = None
                for i, (w, w_shoup) in enumerate(per_src):
                    term = ops.mul_shoup(v[i : i + 1], w, w_shoup)  # v_i < q_i may exceed p_j: Shoup takes any word
                    acc = term if acc is None else ops.add(acc, term)
                out[m, :, c : c + width] = acc
        return out.reshape(lead + (len(dst), n))

    def centered_lift(self, x, m, moduli):
        m = int(m)
        x = np.asarray(x, dtype=U64)
        negative = x > U64(m // 2)
        magnitude = np.where(negative, U64(m) - x, x)
        q = _column(moduli)
        r = np.remainder(magnitude, q)
        return np.where(negative & (r != 0), q - r, r)

    def automorphism(self, x, galois_elt, moduli, ntt_form):
        src, negate = _automorphism_tables(x.shape[-1], int(galois_elt), bool(ntt_form))
        y = x[..., src]
        if negate is None:
            return y
        return np.where(negate, _mod_ops(tuple(moduli)).neg(y), y)

    # -- secure sampling: every random bit comes from os.urandom (the operating system's CSPRNG), never
    # from NumPy's generators; the GPU engine draws from ChaCha20 keyed from os.urandom instead.
    def random_uniform(self, shape, moduli):
        shape = tuple(shape)
        if shape[-2] != len(moduli):
            raise ValueError(f"shape: limb axis {shape[-2]} does not match {len(moduli)} moduli")
        q = _column(moduli)
        mask = _column((1 << int(m).bit_length()) - 1 for m in moduli)
        q, mask = np.broadcast_to(q, shape), np.broadcast_to(mask, shape)
        out = _secure_words(math.prod(shape)).reshape(shape) & mask
        bad = out >= q
        while bad.any():  # rejection sampling: each draw is accepted with probability > 1/2
            out[bad] = _secure_words(int(bad.sum())) & mask[bad]
            bad = out >= q
        return out

    def random_ternary(self, shape):
        shape = tuple(shape)
        count = math.prod(shape)
        raw = np.frombuffer(os.urandom(count), dtype=np.uint8).copy()
        bad = raw == 255  # 0..254 split evenly into three classes
        while bad.any():
            raw[bad] = np.frombuffer(os.urandom(int(bad.sum())), dtype=np.uint8)
            bad = raw == 255
        return (raw % 3).astype(np.int64).reshape(shape) - 1

    def random_gaussian(self, shape, sigma):
        """Box-Muller on two 53-bit uniforms; z with |z| > 6 sigma redrawn, then rounded (as on the GPU)."""
        sigma = float(sigma)
        if not 0 < sigma < 2**40:
            raise ValueError(f"sigma must be positive and finite, got {sigma}")
        shape = tuple(shape)
        count = math.prod(shape)
        bound = 6.0 * sigma
        out = np.empty(count, dtype=np.int64)
        todo = np.arange(count)
        while todo.size:
            words = _secure_words(2 * todo.size)
            u1 = ((words[: todo.size] >> U64(11)).astype(np.float64) + 1.0) * 2.0**-53  # (0, 1]
            u2 = (words[todo.size :] >> U64(11)).astype(np.float64) * 2.0**-53
            z = sigma * np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
            keep = np.abs(z) <= bound  # the cut applies to z before rounding
            out[todo[keep]] = np.rint(z[keep]).astype(np.int64)
            todo = todo[~keep]
        return out.reshape(shape)


__all__ = ["NumpyRnsOps"]
