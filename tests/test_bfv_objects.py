"""BFV parameters (validation, presets), serialization, and refusal to mix parameters or keys."""

import json
import secrets

import numpy as np
import pytest

import hebatch as hb
from hebatch import bfv
from hebatch.bfv.params import MAX_LOG_Q


@pytest.fixture(scope="module")
def setup():
    params = bfv.Params.preset("n4096")
    ctx = bfv.Context(params, backend="cpu")
    return params, ctx, ctx.keygen(rotations=[2])


def values(params, batch):
    return np.random.default_rng(secrets.randbits(64)).integers(0, params.t, (batch, params.n))


@pytest.mark.parametrize(
    "name,log_qp", [("n4096", 109), ("n8192", 218), ("n16384", 438), ("n32768", 881), ("n65536", 1770)]
)
def test_presets(name, log_qp):
    p = bfv.Params.preset(name)
    assert p.log_qp == log_qp == MAX_LOG_Q[p.n]
    assert all(q < 2**62 and hb.field.is_prime(q) and q % (2 * p.n) == 1 for q in p.q + (p.special,))
    assert len(set(p.q + (p.special,))) == len(p.q) + 1
    assert p.t % (2 * p.n) == 1 and hb.field.is_prime(p.t)
    assert p.fingerprint == bfv.Params.preset(name).fingerprint and len(p.fingerprint) == 16
    # key switching's digits go to the NTT unreduced (CupyBackend.forward_spread) only within a factor of 4
    assert max(p.q + (p.special,)) <= 4 * min(p.q + (p.special,))


def test_custom_params_and_fingerprint():
    a = bfv.Params(n=4096, t=40961, q_bits=[30, 30], special_bits=31)
    b = bfv.Params(n=4096, t=40961, q=list(a.q), special=a.special)
    assert a == b and a.fingerprint == b.fingerprint
    assert bfv.Params(n=4096, t=65537, q=list(a.q), special=a.special).fingerprint != a.fingerprint


def test_digit_limbs_params():
    p1, p2 = bfv.Params.preset("n8192"), bfv.Params.preset("n8192", digit_limbs=2)
    assert p1.digit_limbs == 1 and p2.digit_limbs == 2 and p2.q == p1.q and p2.special == p1.special
    assert p2 != p1 and p2.fingerprint != p1.fingerprint  # the keys' layout differs
    assert bfv.Params(n=8192, t=65537, q=list(p1.q), special=p1.special, digit_limbs=1).fingerprint == p1.fingerprint
    for bad in (0, 5, 2.0, True, "2"):
        with pytest.raises(ValueError, match="digit_limbs must be an int from 1 to 4"):
            bfv.Params.preset("n8192", digit_limbs=bad)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(n=3000, t=65537, q_bits=[36]), "power of two"),
        (dict(n=2048, t=65537, q_bits=[36]), "power of two from 2\\*\\*12"),
        (dict(n=4096, t=65536, q_bits=[36]), "t must be a prime"),
        (dict(n=4096, t=65539, q_bits=[36]), "1 mod 2n"),
        (dict(n=4096, t=65537, q_bits=[36, 36, 36]), "exceeds 109"),
        (dict(n=8192, t=65537, q_bits=[60, 60, 60, 40]), "exceeds 218"),
        (dict(n=4096, t=65537, q_bits=[62]), "q_bits"),
        (dict(n=4096, t=65537, q=[65537 * 2 + 1]), "prime and 1 mod 2n"),
        (dict(n=4096, t=65537, q=[]), "at least one prime"),
    ],
)
def test_bad_params_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bfv.Params(**kwargs)


def test_bad_params_refused_more():
    p = bfv.Params.preset("n4096")
    with pytest.raises(ValueError, match="distinct"):
        bfv.Params(n=4096, t=65537, q=[p.q[0], p.q[0]], special=p.special)
    with pytest.raises(ValueError, match="preset"):
        bfv.Params.preset("n1024")
    with pytest.raises(ValueError, match="q or q_bits"):
        bfv.Params(n=4096, t=65537, q=list(p.q), q_bits=[36])


def test_ciphertext_and_key_bytes_round_trip(setup):
    params, ctx, keys = setup
    v = values(params, 3)
    ct = ctx.encrypt(keys.public, ctx.encode(v))
    back = bfv.Ciphertext.from_bytes(ct.to_bytes(), params)
    assert np.array_equal(back.data, ct.data) and back.key_id == ct.key_id
    assert np.array_equal(ctx.decode(ctx.decrypt(keys.secret, back)), v)
    secret = bfv.SecretKey.from_bytes(keys.secret.to_bytes(), params)
    public = bfv.PublicKey.from_bytes(keys.public.to_bytes(), params)
    relin = bfv.RelinKey.from_bytes(keys.relin.to_bytes(), params)
    galois = bfv.GaloisKeys.from_bytes(keys.galois.to_bytes(), params)
    assert galois.elements == keys.galois.elements
    ct2 = ctx.encrypt(public, ctx.encode(v))
    prod = ctx.rotate(ctx.multiply(ct2, ct2, relin), 2, galois)
    want = np.roll((v * v % params.t).reshape(3, 2, -1), -2, axis=-1).reshape(3, -1)
    assert np.array_equal(ctx.decode(ctx.decrypt(secret, prod)), want)
    bundle = bfv.Keys.from_bytes(keys.to_bytes(), params)
    assert bundle.key_id == keys.key_id and np.array_equal(bundle.relin.data, keys.relin.data)
    assert bfv.Keys.from_bytes(keys.public_keys().to_bytes(), params).secret is None
    pt = ctx.encode(v)
    assert np.array_equal(bfv.Plaintext.from_bytes(pt.to_bytes(), params).data, pt.data)


def test_bytes_refused(setup):
    params, ctx, keys = setup
    ct = ctx.encrypt(keys.public, ctx.encode(values(params, 1)))
    blob = ct.to_bytes()
    other = bfv.Params(n=4096, t=40961, q_bits=[36, 36], special_bits=37)
    with pytest.raises(ValueError, match=f"{params.fingerprint}.*{other.fingerprint}"):
        bfv.Ciphertext.from_bytes(blob, other)
    with pytest.raises(ValueError, match="magic"):
        bfv.Ciphertext.from_bytes(b"nonsense" + blob, params)
    with pytest.raises(ValueError, match="not a ciphertext"):
        bfv.Ciphertext.from_bytes(keys.public.to_bytes(), params)
    with pytest.raises(ValueError, match="truncated"):
        bfv.Ciphertext.from_bytes(blob[:-8], params)


def test_zarr_round_trip(setup, tmp_path):
    params, ctx, keys = setup
    v = values(params, 5)
    ct = ctx.encrypt(keys.public, ctx.encode(v))
    bfv.save_zarr(ct, tmp_path / "ct.zarr", chunk=2)
    back = bfv.load_zarr(tmp_path / "ct.zarr", params)
    assert np.array_equal(back.data, ct.data) and back.key_id == keys.key_id
    assert np.array_equal(ctx.decode(ctx.decrypt(keys.secret, back)), v)
    other = bfv.Params(n=4096, t=40961, q_bits=[36, 36], special_bits=37)
    with pytest.raises(ValueError, match=other.fingerprint):
        bfv.load_zarr(tmp_path / "ct.zarr", other)


def test_mixing_parameters_refused(setup):
    params, ctx, keys = setup
    other_params = bfv.Params(n=4096, t=40961, q_bits=[36, 36], special_bits=37)
    other = bfv.Context(other_params, backend="cpu")
    other_keys = other.keygen()
    ct = ctx.encrypt(keys.public, ctx.encode(values(params, 1)))
    foreign = other.encrypt(other_keys.public, other.encode(values(other_params, 1) % other_params.t))
    for call in (
        lambda: ctx.add(ct, foreign),
        lambda: ctx.multiply(ct, foreign),
        lambda: ctx.decrypt(keys.secret, foreign),
        lambda: ctx.encrypt(other_keys.public, ctx.encode(values(params, 1))),
        lambda: ctx.relinearize(ctx.multiply(ct, ct), other_keys.relin),
    ):
        with pytest.raises(ValueError, match=f"{other_params.fingerprint}.*{params.fingerprint}"):
            call()


def test_mixing_keys_refused(setup):
    params, ctx, keys = setup
    keys2 = ctx.keygen()
    a = ctx.encrypt(keys.public, ctx.encode(values(params, 1)))
    b = ctx.encrypt(keys2.public, ctx.encode(values(params, 1)))
    assert keys.key_id != keys2.key_id
    for call in (
        lambda: ctx.add(a, b),
        lambda: ctx.multiply(a, b),
        lambda: ctx.decrypt(keys2.secret, a),
        lambda: ctx.relinearize(ctx.multiply(a, a), keys2.relin),
        lambda: ctx.rotate(a, 2, keys2.galois),
    ):
        with pytest.raises(ValueError, match=f"{keys.key_id}.*{keys2.key_id}|{keys2.key_id}.*{keys.key_id}"):
            call()
    with pytest.raises(TypeError, match="Ciphertext"):
        ctx.add(a, ctx.encode(values(params, 1)))


def test_malformed_objects_refused(setup):
    params, ctx, keys = setup
    ct = ctx.encrypt(keys.public, ctx.encode(values(params, 2)))
    bad = bfv.Ciphertext(ct.data[..., : params.n // 2], params.fingerprint, keys.key_id)
    with pytest.raises(ValueError, match="shape"):
        ctx.add(bad, bad)
    with pytest.raises(TypeError, match="uint64"):
        ctx.negate(bfv.Ciphertext(ct.data.astype(np.int64), params.fingerprint, keys.key_id))


def _reframe(blob, edit):
    """blob with its JSON header edited by `edit` and a recomputed (valid) digest: what a careless tool
    or a forger could write; the loader must still refuse what does not fit the parameters."""
    from hebatch.bfv import objects

    _, _, head_len, _ = objects._PREFIX.unpack_from(blob)
    start = objects._FRAME
    header = json.loads(blob[start : start + head_len])
    body = blob[start + head_len :]
    edit(header)
    return objects._frame(header, body)


def test_bytes_damage_refused_naming_the_part(setup):
    params, ctx, keys = setup
    blob = ctx.encrypt(keys.public, ctx.encode(values(params, 2))).to_bytes()
    rng = np.random.default_rng(secrets.randbits(64))
    for cut in sorted({1, 7, 30, 60, len(blob) // 2, len(blob) - 1} | {int(rng.integers(1, len(blob)))}):
        with pytest.raises(ValueError, match=r"truncated|magic"):
            bfv.Ciphertext.from_bytes(blob[:cut], params)
    with pytest.raises(ValueError, match="trailing"):
        bfv.Ciphertext.from_bytes(blob + b"\0", params)
    # a flip of any single bit, in the frame, the header or the data, is refused with a ValueError
    positions = sorted({int(p) for p in rng.integers(0, len(blob), 40)} | set(range(0, 80, 3)))
    for pos in positions:
        for bit in (0, int(rng.integers(1, 8))):
            bad = bytearray(blob)
            bad[pos] ^= 1 << bit
            with pytest.raises(ValueError, match=r"checksum|magic|version|truncated|trailing"):
                bfv.Ciphertext.from_bytes(bytes(bad), params)
    with pytest.raises(ValueError, match="checksum"):
        bad = bytearray(blob)
        bad[-1] ^= 0x80
        bfv.Ciphertext.from_bytes(bytes(bad), params)
    with pytest.raises(TypeError, match="bytes"):
        bfv.Ciphertext.from_bytes("text", params)


def test_bytes_with_valid_digest_still_checked(setup):
    params, ctx, keys = setup
    blob = ctx.encrypt(keys.public, ctx.encode(values(params, 2))).to_bytes()
    L, n = len(params.q), params.n
    # another shape, same byte count (the header edited, the digest recomputed)
    edited = _reframe(blob, lambda h: h.update(shape=[2, 2, L, n // 2, 2]))
    with pytest.raises(ValueError, match="shape"):
        bfv.Ciphertext.from_bytes(edited, params)
    with pytest.raises(ValueError, match="shape"):
        bfv.Ciphertext.from_bytes(_reframe(blob, lambda h: h.update(shape=[4, L, n])), params)
    with pytest.raises(ValueError, match="shape"):
        bfv.Ciphertext.from_bytes(_reframe(blob, lambda h: h.update(shape="x")), params)
    with pytest.raises(ValueError, match="kind"):
        bfv.Ciphertext.from_bytes(_reframe(blob, lambda h: h.pop("kind")), params)
    with pytest.raises(ValueError, match="parameters"):
        bfv.Ciphertext.from_bytes(_reframe(blob, lambda h: h.update(fingerprint="0" * 16)), params)
    # an entry >= its limb's modulus
    from hebatch.bfv import objects

    _, _, head_len, _ = objects._PREFIX.unpack_from(blob)
    start = objects._FRAME + head_len
    data = np.frombuffer(blob[start:], dtype="<u8").copy().reshape(2, 2, L, n)
    data[1, 0, L - 1, 5] = params.q[L - 1]
    header = json.loads(blob[objects._FRAME : start])
    with pytest.raises(ValueError, match=f"limb {L - 1}"):
        bfv.Ciphertext.from_bytes(objects._frame(header, data.tobytes()), params)
    # a header that is not JSON, with a valid digest
    prefix = objects._PREFIX.pack(objects.MAGIC, objects.VERSION, 4, 0)
    raw = prefix + objects._digest(prefix, b"\xff\xfe{]") + b"\xff\xfe{]"
    with pytest.raises(ValueError, match="header"):
        bfv.Ciphertext.from_bytes(raw, params)


def test_key_bytes_damage_and_foreign_secret_refused(setup):
    params, ctx, keys = setup
    for key, cls in [
        (keys.secret, bfv.SecretKey),
        (keys.public, bfv.PublicKey),
        (keys.relin, bfv.RelinKey),
        (keys.galois, bfv.GaloisKeys),
    ]:
        blob = key.to_bytes()
        bad = bytearray(blob)
        bad[len(bad) // 2] ^= 4
        with pytest.raises(ValueError, match="checksum"):
            cls.from_bytes(bytes(bad), params)
        with pytest.raises(ValueError, match="truncated"):
            cls.from_bytes(blob[:-1], params)
    with pytest.raises(ValueError, match="elements"):
        bfv.GaloisKeys.from_bytes(_reframe(keys.galois.to_bytes(), lambda h: h.update(elements=[2])), params)
    blob = keys.to_bytes()
    for pos in (3, 20, 40, len(blob) // 3, len(blob) - 5):
        bad = bytearray(blob)
        bad[pos] ^= 1
        with pytest.raises(ValueError):
            bfv.Keys.from_bytes(bytes(bad), params)
    with pytest.raises(ValueError, match="trailing"):
        bfv.Keys.from_bytes(blob + b"x", params)
    # a secret of another key set, relabelled with this set's key id: caught by the public key check
    other = ctx.keygen()
    forged_secret = bfv.SecretKey(other.secret.data, params.fingerprint, keys.key_id)
    forged = bfv.Keys(forged_secret, keys.public, keys.relin, keys.galois).to_bytes()
    with pytest.raises(ValueError, match="secret key does not belong"):
        bfv.Keys.from_bytes(forged, params)
    # a secret that keeps its own key id
    mixed = bfv.Keys(other.secret, keys.public, keys.relin, keys.galois).to_bytes()
    with pytest.raises(ValueError, match="secret key belongs to key"):
        bfv.Keys.from_bytes(mixed, params)
    assert bfv.Keys.from_bytes(keys.to_bytes(), params).secret is not None
