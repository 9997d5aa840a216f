"""The Python side of the kernel boundary checked against the CUDA sources: the parameter structs field by
field (offsetof/sizeof), the enums value by value and the -D constants, as static_asserts compiled with
the host C++ compiler and, where installed, nvcc. A field, mode or constant out of order fails to compile
instead of giving wrong numbers."""

import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from hebatch.backend.gpu.loader import define_options, kernel_dir
from hebatch.backend.kernels import (
    GRID256_PARAMS,
    KERNEL_DEFINES,
    LANE_MODES,
    MODCONST_DTYPE,
    NTT256_PASS_PARAMS,
    NTT_PASS_PARAMS,
    PARAM_STRUCTS,
    TABLE_MODES,
    TWIDDLE_GRID_PARAMS,
    pack,
)

from .host_kernels import compiler, host_library

LANE_ENUM = {
    "i": "LANES_ALONG_I",
    "o": "LANES_ALONG_O",
    "row": "LANES_ALONG_ROW",
    "bitrev": "LANES_BITREV",
    "bitrev_ordered": "LANES_BITREV_ORDERED",
    "bitrev_ordered_paired": "LANES_BITREV_ORDERED_PAIRED",
    "row_dense": "LANES_ALONG_ROW_DENSE",
}
TABLE_ENUM = {"none": "TABLES_NONE", "one": "TABLES_ONE", "two": "TABLES_TWO"}

# Enough of CUDA for a host compiler to parse the kernel files (nothing is instantiated or run).
HOST_PRELUDE = r"""
struct HostDim3 { unsigned x, y, z; };
static HostDim3 blockIdx, threadIdx, blockDim, gridDim;
unsigned char smem_raw[1];
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
#define __global__
#define __device__
#define __shared__
#define __forceinline__ inline
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
static inline void __syncthreads() {}
static inline unsigned __brev(unsigned x) { return x; }
static inline unsigned long long __brevll(unsigned long long x) { return x; }
static inline int __clzll(long long x) { return (int)x; }
static inline int __ffs(int x) { return x; }
static inline int __ffsll(long long x) { return (int)x; }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) { return a * b; }
static inline unsigned __umulhi(unsigned a, unsigned b) { return a * b; }
"""


def layout_asserts(struct: str, dtype: np.dtype) -> str:
    lines = [f'static_assert(sizeof({struct}) == {dtype.itemsize}, "size of {struct}");']
    for name in dtype.names:
        kind, offset = dtype.fields[name][:2]
        lines.append(f'static_assert(offsetof({struct}, {name}) == {offset}, "{struct}.{name}");')
        lines.append(f'static_assert(sizeof((({struct}*)0)->{name}) == {kind.itemsize}, "size of {struct}.{name}");')
    return "\n".join(lines)


def enum_asserts(enum: str, names: dict, modes: dict) -> str:
    return "\n".join(f'static_assert({names[k]} == {v}, "{enum} {k}");' for k, v in modes.items())


def boundary_source(structs=None, lane_modes=LANE_MODES, table_modes=TABLE_MODES) -> str:
    """Asserts of every struct (kernel -> (C++ name, dtype)), enum and define against the kernel files."""
    structs = PARAM_STRUCTS if structs is None else structs
    parts = ["#include <cstddef>", '#include "ntt.cu"', '#include "ntt256.cu"']
    parts.append("typedef NttPassParams<Tw64> NttPassParams64;\ntypedef NttPassParams<Tw32> NttPassParams32;")
    parts.append("typedef TwiddleGridParams<Tw64> TwiddleGridParams64;")
    parts.append("typedef MergeTableParams<Tw64> MergeTableParams64;")
    parts.append(layout_asserts("ModConst", MODCONST_DTYPE))
    for kernel, (struct, dtype) in structs.items():
        for name in (
            (f"{struct}64", f"{struct}32")
            if kernel == "ntt_pass"
            else ((f"{struct}64",) if kernel in ("twiddle_grid", "merge_table") else (struct,))
        ):
            parts.append(layout_asserts(name, dtype))
    parts.append(enum_asserts("LaneMode", LANE_ENUM, lane_modes))
    parts.append(enum_asserts("TableMode", TABLE_ENUM, table_modes))
    for filename, defines in KERNEL_DEFINES.items():
        for macro, value in defines:
            parts.append(f'static_assert({macro} == {value}, "{macro} of {filename}");')
    return "\n".join(parts) + '\nextern "C" int boundary_ok() { return 1; }\n'


def host_build(source: str, defines=()):
    return host_library(
        source,
        headers=("modarith.cuh", "launch.cuh", "field256.cuh", "ntt.cu", "ntt256.cu"),
        defines=("FIELD256_HOST_CHAINS",) + tuple(defines),
        prelude=HOST_PRELUDE,
    )


def nvcc_build(source: str, tmp_path, defines=()):
    path = tmp_path / "boundary.cu"
    path.write_text(source)
    subprocess.run(
        [
            "nvcc",
            "-std=c++17",
            "-arch=sm_90",
            f"-I{kernel_dir()}",
            *defines,
            "-ptx",
            "-o",
            str(tmp_path / "b.ptx"),
            str(path),
        ],
        check=True,
        capture_output=True,
        text=True,
    )


needs_host = pytest.mark.skipif(compiler() is None, reason="needs a C++ compiler")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@needs_host
def test_python_definitions_match_the_kernels_host_compiler():
    # defaults of the kernel files (builds without -D) and the loader's -D values both agree with Python
    assert host_build(boundary_source()).boundary_ok() == 1
    loader_defines = tuple(f"{k}={v}" for defs in KERNEL_DEFINES.values() for k, v in defs)
    assert host_build(boundary_source(), loader_defines).boundary_ok() == 1


@needs_nvcc
def test_python_definitions_match_the_kernels_nvcc(tmp_path):
    nvcc_build(boundary_source(), tmp_path)
    nvcc_build(boundary_source(), tmp_path, define_options("ntt.cu") + define_options("ntt256.cu"))


def swapped(dtype: np.dtype, a: str, b: str) -> np.dtype:
    """dtype with fields a and b (of one size) in each other's places: the layout an argument out of order has."""
    names = list(dtype.names)
    i, j = names.index(a), names.index(b)
    names[i], names[j] = names[j], names[i]
    return np.dtype([(n, dtype.fields[n][0]) for n in names], align=True)


@needs_host
@pytest.mark.parametrize(
    "kernel,a,b",
    [
        ("ntt_pass", "d_i", "d_o"),
        ("ntt_pass", "tw", "zh"),
        ("ntt_pass", "post_by_output", "keep_positions"),
        ("twiddle_grid", "row0", "col0"),
        ("merge_table", "mult", "add"),
        ("ntt256_pass", "tw_low", "tw_high"),
        ("ntt256_pass", "log_k", "log_low"),
        ("twiddle_grid256", "rows", "cols"),
    ],
)
def test_a_field_out_of_order_fails(kernel, a, b):
    struct, dtype = PARAM_STRUCTS[kernel]
    with pytest.raises(subprocess.CalledProcessError) as err:
        host_build(boundary_source({kernel: (struct, swapped(dtype, a, b))}))
    assert f".{a}" in err.value.stderr or f".{b}" in err.value.stderr


@needs_host
def test_a_modconst_field_out_of_order_fails():
    source = boundary_source().replace(
        layout_asserts("ModConst", MODCONST_DTYPE), layout_asserts("ModConst", swapped(MODCONST_DTYPE, "q", "mu"))
    )
    with pytest.raises(subprocess.CalledProcessError) as err:
        host_build(source)
    assert "ModConst.mu" in err.value.stderr


@needs_host
def test_a_mode_out_of_order_fails():
    with pytest.raises(subprocess.CalledProcessError) as err:
        host_build(boundary_source(lane_modes=dict(LANE_MODES, o=LANE_MODES["row"], row=LANE_MODES["o"])))
    assert "LaneMode" in err.value.stderr
    with pytest.raises(subprocess.CalledProcessError) as err:
        host_build(boundary_source(table_modes=dict(TABLE_MODES, one=2, two=1)))
    assert "TableMode" in err.value.stderr


@needs_host
def test_a_constant_the_kernels_cannot_take_fails():
    with pytest.raises(subprocess.CalledProcessError) as err:
        host_build(boundary_source(), ("NTT256_THREADS=96", "NTT_MAX_THREADS=2048"))
    assert "NTT256_THREADS" in err.value.stderr and "NTT_MAX_THREADS" in err.value.stderr


def test_pack_fills_fields_by_name_only():
    tables = np.zeros(8, dtype=np.uint64)
    values = dict(low=tables, high=tables[2:], rows=3, cols=5, row0=1, row_step=2, col0=3, col_step=4, mask=7, bits=2)
    (params,) = pack(GRID256_PARAMS, **values)
    assert params["high"] - params["low"] == 16 and params["rows"] == 3 and params["cols"] == 5
    with pytest.raises(ValueError, match=r"missing \['bits'\]"):
        pack(GRID256_PARAMS, **{k: v for k, v in values.items() if k != "bits"})
    with pytest.raises(ValueError, match=r"unknown \['colls'\]"):
        pack(GRID256_PARAMS, colls=5, **values)
    with pytest.raises(ValueError, match="low is a pointer"):
        pack(GRID256_PARAMS, **dict(values, low=0))
    with pytest.raises(ValueError, match="rows must be an int"):
        pack(GRID256_PARAMS, **dict(values, rows=tables))
    with pytest.raises(ValueError, match="bits = 4294967296 does not fit"):
        pack(GRID256_PARAMS, **dict(values, bits=1 << 32))
    for dtype in (NTT_PASS_PARAMS, TWIDDLE_GRID_PARAMS, NTT256_PASS_PARAMS, GRID256_PARAMS):
        assert dtype.isalignedstruct and dtype.itemsize % 8 == 0


@pytest.mark.gpu
def test_struct_argument_passes_the_struct_by_value_and_keeps_it_alive():
    cp = pytest.importorskip("cupy")
    import gc

    from hebatch.backend.gpu.loader import struct_argument

    kernel = cp.RawKernel(
        r"""
        struct Grid { const void* low; const void* high; long long rows, cols;
                      unsigned long long row0, row_step, col0, col_step, mask; int bits; };
        extern "C" __global__ void echo(Grid g, unsigned long long* out) {
            out[0] = (unsigned long long)g.high - (unsigned long long)g.low; out[1] = g.rows; out[2] = g.cols;
            out[3] = g.row0; out[4] = g.col_step; out[5] = g.mask; out[6] = (unsigned long long)g.bits;
        }""",
        "echo",
    )
    rng = np.random.default_rng()
    tables = cp.zeros(64, dtype=cp.uint64)
    offset = int(rng.integers(1, 64))
    values = [int(v) for v in rng.integers(1, 2**62, size=5)] + [int(rng.integers(1, 2**31))]
    argument = struct_argument(
        pack(
            GRID256_PARAMS,
            low=tables,
            high=tables[offset:],
            rows=values[0],
            cols=values[1],
            row0=values[2],
            row_step=1,
            col0=0,
            col_step=values[3],
            mask=values[4],
            bits=values[5],
        )
    )
    gc.collect()
    np.zeros(1 << 16, dtype=np.uint8)  # reuse of freed host memory would show here
    out = cp.zeros(7, dtype=cp.uint64)
    kernel((1,), (1,), (argument, out))
    assert out.get().tolist() == [8 * offset, *values]


# -- BoundLaunch: the launch argument array ----------------------------------------------------------------


def _bound_launch_case(monkeypatch, driver):
    import types

    from hebatch.backend.gpu import loader

    monkeypatch.setattr(loader, "_driver_launch", lambda: driver)
    rng = np.random.default_rng()
    params = np.zeros(1, dtype=np.dtype([("a", "<u8"), ("b", "<i4"), ("c", "<u8")], align=True))
    params["a"], params["b"], params["c"] = (int(v) for v in rng.integers(1, 2**31, size=3))
    kernel = types.SimpleNamespace(ptr=int(rng.integers(1, 2**40)))
    grid, block, smem = (int(v) for v in rng.integers(1, 1 << 16, size=3))
    return loader.BoundLaunch(kernel, grid, block, smem, params, buffers=3), kernel, params, (grid, block, smem)


def _buffers(rng):
    import types

    return [types.SimpleNamespace(data=types.SimpleNamespace(ptr=int(p))) for p in rng.integers(1, 2**48, size=3)]


def test_bound_launch_passes_buffer_pointers_then_the_struct(monkeypatch):
    import ctypes

    seen = []

    def launch(f, gx, gy, gz, bx, by, bz, smem, stream, argv, extra):
        entries = (ctypes.c_void_p * 4).from_address(argv)
        pointers = [ctypes.c_uint64.from_address(entries[i]).value for i in range(3)]
        struct = bytes((ctypes.c_ubyte * params.nbytes).from_address(entries[3]))
        seen.append(((f, gx, gy, gz, bx, by, bz, smem, stream, extra), pointers, struct))

    stream = 0xABC0
    bound, kernel, params, (grid, block, smem) = _bound_launch_case(monkeypatch, (launch, lambda: stream))
    rng = np.random.default_rng()
    for _ in range(3):
        buffers = _buffers(rng)
        bound(*buffers)
        call, pointers, struct = seen[-1]
        assert call == (kernel.ptr, grid, 1, 1, block, 1, 1, smem, stream, 0)
        assert pointers == [b.data.ptr for b in buffers]
        assert struct == params.tobytes()


def test_bound_launch_keeps_each_callers_pointers_together(monkeypatch):
    """Launches of one bound kernel from several threads: each launch sees the pointers its caller gave."""
    import ctypes
    import threading
    import time

    seen = []

    def launch(f, gx, gy, gz, bx, by, bz, smem, stream, argv, extra):
        time.sleep(0)  # let another thread run between the slots' filling and their reading
        entries = (ctypes.c_void_p * 4).from_address(argv)
        pointers = tuple(ctypes.c_uint64.from_address(entries[i]).value for i in range(3))
        seen.append((threading.get_ident(), pointers))

    bound, *_ = _bound_launch_case(monkeypatch, (launch, lambda: 0))
    rng = np.random.default_rng()
    per_thread = [_buffers(rng) for _ in range(4)]

    expected = {}

    def work(buffers):
        expected[threading.get_ident()] = tuple(b.data.ptr for b in buffers)
        for _ in range(300):
            bound(*buffers)

    threads = [threading.Thread(target=work, args=(b,)) for b in per_thread]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 1200
    assert all(pointers == expected[ident] for ident, pointers in seen)


def test_bound_launch_without_the_driver_binding_calls_the_kernel(monkeypatch):
    calls = []
    bound, _kernel, params, (grid, block, smem) = _bound_launch_case(monkeypatch, None)
    bound.kernel = lambda *args, **kwargs: calls.append((args, kwargs))
    buffers = _buffers(np.random.default_rng())
    bound(*buffers)
    ((args, kwargs),) = calls
    assert args[:2] == ((grid,), (block,)) and args[2][:3] == tuple(buffers) and kwargs == {"shared_mem": smem}
    struct = args[2][3]  # struct_argument's: the struct itself without CuPy, else a pointer holding it
    assert struct is params or getattr(struct, "params", None) is params


@pytest.mark.gpu
def test_bound_launch_runs_a_kernel_with_its_buffers_and_struct():
    cp = pytest.importorskip("cupy")
    from hebatch.backend.gpu.loader import BoundLaunch

    kernel = cp.RawKernel(
        r"""
        struct Echo { unsigned long long a; int b; unsigned long long c; };
        extern "C" __global__ void echo3(const unsigned long long* x, const unsigned long long* y,
                                         unsigned long long* out, Echo e) {
            const int i = threadIdx.x;
            out[i] = x[i] + y[i];
            if (i == 0) { out[32] = e.a; out[33] = (unsigned long long)e.b; out[34] = e.c; }
        }""",
        "echo3",
    )
    rng = np.random.default_rng()
    params = np.zeros(1, dtype=np.dtype([("a", "<u8"), ("b", "<i4"), ("c", "<u8")], align=True))
    params["a"], params["b"], params["c"] = (int(v) for v in rng.integers(1, 2**31, size=3))
    bound = BoundLaunch(kernel, 1, 32, 0, params, buffers=3)
    for _ in range(3):
        # the current stream, not the default one; the inputs are made on it too, since a non-blocking stream
        # does not wait for work queued on the default stream
        with cp.cuda.Stream(non_blocking=True) as stream:
            x, y = (cp.asarray(rng.integers(0, 2**62, size=32, dtype=np.uint64)) for _ in range(2))
            out = cp.zeros(35, dtype=cp.uint64)
            bound(x, y, out)
            stream.synchronize()
        got = out.get()
        assert (got[:32] == (x + y).get()).all()
        assert got[32:].tolist() == [int(params["a"][0]), int(params["b"][0]), int(params["c"][0])]


@needs_nvcc
def test_cluster_probe_source_compiles_against_the_kernels(tmp_path):
    """benchmarks/ntt_cluster_probe.cu calls ntt.cu's ntt_steps: it keeps compiling as ntt.cu changes."""
    probe = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "ntt_cluster_probe.cu"
    variants = ("false,2", "true,2", "true,3", "true,4")
    kernels = ", ".join(f"(void*)&cluster_ntt_2p14<Mod60,{v}>" for v in variants)
    source = probe.read_text() + f"void* const probe_kernels[] = {{{kernels}}};\n"
    nvcc_build(source, tmp_path, define_options("ntt.cu"))
