"""Encryption over the RNS limbs of q, for any plaintext encoding: the scheme says what a plaintext adds
to c0 (BFV: Delta m; BGV: m itself) and by what its errors are multiplied (BFV: 1; BGV: t)."""

from __future__ import annotations

from . import ring
from .keys import SIGMA


def public_zero(ops, q, pk, batch: tuple, error_factor: int = 1):
    """Encryptions of zero under the public key pk (2, L, n), NTT form over q, for every item of
    `batch`: (pk0 u + f e0, pk1 u + f e1) in coefficient form, (..., 2, L, n), u ternary, e Gaussian,
    f = error_factor. The caller adds its plaintext term to component 0."""
    L, n = len(q), int(pk.shape[-1])
    u = ring.ntt(ops.from_signed(ops.random_ternary(batch + (1, n)), q), q)
    e = ops.from_signed(ops.random_gaussian(batch + (2, 1, n), SIGMA), q)
    if error_factor != 1:
        e = ops.mul_scalar(e, [error_factor] * L, q)
    return ops.add(ring.intt(ops.mul(u[..., None, :, :], pk, q), q), e, q)


def symmetric(ops, q, s_ntt, batch: tuple, plain_term, error_factor: int = 1):
    """Secret-key encryptions (-(a s) + f e + plain_term(), a), a uniform, for every item of `batch`, over
    the limbs q (s_ntt: the secret's NTT form over them): (..., 2, L, n). plain_term is called after
    the sampling, giving (..., L, n)."""
    L, n = len(q), int(s_ntt.shape[-1])
    a = ops.random_uniform(batch + (L, n), q)
    e = ops.from_signed(ops.random_gaussian(batch + (1, n), SIGMA), q)
    if error_factor != 1:
        e = ops.mul_scalar(e, [error_factor] * L, q)
    c0 = ops.sub(ops.add(e, plain_term(), q), ring.intt(ops.mul(ring.ntt(a, q), s_ntt, q), q), q)
    return ops.xp.stack([c0, a], axis=-3)


__all__ = ["public_zero", "symmetric"]
