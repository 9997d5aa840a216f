"""Reading and writing batches for commands and workflows: Zarr stores and .npy files, by suffix."""

from __future__ import annotations

import os
import pathlib

import dask.array as da
import numpy as np
from dask.delayed import delayed

from .. import distributed as dist
from ..distributed.provenance import record as record_source

FORMATS = (".zarr", ".npy")


def kind_of(path, name: str) -> str:
    """'zarr' or 'npy' from the suffix of path; ValueError naming the argument otherwise."""
    suffix = pathlib.Path(os.fspath(path).rstrip("/")).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{name} {os.fspath(path)!r} must end in .zarr or .npy")
    return suffix[1:]


def peek(path, *, component=None, name: str = "IN") -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of the batch at path, read from its header only (no cluster, no data)."""
    kind = kind_of(path, name)
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{name} {path!r} does not exist")
    if kind == "npy":
        header = _load_npy(path, name)
        return tuple(header.shape), header.dtype
    import zarr

    try:
        node = zarr.open(store=path, mode="r")
    except (FileNotFoundError, ValueError, KeyError) as error:
        raise ValueError(f"{name} {path!r} is not a Zarr array or group ({error})") from None
    if isinstance(node, zarr.Array):
        return tuple(node.shape), node.dtype
    array_name = component or "data"
    if array_name not in set(node.array_keys()):
        raise ValueError(f"{name} {path!r} has no array {array_name!r}")
    return tuple(node[array_name].shape), node[array_name].dtype


def _load_npy(path: str, name: str):
    """The header (memory-mapped array) of a .npy file; ValueError naming the argument if it is none."""
    try:
        return np.load(path, mmap_mode="r")
    except ValueError as error:
        raise ValueError(f"{name} {path!r} is not a .npy file of numbers ({error})") from None


def _npy_rows(path: str, start: int, stop: int):
    """Rows start:stop of a .npy file, read where the task runs (memory-mapped, so only those rows)."""
    return np.array(np.load(path, mmap_mode="r")[start:stop])


def open_batch(path, *, component=None, chunks=None, name: str = "IN") -> da.Array:
    """A batch (axis 0) in a Zarr store or a .npy file as a Dask array chunked along axis 0.

    .npy files are read chunk by chunk by the tasks themselves, so the file never passes through
    this process. chunks: rows per chunk, or None (sized from worker memory).
    """
    kind = kind_of(path, name)
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{name} {path!r} does not exist")
    if kind == "zarr":
        return dist.from_zarr(path, component, chunks=chunks)
    if component is not None:
        raise ValueError(f"--component only applies to Zarr input, not to {path!r}")
    header = _load_npy(path, name)
    if header.ndim < 1:
        raise ValueError(f"{name} {path!r} holds a 0-d array: a batch needs a batch axis")
    lengths = dist.batch_chunks(header.shape, header.dtype, chunks)
    bounds = np.cumsum((0,) + tuple(lengths))
    meta = np.empty((0,) * header.ndim, dtype=header.dtype)
    parts = [
        da.from_delayed(
            delayed(_npy_rows, pure=True)(os.path.abspath(path), int(a), int(b)),
            shape=(int(b - a),) + header.shape[1:],
            dtype=header.dtype,
            meta=meta,
        )
        for a, b in zip(bounds[:-1], bounds[1:])
    ]
    batch = da.concatenate(parts, axis=0) if parts else da.from_array(np.asarray(header[:0]))
    # the file's identity, for the record of what an output was made from: a rewritten file differs
    stat = os.stat(path)
    return record_source(
        batch,
        {
            "source": "npy",
            "path": os.path.abspath(path),
            "shape": list(header.shape),
            "dtype": str(header.dtype),
            "bytes": stat.st_size,
            "modified_ns": stat.st_mtime_ns,
        },
    )


def write_batch(
    y: da.Array,
    path,
    *,
    component: str = "data",
    overwrite: bool = False,
    progress: bool = True,
    console=None,
    name: str = "OUT",
    provenance: dict | None = None,
    overwrite_hint: str = "--overwrite",
) -> dict:
    """Compute y into a Zarr store (chunk by chunk; a rerun resumes) or a .npy file (at the end).

    Returns {"chunks_total", "chunks_written"}: a resumed Zarr output writes only what was missing.
    A Zarr output records what made it (y's description, or `provenance`); one made by another job
    is refused (ValueError naming the differences and `overwrite_hint`) unless overwrite.
    """
    kind = kind_of(path, name)
    path = os.fspath(path)
    if kind == "zarr":
        try:
            jobs = dist.to_zarr(y, path, component, overwrite=overwrite, compute=False, provenance=provenance)
        except ValueError as error:  # the option that replaces the store, in the caller's words
            raise ValueError(f"{name} {str(error).replace('pass overwrite=True', f'pass {overwrite_hint}')}") from None
        if jobs:
            dist.run(jobs, progress=progress, fail_fast=False, console=console)
        written = len(jobs)
        # the store's chunk count: to_zarr makes irregular chunks regular, so y's count may differ
        return {"chunks_total": dist.zarr_status(path, component)[1], "chunks_written": written}
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{name} {path!r} exists; pass --overwrite to replace it")
    np.save(path, dist.run(dist.to_host(y), progress=progress, console=console))
    total = len(y.chunks[0]) if y.shape[0] else 0
    return {"chunks_total": total, "chunks_written": total}


def check_separate(in_path, out_path, in_name: str = "IN", out_name: str = "OUT") -> None:
    """ValueError when the output is the input or lies inside it (or the other way round): writing it
    would destroy the data being read, --overwrite or not."""
    source, target = pathlib.Path(in_path).resolve(), pathlib.Path(out_path).resolve()
    if source == target or source in target.parents or target in source.parents:
        raise ValueError(
            f"{out_name} {os.fspath(out_path)!r} would overwrite {in_name} {os.fspath(in_path)!r}: "
            f"choose an {out_name} outside it"
        )
