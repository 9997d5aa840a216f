"""BFV: every operation decrypts to the same computation on plaintexts mod t, slot by slot, over batches."""

import math
import secrets

import numpy as np
import pytest

import hebatch as hb
from hebatch import bfv

ROTATIONS = [1, -1, 5, 100]


@pytest.fixture(scope="module")
def small():
    params = bfv.Params.preset("n4096")
    ctx = bfv.Context(params, backend="cpu")
    return params, ctx, ctx.keygen(rotations=ROTATIONS)


def rng():
    return np.random.default_rng(secrets.randbits(64))


def slots(params, shape):
    return rng().integers(0, params.t, shape + (params.n,), dtype=np.int64)


def decrypted(ctx, keys, ct):
    return np.asarray(ctx.decode(ctx.decrypt(keys.secret, ct))).astype(np.int64)


def as_matrix(values, n):
    return values.reshape(values.shape[:-1] + (2, n // 2))


def test_encode_decode_round_trip(small):
    params, ctx, _ = small
    for shape in [(), (1,), (3,), (2, 2)]:
        v = slots(params, shape)
        pt = ctx.encode(v)
        assert pt.data.shape == shape + (params.n,) and int(pt.data.max()) < params.t
        assert np.array_equal(ctx.decode(pt), v)


@pytest.mark.parametrize("shape", [(), (1,), (2, 1)])
def test_batch_shapes_are_kept(small, shape):
    params, ctx, keys = small
    v = slots(params, shape)
    pt = ctx.encode(v)
    for ct in (ctx.encrypt(keys.public, pt), ctx.encrypt_symmetric(keys.secret, pt)):
        assert ct.data.shape == shape + (2, len(params.q), params.n)
        prod = ctx.multiply(ct, ct, keys.relin)
        assert prod.data.shape == ct.data.shape
        got = ctx.decode(ctx.decrypt(keys.secret, ctx.rotate(prod, 1)))
        assert got.shape == v.shape
        assert np.array_equal(got, np.roll(as_matrix(v * v % params.t, params.n), -1, axis=-1).reshape(v.shape))


def test_encoding_is_the_slot_matrix_of_seal(small):
    """Slot i of row 0 is the value at psi^(3^i), of row 1 at psi^(-3^i) (psi of order 2n mod t), so the
    polynomial X decodes to those powers; and multiplying plaintexts in Z_t[X]/(X^n + 1) multiplies slots."""
    params, ctx, _ = small
    n, t = params.n, params.t
    psi = pow(hb.primitive_root(t), (t - 1) // (2 * n), t)
    x_poly = bfv.Plaintext(np.eye(1, n, 1, dtype=np.uint64)[0], params.fingerprint)
    exponents = [pow(3, i, 2 * n) for i in range(n // 2)]
    want = [pow(psi, e, t) for e in exponents] + [pow(psi, 2 * n - e, t) for e in exponents]
    assert [int(v) for v in ctx.decode(x_poly)] == want
    v, w = slots(params, (2,)), slots(params, (2,))
    product = hb.polymul(ctx.encode(v).data, ctx.encode(w).data, t, negacyclic=True)
    assert np.array_equal(ctx.decode(bfv.Plaintext(product, params.fingerprint)), v * w % t)


def test_encrypt_decrypt(small):
    params, ctx, keys = small
    v = slots(params, (3,))
    pt = ctx.encode(v)
    for ct in (ctx.encrypt(keys.public, pt), ctx.encrypt_symmetric(keys.secret, pt)):
        assert ct.data.shape == (3, 2, len(params.q), params.n) and ct.data.dtype == np.uint64
        assert np.array_equal(decrypted(ctx, keys, ct), v)
        assert (ctx.noise_budget(keys.secret, ct) > 30).all()
    a, b = ctx.encrypt(keys.public, pt), ctx.encrypt(keys.public, pt)
    assert not np.array_equal(a.data, b.data)  # fresh randomness every time


def test_decrypt_is_exact_scale_and_round(small):
    """decrypt == round(t (c0 + c1 s) / q) mod t, computed with Python ints, on noisy ciphertexts."""
    params, ctx, keys = small
    ct = ctx.multiply(
        ctx.encrypt(keys.public, ctx.encode(slots(params, (2,)))),
        ctx.encrypt(keys.public, ctx.encode(slots(params, (2,)))),
        keys.relin,
    )
    phase = ctx.ops.to_host(ctx._phase(keys.secret, ct))
    big_q = math.prod(params.q)
    crt = [(big_q // p) * pow(big_q // p, -1, p) for p in params.q]
    got = ctx.decrypt(keys.secret, ct).data
    for b in range(2):
        x = sum(phase[b, i].astype(object) * c for i, c in enumerate(crt)) % big_q
        want = [((params.t * int(v) * 2 + big_q) // (2 * big_q)) % params.t for v in x]
        assert [int(v) for v in got[b]] == want


def test_add_sub_negate_plain(small):
    params, ctx, keys = small
    t = params.t
    v, w, p = slots(params, (3,)), slots(params, (3,)), slots(params, (3,))
    a, b = ctx.encrypt(keys.public, ctx.encode(v)), ctx.encrypt_symmetric(keys.secret, ctx.encode(w))
    pt = ctx.encode(p)
    assert np.array_equal(decrypted(ctx, keys, ctx.add(a, b)), (v + w) % t)
    assert np.array_equal(decrypted(ctx, keys, ctx.sub(a, b)), (v - w) % t)
    assert np.array_equal(decrypted(ctx, keys, ctx.negate(a)), (-v) % t)
    assert np.array_equal(decrypted(ctx, keys, ctx.add_plain(a, pt)), (v + p) % t)
    assert np.array_equal(decrypted(ctx, keys, ctx.sub_plain(a, pt)), (v - p) % t)
    assert np.array_equal(decrypted(ctx, keys, ctx.multiply_plain(a, pt)), (v * p) % t)
    one = ctx.encode(p[0])  # one plaintext for the whole batch: batch axes broadcast
    assert np.array_equal(decrypted(ctx, keys, ctx.multiply_plain(a, one)), (v * p[0]) % t)


def test_multiply_relinearize(small):
    params, ctx, keys = small
    t = params.t
    v, w = slots(params, (3,)), slots(params, (3,))
    a, b = ctx.encrypt(keys.public, ctx.encode(v)), ctx.encrypt(keys.public, ctx.encode(w))
    c3 = ctx.multiply(a, b)
    assert c3.size == 3 and np.array_equal(decrypted(ctx, keys, c3), v * w % t)
    c2 = ctx.relinearize(c3, keys.relin)
    assert c2.size == 2 and np.array_equal(decrypted(ctx, keys, c2), v * w % t)
    direct = ctx.multiply(a, b, keys.relin)
    assert direct.size == 2 and np.array_equal(decrypted(ctx, keys, direct), v * w % t)
    assert (ctx.noise_budget(keys.secret, direct) > 0).all()
    assert (ctx.noise_budget(keys.secret, direct) < ctx.noise_budget(keys.secret, a)).all()
    sq = ctx.multiply(a, a, keys.relin)  # the squaring path
    assert np.array_equal(decrypted(ctx, keys, sq), v * v % t)
    with pytest.raises(ValueError, match="do not broadcast"):
        ctx.add(a, ctx.encrypt(keys.public, ctx.encode(slots(params, (2,)))))
    # a 3-component ciphertext adds to a 2-component one
    assert np.array_equal(decrypted(ctx, keys, ctx.add(c3, a)), (v * w + v) % t)


def test_rotations_follow_the_matrix_model(small):
    params, ctx, keys = small
    v = slots(params, (2,))
    ct = ctx.encrypt(keys.public, ctx.encode(v))
    matrix = as_matrix(v, params.n)
    for k in ROTATIONS:
        got = as_matrix(decrypted(ctx, keys, ctx.rotate(ct, k, keys.galois)), params.n)
        assert np.array_equal(got, np.roll(matrix, -k, axis=-1)), k
    got = as_matrix(decrypted(ctx, keys, ctx.rotate_columns(ct, keys.galois)), params.n)
    assert np.array_equal(got, matrix[..., ::-1, :])
    with pytest.raises(ValueError, match="no key for Galois element"):
        ctx.rotate(ct, 7, keys.galois)


def test_rotations_composed_from_powers_of_two(small):
    params = small[0]
    ctx = bfv.Context(params, backend="cpu")
    keys = ctx.keygen(rotations="pow2", columns=False)
    assert len(keys.galois.elements) == 2 * ((params.n // 2).bit_length() - 1) - 1  # +-2^(log n - 2) coincide
    v = slots(params, (2,))
    ct = ctx.encrypt(keys.public, ctx.encode(v))
    for k in (int(rng().integers(1, params.n // 2)), -int(rng().integers(1, params.n // 2)), 4):
        got = as_matrix(decrypted(ctx, keys, ctx.rotate(ct, k, keys.galois)), params.n)
        assert np.array_equal(got, np.roll(as_matrix(v, params.n), -k, axis=-1)), k
    with pytest.raises(ValueError, match="pow2"):
        ctx.keygen(rotations="all")


def test_batches_broadcast_and_index(small):
    params, ctx, keys = small
    v = slots(params, (4,))
    ct = ctx.encrypt(keys.public, ctx.encode(v))
    assert len(ct) == 4 and np.array_equal(decrypted(ctx, keys, ct[1:3]), v[1:3])
    single = ctx.encrypt(keys.public, ctx.encode(v[0]))
    assert np.array_equal(decrypted(ctx, keys, ctx.multiply(ct, single, keys.relin)), v * v[0] % params.t)


def test_depth_n4096(small):
    params, ctx, keys = small
    depth = _depth(params, ctx, keys)
    print(f"n4096 depth: {depth}")
    assert depth >= 1


def _depth(params, ctx, keys, limit=20):
    v = slots(params, (1,))
    ct = ctx.encrypt(keys.public, ctx.encode(v))
    expected = v.astype(object)
    depth = 0
    while depth < limit:
        ct = ctx.multiply(ct, ct, keys.relin)
        expected = expected * expected % params.t
        if int(ctx.noise_budget(keys.secret, ct).min()) <= 0:
            break
        assert (decrypted(ctx, keys, ct).astype(object) == expected).all()
        depth += 1
    return depth


@pytest.mark.slow
def test_depth_n8192():
    params = bfv.Params.preset("n8192")
    ctx = bfv.Context(params, backend="cpu")
    depth = _depth(params, ctx, ctx.keygen())
    print(f"n8192 depth: {depth}")
    assert depth >= 5


@pytest.mark.parametrize(
    "preset", ["n8192", pytest.param("n16384", marks=pytest.mark.slow), pytest.param("n32768", marks=pytest.mark.slow)]
)
def test_larger_presets(preset):
    params = bfv.Params.preset(preset)
    ctx = bfv.Context(params, backend="cpu")
    big = preset == "n32768"
    keys = ctx.keygen(rotations=[] if big else [1], columns=False)
    v, w = slots(params, (1 if big else 2,)), slots(params, (1 if big else 2,))
    a, b = ctx.encrypt(keys.public, ctx.encode(v)), ctx.encrypt_symmetric(keys.secret, ctx.encode(w))
    assert np.array_equal(decrypted(ctx, keys, a), v)
    prod = ctx.multiply(a, b, keys.relin)
    assert np.array_equal(decrypted(ctx, keys, prod), v * w % params.t)
    if big:
        return
    got = as_matrix(decrypted(ctx, keys, ctx.rotate(prod, 1)), params.n)
    assert np.array_equal(got, np.roll(as_matrix(v * w % params.t, params.n), -1, axis=-1))


@pytest.mark.parametrize("digit_limbs", [2, 3])
def test_key_switching_digits_of_several_limbs(digit_limbs):
    """n8192 (4 limbs) with digits of 2 or 3 limbs (2 digits; of 3 and 1 limbs): a key row per digit; products,
    relinearization and rotations decrypt exactly; key switching a fresh ciphertext costs about the bits of
    digit_limbs - 1 limbs of its noise budget (none with one-limb digits); keys do not cross digit sizes."""
    params = bfv.Params.preset("n8192", digit_limbs=digit_limbs)
    ctx = bfv.Context(params, backend="cpu")
    keys = ctx.keygen(rotations=[1, -3], columns=False)
    assert keys.relin.data.shape == (2, 2, 5, 8192) and keys.galois.data.shape == (2, 2, 2, 5, 8192)
    v, w = slots(params, (2,)), slots(params, (2,))
    a, b = ctx.encrypt(keys.public, ctx.encode(v)), ctx.encrypt_symmetric(keys.secret, ctx.encode(w))
    prod = ctx.multiply(a, b, keys.relin)
    assert np.array_equal(decrypted(ctx, keys, prod), v * w % params.t)
    assert np.array_equal(decrypted(ctx, keys, ctx.relinearize(ctx.multiply(a, b), keys.relin)), v * w % params.t)
    for k in (1, -3):
        got = as_matrix(decrypted(ctx, keys, ctx.rotate(prod, k, keys.galois)), params.n)
        assert np.array_equal(got, np.roll(as_matrix(v * w % params.t, params.n), -k, axis=-1)), k
    rotated = ctx.rotate(a, 1, keys.galois)
    lost = int(ctx.noise_budget(keys.secret, a).min() - ctx.noise_budget(keys.secret, rotated).min())
    extra_bits = sum(sorted(q.bit_length() for q in params.q)[-(digit_limbs - 1) :])
    assert extra_bits - 12 <= lost <= extra_bits + 8, (lost, extra_bits)
    one_limb = bfv.Params.preset("n8192")
    with pytest.raises(ValueError, match="not these parameters"):
        bfv.RelinKey.from_bytes(keys.relin.to_bytes(), one_limb)


def test_backend_choice():
    params = bfv.Params.preset("n4096")
    assert bfv.Context(params, backend="cpu").xp is np
    assert bfv.Context(params, backend="auto").backend in ("cpu", "gpu")
    with pytest.raises(ValueError, match="backend"):
        bfv.Context(params, backend="tpu")
    with pytest.raises(TypeError, match="params"):
        bfv.Context("n4096")


def test_encode_rejects_bad_values(small):
    params, ctx, _ = small
    with pytest.raises(ValueError, match=r"\[0, t\)"):
        ctx.encode(np.full(params.n, params.t))
    with pytest.raises(ValueError, match=r"\[0, t\)"):
        ctx.encode(np.full(params.n, -1))
    with pytest.raises(ValueError, match="shape"):
        ctx.encode(np.zeros(params.n // 2, dtype=np.int64))
    with pytest.raises(TypeError, match="integer"):
        ctx.encode(np.zeros(params.n))


def test_custom_single_limb_params():
    """One q limb (the limb axis of size 1 must not be taken for a broadcast axis anywhere)."""
    params = bfv.Params(n=4096, t=40961, q_bits=[54], special_bits=55)
    ctx = bfv.Context(params, backend="cpu")
    keys = ctx.keygen(rotations=[3])
    v, w = slots(params, (2,)), slots(params, (2,))
    a, b = ctx.encrypt(keys.public, ctx.encode(v)), ctx.encrypt_symmetric(keys.secret, ctx.encode(w))
    assert a.data.shape == (2, 2, 1, params.n)
    prod = ctx.rotate(ctx.multiply(a, b, keys.relin), 3)
    want = np.roll(as_matrix(v * w % params.t, params.n), -3, axis=-1).reshape(v.shape)
    assert np.array_equal(decrypted(ctx, keys, prod), want)
