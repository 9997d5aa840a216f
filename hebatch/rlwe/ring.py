"""The ring Z_q[X]/(X^n + 1) over RNS limbs: the backend's RNS engine, the negacyclic transforms every
scheme step uses, and the phase c0 + c1 s + c2 s^2 + ... of a ciphertext."""

from __future__ import annotations

import numpy as np

from ..backend import get
from ..device import resolve_device
from ..field import is_prime
from ..ntt import intt as _ring_intt
from ..ntt import intt_product, ntt_spread
from ..ntt import ntt as _ring_ntt


def engine(backend: str):
    """The RNS engine (RnsOps) of a device word "cpu", "gpu" or "auto" (ValueError naming `backend`)."""
    return get(resolve_device(backend, "backend")).rns


def ntt(x, moduli):
    """Negacyclic NTT of every limb (the ring Z_q[X]/(X^n + 1)), natural order, on x's device. The
    schemes only transform reduced residues, so the entry scan (a read and, on a GPU, a wait) is skipped."""
    return _ring_ntt(x, list(moduli), negacyclic=True, check=False)


def ntt_digits(x, moduli):
    """ntt of each row of x (..., k, n), entries below max(moduli), on every limb of `moduli`:
    (..., k, len(moduli), n) (the RNS digits of key switching spread over q and P, transformed)."""
    return ntt_spread(x, list(moduli), negacyclic=True)


def intt(x, moduli):
    """Exact inverse of ntt."""
    return _ring_intt(x, list(moduli), negacyclic=True, check=False)


def prime_below(bound: int, avoid) -> int:
    """The largest prime below `bound` that is not in `avoid`."""
    p = bound - 1
    while not is_prime(p) or p in avoid:
        p -= 1
    return p


def phase(ops, c, s_ntt, moduli):
    """c0 + c1 s + c2 s^2 + ... mod every limb, coefficient form (..., len(moduli), n), for ciphertext data
    c (..., K, len(moduli), n) in coefficient form and the secret s in NTT form over those limbs."""
    return ops.add(c[..., 0, :, :], masked_phase(ops, c, s_ntt, moduli), moduli)


def masked_phase(ops, c, s_ntt, moduli):
    """The phase without c0: c1 s + c2 s^2 + ... mod every limb, coefficient form (..., len(moduli), n).
    Horner in s, ((c_{K-1} s + c_{K-2}) s + ...) s, in NTT form, then one inverse transform (the last
    product taken in it)."""
    c_ntt = ntt(c[..., 1:, :, :], moduli)
    acc = c_ntt[..., -1, :, :]
    for k in range(c.shape[-3] - 2, 0, -1):
        acc = ops.add(ops.mul(acc, s_ntt, moduli), c_ntt[..., k - 1, :, :], moduli)
    return intt_product(acc, s_ntt, list(moduli), negacyclic=True)


def lifted(ops, m, t: int, moduli):
    """Plaintext coefficients m (..., n) in [0, t) as centred values in (-t/2, t/2] over `moduli`:
    (..., len(moduli), n)."""
    return ops.centered_lift(m[..., None, :], t, moduli)


def stack_pair(xp, a, b):
    """Ciphertext data a and b (..., 2, L, n), batch axes broadcast, stacked as (..., 4, L, n)."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    return xp.concatenate([xp.broadcast_to(a, shape), xp.broadcast_to(b, shape)], axis=-3)


def pad_components(xp, a, b):
    """Ciphertext data a and b with as many components: the shorter padded with zero components."""
    ka, kb = a.shape[-3], b.shape[-3]
    if ka == kb:
        return a, b

    def pad(d, k):
        zeros = xp.zeros(d.shape[:-3] + (k - d.shape[-3],) + d.shape[-2:], dtype=np.uint64)
        return xp.concatenate([d, zeros], axis=-3)

    return (pad(a, kb), b) if ka < kb else (a, pad(b, ka))


def with_c0(xp, c, c0):
    """Ciphertext data c with its component 0 replaced by c0 (..., L, n), batch axes broadcast."""
    rest = xp.broadcast_to(c[..., 1:, :, :], c0.shape[:-2] + (c.shape[-3] - 1,) + c.shape[-2:])
    return xp.concatenate([c0[..., None, :, :], rest], axis=-3)


__all__ = [
    "engine",
    "ntt",
    "ntt_digits",
    "intt",
    "prime_below",
    "phase",
    "lifted",
    "stack_pair",
    "pad_components",
    "with_c0",
]
