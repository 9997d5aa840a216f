"""Backends: NumPy (cpu/, the exact reference, always available) and CuPy (gpu/), each offering the
three engines of `interface.py`. `get` is the one way in:

    get(x).ntt       # WordNTT of the device that array x lives on
    get("gpu").rns   # RnsOps of a device word ("auto", "cpu", "gpu"; see hebatch.device)
    get(x).ntt256    # FieldNTT (256-bit prime fields)

GPU engines are imported on first use, so CPU-only machines never import CuPy.
"""

from __future__ import annotations

from ..device import DEVICES, device_of, gpu_available, gpu_count, resolve_device
from .cache import TABLES
from .gpu.loader import define_options, kernel_dir, prebuilt_status, shipped_cubin, source_digest
from .interface import FieldNTT, RnsOps, WordNTT
from .kernels import LANE_MODES, MAX_THREADS, MODCONST_DTYPE, NTT256_LOG_BLOCK, TABLE_MODES, WORD_BITS, arith_name

# (device, engine) -> module and class of its implementation, one file per kernel it drives
_IMPLEMENTATIONS = {
    ("cpu", "ntt"): ("cpu.ntt", "NumpyBackend"),
    ("cpu", "rns"): ("cpu.rns", "NumpyRnsOps"),
    ("cpu", "ntt256"): ("cpu.ntt256", "NumpyFieldNTT"),
    ("gpu", "ntt"): ("gpu.ntt", "CupyBackend"),
    ("gpu", "rns"): ("gpu.rns", "CupyRnsOps"),
    ("gpu", "ntt256"): ("gpu.ntt256", "CupyFieldNTT"),
}


class Engines:
    """The engines of one device ("cpu" or "gpu"), each built on first use and kept."""

    def __init__(self, device: str):
        self.device = device
        self._built: dict = {}

    def _engine(self, kind: str):
        engine = self._built.get(kind)
        if engine is None:
            import importlib

            module, cls = _IMPLEMENTATIONS[(self.device, kind)]
            engine = self._built[kind] = getattr(importlib.import_module(f"{__name__}.{module}"), cls)()
        return engine

    @property
    def ntt(self) -> WordNTT:
        return self._engine("ntt")

    @property
    def rns(self) -> RnsOps:
        return self._engine("rns")

    @property
    def ntt256(self) -> FieldNTT:
        return self._engine("ntt256")

    def __repr__(self):
        return f"<hebatch.backend engines of {self.device}>"


_ENGINES = {device: Engines(device) for device in ("cpu", "gpu")}


def get(where="auto", name: str = "x") -> Engines:
    """The engines of a device: `where` is a NumPy or CuPy array (the device it lives on), a device
    word of hebatch.device ("auto", "cpu", "gpu"; "gpu" without one is a ValueError), or the array
    module numpy / cupy. TypeError names `name` for anything else."""
    if isinstance(where, str):
        if where not in DEVICES:
            raise ValueError(f"{name} must be an array or one of {', '.join(map(repr, DEVICES))}, got {where!r}")
        return _ENGINES[resolve_device(where, name)]
    module = getattr(where, "__name__", None)
    if module in ("numpy", "cupy"):
        return _ENGINES["cpu" if module == "numpy" else "gpu"]
    return _ENGINES[device_of(where, name)]


def cache_stats() -> dict:
    """The device-table cache of the GPU engines: {device index: {"entries", "bytes", "budget_bytes"}}
    for every visible GPU (and any device it holds tables of)."""
    stats = TABLES.stats()
    for index in range(gpu_count()):
        stats.setdefault(index, {"entries": 0, "bytes": 0, "budget_bytes": TABLES.budget(index)})
    return dict(sorted(stats.items()))


__all__ = [
    "Engines",
    "FieldNTT",
    "LANE_MODES",
    "MAX_THREADS",
    "MODCONST_DTYPE",
    "NTT256_LOG_BLOCK",
    "RnsOps",
    "TABLE_MODES",
    "WORD_BITS",
    "WordNTT",
    "arith_name",
    "cache_stats",
    "define_options",
    "get",
    "gpu_available",
    "kernel_dir",
    "prebuilt_status",
    "shipped_cubin",
    "source_digest",
]
