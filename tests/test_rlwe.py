"""hebatch.rlwe, the pieces BFV and BGV share, checked on their own with exact integer oracles: the slot
layout and rotations, key switching and automorphisms, noise budgets, the byte frames, the checks of
objects on use, the parameter rules; and the BGV worker contexts kept in the worker plugin's state."""

import hashlib
import json
import math
import secrets
import struct

import numpy as np
import pytest

import hebatch as hb
from hebatch import bfv, bgv
from hebatch.rlwe import checks, encoder, frame, keys, noise, ring, switching
from hebatch.rlwe import params as rules

N, T = 64, 257  # a small ring: 257 is prime and 1 mod 2n


def rng():
    return np.random.default_rng(secrets.randbits(64))


@pytest.fixture(scope="module")
def ops():
    return ring.engine("cpu")


@pytest.fixture(scope="module")
def moduli():
    primes = hb.ntt_primes(50, N, 4)
    return tuple(primes[:3]), primes[3]


def centred(x, q):
    """Residues x (..., L, n) as Python ints in (-q/2, q/2], limb by limb."""
    out = x.astype(object)
    for i, p in enumerate(q):
        out[..., i, :] = np.where(out[..., i, :] > p // 2, out[..., i, :] - p, out[..., i, :])
    return out


def small_mod_q(x, q, bound):
    """x (..., L, n) as integers mod prod(q) (CRT), centred, all of magnitude < bound."""
    big = math.prod(q)
    v = sum(x[..., i, :].astype(object) * ((big // p) * pow(big // p, -1, p)) for i, p in enumerate(q)) % big
    return int(np.abs(np.where(v > big // 2, v - big, v)).max()) < bound


def small_in_every_limb(x, q, bound):
    """The same integer of magnitude < bound in every limb of every coefficient (a small RNS value)."""
    v = centred(x, q)
    return all((v[..., i, :] == v[..., 0, :]).all() for i in range(len(q))) and int(np.abs(v).max()) < bound


# -- the slot layout and the rotation index math ---------------------------------------------------
def test_slot_index_is_a_permutation_with_the_documented_layout():
    idx = encoder.slot_index(N)
    assert sorted(idx.tolist()) == list(range(N)) and not idx.flags.writeable
    for i in range(N // 2):  # slot i of row 0 is the value at psi^(3^i), of row 1 at psi^(-3^i)
        assert 2 * int(idx[i]) + 1 == pow(3, i, 2 * N)
        assert 2 * int(idx[N // 2 + i]) + 1 == (-pow(3, i, 2 * N)) % (2 * N)


def test_automorphisms_rotate_and_swap_the_slot_rows(ops):
    index = ops.asarray(encoder.slot_index(N))
    values = rng().integers(0, T, (3, N))
    pt = encoder.encode(ops, N, T, index, values)
    assert pt.dtype == np.uint64 and int(pt.max()) < T
    assert np.array_equal(encoder.decode(pt, T, index), values)
    rows = values.reshape(3, 2, N // 2)
    for step in (1, -1, 5, N // 2 - 1):
        moved = ops.automorphism(pt[:, None, :], encoder.galois_element(N, step), (T,), ntt_form=False)[:, 0]
        got = encoder.decode(moved, T, index).reshape(3, 2, N // 2)
        assert np.array_equal(got, np.roll(rows, -step, axis=-1))
    swapped = ops.automorphism(pt[:, None, :], encoder.column_element(N), (T,), ntt_form=False)[:, 0]
    assert np.array_equal(encoder.decode(swapped, T, index).reshape(3, 2, N // 2), rows[:, ::-1])


def test_encode_refuses_bad_values(ops):
    index = ops.asarray(encoder.slot_index(N))
    with pytest.raises(ValueError, match=r"values must lie in \[0, t\)"):
        encoder.encode(ops, N, T, index, np.full(N, T))
    with pytest.raises(ValueError, match="values must have shape"):
        encoder.encode(ops, N, T, index, np.zeros(N + 1, dtype=np.int64))
    with pytest.raises(TypeError, match="values must be an integer array"):
        encoder.encode(ops, N, T, index, np.zeros(N))


def test_rotation_steps_elements_and_plans():
    assert encoder.rotation_steps(N, "pow2") == [s << i for i in range(5) for s in (1, -1)]
    with pytest.raises(ValueError, match="pow2"):
        encoder.rotation_steps(N, "all")
    with pytest.raises(TypeError, match="rotations"):
        encoder.rotation_steps(N, 3)
    with pytest.raises(TypeError, match="step"):
        encoder.galois_element(N, 1.0)
    elements = encoder.galois_elements(N, [1, N // 2 + 1, 0, -1], columns=True)
    assert elements == [3, encoder.galois_element(N, -1), 2 * N - 1]  # 1 + n/2 = 1 (mod n/2); 0 -> 1 dropped
    pow2 = encoder.galois_elements(N, encoder.rotation_steps(N, "pow2"), columns=False)
    for step in rng().integers(-N, N, 20).tolist():
        plan = encoder.rotation_plan(N, step, pow2)
        assert plan is not None and math.prod(plan) % (2 * N) == encoder.galois_element(N, step)
    assert encoder.rotation_plan(N, 7, [encoder.galois_element(N, 7)]) == [encoder.galois_element(N, 7)]
    assert encoder.rotation_plan(N, 3, [encoder.galois_element(N, 1)]) is None  # the key of 2 is missing
    assert encoder.rotation_plan(N, 0, []) == [1]


# -- keys, key switching, automorphisms -----------------------------------------------------------------
@pytest.mark.parametrize("digit_limbs", [1, 2, 3])
def test_key_switching_is_exact_up_to_a_small_error_at_every_level(ops, moduli, digit_limbs):
    q, special = moduli
    qp = q + (special,)
    s = keys.secret_key(ops, qp, N)
    other = keys.secret_key(ops, qp, N)
    ksk = keys.key_switching_key(ops, q, special, s, other, digit_limbs=digit_limbs)
    assert ksk.shape == (switching.digit_count(len(q), digit_limbs), 2, len(q) + 1, N)
    for limbs in (len(q), 2, 1):  # levels that cut a digit short included
        ql = q[:limbs]
        c = ops.random_uniform((2, limbs, N), ql)
        level_key = switching.key_at_level(ops.xp, ksk, limbs, digit_limbs)
        assert level_key.shape == (switching.digit_count(limbs, digit_limbs), 2, limbs + 1, N)
        out = switching.key_switch(ops, ql, special, c, level_key, digit_limbs=digit_limbs)
        assert out.shape == (2, 2, limbs, N)
        # out0 + out1 s - c s' is the key-switching error, small; a digit of several limbs brings the product of all
        # but one of them (50 bits each) into it (over P), beyond the limbs' size: checked as one integer mod Q
        want = ring.intt(ops.mul(ring.ntt(c, ql), other[:limbs], ql), ql)
        err = ops.sub(ring.phase(ops, out, s[:limbs], ql), want, ql)
        if min(digit_limbs, limbs) == 1:
            assert small_in_every_limb(err, ql, 2**20)
        assert small_mod_q(err, ql, 2 ** (20 + 50 * (min(digit_limbs, limbs) - 1)))
        extra = ops.random_uniform((2, 2, limbs, N), ql)
        fused = switching.key_switch(ops, ql, special, c, level_key, add=extra, digit_limbs=digit_limbs)
        assert np.array_equal(fused, ops.add(out, extra, ql))


def test_automorphism_with_its_galois_key(ops, moduli):
    q, special = moduli
    qp = q + (special,)
    s = keys.secret_key(ops, qp, N)
    g = encoder.galois_element(N, 3)
    gal = keys.galois_keys(ops, q, special, s, [g])
    assert gal.shape == (1, len(q), 2, len(q) + 1, N)
    c = ops.random_uniform((2, 2, len(q), N), q)

    def switch(c1):
        return switching.key_switch(ops, q, special, c1, gal[0])

    out = switching.apply_automorphism(ops, c, g, q, switch)
    # the phase under s of the result is the phase of c, moved by X -> X^g, plus a small error
    want = ops.automorphism(ring.phase(ops, c, s[: len(q)], q), g, q, ntt_form=False)
    assert small_in_every_limb(ops.sub(ring.phase(ops, out, s[: len(q)], q), want, q), q, 2**20)
    assert keys.galois_keys(ops, q, special, s, []).shape == (0, len(q), 2, len(q) + 1, N)


def test_public_key_and_key_ids(ops, moduli):
    q, special = moduli
    s = keys.secret_key(ops, q + (special,), N)
    for factor in (1, T):
        pk = keys.public_key(ops, q, s, error_factor=factor)
        zero = ops.add(pk[0], ops.mul(pk[1], s[: len(q)], q), q)  # -(f e), NTT form
        e = centred(ring.intt(zero, q), q)
        assert small_in_every_limb(ring.intt(zero, q), q, 40 * factor)
        assert all(int(v) % factor == 0 for v in e[0].ravel())
        keys.check_secret_matches(s, pk, q)
    with pytest.raises(ValueError, match="does not belong"):
        keys.check_secret_matches(keys.secret_key(ops, q + (special,), N), pk, q)
    assert keys.key_id_of(pk) == hashlib.sha256(np.ascontiguousarray(pk).tobytes()).hexdigest()[:16]
    assert keys.key_id_of(pk, b"bgv") != keys.key_id_of(pk)


# -- noise budgets ---------------------------------------------------------------------------------
def test_noise_budgets_match_python_ints(moduli):
    q = moduli[0]
    big_q = math.prod(q)
    r = rng()
    for factor in (1, T):
        items = []
        for bits in (10, 60, 140):
            v = [int(x) for x in r.integers(-(2**62), 2**62, N)]
            v = [x >> (62 - min(bits, 62)) << max(0, bits - 62) for x in v]
            items.append(v)
        phase = np.array([[[x % p for x in v] for p in q] for v in items], dtype=np.uint64)
        want = []
        for v in items:
            w = [(x * factor) % big_q for x in v]
            norm = max(min(x, big_q - x) for x in w)
            want.append(max(0, big_q.bit_length() - norm.bit_length() - 1))
        assert noise.budgets(phase, q, factor).tolist() == want
    assert noise.budgets(np.zeros((0, len(q), N), dtype=np.uint64), q).shape == (0,)


# -- byte frames -------------------------------------------------------------------------------------
def test_digest_frame_layout_and_damage():
    f = frame.DigestFrame(b"HETST\x00", 2, b"hebatch-test", "test object")
    header, body = {"kind": "x", "n": 3}, bytes(range(40))
    blob = f.pack(header, body)
    head = json.dumps(header, sort_keys=True).encode()
    prefix = struct.pack("<6sHIQ", b"HETST\x00", 2, len(head), len(body))
    digest = hashlib.blake2b(prefix + head + body, digest_size=32, person=b"hebatch-test").digest()
    assert blob == prefix + digest + head + body
    assert f.unpack(blob) == (header, body)
    for pos in range(len(blob)):
        bad = bytearray(blob)
        bad[pos] ^= 0x01
        with pytest.raises(ValueError):
            f.unpack(bytes(bad))
    with pytest.raises(ValueError, match="truncated"):
        f.unpack(blob[:-1])
    with pytest.raises(ValueError, match="trailing"):
        f.unpack(blob + b"\0")
    with pytest.raises(TypeError, match="must be bytes"):
        f.unpack("text")


def test_trailing_hash_frame_layout_and_damage():
    f = frame.TrailingHashFrame(b"HETST\x00", 1, "test object")
    header, body = {"kind": "x"}, bytes(range(16))
    blob = f.pack(header, body)
    head = json.dumps(header, sort_keys=True).encode()
    start = b"HETST\x00" + struct.pack("<HI", 1, len(head)) + head + body
    assert blob == start + hashlib.sha256(start).digest()
    assert f.unpack(blob) == (header, body)
    for pos in range(len(blob)):
        bad = bytearray(blob)
        bad[pos] ^= 0x01
        with pytest.raises(ValueError):
            f.unpack(bytes(bad))
    raw = b"HETST\x00" + struct.pack("<HI", 1, 4) + b"[1] "
    with pytest.raises(ValueError, match="JSON object"):
        f.unpack(raw + hashlib.sha256(raw).digest())


# -- checks on use -----------------------------------------------------------------------------------
def test_same_key_batch_shape_and_reduced_entries():
    class Obj:
        def __init__(self, key_id):
            self.key_id = key_id

    assert checks.same_key(("a", Obj("k")), ("b", Obj(None)), ("c", None), ("d", Obj("k"))) == "k"
    with pytest.raises(ValueError, match="a belongs to key k but d to key j"):
        checks.same_key(("a", Obj("k")), ("d", Obj("j")))
    assert checks.batch_shape((2, 1), (3,), "a", "b") == (2, 3)
    with pytest.raises(ValueError, match="do not broadcast"):
        checks.batch_shape((2,), (3,), "a", "b")
    q = (97, 193)
    data = np.zeros((2, 2, 8), dtype=np.uint64)
    checks.check_reduced(data, q, "x")
    data[1, 1, 5] = 193
    with pytest.raises(ValueError, match=r"x has entries >= their limb's modulus \(limb 1, modulus 193\)"):
        checks.check_reduced(data, q, "x")


def test_keys_are_checked_once_per_array_other_objects_every_time():
    params = bgv.Params.preset("n8192")
    ctx = bgv.Context(params, backend="cpu")
    k = ctx.keygen(columns=False)
    ct = ctx.encrypt(k.public, ctx.encode(np.zeros(params.n, dtype=np.int64)))
    bad = ct.data.copy()
    bad[0, 2, 3] = params.q[2]
    with pytest.raises(ValueError, match=r"ct has entries >= their limb's modulus \(limb 2"):
        ctx.decrypt(k.secret, bgv.Ciphertext(bad, params.fingerprint, k.key_id))
    ctx.decrypt(k.secret, ct)  # checks the secret's entries once
    k.secret.data[1, 0] = params.q[1]  # modified in place: documented as not allowed, and not checked again
    ctx.decrypt(k.secret, ct)
    fresh = bgv.SecretKey(k.secret.data.copy(), params.fingerprint, k.key_id)
    with pytest.raises(ValueError, match=r"secret has entries >= their limb's modulus \(limb 1"):
        ctx.decrypt(fresh, ct)
    with pytest.raises(TypeError, match=r"ct must be a bgv.Ciphertext, got Ciphertext"):
        ctx.decrypt(k.secret, bfv.Ciphertext(ct.data, params.fingerprint, k.key_id))


# -- parameter rules ---------------------------------------------------------------------------------
def test_parameter_rules():
    n, t = 4096, 65537
    q, special = rules.moduli(n, t, rules.primes_for_bits([36, 36], n, {t}), 0, 37)
    assert special.bit_length() == 37 and special % (2 * n) == 1 and special not in q
    assert [p.bit_length() for p in rules.primes_for_bits([30, 36, 30], n, set())] == [30, 36, 30]
    with pytest.raises(ValueError, match="security"):
        rules.moduli(n, t, rules.primes_for_bits([36, 36, 36], n, {t}), 0, None)
    with pytest.raises(ValueError, match="distinct"):
        rules.moduli(n, t, q, q[0], None)
    with pytest.raises(ValueError, match="special or special_bits"):
        rules.moduli(n, t, q, special, 37)
    with pytest.raises(ValueError, match="1 mod 2n"):
        rules.check_plain_modulus(40961, 8192)
    with pytest.raises(ValueError, match="n must"):
        rules.check_degree(2048)
    with pytest.raises(ValueError, match="q_bits"):
        rules.limb_bits([19])


# -- BGV worker contexts ------------------------------------------------------------------------------
def test_bgv_worker_contexts_live_in_the_worker_state(monkeypatch):
    from hebatch.distributed import bgv as dist_bgv
    from hebatch.distributed import plugin

    state = plugin.WorkerState()
    monkeypatch.setattr(plugin._LocalState, "state", state)  # this process's state, fresh for the test
    params = bgv.Params.preset("n8192")
    ctx = dist_bgv.worker_context(params, "cpu")
    assert dist_bgv.worker_context(params, "cpu") is ctx and isinstance(ctx, bgv.Context)
    assert state.contexts == {("bgv", params.fingerprint, "cpu"): ctx}
    assert not hasattr(dist_bgv, "_CONTEXTS")
    state.close()
    assert dist_bgv.worker_context(params, "cpu") is not ctx  # a closed state forgets its contexts


def test_bgv_key_sets_are_checked_as_bfv_ones():
    params = bgv.Params.preset("n8192")
    ctx = bgv.Context(params, backend="cpu")
    a, b = ctx.keygen(columns=False), ctx.keygen(columns=False)
    fp = params.fingerprint
    assert bgv.Keys.from_bytes(a.to_bytes(), params).key_id == a.key_id
    mixed = bgv.Keys(bgv.SecretKey(b.secret.data, fp, a.key_id), a.public, a.relin, a.galois)
    with pytest.raises(ValueError, match="secret key does not belong"):
        bgv.Keys.from_bytes(mixed.to_bytes(), params)
    forged = bgv.Keys(None, bgv.PublicKey(b.public.data, fp, a.key_id), a.relin, a.galois)
    with pytest.raises(ValueError, match="hash is not its key id"):
        bgv.Keys.from_bytes(forged.to_bytes(), params)
