"""Zarr input and output of batches, resumable chunk by chunk.

`to_zarr` writes a group: the batch as array `component` (default "data"), chunked like the job,
and `<component>_done`, one byte per chunk set to 1 once that chunk is stored. Each task writes its
data chunk and then its own marker (separate files, so concurrent writers never share one), and a
rerun of the same job skips the marked chunks: after a crash nothing finished is lost or redone.
"""

from __future__ import annotations

import math
import os

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.delayed import delayed

from .arrays import as_batch, batch_chunks, chunk_backend
from .jobs import run
from .worker import to_host

DATA = "data"


def done_name(component: str) -> str:
    """The name of the completion record next to array `component`."""
    return f"{component}_done"


def _store(url):
    return os.fspath(url) if isinstance(url, os.PathLike) else url


def _open(url, component):
    """(array, completion record or None) of a Zarr array or of an array in a Zarr group."""
    import zarr

    node = zarr.open(store=_store(url), mode="r")
    if isinstance(node, zarr.Array):
        if component is not None:
            raise ValueError(f"{url} is a single Zarr array, so component must be None, got {component!r}")
        return node, None
    name = DATA if component is None else component
    members = sorted(node.array_keys())
    if name not in members:
        raise ValueError(f"{url} has no array {name!r} (its arrays: {', '.join(members) or 'none'})")
    return node[name], node[done_name(name)] if done_name(name) in members else None


def from_zarr(url, component=None, *, chunks=None) -> da.Array:
    """A Zarr array as a batch: Dask array chunked along axis 0.

    url: a path or URL of a Zarr array, or of a group holding one (`component`, default "data", as
    `to_zarr` writes). chunks: rows per chunk or None: a multiple of the store's chunk length sized
    from worker memory. An output of `to_zarr` that is not complete (its job failed and was not
    rerun) raises ValueError.
    """
    array, done = _open(url, component)
    if done is not None:
        finished = int(np.count_nonzero(done[:]))
        if finished < done.shape[0]:
            raise ValueError(
                f"{url} is incomplete: {finished} of {done.shape[0]} chunks are written; "
                "rerun the job that writes it to finish it"
            )
    if array.ndim < 1:
        raise ValueError(f"{url} holds a 0-d array: a batch needs a batch axis")
    lengths = batch_chunks(array.shape, array.dtype, chunks, multiple=array.chunks[0])
    return da.from_zarr(array, chunks=(lengths,) + tuple(array.shape[1:]))


def zarr_status(url, component: str = DATA) -> tuple[int, int]:
    """(chunks finished, chunks in all) of an output written by `to_zarr`."""
    _, done = _open(url, component)
    if done is None:
        raise ValueError(f"{url} has no completion record for {component!r}: it was not written by to_zarr")
    return int(np.count_nonzero(done[:])), int(done.shape[0])


def _write_chunk(block, url, component, index, start, stop):
    import zarr

    block = to_host(block)
    if block.shape[0] != stop - start:
        raise ValueError(f"chunk {index} has {block.shape[0]} rows, expected {stop - start}")
    zarr.open_array(store=url, path=component, mode="r+")[start:stop] = block
    zarr.open_array(store=url, path=done_name(component), mode="r+")[index] = 1  # only after the data
    return index


def to_zarr(
    x,
    url,
    component: str = DATA,
    *,
    overwrite: bool = False,
    compute: bool = True,
    progress: bool = False,
    compressors=None,
):
    """Write a batch to a Zarr group chunk by chunk; a rerun of the same job skips finished chunks.

    x: Dask, NumPy or CuPy array (batch, ...). It is stored with x's chunk length along axis 0
    (made regular if it is not) and every other axis whole. An existing `component` of the same
    shape, dtype and chunks is resumed (only the unfinished chunks are computed); anything else
    there raises ValueError unless overwrite=True. The values of a resumed job are not compared:
    rerun the job that produced the finished chunks.
    compute: True runs the job now (every chunk is attempted before a failure is raised) and
    returns the number of chunks written; False returns the job, a list of Dask Delayed objects
    (one per unfinished chunk) for `dist.run`. progress: show a progress bar while computing.
    compressors: Zarr compressors (None: uncompressed, since residues mod q barely compress).
    """
    import zarr

    if not isinstance(component, str) or not component or "/" in component:
        raise ValueError(f"component must be a non-empty name without '/', got {component!r}")
    chunk_backend(x, "x")
    if x.ndim < 1:
        raise ValueError("x must have a batch axis: got a 0-d array")
    if any(math.isnan(s) for s in x.shape):
        raise ValueError(f"x must have known chunk sizes to be written, got shape {x.shape}")
    x = as_batch(x)
    if any(len(c) > 1 for c in x.chunks[1:]):
        x = x.rechunk(dict.fromkeys(range(1, x.ndim), -1))
    lengths = x.chunks[0]
    if len(lengths) > 1 and (len(set(lengths[:-1])) > 1 or lengths[-1] > lengths[0]):
        x = x.rechunk({0: batch_chunks(x.shape, x.dtype, max(lengths))})
    rows = max(x.chunks[0][0], 1)
    shape, dtype = tuple(int(s) for s in x.shape), np.dtype(x.dtype)
    n_chunks = len(x.chunks[0]) if shape[0] else 0
    store = _store(url)

    group = zarr.open_group(store=store, mode="a")
    members = set(group.array_keys())
    if component in members and not overwrite:
        array = group[component]
        if done_name(component) not in members:
            raise ValueError(
                f"{url}/{component} exists and was not written by to_zarr; pass overwrite=True to replace it"
            )
        found = (tuple(array.shape), array.dtype, tuple(array.chunks))
        wanted = (shape, dtype, (rows,) + shape[1:])
        if found != wanted:
            raise ValueError(
                f"{url}/{component} exists with shape {found[0]}, dtype {found[1]}, chunks {found[2]}; "
                f"this job writes shape {wanted[0]}, dtype {wanted[1]}, chunks {wanted[2]}: "
                "pass overwrite=True to replace it"
            )
        finished = group[done_name(component)][:]
    else:
        group.create_array(
            component,
            shape=shape,
            dtype=dtype,
            chunks=(rows,) + shape[1:],
            compressors=compressors,
            fill_value=0,
            overwrite=True,
        )
        group.create_array(
            done_name(component),
            shape=(n_chunks,),
            dtype="uint8",
            chunks=(1,),
            compressors=None,
            fill_value=0,
            overwrite=True,
        )
        finished = np.zeros(n_chunks, dtype=np.uint8)

    token = tokenize(x.name, store, component)
    tasks = []
    # Unoptimised, the graph keeps any futures x refers to (scattered chunks) alive until the job runs.
    for index, block in enumerate(x.to_delayed(optimize_graph=False).ravel()):
        if finished[index]:
            continue
        start = index * rows
        write = delayed(_write_chunk, pure=True)
        tasks.append(
            write(
                block,
                store,
                component,
                index,
                start,
                min(start + rows, shape[0]),
                dask_key_name=f"to_zarr-{token}-{index}",
            )
        )
    if not compute:
        return tasks
    if tasks:
        run(tasks, progress=progress, fail_fast=False)
    return len(tasks)
