"""Base classes of the schemes' data objects: an array tagged with the fingerprint of its parameters and,
where a secret is involved, the key id; serialization in the scheme's byte frame, with every field,
shape and entry checked when read back.

A scheme subclasses each class and sets `frame` (a frame of hebatch.rlwe.frame), `scheme` (its name in
messages) and `params_type`; a class whose layout differs (BGV's ciphertexts carry a level) overrides
`_layout(params, shape, header)` -> (shape valid?, moduli of axis -2 (or (t,)), the rule in words).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..device import to_host
from .checks import check_fingerprint, check_reduced
from .frame import Frame, check_fields
from .keys import check_secret_matches, key_id_of
from .switching import digit_count


def host_le(data) -> np.ndarray:
    """data on the host, contiguous little-endian uint64 (the body of a frame)."""
    return np.ascontiguousarray(to_host(data), dtype="<u8")


class Tagged:
    """An array `data` with the fingerprint of its parameters and the id of its secret key."""

    kind = "object"
    is_key = False  # keys: checked with check_reduced; other objects by their _check_entries
    has_key_id = True  # plaintexts depend on no key
    frame: ClassVar[Frame]  # the scheme's frame (pack, unpack)
    scheme = "rlwe"
    params_type: type = object

    def __init__(self, data, fingerprint: str, key_id: str | None):
        self.data = data
        self.fingerprint = fingerprint
        self.key_id = key_id

    def _extra(self) -> dict:
        return {}

    def to_bytes(self) -> bytes:
        """The scheme's frame: JSON header (kind, fingerprint, key id, shape), little-endian uint64 data,
        and a digest."""
        data = host_le(self.data)
        header = {
            "kind": self.kind,
            "fingerprint": self.fingerprint,
            "key_id": self.key_id,
            "shape": list(data.shape),
            **self._extra(),
        }
        return self.frame.pack(header, data.tobytes())

    @classmethod
    def _layout(cls, params, shape: tuple, header: dict):
        """(is the shape valid for these parameters, moduli of the limbs along axis -2 or t, the rule)."""
        raise NotImplementedError

    @classmethod
    def _check_entries(cls, data, moduli, name: str) -> None:
        check_reduced(data, moduli, name)

    @classmethod
    def _parse(cls, blob, params, name: str = "b"):
        """(header, data) of a blob of this class, every rule checked (ValueError naming `name`)."""
        if not isinstance(params, cls.params_type):
            raise TypeError(f"params must be a {cls.scheme}.Params, got {type(params).__name__}")
        header, body = cls.frame.unpack(blob, name)
        check_fields(header, name, (("kind", str), ("fingerprint", str), ("key_id", (str, type(None)))))
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
        cls._check_entries(data, moduli, f"{name}: {cls.kind}")
        return header, data

    @classmethod
    def _from_header(cls, data, header: dict):
        return cls(data, header["fingerprint"], header["key_id"])

    @classmethod
    def from_bytes(cls, b, params):
        """The object serialized by to_bytes. ValueError, naming the part, if b is truncated, extended,
        corrupt, of another kind or parameter set, of the wrong shape, or holds unreduced entries."""
        return cls.from_bytes_named(b, params, "b")

    @classmethod
    def from_bytes_named(cls, b, params, name: str):
        """from_bytes, with errors naming the part as `name`."""
        header, data = cls._parse(b, params, name)
        return cls._from_header(data, header)

    def __repr__(self):
        return f"{type(self).__name__}(shape={tuple(self.data.shape)}, params={self.fingerprint}, key={self.key_id})"


class Plaintext(Tagged):
    """A batch of plaintext polynomials in coefficient form: data (..., n) uint64 mod t."""

    kind = "plaintext"
    has_key_id = False

    def __init__(self, data, fingerprint: str, key_id: str | None = None):
        super().__init__(data, fingerprint, None)

    @classmethod
    def _layout(cls, params, shape, header):
        return len(shape) >= 1 and shape[-1] == params.n, (params.t,), f"(..., n={params.n}) mod t"

    @classmethod
    def _check_entries(cls, data, moduli, name):
        if data.size and bool((data >= np.uint64(moduli[0])).any()):
            raise ValueError(f"{name} has entries >= t = {moduli[0]}: plaintext values must be reduced mod t")

    @property
    def batch_shape(self):
        return tuple(self.data.shape[:-1])


class Ciphertext(Tagged):
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
        """Batch items (integer or slice on the leading batch axes) as a ciphertext of the same class."""
        if self.data.ndim <= 3:
            raise TypeError("a ciphertext without batch axes cannot be indexed")
        data = self.data[index]
        if data.ndim < 3:
            raise IndexError("index the batch axes only")
        return type(self)(data, self.fingerprint, self.key_id)


class SecretKey(Tagged):
    """The ternary secret s, NTT form over the limbs of q and the special prime: data (L + 1, n)."""

    kind = "secret_key"
    is_key = True

    @classmethod
    def _layout(cls, params, shape, header):
        L = len(params.q)
        return shape == (L + 1, params.n), params.q + (params.special,), f"(L + 1={L + 1}, n={params.n})"


class PublicKey(Tagged):
    """(-(a s + e), a) in NTT form over q: data (2, L, n)."""

    kind = "public_key"
    is_key = True

    @classmethod
    def _layout(cls, params, shape, header):
        L = len(params.q)
        return shape == (2, L, params.n), params.q, f"(2, L={L}, n={params.n})"


def _key_rows(params) -> tuple[int, int, str]:
    """(L, D, the key's leading axes in words) of a key-switching key: D digits of params.digit_limbs limbs."""
    L = len(params.q)
    D = digit_count(L, params.digit_limbs)
    digits = f"D={D} digits of {params.digit_limbs} limbs" if params.digit_limbs != 1 else f"L={L}"
    return L, D, digits


class RelinKey(Tagged):
    """Key-switching key from s^2 to s: data (D, 2, L + 1, n), NTT form over q and the special prime; D digits
    (params.digit_limbs limbs of q each; D = L for one)."""

    kind = "relin_key"
    is_key = True

    @classmethod
    def _layout(cls, params, shape, header):
        L, D, digits = _key_rows(params)
        return (
            shape == (D, 2, L + 1, params.n),
            params.q + (params.special,),
            f"({digits}, 2, L + 1={L + 1}, n={params.n})",
        )


class GaloisKeys(Tagged):
    """Key-switching keys from s(X^g) to s for the Galois elements `elements`: data (G, D, 2, L + 1, n) (D as
    for RelinKey)."""

    kind = "galois_keys"
    is_key = True

    def __init__(self, data, fingerprint: str, key_id: str | None, elements=()):
        super().__init__(data, fingerprint, key_id)
        self.elements = tuple(int(g) for g in elements)

    def _extra(self):
        return {"elements": list(self.elements)}

    @classmethod
    def _layout(cls, params, shape, header):
        n = params.n
        L, D, digits = _key_rows(params)
        elements = header.get("elements")
        if (
            not isinstance(elements, list)
            or not all(type(g) is int and g % 2 == 1 and 1 < g < 2 * n for g in elements)
            or len(set(elements)) != len(elements)
        ):
            return False, None, f"header field 'elements' must list distinct odd Galois elements in (1, 2n={2 * n})"
        return (
            shape == (len(elements), D, 2, L + 1, n),
            params.q + (params.special,),
            f"(G={len(elements)} elements, {digits}, 2, L + 1={L + 1}, n={n})",
        )

    @classmethod
    def _from_header(cls, data, header):
        return cls(data, header["fingerprint"], header["key_id"], header["elements"])

    def key_for(self, galois_elt: int):
        if galois_elt not in self.elements:
            raise ValueError(
                f"galois_keys: no key for Galois element {galois_elt} (have {list(self.elements)}); "
                "generate it with keygen(rotations=[...])"
            )
        return self.data[self.elements.index(galois_elt)]


class Keys:
    """What keygen returns: .secret, .public, .relin, .galois (and .key_id, shared by all four).

    A scheme sets `frame` (the frame of the key set), `parts` (its four key classes) and `scheme`."""

    frame: ClassVar[Frame]
    scheme = "rlwe"
    parts: tuple = (SecretKey, PublicKey, RelinKey, GaloisKeys)
    id_salt = b""  # what the key id hashes before the public key's data

    def __init__(self, secret, public, relin, galois):
        self.secret, self.public, self.relin, self.galois = secret, public, relin, galois
        self.key_id = public.key_id
        self.fingerprint = public.fingerprint

    def public_keys(self):
        """The same keys without the secret (what to ship to workers that compute)."""
        return type(self)(None, self.public, self.relin, self.galois)

    def to_bytes(self) -> bytes:
        """One frame holding the four keys' frames (the secret only if present), with its own digest."""
        parts = [k.to_bytes() if k is not None else b"" for k in (self.secret, self.public, self.relin, self.galois)]
        header = {
            "kind": "keys",
            "fingerprint": self.fingerprint,
            "key_id": self.key_id,
            "sizes": [len(p) for p in parts],
        }
        return self.frame.pack(header, b"".join(parts))

    @classmethod
    def _split(cls, b, params) -> tuple[dict, dict]:
        """(header, {part name: key}) of a key set's bytes; ValueError, naming the part, if the bytes are
        damaged, made under other parameters, or mix keys of different key ids."""
        header, body = cls.frame.unpack(b, "b")
        check_fields(header, "b", (("kind", str), ("fingerprint", str), ("key_id", (str, type(None)))))
        if header["kind"] != "keys":
            raise ValueError(f"b holds a {header['kind']}, not a {cls.scheme.upper()} key set")
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
        parts, pos = {}, 0
        for name, klass, size in zip(names, cls.parts, sizes):
            chunk, pos = body[pos : pos + size], pos + size
            if size or name != "secret":
                parts[name] = klass.from_bytes_named(chunk, params, f"b (the {name} key)")
        for name, key in parts.items():
            if key.key_id != header["key_id"]:
                raise ValueError(
                    f"b: the {name} key belongs to key {key.key_id}, not to this key set ({header['key_id']})"
                )
        return header, parts

    @classmethod
    def from_bytes(cls, b, params):
        """Keys written by Keys.to_bytes. ValueError, naming the part, if the bytes are damaged, made under
        other parameters, or mix keys: every key must carry the set's key id, the id must be the public
        key's hash, and the public key must be an encryption of zero under the secret."""
        _, parts = cls._split(b, params)
        public = parts["public"]
        if key_id_of(public.data, cls.id_salt) != public.key_id:
            raise ValueError(f"b: the public key's hash is not its key id {public.key_id}")
        secret = parts.get("secret")
        if secret is not None:
            check_secret_matches(secret.data, public.data, params.q)
        return cls(secret, public, parts["relin"], parts["galois"])

    def __repr__(self):
        return f"Keys(params={self.fingerprint}, key={self.key_id}, galois={list(self.galois.elements)})"


__all__ = ["host_le", "Tagged", "Plaintext", "Ciphertext", "SecretKey", "PublicKey", "RelinKey", "GaloisKeys", "Keys"]
