"""Batches as Dask arrays: shape (batch, ...), chunked along the batch axis only.

The default chunk size follows the memory of the workers that will hold the chunks: a share of the
device memory on GPU workers, of the worker memory limit on CPU workers.
"""

from __future__ import annotations

import functools
import math
import os
import weakref
from collections import OrderedDict

import dask
import dask.array as da
import numpy as np

from ..backend import get
from ..device import device_of
from .provenance import content_digest, piece_digest, record
from .worker import device_memory_bytes, on_worker
from .worker import to_host as host_array

# Default GPU chunk: as large as memory allows, up to 1 GiB. Provenance: on an H100 (2026-11-24,
# dist_bench --quick, 2^16 x 8 limbs) Dask's own cost was about 2 ms per task (a graph of no-op tasks
# over 16 chunks of 256 MiB took 30 ms) against 1.2 ms of NTT per 256 MiB chunk, so only chunks of
# about 1 GiB bring it near the 10% target. Re-measure with
# `dist_bench.py --cases overhead --chunk-mib 64 256 1024` when the scheduler or the kernels change.
GPU_CHUNK_MAX = 1 << 30
GPU_TASK_COPIES = 4  # device memory per running task: input, output and the transform's work space
CPU_TASK_COPIES = 16  # the NumPy backend's 128-bit products make many temporaries per chunk


def current_client():
    """The active distributed.Client, or None (then Dask's local scheduler runs the graphs)."""
    try:
        from distributed import Client

        return Client.current(allow_global=True)
    except (ImportError, ValueError):
        return None


def _cpu_cap() -> int:
    return int(dask.utils.parse_bytes(dask.config.get("array.chunk-size")))


def chunk_budget(client=None) -> int:
    """Bytes per chunk so that every worker can run its threads' tasks at once (the smallest worker rules)."""
    import psutil

    if client is None:
        device = device_memory_bytes()
        if device:
            return min(GPU_CHUNK_MAX, device // GPU_TASK_COPIES)
        return min(_cpu_cap(), psutil.virtual_memory().total // ((os.cpu_count() or 1) * CPU_TASK_COPIES))
    from .cluster import wait_for_workers

    workers = wait_for_workers(client, 1)  # sizing needs a worker: wait for one to register
    devices = client.run(device_memory_bytes)
    budgets = []
    for address, info in workers.items():
        threads = max(1, int(info.get("nthreads") or 1))
        device = devices.get(address)
        if device:
            budgets.append(min(GPU_CHUNK_MAX, device // (GPU_TASK_COPIES * threads)))
        else:
            memory = int(info.get("memory_limit") or 0) or psutil.virtual_memory().total
            budgets.append(min(_cpu_cap(), memory // (CPU_TASK_COPIES * threads)))
    return min(budgets)


def batch_chunks(shape, dtype, chunks=None, *, multiple: int = 1, client=None) -> tuple[int, ...]:
    """Chunk lengths along axis 0: `chunks` (rows per chunk, or a tuple of lengths) or from memory.

    multiple: chosen chunk lengths are multiples of it (a store's chunk length), when the axis allows.
    """
    batch = int(shape[0])
    if chunks is None:
        row_bytes = max(1, math.prod(shape[1:]) * np.dtype(dtype).itemsize)
        rows = max(1, chunk_budget(client) // row_bytes)
        rows = max(multiple, rows // multiple * multiple)
        rows = min(rows, max(batch, 1))
    elif isinstance(chunks, (int, np.integer)) and not isinstance(chunks, bool):
        rows = int(chunks)
        if rows < 1:
            raise ValueError(f"chunks must be at least 1 row, got {rows}")
    else:
        try:
            lengths = tuple(int(c) for c in chunks)
        except TypeError:
            raise TypeError(
                f"chunks must be None, an int (rows per chunk) or a tuple of chunk lengths, got {chunks!r}"
            ) from None
        if any(c < 1 for c in lengths) or sum(lengths) != batch:
            raise ValueError(f"chunks {lengths} must be positive lengths adding up to the batch size {batch}")
        return lengths
    if batch == 0:
        return (0,)
    return (rows,) * (batch // rows) + ((batch % rows,) if batch % rows else ())


def from_numpy(x, chunks=None) -> da.Array:
    """A NumPy or CuPy array (batch, ...) as a Dask array chunked along the batch axis.

    chunks: rows per chunk, a tuple of chunk lengths, or None for the default from worker memory.
    With a distributed client the chunks are scattered to the workers now (the graph then refers
    to them instead of carrying the whole array); without one the array is wrapped lazily.
    """
    if isinstance(x, da.Array):
        raise TypeError("x is already a Dask array: rechunk it along axis 0 instead")
    device_of(x, "x")
    if x.ndim < 1:
        raise ValueError("x must have a batch axis: got a 0-d array")
    lengths = batch_chunks(x.shape, x.dtype, chunks)
    bounds = [int(b) for b in np.cumsum((0,) + lengths)]
    pieces = [x[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    # What the array holds, for the record of an output made from it: a digest of the values, taken
    # only when an output asks for it (where the pieces are: on the workers once scattered)
    source = {"source": "array", "shape": list(x.shape), "dtype": str(x.dtype)}
    client = current_client()
    if client is None or x.size == 0:
        y = da.from_array(x, chunks=(lengths,) + x.shape[1:], asarray=False)
        digest = functools.partial(_digest_here, _ref(x), bounds)
        if isinstance(digest.args[0], weakref.ref):
            return record(y, source, later={"content": digest})
        return record(y, {**source, "content": digest()})  # no weak reference: now
    futures = client.scatter(pieces, hash=False)
    meta = x[:0]
    blocks = [da.from_delayed(f, shape=p.shape, dtype=x.dtype, meta=meta) for f, p in zip(futures, pieces)]
    for future, a, b in zip(futures, bounds[:-1], bounds[1:]):
        _scattered[future.key] = (a, b)
    while len(_scattered) > _MAX_SCATTERED:
        _scattered.popitem(last=False)
    digest = functools.partial(_digest_scattered, [weakref.ref(f) for f in futures])
    return record(da.concatenate(blocks, axis=0), source, later={"content": digest})


def _ref(x):
    """A weak reference to x (a record must not keep a batch alive), or x itself where it allows none."""
    try:
        return weakref.ref(x)
    except TypeError:
        return functools.partial(_same, x)


def _digest_here(ref, bounds) -> str:
    x = ref()
    if x is None:
        raise LookupError("the array is gone")
    return content_digest(piece_digest(host_array(x[a:b])) for a, b in zip(bounds[:-1], bounds[1:]))


def _piece_digest(piece) -> str:
    return piece_digest(host_array(piece))


def _digest_scattered(refs) -> str:
    futures = [ref() for ref in refs]
    if any(f is None for f in futures):
        raise LookupError("the scattered chunks are gone")
    client = futures[0].client
    try:
        digests = client.gather(client.map(_piece_digest, futures, pure=False))
    except Exception as error:
        lost = lost_input(futures)
        if lost is not None:
            raise lost from error
        raise
    return content_digest(digests)


_MAX_SCATTERED = 1 << 16
_scattered: OrderedDict = OrderedDict()  # key of a chunk scattered by from_numpy -> its rows (start, stop)


def lost_input(futures) -> RuntimeError | None:
    """An error explaining the loss of chunks scattered by `from_numpy` among futures (those a failed
    job depended on), or None when none of them is lost. Scattered chunks live only in the memory of
    their worker: when it dies they are gone, and Dask cancels every task that needed them."""
    lost = sorted(_scattered[f.key] for f in futures if f.key in _scattered and f.status != "finished")
    if not lost:
        return None
    shown = ", ".join(f"{a}:{b}" for a, b in lost[:8]) + (", ..." if len(lost) > 8 else "")
    return RuntimeError(
        f"input rows {shown} (scattered to the workers by dist.from_numpy) were lost with a worker that "
        "died or restarted: scattered data cannot be recomputed. Rerun the job (a to_zarr output resumes "
        "from its finished chunks), or give the input as a Zarr store (dist.from_zarr), whose chunks "
        "are read again when a worker is lost"
    )


def chunk_backend(x, name: str = "x"):
    """The backend of x's chunks (x: Dask, NumPy or CuPy array); TypeError for anything else."""
    try:
        return get(device_of(x._meta if isinstance(x, da.Array) else x, name)).ntt
    except TypeError:
        raise TypeError(
            f"{name} must be a Dask, NumPy or CuPy array, got {type(x).__module__}.{type(x).__name__}"
        ) from None


def as_batch(x, name: str = "x") -> da.Array:
    """x as a Dask array: Dask arrays pass through, NumPy and CuPy arrays go through `from_numpy`
    (which scatters them to the workers: validate arguments before calling this)."""
    chunk_backend(x, name)
    return x if isinstance(x, da.Array) else from_numpy(x)


def _to_device_block(block):
    return on_worker(_same, block, device="gpu", keep_on_device=True)


def _same(x):
    return x


def to_device(x: da.Array) -> da.Array:
    """The chunks of x moved to their workers' GPUs (lazy; persist it to keep a device-resident batch).

    Needs CuPy and a GPU on this machine too (the result's meta is a CuPy array)."""
    try:
        import cupy
    except ImportError:
        raise RuntimeError("to_device needs CuPy on this machine") from None
    x = as_batch(x)
    meta = cupy.empty((0,) * x.ndim, dtype=x.dtype)
    return x.map_blocks(_to_device_block, dtype=x.dtype, meta=meta, token="to_device")


def to_host(x: da.Array) -> da.Array:
    """The chunks of x as NumPy arrays (copied from the GPU where they are CuPy arrays)."""
    x = as_batch(x)
    return x.map_blocks(host_array, dtype=x.dtype, meta=np.empty((0,) * x.ndim, dtype=x.dtype), token="to_host")


__all__ = [
    "from_numpy",
    "as_batch",
    "chunk_backend",
    "batch_chunks",
    "chunk_budget",
    "current_client",
    "lost_input",
    "to_device",
    "to_host",
]
