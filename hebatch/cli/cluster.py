"""`hebatch cluster` (a local Dask cluster until Ctrl-C) and `hebatch info` (devices, versions, caches)."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import pathlib
import threading

import click

import hebatch as hb

from ..backend import gpu_available
from .app import main
from .clusteropts import local_cluster
from .common import console, json_option, report


@main.command("cluster")
@click.option("--cpu", is_flag=True, help="CPU workers even where GPUs are visible")
@click.option("--workers", type=click.IntRange(1, 1024), default=None,
              help="workers (default: one per GPU, or by CPU cores)")
@click.option("--threads", type=click.IntRange(1, 1024), default=None, help="tasks each worker runs at once")
@click.option("--protocol", type=click.Choice(["tcp", "ucx", "ucxx"]), default="tcp", show_default=True,
              help="transport between workers (ucx: NVLink/InfiniBand where dask-cuda and ucx-py are installed)")
@click.option("--nvlink", is_flag=True, help="UCX over NVLink between GPUs (needs --protocol ucx or ucxx)")
@click.option("--scheduler-port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="port of the scheduler (0: any free port)")
@click.option("--dashboard", metavar="ADDR", default=":8787", show_default=True,
              help="dashboard address; 'none' for no dashboard")
@click.option("--seconds", type=click.FloatRange(0), default=None, hidden=True,
              help="stop after this many seconds instead of waiting for Ctrl-C")
@json_option
def cluster_command(cpu, workers, threads, protocol, nvlink, scheduler_port, dashboard, seconds, as_json):
    """Start a local Dask cluster (LocalCUDACluster on GPUs, else CPU workers) and wait until Ctrl-C.

    Jobs join it with --scheduler ADDR (or HEBATCH_SCHEDULER=ADDR); watch them on the dashboard.

    \b
    Examples:
      hebatch cluster                              # one worker per visible GPU
      hebatch cluster --cpu --workers 4
      hebatch cluster --protocol ucx --nvlink      # GPUs talking over NVLink
      hebatch cluster --json                       # addresses as JSON (for scripts), then wait
    """
    stop = threading.Event()
    dashboard = None if str(dashboard).lower() == "none" else dashboard
    options = {"device": "cpu" if cpu else "auto", "n_workers": workers, "threads_per_worker": threads,
               "protocol": protocol, "enable_nvlink": nvlink, "dashboard_address": dashboard,
               "scheduler_port": scheduler_port, "verbose": False}
    with local_cluster(**options) as client:
        info = client.scheduler_info(n_workers=-1)
        summary = {
            "scheduler": info["address"],
            "dashboard": client.dashboard_link if dashboard else None,
            "workers": len(info["workers"]),
            "threads": sum(w.get("nthreads", 0) for w in info["workers"].values()),
            "gpu": (not cpu) and gpu_available(),
            "protocol": protocol,
        }
        report(summary, as_json, "hebatch cluster")
        console.print(f"jobs join with: --scheduler {summary['scheduler']}   (Ctrl-C stops the cluster)",
                      highlight=False)
        try:
            stop.wait(seconds)
        except KeyboardInterrupt:
            pass
    console.print("cluster stopped", highlight=False)


def _version(name: str) -> str | None:
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


def kernel_cache() -> dict:
    """Where compiled kernels are kept: CuPy's on-disk NVRTC cache and an optional prebuilt cubin."""
    cache = pathlib.Path(os.environ.get("CUPY_CACHE_DIR", pathlib.Path.home() / ".cupy" / "kernel_cache"))
    files, size = _directory_size(cache)
    try:
        from ..backend import kernel_dir

        sources = str(kernel_dir())
    except FileNotFoundError:
        sources = None
    prebuilt = os.environ.get("HEBATCH_KERNEL_CUBIN")
    return {"kernel_sources": sources, "kernel_cache": str(cache), "kernel_cache_files": files,
            "kernel_cache_MB": round(size / 1e6, 3), "prebuilt_cubin": prebuilt}


def devices() -> list[dict]:
    """The CUDA devices CuPy sees (empty without CuPy or a GPU)."""
    if not gpu_available():
        return []
    import cupy

    found = []
    for index in range(cupy.cuda.runtime.getDeviceCount()):
        props = cupy.cuda.runtime.getDeviceProperties(index)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        found.append({"index": index, "name": name, "memory_GiB": round(props["totalGlobalMem"] / 2**30, 1),
                      "compute_capability": f"{props['major']}.{props['minor']}"})
    return found


@main.command("info")
@json_option
def info(as_json):
    """Devices, versions and kernel cache of this installation.

    \b
    Examples:
      hebatch info
      hebatch info --json | jq .devices
    """
    import platform

    gpus = devices()
    summary = {"hebatch": hb.__version__, "python": platform.python_version()}
    for name in ("numpy", "dask", "distributed", "zarr", "cupy", "dask-cuda", "bokeh"):
        summary[name] = _version(name) or "not installed"
    summary["devices"] = gpus
    summary.update(kernel_cache())
    if as_json:
        report(summary, True, "hebatch info")
        return
    shown = dict(summary)
    shown["devices"] = "; ".join(f"{g['index']}: {g['name']} ({g['memory_GiB']} GiB, sm {g['compute_capability']})"
                                 for g in gpus) or "none (CPU only: NumPy backend)"
    report(shown, False, "hebatch info")
