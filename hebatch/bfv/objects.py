"""BFV data objects (plaintexts, ciphertexts, keys), each tagged with its parameters' fingerprint and,
where it depends on a secret, the key id; binary serialization with a self-describing header."""

from __future__ import annotations

import json
import struct

import numpy as np

from .params import Params

MAGIC = b"HEBFV\x00"
VERSION = 1


class _Tagged:
    """An array `data` with the fingerprint of its parameters and the id of its secret key."""

    kind = "object"

    def __init__(self, data, fingerprint: str, key_id: str | None):
        self.data = data
        self.fingerprint = fingerprint
        self.key_id = key_id

    def _extra(self) -> dict:
        return {}

    def to_bytes(self) -> bytes:
        """Header (magic, version, JSON with kind, fingerprint, key id, shape) then little-endian uint64 data."""
        data = self.data.get() if hasattr(self.data, "get") and not isinstance(self.data, np.ndarray) else self.data
        data = np.ascontiguousarray(data, dtype="<u8")
        header = json.dumps({"kind": self.kind, "fingerprint": self.fingerprint, "key_id": self.key_id,
                             "shape": list(data.shape), **self._extra()}).encode()
        return MAGIC + struct.pack("<HI", VERSION, len(header)) + header + data.tobytes()

    @classmethod
    def _parse(cls, blob: bytes, params: Params):
        if not isinstance(blob, (bytes, bytearray, memoryview)):
            raise TypeError(f"b must be bytes, got {type(blob).__name__}")
        blob = bytes(blob)
        if blob[: len(MAGIC)] != MAGIC:
            raise ValueError("b: not a hebatch BFV object (bad magic)")
        version, size = struct.unpack_from("<HI", blob, len(MAGIC))
        if version != VERSION:
            raise ValueError(f"b: format version {version} is not supported (this is {VERSION})")
        start = len(MAGIC) + 6
        header = json.loads(blob[start:start + size])
        if header["kind"] != cls.kind:
            raise ValueError(f"b holds a {header['kind']}, not a {cls.kind}")
        check_fingerprint(header["fingerprint"], params, "b")
        shape = tuple(header["shape"])
        body = blob[start + size:]
        if len(body) != 8 * int(np.prod(shape)):
            raise ValueError(f"b: {len(body)} data bytes do not match the shape {shape}")
        data = np.frombuffer(body, dtype="<u8").astype(np.uint64).reshape(shape)
        return header, data

    @classmethod
    def from_bytes(cls, b, params: Params):
        """The object serialized by to_bytes; ValueError if it was made under other parameters."""
        header, data = cls._parse(b, params)
        return cls(data, header["fingerprint"], header["key_id"])

    def __repr__(self):
        return f"{type(self).__name__}(shape={tuple(self.data.shape)}, params={self.fingerprint}, key={self.key_id})"


def check_fingerprint(fingerprint: str, params: Params, name: str) -> None:
    if fingerprint != params.fingerprint:
        raise ValueError(f"{name} was made under parameters {fingerprint}, not these parameters {params.fingerprint}")


class Plaintext(_Tagged):
    """A batch of plaintext polynomials in coefficient form: data (..., n) uint64 mod t."""

    kind = "plaintext"

    def __init__(self, data, fingerprint: str, key_id: str | None = None):
        super().__init__(data, fingerprint, None)

    @property
    def batch_shape(self):
        return tuple(self.data.shape[:-1])


class Ciphertext(_Tagged):
    """A batch of ciphertexts in coefficient form: data (..., K, L, n) uint64, K = 2 (or 3 before
    relinearization), L RNS limbs of q."""

    kind = "ciphertext"

    @property
    def batch_shape(self):
        return tuple(self.data.shape[:-3])

    @property
    def size(self) -> int:
        """Number of polynomial components (2, or 3 after an unrelinearized multiply)."""
        return int(self.data.shape[-3])

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


class SecretKey(_Tagged):
    """The ternary secret s, NTT form over the limbs of q and the special prime: data (L + 1, n)."""

    kind = "secret_key"


class PublicKey(_Tagged):
    """(-(a s + e), a) in NTT form over q: data (2, L, n)."""

    kind = "public_key"


class RelinKey(_Tagged):
    """Key-switching key from s^2 to s: data (L, 2, L + 1, n), NTT form over q and the special prime;
    row j encrypts P [(Q/q_j)^-1]_{q_j} (Q/q_j) s^2 (the RNS gadget)."""

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
        return cls(data, header["fingerprint"], header["key_id"], header["elements"])

    def key_for(self, galois_elt: int):
        if galois_elt not in self.elements:
            raise ValueError(f"galois_keys: no key for Galois element {galois_elt} (have {list(self.elements)}); "
                             "generate it with keygen(rotations=[...])")
        return self.data[self.elements.index(galois_elt)]


class Keys:
    """What keygen returns: .secret, .public, .relin, .galois (and .key_id, shared by all four)."""

    def __init__(self, secret: SecretKey, public: PublicKey, relin: RelinKey, galois: GaloisKeys):
        self.secret, self.public, self.relin, self.galois = secret, public, relin, galois
        self.key_id = public.key_id
        self.fingerprint = public.fingerprint

    def public_keys(self) -> "Keys":
        """The same keys without the secret (what to ship to workers that compute)."""
        return Keys(None, self.public, self.relin, self.galois)

    def to_bytes(self) -> bytes:
        """The four keys (the secret only if present), each as its own to_bytes, with length prefixes."""
        parts = [k.to_bytes() if k is not None else b"" for k in (self.secret, self.public, self.relin, self.galois)]
        return MAGIC + b"KEYS" + b"".join(struct.pack("<Q", len(p)) + p for p in parts)

    @classmethod
    def from_bytes(cls, b, params: Params) -> "Keys":
        """Keys written by Keys.to_bytes; ValueError if they were made under other parameters."""
        b = bytes(b)
        head = MAGIC + b"KEYS"
        if b[:len(head)] != head:
            raise ValueError("b: not a hebatch BFV key set (bad magic)")
        parts, pos = [], len(head)
        for _ in range(4):
            (size,) = struct.unpack_from("<Q", b, pos)
            parts.append(b[pos + 8:pos + 8 + size])
            pos += 8 + size
        secret = SecretKey.from_bytes(parts[0], params) if parts[0] else None
        return cls(secret, PublicKey.from_bytes(parts[1], params), RelinKey.from_bytes(parts[2], params),
                   GaloisKeys.from_bytes(parts[3], params))

    def __repr__(self):
        return f"Keys(params={self.fingerprint}, key={self.key_id}, galois={list(self.galois.elements)})"


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
    array.attrs["hebatch_bfv"] = {"kind": Ciphertext.kind, "version": VERSION, "fingerprint": ct.fingerprint,
                                  "key_id": ct.key_id}


def load_zarr(path, params: Params) -> Ciphertext:
    """The batch written by save_zarr; ValueError if it was made under other parameters."""
    import zarr

    array = zarr.open_array(store=str(path), mode="r")
    meta = array.attrs.get("hebatch_bfv")
    if not meta or meta.get("kind") != Ciphertext.kind:
        raise ValueError(f"{path} holds no hebatch BFV ciphertexts")
    check_fingerprint(meta["fingerprint"], params, str(path))
    return Ciphertext(np.asarray(array[...], dtype=np.uint64), meta["fingerprint"], meta["key_id"])
