"""What BGV takes from the BFV code: the RNS engine, the slot layout of the batch encoder and the
key-switching key generator. Every use goes through the functions here (one place to re-point)."""

from __future__ import annotations

from types import SimpleNamespace

from ..backend import get
from ..bfv import context as _bfv_context
from ..device import resolve_device
from ..ntt import intt as _ring_intt
from ..ntt import ntt as _ring_ntt


def engine(backend: str):
    """The RNS engine (RnsOps) of a backend word "cpu", "gpu" or "auto", resolved as BFV resolves it."""
    return get(resolve_device(backend, "backend")).rns


def ntt(x, moduli):
    """Negacyclic NTT of every limb, natural order (the scheme only transforms reduced residues)."""
    return _ring_ntt(x, list(moduli), negacyclic=True, check=False)


def intt(x, moduli):
    """Exact inverse of ntt."""
    return _ring_intt(x, list(moduli), negacyclic=True, check=False)


def slot_index(n: int, ops):
    """NTT position of each of the n slots (BFV's batch encoder layout: a 2 x n/2 matrix whose rows
    X -> X^3 rotates and X -> X^-1 swaps), on the engine's device."""
    return _bfv_context.Context._slot_index.func(SimpleNamespace(n=n, ops=ops))


def encode_slots(ops, n: int, t: int, index, values):
    """BFV's batch encoder: slot values (..., n) in [0, t) -> plaintext coefficients (..., n) mod t, with
    its checks of the values (type, shape, range)."""
    shim = SimpleNamespace(ops=ops, xp=ops.xp, n=n, t=t, _slot_index=index, params=SimpleNamespace(fingerprint=None))
    return _bfv_context.Context.encode(shim, values).data


def decode_slots(data, t: int, index):
    """Inverse of encode_slots (BFV's decode without its object checks)."""
    return ntt(data[..., None, :], (t,))[..., 0, :][..., index]


def galois_element(n: int, step: int) -> int:
    """The Galois element 3^step mod 2n that rotates both slot rows left by `step`."""
    return _bfv_context.Context.galois_element(SimpleNamespace(n=n), step)


def key_switching_key(ops, q, special, s_ntt, target_ntt):
    """BFV's RNS-gadget key-switching key from target to s over q and the special prime: data
    (L, 2, L + 1, n), row j = (-(a_j s) + e_j + P g_j target, a_j), NTT form."""
    q = tuple(q)
    shim = SimpleNamespace(
        ops=ops, xp=ops.xp, qp=q + (special,), L=len(q), n=int(s_ntt.shape[-1]), params=SimpleNamespace(special=special)
    )
    return _bfv_context.Context._ksk(shim, s_ntt, target_ntt)


__all__ = ["engine", "ntt", "intt", "slot_index", "encode_slots", "decode_slots", "galois_element", "key_switching_key"]
