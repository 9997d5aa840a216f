"""GPU NTTs over the 256-bit scalar fields (kernels/ntt256.cu, hebatch/backend/gpu/ntt256.py).

Layered so a failure says where it is: the kernel constants and pass plans (CPU, always run), then on a
GPU the field arithmetic alone (mulmod, add, sub vs Python ints), one-pass transforms (n <= 2^11),
multi-pass transforms vs the CPU engine bit for bit, then the large sizes (round trips, sparse inputs
evaluated at random points with Python ints, the shift property on dense inputs).
"""

import re

import numpy as np
import pytest

import hebatch as hb
from hebatch.backend.gpu.loader import kernel_dir
from hebatch.backend.gpu.ntt256 import FIELD_STRUCTS, direct_twiddle_table
from hebatch.backend.kernels import NTT256_LOG_BLOCK as LOG_BLOCK
from hebatch.field import BLS12_377_FR, BLS12_381_FR, BN254_FR
from hebatch.ntt.launch import FIELD_DIRECT_TWIDDLE_MAX_LOG as DIRECT_TWIDDLE_MAX_LOG
from hebatch.ntt.launch import field_pass_sizes as pass_sizes
from hebatch.ntt.launch import field_passes as plan_passes
from hebatch.ntt.launch import mont_mul_count

from .field_plans import Planned

FIELDS = [BN254_FR, BLS12_381_FR, BLS12_377_FR]
ORDER_PAIRS = [("natural", "natural"), ("natural", "bitrev"), ("bitrev", "natural"), ("bitrev", "bitrev")]


def random_elements(rng, field, shape):
    """Uniform random field elements as (..., 4) limbs (Python ints, so every bit pattern below p occurs)."""
    count = int(np.prod(shape))
    ints = [int.from_bytes(rng.bytes(32), "little") % field.p for _ in range(count)]
    return field.to_limbs(ints).reshape(tuple(shape) + (4,))


def random_elements_fast(rng, field, shape):
    """Random elements for large arrays: random limbs with the top limb below p's top limb (so < p)."""
    x = rng.integers(0, 2**64, size=tuple(shape) + (4,), dtype=np.uint64)
    x[..., 3] %= np.uint64(field.p_limbs[3])
    return x


# -- CPU: constants and plans -------------------------------------------------------------------------


def test_kernel_field_constants_match_field_definitions():
    text = (kernel_dir() / "field256.cuh").read_text()
    for field in FIELDS:
        struct = FIELD_STRUCTS[field.p]
        body = re.search(rf"struct {struct} \{{(.*?)\}};", text, re.S).group(1)
        values = {k: int(v, 16) for k, v in re.findall(r"(P\d|P_INV_NEG) = 0x([0-9a-f]+)ull", body)}
        assert [values[f"P{i}"] for i in range(4)] == list(field.p_limbs), field.name
        assert values["P_INV_NEG"] == field.p_inv_neg, field.name
        assert field.p < 2**255  # the CIOS bound: every running value < 2p < 2^256


@pytest.mark.parametrize("log_n", range(1, 29))
def test_pass_plans_cover_every_stage_once(log_n):
    sizes = pass_sizes(log_n)
    assert sum(sizes) == log_n and sizes[0] <= LOG_BLOCK and all(k <= 9 for k in sizes[1:])
    for dit in (False, True):
        for batch in (1, 3, 64):
            passes = plan_passes(log_n, batch, dit, scale=True)
            covered = sorted((p.log_low, p.log_low + p.log_k) for p in passes)
            assert covered[0][0] == 0 and covered[-1][1] == log_n
            assert all(a[1] == b[0] for a, b in zip(covered, covered[1:]))
            lows = [p.log_low for p in passes]
            assert lows == (sorted(lows) if dit else sorted(lows, reverse=True))
            # n^-1 exactly once: on the first pass with 4-step twiddles, else on the last pass's stores
            assert sum(p.scale + p.scale_in_twiddle for p in passes) == 1
            if len(passes) > 1:
                assert next(p for p in passes if p.log_low > 0).scale_in_twiddle
            else:
                assert passes[0].scale
            for p in passes:
                lanes = batch << (log_n - p.log_k)
                assert p.grid << p.log_c >= lanes > (p.grid - 1) << p.log_c
                assert p.smem <= 32 << LOG_BLOCK
                assert p.direct_twiddles == (0 < p.log_low and p.log_low + p.log_k <= DIRECT_TWIDDLE_MAX_LOG)
            assert not any(p.direct_twiddles for p in plan_passes(log_n, batch, dit, True, direct_max_log=0))
    assert mont_mul_count(log_n, 2, True) == mont_mul_count(log_n, 2, False) + (2 << log_n) * (len(sizes) == 1)
    assert mont_mul_count(log_n, 2, False) >= (log_n - len(sizes)) << log_n
    # a direct table saves the multiplication that forms each twiddle of its pass
    direct = sum(p.direct_twiddles for p in plan_passes(log_n, 1, False, False))
    assert mont_mul_count(log_n, 2, False, direct_max_log=0) - mont_mul_count(log_n, 2, False) == direct << (log_n + 1)


@pytest.mark.parametrize("log_n", [5, 13, 22])
def test_direct_twiddle_tables_hold_the_pass_twiddles(log_n):
    """Entry (bitrev_k(t) << log_low) + r of a pass's direct table is factor * w_M^(r bitrev_k(t))
    (Montgomery form), the twiddle the two-level tables form for the same (r, t)."""
    rng = np.random.default_rng()
    field = BN254_FR
    p = field.p
    root = field.root_of_unity(1 << log_n)
    factor = int(rng.integers(1, 2**62))
    r_inv = pow(field.R, -1, p)
    for ps in plan_passes(log_n, 1, False, False, direct_max_log=16):
        if not ps.direct_twiddles:
            continue
        k, low = ps.log_k, ps.log_low
        table = direct_twiddle_table(field, root, log_n, k, low, factor)
        assert table.shape == (1 << (low + k), 4)
        shift = log_n - low - k
        for _ in range(200):
            r, t = int(rng.integers(1 << low)), int(rng.integers(1 << k))
            rev = int(format(t, f"0{k}b")[::-1], 2)
            want = factor * pow(root, (r * rev) << shift, p) % p
            assert field.from_limbs(table[(rev << low) + r]) * r_inv % p == want


# -- GPU ----------------------------------------------------------------------------------------------

gpu = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def engines(cp):
    from hebatch.backend.cpu.ntt256 import NumpyFieldNTT
    from hebatch.backend.gpu.ntt256 import CupyFieldNTT

    return NumpyFieldNTT(), Planned(CupyFieldNTT())


@gpu
@pytest.mark.parametrize("variant", ["ptx", "u128"])
@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_gpu_field_ops_match_python_ints(cp, engines, field, variant):
    """mulmod, add and sub alone, for both multiplications (PTX 32-bit digits, portable 64-bit words)."""
    from hebatch.backend.gpu.ntt256 import CupyFieldNTT

    engine = engines[1] if variant == "ptx" else Planned(CupyFieldNTT(defines=(("FIELD256_U128", "1"),)))
    rng = np.random.default_rng()
    p = field.p
    edge = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2, 2**64 - 1, 2**64, 2**192, p - 2**64]
    a_int = edge * len(edge) + [int.from_bytes(rng.bytes(32), "little") % p for _ in range(2000)]
    b_int = [e for e in edge for _ in edge] + [int.from_bytes(rng.bytes(32), "little") % p for _ in range(2000)]
    prod, total, diff = engine.field_ops(cp.asarray(field.to_limbs(a_int)), cp.asarray(field.to_limbs(b_int)), field)
    assert list(field.from_limbs(prod.get())) == [a * b % p for a, b in zip(a_int, b_int)]
    assert list(field.from_limbs(total.get())) == [(a + b) % p for a, b in zip(a_int, b_int)]
    assert list(field.from_limbs(diff.get())) == [(a - b) % p for a, b in zip(a_int, b_int)]


@gpu
@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_gpu_direct_and_two_level_twiddles_match_cpu(cp, engines, field):
    """Multi-pass sizes with every 4-step twiddle formed from the two sqrt(n) tables and with the direct
    tables (default), forward and inverse, both orders that run DIF and DIT passes alone."""
    from hebatch.backend.gpu.ntt256 import CupyFieldNTT

    cpu, direct = engines
    two_level = Planned(CupyFieldNTT(), direct_max_log=0)
    rng = np.random.default_rng()
    for log_n in (12, 16, 18):
        n = 1 << log_n
        w = field.root_of_unity(n)
        x = random_elements_fast(rng, field, (1, n))
        xg = cp.asarray(x)
        for inp, outp in (("natural", "bitrev"), ("bitrev", "natural")):
            for inverse in (False, True):
                want = (cpu.inverse if inverse else cpu.forward)(x, field, w, inp, outp)
                for engine in (direct, two_level):
                    got = (engine.inverse if inverse else engine.forward)(xg, field, w, inp, outp).get()
                    assert (got == want).all(), (field.name, log_n, inp, outp, inverse, engine.options)


@gpu
@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_gpu_one_pass_matches_naive_dft(cp, engines, field):
    """Sizes a single block covers, against the definition with Python ints."""
    rng = np.random.default_rng()
    for log_n in (1, 2, 3, 5, 8):
        n = 1 << log_n
        w = field.root_of_unity(n)
        x = random_elements(rng, field, (2, n))
        got = field.from_limbs(engines[1].forward(cp.asarray(x), field, w).get())
        ints = field.from_limbs(x)
        for row in range(2):
            want = [sum(int(ints[row, j]) * pow(w, j * k, field.p) for j in range(n)) % field.p for k in range(n)]
            assert list(got[row]) == want, (field.name, log_n)


@gpu
@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_gpu_matches_cpu_every_size_and_order(cp, engines, field):
    cpu, gpu_engine = engines
    rng = np.random.default_rng()
    for log_n in range(1, 17):
        n = 1 << log_n
        w = field.root_of_unity(n)
        batch = 3 if log_n <= 12 else 1
        x = random_elements_fast(rng, field, (batch, n))
        xg = cp.asarray(x)
        pairs = ORDER_PAIRS if log_n in (1, 4, 11, 12, 16) else [ORDER_PAIRS[log_n % 4]]
        for inp, outp in pairs:
            for inverse in (False, True):
                run_cpu = cpu.inverse if inverse else cpu.forward
                run_gpu = gpu_engine.inverse if inverse else gpu_engine.forward
                got = run_gpu(xg, field, w, inp, outp).get()
                assert (got == run_cpu(x, field, w, inp, outp)).all(), (field.name, log_n, inp, outp, inverse)
        assert (xg.get() == x).all()  # input untouched


@gpu
@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_gpu_coset_scaling_matches_cpu(cp, engines, field):
    cpu, gpu_engine = engines
    rng = np.random.default_rng()
    for log_n in (1, 6, 13, 17):
        x = random_elements_fast(rng, field, (2, 1 << log_n))
        base = int.from_bytes(rng.bytes(32), "little") % field.p
        for b in (base, field.generator):
            assert (gpu_engine.scale_by_powers(cp.asarray(x), field, b).get() == cpu.scale_by_powers(x, field, b)).all()


@gpu
def test_gpu_public_api_dispatch(cp):
    rng = np.random.default_rng()
    field = BLS12_377_FR
    x = random_elements_fast(rng, field, (2, 1 << 10))
    for kwargs in (dict(), dict(inverse=True), dict(output_order="bitrev")):
        assert (hb.ntt(cp.asarray(x), field, **kwargs).get() == hb.ntt(x, field, **kwargs)).all(), kwargs
    assert (hb.coset_ntt(cp.asarray(x), field).get() == hb.coset_ntt(x, field)).all()


def _sparse_check(cp, engine, field, log_n, rng):
    """A few nonzero inputs: X[k] at random k with Python ints, for every order pair."""
    n = 1 << log_n
    w = field.root_of_unity(n)
    where = [int(j) for j in rng.choice(n, size=8, replace=False)]
    values = [int.from_bytes(rng.bytes(32), "little") % field.p for _ in where]
    ks = [int(k) for k in rng.integers(0, n, size=8)]
    bitrev = lambda i: int(format(i, f"0{log_n}b")[::-1], 2)  # noqa: E731
    for inp, outp in ORDER_PAIRS:
        x = cp.zeros((1, n, 4), dtype=cp.uint64)
        x[0, cp.asarray([j if inp == "natural" else bitrev(j) for j in where])] = cp.asarray(field.to_limbs(values))
        y = engine.forward(x, field, w, inp, outp)
        for k in ks:
            want = sum(v * pow(w, j * k, field.p) for j, v in zip(where, values)) % field.p
            pos = k if outp == "natural" else bitrev(k)
            assert field.from_limbs(y[0, pos].get()) == want, (field.name, log_n, inp, outp, k)
        del y


@gpu
@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_gpu_large_sparse_points_and_round_trip(cp, engines, field):
    rng = np.random.default_rng()
    gpu_engine = engines[1]
    for log_n in (18, 20):
        _sparse_check(cp, gpu_engine, field, log_n, rng)
    n = 1 << 20
    x = cp.asarray(random_elements_fast(rng, field, (1, n)))
    w = field.root_of_unity(n)
    for inp, outp in ORDER_PAIRS:
        y = gpu_engine.forward(x, field, w, inp, outp)
        assert bool((gpu_engine.inverse(y, field, w, outp, inp) == x).all()), (inp, outp)


@gpu
@pytest.mark.slow
@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_gpu_2_24_sparse_shift_and_round_trip(cp, engines, field):
    """2^24: sparse inputs at random points; dense inputs: the shift property
    NTT(x_j w^(js))[k] = NTT(x)[k + s] (scale_by_powers then a cyclic roll) and the round trip."""
    rng = np.random.default_rng()
    gpu_engine = engines[1]
    log_n = 24
    n = 1 << log_n
    _sparse_check(cp, gpu_engine, field, log_n, rng)
    w = field.root_of_unity(n)
    x = cp.asarray(random_elements_fast(rng, field, (1, n)))
    y = gpu_engine.forward(x, field, w)
    s = int(rng.integers(1, n))
    shifted = gpu_engine.forward(gpu_engine.scale_by_powers(x, field, pow(w, s, field.p)), field, w)
    assert bool((shifted == cp.roll(y, -s, axis=1)).all())
    del shifted
    assert bool((gpu_engine.inverse(y, field, w) == x).all())
    # batch of 4 rows at 2^20: each row as its own transform
    xb = cp.asarray(random_elements_fast(rng, field, (4, 1 << 20)))
    wb = field.root_of_unity(1 << 20)
    yb = gpu_engine.forward(xb, field, wb, "natural", "bitrev")
    for row in range(4):
        assert bool((yb[row] == gpu_engine.forward(xb[row : row + 1], field, wb, "natural", "bitrev")[0]).all())


@gpu
@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_gpu_single_pass_matches_model(cp, engines, field):
    """Each pass alone (DIF and DIT, with and without 4-step twiddles and n^-1) against its Python model."""
    gpu_engine = engines[1]
    rng = np.random.default_rng()
    for log_n, batch in ((12, 2), (13, 1)):
        n = 1 << log_n
        w = field.root_of_unity(n)
        x = random_elements_fast(rng, field, (batch, n))
        for dit in (False, True):
            for ps in plan_passes(log_n, batch, dit, scale=True):
                out = cp.empty((batch, n, 4), dtype=cp.uint64)
                gpu_engine.run_pass(cp.asarray(x), out, field, w, ps)
                flat = [int(v) for v in field.from_limbs(x).reshape(-1)]
                want = emulate_passes(flat, field, w, log_n, batch, dit, True, passes=[ps])
                got = [int(v) for v in field.from_limbs(out.get()).reshape(-1)]
                assert got == want, (field.name, log_n, ps)


@gpu
def test_gpu_twiddle_grid_matches_cpu(cp, engines):
    cpu, gpu_engine = engines
    rng = np.random.default_rng()
    for field in FIELDS:
        x = random_elements_fast(rng, field, (48, 80))
        for root in (field.root_of_unity(1 << 21), field.root_of_unity(1 << 28), field.generator):
            for args in ((5, 3, 1, 1), (2**40 + 7, 11, 2, 3), (0, 1, 1, 2)):
                want = cpu.twiddle_grid(x, field, root, *args)
                assert (gpu_engine.twiddle_grid(cp.asarray(x), field, root, *args).get() == want).all()
                strided = cp.asarray(np.ascontiguousarray(x.transpose(1, 0, 2))).transpose(1, 0, 2)
                assert (gpu_engine.twiddle_grid(strided, field, root, *args).get() == want).all()


@gpu
def test_gpu_misaligned_and_strided_inputs(cp, engines):
    """Views that start off a 32-byte boundary or are not contiguous give the same results."""
    cpu, gpu_engine = engines
    field = BLS12_381_FR
    rng = np.random.default_rng()
    n = 1 << 10
    x = random_elements_fast(rng, field, (2, n))
    w = field.root_of_unity(n)
    buf = cp.zeros(x.size + 1, dtype=cp.uint64)
    buf[1:] = cp.asarray(x.reshape(-1))
    shifted = buf[1:].reshape(x.shape)
    assert shifted.data.ptr % 32 != 0
    assert (gpu_engine.forward(shifted, field, w).get() == cpu.forward(x, field, w)).all()
    strided = cp.asarray(np.ascontiguousarray(x[::-1]))[::-1]
    assert (
        gpu_engine.inverse(strided, field, w, "bitrev", "natural").get()
        == cpu.inverse(x, field, w, "bitrev", "natural")
    ).all()


@gpu
def test_gpu_validation(cp, engines):
    gpu_engine = engines[1]
    field = BN254_FR
    w = field.root_of_unity(8)
    with pytest.raises(ValueError, match="batch, n, 4"):
        gpu_engine.forward(cp.zeros((1, 8, 3), dtype=cp.uint64), field, w)
    with pytest.raises(ValueError, match="power of two"):
        gpu_engine.forward(cp.zeros((1, 6, 4), dtype=cp.uint64), field, w)
    with pytest.raises(ValueError, match="primitive"):
        gpu_engine.forward(cp.zeros((1, 8, 4), dtype=cp.uint64), field, field.root_of_unity(4))
    with pytest.raises(ValueError, match="input_order"):
        gpu_engine.forward(cp.zeros((1, 8, 4), dtype=cp.uint64), field, w, "reversed")


def emulate_passes(values, field, root, log_n, batch, dit, scale, passes=None):
    """The kernels' pass schedule (or the given passes) with Python ints (index arithmetic exactly as in
    ntt256_pass), in place on a flat list of batch * n values: checks the plans and index maps without a GPU."""
    p = field.p
    n = 1 << log_n
    log_ktop = min(log_n, LOG_BLOCK)
    for ps in passes or plan_passes(log_n, batch, dit, scale):
        k, low = ps.log_k, ps.log_low
        big_k = 1 << k
        shift = log_n - low - k
        for f in range(batch << (log_n - k)):
            r = f & ((1 << low) - 1)
            addrs = [((f >> low) << (low + k)) + (t << low) + r for t in range(big_k)]
            v = [values[a] for a in addrs]
            twiddle = [pow(root, ((r * int(format(t, f"0{k}b")[::-1], 2)) << shift), p) for t in range(big_k)]
            if dit and low:
                v = [x * tw % p for x, tw in zip(v, twiddle)]
            for s in range(k):
                log_h = s if dit else k - 1 - s
                h = 1 << log_h
                for q in range(big_k // 2):
                    j = q & (h - 1)
                    t0 = ((q >> log_h) << (log_h + 1)) | j
                    w = pow(root, (j << (log_ktop - 1 - log_h)) * (n >> log_ktop), p)  # sub_tw entry
                    a, y = v[t0], v[t0 + h]
                    if dit:
                        wy = y * w % p
                        v[t0], v[t0 + h] = (a + wy) % p, (a - wy) % p
                    else:
                        v[t0], v[t0 + h] = (a + y) % p, (a - y) * w % p
            if not dit and low:
                v = [x * tw % p for x, tw in zip(v, twiddle)]
            if ps.scale_in_twiddle:  # the kernel reads n^-1 * w^e from the pre-multiplied table
                v = [x * pow(n, -1, p) % p for x in v]
            if ps.scale:
                v = [x * pow(n, -1, p) % p for x in v]
            for a, x in zip(addrs, v):
                values[a] = x
    return values


@pytest.mark.parametrize("log_n", [1, 3, 7, 12])
def test_pass_schedule_emulated_matches_cpu(log_n):
    """The DIF and DIT pass schedules, run with Python ints, equal the CPU engine in every order pair."""
    from hebatch.backend.cpu.ntt256 import NumpyFieldNTT, bitrev_indices

    field = BLS12_381_FR
    rng = np.random.default_rng()
    batch, n = 2, 1 << log_n
    x = random_elements_fast(rng, field, (batch, n))
    w = field.root_of_unity(n)
    perm = bitrev_indices(log_n)
    for inverse in (False, True):
        root = pow(w, -1, field.p) if inverse else w
        for inp, outp in ORDER_PAIRS:
            src = x[:, perm] if inp == outp else x  # the engine permutes first when the orders agree
            dit = (inp == "natural") if inp == outp else (inp == "bitrev")
            flat = [int(v) for v in field.from_limbs(src).reshape(-1)]
            got = emulate_passes(flat, field, root, log_n, batch, dit, inverse)
            run = NumpyFieldNTT().inverse if inverse else NumpyFieldNTT().forward
            want = field.from_limbs(run(x, field, w, inp, outp)).reshape(-1)
            assert got == [int(v) for v in want], (log_n, inverse, inp, outp)
