"""CupyFieldNTT's host side on a CPU: a stand-in for CuPy whose kernels are Python models of
kernels/ntt256.cu (the same arguments, parameter structs read field by field, tables read back from their
Montgomery limbs at the addresses the structs hold), so the launch arguments, the tables and the buffer
flow of every order and direction are checked without a GPU."""

import sys
import types

import numpy as np
import pytest

from hebatch.backend.cpu.ntt256 import NumpyFieldNTT
from hebatch.backend.gpu import ntt256 as gpu_zk
from hebatch.backend.kernels import GRID256_PARAMS, NTT256_PASS_PARAMS
from hebatch.field import BLS12_377_FR, BLS12_381_FR, BN254_FR
from hebatch.ntt.launch import FIELD_DIRECT_TWIDDLE_MAX_LOG

from .fake_cupy import FakeArray, at, fake_cupy
from .field_plans import Planned

FIELDS = {f.p: f for f in (BN254_FR, BLS12_381_FR, BLS12_377_FR)}
ORDER_PAIRS = [("natural", "natural"), ("natural", "bitrev"), ("bitrev", "natural"), ("bitrev", "bitrev")]


def ints(field, a):
    """(..., 4) limbs -> flat list of Python ints."""
    return [int(v) for v in np.asarray(field.from_limbs(np.asarray(a)), dtype=object).reshape(-1)]


def mont(field, table, i):
    return field.from_limbs(np.asarray(table[i])) * pow(field.R, -1, field.p) % field.p


def mont_all(field, table):
    """Every entry of a Montgomery-form table as a plain int."""
    r_inv = pow(field.R, -1, field.p)
    return [v * r_inv % field.p for v in ints(field, table)]


def put(out, field, flat):
    out.reshape(-1, 4)[...] = field.to_limbs(flat)


class Kernel:
    """A launch target: checks the launch shape and runs the model."""

    def __init__(self, name, field):
        self.name, self.field, self.max_dynamic_shared_size_bytes = name, field, 48 * 1024

    def __call__(self, grid, block, args, shared_mem=0):
        assert block == (gpu_zk.THREADS,) and grid[0] >= 1 and shared_mem <= self.max_dynamic_shared_size_bytes
        getattr(self, self.name.split("<")[0])(grid[0], shared_mem, *args)

    def ntt256_pass(self, grid, smem, src, out, prm):
        f, p = self.field, self.field.p
        (prm,) = prm
        assert prm.dtype == NTT256_PASS_PARAMS
        lanes = int(prm["total_lanes"])
        log_n, log_k, log_low, log_c, log_ktop, bits = (
            int(prm[k]) for k in ("log_n", "log_k", "log_low", "log_c", "log_ktop", "tw_bits")
        )
        sub, low, high, scale = (at(prm[k]).reshape(-1, 4) for k in ("sub_tw", "tw_low", "tw_high", "scale"))
        use_scale, tw_direct = int(prm["use_scale"]), int(prm["tw_direct"])
        dit, bitrev_in = (flag == "true" for flag in self.name.rstrip(">").split(",")[1:])
        assert grid << log_c >= lanes > (grid - 1) << log_c and smem == (32 << log_k) << log_c
        values = ints(f, src)
        if bitrev_in:  # position i of each row from bitrev(i); a first pass, never in place, no twiddled loads
            assert not np.shares_memory(src, out) and not (dit and log_low)
            n = 1 << log_n
            rev = [int(format(i, f"0{log_n}b")[::-1], 2) for i in range(n)]
            values = [values[a - a % n + rev[a % n]] for a in range(len(values))]
        shift = log_n - log_low - log_k
        sub_i, low_i, high_i = mont_all(f, sub), mont_all(f, low), mont_all(f, high)

        def twiddle(r, t):
            if tw_direct:  # the pass's own table, entry (bitrev_k(t) << log_low) + r
                return low_i[(int(format(t, f"0{log_k}b")[::-1], 2) << log_low) + r]
            e = (r * int(format(t, f"0{log_k}b")[::-1], 2)) << shift
            return high_i[e >> bits] * low_i[e & ((1 << bits) - 1)] % p

        for lane in range(lanes):
            r = lane & ((1 << log_low) - 1)
            addrs = [((lane >> log_low) << (log_low + log_k)) + (t << log_low) + r for t in range(1 << log_k)]
            v = [values[a] for a in addrs]
            if dit and log_low:
                v = [x * twiddle(r, t) % p for t, x in enumerate(v)]
            for s in range(log_k):
                log_h = s if dit else log_k - 1 - s
                h = 1 << log_h
                for q in range(1 << (log_k - 1)):
                    j = q & (h - 1)
                    t0 = ((q >> log_h) << (log_h + 1)) | j
                    w = sub_i[j << (log_ktop - 1 - log_h)]
                    a, y = v[t0], v[t0 + h]
                    if dit:
                        v[t0], v[t0 + h] = (a + y * w) % p, (a - y * w) % p
                    else:
                        v[t0], v[t0 + h] = (a + y) % p, (a - y) * w % p
            if not dit and log_low:
                v = [x * twiddle(r, t) % p for t, x in enumerate(v)]
            if use_scale:
                v = [x * mont(f, scale, 0) % p for x in v]
            for a, x in zip(addrs, v):
                values[a] = x
        put(out, f, values)

    def scale_by_powers256(self, grid, smem, src, out, total, log_n, low, high, bits):
        f, bits = self.field, int(bits)
        values = ints(f, src)
        mask = (1 << int(log_n)) - 1
        put(
            out,
            f,
            [
                v * mont(f, high, (i & mask) >> bits) * mont(f, low, i & mask & ((1 << bits) - 1)) % f.p
                for i, v in enumerate(values)
            ],
        )

    def twiddle_grid256(self, grid, smem, x, out, prm):
        (prm,) = prm
        assert prm.dtype == GRID256_PARAMS
        f, bits, cols, mask = self.field, int(prm["bits"]), int(prm["cols"]), int(prm["mask"])
        row0, row_step, col0, col_step = (int(prm[k]) for k in ("row0", "row_step", "col0", "col_step"))
        low_i, high_i = (mont_all(f, at(prm[k]).reshape(-1, 4)) for k in ("low", "high"))
        values = ints(f, x)
        result = []
        for idx, v in enumerate(values):
            i, j = divmod(idx, cols)
            e = ((row0 + row_step * i) * (col0 + col_step * j)) & mask
            result.append(v * high_i[e >> bits] * low_i[e & ((1 << bits) - 1)] % f.p)
        put(out, f, result)

    def field_ops256(self, grid, smem, a, b, r2, out, count):
        f, p = self.field, self.field.p
        rr = f.from_limbs(np.asarray(r2[0]))
        r_inv = pow(f.R, -1, p)
        xa, xb = ints(f, a), ints(f, b)
        put(
            out,
            f,
            [x * y * r_inv * rr * r_inv % p for x, y in zip(xa, xb)]
            + [(x + y) % p for x, y in zip(xa, xb)]
            + [(x - y) % p for x, y in zip(xa, xb)],
        )


@pytest.fixture(params=[FIELD_DIRECT_TWIDDLE_MAX_LOG, 0], ids=["direct-twiddles", "two-level-twiddles"])
def engine(monkeypatch, request):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy())

    def load_module(filename, defines=(), name_expressions=None):
        assert filename == "ntt256.cu"
        struct = name_expressions[0].split("<")[1].split(",")[0]
        field = FIELDS[next(p for p, s in gpu_zk.FIELD_STRUCTS.items() if s == struct)]
        return types.SimpleNamespace(get_function=lambda name: Kernel(name, field))

    monkeypatch.setattr(gpu_zk, "load_module", load_module)
    return Planned(gpu_zk.CupyFieldNTT(), direct_max_log=request.param)


@pytest.mark.parametrize("log_n,batch", [(1, 3), (4, 2), (8, 2), (12, 1)])
def test_host_side_with_modelled_kernels(engine, log_n, batch):
    rng = np.random.default_rng()
    cpu = NumpyFieldNTT()
    for field in FIELDS.values() if log_n < 12 else [BLS12_377_FR]:
        n = 1 << log_n
        x = rng.integers(0, 2**64, size=(batch, n, 4), dtype=np.uint64)
        x[..., 3] %= np.uint64(field.p_limbs[3])
        w = field.root_of_unity(n)
        pairs = ORDER_PAIRS if log_n < 12 else ORDER_PAIRS[1:3]
        for inp, outp in pairs:
            assert (engine.forward(x.view(FakeArray), field, w, inp, outp) == cpu.forward(x, field, w, inp, outp)).all()
            assert (engine.inverse(x.view(FakeArray), field, w, inp, outp) == cpu.inverse(x, field, w, inp, outp)).all()
        base = int(rng.integers(2, 2**62))
        assert (engine.scale_by_powers(x.view(FakeArray), field, base) == cpu.scale_by_powers(x, field, base)).all()
        if log_n < 12:
            a, b = x.reshape(-1, 4), x[::-1].reshape(-1, 4)
            prod, _total, _diff = engine.field_ops(a.view(FakeArray), np.ascontiguousarray(b).view(FakeArray), field)
            assert (prod == cpu.mul(a, b, field)).all()


def test_host_twiddle_grid_with_modelled_kernels(engine):
    rng = np.random.default_rng()
    cpu = NumpyFieldNTT()
    field = BN254_FR
    x = rng.integers(0, 2**64, size=(6, 10, 4), dtype=np.uint64)
    x[..., 3] %= np.uint64(field.p_limbs[3])
    for root in (field.root_of_unity(1 << 20), field.root_of_unity(1 << 28), 1, field.generator):
        for args in ((5, 3, 1, 1), (2**40 + 7, 11, 2, 3), (0, 1, 1, 2)):
            got = engine.twiddle_grid(x.view(FakeArray), field, root, *args)
            assert (np.asarray(got) == cpu.twiddle_grid(x, field, root, *args)).all(), (root, args)


def test_host_direct_twiddle_tables_built_by_the_grid_kernel(engine):
    """The device-built direct twiddle table (twiddle_grid256 over factor R) equals its Python-int reference."""
    rng = np.random.default_rng()
    for field in FIELDS.values():
        for log_n, log_k, log_low in ((10, 4, 3), (12, 6, 6), (13, 5, 8)):
            root = field.root_of_unity(1 << log_n)
            root = pow(root, int(rng.integers(0, 1 << log_n)) | 1, field.p)  # another primitive root
            for scaled in (False, True):
                factor = pow(1 << log_n, -1, field.p) if scaled else 1
                got = engine._direct_table(field, root, log_n, log_k, log_low, scaled)
                want = gpu_zk.direct_twiddle_table(field, root, log_n, log_k, log_low, factor)
                assert (np.asarray(got) == want).all(), (field.name, log_n, log_k, log_low, scaled)


def test_host_table_cache_is_bounded(engine, monkeypatch):
    """Device tables past the cache's byte budget are dropped least recently used first."""
    from hebatch.backend import cache_stats
    from hebatch.backend.cache import TABLES

    field = BN254_FR
    root = field.root_of_unity(1 << 10)
    table_bytes = 32 << 7  # a direct table of 2^7 entries
    TABLES.clear()
    engine._direct_table(field, root, 10, 6, 1, False)
    others = cache_stats()[0]["bytes"] - table_bytes  # the power tables the grid kernel builds them from
    budget = others + 3 * table_bytes
    monkeypatch.setattr(TABLES, "budget_override", budget)
    for log_low in range(2, 6):
        engine._direct_table(field, root, 10, 7 - log_low, log_low, False)
    direct = [k for k in TABLES.keys(0) if "direct" in k]
    assert [k[-2] for k in direct] == [3, 4, 5]  # log_low of the three newest
    engine._direct_table(field, root, 10, 4, 3, False)  # used again: now the most recent
    engine._direct_table(field, root, 10, 6, 1, False)  # rebuilt: drops log_low 4, the least recent
    assert [k[-2] for k in TABLES.keys(0) if "direct" in k] == [5, 3, 1]
    assert cache_stats()[0] == {"entries": 4, "bytes": budget, "budget_bytes": budget}
    TABLES.clear()
