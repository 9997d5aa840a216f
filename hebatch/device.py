"""Device helpers at the bottom of the layers: which devices exist, which one an array lives on,
and the one `device` word every layer and the CLI accept ("auto", "cpu", "gpu").

Nothing here imports CuPy unless a GPU question is asked, so CPU-only machines never pay for it.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache, lru_cache

DEVICES = ("auto", "cpu", "gpu")


@lru_cache(maxsize=1)
def gpu_available() -> bool:
    """True if CuPy is importable and sees at least one CUDA device (asked once per process)."""
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no driver, no device: CuPy raises several kinds of errors
        return False


def check_device(device, name: str = "device") -> str:
    """`device` itself if it is one of DEVICES; ValueError naming the choices otherwise."""
    if not isinstance(device, str) or device not in DEVICES:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, DEVICES))}, got {device!r}")
    return device


def resolve_device(device="auto", name: str = "device") -> str:
    """The concrete device ("cpu" or "gpu") that the word `device` asks for on this machine.

    "auto" is the GPU when one is visible, else the CPU; "gpu" without a GPU is a ValueError that
    says what to do instead.
    """
    check_device(device, name)
    if device == "cpu":
        return "cpu"
    if gpu_available():
        return "gpu"
    if device == "gpu":
        raise ValueError(
            f"{name}='gpu' needs CuPy and a CUDA GPU, and none is visible here; use {name}='cpu' or 'auto'"
        )
    return "cpu"


def cupy_array_type():
    """cupy.ndarray if CuPy has been imported, else None (a CuPy array cannot exist without it)."""
    cupy = sys.modules.get("cupy")
    return None if cupy is None else cupy.ndarray


def is_device_array(x) -> bool:
    """True for a CuPy array."""
    array_type = cupy_array_type()
    return array_type is not None and isinstance(x, array_type)


def device_of(x, name: str = "x") -> str:
    """ "gpu" for a CuPy array, "cpu" for a NumPy array; TypeError for anything else."""
    import numpy as np

    if isinstance(x, np.ndarray):
        return "cpu"
    if is_device_array(x):
        return "gpu"
    raise TypeError(f"{name} must be a NumPy or CuPy array, got {type(x).__module__}.{type(x).__name__}")


def array_module(x):
    """numpy or cupy: the module whose functions operate on x."""
    if device_of(x) == "gpu":
        import cupy

        return cupy
    import numpy

    return numpy


def to_host(x):
    """x as a NumPy array (copied from the GPU if it is a CuPy array); anything else unchanged."""
    return x.get() if is_device_array(x) else x


def device_memory_bytes() -> int | None:
    """Total memory of this process's current GPU, or None without one."""
    if not gpu_available():
        return None
    import cupy

    return int(cupy.cuda.Device().mem_info[1])


def gpu_count() -> int:
    """The number of CUDA devices CuPy sees (0 without CuPy or a GPU)."""
    if not gpu_available():
        return 0
    import cupy

    return int(cupy.cuda.runtime.getDeviceCount())


@cache
def device_properties(index: int) -> dict:
    """What launch plans read of GPU `index` (asked once per device): sm_count, threads_per_sm,
    shared_per_block (the opt-in maximum of dynamic shared memory per block), l2_bytes, memory_bytes, name."""
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(index)
    name = props["name"]
    return {
        "sm_count": int(props["multiProcessorCount"]),
        "threads_per_sm": int(props["maxThreadsPerMultiProcessor"]),
        "shared_per_block": int(props["sharedMemPerBlockOptin"]),
        "l2_bytes": int(props["l2CacheSize"]),
        "memory_bytes": int(props["totalGlobalMem"]),
        "name": name.decode() if isinstance(name, bytes) else str(name),
    }


__all__ = [
    "DEVICES",
    "array_module",
    "check_device",
    "cupy_array_type",
    "device_memory_bytes",
    "device_of",
    "device_properties",
    "gpu_available",
    "gpu_count",
    "is_device_array",
    "resolve_device",
    "to_host",
]
