"""BGV: every operation decrypts to the same computation on plaintexts mod t, slot by slot, at every
level of the modulus chain, over batches; on the CPU, and on the GPU where there is one."""

import math
import secrets

import numpy as np
import pytest

from hebatch import bfv, bgv

ROTATIONS = [1, -1, 2, 4]  # 3, 5, 6, 7 are composed from 1, 2, 4
PRESET = "n8192"


@pytest.fixture(scope="module", params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def setup(request):
    params = bgv.Params.preset(PRESET)
    ctx = bgv.Context(params, backend=request.param)
    return params, ctx, ctx.keygen(rotations=ROTATIONS)


def rng():
    return np.random.default_rng(secrets.randbits(64))


def slots(params, shape):
    return rng().integers(0, params.t, shape + (params.n,), dtype=np.int64)


def decrypted(ctx, keys, ct):
    return np.asarray(ctx.ops.to_host(ctx.decode(ctx.decrypt(keys.secret, ct)))).astype(np.int64)


def rolled(values, n, k):
    """The slot matrix (2 x n/2) of each item, rows rotated left by k."""
    return np.roll(values.reshape(values.shape[:-1] + (2, n // 2)), -k, axis=-1).reshape(values.shape)


def levels(params):
    return range(params.levels)


# -- parameters --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["n8192", "n16384", "n32768", "n65536"])
def test_presets_are_chains_within_the_security_bound(name):
    params = bgv.Params.preset(name)
    assert params.log_qp <= bgv.MAX_LOG_Q[params.n] and params.n == int(name[1:])
    assert params.levels >= 4 and len(set(params.q + (params.special,))) == params.levels + 1
    assert all(p % (2 * params.n) == 1 for p in params.q + (params.special,))
    assert all(p % params.t == 1 for p in params.q[1:])  # switching keeps plaintexts exact
    assert params.t % (2 * params.n) == 1


def test_params_are_checked():
    p = bgv.Params.preset(PRESET)
    with pytest.raises(ValueError, match="1 mod t"):
        bgv.Params(n=p.n, t=p.t, q=(p.q[0], bfv.Params.preset("n8192").q[0]), special=p.special)
    with pytest.raises(ValueError, match="security"):
        bgv.Params(n=8192, t=65537, q_bits=[40] + [40] * 5)
    with pytest.raises(ValueError, match="q or q_bits"):
        bgv.Params(n=8192, t=65537, q=p.q, q_bits=[40])
    with pytest.raises(ValueError, match="t must be"):
        bgv.Params(n=8192, t=65536, q_bits=[40, 40])
    with pytest.raises(ValueError, match="1 mod 2n"):
        bgv.Params(n=8192, t=40961, q_bits=[40, 40])
    with pytest.raises(ValueError, match="q\\[0\\]"):
        bgv.Params(n=8192, t=65537, q_bits=[22, 40])
    with pytest.raises(ValueError, match="n must"):
        bgv.Params(n=1000, t=65537, q_bits=[40])
    assert p.fingerprint != bfv.Params(n=p.n, t=p.t, q=p.q, special=p.special).fingerprint


# -- encoding, encryption ------------------------------------------------------------------------
def test_encoder_is_bfvs(setup):
    params, ctx, _ = setup
    bfv_ctx = bfv.Context(bfv.Params(n=params.n, t=params.t, q=params.q, special=params.special), backend=ctx.backend)
    v = slots(params, (2,))
    pt = ctx.encode(v)
    assert np.array_equal(ctx.ops.to_host(pt.data), ctx.ops.to_host(bfv_ctx.encode(v).data))
    assert np.array_equal(ctx.ops.to_host(ctx.decode(pt)), v)


def test_encrypt_decrypt_at_every_level(setup):
    params, ctx, keys = setup
    for level in levels(params):
        v = slots(params, (2,))
        pt = ctx.encode(v)
        for ct in (ctx.encrypt(keys.public, pt, level=level), ctx.encrypt_symmetric(keys.secret, pt, level=level)):
            assert ct.data.shape == (2, 2, level + 1, params.n) and ct.level == level
            assert np.array_equal(decrypted(ctx, keys, ct), v)
            assert (ctx.noise_budget(keys.secret, ct) > 0).all()
    a, b = ctx.encrypt(keys.public, pt), ctx.encrypt(keys.public, pt)
    assert not np.array_equal(ctx.ops.to_host(a.data), ctx.ops.to_host(b.data))  # fresh randomness


def test_decrypt_is_the_centered_phase_mod_t(setup):
    """decrypt == [c0 + c1 s]_Q mod t (centered), with Python ints, on a product at every level."""
    params, ctx, keys = setup
    for level in (params.levels - 1, 1):
        a = ctx.encrypt(keys.public, ctx.encode(slots(params, (1,))), level=level)
        ct = ctx.multiply(a, a, keys.relin)
        phase = ctx.ops.to_host(ctx._phase(keys.secret, ct))
        q = params.q[: ct.level + 1]
        big_q = math.prod(q)
        crt = [(big_q // p) * pow(big_q // p, -1, p) for p in q]
        x = sum(phase[0, i].astype(object) * c for i, c in enumerate(crt)) % big_q
        want = [(int(v) - big_q if v > big_q // 2 else int(v)) % params.t for v in x]
        assert [int(v) for v in ctx.ops.to_host(ctx.decrypt(keys.secret, ct).data)[0]] == want


def centered_phase(ctx, keys, ct):
    """[c0 + c1 s + ...]_Q, centered, of the first item, as Python ints."""
    phase = ctx.ops.to_host(ctx._phase(keys.secret, ct)).reshape(-1, ct.level + 1, ctx.n)[0]
    q = ctx.q[: ct.level + 1]
    big_q = math.prod(q)
    crt = [(big_q // p) * pow(big_q // p, -1, p) for p in q]
    x = sum(phase[i].astype(object) * c for i, c in enumerate(crt)) % big_q
    return [int(v) - big_q if v > big_q // 2 else int(v) for v in x]


def test_mod_switch_keeps_the_phase_mod_t(setup):
    """After dropping q_l the phase is (phase - delta) / q_l with delta = 0 mod t: equal mod t, and within
    the rounding term t (tau0 + tau1 s), |tau| <= 1/2, of phase / q_l (s ternary: at most t (n + 1) / 2)."""
    params, ctx, keys = setup
    a = ctx.encrypt(keys.public, ctx.encode(slots(params, (1,))), level=2)
    ct = ctx.multiply(a, a, keys.relin)  # level 1, a product's noise
    before, after = centered_phase(ctx, keys, ct), centered_phase(ctx, keys, ctx.mod_switch(ct))
    q_last, t = params.q[1], params.t
    assert all((x - y) % t == 0 for x, y in zip(before, after))
    assert max(abs(y * q_last - x) for x, y in zip(before, after)) <= q_last * t * (params.n + 1) // 2


# -- arithmetic ----------------------------------------------------------------------------------
def test_add_sub_negate_plain_at_every_level(setup):
    params, ctx, keys = setup
    t = params.t
    for level in levels(params):
        v, w, p = slots(params, (2,)), slots(params, (2,)), slots(params, (2,))
        a = ctx.encrypt(keys.public, ctx.encode(v), level=level)
        b = ctx.encrypt_symmetric(keys.secret, ctx.encode(w), level=level)
        pt = ctx.encode(p)
        assert np.array_equal(decrypted(ctx, keys, ctx.add(a, b)), (v + w) % t)
        assert np.array_equal(decrypted(ctx, keys, ctx.sub(a, b)), (v - w) % t)
        assert np.array_equal(decrypted(ctx, keys, ctx.negate(a)), (-v) % t)
        assert np.array_equal(decrypted(ctx, keys, ctx.add_plain(a, pt)), (v + p) % t)
        assert np.array_equal(decrypted(ctx, keys, ctx.sub_plain(a, pt)), (v - p) % t)
        if level > 0:  # a plaintext product needs one more level to absorb its noise
            prod = ctx.multiply_plain(a, pt)
            assert prod.level == level
            assert np.array_equal(decrypted(ctx, keys, prod), (v * p) % t)
            assert np.array_equal(decrypted(ctx, keys, ctx.mod_switch(prod)), (v * p) % t)
            one = ctx.encode(p[0])  # one plaintext for the whole batch: batch axes broadcast
            assert np.array_equal(decrypted(ctx, keys, ctx.multiply_plain(a, one)), (v * p[0]) % t)


def test_multiply_relinearize_at_every_level(setup):
    params, ctx, keys = setup
    t = params.t
    for level in range(1, params.levels):
        v, w = slots(params, (1,)), slots(params, (1,))
        a = ctx.encrypt(keys.public, ctx.encode(v), level=level)
        b = ctx.encrypt(keys.public, ctx.encode(w), level=level)
        prod = ctx.multiply(a, b, keys.relin)
        assert prod.size == 2 and prod.level == level - 1  # switched down automatically
        assert np.array_equal(decrypted(ctx, keys, prod), v * w % t)
        three = ctx.multiply(a, b)
        assert three.size == 3 and three.level == level - 1
        assert np.array_equal(decrypted(ctx, keys, three), v * w % t)
        two = ctx.relinearize(three, keys.relin)
        assert two.size == 2 and np.array_equal(decrypted(ctx, keys, two), v * w % t)
        sq = ctx.square(a, keys.relin)
        assert np.array_equal(decrypted(ctx, keys, sq), v * v % t)


def test_multiply_without_automatic_switching(setup):
    params, ctx, keys = setup
    manual = bgv.Context(params, backend=ctx.backend, auto_mod_switch=False)
    v, w = slots(params, (1,)), slots(params, (1,))
    a, b = (ctx.encrypt(keys.public, ctx.encode(x)) for x in (v, w))
    prod = manual.multiply(a, b, keys.relin)
    assert prod.level == params.levels - 1
    assert np.array_equal(decrypted(ctx, keys, prod), v * w % params.t)
    down = manual.mod_switch_to(prod, 0)
    assert down.level == 0 and np.array_equal(decrypted(ctx, keys, down), v * w % params.t)


def test_levels_meet_at_the_lower_one(setup):
    params, ctx, keys = setup
    t = params.t
    v, w = slots(params, (2,)), slots(params, (2,))
    a = ctx.encrypt(keys.public, ctx.encode(v))
    b = ctx.encrypt(keys.public, ctx.encode(w), level=1)
    assert ctx.add(a, b).level == 1 and np.array_equal(decrypted(ctx, keys, ctx.add(a, b)), (v + w) % t)
    assert np.array_equal(decrypted(ctx, keys, ctx.sub(b, a)), (w - v) % t)
    prod = ctx.multiply(a, b, keys.relin)
    assert prod.level == 0 and np.array_equal(decrypted(ctx, keys, prod), v * w % t)


def test_mod_switch_down_the_whole_chain(setup):
    params, ctx, keys = setup
    v = slots(params, (3,))
    ct = ctx.encrypt(keys.public, ctx.encode(v))
    budgets = [int(ctx.noise_budget(keys.secret, ct).min())]
    while ct.level > 0:
        ct = ctx.mod_switch(ct)
        assert np.array_equal(decrypted(ctx, keys, ct), v)
        budgets.append(int(ctx.noise_budget(keys.secret, ct).min()))
    assert budgets == sorted(budgets, reverse=True) and budgets[-1] > 0
    with pytest.raises(ValueError, match="level 0"):
        ctx.mod_switch(ct)
    with pytest.raises(ValueError, match="cannot go up"):
        ctx.mod_switch_to(ct, 1)
    with pytest.raises(ValueError, match="level must"):
        ctx.mod_switch_to(ct, params.levels)


def test_depth_is_the_chain(setup):
    """Sequential squarings with relinearization: every one decrypts, down to level 0."""
    params, ctx, keys = setup
    v = slots(params, (1,))
    ct = ctx.encrypt(keys.public, ctx.encode(v))
    expected = v.astype(object)
    depth = 0
    while ct.level > 0:
        ct = ctx.multiply(ct, ct, keys.relin)
        expected = expected * expected % params.t
        assert (ctx.noise_budget(keys.secret, ct) > 0).all()
        assert (decrypted(ctx, keys, ct).astype(object) == expected).all()
        depth += 1
    print(f"bgv {PRESET} depth: {depth} (levels {params.levels}, log qp {params.log_qp})")
    assert depth == params.levels - 1


# -- rotations -----------------------------------------------------------------------------------
def test_rotations_at_every_level(setup):
    params, ctx, keys = setup
    n = params.n
    for level in levels(params):
        v = slots(params, (1,))
        ct = ctx.encrypt(keys.public, ctx.encode(v), level=level)
        steps = [1, -1] + ([3, 7] if level in (0, params.levels - 1) else [])  # 3, 7: composed
        for k in steps:
            got = ctx.rotate(ct, k, keys.galois)
            assert got.level == level and np.array_equal(decrypted(ctx, keys, got), rolled(v, n, k))
        swapped = decrypted(ctx, keys, ctx.rotate_columns(ct, keys.galois))
        assert np.array_equal(swapped.reshape(1, 2, -1), v.reshape(1, 2, -1)[:, ::-1])
        assert np.array_equal(decrypted(ctx, keys, ctx.rotate(ct, 0)), v)
    with pytest.raises(ValueError, match="no key"):
        ctx.rotate(ct, 100, keys.galois)  # needs the keys of 32 and 64


# -- batches -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (2, 1)])
def test_batch_shapes(setup, shape):
    params, ctx, keys = setup
    v, w = slots(params, shape), slots(params, (1,) * len(shape))
    a, b = ctx.encrypt(keys.public, ctx.encode(v)), ctx.encrypt(keys.public, ctx.encode(w))
    assert a.data.shape == shape + (2, params.levels, params.n) and a.batch_shape == shape
    prod = ctx.rotate(ctx.multiply(a, b, keys.relin), 1)  # b broadcasts over the batch
    assert prod.data.shape == shape + (2, params.levels - 1, params.n)
    assert np.array_equal(decrypted(ctx, keys, prod), rolled(v * w % params.t, params.n, 1))
    if shape:
        assert np.array_equal(decrypted(ctx, keys, a[0]), v[0])


# -- checks --------------------------------------------------------------------------------------
def test_bad_inputs_are_refused(setup):
    params, ctx, keys = setup
    pt = ctx.encode(slots(params, (1,)))
    ct = ctx.encrypt(keys.public, pt)
    other_keys = bgv.Context(params, backend=ctx.backend).keygen()
    with pytest.raises(ValueError, match="different keys"):
        ctx.add(ct, ctx.encrypt(other_keys.public, pt))
    with pytest.raises(ValueError, match="different keys"):
        ctx.multiply(ct, ct, other_keys.relin)
    with pytest.raises(TypeError, match=r"bgv.Ciphertext"):
        ctx.add(ct, pt)
    bfv_params = bfv.Params.preset("n8192")
    with pytest.raises(ValueError, match="parameters"):
        ctx.add(ct, bgv.Ciphertext(ct.data, bfv_params.fingerprint, ct.key_id))
    with pytest.raises(ValueError, match="values must lie"):
        ctx.encode(np.full(params.n, params.t))
    with pytest.raises(ValueError, match="shape"):
        ctx.encode(np.zeros(params.n + 1, dtype=np.int64))
    with pytest.raises(ValueError, match="level must"):
        ctx.encrypt(keys.public, pt, level=params.levels)
    with pytest.raises(TypeError, match=r"bgv.Params"):
        bgv.Context(bfv_params)
    with pytest.raises(ValueError, match="backend"):
        bgv.Context(params, backend="tpu")
    with pytest.raises(ValueError, match="relinearize first"):
        ctx.multiply(ctx.multiply(ct, ct), ct)
