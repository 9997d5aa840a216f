"""What runs inside a task on a Dask worker: choosing the device and moving chunks to it.

A task hands `on_worker` a function of arrays (an `hb.ntt` call, a 4-step block step) and its
operands. NumPy chunks on a worker with a GPU go through pinned host buffers on the task's own
non-blocking CUDA stream, in slices: while the GPU transforms one slice, the CPU stages the next,
and tasks running in other worker threads overlap their copies with these kernels. CuPy chunks stay
on their GPU. Plans, twiddle tables and compiled kernels are cached per worker process by the
transforms layer and the backends, so tasks never carry them.
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from ..backend import gpu_available

DEVICES = ("auto", "cpu", "gpu")
STAGE_BYTES = 64 << 20  # host<->device copies per slice: large enough for full-speed DMA
_CONTEXT_TYPES = (ValueError, TypeError, RuntimeError, NotImplementedError, ArithmeticError)


_THREAD = threading.local()
COPY_THREADS = 8  # host copies into and out of pinned buffers run on several cores (NumPy drops the GIL)


@lru_cache(maxsize=1)
def _copy_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(COPY_THREADS, thread_name_prefix="hebatch-copy")


def parallel_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[...] = src, split along axis 0 over a few threads: one core copies far slower than PCIe moves."""
    rows = dst.shape[0]
    if dst.nbytes < (8 << 20) or rows < 2:
        dst[...] = src
        return
    parts = min(COPY_THREADS, rows)
    bounds = [rows * i // parts for i in range(parts + 1)]
    list(_copy_pool().map(lambda i: dst.__setitem__(slice(bounds[i], bounds[i + 1]), src[bounds[i]:bounds[i + 1]]),
                          range(parts)))


def task_stream():
    """This worker thread's non-blocking CUDA stream (made once per thread, not per task)."""
    import cupy

    device = cupy.cuda.Device().id
    streams = getattr(_THREAD, "streams", None)
    if streams is None:
        streams = _THREAD.streams = {}
    stream = streams.get(device)
    if not isinstance(stream, cupy.cuda.Stream):  # (a CuPy module reloaded since, in tests)
        stream = streams[device] = cupy.cuda.Stream(non_blocking=True)
    return stream


def check_device(device) -> str:
    if not isinstance(device, str) or device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(map(repr, DEVICES))}, got {device!r}")
    return device


@lru_cache(maxsize=1)
def worker_has_gpu() -> bool:
    """True if this process sees a CUDA GPU through CuPy (asked once per worker process)."""
    return gpu_available()


def device_memory_bytes() -> int | None:
    """Total memory of this process's current GPU, or None without one (run on workers)."""
    if not worker_has_gpu():
        return None
    import cupy

    return int(cupy.cuda.Device().mem_info[1])


def is_device_array(x) -> bool:
    cupy = sys.modules.get("cupy")  # a CuPy array can only exist if CuPy was imported
    return cupy is not None and isinstance(x, cupy.ndarray)


def to_host(x):
    """x as a NumPy array (copied from the GPU if it is a CuPy array)."""
    return x.get() if is_device_array(x) else x


def on_worker(fn, *operands, device: str = "auto", keep_on_device: bool = False):
    """fn(*operands) on this worker's device.

    CuPy operands: fn runs on their GPU (on a fresh stream) and the result stays there. NumPy
    operands: on the GPU when device is "gpu", or "auto" and the worker has one, else on the CPU;
    the result is NumPy unless keep_on_device. Operands share the batch axis 0; an operand whose
    axis 0 has length 1 while the others are longer is broadcast (uploaded once).
    """
    on_device = any(is_device_array(op) for op in operands)
    if not on_device and any(op.size == 0 for op in operands):
        return fn(*operands)
    if not on_device:
        if device == "cpu":
            return fn(*operands)
        if not worker_has_gpu():
            if device == "gpu":
                raise RuntimeError("device='gpu' but this worker sees no CUDA GPU with CuPy")
            return fn(*operands)
    stream = task_stream()
    try:
        if on_device or keep_on_device:
            with stream:
                keep = []  # pinned staging buffers must outlive their asynchronous copies
                return fn(*[op if is_device_array(op) else _upload(op, stream, keep) for op in operands])
        return _staged(fn, operands, stream)
    finally:
        stream.synchronize()  # results are complete, and no copy still targets a freed buffer


def _upload(x, stream, keep):
    """x (NumPy) copied to the current GPU on `stream` through a pinned buffer."""
    import cupy
    import cupyx

    pinned = cupyx.empty_pinned(x.shape, x.dtype)
    parallel_copy(pinned, x)
    keep.append(pinned)
    d = cupy.empty(x.shape, x.dtype)
    d.set(pinned, stream=stream)
    return d


class _Slot:
    """Pinned buffers for one slice in flight: inputs, output, and the event that ends its copies."""

    def __init__(self):
        self.inputs: dict = {}
        self.output = None
        self.pending = None  # (event, pinned output view, start, stop)

    def buffer(self, key, shape, dtype):
        import cupyx

        buf = self.output if key == "out" else self.inputs.get(key)
        if buf is None or buf.shape[1:] != shape[1:] or buf.shape[0] < shape[0] or buf.dtype != dtype:
            buf = cupyx.empty_pinned(shape, dtype)
            if key == "out":
                self.output = buf
            else:
                self.inputs[key] = buf
        return buf

    def finish(self, out):
        if self.pending is not None:
            event, host, start, stop = self.pending
            event.synchronize()
            parallel_copy(out[start:stop], host)
            self.pending = None


def _staged(fn, operands, stream):
    """fn over NumPy operands on the GPU, in slices of axis 0, double-buffered through pinned memory."""
    import cupy

    rows = max(op.shape[0] if op.ndim else 1 for op in operands)
    sliced = [op.ndim > 0 and op.shape[0] == rows for op in operands]
    row_bytes = sum(op[0].nbytes for op, s in zip(operands, sliced) if s) or 1
    step = max(1, min(rows, STAGE_BYTES // row_bytes))
    slots = (_Slot(), _Slot())
    out = None
    with stream:
        keep = []
        fixed = [None if s else _upload(op, stream, keep) for op, s in zip(operands, sliced)]
        for index, start in enumerate(range(0, rows, step)):
            stop = min(start + step, rows)
            slot = slots[index % 2]
            if out is not None:
                slot.finish(out)  # its previous slice is copied out before its buffers are reused
            device_ops = []
            for k, (op, s) in enumerate(zip(operands, sliced)):
                if not s:
                    device_ops.append(fixed[k])
                    continue
                host = slot.buffer(k, (step,) + op.shape[1:], op.dtype)[:stop - start]
                parallel_copy(host, op[start:stop])  # CPU staging overlaps the GPU work of the other slot
                d = cupy.empty(host.shape, host.dtype)
                d.set(host, stream=stream)
                device_ops.append(d)
            y = fn(*device_ops)
            if out is None:
                out = np.empty((rows,) + y.shape[1:], dtype=y.dtype)
            host_out = slot.buffer("out", (step,) + y.shape[1:], y.dtype)[:stop - start]
            cupy.asnumpy(y, stream=stream, out=host_out, blocking=False)
            slot.pending = (stream.record(), host_out, start, stop)
        for slot in slots:
            slot.finish(out)
    return out


def describe_block(label: str, block_info) -> str:
    """'<label> chunk (i, ...) rows a:b' for error messages, from Dask's block_info."""
    try:
        info = block_info[None]
        rows = info["array-location"][0]
        return f"{label} chunk {tuple(info['chunk-location'])} rows {rows[0]}:{rows[1]}"
    except (KeyError, TypeError, IndexError):
        return label


@contextmanager
def failures_named(where: str):
    """Re-raise a failure of the block with `where` (the task's chunk) in its message; the original
    stays its __cause__."""
    try:
        yield
    except _CONTEXT_TYPES as exc:
        if type(exc) not in _CONTEXT_TYPES:  # subclasses may take other constructor arguments
            raise
        raise type(exc)(f"{exc} (in {where})") from exc


def run_task(fn, *operands, device: str, where: str, keep_on_device: bool = False):
    """on_worker, with the task named in the message of a failure (the original is its __cause__)."""
    with failures_named(where):
        return on_worker(fn, *operands, device=device, keep_on_device=keep_on_device)
