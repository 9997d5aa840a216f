"""BGV data objects (plaintexts, ciphertexts, keys), tagged with their parameters' fingerprint and,
where a secret is involved, the key id; binary serialization with a versioned header and a checksum.

Layout of to_bytes: MAGIC (6 bytes), version (uint16), header length (uint32), the JSON header (kind,
fingerprint, key id, shape, extras), little-endian uint64 data, then SHA-256 of everything before it.
from_bytes raises ValueError on any malformation: magic, version, lengths, JSON, header fields,
checksum, kind, parameters, shape, and residues out of range for their moduli.
"""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np

from .params import Params

MAGIC = b"HEBGV\x00"
KEYS_MAGIC = b"HEBGVK"
VERSION = 1
_CHECKSUM = 32  # bytes of SHA-256
_PREFIX = struct.Struct("<HI")


def check_fingerprint(fingerprint, params: Params, name: str) -> None:
    if fingerprint != params.fingerprint:
        raise ValueError(f"{name} was made under parameters {fingerprint}, not these parameters {params.fingerprint}")


def _host(data) -> np.ndarray:
    return data.get() if hasattr(data, "get") and not isinstance(data, np.ndarray) else np.asarray(data)


def _frame(magic: bytes, header: dict, body: bytes) -> bytes:
    head = json.dumps(header, sort_keys=True).encode()
    blob = magic + _PREFIX.pack(VERSION, len(head)) + head + body
    return blob + hashlib.sha256(blob).digest()


def _unframe(blob, magic: bytes, what: str) -> tuple[dict, bytes]:
    """Header dict and body of a framed blob, every framing rule checked."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"b must be bytes, got {type(blob).__name__}")
    blob = bytes(blob)
    start = len(magic) + _PREFIX.size
    if len(blob) < start + _CHECKSUM or blob[: len(magic)] != magic:
        raise ValueError(f"b: not a hebatch BGV {what} (bad magic or too short)")
    version, size = _PREFIX.unpack_from(blob, len(magic))
    if version != VERSION:
        raise ValueError(f"b: format version {version} is not supported (this is {VERSION})")
    if start + size > len(blob) - _CHECKSUM:
        raise ValueError(f"b: header length {size} runs past the end of the data")
    if hashlib.sha256(blob[:-_CHECKSUM]).digest() != blob[-_CHECKSUM:]:
        raise ValueError("b: checksum mismatch (the bytes are damaged or truncated)")
    try:
        header = json.loads(blob[start : start + size])
    except (UnicodeDecodeError, ValueError):
        raise ValueError("b: the header is not valid JSON") from None
    if not isinstance(header, dict):
        raise ValueError("b: the header must be a JSON object")
    return header, blob[start + size : -_CHECKSUM]


class _Tagged:
    """An array `data` with the fingerprint of its parameters and the id of its secret key."""

    kind = "object"

    def __init__(self, data, fingerprint: str, key_id: str | None):
        self.data = data
        self.fingerprint = fingerprint
        self.key_id = key_id

    def _extra(self) -> dict:
        return {}

    @staticmethod
    def _moduli(params: Params, shape) -> list[int] | None:
        """The modulus of each limb (axis -2) of data of this shape, or None for one modulus (t)."""
        return list(params.q) + [params.special]

    def to_bytes(self) -> bytes:
        data = np.ascontiguousarray(_host(self.data), dtype="<u8")
        header = {
            "kind": self.kind,
            "fingerprint": self.fingerprint,
            "key_id": self.key_id,
            "shape": list(data.shape),
            **self._extra(),
        }
        return _frame(MAGIC, header, data.tobytes())

    @classmethod
    def _parse(cls, blob, params: Params):
        if not isinstance(params, Params):
            raise TypeError(f"params must be a bgv.Params, got {type(params).__name__}")
        header, body = _unframe(blob, MAGIC, "object")
        for key, kind in (("kind", str), ("fingerprint", str), ("shape", list)):
            if not isinstance(header.get(key), kind):
                raise ValueError(f"b: header field {key!r} is missing or not a {kind.__name__}")
        if header["kind"] != cls.kind:
            raise ValueError(f"b holds a {header['kind']}, not a {cls.kind}")
        if header.get("key_id") is not None and not isinstance(header["key_id"], str):
            raise ValueError("b: header field 'key_id' must be a string or null")
        check_fingerprint(header["fingerprint"], params, "b")
        shape = header["shape"]
        if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
            raise ValueError(f"b: shape {shape} must be a list of non-negative ints")
        shape = tuple(shape)
        if len(body) != 8 * int(np.prod(shape, dtype=object)):
            raise ValueError(f"b: {len(body)} data bytes do not match the shape {shape}")
        data = np.frombuffer(body, dtype="<u8").astype(np.uint64).reshape(shape)
        cls._check_data(data, params)
        return header, data

    @classmethod
    def _check_data(cls, data, params: Params):
        """Shape and residue range against the parameters (ValueError naming the rule)."""
        if data.ndim < 2:
            raise ValueError(f"b: a {cls.kind} needs a limb axis, got shape {data.shape}")
        moduli = cls._moduli(params, data.shape)
        if data.shape[-1] != params.n or data.shape[-2] != len(moduli):
            raise ValueError(
                f"b: a {cls.kind} of these parameters has {len(moduli)} limbs of n = {params.n}, got shape {data.shape}"
            )
        if data.size:
            top = data.reshape(-1, len(moduli), params.n).max(axis=(0, 2))
            bad = [i for i, m in enumerate(moduli) if int(top[i]) >= m]
            if bad:
                raise ValueError(f"b: limb {bad[0]} holds values not reduced mod {moduli[bad[0]]}")

    @classmethod
    def from_bytes(cls, b, params: Params):
        """The object serialized by to_bytes; ValueError if malformed or made under other parameters."""
        header, data = cls._parse(b, params)
        return cls(data, header["fingerprint"], header.get("key_id"))

    def __repr__(self):
        return f"{type(self).__name__}(shape={tuple(self.data.shape)}, params={self.fingerprint}, key={self.key_id})"


class Plaintext(_Tagged):
    """A batch of plaintext polynomials in coefficient form: data (..., n) uint64 mod t."""

    kind = "plaintext"

    def __init__(self, data, fingerprint: str, key_id: str | None = None):
        super().__init__(data, fingerprint, None)

    @property
    def batch_shape(self):
        return tuple(self.data.shape[:-1])

    @classmethod
    def _check_data(cls, data, params: Params):
        if data.ndim < 1 or data.shape[-1] != params.n:
            raise ValueError(f"b: plaintext data must have shape (..., n={params.n}), got {data.shape}")
        if data.size and int(data.max()) >= params.t:
            raise ValueError(f"b: plaintext values must be reduced mod t = {params.t}")


class Ciphertext(_Tagged):
    """A batch of ciphertexts in coefficient form: data (..., K, l + 1, n) uint64, K = 2 (3 before
    relinearization), over the limbs q_0 .. q_l of the chain (level l)."""

    kind = "ciphertext"

    @property
    def batch_shape(self):
        return tuple(self.data.shape[:-3])

    @property
    def size(self) -> int:
        """Number of polynomial components (2, or 3 after an unrelinearized multiply)."""
        return int(self.data.shape[-3])

    @property
    def level(self) -> int:
        """Position in the modulus chain: the ciphertext is over q_0 .. q_level."""
        return int(self.data.shape[-2]) - 1

    def __len__(self):
        return int(self.data.shape[0]) if self.data.ndim > 3 else 1

    def __getitem__(self, index):
        """Batch items (integer or slice on the leading batch axes) as a Ciphertext."""
        if self.data.ndim <= 3:
            raise TypeError("a ciphertext without batch axes cannot be indexed")
        data = self.data[index]
        if data.ndim < 3:
            raise IndexError("index the batch axes only")
        return Ciphertext(data, self.fingerprint, self.key_id)

    @classmethod
    def _check_data(cls, data, params: Params):
        if data.ndim < 3 or data.shape[-3] not in (2, 3) or not 1 <= data.shape[-2] <= len(params.q):
            raise ValueError(
                f"b: ciphertext data must have shape (..., 2 or 3, 1..{len(params.q)}, n), got {data.shape}"
            )
        super()._check_data(data, params)

    @staticmethod
    def _moduli(params, shape):
        return list(params.q[: shape[-2]])


class SecretKey(_Tagged):
    """The ternary secret s, NTT form over the chain and the special prime: data (L + 1, n)."""

    kind = "secret_key"


class PublicKey(_Tagged):
    """(-(a s) + t e, a) in NTT form over the chain: data (2, L, n)."""

    kind = "public_key"

    @staticmethod
    def _moduli(params, shape):
        return list(params.q)


class RelinKey(_Tagged):
    """Key-switching key from s^2 to s: data (L, 2, L + 1, n), NTT form over the chain and the special
    prime; row j is BFV's RNS-gadget row for the target t^-1 s^2 (the t-scaled error of BGV, folded)."""

    kind = "relin_key"


class GaloisKeys(_Tagged):
    """Key-switching keys from s(X^g) to s for the Galois elements `elements`: data (G, L, 2, L + 1, n)."""

    kind = "galois_keys"

    def __init__(self, data, fingerprint: str, key_id: str | None, elements=()):
        super().__init__(data, fingerprint, key_id)
        self.elements = tuple(int(g) for g in elements)

    def _extra(self):
        return {"elements": list(self.elements)}

    @classmethod
    def from_bytes(cls, b, params: Params):
        header, data = cls._parse(b, params)
        elements = header.get("elements")
        if (
            not isinstance(elements, list)
            or len(elements) != data.shape[0]
            or not all(isinstance(g, int) and g % 2 == 1 and 0 < g < 2 * params.n for g in elements)
        ):
            raise ValueError(f"b: 'elements' must list one odd Galois element below 2n per key, got {elements!r}")
        return cls(data, header["fingerprint"], header.get("key_id"), elements)

    def key_for(self, galois_elt: int):
        if galois_elt not in self.elements:
            raise ValueError(
                f"galois_keys: no key for Galois element {galois_elt} (have {list(self.elements)}); "
                "generate it with keygen(rotations=[...])"
            )
        return self.data[self.elements.index(galois_elt)]


class Keys:
    """What keygen returns: .secret, .public, .relin, .galois (and .key_id, shared by all four)."""

    def __init__(self, secret: SecretKey | None, public: PublicKey, relin: RelinKey, galois: GaloisKeys):
        self.secret, self.public, self.relin, self.galois = secret, public, relin, galois
        self.key_id = public.key_id
        self.fingerprint = public.fingerprint

    def public_keys(self) -> Keys:
        """The same keys without the secret (what to ship to workers that compute)."""
        return Keys(None, self.public, self.relin, self.galois)

    def to_bytes(self) -> bytes:
        """The four keys (the secret only if present), each framed by its own to_bytes, in one frame."""
        parts = [k.to_bytes() if k is not None else b"" for k in (self.secret, self.public, self.relin, self.galois)]
        header = {
            "kind": "keys",
            "fingerprint": self.fingerprint,
            "key_id": self.key_id,
            "sizes": [len(p) for p in parts],
        }
        return _frame(KEYS_MAGIC, header, b"".join(parts))

    @classmethod
    def from_bytes(cls, b, params: Params) -> Keys:
        """Keys written by Keys.to_bytes; ValueError if malformed or made under other parameters."""
        header, body = _unframe(b, KEYS_MAGIC, "key set")
        sizes = header.get("sizes")
        if (
            header.get("kind") != "keys"
            or not isinstance(sizes, list)
            or len(sizes) != 4
            or not all(isinstance(s, int) and s >= 0 for s in sizes)
            or sum(sizes) != len(body)
        ):
            raise ValueError("b: the key set header does not describe its four parts")
        check_fingerprint(header.get("fingerprint"), params, "b")
        parts, pos = [], 0
        for size in sizes:
            parts.append(body[pos : pos + size])
            pos += size
        if not all(parts[1:]):
            raise ValueError("b: a key set needs its public, relinearization and Galois keys")
        keys = cls(
            SecretKey.from_bytes(parts[0], params) if parts[0] else None,
            PublicKey.from_bytes(parts[1], params),
            RelinKey.from_bytes(parts[2], params),
            GaloisKeys.from_bytes(parts[3], params),
        )
        ids = {k.key_id for k in (keys.secret, keys.public, keys.relin, keys.galois) if k is not None}
        if ids != {header.get("key_id")}:
            raise ValueError(f"b: the keys of the set belong to different key ids {sorted(map(str, ids))}")
        return keys

    def __repr__(self):
        return f"Keys(params={self.fingerprint}, key={self.key_id}, galois={list(self.galois.elements)})"


__all__ = ["Plaintext", "Ciphertext", "SecretKey", "PublicKey", "RelinKey", "GaloisKeys", "Keys", "MAGIC", "VERSION"]
