"""The kernel boundary: the names, enums, constants and parameter structs that Python and the CUDA
kernels (kernels/ntt.cu, ntt256.cu, rns.cu) share, each defined here once. Free of CuPy.

Kernels take their buffers as pointer arguments and everything else as one parameter struct passed by
value; each struct is a NumPy structured dtype here (C layout: `align=True`), filled by name with
`pack`, and checked against its C++ definition field by field by tests/test_kernel_boundary.py. Constants
the kernels rely on reach them as -D defines (`KERNEL_DEFINES`, added by the loader) checked there by
static_asserts."""

from __future__ import annotations

import numpy as np

from ..device import device_properties
from ..field import GOLDILOCKS, modulus_info

WORD_BITS = {np.dtype(np.uint64): 64, np.dtype(np.uint32): 32}

# struct ModConst of kernels/modarith.cuh, field by field
MODCONST_DTYPE = np.dtype([("q", "<u8"), ("mu", "<u8"), ("m", "<u4"), ("pad", "<u4")])

# enum LaneMode of kernels/ntt.cu: how a pass maps its lanes to rows of the batch
LANE_MODES = {"i": 0, "o": 1, "row": 2, "bitrev": 3, "bitrev_ordered": 4, "bitrev_ordered_paired": 5, "row_dense": 6}
# enum TableMode of kernels/ntt.cu: how a pass gets powers of a root (store twiddles, post factors):
# not at all, from one lookup table, or as the product of a high and a low table entry
TABLE_MODES = {"none": 0, "one": 1, "two": 2}

# Moduli below this take struct Mod60 of kernels/modarith.cuh (butterfly values in [0, 16q) need 16q <= 2^64);
# larger ones, up to 2^62, take Mod64
LAZY_STAGES_MAX_MODULUS = 1 << 60

# Threads per block at most, on every CUDA device so far: NTT_MAX_THREADS of kernels/ntt.cu
MAX_THREADS = 1024
# The 256-bit kernels (kernels/ntt256.cu): threads per block, and elements per block of ntt256_pass at
# most (2^11 elements of 32 bytes: 64 KiB of shared memory). Set on an NVIDIA H100 80GB HBM3 on
# 2026-11-23 with benchmarks/zk_bench.py (benchmarks/results/zk-H100-80GB-HBM3-2026-11-23.json).
NTT256_THREADS = 256
NTT256_LOG_BLOCK = 11

# -D defines of each kernel file, added to its compile options by the loader (and by the prebuild tool)
KERNEL_DEFINES = {
    "ntt.cu": (("NTT_MAX_THREADS", str(MAX_THREADS)),),
    "ntt256.cu": (
        ("NTT256_THREADS", str(NTT256_THREADS)),
        ("NTT256_LOG_BLOCK", str(NTT256_LOG_BLOCK)),
    ),
}

# -- parameter structs ------------------------------------------------------------------------------
_KINDS = {"ptr": "<u8", "i64": "<i8", "u64": "<u8", "i32": "<i4"}


def _struct(*groups: tuple[str, str]) -> np.dtype:
    """A C-layout struct from (kind, "name name ...") groups in declaration order; pointer fields
    ("ptr") hold device addresses and are listed in the dtype's metadata for `pack`."""
    fields = [(name, _KINDS[kind]) for kind, names in groups for name in names.split()]
    pointers = tuple(name for kind, names in groups if kind == "ptr" for name in names.split())
    return np.dtype(fields, align=True, metadata={"pointers": pointers})


# struct NttPassParams<Tw> of kernels/ntt.cu: one ntt_pass launch
NTT_PASS_PARAMS = _struct(
    ("ptr", "consts tw zh zl ph pl"),
    ("i64", "rows n d_i d_o digit_d digit_m tw_stride z_stride_h z_stride_l p_stride_h p_stride_l"),
    ("i64", "z_mask c_p p_mask"),
    ("i32", "limbs log_do s0 use_h z_bits alpha beta gamma delta p_bits post_by_output keep_positions in_spread"),
    ("i32", "limb_rows"),  # rows per limb where the blocks go limb by limb (hebatch.ntt.recipes.limb_major_rows)
)
# struct TwiddleGridParams<Tw> of kernels/ntt.cu: one twiddle_grid launch
TWIDDLE_GRID_PARAMS = _struct(
    ("ptr", "high low consts"),
    ("i64", "rows cols x_row_stride x_col_stride"),
    ("u64", "row0 row_step col0 col_step mask"),
    ("i32", "bits"),
)
# struct MergeTableParams of kernels/ntt.cu: one merge_table launch
MERGE_TABLE_PARAMS = _struct(
    ("ptr", "high low consts"),
    ("i64", "count"),
    ("u64", "mult add mask"),
    ("i32", "log_n bits last_bits"),
)
# struct Ntt256PassParams of kernels/ntt256.cu: one ntt256_pass launch
NTT256_PASS_PARAMS = _struct(
    ("ptr", "sub_tw tw_low tw_high scale"),
    ("i64", "total_lanes"),
    ("i32", "log_n log_k log_low log_c log_ktop tw_bits use_scale tw_direct"),
)
# struct Grid256Params of kernels/ntt256.cu: one twiddle_grid256 launch
GRID256_PARAMS = _struct(
    ("ptr", "low high"),
    ("i64", "rows cols"),
    ("u64", "row0 row_step col0 col_step mask"),
    ("i32", "bits"),
)

# kernel (without template arguments) -> its parameter struct: the C++ name and the layout
PARAM_STRUCTS = {
    "ntt_pass": ("NttPassParams", NTT_PASS_PARAMS),
    "twiddle_grid": ("TwiddleGridParams", TWIDDLE_GRID_PARAMS),
    "merge_table": ("MergeTableParams", MERGE_TABLE_PARAMS),
    "ntt256_pass": ("Ntt256PassParams", NTT256_PASS_PARAMS),
    "twiddle_grid256": ("Grid256Params", GRID256_PARAMS),
}


def address(array) -> int:
    """The address of an array's first element: a CuPy array's device pointer, or a NumPy array's host
    address (host builds of the kernels run with NumPy arrays)."""
    if isinstance(array, np.ndarray):
        return int(array.ctypes.data)
    return int(array.data.ptr)


_LAYOUTS: dict = {}  # dtype -> _layout's answer


def _layout(dtype: np.dtype) -> tuple:
    """(field names, per field in order: (name, is_pointer, min, max)) of a parameter struct, kept on the
    dtype's first use: `pack` runs once per launch on some paths."""
    layout = _LAYOUTS.get(dtype)
    if layout is None:
        pointers = dtype.metadata["pointers"]
        fields = []
        for name in dtype.names:
            info = np.iinfo(dtype.fields[name][0])
            fields.append((name, name in pointers, int(info.min), int(info.max)))
        layout = _LAYOUTS[dtype] = (frozenset(dtype.names), tuple(fields))
    return layout


def pack(dtype: np.dtype, **values) -> np.ndarray:
    """One parameter struct of `dtype` with every field given by name (device arrays for pointer fields,
    ints otherwise), as the one-element NumPy array a kernel takes by value. A missing or unknown field,
    or a value of the wrong kind or out of its field's range, is a ValueError: fields are never filled
    by position."""
    names, fields = _layout(dtype)
    if names != values.keys():
        missing, unknown = sorted(names - values.keys()), sorted(values.keys() - names)
        raise ValueError(f"parameter struct fields: missing {missing}, unknown {unknown}")
    row = []
    for name, is_pointer, low, high in fields:
        value = values[name]
        is_int = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        if is_pointer:
            if is_int:
                raise ValueError(f"parameter {name} is a pointer: pass the array, got the int {value}")
            value = address(value)
        elif not is_int:
            raise ValueError(f"parameter {name} must be an int, got {type(value).__name__}")
        value = int(value)
        if not low <= value <= high:
            raise ValueError(f"parameter {name} = {value} does not fit {dtype.fields[name][0]}")
        row.append(value)
    return np.array([tuple(row)], dtype=dtype)


def grid_exponents(order: int, row0: int, row_step: int, col0: int, col_step: int) -> dict:
    """The exponent fields of a twiddle-grid struct (TWIDDLE_GRID_PARAMS, GRID256_PARAMS): entry (r, c) is
    root^((row0 + r row_step)(col0 + c col_step)) with every term reduced mod the power-of-two `order`."""
    return dict(
        row0=row0 % order, row_step=row_step % order, col0=col0 % order, col_step=col_step % order, mask=order - 1
    )


def arith_name(moduli, word_bits: int) -> str:
    """The arithmetic struct of kernels/modarith.cuh that a kernel template is instantiated with."""
    if word_bits == 32:
        return "Mod32"
    if all(q == GOLDILOCKS for q in moduli):
        return "Goldilocks"
    # below 2^60 the butterflies have room to reduce every other stage only
    return "Mod60" if all(q < LAZY_STAGES_MAX_MODULUS for q in moduli) else "Mod64"


def modconst_rows(moduli) -> np.ndarray:
    """struct ModConst rows of primes `moduli`: q, Barrett mu (0 for Goldilocks, which has its own
    reduction), bit length."""
    table = np.zeros(len(moduli), dtype=MODCONST_DTYPE)
    for r, q in enumerate(moduli):
        info = modulus_info(q)
        table[r] = (q, 0 if q == GOLDILOCKS else info.barrett_mu, info.bits, 0)
    return table


# Element-wise kernels (pointwise products, twiddle grids, permutations, power scalings) loop over
# their elements with a grid stride, so any grid gives the same results; one rule caps every grid at
# GRID_WAVES full waves of the device (on an H100: 132 SMs x 8 blocks of 256 threads x 64 = 67584
# blocks, where the 256-bit kernels had used 2^16 since 2026-11-23, zk-H100-80GB-HBM3-2026-11-23.json).
GRID_WAVES = 64
# what launches assume for array modules without a device (host builds): an H100's SMs, and no L2 known
_STAND_IN = {"sm_count": 132, "threads_per_sm": 2048, "l2_bytes": 0}


def launch_properties(device: int) -> dict:
    """device_properties of GPU `device` (hebatch.device), or the stand-in's without CuPy or a device."""
    try:
        return device_properties(device)
    except (ImportError, AttributeError):  # no CuPy, or a stand-in module without device properties
        return _STAND_IN


def elementwise_blocks(total: int, threads: int, device: int) -> int:
    """Blocks of `threads` threads for an element-wise kernel over `total` elements on GPU `device`."""
    props = launch_properties(device)
    cap = GRID_WAVES * props["sm_count"] * max(1, props["threads_per_sm"] // threads)
    return max(1, min(cap, -(-total // threads)))
