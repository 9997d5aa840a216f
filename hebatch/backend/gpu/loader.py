"""Loading the CUDA sources of kernels/ with NVRTC through CuPy, cached per device.

Every GPU module of the backend gets its kernels here, so compile options and caching live in one
place. Sources include each other with `#include "name.cuh"`, resolved through -I<kernel_dir>.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import pathlib
import threading
from functools import lru_cache

from ..kernels import KERNEL_DEFINES

_PACKAGE = pathlib.Path(__file__).resolve().parents[2]  # hebatch/
COMPILE_OPTIONS = ("-std=c++17", "--device-int128")
_LOCK = threading.Lock()
_MODULES: dict = {}


@lru_cache(maxsize=1)
def kernel_dir() -> pathlib.Path:
    """hebatch/kernels in an installed wheel, else kernels/ at the top of a source checkout."""
    for candidate in (_PACKAGE / "kernels", _PACKAGE.parent / "kernels"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"no CUDA kernel directory next to {_PACKAGE}")


def source_digest() -> str:
    """Hash of the CUDA sources, so a cubin built from other sources is never used."""
    digest = hashlib.sha256()
    for path in sorted(kernel_dir().glob("*.cu*")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


class _Prebuilt:
    """Kernels from an nvcc-built cubin (see hebatch.ntt.prebuild), looked up by name expression."""

    def __init__(self, module, index: dict):
        self.module, self.index = module, index

    def get_function(self, name: str):
        return self.module.get_function(self.index[name])


@lru_cache(maxsize=4)
def _prebuilt(path: str, device: int):
    """The prebuilt kernels at `path`, or None (with a warning) if they were built from other sources."""
    import warnings

    import cupy

    meta = json.loads(pathlib.Path(path + ".json").read_text())
    if meta.get("sources") != source_digest():
        warnings.warn(f"{path} was built from other kernel sources; compiling at run time instead", stacklevel=3)
        return None
    return _Prebuilt(cupy.RawModule(path=path), meta["kernels"])


def shipped_cubin(arch: str) -> pathlib.Path:
    """Where a cubin prebuilt for `arch` (e.g. "sm_90") ships: kernels/prebuilt/<arch>.cubin (with its
    index <arch>.cubin.json), built by CI with `python -m hebatch.ntt.prebuild`."""
    return kernel_dir() / "prebuilt" / f"{arch}.cubin"


def prebuilt_path(device: int | None = None) -> str | None:
    """The prebuilt cubin the loader uses: HEBATCH_KERNEL_CUBIN, else the one shipped for the current
    device's architecture where present; None otherwise."""
    named = os.environ.get("HEBATCH_KERNEL_CUBIN")
    if named:
        return named
    import cupy

    arch = f"sm_{cupy.cuda.Device(device).compute_capability}"
    path = shipped_cubin(arch)
    return str(path) if path.is_file() else None


def prebuilt_status(path) -> dict:
    """What is known of a prebuilt cubin without a GPU: whether it exists, its architecture, kernel count
    and whether it was built from the current sources (the loader uses it only then)."""
    path = pathlib.Path(path)
    meta_path = pathlib.Path(str(path) + ".json")
    if not path.is_file() or not meta_path.is_file():
        return {"path": str(path), "present": False}
    meta = json.loads(meta_path.read_text())
    return {
        "path": str(path),
        "present": True,
        "arch": meta.get("arch"),
        "kernels": len(meta.get("kernels", {})),
        "matches_sources": meta.get("sources") == source_digest(),
    }


def define_options(filename: str, defines: tuple[tuple[str, str], ...] = ()) -> tuple[str, ...]:
    """The -D options of kernels/<filename>: its shared constants, then `defines`."""
    return tuple(f"-D{k}={v}" for k, v in KERNEL_DEFINES.get(filename, ()) + tuple(defines))


def load_module(filename: str, defines: tuple[tuple[str, str], ...] = (), name_expressions=None):
    """The compiled kernels of kernels/<filename> for the current device (cached), with
    get_function(name_expression).

    defines: (macro, value) pairs passed as -D options (one compiled module per distinct set), after
    the file's shared constants (KERNEL_DEFINES of hebatch/backend/kernels.py).
    name_expressions: template instantiations to compile (cupy's name_expressions). When the
    environment names a prebuilt cubin (HEBATCH_KERNEL_CUBIN), or one ships for this device's
    architecture (kernels/prebuilt/), that was built from these sources and holds them all, it is used.
    """
    import cupy

    device = cupy.cuda.Device().id
    prebuilt = prebuilt_path(device)
    if prebuilt and not defines and filename == "ntt.cu" and name_expressions:
        module = _prebuilt(prebuilt, device)
        if module is not None and all(name in module.index for name in name_expressions):
            return module
    key = (device, filename, defines, tuple(name_expressions or ()))
    with _LOCK:
        module = _MODULES.get(key)
        if module is None:
            source = (kernel_dir() / filename).read_text()
            options = COMPILE_OPTIONS + (f"-I{kernel_dir()}",) + define_options(filename, defines)
            module = cupy.RawModule(
                code=source, options=options, name_expressions=list(name_expressions) if name_expressions else None
            )
            module.compile()
            _MODULES[key] = module
    return module


@lru_cache(maxsize=1)
def _struct_argument_type():
    """A subclass of CuPy's kernel-argument pointer that holds the array it points into, or None where
    this array module has no such class (then the struct itself is passed)."""
    try:
        from cupy.cuda.function import CPointer
    except ImportError:
        return None

    class StructArgument(CPointer):
        __slots__ = ("params",)

    return StructArgument


def struct_argument(params):
    """A one-element parameter struct (hebatch.backend.kernels.pack) as a kernel argument passed by
    value. Given the structured array itself, CuPy re-reads its dtype (`__array_interface__`) at every
    launch, tens of microseconds for these structs; this points at the struct's bytes once and keeps
    them alive."""
    kind = _struct_argument_type()
    if kind is None:
        return params
    argument = kind(params.ctypes.data)
    argument.params = params
    return argument


@lru_cache(maxsize=1)
def _driver_launch():
    """(CuPy's binding of the driver's cuLaunchKernel, the current stream's handle), or None where this array
    module has no such binding."""
    try:
        import cupy
        from cupy.cuda import driver

        launch = driver.launchKernel
    except (ImportError, AttributeError):
        return None
    return launch, lambda: cupy.cuda.get_current_stream().ptr


class BoundLaunch:
    """One kernel with its grid, block, shared memory and parameter struct bound: launch(*buffers) passes the
    buffers' device pointers, then the struct, on the current stream. A CuPy kernel call re-reads every
    argument's type (7 us of host time a launch on an H100's host, 2026-11-26); here the driver's
    cuLaunchKernel gets an argument array prepared once, whose pointer slots are filled under a lock (launches
    of one bound kernel from several threads). Without CuPy's driver binding, the CuPy call."""

    __slots__ = (
        "_argv",
        "_argv_at",
        "_function",
        "_launch",
        "_lock",
        "_slots",
        "_stream",
        "_struct",
        "block",
        "grid",
        "kernel",
        "smem",
    )

    def __init__(self, kernel, grid: int, block: int, smem: int, params, buffers: int):
        self.kernel, self.grid, self.block, self.smem = kernel, grid, block, smem
        self._struct = struct_argument(params)  # keeps the struct's bytes alive
        driver = _driver_launch()
        # a RawKernel's cupy.cuda.Function on the current device (bound launches are built per device)
        self._function = getattr(getattr(kernel, "kernel", kernel), "ptr", None)
        self._launch = None
        if driver is None or self._function is None:
            return
        self._launch, self._stream = driver
        self._slots = (ctypes.c_uint64 * buffers)()
        base = ctypes.addressof(self._slots)
        entries = [base + 8 * i for i in range(buffers)] + [params.ctypes.data]
        self._argv = (ctypes.c_void_p * len(entries))(*entries)
        self._argv_at = ctypes.addressof(self._argv)
        self._lock = threading.Lock()

    def __call__(self, *buffers):
        if self._launch is None:
            self.kernel((self.grid,), (self.block,), buffers + (self._struct,), shared_mem=self.smem)
            return
        stream = self._stream()
        slots = self._slots
        with self._lock:
            for i, buffer in enumerate(buffers):
                slots[i] = buffer.data.ptr
            self._launch(self._function, self.grid, 1, 1, self.block, 1, 1, self.smem, stream, self._argv_at, 0)
