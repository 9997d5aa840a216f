"""Byte frames of serialized objects: magic, format version, lengths, a digest, a JSON header and the
data. Two layouts, each kept byte for byte for the objects written with it:

- DigestFrame: MAGIC | version u16 | header length u32 | body length u64 | BLAKE2b-256 | header | body.
  The digest covers every byte but itself, so a flip anywhere, the header included, is caught before
  any field is trusted; the lengths say whether a short or long blob was cut or extended.
- TrailingHashFrame: MAGIC | version u16 | header length u32 | header | body | SHA-256 of all before it.
"""

from __future__ import annotations

import hashlib
import json
import struct
from typing import Protocol


class Frame(Protocol):
    """What objects need of a frame."""

    def pack(self, header: dict, body: bytes) -> bytes: ...

    def unpack(self, blob, name: str = "b") -> tuple[dict, bytes]: ...


def encode_header(header: dict) -> bytes:
    """The JSON text of a header, keys sorted (the same header gives the same bytes)."""
    return json.dumps(header, sort_keys=True).encode()


def decode_header(raw: bytes, name: str) -> dict:
    """The JSON object of a header, or a ValueError naming `name`."""
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ValueError(f"{name}: header is not valid UTF-8 JSON") from None
    if not isinstance(header, dict):
        raise ValueError(f"{name}: header is not a JSON object")
    return header


def check_fields(header: dict, name: str, fields) -> None:
    """ValueError unless every (field, types) of `fields` is in the header with one of those types."""
    for field, types in fields:
        if not isinstance(header.get(field), types):
            raise ValueError(f"{name}: header field {field!r} is missing or has the wrong type")


def as_bytes(blob, name: str) -> bytes:
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes, got {type(blob).__name__}")
    return bytes(blob)


class DigestFrame:
    """Lengths and a BLAKE2b-256 digest up front (see the module docstring). `what` names the objects in
    errors ("hebatch BFV object"); `person` personalizes the digest."""

    DIGEST = 32

    def __init__(self, magic: bytes, version: int, person: bytes, what: str):
        self.magic, self.version, self.person, self.what = magic, version, person, what
        self.prefix = struct.Struct(f"<{len(magic)}sHIQ")
        self.size = self.prefix.size + self.DIGEST  # bytes before the header

    def digest(self, prefix: bytes, rest: bytes) -> bytes:
        h = hashlib.blake2b(digest_size=self.DIGEST, person=self.person)
        h.update(prefix)
        h.update(rest)
        return h.digest()

    def pack(self, header: dict, body: bytes) -> bytes:
        head = encode_header(header)
        prefix = self.prefix.pack(self.magic, self.version, len(head), len(body))
        return prefix + self.digest(prefix, head + body) + head + body

    def unpack(self, blob, name: str = "b") -> tuple[dict, bytes]:
        """(header, body) of a frame, or a ValueError naming the part that is wrong."""
        blob = as_bytes(blob, name)
        magic = self.magic
        if blob[: len(magic)] != magic[: len(blob)] or len(blob) < len(magic):
            raise ValueError(f"{name}: not a {self.what} (bad magic)")
        if len(blob) < self.size:
            raise ValueError(f"{name}: truncated: {len(blob)} bytes, shorter than the {self.size}-byte frame header")
        _, version, head_len, body_len = self.prefix.unpack_from(blob)
        if version != self.version:
            raise ValueError(
                f"{name}: format version {version} is not supported (this is {self.version}); "
                "written by another release, or the version field is corrupt"
            )
        want = self.size + head_len + body_len
        if len(blob) < want:
            raise ValueError(
                f"{name}: truncated: {len(blob)} bytes, but the frame says {want} (or a length field is corrupt)"
            )
        if len(blob) > want:
            raise ValueError(
                f"{name}: {len(blob) - want} trailing bytes after the {want}-byte object (or a length field is corrupt)"
            )
        if self.digest(blob[: self.prefix.size], blob[self.size :]) != blob[self.prefix.size : self.size]:
            raise ValueError(f"{name}: checksum mismatch: the bytes are corrupt (BLAKE2b digest over header and data)")
        return decode_header(blob[self.size : self.size + head_len], name), blob[self.size + head_len :]


class TrailingHashFrame:
    """The header length after the magic and a SHA-256 at the end (see the module docstring)."""

    CHECKSUM = 32
    PREFIX = struct.Struct("<HI")

    def __init__(self, magic: bytes, version: int, what: str):
        self.magic, self.version, self.what = magic, version, what

    def pack(self, header: dict, body: bytes) -> bytes:
        head = encode_header(header)
        blob = self.magic + self.PREFIX.pack(self.version, len(head)) + head + body
        return blob + hashlib.sha256(blob).digest()

    def unpack(self, blob, name: str = "b") -> tuple[dict, bytes]:
        """(header, body) of a frame, every framing rule checked (ValueError naming `name`)."""
        blob = as_bytes(blob, name)
        magic = self.magic
        start = len(magic) + self.PREFIX.size
        if len(blob) < start + self.CHECKSUM or blob[: len(magic)] != magic:
            raise ValueError(f"{name}: not a {self.what} (bad magic or too short)")
        version, size = self.PREFIX.unpack_from(blob, len(magic))
        if version != self.version:
            raise ValueError(f"{name}: format version {version} is not supported (this is {self.version})")
        if start + size > len(blob) - self.CHECKSUM:
            raise ValueError(f"{name}: header length {size} runs past the end of the data")
        if hashlib.sha256(blob[: -self.CHECKSUM]).digest() != blob[-self.CHECKSUM :]:
            raise ValueError(f"{name}: checksum mismatch (the bytes are damaged or truncated)")
        return decode_header(blob[start : start + size], name), blob[start + size : -self.CHECKSUM]


__all__ = ["Frame", "DigestFrame", "TrailingHashFrame", "encode_header", "decode_header", "check_fields", "as_bytes"]
