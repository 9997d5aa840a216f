"""The demo (`hebatch demo`, `make demo`, the README's first command): the main batch job end to end.

A local Dask cluster (GPU workers where GPUs are visible, else CPU workers) creates a Zarr dataset of
random RNS polynomials, transforms it chunk by chunk (negacyclic NTTs) into another Zarr store with a
progress bar, and a Dask performance report of the whole run is written beside it. Sample rows are then
checked exactly against a Python-int oracle (direct evaluation of the definition at random points) and
against the CPU engine, and the throughput is shown beside this machine's own copy bandwidth measured
in the same run.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import time

import numpy as np

from ..device import resolve_device
from ..field import default_root
from .report import Timer, status

REPORT = "performance-report.html"
# Sizes: a few seconds of work on a GPU, well under a minute (cluster start included) on two CPU cores.
SIZES = {"gpu": {"batch": 2048, "chunk": 256}, "cpu": {"batch": 256, "chunk": 32}}


def copy_bandwidth(nbytes: int, where: str, repeats: int = 5) -> dict:
    """GB/s of a memcpy of `nbytes` bytes on this machine (read + write counted, median of `repeats`):
    host memory always, and device-to-device on a GPU."""

    def median_seconds(copy, sync=lambda: None):
        copy()  # first touch: pages mapped, pool warm
        sync()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            copy()
            sync()
            times.append(time.perf_counter() - start)
        return float(np.median(times))

    words = max(1, nbytes // 8)
    src = np.random.default_rng().integers(0, 2**63, size=words, dtype=np.uint64)
    dst = np.empty_like(src)
    found = {"host_copy_GBps": 2 * src.nbytes / median_seconds(lambda: np.copyto(dst, src)) / 1e9}
    if where == "gpu":
        import cupy

        dsrc = cupy.asarray(src)
        ddst = cupy.empty_like(dsrc)
        stream = cupy.cuda.get_current_stream()
        found["device_copy_GBps"] = (
            2 * dsrc.nbytes / median_seconds(lambda: ddst.__setitem__(Ellipsis, dsrc), stream.synchronize) / 1e9
        )
    return found


def oracle_points(x_row, y_row, moduli, points: int, rng) -> int:
    """How many of `points` random (limb, k) entries of y_row differ from the definition evaluated with
    Python ints: y[l, k] = sum_j x[l, j] psi_l^(j (2k + 1)) mod q_l (psi_l the default 2n-th root)."""
    limbs, n = x_row.shape
    wrong = 0
    for _ in range(points):
        limb, k = int(rng.integers(limbs)), int(rng.integers(n))
        q = int(moduli[limb])
        point = pow(default_root(q, n, True), 2 * k + 1, q)
        acc = 0
        for c in reversed(x_row[limb].tolist()):  # Horner's rule, exact
            acc = (acc * point + int(c)) % q
        wrong += int(acc != int(y_row[limb, k]))
    return wrong


def demo(
    *,
    out_dir="results/demo",
    batch=None,
    log_n=12,
    limbs=4,
    chunk=None,
    workers=None,
    device="auto",
    threads_only=False,
    dashboard=":8787",
    sample_rows=2,
    points=8,
    seed=None,
) -> dict:
    """Run the demo batch job; its summary (also in out_dir/summary.json). Any earlier demo output in
    out_dir is replaced. Raises ArithmeticError (summary in args[1]) when a check finds a wrong value."""
    import hebatch as hb

    from .cluster import job_cluster, worker_count
    from .ntt import batch_ntt, check_rows, make_demo_dataset
    from .report import write_json

    where = resolve_device(device, "--device")
    if threads_only and where == "gpu":
        raise ValueError("--threads-only starts CPU workers: use --device cpu with it, or drop --threads-only")
    size = SIZES[where]
    batch = size["batch"] if batch is None else batch
    chunk = min(size["chunk"] if chunk is None else chunk, batch)
    for value, name in ((batch, "--batch"), (chunk, "--chunk"), (limbs, "--limbs"), (sample_rows, "--sample-rows")):
        if not isinstance(value, int) or isinstance(value, bool) or value < (0 if name == "--sample-rows" else 1):
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    out = pathlib.Path(out_dir)
    if out.exists():
        if not (out / "summary.json").exists() and any(out.iterdir()):
            raise ValueError(
                f"--out {os.fspath(out)!r} holds files that are not a demo's output: choose an empty or new folder"
            )
        shutil.rmtree(out)
    out.mkdir(parents=True)
    in_path, out_path, report = out / "input.zarr", out / "ntt.zarr", out / REPORT
    status(
        f"demo: {batch} random polynomials of {limbs} RNS limbs x 2^{log_n} coefficients, "
        f"negacyclic NTT on a local Dask cluster of {where.upper()} workers -> {out}"
    )
    with job_cluster(None, workers, where, threads_only, dashboard, report_path=report) as client:
        n_workers = worker_count(client)
        link = client.dashboard_link if dashboard and str(dashboard).lower() != "none" else None
        with Timer() as total:
            created = make_demo_dataset(in_path, batch=batch, log_n=log_n, limbs=limbs, bits=60, chunk=chunk, seed=seed)
            moduli = tuple(int(q) for q in created["moduli"])
            summary = batch_ntt(in_path, out_path, moduli, negacyclic=True, chunk=chunk, device=where, progress=True)
    nbytes = batch * limbs * (1 << log_n) * 8
    status("checking sample rows exactly, and measuring this machine's copy bandwidth ...")
    rng = np.random.default_rng(seed)
    rows_wrong = check_rows(in_path, out_path, moduli, negacyclic=True, inverse=False, rows=sample_rows, seed=seed)
    import zarr

    x_store = zarr.open_group(os.fspath(in_path), mode="r")["data"]
    y_store = zarr.open_group(os.fspath(out_path), mode="r")["data"]
    points_wrong = 0
    for _ in range(sample_rows):
        i = int(rng.integers(batch))
        points_wrong += oracle_points(np.asarray(x_store[i]), np.asarray(y_store[i]), moduli, points, rng)
    copies = copy_bandwidth(min(nbytes, 1 << 28), where)
    copy_key = "device_copy_GBps" if where == "gpu" else "host_copy_GBps"
    throughput = summary["throughput_GBps"]
    result = {
        "device": where,
        "workers": n_workers,
        "dashboard": link,
        "shape": summary["shape"],
        "moduli": list(moduli),
        "input": os.fspath(in_path),
        "output": os.fspath(out_path),
        "performance_report": os.fspath(report),
        "transform_seconds": summary["seconds"],
        "job_seconds": total.seconds,
        "throughput_GBps": throughput,
        **copies,
        "fraction_of_copy_bandwidth": throughput / copies[copy_key] if copies[copy_key] else 0.0,
        "rows_checked": sample_rows,
        "rows_wrong": rows_wrong,
        "oracle_points_checked": sample_rows * points,
        "oracle_points_wrong": points_wrong,
        "hebatch": hb.__version__,
    }
    write_json(out / "summary.json", result)
    if rows_wrong or points_wrong:
        raise ArithmeticError(
            f"{rows_wrong} sample rows and {points_wrong} oracle points are wrong: the transform is "
            "broken on this machine; rerun with --device cpu to compare, and report it with "
            f"{os.fspath(out / 'summary.json')}",
            result,
        )
    return result
