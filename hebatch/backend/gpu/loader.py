"""Loading the CUDA sources of kernels/ with NVRTC through CuPy, cached per device.

Every GPU module of the backend gets its kernels here, so compile options and caching live in one
place. Sources include each other with `#include "name.cuh"`, resolved through -I<kernel_dir>.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import threading
from functools import lru_cache

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


def load_module(filename: str, defines: tuple[tuple[str, str], ...] = (), name_expressions=None):
    """The compiled kernels of kernels/<filename> for the current device (cached), with
    get_function(name_expression).

    defines: (macro, value) pairs passed as -D options (one compiled module per distinct set).
    name_expressions: template instantiations to compile (cupy's name_expressions). When the
    environment names a prebuilt cubin (HEBATCH_KERNEL_CUBIN) that holds them all, it is used.
    """
    import cupy

    device = cupy.cuda.Device().id
    prebuilt = os.environ.get("HEBATCH_KERNEL_CUBIN")
    if prebuilt and not defines and filename == "ntt.cu" and name_expressions:
        module = _prebuilt(prebuilt, device)
        if module is not None and all(name in module.index for name in name_expressions):
            return module
    key = (device, filename, defines, tuple(name_expressions or ()))
    with _LOCK:
        module = _MODULES.get(key)
        if module is None:
            source = (kernel_dir() / filename).read_text()
            options = COMPILE_OPTIONS + (f"-I{kernel_dir()}",) + tuple(f"-D{k}={v}" for k, v in defines)
            module = cupy.RawModule(code=source, options=options,
                                    name_expressions=list(name_expressions) if name_expressions else None)
            module.compile()
            _MODULES[key] = module
    return module
