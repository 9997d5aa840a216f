"""Array backends: NumPy (CPU, always available) and CuPy (GPU), behind one interface."""

from __future__ import annotations

import importlib.util

from .base import Backend
from .cpu import NumpyBackend
from .cuda import kernel_dir, source_digest

_CPU = NumpyBackend()
_GPU = None


def gpu_available() -> bool:
    """True if CuPy is importable and sees at least one CUDA device."""
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no driver, no device: CuPy raises several kinds of errors
        return False


def _cupy_array_type():
    import sys

    cupy = sys.modules.get("cupy")  # an array of CuPy's can only exist if CuPy was imported
    return None if cupy is None else cupy.ndarray


def backend_for(x, name: str = "x") -> Backend:
    """The backend owning array x; TypeError for anything that is not a NumPy or CuPy array."""
    global _GPU
    if _CPU.owns(x):
        return _CPU
    cupy_array = _cupy_array_type()
    if cupy_array is not None and isinstance(x, cupy_array):
        if _GPU is None:
            from .gpu import CupyBackend

            _GPU = CupyBackend()
        return _GPU
    raise TypeError(f"{name} must be a NumPy or CuPy array, got {type(x).__module__}.{type(x).__name__}")


_FIELD_CPU = None
_FIELD_GPU = None


def field_ntt_for(x, name: str = "x"):
    """The multi-limb prime-field transform engine for x's array type: `cpu_zk.NumpyFieldNTT` for
    NumPy arrays, `gpu_zk.CupyFieldNTT` (imported on first use) for CuPy arrays. Both take
    (batch, n, limbs) uint64 arrays in standard form and offer
        forward(x, field, root, input_order, output_order)   # X[k] = sum_j x[j] root^(jk)
        inverse(y, field, root, input_order, output_order)   # its exact inverse (root^-1, times n^-1)
        scale_by_powers(x, field, base)                      # x[:, j] * base^j (coset shifts)
        twiddle_grid(x, field, root, row0, col0, row_step, col_step)  # 4-step twiddles, (rows, cols, limbs)
    with orders "natural" or "bitrev", arguments already validated (twiddle_grid serves dist.ntt_large)."""
    global _FIELD_CPU, _FIELD_GPU
    if _CPU.owns(x):
        if _FIELD_CPU is None:
            from .cpu_zk import NumpyFieldNTT

            _FIELD_CPU = NumpyFieldNTT()
        return _FIELD_CPU
    cupy_array = _cupy_array_type()
    if cupy_array is not None and isinstance(x, cupy_array):
        if _FIELD_GPU is None:
            try:
                from .gpu_zk import CupyFieldNTT
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.gpu_zk":
                    raise
                raise TypeError(f"{name}: multi-limb prime-field transforms of CuPy arrays need "
                                "hebatch/backend/gpu_zk.py, which this installation lacks") from None
            _FIELD_GPU = CupyFieldNTT()
        return _FIELD_GPU
    raise TypeError(f"{name} must be a NumPy or CuPy array, got {type(x).__module__}.{type(x).__name__}")


def cpu_backend() -> Backend:
    return _CPU


__all__ = ["Backend", "backend_for", "cpu_backend", "field_ntt_for", "gpu_available"]
