"""Zarr input and output of batches, resumable chunk by chunk.

`to_zarr` writes a group: the batch as array `component` (default "data"), chunked like the job,
and `<component>_done`, one byte per chunk set to 1 once that chunk is stored. Each task writes its
data chunk and then its own marker (separate files, so concurrent writers never share one), and a
rerun of the same job skips the marked chunks: after a crash nothing finished is lost or redone.

Every chunk carries a CRC32C checksum (Zarr's codec), and the array records what made it (the job's
description and the hebatch version) before its first chunk: a rerun resumes only the same job, after
re-checking the chunks it keeps, and reading a damaged chunk names the store and the chunk.
"""

from __future__ import annotations

import math
import os
import uuid

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.delayed import delayed

from .arrays import as_batch, batch_chunks, chunk_backend, current_client
from .jobs import run
from .provenance import describe, differences, digest, jsonable, record
from .worker import to_host

DATA = "data"
PROVENANCE = "hebatch_provenance"  # attribute of an array written by to_zarr: what made it
RECHECK_GROUP = 16  # finished chunks re-checked per task when a job resumes


def done_name(component: str) -> str:
    """The name of the completion record next to array `component`."""
    return f"{component}_done"


def _store(url):
    """url as the tasks open it: local paths absolute (workers may run elsewhere), URLs as given."""
    url = os.fspath(url) if isinstance(url, os.PathLike) else url
    return os.path.abspath(url) if isinstance(url, str) and "://" not in url else url


def _where(url, component) -> str:
    return f"{os.fspath(url)}/{component}" if component else os.fspath(url)


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


def zarr_provenance(url, component: str = DATA) -> dict | None:
    """The record of what made an output of `to_zarr` (None for other Zarr arrays): the hebatch
    version, shape, dtype and the job's description (see provenance.py)."""
    array, _ = _open(url, component)
    found = array.attrs.get(PROVENANCE)
    return dict(found) if isinstance(found, dict) else None


def _chunk_exists(array, index: int) -> bool:
    from zarr.core.sync import sync

    key = array.metadata.encode_chunk_key((index,) + (0,) * (array.ndim - 1))
    place = array.store_path
    return bool(sync(place.store.exists(f"{place.path}/{key}" if place.path else key)))


def _chunk_problem(array, index: int) -> str | None:
    """Why stored chunk `index` cannot be relied on (missing, or failing its checksum), or None."""
    if not _chunk_exists(array, index):
        return "missing"
    rows = array.chunks[0]
    try:
        array[index * rows : (index + 1) * rows]
    except Exception as error:  # the checksum, or a codec failing on a truncated chunk
        return f"corrupt ({type(error).__name__}: {error})"
    return None


def _open_array(url, path, config=None):
    import zarr

    if config is None:
        return zarr.open_array(store=url, path=path or "", mode="r")
    return zarr.open_array(store=url, path=path or "", mode="r+").with_config(config)


def _bad_chunks(url, component, indices) -> list[tuple[int, str]]:
    """(index, problem) of the stored chunks among indices that are missing or corrupt."""
    array = _open_array(url, component)
    return [(i, problem) for i in indices if (problem := _chunk_problem(array, i)) is not None]


def _read_rows(url, component, start, stop, complete):
    """Rows start:stop of a stored array; ValueError naming the store and chunk of a corrupt chunk, or
    of a missing one where the array is complete (an output of to_zarr: every chunk was written)."""
    array = _open_array(url, component)
    if stop <= start:
        return array[start:stop]
    rows = array.chunks[0]
    chunks = range(start // rows, (stop - 1) // rows + 1)
    try:
        block = array[start:stop]
    except Exception as error:
        bad = _bad_chunks(url, component, chunks)
        raise ValueError(_damage(url, component, rows, bad or [(chunks[0], f"unreadable ({error})")])) from error
    if complete:
        missing = [(i, "missing") for i in chunks if not _chunk_exists(array, i)]
        if missing:
            raise ValueError(_damage(url, component, rows, missing))
    return block


def _damage(url, component, rows, bad) -> str:
    listed = "; ".join(f"chunk {i} (rows {i * rows}:{(i + 1) * rows}) is {problem}" for i, problem in bad)
    return f"{_where(url, component)}: {listed}. Rerun the job that wrote it (a resumed to_zarr redoes such chunks)"


def from_zarr(url, component=None, *, chunks=None) -> da.Array:
    """A Zarr array as a batch: Dask array chunked along axis 0.

    url: a path or URL of a Zarr array, or of a group holding one (`component`, default "data", as
    `to_zarr` writes). chunks: rows per chunk or None: a multiple of the store's chunk length sized
    from worker memory. An output of `to_zarr` that is not complete (its job failed and was not
    rerun) raises ValueError. Reading a stored chunk that fails its checksum (or, in an output of
    `to_zarr`, is missing) raises ValueError naming the store and the chunk.
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
    store, path = _store(url), array.path
    made_by = array.attrs.get(PROVENANCE)
    source = {
        "source": "zarr",
        "path": store,
        "component": path or None,
        "shape": list(array.shape),
        "dtype": str(array.dtype),
        "made_by": digest(made_by) if isinstance(made_by, dict) else None,
    }
    name = "from_zarr-" + tokenize(source, lengths)
    bounds = np.cumsum((0,) + tuple(lengths))
    tail = (0,) * (array.ndim - 1)
    graph = {
        (name, i) + tail: (_read_rows, store, path, int(a), int(b), done is not None)
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))
    }
    meta = np.empty((0,) * array.ndim, dtype=array.dtype)
    x = da.Array(graph, name, chunks=(tuple(lengths),) + tuple((s,) for s in array.shape[1:]), meta=meta)
    return record(x, source)


def zarr_status(url, component: str = DATA) -> tuple[int, int]:
    """(chunks finished, chunks in all) of an output written by `to_zarr`."""
    _, done = _open(url, component)
    if done is None:
        raise ValueError(f"{url} has no completion record for {component!r}: it was not written by to_zarr")
    return int(np.count_nonzero(done[:])), int(done.shape[0])


def _write_chunk(block, url, component, index, start, stop):
    block = to_host(block)
    if block.shape[0] != stop - start:
        raise ValueError(f"chunk {index} has {block.shape[0]} rows, expected {stop - start}")
    # every chunk is stored, all-zero ones too: a chunk missing from a finished output is then damage
    config = {"write_empty_chunks": True}
    _open_array(url, component, config)[start:stop] = block
    _open_array(url, done_name(component), config)[index] = 1  # only after the data
    return index


def _checksummed(compressors) -> list:
    """The compressors with Zarr's CRC32C codec last: every stored chunk carries its checksum."""
    from zarr.codecs import Crc32cCodec

    codecs = (
        [] if compressors is None else list(compressors) if isinstance(compressors, (list, tuple)) else [compressors]
    )
    if not any(isinstance(c, Crc32cCodec) for c in codecs):
        codecs.append(Crc32cCodec())
    return codecs


def _recheck(store, component, finished) -> list[tuple[int, str]]:
    """The finished chunks that are missing or corrupt, checked where the workers run (one task per
    group of chunks) when there is a cluster, else here."""
    indices = [int(i) for i in np.flatnonzero(finished)]
    if not indices:
        return []
    if current_client() is None:
        return _bad_chunks(store, component, indices)
    groups = [indices[i : i + RECHECK_GROUP] for i in range(0, len(indices), RECHECK_GROUP)]
    token = uuid.uuid4().hex  # never a result the scheduler still holds from an earlier check
    tasks = [
        delayed(_bad_chunks, pure=False)(store, component, group, dask_key_name=f"to_zarr_recheck-{token}-{i}")
        for i, group in enumerate(groups)
    ]
    return [bad for found in run(tasks) for bad in found]


def to_zarr(
    x,
    url,
    component: str = DATA,
    *,
    overwrite: bool = False,
    compute: bool = True,
    progress: bool = False,
    compressors=None,
    provenance: dict | None = None,
):
    """Write a batch to a Zarr group chunk by chunk; a rerun of the same job skips finished chunks.

    x: Dask, NumPy or CuPy array (batch, ...). It is stored with x's chunk length along axis 0
    (made regular if it is not) and every other axis whole, each chunk with a CRC32C checksum.
    The array records what made it before its first chunk is written: the hebatch version and a
    description of the job (for arrays of hebatch's transforms and sources: the operations, moduli,
    direction and orders, and the input's identity; for other Dask arrays their graph's name).
    provenance: a description (JSON data) to record instead, for jobs hebatch cannot describe.
    An existing `component` of the same shape, dtype, chunks and record is resumed: the finished
    chunks are checked (present, checksum) and those that fail are redone with the unfinished
    ones. Anything else there raises ValueError naming what differs, unless overwrite=True.
    compute: True runs the job now (every chunk is attempted before a failure is raised) and
    returns the number of chunks written; False returns the job, a list of Dask Delayed objects
    (one per chunk to write) for `dist.run`. progress: show a progress bar while computing.
    compressors: Zarr compressors (None: uncompressed, since residues mod q barely compress).
    """
    import zarr

    from .. import __version__

    if not isinstance(component, str) or not component or "/" in component:
        raise ValueError(f"component must be a non-empty name without '/', got {component!r}")
    if provenance is not None and not isinstance(provenance, dict):
        raise TypeError(f"provenance must be a dict of JSON data or None, got {type(provenance).__name__}")
    chunk_backend(x, "x")
    if x.ndim < 1:
        raise ValueError("x must have a batch axis: got a 0-d array")
    if any(math.isnan(s) for s in x.shape):
        raise ValueError(f"x must have known chunk sizes to be written, got shape {x.shape}")
    x = as_batch(x)
    job = describe(x) if provenance is None else jsonable(provenance)  # before the rechunks below
    if any(len(c) > 1 for c in x.chunks[1:]):
        x = x.rechunk(dict.fromkeys(range(1, x.ndim), -1))
    lengths = x.chunks[0]
    if len(lengths) > 1 and (len(set(lengths[:-1])) > 1 or lengths[-1] > lengths[0]):
        x = x.rechunk({0: batch_chunks(x.shape, x.dtype, max(lengths))})
    rows = max(x.chunks[0][0], 1)
    shape, dtype = tuple(int(s) for s in x.shape), np.dtype(x.dtype)
    n_chunks = len(x.chunks[0]) if shape[0] else 0
    store = _store(url)
    where = _where(url, component)
    made_by = {"hebatch": __version__, "shape": list(shape), "dtype": str(dtype), "job": job}

    group = zarr.open_group(store=store, mode="a")
    members = set(group.array_keys())
    if component in members and not overwrite:
        array = group[component]
        if done_name(component) not in members:
            raise ValueError(f"{where} exists and was not written by to_zarr; pass overwrite=True to replace it")
        found = (tuple(array.shape), array.dtype, tuple(array.chunks))
        wanted = (shape, dtype, (rows,) + shape[1:])
        if found != wanted:
            raise ValueError(
                f"{where} exists with shape {found[0]}, dtype {found[1]}, chunks {found[2]}; "
                f"this job writes shape {wanted[0]}, dtype {wanted[1]}, chunks {wanted[2]}: "
                "pass overwrite=True to replace it"
            )
        stored = array.attrs.get(PROVENANCE)
        if not isinstance(stored, dict):
            raise ValueError(
                f"{where} records nothing of the job that made it, so a rerun cannot tell whether it "
                "resumes the same job: pass overwrite=True to replace it"
            )
        differ = differences(stored, made_by)
        if differ:
            raise ValueError(
                f"{where} holds the results of another job, which differs in "
                + "; ".join(differ)
                + " (stored vs this job): pass overwrite=True to replace it, or write elsewhere"
            )
        done = group[done_name(component)]
        finished = done[:]
        for index, _problem in _recheck(store, component, finished):
            done[index] = 0  # redone below; until then readers see the output as incomplete
            finished[index] = 0
    else:
        group.create_array(
            component,
            shape=shape,
            dtype=dtype,
            chunks=(rows,) + shape[1:],
            compressors=_checksummed(compressors),
            fill_value=0,
            attributes={PROVENANCE: made_by},  # with the metadata, before any chunk
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
