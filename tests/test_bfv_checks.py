"""Keys and ciphertexts are checked on use: shapes against the parameters, entries below their moduli,
key ids present and matching; and decrypt(check=True) reports items without noise budget."""

import secrets

import numpy as np
import pytest

from hebatch import bfv


@pytest.fixture(scope="module")
def setup():
    params = bfv.Params(n=4096, t=65537, q_bits=[36, 36], special_bits=37)
    ctx = bfv.Context(params, backend="cpu")
    return params, ctx, ctx.keygen(rotations=[1])


def values(params, batch):
    return np.random.default_rng(secrets.randbits(64)).integers(0, params.t, (batch, params.n))


def test_decrypt_refuses_bad_secret_and_ciphertext(setup):
    params, ctx, keys = setup
    ct = ctx.encrypt(keys.public, ctx.encode(values(params, 2)))
    fp, kid = params.fingerprint, keys.key_id
    with pytest.raises(ValueError, match=r"secret.*shape"):
        ctx.decrypt(bfv.SecretKey(keys.secret.data[:-1], fp, kid), ct)
    bad = keys.secret.data.copy()
    bad[1, 7] = params.q[1]
    with pytest.raises(ValueError, match=r"secret.*limb 1"):
        ctx.decrypt(bfv.SecretKey(bad, fp, kid), ct)
    data = ct.data.copy()
    data[1, 0, 0, 3] = 2**64 - 1
    with pytest.raises(ValueError, match=r"ct.*limb 0"):
        ctx.decrypt(keys.secret, bfv.Ciphertext(data, fp, kid))
    with pytest.raises(ValueError, match=r"ct.*key id"):
        ctx.decrypt(keys.secret, bfv.Ciphertext(ct.data, fp, None))
    with pytest.raises(ValueError, match="different keys"):
        ctx.decrypt(keys.secret, bfv.Ciphertext(ct.data, fp, "0" * 16))


def test_operations_refuse_bad_keys(setup):
    params, ctx, keys = setup
    ct = ctx.encrypt(keys.public, ctx.encode(values(params, 1)))
    fp, kid = params.fingerprint, keys.key_id
    pk = keys.public.data.copy()
    pk[0, 1, 0] = params.q[1] + 5
    with pytest.raises(ValueError, match=r"public.*limb 1"):
        ctx.encrypt(bfv.PublicKey(pk, fp, kid), ctx.encode(values(params, 1)))
    with pytest.raises(ValueError, match=r"relin_key.*shape"):
        ctx.multiply(ct, ct, bfv.RelinKey(keys.relin.data[:, :, :-1], fp, kid))
    rk = keys.relin.data.copy()
    rk[0, 0, 2, 0] = params.special
    with pytest.raises(ValueError, match=r"relin_key.*limb 2"):
        ctx.multiply(ct, ct, bfv.RelinKey(rk, fp, kid))
    gk = bfv.GaloisKeys(keys.galois.data[:1], fp, kid, keys.galois.elements)
    with pytest.raises(ValueError, match=r"galois_keys.*shape"):
        ctx.rotate(ct, 1, gk)
    gd = keys.galois.data.copy()
    gd[-1, 0, 1, 0, 9] = params.q[0]
    with pytest.raises(ValueError, match=r"galois_keys.*limb 0"):
        ctx.rotate(ct, 1, bfv.GaloisKeys(gd, fp, kid, keys.galois.elements))
    # good keys still work
    v = values(params, 1)
    out = ctx.decode(ctx.decrypt(keys.secret, ctx.rotate(ctx.encrypt(keys.public, ctx.encode(v)), 1)))
    assert np.array_equal(out, np.roll(v.reshape(1, 2, -1), -1, axis=-1).reshape(1, -1))


def test_decrypt_check_reports_spent_noise_budget(setup):
    params, ctx, keys = setup
    v = values(params, 3)
    ct = ctx.encrypt(keys.public, ctx.encode(v))
    assert np.array_equal(ctx.decode(ctx.decrypt(keys.secret, ct, check=True)), v)
    # items 0 and 2 get a uniform c0: their phase is uniform mod q, so no budget is left
    data = ct.data.copy()
    rng = np.random.default_rng(secrets.randbits(64))
    for i in (0, 2):
        for limb, q in enumerate(params.q):
            data[i, 0, limb] = rng.integers(0, q, params.n, dtype=np.uint64)
    spent = bfv.Ciphertext(data, ct.fingerprint, ct.key_id)
    assert list(ctx.noise_budget(keys.secret, spent) == 0) == [True, False, True]
    ctx.decrypt(keys.secret, spent)  # default: no check, garbage out
    with pytest.raises(ValueError, match="2 of 3 batch items have no noise budget"):
        ctx.decrypt(keys.secret, spent, check=True)
    with pytest.raises(TypeError, match="check"):
        ctx.decrypt(keys.secret, ct, check="yes")


def test_decrypt_check_after_too_many_multiplications(setup):
    params, ctx, keys = setup
    ct = ctx.encrypt(keys.public, ctx.encode(values(params, 2)))
    for _ in range(4):
        if ctx.noise_budget(keys.secret, ct).min() == 0:
            break
        ct = ctx.multiply(ct, ct, keys.relin)
    assert ctx.noise_budget(keys.secret, ct).max() == 0
    with pytest.raises(ValueError, match="2 of 2 batch items"):
        ctx.decrypt(keys.secret, ct, check=True)


def test_entries_checked_once_per_object_and_not_for_results(setup, monkeypatch):
    """The entry check reads flags back from the device (a synchronisation), so it runs once per object
    and data array; results a context made are reduced by construction and never checked."""
    from hebatch.rlwe import objects

    params, ctx, keys = setup
    fp, kid = params.fingerprint, keys.key_id
    made = ctx.encrypt(keys.public, ctx.encode(values(params, 1)))
    outside = bfv.Ciphertext(made.data.copy(), fp, kid)  # user-built: checked on its first use
    calls = []
    real = objects.check_reduced
    monkeypatch.setattr(
        objects, "check_reduced", lambda data, moduli, name: calls.append(name) or real(data, moduli, name)
    )
    for _ in range(3):
        total = ctx.add(made, outside)
    assert calls == ["b"]
    ctx.add(total, made)
    assert calls == ["b"]
    outside.data = outside.data.copy()  # a new data array is checked again
    outside.data[0, 0, 0] = params.q[0]
    with pytest.raises(ValueError, match="limb 0"):
        ctx.add(made, outside)


def test_a_checked_object_with_replaced_fields_is_checked_again(setup):
    """Repeated uses of an unchanged object skip its checks; replacing its data (other shape), fingerprint
    or key id makes the next use check it again."""
    params, ctx, keys = setup
    fp, kid = params.fingerprint, keys.key_id
    ct = bfv.Ciphertext(ctx.encrypt(keys.public, ctx.encode(values(params, 2))).data.copy(), fp, kid)
    ctx.add(ct, ct)
    ctx.add(ct, ct)
    ct.data = ct.data[:1]
    assert ctx.add(ct, ct).data.shape == (1, 2, 2, params.n)
    ct.data = ct.data[0, :, :1]
    with pytest.raises(ValueError, match="shape"):
        ctx.add(ct, ct)
    ct.data = ctx.encrypt(keys.public, ctx.encode(values(params, 1))).data
    ctx.add(ct, ct)
    ct.fingerprint = "0" * len(fp)
    with pytest.raises(ValueError, match=r"fingerprint|parameter"):
        ctx.add(ct, ct)
    ct.fingerprint = fp
    ct.key_id = None
    with pytest.raises(ValueError, match="key id"):
        ctx.add(ct, ct)


def test_galois_keys_with_replaced_fields_are_checked_again(setup):
    params, ctx, keys = setup
    ct = ctx.encrypt(keys.public, ctx.encode(values(params, 1)))
    galois = bfv.GaloisKeys(keys.galois.data, params.fingerprint, keys.key_id, keys.galois.elements)
    ctx.rotate(ct, 1, galois)
    ctx.rotate(ct, 1, galois)
    galois.elements = galois.elements + (3,)
    with pytest.raises(ValueError, match="galois_keys"):
        ctx.rotate(ct, 1, galois)
    galois.elements = keys.galois.elements
    galois.fingerprint = "0" * len(params.fingerprint)
    with pytest.raises(ValueError, match=r"fingerprint|parameter"):
        ctx.rotate(ct, 1, galois)
