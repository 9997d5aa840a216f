"""BFV data objects (plaintexts, ciphertexts, keys), each tagged with its parameters' fingerprint and,
where it depends on a secret, the key id; binary serialization with a self-describing header."""

from __future__ import annotations

import hashlib
import json
import math
import struct

import numpy as np

from ..device import array_module, to_host
from .params import Params

MAGIC = b"HEBFV\x00"
VERSION = 2  # 2: lengths and a BLAKE2b digest in the frame; 1 had neither

# Frame: MAGIC | version u16 | header length u32 | body length u64 | digest (32 bytes) | header | body.
# The digest (BLAKE2b-256) covers every byte but itself, so a flip anywhere, the header included, is caught
# before any field is trusted; the lengths say whether a short or long blob was cut or extended.
_PREFIX = struct.Struct("<6sHIQ")
_DIGEST = 32
_FRAME = _PREFIX.size + _DIGEST


def _digest(prefix: bytes, rest: bytes) -> bytes:
    h = hashlib.blake2b(digest_size=_DIGEST, person=b"hebatch-bfv")
    h.update(prefix)
    h.update(rest)
    return h.digest()


def _frame(header: dict, body: bytes) -> bytes:
    head = json.dumps(header, sort_keys=True).encode()
    prefix = _PREFIX.pack(MAGIC, VERSION, len(head), len(body))
    return prefix + _digest(prefix, head + body) + head + body


def _unframe(blob, name: str = "b") -> tuple[dict, bytes]:
    """(header, body) of a frame, or a ValueError naming the part that is wrong."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes, got {type(blob).__name__}")
    blob = bytes(blob)
    if blob[: len(MAGIC)] != MAGIC[: len(blob)] or len(blob) < len(MAGIC):
        raise ValueError(f"{name}: not a hebatch BFV object (bad magic)")
    if len(blob) < _FRAME:
        raise ValueError(f"{name}: truncated: {len(blob)} bytes, shorter than the {_FRAME}-byte frame header")
    _, version, head_len, body_len = _PREFIX.unpack_from(blob)
    if version != VERSION:
        raise ValueError(
            f"{name}: format version {version} is not supported (this is {VERSION}); "
            "written by another release, or the version field is corrupt"
        )
    want = _FRAME + head_len + body_len
    if len(blob) < want:
        raise ValueError(
            f"{name}: truncated: {len(blob)} bytes, but the frame says {want} (or a length field is corrupt)"
        )
    if len(blob) > want:
        raise ValueError(
            f"{name}: {len(blob) - want} trailing bytes after the {want}-byte object (or a length field is corrupt)"
        )
    if _digest(blob[: _PREFIX.size], blob[_FRAME:]) != blob[_PREFIX.size : _FRAME]:
        raise ValueError(f"{name}: checksum mismatch: the bytes are corrupt (BLAKE2b digest over header and data)")
    try:
        header = json.loads(blob[_FRAME : _FRAME + head_len].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ValueError(f"{name}: header is not valid UTF-8 JSON") from None
    if not isinstance(header, dict):
        raise ValueError(f"{name}: header is not a JSON object")
    for field, types in (("kind", str), ("fingerprint", str), ("key_id", (str, type(None)))):
        if not isinstance(header.get(field), types):
            raise ValueError(f"{name}: header field {field!r} is missing or has the wrong type")
    return header, blob[_FRAME + head_len :]


def _host(data) -> np.ndarray:
    data = data.get() if hasattr(data, "get") and not isinstance(data, np.ndarray) else data
    return np.ascontiguousarray(data, dtype="<u8")


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
        """A versioned frame: JSON header (kind, fingerprint, key id, shape), little-endian uint64 data, and a
        BLAKE2b digest over both."""
        data = _host(self.data)
        header = {
            "kind": self.kind,
            "fingerprint": self.fingerprint,
            "key_id": self.key_id,
            "shape": list(data.shape),
            **self._extra(),
        }
        return _frame(header, data.tobytes())

    @classmethod
    def _layout(cls, params: Params, shape: tuple, header: dict):
        """(is the shape valid for these parameters, moduli of the limbs along axis -2 or t, the rule)."""
        raise NotImplementedError

    @classmethod
    def _parse(cls, blob, params: Params, name: str = "b"):
        header, body = _unframe(blob, name)
        if header["kind"] != cls.kind:
            raise ValueError(f"{name} holds a {header['kind']}, not a {cls.kind}")
        check_fingerprint(header["fingerprint"], params, name)
        shape = header.get("shape")
        if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
            raise ValueError(f"{name}: header field 'shape' must be a list of non-negative ints, got {shape!r}")
        shape = tuple(shape)
        if len(body) != 8 * math.prod(shape):
            raise ValueError(f"{name}: {len(body)} data bytes do not match the shape {shape}")
        ok, moduli, rule = cls._layout(params, shape, header)
        if not ok:
            raise ValueError(f"{name}: shape {shape} is not a {cls.kind} of these parameters: {rule}")
        data = np.frombuffer(body, dtype="<u8").astype(np.uint64).reshape(shape)
        check_reduced(data, moduli, f"{name}: {cls.kind}")
        return header, data

    @classmethod
    def from_bytes(cls, b, params: Params):
        """The object serialized by to_bytes. ValueError, naming the part, if b is truncated, extended,
        corrupt, of another kind or parameter set, of the wrong shape, or holds unreduced entries."""
        header, data = cls._parse(b, params)
        return cls(data, header["fingerprint"], header["key_id"])

    @classmethod
    def from_bytes_named(cls, b, params: Params, name: str):
        """from_bytes, with errors naming the part as `name`."""
        header, data = cls._parse(b, params, name)
        extra = (header["elements"],) if cls is GaloisKeys else ()
        return cls(data, header["fingerprint"], header["key_id"], *extra)

    def __repr__(self):
        return f"{type(self).__name__}(shape={tuple(self.data.shape)}, params={self.fingerprint}, key={self.key_id})"


def check_reduced(data, moduli: tuple, name: str) -> None:
    """ValueError if an entry of data (..., L, n) is >= the modulus of its limb (moduli: L entries), or,
    with one modulus, if any entry is >= it. One fused comparison and reduction, one read of L flags."""
    if data.size == 0:
        return
    xp = array_module(data)
    if len(moduli) == 1:
        if bool((data >= np.uint64(moduli[0])).any()):
            raise ValueError(f"{name} has entries >= its modulus {moduli[0]}: it is corrupt or not reduced")
        return
    bound = xp.asarray(np.array(moduli, dtype=np.uint64).reshape(-1, 1))
    bad = to_host((data >= bound).reshape(-1, len(moduli), data.shape[-1]).any(axis=(0, 2)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} has entries >= their limb's modulus (limb {i}, modulus {moduli[i]}): it is corrupt or not reduced"
        )


def check_fingerprint(fingerprint: str, params: Params, name: str) -> None:
    if fingerprint != params.fingerprint:
        raise ValueError(f"{name} was made under parameters {fingerprint}, not these parameters {params.fingerprint}")


def key_id_of(public_data) -> str:
    """A key set's id: the start of the SHA-256 of its public key's data."""
    return hashlib.sha256(np.ascontiguousarray(to_host(public_data), dtype=np.uint64).tobytes()).hexdigest()[:16]


def check_secret_matches(secret_data, public_data, params: Params) -> None:
    """ValueError unless public = (-(a s + e), a) for this secret s and a small error e: pk0 + pk1 s
    must be -e, whose centred coefficients are tiny (a foreign secret gives uniform ones: each
    passes the bound below with probability < 1/4, all n of them with probability < 4^-n)."""
    from ..ntt import intt

    q = params.q
    s_ntt = to_host(secret_data)[: len(q)].astype(object)  # exact products: Python ints (load time only)
    pk = to_host(public_data).astype(object)
    col = np.array(q, dtype=object).reshape(-1, 1)
    e = intt(((pk[0] + pk[1] * s_ntt) % col).astype(np.uint64), list(q), negacyclic=True)
    for limb, qi in zip(e, q):
        centred = np.minimum(limb, np.uint64(qi) - limb)
        if int(centred.max()) >= qi // 8:
            raise ValueError("b: the secret key does not belong to this key set's public key")


class Plaintext(_Tagged):
    """A batch of plaintext polynomials in coefficient form: data (..., n) uint64 mod t."""

    kind = "plaintext"

    @classmethod
    def _layout(cls, params, shape, header):
        return len(shape) >= 1 and shape[-1] == params.n, (params.t,), f"(..., n={params.n}) mod t"

    def __init__(self, data, fingerprint: str, key_id: str | None = None):
        super().__init__(data, fingerprint, None)

    @property
    def batch_shape(self):
        return tuple(self.data.shape[:-1])


class Ciphertext(_Tagged):
    """A batch of ciphertexts in coefficient form: data (..., K, L, n) uint64, K = 2 (or 3 before
    relinearization), L RNS limbs of q."""

    kind = "ciphertext"

    @classmethod
    def _layout(cls, params, shape, header):
        L = len(params.q)
        return (
            len(shape) >= 3 and shape[-3] in (2, 3) and shape[-2:] == (L, params.n),
            params.q,
            f"(..., 2 or 3, L={L}, n={params.n})",
        )

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

    @classmethod
    def _layout(cls, params, shape, header):
        L = len(params.q)
        return shape == (L + 1, params.n), params.q + (params.special,), f"(L + 1={L + 1}, n={params.n})"


class PublicKey(_Tagged):
    """(-(a s + e), a) in NTT form over q: data (2, L, n)."""

    kind = "public_key"

    @classmethod
    def _layout(cls, params, shape, header):
        L = len(params.q)
        return shape == (2, L, params.n), params.q, f"(2, L={L}, n={params.n})"


class RelinKey(_Tagged):
    """Key-switching key from s^2 to s: data (L, 2, L + 1, n), NTT form over q and the special prime;
    row j encrypts P [(Q/q_j)^-1]_{q_j} (Q/q_j) s^2 (the RNS gadget)."""

    kind = "relin_key"

    @classmethod
    def _layout(cls, params, shape, header):
        L = len(params.q)
        return (
            shape == (L, 2, L + 1, params.n),
            params.q + (params.special,),
            f"(L={L}, 2, L + 1={L + 1}, n={params.n})",
        )


class GaloisKeys(_Tagged):
    """Key-switching keys from s(X^g) to s for the Galois elements `elements`: data (G, L, 2, L + 1, n)."""

    kind = "galois_keys"

    def __init__(self, data, fingerprint: str, key_id: str | None, elements=()):
        super().__init__(data, fingerprint, key_id)
        self.elements = tuple(int(g) for g in elements)

    def _extra(self):
        return {"elements": list(self.elements)}

    @classmethod
    def _layout(cls, params, shape, header):
        L, n = len(params.q), params.n
        elements = header.get("elements")
        if (
            not isinstance(elements, list)
            or not all(type(g) is int and g % 2 == 1 and 1 < g < 2 * n for g in elements)
            or len(set(elements)) != len(elements)
        ):
            return False, None, f"header field 'elements' must list distinct odd Galois elements in (1, 2n={2 * n})"
        return (
            shape == (len(elements), L, 2, L + 1, n),
            params.q + (params.special,),
            f"(G={len(elements)} elements, L={L}, 2, L + 1={L + 1}, n={n})",
        )

    @classmethod
    def from_bytes(cls, b, params: Params):
        header, data = cls._parse(b, params)
        return cls(data, header["fingerprint"], header["key_id"], header["elements"])

    def key_for(self, galois_elt: int):
        if galois_elt not in self.elements:
            raise ValueError(
                f"galois_keys: no key for Galois element {galois_elt} (have {list(self.elements)}); "
                "generate it with keygen(rotations=[...])"
            )
        return self.data[self.elements.index(galois_elt)]


class Keys:
    """What keygen returns: .secret, .public, .relin, .galois (and .key_id, shared by all four)."""

    def __init__(self, secret: SecretKey, public: PublicKey, relin: RelinKey, galois: GaloisKeys):
        self.secret, self.public, self.relin, self.galois = secret, public, relin, galois
        self.key_id = public.key_id
        self.fingerprint = public.fingerprint

    def public_keys(self) -> Keys:
        """The same keys without the secret (what to ship to workers that compute)."""
        return Keys(None, self.public, self.relin, self.galois)

    def to_bytes(self) -> bytes:
        """One frame holding the four keys' frames (the secret only if present), with its own digest."""
        parts = [k.to_bytes() if k is not None else b"" for k in (self.secret, self.public, self.relin, self.galois)]
        header = {
            "kind": "keys",
            "fingerprint": self.fingerprint,
            "key_id": self.key_id,
            "sizes": [len(p) for p in parts],
        }
        return _frame(header, b"".join(parts))

    @classmethod
    def from_bytes(cls, b, params: Params) -> Keys:
        """Keys written by Keys.to_bytes. ValueError, naming the part, if the bytes are damaged, made under
        other parameters, or mix keys: every key must carry the set's key id, the id must be the public
        key's hash, and the public key must be an encryption of zero under the secret."""
        header, body = _unframe(b, "b")
        if header["kind"] != "keys":
            raise ValueError(f"b holds a {header['kind']}, not a BFV key set")
        check_fingerprint(header["fingerprint"], params, "b")
        sizes = header.get("sizes")
        if not (
            isinstance(sizes, list)
            and len(sizes) == 4
            and all(type(x) is int and x >= 0 for x in sizes)
            and sum(sizes) == len(body)
        ):
            raise ValueError("b: header field 'sizes' must be four lengths summing to the body's length")
        names = ("secret", "public", "relin", "galois")
        classes = (SecretKey, PublicKey, RelinKey, GaloisKeys)
        parts, pos = {}, 0
        for name, klass, size in zip(names, classes, sizes):
            chunk, pos = body[pos : pos + size], pos + size
            if size or name != "secret":
                parts[name] = klass.from_bytes_named(chunk, params, f"b (the {name} key)")
        for name, key in parts.items():
            if key.key_id != header["key_id"]:
                raise ValueError(
                    f"b: the {name} key belongs to key {key.key_id}, not to this key set ({header['key_id']})"
                )
        public = parts["public"]
        if key_id_of(public.data) != public.key_id:
            raise ValueError(f"b: the public key's hash is not its key id {public.key_id}")
        secret = parts.get("secret")
        if secret is not None:
            check_secret_matches(secret.data, public.data, params)
        return cls(secret, public, parts["relin"], parts["galois"])

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
