"""BGV data objects (plaintexts, ciphertexts, keys), tagged with their parameters' fingerprint and,
where a secret is involved, the key id; binary serialization with a versioned header and a checksum.

Layout of to_bytes (hebatch.rlwe.frame.TrailingHashFrame): MAGIC (6 bytes), version (uint16), header
length (uint32), the JSON header (kind, fingerprint, key id, shape, extras), little-endian uint64 data,
then SHA-256 of everything before it. from_bytes raises ValueError on any malformation: magic, version,
lengths, JSON, header fields, checksum, kind, parameters, shape, and residues out of range for their
moduli.
"""

from __future__ import annotations

from ..rlwe import objects as base
from ..rlwe.checks import check_fingerprint
from ..rlwe.frame import TrailingHashFrame
from .params import Params

MAGIC = b"HEBGV\x00"
KEYS_MAGIC = b"HEBGVK"
VERSION = 1

FRAME = TrailingHashFrame(MAGIC, VERSION, "hebatch BGV object")
KEYS_FRAME = TrailingHashFrame(KEYS_MAGIC, VERSION, "hebatch BGV key set")


class _Tagged(base.Tagged):
    frame = FRAME
    scheme = "bgv"
    params_type = Params


class Plaintext(_Tagged, base.Plaintext):
    """A batch of plaintext polynomials in coefficient form: data (..., n) uint64 mod t."""


class Ciphertext(_Tagged, base.Ciphertext):
    """A batch of ciphertexts in coefficient form: data (..., K, l + 1, n) uint64, K = 2 (3 before
    relinearization), over the limbs q_0 .. q_l of the chain (level l)."""

    @classmethod
    def _layout(cls, params, shape, header):
        L = len(params.q)
        ok = len(shape) >= 3 and shape[-3] in (2, 3) and 1 <= shape[-2] <= L and shape[-1] == params.n
        return ok, params.q[: shape[-2]] if ok else None, f"(..., 2 or 3, l + 1 <= {L} limbs, n={params.n})"

    @property
    def level(self) -> int:
        """Position in the modulus chain: the ciphertext is over q_0 .. q_level."""
        return int(self.data.shape[-2]) - 1


class SecretKey(_Tagged, base.SecretKey):
    """The ternary secret s, NTT form over the chain and the special prime: data (L + 1, n)."""


class PublicKey(_Tagged, base.PublicKey):
    """(-(a s + t e), a) in NTT form over the chain: data (2, L, n)."""


class RelinKey(_Tagged, base.RelinKey):
    """Key-switching key from s^2 to s: data (L, 2, L + 1, n), NTT form over the chain and the special
    prime; row j is the RNS-gadget row for the target t^-1 s^2 (the t-scaled error of BGV, folded)."""


class GaloisKeys(_Tagged, base.GaloisKeys):
    """Key-switching keys from s(X^g) to s for the Galois elements `elements`: data (G, L, 2, L + 1, n)."""


class Keys(base.Keys):
    """What keygen returns: .secret, .public, .relin, .galois (and .key_id, shared by all four)."""

    frame = KEYS_FRAME
    scheme = "bgv"
    parts = (SecretKey, PublicKey, RelinKey, GaloisKeys)
    id_salt = b"bgv"


__all__ = [
    "Plaintext",
    "Ciphertext",
    "SecretKey",
    "PublicKey",
    "RelinKey",
    "GaloisKeys",
    "Keys",
    "check_fingerprint",
    "MAGIC",
    "VERSION",
]
