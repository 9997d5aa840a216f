"""The scripted batch jobs of `workflows/*.toml`: what each kind reads, runs and writes.

Every job runs on the Dask cluster of its run (`run_workflow` starts or joins it) and writes into its
output directory: its results, `summary.json` and `performance-report.html` (Dask's performance
report of the run). A rerun after an interruption resumes: Zarr outputs chunk by chunk (finished
chunks are kept), the zk job size by size (finished sizes are kept in results.json).
"""

from __future__ import annotations

import json
import os
import pathlib
import time

import dask.array as da
import numpy as np
from dask.delayed import delayed

import hebatch as hb

from .. import distributed as dist
from ..distributed.worker import to_host as host_array
from ..distributed.worker import worker_has_gpu
from .common import console, parse_modulus, status
from .io import open_batch, write_batch

# -- batch NTT over a Zarr dataset ---------------------------------------------------------------------

BATCH_DEFAULTS = {
    "input": {"path": "data/batch-ntt-input.zarr", "create_demo": True, "batch": 256, "log_n": 12, "limbs": 4,
              "bits": 60, "chunk": 32, "seed": None},
    "transform": {"moduli": None, "negacyclic": True, "inverse": False, "algorithm": "auto", "chunk": None,
                  "check_rows": 2},
}


def _random_rows(rows: int, moduli: tuple[int, ...], n: int, seed: int, dtype: str):
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, q, size=(rows, n), dtype=np.uint64) for q in moduli], axis=1).astype(dtype)


def make_demo_dataset(path, *, batch: int, log_n: int, limbs: int, bits: int, chunk: int, seed=None) -> dict:
    """A Zarr dataset of `batch` random RNS polynomials (batch, limbs, 2^log_n) with its moduli in the
    group's attributes, written chunk by chunk on the cluster (each task draws its own rows)."""
    n = 1 << log_n
    moduli = tuple(hb.ntt_primes(bits, n, limbs))
    dtype = "uint32" if bits <= 32 else "uint64"
    seed = int(np.random.default_rng(seed).integers(2**62))
    bounds = list(range(0, batch, chunk)) + [batch]
    parts = [da.from_delayed(delayed(_random_rows, pure=True)(b - a, moduli, n, seed + i, dtype),
                             shape=(b - a, limbs, n), dtype=dtype, meta=np.empty((0, 0, 0), dtype=dtype))
             for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]
    write_batch(da.concatenate(parts, axis=0), path, progress=True, console=console, name="input.path")
    import zarr

    zarr.open_group(os.fspath(path), mode="a").attrs["moduli"] = [str(q) for q in moduli]
    return {"path": os.fspath(path), "shape": [batch, limbs, n], "moduli": list(moduli)}


def dataset_moduli(path) -> tuple[int, ...] | None:
    """The moduli a demo dataset records in its attributes, or None."""
    import zarr

    try:
        found = zarr.open_group(os.fspath(path), mode="r").attrs.get("moduli")
    except Exception:  # a plain array or no group: no recorded moduli
        return None
    return tuple(int(q) for q in found) if found else None


def check_rows(in_path, out_path, moduli, *, negacyclic, inverse, rows: int, seed=None) -> int:
    """Recompute `rows` random rows of the output with hb.ntt on this machine; the count that differ."""
    if rows <= 0:
        return 0
    x, y = open_batch(in_path), open_batch(out_path, name="output")
    picks = sorted({int(i) for i in np.random.default_rng(seed).integers(0, x.shape[0], size=rows)})
    wrong = 0
    for i in picks:
        expected = hb.ntt(np.asarray(x[i:i + 1].compute()), moduli, negacyclic=negacyclic, inverse=inverse)
        wrong += int(not np.array_equal(expected, np.asarray(y[i:i + 1].compute())))
    return wrong


def batch_ntt_job(config: dict, out_dir: pathlib.Path, device: str) -> dict:
    from .ntt import batch_ntt

    source, transform = config["input"], config["transform"]
    in_path = pathlib.Path(source["path"])
    created = None
    if not in_path.exists():
        if not source["create_demo"]:
            raise FileNotFoundError(f"input.path {os.fspath(in_path)!r} does not exist (set input.create_demo = true "
                                    "to create a demo dataset there)")
        status(f"creating the demo dataset {in_path}")
        created = make_demo_dataset(in_path, batch=source["batch"], log_n=source["log_n"], limbs=source["limbs"],
                                    bits=source["bits"], chunk=source["chunk"], seed=source["seed"])
    if transform["moduli"] is not None:
        moduli = _moduli_setting(transform["moduli"])
    else:
        moduli = dataset_moduli(in_path)
        if moduli is None:
            raise ValueError(f"transform.moduli is not set and {os.fspath(in_path)!r} records no moduli")
        moduli = moduli if len(moduli) > 1 else moduli[0]
    summary = batch_ntt(in_path, out_dir / "ntt.zarr", moduli, negacyclic=transform["negacyclic"],
                        inverse=transform["inverse"], algorithm=transform["algorithm"], chunk=transform["chunk"],
                        device=device, progress=True)
    summary["rows_checked"] = transform["check_rows"]
    summary["rows_wrong"] = check_rows(in_path, out_dir / "ntt.zarr", moduli, negacyclic=transform["negacyclic"],
                                       inverse=transform["inverse"], rows=transform["check_rows"])
    summary["created_input"] = created is not None
    if summary["rows_wrong"]:
        raise RuntimeError(f"{summary['rows_wrong']} of the checked output rows differ from hb.ntt")
    return summary


def _moduli_setting(value):
    if isinstance(value, (list, tuple)):
        moduli = tuple(parse_modulus(str(v)) for v in value)
        return moduli if len(moduli) > 1 else moduli[0]
    return parse_modulus(str(value))


# -- zk NTTs of 2^20 .. 2^28 points --------------------------------------------------------------------

ZK_DEFAULTS = {
    "zk": {"field": "goldilocks", "log_n": [20, 21, 22], "inverse": False, "coset": False, "verify_points": 2,
           "workers": 0,
           "seed": None},
}


def zk_case(field_name: str, log_n: int, inverse: bool, points: int, seed, device: str, coset: bool = False) -> dict:
    """One timed transform of 2^log_n random elements with its exact checks (runs on a worker)."""
    from .zk import time_transform, random_elements, resolve_field

    field = resolve_field(field_name)
    rng = np.random.default_rng(seed)
    x = random_elements(field, 1 << log_n, rng)
    use_gpu = device != "cpu" and worker_has_gpu()
    if device == "gpu" and not use_gpu:
        raise RuntimeError("cluster.device = 'gpu' but the worker sees no CUDA GPU with CuPy")
    y, seconds = time_transform(x, field, inverse, use_gpu, 1, coset)  # the same timing as `hebatch zk-ntt`
    return _zk_record(x, y, field, log_n, inverse, points, rng, seconds, "gpu" if use_gpu else "cpu", coset)


def _zk_record(x, y, field, log_n, inverse, points, rng, seconds, where, coset=False) -> dict:
    from .zk import run_transform, check_points

    wrong = check_points(x, y, field, inverse=inverse, points=points, rng=rng, coset=coset) if points else []
    round_trip = bool(np.array_equal(run_transform(y, field, not inverse, coset), x)) if points else None
    return {"log_n": log_n, "field": field.name, "inverse": inverse, "coset": coset, "seconds": seconds,
            "device": where,
            "GBps": x.nbytes / seconds / 1e9 if seconds > 0 else 0.0, "points_checked": points,
            "points_wrong": len(wrong), "round_trip_exact": round_trip}


def zk_ntt_job(config: dict, out_dir: pathlib.Path, device: str, client) -> dict:
    from .zk import resolve_field

    settings = config["zk"]
    field = resolve_field(str(settings["field"]))
    sizes = settings["log_n"]
    sizes = [sizes] if isinstance(sizes, int) else list(sizes)
    for log_n in sizes:
        if not isinstance(log_n, int) or not 1 <= log_n <= 28:
            raise ValueError(f"zk.log_n must hold ints in 1..28, got {log_n!r}")
        if (field.modulus - 1) % (1 << log_n):
            raise ValueError(f"zk.log_n {log_n}: the field {field.name} has no root of unity of order 2^{log_n}")
    results_path = out_dir / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else []
    coset = bool(settings["coset"])
    done = {(r["field"], r["log_n"], r["inverse"], r.get("coset", False)) for r in results}
    skipped = 0
    workers = int(settings["workers"] or 0)
    if coset and workers >= 2:
        raise ValueError("zk.coset runs on one device: set zk.workers = 0")
    for log_n in sizes:
        if (field.name, log_n, settings["inverse"], coset) in done:
            skipped += 1
            status(f"2^{log_n}: already in {results_path} (resumed)")
            continue
        status(f"2^{log_n} over {field.name} ...")
        seed = None if settings["seed"] is None else int(settings["seed"]) + log_n
        if workers >= 2:
            record = _zk_spread(field, log_n, settings["inverse"], int(settings["verify_points"]), seed, device,
                                workers)
        else:
            future = client.submit(zk_case, field.name, log_n, bool(settings["inverse"]),
                                   int(settings["verify_points"]), seed, device, coset,
                                   key=f"zk_ntt_2^{log_n}-{time.time_ns()}",
                                   pure=False)
            record = future.result()
        results.append(record)
        write_json(results_path, results)  # after each size: an interrupted run keeps what finished
        if record["points_wrong"] or record["round_trip_exact"] is False:
            raise RuntimeError(f"zk NTT of 2^{log_n} over {field.name} failed verification")
    return {"field": field.name, "sizes": sizes, "computed": len(sizes) - skipped, "resumed": skipped,
            "results": os.fspath(results_path),
            "seconds": {str(r["log_n"]): r["seconds"] for r in results if r["field"] == field.name}}


def _zk_spread(field, log_n, inverse, points, seed, device, workers) -> dict:
    from .zk import random_elements

    rng = np.random.default_rng(seed)
    x = random_elements(field, 1 << log_n, rng)
    start = time.perf_counter()
    y = host_array(dist.ntt_large(x, field.argument, workers=workers, inverse=inverse, device=device))
    seconds = time.perf_counter() - start
    record = _zk_record(x, y, field, log_n, inverse, points, rng, seconds, f"{workers} workers")
    return record


# -- encrypted analytics with BFV ----------------------------------------------------------------------

BFV_DEFAULTS = {
    "bfv": {"preset": "n4096", "records": 256, "features": 8, "max_value": 15, "square": False, "mul_const": None,
            "add_const": None,
            "poly": None, "dot_with": None, "chunk": 32, "seed": None, "records_path": None},
}


def bfv_job(config: dict, out_dir: pathlib.Path, device: str) -> dict:
    from . import bfv as bfv_cli

    return bfv_cli.analytics_job(config["bfv"], out_dir, device)


# -- shared ---------------------------------------------------------------------------------------------

KINDS = {"batch-ntt": BATCH_DEFAULTS, "zk-ntt": ZK_DEFAULTS, "bfv-analytics": BFV_DEFAULTS}


def write_json(path: pathlib.Path, value) -> None:
    """Write JSON atomically (a reader never sees half a file, even after a crash)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(value, indent=2, default=str) + "\n")
    os.replace(tmp, path)
