"""What `hebatch info` shows: versions, devices, kernel sources and caches of this installation."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import pathlib
import platform

import hebatch as hb

from ..device import gpu_available

PACKAGES = ("numpy", "dask", "distributed", "zarr", "cupy", "dask-cuda", "bokeh", "rich", "click")


def version(name: str) -> str | None:
    """The installed version of a distribution (or the module's __version__), None when absent."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        try:
            module = importlib.import_module(name.replace("-", "_"))
            return getattr(module, "__version__", "unknown")
        except ImportError:
            return None


def _directory_size(path: pathlib.Path) -> tuple[int, int]:
    """(files, bytes) under path."""
    files = size = 0
    if path.is_dir():
        for root, _, names in os.walk(path):
            for name in names:
                try:
                    size += os.path.getsize(os.path.join(root, name))
                    files += 1
                except OSError:
                    pass
    return files, size


def _kernel_sources() -> str | None:
    """Where the CUDA sources are (hebatch/kernels in a wheel, kernels/ in a checkout)."""
    from ..backend import kernel_dir

    try:
        return str(kernel_dir())
    except FileNotFoundError:
        return None


def prebuilt() -> dict | None:
    """The prebuilt cubin the GPU loader would use: HEBATCH_KERNEL_CUBIN, else the ones shipped in
    kernels/prebuilt/ (one per architecture), each with whether it matches the current sources."""
    from ..backend import kernel_dir, prebuilt_status

    named = os.environ.get("HEBATCH_KERNEL_CUBIN")
    if named:
        return {"source": "HEBATCH_KERNEL_CUBIN", **prebuilt_status(named)}
    try:
        shipped = sorted((kernel_dir() / "prebuilt").glob("*.cubin"))
    except FileNotFoundError:
        return None
    if not shipped:
        return None
    return {"source": "shipped", "cubins": [prebuilt_status(path) for path in shipped]}


def kernel_cache() -> dict:
    """Where compiled kernels are kept: CuPy's on-disk NVRTC cache (filled by `hebatch warmup` or first
    use) and a prebuilt cubin (see prebuilt())."""
    cache = pathlib.Path(os.environ.get("CUPY_CACHE_DIR", pathlib.Path.home() / ".cupy" / "kernel_cache"))
    files, size = _directory_size(cache)
    return {
        "kernel_sources": _kernel_sources(),
        "kernel_cache": str(cache),
        "kernel_cache_files": files,
        "kernel_cache_MB": round(size / 1e6, 3),
        "prebuilt_cubin": prebuilt(),
        "kernels_ready": "prebuilt cubin"
        if _usable(prebuilt())
        else ("warm cache" if files else "compiled on first use (run `hebatch warmup` once)"),
    }


def _usable(found) -> bool:
    if not found:
        return False
    entries = found.get("cubins") or [found]
    return any(e.get("present") and e.get("matches_sources") for e in entries)


def table_cache() -> dict:
    """The backend's device-table cache per device: entries, bytes, budget."""
    from ..backend import cache_stats

    return dict(cache_stats())


def devices() -> list[dict]:
    """The CUDA devices CuPy sees (empty without CuPy or a GPU)."""
    if not gpu_available():
        return []
    import cupy

    found = []
    for index in range(cupy.cuda.runtime.getDeviceCount()):
        props = cupy.cuda.runtime.getDeviceProperties(index)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        found.append(
            {
                "index": index,
                "name": name,
                "memory_GiB": round(props["totalGlobalMem"] / 2**30, 1),
                "compute_capability": f"{props['major']}.{props['minor']}",
                "multiprocessors": int(props["multiProcessorCount"]),
            }
        )
    return found


def info() -> dict:
    """Versions, devices, kernel sources and caches, as one dict."""
    summary = {"hebatch": hb.__version__, "python": platform.python_version()}
    for name in PACKAGES:
        summary[name] = version(name) or "not installed"
    summary["devices"] = devices()
    summary.update(kernel_cache())
    summary["table_cache"] = table_cache()
    return summary
