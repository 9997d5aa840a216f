"""kernels/ntt256.cu itself run on the CPU: built with the host C++ compiler (FIELD256_HOST_CHAINS for the
asm chains), every CUDA thread of a block a host thread (so __syncthreads is a real barrier and the
shared-memory stages run as on the GPU), blocks one after the other. CupyFieldNTT's host code drives it
through a stand-in for CuPy, and the results are checked against the CPU engine: the pass kernel's index
maps, in-block stages, 4-step twiddles (direct tables and the two-level form) and n^-1, as written."""

import ctypes
import sys
import types

import numpy as np
import pytest

from hebatch.backend.cpu.ntt256 import NumpyFieldNTT
from hebatch.backend.gpu import ntt256 as gpu_zk
from hebatch.backend.kernels import KERNEL_DEFINES
from hebatch.field import BLS12_377_FR, BLS12_381_FR, BN254_FR
from hebatch.ntt.launch import FIELD_DIRECT_TWIDDLE_MAX_LOG

from .fake_cupy import FakeArray, fake_cupy
from .field_plans import Planned
from .host_kernels import RUN_GRID, THREADED_PRELUDE, _c_arg, compiler, host_library

FIELDS = {f.p: f for f in (BN254_FR, BLS12_381_FR, BLS12_377_FR)}
ORDER_PAIRS = [("natural", "natural"), ("natural", "bitrev"), ("bitrev", "natural"), ("bitrev", "bitrev")]


SOURCE = (
    r"""
#include "ntt256.cu"
"""
    + RUN_GRID
    + r"""
#define HOST_KERNELS(F, I)                                                                                     \
    extern "C" void host_pass_##I(unsigned g, unsigned b, int dit, int bitrev_in, const Fe* in, Fe* out,       \
                                  const Ntt256PassParams* prm) {                                               \
        const Ntt256PassParams p = *prm;                                                                       \
        run_grid(g, b, [=] {                                                                                   \
            if (dit)                                                                                           \
                bitrev_in ? ntt256_pass<F, true, true>(in, out, p) : ntt256_pass<F, true, false>(in, out, p);  \
            else                                                                                               \
                bitrev_in ? ntt256_pass<F, false, true>(in, out, p) : ntt256_pass<F, false, false>(in, out, p); \
        });                                                                                                    \
    }                                                                                                          \
    extern "C" void host_scale_##I(unsigned g, unsigned b, const Fe* in, Fe* out, long long total, int log_n,  \
                                   const Fe* low, const Fe* high, int bits) {                                  \
        run_grid(g, b, [=] { scale_by_powers256<F>(in, out, total, log_n, low, high, bits); });                \
    }                                                                                                          \
    extern "C" void host_grid_##I(unsigned g, unsigned b, const Fe* x, Fe* y, const Grid256Params* prm) {      \
        const Grid256Params p = *prm;                                                                          \
        run_grid(g, b, [=] { twiddle_grid256<F>(x, y, p); });                                                  \
    }                                                                                                          \
    extern "C" void host_ops_##I(unsigned g, unsigned b, const Fe* x, const Fe* y, const Fe* r2, Fe* out,      \
                                 long long count) {                                                            \
        run_grid(g, b, [=] { field_ops256<F>(x, y, r2, out, count); });                                        \
    }
HOST_KERNELS(BN254Fr, 0)
HOST_KERNELS(BLS12_381Fr, 1)
HOST_KERNELS(BLS12_377Fr, 2)
"""
)

STRUCT_INDEX = {"BN254Fr": 0, "BLS12_381Fr": 1, "BLS12_377Fr": 2}

pytestmark = pytest.mark.skipif(compiler() is None, reason="no host C++ compiler")


@pytest.fixture(scope="module")
def lib():
    return host_library(
        SOURCE,
        headers=("field256.cuh", "launch.cuh", "ntt256.cu"),
        defines=("FIELD256_HOST_CHAINS",) + tuple(f"{k}={v}" for k, v in KERNEL_DEFINES["ntt256.cu"]),
        prelude=THREADED_PRELUDE,
        flags=("-pthread",),
    )


class HostKernel:
    """A CuPy-RawKernel-like callable running one kernel of the host build."""

    def __init__(self, lib, name):
        self.lib, self.name, self.max_dynamic_shared_size_bytes = lib, name, 48 * 1024

    def __call__(self, grid, block, args, shared_mem=0):
        assert shared_mem <= 65536 and shared_mem <= self.max_dynamic_shared_size_bytes
        base, _, rest = self.name.partition("<")
        index = STRUCT_INDEX.get(rest.split(",")[0].rstrip(">"))
        c_args = [ctypes.c_uint(grid[0]), ctypes.c_uint(block[0])] + [_c_arg(a) for a in args]
        if base == "ntt256_pass":
            dit, bitrev_in = (flag == "true" for flag in rest.rstrip(">").split(",")[1:])
            fn, c_args = (
                getattr(self.lib, f"host_pass_{index}"),
                c_args[:2] + [ctypes.c_int(dit), ctypes.c_int(bitrev_in)] + c_args[2:],
            )
        else:
            fn = getattr(
                self.lib,
                {"scale_by_powers256": "host_scale_", "twiddle_grid256": "host_grid_", "field_ops256": "host_ops_"}[
                    base
                ]
                + str(index),
            )
        fn.restype = None
        fn(*c_args)


@pytest.fixture(params=[FIELD_DIRECT_TWIDDLE_MAX_LOG, 0, 8], ids=["direct-twiddles", "two-level-twiddles", "mixed"])
def engine(monkeypatch, request, lib):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy())

    def load_module(filename, defines=(), name_expressions=None):
        assert filename == "ntt256.cu"
        return types.SimpleNamespace(get_function=lambda name: HostKernel(lib, name))

    monkeypatch.setattr(gpu_zk, "load_module", load_module)
    return Planned(gpu_zk.CupyFieldNTT(), direct_max_log=request.param)


def random_elements(rng, field, shape):
    x = rng.integers(0, 2**64, size=shape + (4,), dtype=np.uint64)
    x[..., 3] %= np.uint64(field.p_limbs[3])  # below p
    return x


@pytest.mark.parametrize("log_n,batch", [(1, 3), (4, 2), (7, 1), (12, 1)])
def test_kernel_source_on_host_threads_matches_cpu(engine, log_n, batch):
    rng = np.random.default_rng()
    cpu = NumpyFieldNTT()
    n = 1 << log_n
    fields = list(FIELDS.values()) if log_n <= 6 else [FIELDS[list(FIELDS)[log_n % 3]]]
    for field in fields:
        x = random_elements(rng, field, (batch, n))
        w = field.root_of_unity(n)
        for inp, outp in ORDER_PAIRS if log_n <= 6 else ORDER_PAIRS[1:3]:
            got = engine.forward(x.view(FakeArray), field, w, inp, outp)
            assert (np.asarray(got) == cpu.forward(x, field, w, inp, outp)).all(), (field.name, inp, outp)
            got = engine.inverse(x.view(FakeArray), field, w, inp, outp)
            assert (np.asarray(got) == cpu.inverse(x, field, w, inp, outp)).all(), (field.name, inp, outp)


@pytest.mark.parametrize(
    "log_n,log_block,first_dit,first_dif",
    [
        (9, 5, (3, 0, 2), (3, 6, 2)),
        (10, 6, (4, 0, 2), (3, 7, 3)),
        (11, 8, (8, 0, 0), (3, 8, 5)),
        (7, 7, (7, 0, 0), (7, 0, 0)),
    ],
)
def test_kernel_source_on_host_threads_same_orders_read_bit_reversed(engine, log_n, log_block, first_dit, first_dif):
    """natural -> natural and bitrev -> bitrev, whose first pass reads its input bit-reversed: plans of several
    passes with small blocks (a DIT's first pass (log_k, log_low, log_c) with lanes taken in bit-reversed order,
    several a block or one; a DIF's first pass with low bits) and of one pass."""
    engine = Planned(engine.engine, log_block=log_block, max_log_k_strided=3, **engine.options)
    plan = engine.plan(np.zeros((3, 1 << log_n, 4)))
    for dit, want in ((True, first_dit), (False, first_dif)):
        p = plan.passes(dit, False)[0]
        assert (p.log_k, p.log_low, p.log_c) == want, (dit, p)
    rng = np.random.default_rng()
    cpu = NumpyFieldNTT()
    field = list(FIELDS.values())[int(rng.integers(3))]
    x = random_elements(rng, field, (3, 1 << log_n))
    w = field.root_of_unity(1 << log_n)
    for order in ("natural", "bitrev"):
        got = engine.forward(x.view(FakeArray), field, w, order, order)
        assert (np.asarray(got) == cpu.forward(x, field, w, order, order)).all(), (field.name, order)
        got = engine.inverse(x.view(FakeArray), field, w, order, order)
        assert (np.asarray(got) == cpu.inverse(x, field, w, order, order)).all(), (field.name, order)


def test_kernel_source_on_host_threads_other_kernels(engine):
    rng = np.random.default_rng()
    cpu = NumpyFieldNTT()
    for field in FIELDS.values():
        x = random_elements(rng, field, (2, 64))
        base = int(rng.integers(2, 2**62))
        assert (
            np.asarray(engine.scale_by_powers(x.view(FakeArray), field, base)) == cpu.scale_by_powers(x, field, base)
        ).all()
        a, b = x.reshape(-1, 4), np.ascontiguousarray(x[::-1].reshape(-1, 4))
        prod, _total, _diff = engine.field_ops(a.view(FakeArray), b.view(FakeArray), field)
        assert (np.asarray(prod) == cpu.mul(a, b, field)).all()
        g = random_elements(rng, field, (6, 10))
        root = field.root_of_unity(1 << 20)
        got = engine.twiddle_grid(g.view(FakeArray), field, root, 5, 3, 1, 2)
        assert (np.asarray(got) == cpu.twiddle_grid(g, field, root, 5, 3, 1, 2)).all()


@pytest.mark.parametrize("log_n", [9])
def test_kernel_source_on_host_threads_many_passes(engine, log_n):
    """Plans of three and more passes at small sizes (blocks of 2^5 elements, strided passes of up to 3
    stages, so 2^9 is 3 passes of 3): middle passes, their twiddles (direct, two-level or, with "mixed", both
    in one transform) and n^-1 placement."""
    engine = Planned(engine.engine, log_block=5, max_log_k_strided=3, **engine.options)
    assert len(engine.plan(np.zeros((2, 1 << log_n, 4))).passes(False, False)) >= 3
    rng = np.random.default_rng()
    cpu = NumpyFieldNTT()
    field = list(FIELDS.values())[log_n % 3]
    n = 1 << log_n
    x = random_elements(rng, field, (2, n))
    w = field.root_of_unity(n)
    for inp, outp in ORDER_PAIRS[1:3]:  # DIF passes alone, DIT passes alone
        got = engine.forward(x.view(FakeArray), field, w, inp, outp)
        assert (np.asarray(got) == cpu.forward(x, field, w, inp, outp)).all(), (field.name, inp, outp)
        got = engine.inverse(x.view(FakeArray), field, w, inp, outp)
        assert (np.asarray(got) == cpu.inverse(x, field, w, inp, outp)).all(), (field.name, inp, outp)
