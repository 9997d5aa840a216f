"""Loading the CUDA sources of kernels/ with NVRTC through CuPy, cached per device.

Every GPU module of the backend gets its kernels here, so compile options and caching live in one
place. Sources include each other with `#include "name.cuh"`, resolved through -I<kernel_dir>.
"""

from __future__ import annotations

import pathlib
import threading
from functools import lru_cache

_PACKAGE = pathlib.Path(__file__).resolve().parent.parent
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


def load_module(filename: str, defines: tuple[tuple[str, str], ...] = (), name_expressions=None):
    """The compiled cupy.RawModule of kernels/<filename> for the current device (cached).

    defines: (macro, value) pairs passed as -D options (one compiled module per distinct set).
    name_expressions: template instantiations to compile (cupy's name_expressions).
    """
    import cupy

    device = cupy.cuda.Device().id
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
