"""Batch NTT jobs: a batch from a Zarr store or .npy file to another, on the active Dask cluster;
demo datasets; exact checks of sample rows."""

from __future__ import annotations

import os

import dask.array as da
import numpy as np
from dask.delayed import delayed

import hebatch as hb

from .. import distributed as dist
from ..field import NAMED_FIELDS
from ..ntt.plan import ALGORITHMS  # noqa: F401  (the --algorithm choices)
from ..ntt.validate import check_transform_args
from .io import check_separate, kind_of, open_batch, peek, write_batch
from .report import Timer, console

# The one-word named fields (goldilocks, babybear) by name, from hebatch.field's table
NAMED_MODULI = {name: f.p for name, f in NAMED_FIELDS.items() if f.limbs == 1}


def parse_modulus(text, name: str = "--modulus") -> int | tuple[int, ...]:
    """An int (decimal or 0x hex), a named field, or a comma list of them (RNS limbs); ValueError naming
    the option otherwise."""
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or any(not p for p in parts):
        raise ValueError(f"{name}: expected an int, a field name or a comma list of them, got {text!r}")
    moduli = []
    for part in parts:
        key = part.lower().replace("_", "-")
        if key in NAMED_MODULI:
            moduli.append(NAMED_MODULI[key])
            continue
        try:
            moduli.append(int(part, 0))
        except ValueError:
            raise ValueError(f"{name}: {part!r} is neither an int nor one of {', '.join(NAMED_MODULI)}") from None
    return moduli[0] if len(moduli) == 1 else tuple(moduli)


def check_batch_ntt(in_path, out_path, modulus, *, negacyclic=False, algorithm="auto", component=None) -> None:
    """Every check of a batch NTT that needs no data and no cluster (run before one starts)."""
    kind_of(out_path, "OUT")
    check_separate(in_path, out_path)
    shape, dtype = peek(in_path, component=component, name="IN")
    check_transform_args(shape, dtype, modulus, negacyclic=negacyclic, algorithm=algorithm, name="IN")


def batch_ntt(
    in_path,
    out_path,
    modulus,
    *,
    negacyclic=False,
    inverse=False,
    algorithm="auto",
    chunk=None,
    component=None,
    overwrite=False,
    device="auto",
    progress=True,
    overwrite_hint="--overwrite",
) -> dict:
    """Transform the batch at in_path into out_path on the active cluster; a summary of the run.

    A Zarr output that an interrupted run of the same job (input, moduli, direction) left unfinished
    is resumed: only missing or damaged chunks are computed. One made by another job is refused with
    a ValueError naming the differences and `overwrite_hint`, unless overwrite.
    """
    x = open_batch(in_path, component=component, chunks=chunk, name="IN")
    y = dist.ntt(x, modulus, negacyclic=negacyclic, inverse=inverse, algorithm=algorithm, device=device)
    with Timer() as timer:
        written = write_batch(
            y,
            out_path,
            overwrite=overwrite,
            progress=progress,
            console=console,
            name="OUT",
            overwrite_hint=overwrite_hint,
        )
    total, done = written["chunks_total"], written["chunks_written"]
    fraction = done / total if total else 0.0
    computed_bytes = x.nbytes * fraction
    return {
        "input": os.fspath(in_path),
        "output": os.fspath(out_path),
        "shape": list(x.shape),
        "dtype": str(x.dtype),
        "modulus": list(modulus) if isinstance(modulus, tuple) else modulus,
        "negacyclic": negacyclic,
        "inverse": inverse,
        "elements": int(x.size),
        "chunks_total": total,
        "chunks_written": done,
        "resumed": done < total,
        "seconds": timer.seconds,
        "throughput_GBps": computed_bytes / timer.seconds / 1e9 if timer.seconds > 0 and done else 0.0,
    }


def _random_rows(rows: int, moduli: tuple[int, ...], n: int, seed: int, dtype: str):
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, q, size=(rows, n), dtype=np.uint64) for q in moduli], axis=1).astype(dtype)


def make_demo_dataset(path, *, batch: int, log_n: int, limbs: int, bits: int, chunk: int, seed=None) -> dict:
    """A Zarr dataset of `batch` random RNS polynomials (batch, limbs, 2^log_n) with its moduli in the
    group's attributes, written chunk by chunk on the cluster (each task draws its own rows)."""
    import zarr

    n = 1 << log_n
    moduli = tuple(hb.ntt_primes(bits, n, limbs))
    dtype = "uint32" if bits <= 32 else "uint64"
    seed = int(np.random.default_rng(seed).integers(2**62))
    bounds = list(range(0, batch, chunk)) + [batch]
    parts = [
        da.from_delayed(
            delayed(_random_rows, pure=True)(b - a, moduli, n, seed + i, dtype),
            shape=(b - a, limbs, n),
            dtype=dtype,
            meta=np.empty((0, 0, 0), dtype=dtype),
        )
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))
    ]
    write_batch(da.concatenate(parts, axis=0), path, progress=True, console=console, name="input.path")
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
        expected = hb.ntt(np.asarray(x[i : i + 1].compute()), moduli, negacyclic=negacyclic, inverse=inverse)
        wrong += int(not np.array_equal(expected, np.asarray(y[i : i + 1].compute())))
    return wrong


def run_batch_ntt(
    in_path,
    out_path,
    modulus,
    *,
    negacyclic=False,
    inverse=False,
    algorithm="auto",
    chunk=None,
    component=None,
    overwrite=False,
    progress=True,
    cluster: dict | None = None,
) -> dict:
    """batch_ntt on the cluster `cluster` describes (job_cluster's options); every check that needs no
    data runs before the cluster starts."""
    from .cluster import job_cluster, worker_count

    cluster = dict(cluster or {})
    check_batch_ntt(in_path, out_path, modulus, negacyclic=negacyclic, algorithm=algorithm, component=component)
    with job_cluster(**cluster) as client:
        summary = batch_ntt(
            in_path,
            out_path,
            modulus,
            negacyclic=negacyclic,
            inverse=inverse,
            algorithm=algorithm,
            chunk=chunk,
            component=component,
            overwrite=overwrite,
            device=cluster.get("device", "auto"),
            progress=progress,
        )
        summary["workers"] = worker_count(client)
    return summary
