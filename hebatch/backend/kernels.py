"""The kernel boundary of the word kernels (kernels/ntt.cu, rns.cu): the names, enums and host
layouts that Python and CUDA share, each defined here once. Free of CuPy."""

from __future__ import annotations

import numpy as np

from ..device import device_properties
from ..field import GOLDILOCKS, modulus_info

WORD_BITS = {np.dtype(np.uint64): 64, np.dtype(np.uint32): 32}

# struct ModConst of kernels/modarith.cuh, field by field
MODCONST_DTYPE = np.dtype([("q", "<u8"), ("mu", "<u8"), ("m", "<u4"), ("pad", "<u4")])

# enum LaneMode of kernels/ntt.cu: how a pass maps its lanes to rows of the batch
LANE_MODES = {"i": 0, "o": 1, "row": 2, "bitrev": 3}


def arith_name(moduli, word_bits: int) -> str:
    """The arithmetic struct of kernels/modarith.cuh that a kernel template is instantiated with."""
    if word_bits == 32:
        return "Mod32"
    if all(q == GOLDILOCKS for q in moduli):
        return "Goldilocks"
    return "Mod64"


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
_STAND_IN = {"sm_count": 132, "threads_per_sm": 2048}  # for array modules without a device (host tests)


def elementwise_blocks(total: int, threads: int, device: int) -> int:
    """Blocks of `threads` threads for an element-wise kernel over `total` elements on GPU `device`."""
    try:
        props = device_properties(device)
    except (ImportError, AttributeError):  # no CuPy, or a stand-in module without device properties
        props = _STAND_IN
    cap = GRID_WAVES * props["sm_count"] * max(1, props["threads_per_sm"] // threads)
    return max(1, min(cap, -(-total // threads)))
