"""BFV data objects (plaintexts, ciphertexts, keys), each tagged with its parameters' fingerprint and,
where it depends on a secret, the key id; binary serialization with a self-describing header.

Frame (hebatch.rlwe.frame.DigestFrame): MAGIC | version u16 | header length u32 | body length u64 |
BLAKE2b-256 digest | header | body. The digest covers every byte but itself, so a flip anywhere, the
header included, is caught before any field is trusted; the lengths say whether a short or long blob
was cut or extended."""

from __future__ import annotations

import numpy as np

from ..rlwe import objects as base
from ..rlwe.checks import check_fingerprint, check_reduced
from ..rlwe.frame import DigestFrame
from ..rlwe.keys import check_secret_matches as _check_secret_matches
from ..rlwe.keys import key_id_of
from .params import Params

MAGIC = b"HEBFV\x00"
VERSION = 2  # 2: lengths and a BLAKE2b digest in the frame; 1 had neither

FRAME = DigestFrame(MAGIC, VERSION, b"hebatch-bfv", "hebatch BFV object")
_PREFIX = FRAME.prefix
_DIGEST = FRAME.DIGEST
_FRAME = FRAME.size
_digest = FRAME.digest
_frame = FRAME.pack
_unframe = FRAME.unpack


def check_secret_matches(secret_data, public_data, params: Params) -> None:
    """ValueError unless public = (-(a s + e), a) for this secret s and a small error e."""
    _check_secret_matches(secret_data, public_data, params.q)


class _Tagged(base.Tagged):
    frame = FRAME
    scheme = "bfv"
    params_type = Params


class Plaintext(_Tagged, base.Plaintext):
    """A batch of plaintext polynomials in coefficient form: data (..., n) uint64 mod t."""


class Ciphertext(_Tagged, base.Ciphertext):
    """A batch of ciphertexts in coefficient form: data (..., K, L, n) uint64, K = 2 (or 3 before
    relinearization), L RNS limbs of q."""


class SecretKey(_Tagged, base.SecretKey):
    """The ternary secret s, NTT form over the limbs of q and the special prime: data (L + 1, n)."""


class PublicKey(_Tagged, base.PublicKey):
    """(-(a s + e), a) in NTT form over q: data (2, L, n)."""


class RelinKey(_Tagged, base.RelinKey):
    """Key-switching key from s^2 to s: data (D, 2, L + 1, n), NTT form over q and the special prime; row k
    encrypts P [(Q/Q_k)^-1]_{Q_k} (Q/Q_k) s^2 (the RNS gadget), Q_k the product of digit k's limbs of q
    (params.digit_limbs of them; D = L and Q_k = q_k for one)."""


class GaloisKeys(_Tagged, base.GaloisKeys):
    """Key-switching keys from s(X^g) to s for the Galois elements `elements`: data (G, D, 2, L + 1, n)."""


class Keys(base.Keys):
    """What keygen returns: .secret, .public, .relin, .galois (and .key_id, shared by all four)."""

    frame = FRAME
    scheme = "bfv"
    parts = (SecretKey, PublicKey, RelinKey, GaloisKeys)


def save_zarr(ct: Ciphertext, path, *, chunk: int | None = None) -> None:
    """Write a batch of ciphertexts to a Zarr array at `path` (chunked along the batch axis), with the
    fingerprint and key id in its attributes."""
    import zarr

    if not isinstance(ct, Ciphertext):
        raise TypeError(f"ct must be a bfv.Ciphertext, got {type(ct).__name__}")
    data = ct.data.get() if hasattr(ct.data, "get") and not isinstance(ct.data, np.ndarray) else np.asarray(ct.data)
    if data.ndim == 3:
        data = data[None]
    chunks = (chunk or max(1, min(data.shape[0], 2**24 // (8 * int(np.prod(data.shape[1:]))) or 1)),) + data.shape[1:]
    array = zarr.create_array(store=str(path), shape=data.shape, chunks=chunks, dtype="uint64", overwrite=True)
    array[...] = data
    array.attrs["hebatch_bfv"] = {
        "kind": Ciphertext.kind,
        "version": VERSION,
        "fingerprint": ct.fingerprint,
        "key_id": ct.key_id,
    }


def load_zarr(path, params: Params) -> Ciphertext:
    """The batch written by save_zarr; ValueError if it was made under other parameters."""
    import zarr

    array = zarr.open_array(store=str(path), mode="r")
    meta = array.attrs.get("hebatch_bfv")
    if not meta or meta.get("kind") != Ciphertext.kind:
        raise ValueError(f"{path} holds no hebatch BFV ciphertexts")
    check_fingerprint(meta["fingerprint"], params, str(path))
    return Ciphertext(np.asarray(array[...], dtype=np.uint64), meta["fingerprint"], meta["key_id"])


__all__ = [
    "Plaintext",
    "Ciphertext",
    "SecretKey",
    "PublicKey",
    "RelinKey",
    "GaloisKeys",
    "Keys",
    "save_zarr",
    "load_zarr",
    "check_fingerprint",
    "check_reduced",
    "check_secret_matches",
    "key_id_of",
    "MAGIC",
    "VERSION",
]
