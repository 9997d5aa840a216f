"""Checks of an RnsOps implementation against exact Python-int oracles, shared by the GPU tests and
the CPU tests that run the GPU kernels' host build. Every check draws fresh random data and plants
the edge values 0 and q - 1."""

from __future__ import annotations

import math

import numpy as np

import hebatch as hb


def moduli_for(n: int, limbs: int, bits=(61, 55, 40, 30)) -> tuple[int, ...]:
    """`limbs` distinct NTT primes for n, taking bit sizes in turn (61 bits first)."""
    per = -(-limbs // len(bits))
    groups = [hb.ntt_primes(b, n, per) for b in bits]
    return tuple([g[i] for i in range(per) for g in groups][:limbs])


def residues(rng, lead, moduli, n, edges=True) -> np.ndarray:
    """Random reduced residues of shape lead + (L, n) with 0 and q - 1 planted at the start of each row."""
    x = np.empty(tuple(lead) + (len(moduli), n), dtype=np.uint64)
    for i, q in enumerate(moduli):
        x[..., i, :] = rng.integers(0, q, size=tuple(lead) + (n,), dtype=np.uint64)
        if edges and n >= 4:
            x[..., i, 0], x[..., i, 1], x[..., i, 2] = 0, q - 1, q // 2
    return x


def obj(x) -> np.ndarray:
    return np.asarray(x).astype(object)


def qcol(moduli) -> np.ndarray:
    return np.array(moduli, dtype=object)[:, None]


def check_equal(got, want, what):
    got = np.asarray(got)
    assert got.dtype == np.uint64, (what, got.dtype)
    assert got.shape == np.shape(want), (what, got.shape, np.shape(want))
    bad = np.argwhere(got.astype(object) != want)
    assert bad.size == 0, f"{what}: {len(bad)} wrong entries, first at {tuple(bad[0])}"


def check_elementwise(ops, rng, lead, n, moduli, to_host, reference=None):
    """add, sub, mul, mul_add, neg, mul_scalar, with limb-axis and batch broadcasting and edge values."""
    a = residues(rng, lead, moduli, n)
    b = residues(rng, lead, moduli, n)
    c = residues(rng, lead, moduli, n)
    q = qcol(moduli)
    qmin = min(moduli)
    b1 = rng.integers(0, qmin, size=tuple(lead) + (1, n), dtype=np.uint64)  # limb axis of size 1
    b1[..., 0, -1] = qmin - 1
    c0 = residues(rng, (), moduli, n)  # no batch axes: broadcast over the batch
    da, db, dc, db1, dc0 = (ops.asarray(v) for v in (a, b, c, b1, c0))
    A, B, C, B1, C0 = obj(a), obj(b), obj(c), obj(b1), obj(c0)
    cases = {
        "add": (ops.add(da, db, moduli), (A + B) % q),
        "sub": (ops.sub(da, db, moduli), (A - B) % q),
        "mul": (ops.mul(da, db, moduli), (A * B) % q),
        "mul_add": (ops.mul_add(da, db, dc, moduli), (A * B + C) % q),
        "neg": (ops.neg(da, moduli), (-A) % q),
        "add limb-broadcast": (ops.add(da, db1, moduli), (A + B1) % q),
        "sub limb-broadcast first": (ops.sub(db1, da, moduli), (B1 - A) % q),
        "mul limb-broadcast": (ops.mul(db1, da, moduli), (A * B1) % q),
        "mul_add broadcast": (ops.mul_add(da, db1, dc0, moduli), (A * B1 + C0) % q),
        "mul batch-broadcast": (ops.mul(dc0, db, moduli), (C0 * B) % q),
    }
    scalars = [int(rng.integers(0, 2**63)) * 2**70 + int(rng.integers(0, 2**63)) for _ in moduli]
    scalars[0] = moduli[0] - 1
    cases["mul_scalar"] = (ops.mul_scalar(da, scalars, moduli), (A * np.array(scalars, dtype=object)[:, None]) % q)
    for what, (got, want) in cases.items():
        got = to_host(got)
        check_equal(got, want, what)
        if reference is not None:
            check_equal(got, obj(_reference_call(reference, what, a, b, c, b1, c0, scalars, moduli)), what + " vs cpu")


def _reference_call(ref, what, a, b, c, b1, c0, scalars, moduli):
    return {
        "add": lambda: ref.add(a, b, moduli),
        "sub": lambda: ref.sub(a, b, moduli),
        "mul": lambda: ref.mul(a, b, moduli),
        "mul_add": lambda: ref.mul_add(a, b, c, moduli),
        "neg": lambda: ref.neg(a, moduli),
        "add limb-broadcast": lambda: ref.add(a, b1, moduli),
        "sub limb-broadcast first": lambda: ref.sub(b1, a, moduli),
        "mul limb-broadcast": lambda: ref.mul(b1, a, moduli),
        "mul_add broadcast": lambda: ref.mul_add(a, b1, c0, moduli),
        "mul batch-broadcast": lambda: ref.mul(c0, b, moduli),
        "mul_scalar": lambda: ref.mul_scalar(a, scalars, moduli),
    }[what]()


def check_lifts(ops, rng, lead, n, moduli, to_host, reference=None):
    """reduce, from_signed (both input shapes), centered_lift (odd and even m)."""
    q = qcol(moduli)
    x = rng.integers(0, 2**64, size=tuple(lead) + (1, n), dtype=np.uint64)
    x[..., 0, :3] = (0, 2**64 - 1, moduli[0])
    got = to_host(ops.reduce(ops.asarray(x), moduli))
    check_equal(got, obj(x) % q, "reduce")
    if reference is not None:
        check_equal(got, obj(reference.reduce(x, moduli)), "reduce vs cpu")

    s = rng.integers(-(2**62) + 1, 2**62, size=tuple(lead) + (n,), dtype=np.int64)
    s[..., :4] = (0, -1, 2**62 - 1, -(2**62) + 1)
    s[..., 4:8] = rng.integers(-20, 21, size=4)
    s[..., 8] = -moduli[0]  # negative multiple of q: residue 0, not q
    want = obj(s)[..., None, :] % q
    for shape_name, arg in (("(..., n)", s), ("(..., 1, n)", s[..., None, :])):
        got = to_host(ops.from_signed(ops.asarray(arg), moduli))
        check_equal(got, want, f"from_signed {shape_name}")
        if reference is not None:
            check_equal(got, obj(reference.from_signed(arg, moduli)), f"from_signed {shape_name} vs cpu")

    for m in (65537, 2**61 - 1, int(rng.integers(2, 2**62)) & ~1 or 2):
        v = rng.integers(0, m, size=tuple(lead) + (1, n), dtype=np.uint64)
        v[..., 0, :4] = (0, m - 1, m // 2, (m + 1) // 2 % m)
        if m > 2 * moduli[-1]:
            v[..., 0, 4] = m - moduli[-1]  # negative multiple of the last modulus: residue 0
        V = obj(v)
        signed = np.where(V > m // 2, V - m, V)
        got = to_host(ops.centered_lift(ops.asarray(v), m, moduli))
        check_equal(got, signed % q, f"centered_lift m={m}")
        if reference is not None:
            check_equal(got, obj(reference.centered_lift(v, m, moduli)), f"centered_lift m={m} vs cpu")


def base_convert_oracle(x, src, dst):
    big_q = 1
    for q in src:
        big_q *= q
    X = obj(x)
    total = 0
    for i, q in enumerate(src):
        qhat = big_q // q
        t = X[..., i, :] * pow(qhat % q, -1, q) % q
        total = total + t[..., None, :] * np.array([qhat % p for p in dst], dtype=object)[:, None]
    return total % qcol(dst)


def check_base_convert(ops, rng, lead, n, src, dst, to_host, reference=None):
    x = residues(rng, lead, src, n)
    x[..., :, 3] = np.array(src, dtype=np.uint64) - np.uint64(1)  # every limb at q - 1 in one column
    got = to_host(ops.base_convert(ops.asarray(x), src, dst))
    check_equal(got, base_convert_oracle(x, src, dst), f"base_convert {len(src)}->{len(dst)}")
    if reference is not None:
        check_equal(got, obj(reference.base_convert(x, src, dst)), "base_convert vs cpu")


def check_digit_convert(ops, rng, lead, n, src, dst, digit_limbs, to_host, reference=None):
    """digit_convert: digit k equals base_convert of its limbs bit for bit (the exact oracle), is the limbs' CRT
    value plus a multiple of their product below digit_limbs times it, and equals x on its own limbs."""
    x = residues(rng, lead, src, n)
    x[..., :, 3] = np.array(src, dtype=np.uint64) - np.uint64(1)
    got = to_host(ops.digit_convert(ops.asarray(x), src, dst, digit_limbs))
    a = digit_limbs
    digits = -(-len(src) // a)
    assert got.shape == tuple(lead) + (digits, len(dst), n), got.shape
    for k in range(digits):
        limbs = src[k * a : (k + 1) * a]
        what = f"digit_convert {len(src)} limbs by {a}: digit {k}"
        check_equal(got[..., k, :, :], base_convert_oracle(x[..., k * a : (k + 1) * a, :], limbs, dst), what)
        for i, q in enumerate(limbs):
            if q in dst:
                assert (got[..., k, dst.index(q), :] == x[..., k * a + i, :]).all(), f"{what}: its limb {q}"
    if reference is not None:
        check_equal(got, obj(reference.digit_convert(x, src, dst, digit_limbs)), "digit_convert vs cpu")


def check_inner_product(ops, rng, lead, digits, n, moduli, to_host, parts=2):
    x = np.stack([residues(rng, lead, moduli, n) for _ in range(digits)], axis=-3)
    key = np.stack([np.stack([residues(rng, (), moduli, n) for _ in range(parts)]) for _ in range(digits)])
    x[..., :, :, 5] = np.array(moduli, dtype=np.uint64) - np.uint64(1)
    key[:, :, :, 5] = np.array(moduli, dtype=np.uint64) - np.uint64(1)
    got = to_host(ops.inner_product(ops.asarray(x), ops.asarray(key), moduli))
    X, K = obj(x), obj(key)
    want = sum(X[..., k, None, :, :] * K[k] for k in range(digits)) % qcol(moduli)
    check_equal(got, want, f"inner_product digits={digits}")


def automorphism_coeff_oracle(x, g, moduli):
    n = x.shape[-1]
    e = (np.arange(n, dtype=object) * g) % (2 * n)
    out = np.empty(x.shape, dtype=object)
    X = obj(x)
    q = qcol(moduli)
    out[..., (e % n).astype(np.int64)] = np.where(e >= n, (-X) % q, X)
    return out


def check_automorphism(ops, rng, lead, n, moduli, to_host, ntt_reference=True, reference=None):
    x = residues(rng, lead, moduli, n)
    x[..., n - 1] = 0  # wraps past n for g = 2n - 1: -0 must stay 0
    for g in sorted({3, 5, 2 * n - 1, int(rng.integers(0, n)) * 2 + 1}):
        got = to_host(ops.automorphism(ops.asarray(x), g, moduli, ntt_form=False))
        check_equal(got, automorphism_coeff_oracle(x, g, moduli), f"automorphism coeff g={g}")
        if ntt_reference:
            # the NTT form commutes with the transform: NTT(x(X^g)) = perm(NTT(x))
            X = hb.ntt(x, list(moduli), negacyclic=True)
            got_ntt = to_host(ops.automorphism(ops.asarray(X), g, moduli, ntt_form=True))
            check_equal(got_ntt, obj(hb.ntt(np.asarray(got), list(moduli), negacyclic=True)), f"automorphism ntt g={g}")
        if reference is not None:
            check_equal(got, obj(reference.automorphism(x, g, moduli, False)), f"automorphism coeff g={g} vs cpu")
        # views of a 2-component array: the image of one part, and the other's image added into a part in place
        pair = residues(rng, tuple(lead) + (2,), moduli, n)
        dpair = ops.asarray(pair)
        got_view = to_host(ops.automorphism(dpair[..., 1, :, :], g, moduli, ntt_form=False))
        check_equal(got_view, automorphism_coeff_oracle(pair[..., 1, :, :], g, moduli), f"automorphism of a view g={g}")
        want_sum = (obj(pair[..., 1, :, :]) + automorphism_coeff_oracle(pair[..., 0, :, :], g, moduli)) % qcol(moduli)
        want_x = obj(pair[..., 0, :, :])  # (dpair may be pair itself on a NumPy engine)
        acc = dpair[..., 1, :, :]
        assert ops.automorphism_add(dpair[..., 0, :, :], g, moduli, acc) is acc
        check_equal(to_host(dpair[..., 1, :, :]), want_sum, f"automorphism_add into a view g={g}")
        check_equal(to_host(dpair[..., 0, :, :]), want_x, f"automorphism_add leaves its input g={g}")


def check_random(ops, to_host, n=4096, moduli=None):
    """Distribution sanity with tolerances of >= 8 standard deviations (a failure means a bug)."""
    moduli = moduli or moduli_for(n, 4)
    shape = (16, len(moduli), n)
    u = to_host(ops.random_uniform(shape, moduli))
    u2 = to_host(ops.random_uniform(shape, moduli))
    assert u.dtype == np.uint64 and u.shape == shape
    assert not (u == u2).all(), "two calls gave the same values: the counter does not advance"
    count = shape[0] * n
    for i, q in enumerate(moduli):
        limb = u[:, i, :]
        assert (limb < np.uint64(q)).all(), f"uniform: a value >= q in limb {i}"
        mean = float(np.mean(limb.astype(np.float64))) / q
        assert abs(mean - 0.5) < 8 * (1 / 12 / count) ** 0.5, f"uniform limb {i}: mean/q {mean}"
        top = float(np.mean(limb.astype(np.float64) >= q / 2))
        assert abs(top - 0.5) < 8 * (0.25 / count) ** 0.5, f"uniform limb {i}: P(x >= q/2) {top}"
        low_bit = float(np.mean(limb & np.uint64(1)))
        assert abs(low_bit - 0.5) < 8 * (0.25 / count) ** 0.5, f"uniform limb {i}: P(odd) {low_bit}"

    size = 1 << 20
    t = to_host(ops.random_ternary((16, size // 16)))
    assert t.dtype == np.int64 and t.shape == (16, size // 16)
    assert set(np.unique(t).tolist()) <= {-1, 0, 1}
    for v in (-1, 0, 1):
        freq = float(np.mean(t == v))
        assert abs(freq - 1 / 3) < 8 * ((2 / 9) / size) ** 0.5, f"ternary: P({v}) = {freq}"
    assert not (t == to_host(ops.random_ternary((16, size // 16)))).all()

    sigma = 3.2
    e = to_host(ops.random_gaussian((size,), sigma))
    assert e.dtype == np.int64 and e.shape == (size,)
    assert np.abs(e).max() <= round(6 * sigma), "gaussian: a value beyond the 6 sigma cut"
    std = float(np.std(e.astype(np.float64)))
    want_std = (sigma**2 + 1 / 12) ** 0.5  # rounding adds the variance of a uniform on [-1/2, 1/2]
    assert abs(std - want_std) < 0.03, f"gaussian std {std}, expected {want_std}"
    assert abs(float(np.mean(e))) < 8 * sigma / size**0.5, f"gaussian mean {np.mean(e)}"
    within = float(np.mean(np.abs(e) <= 3))  # P(|round(z)| <= 3) = P(|z| < 3.5)
    want = math.erf(3.5 / sigma / 2**0.5)
    assert abs(within - want) < 8 * (want * (1 - want) / size) ** 0.5, f"gaussian P(|e| <= 3) = {within}, not {want}"


def check_bfv(ctx, cpu_ctx, keys, to_cpu, rng, batch=2):
    """BFV on `ctx` against the same computation on plaintexts and, bit for bit, against `cpu_ctx` (the
    NumPy backend) on the same ciphertexts and keys. to_cpu moves an array to NumPy."""
    import copy

    params = ctx.params
    t, n = params.t, params.n
    v1 = rng.integers(0, t, size=(batch, n))
    v2 = rng.integers(0, t, size=(batch, n))
    v1[0, :2] = (0, t - 1)
    c1 = ctx.encrypt(keys.public, ctx.encode(v1))
    c2 = ctx.encrypt(keys.public, ctx.encode(v2))

    def host(obj):  # the same bfv object with its data in host memory
        out = copy.copy(obj)
        out.data = np.asarray(to_cpu(obj.data))
        return out

    moved = {id(o): host(o) for o in (c1, c2, keys.secret, keys.relin, keys.galois)}

    def on_cpu(op):  # op run by the NumPy backend on host copies of the same objects
        class Swapped:
            def __getattr__(self, name):
                fn = getattr(cpu_ctx, name)
                return lambda *args: fn(*(moved.get(id(a), a) for a in args))

        return op(Swapped())

    def decrypted(ct):
        got = np.asarray(to_cpu(ctx.decode(ctx.decrypt(keys.secret, ct))))
        ref = np.asarray(cpu_ctx.decode(cpu_ctx.decrypt(moved[id(keys.secret)], host(ct))))
        assert (got == ref).all(), "decryption differs between the backends"
        return got

    rotated = np.roll(v1.reshape(batch, 2, n // 2), -1, axis=-1).reshape(batch, n)
    assert (decrypted(c1) == v1).all(), "encrypt/decrypt"
    cases = {
        "add": (lambda c: c.add(c1, c2), (v1 + v2) % t),
        "multiply+relinearize": (lambda c: c.multiply(c1, c2, keys.relin), (v1 * v2) % t),
        "multiply": (lambda c: c.multiply(c1, c2), (v1 * v2) % t),
        "rotate": (lambda c: c.rotate(c1, 1, keys.galois), rotated),
    }
    for what, (op, want) in cases.items():
        ct = op(ctx)
        assert (decrypted(ct) == want).all(), what
        assert (np.asarray(to_cpu(ct.data)) == on_cpu(op).data).all(), f"{what}: bits differ from the CPU backend"
    relin = ctx.relinearize(ctx.multiply(c1, c2), keys.relin)
    assert (decrypted(relin) == (v1 * v2) % t).all(), "relinearize"


def behz_bases(n: int, limbs: int):
    """A BFV-like setting: q of `limbs` 55-bit primes, B_sk of limbs + 2 61-bit primes (m_sk last),
    m~ = 2^32 - 5, t = 65537."""
    q = tuple(hb.ntt_primes(55, n, limbs))
    bsk = tuple(hb.ntt_primes(61, n, limbs + 2))
    return q, bsk, 2**32 - 5, 65537


def check_scale_round(ops, ref, rng, lead, n, q, gamma, t, to_host):
    """scale_round of `ops` (c0 added on the way or not, on views) equals RnsOps' composition on random
    data, and on phases of fresh messages with noise within the budget it gives the messages exactly
    (round(t v / Q) mod t, from Python ints)."""
    from hebatch.backend import RnsOps

    xp = ops.xp
    limbs = len(q)
    both = residues(rng, tuple(lead) + (2,), q, n)  # (..., 2, L, n): a phase part and c0, views of one array
    dboth = xp.asarray(both)
    want = RnsOps.scale_round(ref, both[..., 1, :, :], q, t, gamma, add=both[..., 0, :, :])
    check_equal(
        to_host(ops.scale_round(dboth[..., 1, :, :], q, t, gamma, add=dboth[..., 0, :, :])),
        obj(want),
        "scale_round add",
    )
    want = RnsOps.scale_round(ref, both[..., 0, :, :], q, t, gamma)
    check_equal(to_host(ops.scale_round(dboth[..., 0, :, :], q, t, gamma)), obj(want), "scale_round")
    # phases v = round(Q m / t) + e split into two parts that add up to v mod Q
    big_q = math.prod(q)
    size = math.prod(lead) * n
    m = [int(v) for v in rng.integers(0, t, size=size)]
    bound = big_q // (64 * t)
    noise = [int(rng.integers(-(2**62), 2**62)) * bound // 2**62 for _ in range(size)]
    v = [((big_q * mi + t // 2) // t + ei) % big_q for mi, ei in zip(m, noise)]
    part = [int.from_bytes(rng.bytes(8 * limbs + 8), "little") % big_q for _ in range(size)]
    rest = [(vi - pi) % big_q for vi, pi in zip(v, part)]

    def split(values):
        out = np.array([[vi % qi for vi in values] for qi in q], dtype=np.uint64)  # (L, size)
        return np.moveaxis(out.reshape((limbs,) + tuple(lead) + (n,)), 0, -2)

    got = ops.scale_round(xp.asarray(split(rest)), q, t, gamma, add=xp.asarray(split(part)))
    check_equal(to_host(got), np.array(m, dtype=object).reshape(tuple(lead) + (n,)), "scale_round of phases")


def check_fused(ops, ref, rng, lead, n, limbs, to_host):
    """inner_product, mod_down, tensor and the BEHZ steps of `ops` equal RnsOps' generic compositions
    run by `ref` (the NumPy backend), on fresh data, including inputs that are views of larger arrays."""
    from hebatch.backend import RnsOps

    xp = ops.xp
    q, bsk, m_tilde, t = behz_bases(n, limbs)
    special = hb.ntt_primes(60, n, 1)[0]
    qp = q + (special,)

    def same(got, want, what):
        check_equal(to_host(got), obj(want), what)

    # mod_down on a view (the limbs of q and p of a 2-part accumulator), with and without add
    acc = residues(rng, tuple(lead) + (2,), qp, n)
    add = residues(rng, tuple(lead) + (2,), q, n)
    want = RnsOps.mod_down(ref, acc, q, special)
    same(ops.mod_down(xp.asarray(acc), q, special), want, "mod_down")
    same(ops.mod_down(xp.asarray(acc), q, special, add=xp.asarray(add)), ref.add(want, add, q), "mod_down add")
    # add as the first two parts of a 3-part array (relinearization's c0, c1), read in place
    three = residues(rng, tuple(lead) + (3,), q, n)
    got = ops.mod_down(xp.asarray(acc), q, special, add=xp.asarray(three)[..., :2, :, :])
    same(got, ref.add(want, three[..., :2, :, :], q), "mod_down add of two parts of three")
    # mod_down_rotated: c0(X^g) added to the first part, c0 a view of a 2-part ciphertext, for g = 1, 3, 2n - 1 and
    # a random odd g
    c = residues(rng, tuple(lead) + (2,), q, n)
    for g in (1, 3, 2 * n - 1, 2 * int(rng.integers(0, n)) + 1):
        want_rot = RnsOps.mod_down_rotated(ref, acc, q, special, c[..., 0, :, :], g)
        got = ops.mod_down_rotated(xp.asarray(acc), q, special, xp.asarray(c)[..., 0, :, :], g)
        same(got, want_rot, f"mod_down_rotated g = {g}")
    # the composition itself against Python ints: coefficient i of c0 moves to i g mod 2n, negated from n on
    g = 3
    image = np.zeros(c[..., 0, :, :].shape, dtype=object)
    for i in range(n):
        e = i * g % (2 * n)
        v = obj(c[..., 0, :, i])
        image[..., e % n] = (-v if e >= n else v) % qcol(q)[:, 0]
    check_equal(
        RnsOps.mod_down_rotated(ref, acc, q, special, c[..., 0, :, :], g),
        np.stack([(obj(want[..., 0, :, :]) + image) % qcol(q), obj(want[..., 1, :, :])], axis=-3),
        "mod_down_rotated: c0(X^g) added to the first part only",
    )
    # tensor on views of a (..., 4, L, n) array
    x = residues(rng, tuple(lead) + (4,), q, n)
    dx = xp.asarray(x)
    same(
        ops.tensor(dx[..., :2, :, :], dx[..., 2:, :, :], q),
        RnsOps.tensor(ref, x[..., :2, :, :], x[..., 2:, :, :], q),
        "tensor",
    )
    # BEHZ; the extension also written into the B_sk rows of a (..., 4, L + |B_sk|, n) array whose q rows hold x
    want_ext = RnsOps.behz_extend(ref, x, q, bsk, m_tilde)
    same(ops.behz_extend(dx, q, bsk, m_tilde), want_ext, "behz_extend")
    whole = xp.asarray(np.concatenate([x, residues(rng, tuple(lead) + (4,), bsk, n)], axis=-2))
    rows_b = whole[..., limbs:, :]
    assert ops.behz_extend(whole[..., :limbs, :], q, bsk, m_tilde, out=rows_b) is rows_b
    same(whole[..., limbs:, :], want_ext, "behz_extend into out")
    same(whole[..., :limbs, :], x, "behz_extend leaves its input rows")
    # the pair stacked with its extension: two sources read in place, one source, views, broadcast batch axes
    want_full = np.concatenate([x, want_ext], axis=-2)
    pair = (xp.ascontiguousarray(dx[..., :2, :, :]), xp.ascontiguousarray(dx[..., 2:, :, :]))  # two allocations
    same(ops.behz_extend_stack(pair, q, bsk, m_tilde), want_full, "behz_extend_stack")
    same(ops.behz_extend_stack((dx[..., :2, :, :], dx[..., 2:, :, :]), q, bsk, m_tilde), want_full, "of views")
    same(ops.behz_extend_stack((dx,), q, bsk, m_tilde), want_full, "behz_extend_stack of one source")
    same(
        ops.behz_extend_stack((dx[..., :1, :, :], dx[..., 1:, :, :]), q, bsk, m_tilde), want_full, "extend_stack 1 + 3"
    )
    if lead:  # a single item against a batch: the batch axes broadcast
        one = x[(0,) * len(lead)][..., :2, :, :]
        got = ops.behz_extend_stack((xp.asarray(one), dx[..., 2:, :, :]), q, bsk, m_tilde)
        pair = np.concatenate([np.broadcast_to(one, x[..., :2, :, :].shape), x[..., 2:, :, :]], axis=-3)
        same(got, np.concatenate([pair, RnsOps.behz_extend(ref, pair, q, bsk, m_tilde)], axis=-2), "broadcast")
    d = np.concatenate([residues(rng, tuple(lead) + (3,), q, n), residues(rng, tuple(lead) + (3,), bsk, n)], axis=-2)
    dd = xp.asarray(d)
    floor = ops.behz_floor(dd[..., :limbs, :], dd[..., limbs:, :], t, q, bsk)
    want_floor = RnsOps.behz_floor(ref, d[..., :limbs, :], d[..., limbs:, :], t, q, bsk)
    same(floor, want_floor, "behz_floor")
    floor2 = ops.behz_floor(xp.ascontiguousarray(dd[..., :limbs, :]), dd[..., limbs:, :], t, q, bsk)
    same(floor2, want_floor, "behz_floor (contiguous d_q, view d_bsk)")
    want_sk = RnsOps.behz_sk(ref, want_floor, bsk[:-1], bsk[-1], q)
    same(ops.behz_sk(floor, bsk[:-1], bsk[-1], q), want_sk, "behz_sk")
    same(ops.behz_scale_down(dd[..., :limbs, :], dd[..., limbs:, :], t, q, bsk[:-1], bsk[-1]), want_sk, "scale_down")
    composed = RnsOps.behz_scale_down(ref, d[..., :limbs, :], d[..., limbs:, :], t, q, bsk[:-1], bsk[-1])
    assert (np.asarray(composed) == want_sk).all(), "RnsOps.behz_scale_down is behz_sk of behz_floor"
    check_scale_round(ops, ref, rng, lead, n, q, bsk[0], t, to_host)
    # inner product against the composition
    digits = residues(rng, tuple(lead) + (limbs,), qp, n)
    key = np.stack([np.stack([residues(rng, (), qp, n) for _ in range(2)]) for _ in range(limbs)])
    same(
        ops.inner_product(xp.asarray(digits), xp.asarray(key), qp),
        RnsOps.inner_product(ref, digits, key, qp),
        "inner_product",
    )
