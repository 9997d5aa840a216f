"""Prime fields of zk provers: field facts, limb conversions, Montgomery arithmetic, and NTT, coset
NTT and LDE over BN254, BLS12-381, BLS12-377 (4 limbs) and Goldilocks, BabyBear (one word), against
exact Python-int oracles on fresh random inputs."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hebatch as hb
from hebatch.backend import get
from hebatch.backend.cpu.ntt256 import NumpyFieldNTT, bitrev_indices, field_digits, from_digits, to_digits
from hebatch.field import BABYBEAR_FIELD, GOLDILOCKS_FIELD, is_prime, two_adicity

from .conftest import to_host

BIG_FIELDS = [hb.BN254_FR, hb.BLS12_381_FR, hb.BLS12_377_FR]
ALL_FIELDS = BIG_FIELDS + [GOLDILOCKS_FIELD, BABYBEAR_FIELD]
ids = [f.name for f in BIG_FIELDS]

rng = random.Random()


def rand_ints(field, count, edges=True):
    """count random elements, starting with the edge values 0, 1, p-1, p-2 when there is room."""
    values = [rng.randrange(field.p) for _ in range(count)]
    if edges:
        for v in [0, 1, field.p - 1, field.p - 2][:count]:
            values[rng.randrange(count)] = v
    return values


def rand_limbs(field, shape):
    count = int(np.prod(shape))
    return field.to_limbs(np.array(rand_ints(field, count, edges=False), dtype=object).reshape(shape))


def naive_dft(coeffs, root, p):
    n = len(coeffs)
    return [sum(c * pow(root, j * k, p) for j, c in enumerate(coeffs)) % p for k in range(n)]


def horner(coeffs, z, p):
    acc = 0
    for c in reversed(coeffs):
        acc = (acc * z + c) % p
    return acc


def ints(field, arr):
    return [int(v) for v in np.asarray(field.from_limbs(arr)).reshape(-1)]


# -- field facts ------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ALL_FIELDS, ids=lambda f: f.name)
def test_field_facts(field):
    p, s = field.p, field.two_adicity
    assert is_prime(p)
    assert two_adicity(p) == s and (p - 1) % 2**s == 0 and ((p - 1) >> s) % 2 == 1
    assert pow(field.generator, (p - 1) // 2, p) == p - 1  # a non-residue: its 2-part has order 2^s
    top = field.root_of_unity(2**s)
    assert pow(top, 2**s, p) == 1 and pow(top, 2 ** (s - 1), p) == p - 1
    for log_n in (1, 2, rng.randrange(3, s + 1), s):
        w = field.root_of_unity(2**log_n)
        assert w == pow(field.generator, (p - 1) >> log_n, p)
        assert pow(w, 2**log_n, p) == 1 and pow(w, 2 ** (log_n - 1), p) == p - 1
    r = 1 << (64 * field.limbs)
    assert field.R == r % p and field.R2 == r * r % p
    assert p * field.p_inv_neg % 2**64 == 2**64 - 1
    assert sum(limb << (64 * k) for k, limb in enumerate(field.p_limbs)) == p


def test_named_field_constants():
    assert hb.BN254_FR.p == 21888242871839275222246405745257275088548364400416034343698204186575808495617
    assert (hb.BN254_FR.generator, hb.BN254_FR.two_adicity, hb.BN254_FR.limbs) == (5, 28, 4)
    assert (hb.BLS12_381_FR.generator, hb.BLS12_381_FR.two_adicity) == (7, 32)
    assert (hb.BLS12_377_FR.generator, hb.BLS12_377_FR.two_adicity) == (22, 47)
    assert GOLDILOCKS_FIELD.p == hb.GOLDILOCKS and BABYBEAR_FIELD.p == hb.BABYBEAR
    assert GOLDILOCKS_FIELD.generator == hb.primitive_root(hb.GOLDILOCKS)
    assert BABYBEAR_FIELD.generator == hb.primitive_root(hb.BABYBEAR)


def test_field_by_name():
    assert hb.field_by_name("bn254") is hb.BN254_FR
    assert hb.field_by_name("BLS12-381") is hb.BLS12_381_FR
    assert hb.field_by_name("bls12_377") is hb.BLS12_377_FR
    assert hb.field_by_name("goldilocks").p == hb.GOLDILOCKS
    assert hb.field_by_name("babybear").p == hb.BABYBEAR
    with pytest.raises(ValueError, match="name must be one of"):
        hb.field_by_name("secp256k1")
    with pytest.raises(TypeError, match="name"):
        hb.field_by_name(254)


def test_prime_field_facts_are_checked_on_construction():
    p = hb.BN254_FR.p
    with pytest.raises(ValueError, match="not prime"):
        hb.PrimeField("bad", p + 2, 5, 28)
    with pytest.raises(ValueError, match="two_adicity 27 is wrong"):
        hb.PrimeField("bad", p, 5, 27)
    with pytest.raises(ValueError, match="generator 4 is a square"):
        hb.PrimeField("bad", p, 4, 28)
    assert hb.PrimeField("copy", p, 5, 28).root_of_unity(8) == hb.BN254_FR.root_of_unity(8)


@pytest.mark.parametrize("field", BIG_FIELDS, ids=ids)
def test_root_of_unity_rejects_bad_sizes(field):
    with pytest.raises(ValueError, match="power of two"):
        field.root_of_unity(12)
    with pytest.raises(ValueError, match="two-adicity"):
        field.root_of_unity(2 ** (field.two_adicity + 1))


# -- limbs and Montgomery form -----------------------------------------------------------------


@pytest.mark.parametrize("field", ALL_FIELDS, ids=lambda f: f.name)
def test_limb_round_trip(field):
    values = rand_ints(field, 60)
    arr = field.to_limbs(np.array(values, dtype=object).reshape(3, 20))
    assert arr.dtype == np.uint64 and arr.shape == (3, 20, field.limbs)
    assert ints(field, arr) == values
    for k in range(field.limbs):  # little-endian limbs
        assert int(arr[0, 0, k]) == (values[0] >> (64 * k)) % 2**64
    assert field.from_limbs(field.to_limbs(values[5])) == values[5]
    with pytest.raises(ValueError, match="0 <= v < p"):
        field.to_limbs([1, field.p])
    with pytest.raises(ValueError, match="0 <= v < p"):
        field.to_limbs(-1)
    with pytest.raises(TypeError, match="integers"):
        field.to_limbs([1.5])
    with pytest.raises(ValueError, match="last axis"):
        field.from_limbs(np.zeros((3, field.limbs + 1), dtype=np.uint64))


@pytest.mark.parametrize("field", ALL_FIELDS, ids=lambda f: f.name)
def test_montgomery_round_trip(field):
    values = rand_ints(field, 40)
    arr = field.to_limbs(values)
    mont = field.to_montgomery(arr)
    assert ints(field, mont) == [v * field.R % field.p for v in values]
    assert (field.from_montgomery(mont) == arr).all()


@pytest.mark.parametrize("field", BIG_FIELDS, ids=ids)
def test_digit_arithmetic_matches_python_ints(field):
    p, count = field.p, 3000
    a, b = rand_ints(field, count), rand_ints(field, count)
    ops = field_digits(field)
    da, db = to_digits(field.to_limbs(a)), to_digits(field.to_limbs(b))
    assert (from_digits(da) == field.to_limbs(a)).all()
    r_inv = pow(ops.radix, -1, p)  # the engine's internal Montgomery radix
    assert ints(field, from_digits(ops.mont_mul(da, db))) == [x * y * r_inv % p for x, y in zip(a, b)]
    assert ints(field, from_digits(ops.add(da, db))) == [(x + y) % p for x, y in zip(a, b)]
    assert ints(field, from_digits(ops.sub(da, db))) == [(x - y) % p for x, y in zip(a, b)]
    engine = NumpyFieldNTT()
    prod = engine.mul(field.to_limbs(a).reshape(3, 1000, 4), field.to_limbs(b).reshape(3, 1000, 4), field)
    assert ints(field, prod) == [x * y % p for x, y in zip(a, b)]


# -- NTT ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", BIG_FIELDS, ids=ids)
@pytest.mark.parametrize("n", [2, 4, 16, 64])
def test_ntt_matches_naive_dft(field, n):
    x = rand_limbs(field, (2, 3, n))
    X = hb.ntt(x, field)
    assert X.shape == x.shape and X.dtype == np.uint64
    w = field.root_of_unity(n)
    rows_in, rows_out = np.asarray(field.from_limbs(x)), np.asarray(field.from_limbs(X))
    for i in range(2):
        for j in range(3):
            assert [int(v) for v in rows_out[i, j]] == naive_dft([int(v) for v in rows_in[i, j]], w, field.p)
    assert (hb.intt(X, field) == x).all()


@pytest.mark.parametrize("field", BIG_FIELDS, ids=ids)
def test_negacyclic_and_root_override(field):
    n, p = 16, field.p
    x = rand_limbs(field, (n,))
    coeffs = ints(field, x)
    psi = field.root_of_unity(2 * n)
    want = [sum(c * pow(psi, j * (2 * k + 1), p) for j, c in enumerate(coeffs)) % p for k in range(n)]
    X = hb.ntt(x, field, negacyclic=True)
    assert ints(field, X) == want
    assert (hb.intt(X, field, negacyclic=True) == x).all()
    other = pow(field.root_of_unity(n), 3, p)  # another primitive n-th root
    assert ints(field, hb.ntt(x, field, root=other)) == naive_dft(coeffs, other, p)
    assert (hb.intt(hb.ntt(x, field, root=other), field, root=other) == x).all()


@pytest.mark.parametrize("field", BIG_FIELDS, ids=ids)
def test_large_ntt_against_horner_and_a_random_point(field):
    n, p = 2**12, field.p
    x = rand_limbs(field, (n,))
    coeffs = ints(field, x)
    X = hb.ntt(x, field)
    w = field.root_of_unity(n)
    evals = ints(field, X)
    for k in [0, n - 1] + [rng.randrange(n) for _ in range(3)]:
        assert evals[k] == horner(coeffs, pow(w, k, p), p)
    # P(z) at a random z from the evaluations alone (barycentric form on H) equals Horner's value
    z = rng.randrange(p)
    bary = 0
    wk = 1
    for e in evals:
        bary = (bary + e * wk * pow(z - wk, -1, p)) % p
        wk = wk * w % p
    bary = bary * (pow(z, n, p) - 1) * pow(n, -1, p) % p
    assert bary == horner(coeffs, z, p)
    assert (hb.intt(X, field) == x).all()


@pytest.mark.parametrize("field", BIG_FIELDS, ids=ids)
@pytest.mark.parametrize("negacyclic", [False, True])
def test_orders(field, negacyclic):
    n = 32
    br = bitrev_indices(5)
    x = rand_limbs(field, (3, n))
    natural = hb.ntt(x, field, negacyclic=negacyclic)
    for input_order in ("natural", "bitrev"):
        for output_order in ("natural", "bitrev"):
            src = x[:, br] if input_order == "bitrev" else x
            want = natural[:, br] if output_order == "bitrev" else natural
            got = hb.ntt(src, field, negacyclic=negacyclic, input_order=input_order, output_order=output_order)
            assert (got == want).all()
            back = hb.intt(got, field, negacyclic=negacyclic, input_order=output_order, output_order=input_order)
            assert (back == src).all()


@pytest.mark.parametrize(
    "modulus", [hb.GOLDILOCKS, hb.BABYBEAR, GOLDILOCKS_FIELD], ids=["goldilocks", "babybear", "gl-field"]
)
def test_orders_one_word(modulus):
    q = modulus.p if isinstance(modulus, hb.PrimeField) else modulus
    n = 64
    br = bitrev_indices(6)
    x = np.array([[rng.randrange(q) for _ in range(n)] for _ in range(2)], dtype=np.uint64)
    natural = hb.ntt(x, modulus)
    assert [int(v) for v in natural[0]] == naive_dft([int(v) for v in x[0]], hb.field.root_of_unity(q, n), q)
    assert (hb.ntt(x, modulus, output_order="bitrev") == natural[:, br]).all()
    assert (hb.ntt(x[:, br], modulus, input_order="bitrev") == natural).all()
    assert (hb.intt(natural[:, br], modulus, input_order="bitrev", output_order="bitrev") == x[:, br]).all()


def test_inplace_and_batch_shapes():
    field = hb.BLS12_381_FR
    x = rand_limbs(field, (2, 2, 8))
    want = hb.ntt(x, field)
    y = x.copy()
    assert hb.ntt(y, field, inplace=True) is y and (y == want).all()
    assert (hb.ntt(x[0, 1], field) == want[0, 1]).all()


# -- coset NTT and LDE --------------------------------------------------------------------------


def _coset_oracle(coeffs, shift, root, size, p):
    return [horner(coeffs, shift * pow(root, k, p) % p, p) for k in range(size)]


@pytest.mark.parametrize("field", BIG_FIELDS, ids=ids)
def test_coset_ntt_matches_direct_evaluation(field):
    n, p = 16, field.p
    x = rand_limbs(field, (2, n))
    w = field.root_of_unity(n)
    for shift in (None, rng.randrange(1, p)):
        got = hb.coset_ntt(x, field, shift)
        s = field.generator if shift is None else shift
        for row in range(2):
            assert ints(field, got[row]) == _coset_oracle(ints(field, x[row]), s, w, n, p)
        assert (hb.coset_ntt(got, field, shift, inverse=True) == x).all()


@pytest.mark.parametrize("field", BIG_FIELDS, ids=ids)
@pytest.mark.parametrize("blowup", [1, 2, 8])
def test_lde_matches_the_interpolating_polynomial(field, blowup):
    n, p = 8, field.p
    coeffs = rand_ints(field, n)  # the interpolating polynomial, degree < n
    w = field.root_of_unity(n)
    evals = field.to_limbs([horner(coeffs, pow(w, k, p), p) for k in range(n)])
    shift = rng.randrange(1, p)
    for s in (None, shift):
        got = hb.lde(evals, field, blowup, s)
        assert got.shape == (blowup * n, 4)
        big_root = field.root_of_unity(blowup * n)
        assert ints(field, got) == _coset_oracle(coeffs, field.generator if s is None else s, big_root, blowup * n, p)


@pytest.mark.parametrize(
    "field",
    [GOLDILOCKS_FIELD, BABYBEAR_FIELD, hb.GOLDILOCKS, hb.BABYBEAR],
    ids=["goldilocks-field", "babybear-field", "goldilocks-int", "babybear-int"],
)
def test_coset_and_lde_one_word(field):
    q = field.p if isinstance(field, hb.PrimeField) else field
    dtype = np.uint32 if q == hb.BABYBEAR else np.uint64
    gen = hb.primitive_root(q)
    n = 16
    coeffs = [rng.randrange(q) for _ in range(n)]
    w = hb.field.root_of_unity(q, n)
    x = np.array(coeffs, dtype=dtype)
    got = hb.coset_ntt(x, field)
    assert got.dtype == dtype and [int(v) for v in got] == _coset_oracle(coeffs, gen, w, n, q)
    assert (hb.coset_ntt(got, field, inverse=True) == x).all()
    evals = np.array([horner(coeffs, pow(w, k, q), q) for k in range(n)], dtype=dtype)
    shift = rng.randrange(1, q)
    ext = hb.lde(evals, field, 4, shift)
    assert [int(v) for v in ext] == _coset_oracle(coeffs, shift, hb.field.root_of_unity(q, 4 * n), 4 * n, q)


# -- validation -----------------------------------------------------------------------------------


def test_validation_errors():
    f = hb.BN254_FR
    good = rand_limbs(f, (8,))
    with pytest.raises(TypeError, match="x must have dtype uint64"):
        hb.ntt(good.astype(np.int64), f)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., n, 4\)"):
        hb.ntt(good[:, :3], f)
    with pytest.raises(ValueError, match=r"x must have shape"):
        hb.ntt(good[0], f)
    with pytest.raises(ValueError, match="power of two"):
        hb.ntt(rand_limbs(f, (12,)), f)
    huge = np.broadcast_to(np.zeros(4, dtype=np.uint64), (2**28, 4))  # no memory: fails before work
    with pytest.raises(ValueError, match="two-adicity 28"):
        hb.ntt(huge, f, negacyclic=True)
    bad = good.copy()
    bad[3] = f.p_limbs  # exactly p
    with pytest.raises(ValueError, match=r"x has elements >= p of bn254 \(first at index \(3,\)\)"):
        hb.ntt(bad, f)
    bad[3] = (f.p_limbs[0] + 1, f.p_limbs[1], f.p_limbs[2], f.p_limbs[3])  # above p in the lowest limb only
    with pytest.raises(ValueError, match=">= p"):
        hb.intt(bad, f)
    ok = good.copy()
    ok[3] = f.to_limbs(f.p - 1)  # p - 1 passes
    hb.ntt(ok, f)
    with pytest.raises(ValueError, match="not w, a primitive n-th root"):
        hb.ntt(good, f, root=f.root_of_unity(16))
    with pytest.raises(ValueError, match="input_order must be 'natural' or 'bitrev'"):
        hb.ntt(good, f, input_order="reversed")
    with pytest.raises(ValueError, match="output_order"):
        hb.intt(good, f, output_order=None)
    with pytest.raises(ValueError, match="input_order"):
        hb.ntt(np.zeros(8, dtype=np.uint64), hb.GOLDILOCKS, input_order="br")
    with pytest.raises(ValueError, match="blowup must be a power of two"):
        hb.lde(good, f, 3)
    with pytest.raises(ValueError, match="blowup \\* n"):
        hb.lde(np.broadcast_to(np.zeros(4, dtype=np.uint64), (2**20, 4)), f, 2**9)
    with pytest.raises(ValueError, match="shift must be a nonzero element"):
        hb.coset_ntt(good, f, 0)
    with pytest.raises(TypeError, match="shift must be an int"):
        hb.coset_ntt(good, f, 1.5)
    with pytest.raises(TypeError, match=r"field must be a hb.PrimeField or a prime modulus"):
        hb.coset_ntt(good, "bn254")
    with pytest.raises(TypeError, match="x must be a NumPy or CuPy array"):
        hb.ntt(good.tolist(), f)
    with pytest.raises(TypeError, match="stream= applies to integer moduli"):
        hb.ntt(good, f, stream=object())


def test_dispatch_picks_the_numpy_engine():
    assert isinstance(get(np.zeros((1, 2, 4), dtype=np.uint64)).ntt256, NumpyFieldNTT)
    with pytest.raises(TypeError, match="x must be a NumPy or CuPy array"):
        _ = get([1, 2]).ntt256


@settings(max_examples=25, deadline=None)
@given(field=st.sampled_from(BIG_FIELDS), log_n=st.integers(1, 7), data=st.data())
def test_round_trips_hypothesis(field, log_n, data):
    n = 2**log_n
    values = data.draw(st.lists(st.integers(0, field.p - 1), min_size=n, max_size=n))
    x = field.to_limbs(values)
    negacyclic = data.draw(st.booleans()) and 2 * n <= 2**field.two_adicity
    order = data.draw(st.sampled_from(["natural", "bitrev"]))
    X = hb.ntt(x, field, negacyclic=negacyclic, output_order=order)
    assert (hb.intt(X, field, negacyclic=negacyclic, input_order=order) == x).all()
    assert (hb.coset_ntt(hb.coset_ntt(x, field), field, inverse=True) == x).all()
    if order == "natural" and not negacyclic:
        assert ints(field, X)[1] == horner(values, field.root_of_unity(n), field.p)


# -- GPU == CPU (the CuPy engine lives in hebatch/backend/gpu/ntt256.py) -------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("field", BIG_FIELDS, ids=ids)
def test_gpu_matches_cpu(field):
    import cupy

    x = rand_limbs(field, (3, 2**10))
    for kwargs in ({}, {"negacyclic": True}, {"output_order": "bitrev"}, {"input_order": "bitrev"}):
        want = hb.ntt(x, field, **kwargs)
        got = hb.ntt(cupy.asarray(x), field, **kwargs)
        assert isinstance(got, cupy.ndarray) and (to_host(got) == want).all()
        back = hb.intt(
            got,
            field,
            negacyclic=kwargs.get("negacyclic", False),
            input_order=kwargs.get("output_order", "natural"),
            output_order=kwargs.get("input_order", "natural"),
        )
        assert (to_host(back) == x).all()
    assert (to_host(hb.coset_ntt(cupy.asarray(x), field)) == hb.coset_ntt(x, field)).all()
    assert (to_host(hb.lde(cupy.asarray(x[0, :64]), field, 4)) == hb.lde(x[0, :64], field, 4)).all()


# -- one transform over Dask workers (4-step with limb axes) --------------------------------------


@pytest.mark.parametrize("negacyclic", [False, True])
@pytest.mark.parametrize("inverse", [False, True])
def test_block_steps_compose_over_a_field(negacyclic, inverse):
    from hebatch.ntt import blocks

    field, n = hb.BLS12_381_FR, 64
    x = rand_limbs(field, (n,))
    spec = blocks.four_step_spec(
        n, field, field.root_of_unity(2 * n if negacyclic else n), negacyclic=negacyclic, inverse=inverse, split=(4, 16)
    )
    a = x.reshape(4, 16, 4)
    y = np.concatenate([blocks.column_block(a[:, c : c + 8], spec, c) for c in (0, 8)])  # Y[j2][k1]
    d = blocks.row_block(np.ascontiguousarray(y.swapaxes(0, 1)), spec)  # D[k1][k2]
    got = np.ascontiguousarray(d.swapaxes(0, 1)).reshape(n, 4)
    assert (got == hb.ntt(x, field, negacyclic=negacyclic, inverse=inverse)).all()


@pytest.mark.parametrize("field", BIG_FIELDS, ids=ids)
def test_ntt_large_over_fields(client, field):
    from hebatch import dist

    n = 2**8
    x = rand_limbs(field, (n,))
    for negacyclic, inverse, transpose in [(False, False, "tasks"), (True, True, "direct"), (True, False, "tasks")]:
        want = hb.ntt(x, field, negacyclic=negacyclic, inverse=inverse)
        got = dist.ntt_large(x, field, workers=2, negacyclic=negacyclic, inverse=inverse, transpose=transpose)
        assert got.shape == (n, 4) and (got == want).all()
    assert (dist.ntt_large(x, field, gather=False).compute() == hb.ntt(x, field)).all()
    bad = x.copy()
    bad[5] = field.p_limbs
    with pytest.raises(ValueError, match=">= p"):
        dist.ntt_large(bad, field)
    with pytest.raises(ValueError, match=r"shape \(n, 4\)"):
        dist.ntt_large(x[:, 0], field)


def test_ntt_large_one_word_field(client):
    from hebatch import dist

    x = np.array([rng.randrange(hb.GOLDILOCKS) for _ in range(2**8)], dtype=np.uint64)
    assert (dist.ntt_large(x, GOLDILOCKS_FIELD) == hb.ntt(x, hb.GOLDILOCKS)).all()


def test_coset_and_lde_refuse_non_arrays():
    with pytest.raises(TypeError, match="x must be a NumPy or CuPy array"):
        hb.coset_ntt([1, 2], hb.BN254_FR)
    with pytest.raises(TypeError, match="x must be a NumPy or CuPy array"):
        hb.lde([1, 2], hb.GOLDILOCKS, 2)


@pytest.mark.parametrize("chunk", [1, 4, 8])
def test_slab_boundaries(monkeypatch, chunk):
    """Tiny slabs: every stage splits into many slabs, some cutting one group of butterflies."""
    from hebatch.backend.cpu import ntt256 as cpu_zk

    monkeypatch.setattr(cpu_zk, "CHUNK", chunk)
    field, n, p = hb.BLS12_377_FR, 32, hb.BLS12_377_FR.p
    x = rand_limbs(field, (2, n))
    rows = [ints(field, x[i]) for i in range(2)]
    w = field.root_of_unity(n)
    X = hb.ntt(x, field)
    assert [ints(field, X[i]) for i in range(2)] == [naive_dft(r, w, p) for r in rows]
    assert (hb.intt(X, field) == x).all()
    shift = rng.randrange(1, p)
    got = hb.coset_ntt(x, field, shift)
    assert ints(field, got[1]) == _coset_oracle(rows[1], shift, w, n, p)


def test_ntt_2_15_against_horner():
    field, n = hb.BN254_FR, 2**15  # the first stages split single groups into slabs
    p = field.p
    x = rand_limbs(field, (n,))
    coeffs = ints(field, x)
    X = hb.ntt(x, field, output_order="bitrev")
    w = field.root_of_unity(n)
    br = bitrev_indices(15)
    for i in [0, 1, rng.randrange(n)]:
        assert field.from_limbs(X[i]) == horner(coeffs, pow(w, int(br[i]), p), p)
    assert (hb.intt(X, field, input_order="bitrev") == x).all()


def test_empty_batch():
    x = np.zeros((0, 8, 4), dtype=np.uint64)
    assert hb.ntt(x, hb.BN254_FR).shape == (0, 8, 4)
    assert hb.coset_ntt(x, hb.BN254_FR).shape == (0, 8, 4)
