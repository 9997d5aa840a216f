"""kernels/ntt.cu itself run on the CPU: the ntt_pass and twiddle_grid instantiations a transform launches,
built with the host C++ compiler (every CUDA thread of a block a host thread, so __syncthreads is a real
barrier), launched by CupyBackend's own host code through a stand-in for CuPy, and checked against the
NumPy backend. The parameter structs reach the kernels as bytes, as on the GPU, so a field written or read
in the wrong place gives wrong numbers here."""

import ctypes
import sys

import numpy as np
import pytest

from hebatch.backend import TABLES
from hebatch.backend.cpu.ntt import NumpyBackend
from hebatch.backend.gpu import ntt as gpu_ntt
from hebatch.backend.kernels import KERNEL_DEFINES
from hebatch.field import BABYBEAR, GOLDILOCKS, default_root, ntt_primes
from hebatch.ntt import recipes
from hebatch.ntt.plan import make_plan

from .fake_cupy import FakeArray, fake_cupy
from .host_kernels import RUN_GRID, THREADED_PRELUDE, compiler, host_library

pytestmark = pytest.mark.skipif(compiler() is None, reason="no host C++ compiler")

PRELUDE = (
    THREADED_PRELUDE
    + r"""
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
"""
)

SOURCE = (
    r"""
#include "ntt.cu"
"""
    + RUN_GRID
)


def wrapper(index: int, name: str) -> str:
    """extern "C" host_kernel_<index>(grid, block, buffers..., const struct*) running kernel `name`."""
    arith = name[name.index("<") + 1 :].split(",")[0].rstrip(">")
    t, w = ("u32", "Tw32") if arith == "Mod32" else ("u64", "Tw64")
    if name.startswith("ntt_pass"):
        return (
            f'extern "C" void host_kernel_{index}(unsigned g, unsigned b, const void* in, const void* in2, '
            f"void* out, const void* prm) {{\n"
            f"    const NttPassParams<{w}> p = *(const NttPassParams<{w}>*)prm;\n"
            f"    run_grid(g, b, [=] {{ {name}((const {t}*)in, (const {t}*)in2, ({t}*)out, p); }});\n}}\n"
        )
    if name.startswith("merge_table"):
        return (
            f'extern "C" void host_kernel_{index}(unsigned g, unsigned b, void* out, const void* prm) {{\n'
            f"    const MergeTableParams<{w}> p = *(const MergeTableParams<{w}>*)prm;\n"
            f"    run_grid(g, b, [=] {{ {name}(({w}*)out, p); }});\n}}\n"
        )
    assert name.startswith("twiddle_grid")
    return (
        f'extern "C" void host_kernel_{index}(unsigned g, unsigned b, const void* x, void* y, const void* prm) {{\n'
        f"    const TwiddleGridParams<{w}> p = *(const TwiddleGridParams<{w}>*)prm;\n"
        f"    run_grid(g, b, [=] {{ {name}((const {t}*)x, ({t}*)y, p); }});\n}}\n"
    )


class HostModule:
    """load_module's stand-in: the asked-for name expressions built on the host, get_function(name)."""

    def __init__(self, names):
        self.names = sorted(names)
        source = SOURCE + "".join(wrapper(i, n) for i, n in enumerate(self.names))
        self.lib = host_library(
            source,
            headers=("modarith.cuh", "launch.cuh", "ntt.cu"),
            defines=tuple(f"{k}={v}" for k, v in KERNEL_DEFINES["ntt.cu"]),
            prelude=PRELUDE,
            flags=("-pthread",),
        )

    def get_function(self, name):
        fn = getattr(self.lib, f"host_kernel_{self.names.index(name)}")
        fn.restype = None

        def launch(grid, block, args, shared_mem=0):
            assert shared_mem <= 65536
            pointers = [ctypes.c_void_p(a.ctypes.data) for a in args]  # buffers, then the struct's bytes
            fn(ctypes.c_uint(grid[0]), ctypes.c_uint(block[0]), *pointers)

        return HostKernel(launch)


class HostKernel:
    """A CuPy-RawKernel-like callable."""

    def __init__(self, launch):
        self.launch, self.max_dynamic_shared_size_bytes = launch, 48 * 1024

    def __call__(self, grid, block, args, shared_mem=0):
        assert shared_mem <= self.max_dynamic_shared_size_bytes
        self.launch(grid, block, args, shared_mem)


@pytest.fixture
def backend(monkeypatch):
    xp = fake_cupy()
    xp.empty_like = lambda a: np.empty_like(a).view(FakeArray)
    monkeypatch.setitem(sys.modules, "cupy", xp)

    def load_module(filename, defines=(), name_expressions=None):
        assert filename == "ntt.cu" and not defines
        return HostModule(name_expressions)

    monkeypatch.setattr(gpu_ntt, "load_module", load_module)
    TABLES.clear()  # programs and tables of these host kernels never outlive the test
    yield gpu_ntt.CupyBackend()
    TABLES.clear()


Q60 = tuple(ntt_primes(60, 1 << 12, 2))  # below 2^60: Mod60 butterflies (values in [0, 16q))
Q62 = tuple(ntt_primes(62, 1 << 12, 2))  # Mod64 butterflies (values in [0, 4q))
CASES = [
    # (moduli, dtype, log n, negacyclic, algorithm, split, log2 elements per thread): one-pass transforms
    # (lanes along rows, two radix-16 steps through shared memory), two-pass merge ones (with 16 and with 8
    # elements per thread), and two-pass 4-step ones (lanes along i, then along o, with twiddles between the
    # passes), for each reduction kind
    (Q60, np.uint64, 6, False, "radix2", None, None),
    (Q60, np.uint64, 6, True, "radix2", None, None),
    ((GOLDILOCKS,), np.uint64, 5, True, "radix2", None, None),
    ((BABYBEAR,), np.uint32, 6, False, "radix2", None, None),
    (Q60, np.uint64, 8, True, "radix2", (16, 16), None),  # two merge passes, as for few rows of 2^13 and 2^14
    (Q60, np.uint64, 9, True, "radix2", (16, 32), 3),  # the same with 8 elements per thread (few elements)
    ((GOLDILOCKS,), np.uint64, 7, False, "radix2", (8, 16), None),
    (Q60[:1], np.uint64, 8, True, "4step", (32, 8), None),
    (Q60, np.uint64, 8, False, "4step", (8, 32), None),
    ((BABYBEAR,), np.uint32, 8, True, "4step", (32, 8), None),
    (Q62, np.uint64, 9, True, "radix2", (16, 32), 3),
    (Q62, np.uint64, 6, True, "radix2", None, None),
    (Q62, np.uint64, 8, True, "radix2", (16, 16), None),
    (Q62[:1], np.uint64, 8, False, "4step", (32, 8), None),
]
# the same with the last merge pass reading its twiddles in its lanes' order (use_h 2, tables.last_pass_order)
ORDERED_CASES = [
    (Q60, np.uint64, 8, True, "radix2", (16, 16), None),
    (Q60, np.uint64, 9, False, "radix2", (16, 32), 3),
    (Q62, np.uint64, 8, False, "radix2", (16, 16), None),
    ((GOLDILOCKS,), np.uint64, 7, True, "radix2", (8, 16), None),
    ((BABYBEAR,), np.uint32, 8, True, "radix2", (32, 8), None),
]


@pytest.mark.parametrize(
    "moduli,dtype,log_n,negacyclic,algorithm,split,radix,ordered,paired",
    [c + (False, False) for c in CASES]
    + [c + (True, False) for c in ORDERED_CASES]
    + [c + (True, True) for c in ORDERED_CASES],  # and the last stage read half (LANES_BITREV_ORDERED_PAIRED)
)
def test_ntt_pass_on_host_threads_matches_cpu(
    backend, moduli, dtype, log_n, negacyclic, algorithm, split, radix, ordered, paired
):
    rng = np.random.default_rng()
    n = 1 << log_n
    roots = tuple(default_root(q, n, negacyclic) for q in moduli)
    plan = make_plan(n, moduli, roots, negacyclic, algorithm, split, radix, ordered, False, None, paired)
    assert (plan.merge_last_bits(8 * np.dtype(dtype).itemsize) > 0) == ordered
    passes = plan.gpu_passes(np.dtype(dtype).itemsize)
    assert all(p.log_r == min(radix or recipes.RADIX_LOG, p.log_np) for p in passes)
    cpu = NumpyBackend()
    q = np.array(moduli, dtype=np.uint64)[:, None]
    x = (rng.integers(0, 2**63, size=(3, len(moduli), n), dtype=np.uint64) % q).astype(dtype)
    want = cpu.forward(x.astype(np.uint64), plan)
    assert (backend.forward(x.view(FakeArray), plan) == want).all()
    assert (backend.inverse(want.astype(dtype).view(FakeArray), plan) == x).all()
    b = (rng.integers(0, 2**63, size=x.shape, dtype=np.uint64) % q).astype(dtype)
    fused = backend.inverse_product(x.view(FakeArray), b.view(FakeArray), plan)  # the product in the loads
    want = cpu.inverse(cpu.pointwise_mul(x.astype(np.uint64), b.astype(np.uint64), plan), plan)
    assert (fused == want).all()


@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("radix", [None, 3])
def test_merge_inverse_two_level_post_factor_on_host_threads(backend, monkeypatch, paired, radix):
    """Above 2^SINGLE_LEVEL_MAX_LOG points a merge inverse's post factor n^-1 psi^-j is the product of two table
    entries, the last pass reading the low one once per lane (j = v + k 2^s0): forced here at 2^8 points, with one
    thread per lane's sub-transform (16 elements) and with two (8 elements each: k's low bit is the thread's)."""
    from hebatch import arith

    monkeypatch.setattr(arith, "SINGLE_LEVEL_MAX_LOG", 3)
    rng = np.random.default_rng()
    n = 1 << 8
    plan = make_plan(
        n, Q60, tuple(default_root(q, n, True) for q in Q60), True, "radix2", (16, 16), radix, True, False, None, paired
    )
    cpu = NumpyBackend()
    x = rng.integers(0, 2**63, size=(3, len(Q60), n), dtype=np.uint64) % np.array(Q60, dtype=np.uint64)[:, None]
    assert [t for _, t in plan.gpu_pass_modes(True, 64)][-1] == 2  # two post tables
    assert (backend.inverse(cpu.forward(x, plan).view(FakeArray), plan) == x).all()


SPREAD_CASES = [
    # (moduli, log n, algorithm, split, log2 elements per thread): limbs within a factor of 4 (the first pass
    # reads the rows unreduced, one row for every limb), on a one-pass, two two-pass merge (16 and 8 elements
    # per thread) and a 4-step plan (limbs further apart take the RNS engine's reduction first: tests/test_gpu.py)
    (tuple(ntt_primes(59, 1 << 12, 2)) + Q60, 6, "radix2", None, None),
    (tuple(ntt_primes(59, 1 << 12, 1)) + Q60, 8, "radix2", (16, 16), None),
    (tuple(ntt_primes(59, 1 << 12, 1)) + Q60, 8, "radix2", (16, 16), 3),
    (tuple(ntt_primes(59, 1 << 12, 2)) + Q60[:1], 8, "4step", (8, 32), None),
]


@pytest.mark.parametrize("moduli,log_n,algorithm,split,radix", SPREAD_CASES)
def test_forward_spread_on_host_threads_matches_cpu(backend, moduli, log_n, algorithm, split, radix):
    rng = np.random.default_rng()
    n = 1 << log_n
    plan = make_plan(n, moduli, tuple(default_root(q, n, True) for q in moduli), True, algorithm, split, radix)
    x = rng.integers(0, max(moduli), size=(3, n), dtype=np.uint64)
    x[0, :4] = [0, min(moduli), max(moduli) - 1, 4 * min(moduli) % max(moduli)]  # above the smaller limbs
    want = NumpyBackend().forward(x[:, None, :] % np.array(moduli, dtype=np.uint64)[:, None], plan)
    assert (backend.forward_spread(x.view(FakeArray), plan) == want).all()


def test_twiddle_grid_on_host_threads_matches_cpu(backend):
    rng = np.random.default_rng()
    q = Q60[0]
    root = default_root(q, 1 << 12, False)
    x = rng.integers(0, q, size=(6, 10), dtype=np.uint64)
    for args in ((5, 3, 1, 1), (2**40 + 7, 11, 2, 3)):
        want = NumpyBackend().twiddle_grid_mul(x, q, root, *args)
        assert (backend.twiddle_grid_mul(x.view(FakeArray), q, root, *args) == want).all(), args
        strided = np.ascontiguousarray(x.T).T.view(FakeArray)  # column-major: the struct's strides
        assert (backend.twiddle_grid_mul(strided, q, root, *args) == want).all(), args


@pytest.mark.parametrize("q", [Q60[0], GOLDILOCKS])
@pytest.mark.parametrize("log_n", [1, 2, 9])
def test_merge_table_on_host_threads_matches_host_tables(backend, q, log_n):
    """The device-built merge table, entry for entry (values and Shoup companions) the host's, for the
    forward negacyclic, forward cyclic and inverse tables."""
    from hebatch.ntt import tables

    n = 1 << log_n
    for negacyclic in (False, True):
        root = default_root(q, n, negacyclic)
        for inverse in (False, True):
            table_root, form = tables.merge_table_spec(q, root, n, negacyclic, inverse)
            got = np.asarray(backend.merge_table(q, table_root, n, form))
            want = tables.merge_table(q, root, n, negacyclic, inverse, 64)
            assert got.shape == want.shape and (got == want).all(), (negacyclic, inverse)
            for last_bits in sorted({1, log_n // 2, log_n - 1} & set(range(1, log_n))):  # a last pass's order
                got = np.asarray(backend.merge_table(q, table_root, n, form, last_bits=last_bits))
                want = tables.merge_table(q, root, n, negacyclic, inverse, 64, last_bits)
                assert (got == want).all(), (negacyclic, inverse, last_bits)
    with pytest.raises(ValueError, match="last_bits"):
        backend.merge_table(q, root, n, False, last_bits=log_n)


@pytest.mark.parametrize("q", [Q60[0], GOLDILOCKS, BABYBEAR])
def test_merge_table_entry_zero_is_the_pair_ratio_of_every_stage(q):
    """Entry 0 of a merge table (no stage's) is c with entry(2k + 1) = entry(2k) c over the groups of every stage
    from stage 1 on, in both directions, both orders and either table layout: the last merge pass reads the even
    entries only of the transform's last two stages."""
    from hebatch.ntt import tables

    for log_n in (2, 3, 9):
        n = 1 << log_n
        for negacyclic in (False, True):
            root = default_root(q, n, negacyclic)
            for inverse in (False, True):
                natural = tables.merge_table(q, root, n, negacyclic, inverse, 64)
                for last_bits in {0, 1, log_n - 1}:
                    c = int(tables.merge_table(q, root, n, negacyclic, inverse, 64, last_bits)[0, 0])
                    for s in range(1, log_n):
                        for k in range(1 << (s - 1)):
                            pair = int(natural[(1 << s) + 2 * k, 0]), int(natural[(1 << s) + 2 * k + 1, 0])
                            assert pair[1] == pair[0] * c % q, (log_n, s, k)
    assert int(tables.merge_table(q, default_root(q, 2, False), 2, False, False, 64)[0, 0]) == 1  # no pairs


def test_last_pass_order_is_the_lanes_order():
    """Position r 2^b + v of stage s >= b holds group bitrev_b(v) 2^(s-b) + r; other stages stay put."""
    from hebatch.arith import bitrev_indices
    from hebatch.ntt import tables

    log_n, b = 7, 3
    order = tables.last_pass_order(log_n, b)
    assert sorted(order) == list(range(1 << log_n))
    assert (order[: 1 << b] == np.arange(1 << b)).all()
    brv = bitrev_indices(b)
    for s in range(b, log_n):
        for r in range(1 << (s - b)):
            for v in range(1 << b):
                assert order[(1 << s) + (r << b) + v] == (1 << s) + (brv[v] << (s - b)) + r
    assert (tables.last_pass_order(log_n, 0) == np.arange(1 << log_n)).all()
