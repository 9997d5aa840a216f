"""BGV serialization: every object round-trips with its fingerprint and key id, and any damage,
truncation, foreign parameters or malformed header is a ValueError."""

import hashlib
import json
import secrets
import struct

import numpy as np
import pytest

from hebatch import bfv, bgv
from hebatch.bgv import objects


@pytest.fixture(scope="module")
def setup():
    params = bgv.Params.preset("n8192")
    ctx = bgv.Context(params, backend="cpu")
    keys = ctx.keygen(rotations=[1], columns=False)
    v = np.random.default_rng(secrets.randbits(64)).integers(0, params.t, (2, params.n))
    return params, ctx, keys, v


def framed(header: dict, body: bytes, magic=objects.MAGIC, version=objects.VERSION) -> bytes:
    """A well-checksummed blob around any header and body (to reach the checks after the checksum)."""
    head = json.dumps(header).encode()
    blob = magic + struct.pack("<HI", version, len(head)) + head + body
    return blob + hashlib.sha256(blob).digest()


def test_round_trips(setup):
    params, ctx, keys, v = setup
    ct = ctx.encrypt(keys.public, ctx.encode(v), level=2)
    back = bgv.Ciphertext.from_bytes(ct.to_bytes(), params)
    assert back.level == 2 and back.key_id == ct.key_id and back.fingerprint == params.fingerprint
    assert np.array_equal(back.data, ct.data)
    assert np.array_equal(ctx.decode(ctx.decrypt(keys.secret, back)), v)
    pt = bgv.Plaintext.from_bytes(ctx.encode(v).to_bytes(), params)
    assert np.array_equal(ctx.decode(pt), v)
    for obj in (keys.secret, keys.public, keys.relin, keys.galois):
        again = type(obj).from_bytes(obj.to_bytes(), params)
        assert np.array_equal(again.data, obj.data) and again.key_id == keys.key_id
    assert bgv.GaloisKeys.from_bytes(keys.galois.to_bytes(), params).elements == keys.galois.elements
    loaded = bgv.Keys.from_bytes(keys.to_bytes(), params)
    assert loaded.key_id == keys.key_id and loaded.secret is not None
    rot = ctx.rotate(ctx.encrypt(loaded.public, ctx.encode(v)), 1, loaded.galois)
    assert np.array_equal(
        ctx.decode(ctx.decrypt(loaded.secret, rot)).reshape(2, 2, -1), np.roll(v.reshape(2, 2, -1), -1, axis=-1)
    )
    public_only = bgv.Keys.from_bytes(keys.public_keys().to_bytes(), params)
    assert public_only.secret is None


def test_damage_is_refused(setup):
    params, ctx, keys, v = setup
    blob = ctx.encrypt(keys.public, ctx.encode(v)).to_bytes()
    for pos in (0, 7, 20, len(blob) // 2, len(blob) - 40, len(blob) - 1):  # magic, version, header, data, checksum
        bad = bytearray(blob)
        bad[pos] ^= 0x10
        with pytest.raises(ValueError):
            bgv.Ciphertext.from_bytes(bytes(bad), params)
    for size in (0, 5, 12, 100, len(blob) - 1):
        with pytest.raises(ValueError):
            bgv.Ciphertext.from_bytes(blob[:size], params)
    with pytest.raises(ValueError):
        bgv.Ciphertext.from_bytes(blob + b"\0", params)
    keys_blob = bytearray(keys.to_bytes())
    keys_blob[len(keys_blob) // 3] ^= 1
    with pytest.raises(ValueError, match="checksum"):
        bgv.Keys.from_bytes(bytes(keys_blob), params)
    with pytest.raises(TypeError, match="bytes"):
        bgv.Ciphertext.from_bytes("text", params)


def test_other_parameters_kinds_and_schemes_are_refused(setup):
    params, ctx, keys, v = setup
    blob = ctx.encrypt(keys.public, ctx.encode(v)).to_bytes()
    other = bgv.Params.preset("n16384")
    with pytest.raises(ValueError, match="parameters"):
        bgv.Ciphertext.from_bytes(blob, other)
    with pytest.raises(ValueError, match="not a plaintext"):
        bgv.Plaintext.from_bytes(blob, params)
    with pytest.raises(ValueError, match="parameters"):
        bgv.Keys.from_bytes(keys.to_bytes(), other)
    bfv_params = bfv.Params.preset("n4096")
    bfv_ctx = bfv.Context(bfv_params, backend="cpu")
    bfv_blob = bfv.Plaintext(np.zeros(bfv_params.n, dtype=np.uint64), bfv_params.fingerprint).to_bytes()
    with pytest.raises(ValueError, match="magic"):
        bgv.Plaintext.from_bytes(bfv_blob, params)
    with pytest.raises(TypeError, match=r"bgv.Params"):
        bgv.Plaintext.from_bytes(blob, bfv_ctx.params)


def test_malformed_headers_and_data_are_refused(setup):
    params, ctx, keys, v = setup
    ct = ctx.encrypt(keys.public, ctx.encode(v), level=1)
    data = np.ascontiguousarray(ct.data)
    good = {"kind": "ciphertext", "fingerprint": params.fingerprint, "key_id": ct.key_id, "shape": list(data.shape)}
    assert bgv.Ciphertext.from_bytes(framed(good, data.tobytes()), params).level == 1
    cases = [
        (dict(good, shape=[2, 2, 2]), "do not match"),
        (dict(good, shape=[4] + list(data.shape[1:-1]) + [params.n // 2]), "limbs"),
        (dict(good, shape=[-1]), "non-negative"),
        ({k: good[k] for k in ("kind", "fingerprint", "key_id")}, "shape"),
        (dict(good, kind=3), "kind"),
        (dict(good, key_id=5), "key_id"),
    ]
    for header, match in cases:
        with pytest.raises(ValueError, match=match):
            bgv.Ciphertext.from_bytes(framed(header, data.tobytes()), params)
    with pytest.raises(ValueError, match="version"):
        bgv.Ciphertext.from_bytes(framed(good, data.tobytes(), version=2), params)
    head = b"[1, 2]"
    blob = objects.MAGIC + struct.pack("<HI", 1, len(head)) + head
    with pytest.raises(ValueError, match="JSON object"):
        bgv.Ciphertext.from_bytes(blob + hashlib.sha256(blob).digest(), params)
    blob = objects.MAGIC + struct.pack("<HI", 1, 3) + b"{x}"
    with pytest.raises(ValueError, match="JSON"):
        bgv.Ciphertext.from_bytes(blob + hashlib.sha256(blob).digest(), params)
    blob = objects.MAGIC + struct.pack("<HI", 1, 10**6) + b"{}"
    with pytest.raises(ValueError, match="past the end"):
        bgv.Ciphertext.from_bytes(blob + hashlib.sha256(blob).digest(), params)
    unreduced = data.copy()
    unreduced[0, 0, 1, 0] = params.q[1]
    with pytest.raises(ValueError, match="not reduced mod"):
        bgv.Ciphertext.from_bytes(framed(good, unreduced.tobytes()), params)
    pt_data = np.full(params.n, params.t, dtype=np.uint64)
    with pytest.raises(ValueError, match="mod t"):
        bgv.Plaintext.from_bytes(
            framed(dict(good, kind="plaintext", key_id=None, shape=[params.n]), pt_data.tobytes()), params
        )
    gal = keys.galois
    gal_header = {
        "kind": "galois_keys",
        "fingerprint": params.fingerprint,
        "key_id": gal.key_id,
        "shape": list(gal.data.shape),
        "elements": [2],
    }
    with pytest.raises(ValueError, match="elements"):
        bgv.GaloisKeys.from_bytes(framed(gal_header, np.ascontiguousarray(gal.data).tobytes()), params)
