"""What runs inside a task on a Dask worker: choosing the device and moving chunks to it.

A task hands `on_worker` a function of arrays (a fused chain of hb.ntt / hb.polymul calls, a 4-step
block step) and its operands, and optionally the entry check of its first operands.

- CuPy chunks stay on their GPU. The task issues its work on its thread's CUDA stream, ordered after
  the streams that produced its operands by events (on the GPU, not the host), and returns without
  waiting: the streams are blocking ones, so whatever reads the result through CUDA's default stream
  (Dask's serialisation, `.get()`) waits for it. The entry check is one fused device reduction per
  chunk whose verdict is copied to pinned memory before the transform is queued: the task waits for
  that verdict only, while the GPU goes on (a task with check=False never waits on the host).
- NumPy chunks on a worker with a GPU are pipelined in slices over several streams: the chunk's own
  memory is registered as pinned memory (no staging copy), each slice is copied in, transformed and
  copied out into the pinned result on one stream while the other streams copy the next slices, and
  the task waits once at the end. The result lives in pinned memory from CuPy's pinned pool, so it is
  not page-faulted in by the copies.
- On the CPU the function runs on the NumPy chunks, after the same entry check with NumPy.

Per-worker state (streams, kernels, contexts) belongs to the worker's HebatchPlugin (plugin.py).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import NoReturn

import numpy as np

from ..device import DEVICES, device_memory_bytes, gpu_available, is_device_array  # noqa: F401
from ..device import check_device as _check_device
from .plugin import COPY_THREADS, current_state

STAGE_BYTES = 64 << 20  # bytes of one pipelined slice: large enough for full-speed DMA
HOST_REGISTER_READ_ONLY = 8  # cudaHostRegisterReadOnly: chunks deserialised from read-only buffers
PIPELINE_STREAMS = 3  # slices in flight per task: copy in, transform and copy out of three slices overlap
_CONTEXT_TYPES = (ValueError, TypeError, RuntimeError, NotImplementedError, ArithmeticError)


def check_device(device) -> str:
    return _check_device(device)


def worker_has_gpu() -> bool:
    """True if this process sees a CUDA GPU through CuPy (asked once per worker)."""
    return current_state().has_gpu()


@dataclass(frozen=True)
class EntryCheck:
    """Entries of the first `operands` operands must be below their limb's modulus."""

    moduli: tuple[int, ...]
    rns: bool
    names: tuple[str, ...] = ("x",)

    @property
    def operands(self) -> int:
        return len(self.names)

    def bound(self, xp):
        if xp is np:
            return self._host_bound
        return xp.asarray(self._host_bound)

    @cached_property
    def _host_bound(self) -> np.ndarray:
        """The moduli as a NumPy array against which entries compare (made once per check, not per task)."""
        if self.rns:
            return np.array(self.moduli, dtype=np.uint64).reshape(-1, 1)
        return np.array(self.moduli[0], dtype=np.uint64)

    def host_check(self, arrays, xp=np) -> None:
        """hb.ntt's check and message: ValueError for the first operand with an entry >= its modulus."""
        for name, a in zip(self.names, arrays):
            if a.size == 0:
                continue
            bad = a >= self.bound(xp)
            if bool(bad.any()):
                worst = int(a[bad].max())
                where = "its limb's modulus" if self.rns else f"modulus {self.moduli[0]}"
                raise ValueError(f"{name} has entries >= {where} (e.g. {worst}): entries must be reduced mod q")

    def raise_for(self, arrays, xp) -> None:
        """After the device check found a bad entry: the message that names it."""
        self.host_check(arrays, xp)
        raise ValueError(f"{', '.join(self.names)} failed the device entry check")  # not reached: checks agree


def parallel_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[...] = src, split along axis 0 over a few threads (only where a host copy cannot be avoided)."""
    rows = dst.shape[0] if dst.ndim else 0
    if dst.nbytes < (8 << 20) or rows < 2:
        dst[...] = src
        return
    parts = min(COPY_THREADS, rows)
    bounds = [rows * i // parts for i in range(parts + 1)]
    list(
        current_state()
        .copy_pool()
        .map(lambda i: dst.__setitem__(slice(bounds[i], bounds[i + 1]), src[bounds[i] : bounds[i + 1]]), range(parts))
    )


def to_host(x):
    """x as a NumPy array; a CuPy array is copied once the task stream that wrote it has finished it."""
    if not is_device_array(x):
        return x
    current_state().wait_for(x)
    return x.get()


def task_stream():
    """This worker thread's CUDA stream (made once per thread, not per task)."""
    return current_state().streams(1)[0]


def on_worker(fn, *operands, device: str = "auto", keep_on_device: bool = False, check: EntryCheck | None = None):
    """fn(*operands) on this worker's device.

    CuPy operands: fn runs on their GPU on this thread's stream and the result stays there. NumPy
    operands: on the GPU when device is "gpu", or "auto" and the worker has one, else on the CPU;
    the result is NumPy unless keep_on_device. Operands share the batch axis 0; an operand whose
    axis 0 has length 1 while the others are longer is broadcast (uploaded once). check: entries of
    the first check.operands operands are checked (fused on the device, or with NumPy on the CPU)
    and fn need not check them again; a failure raises ValueError naming the operand.
    """
    return _on_worker(current_state(), fn, operands, device, keep_on_device, check)


def _on_worker(state, fn, operands, device, keep_on_device, check):
    on_device = any(is_device_array(op) for op in operands)
    if not on_device:
        on_cpu = device == "cpu" or any(op.size == 0 for op in operands)
        if not on_cpu and not state.has_gpu():
            if device == "gpu":
                raise RuntimeError("device='gpu' but this worker sees no CUDA GPU with CuPy")
            on_cpu = True
        if on_cpu:
            if check is not None:
                check.host_check(operands[: check.operands])
            return fn(*operands)
        if not keep_on_device:
            return _pipelined(state, fn, operands, check)
    return _on_device(state, fn, operands, check)


def _fused_check(state, x, bound, out=None):
    """One device pass: out (a bool scalar) |= any(x >= bound), no temporaries, no host wait. out is
    made (False) when not given; a given one is only ever set, so several operands may share it.

    An elementwise kernel over all of the GPU that sets the flag where an entry is out of range (a
    reduction to one scalar would run on one block of threads: ten times slower than the transform)."""
    import cupy

    if out is None:
        out = cupy.zeros((), cupy.bool_)
    if not hasattr(cupy, "ElementwiseKernel") or not x.flags.c_contiguous or x.ndim == 0:
        out |= (x >= bound).any()  # a stand-in CuPy (tests), or a strided chunk: the same result, unfused
        return out
    limbs = int(bound.size)
    n = int(x.shape[-1]) if x.ndim else 1
    kernel = state.kernel(
        "out_of_range",
        lambda: cupy.ElementwiseKernel(
            "T x, raw T q, int64 n, int64 limbs",
            "raw bool flag",
            "if (x >= q[(i / n) % limbs]) flag[0] = true;",
            "hebatch_out_of_range",
        ),
    )
    kernel(x, bound.reshape(-1), n, limbs, out.reshape(1))
    return out


def _device_bound(state, check):
    """The moduli on the current GPU, uploaded once per worker (an upload from pageable memory can wait
    for the stream, so it is not done per task)."""
    import cupy

    def upload():
        bound = check.bound(cupy)
        cupy.cuda.get_current_stream().synchronize()  # complete before any other stream reads it
        return bound

    return state.kernel(("bound", check.moduli, check.rns, cupy.cuda.Device().id), upload)


def _on_device(state, fn, operands, check):
    """fn on the GPU with device operands (host ones uploaded); the result stays on the GPU."""
    import cupy

    with state.phase("order"):
        stream = state.streams(1)[0]
        producers = state.order_after_producers(stream, [op for op in operands if is_device_array(op)])
    registered = []
    try:
        with stream:
            with state.phase("copy in"):
                ops = [op if is_device_array(op) else _upload(op, stream, registered) for op in operands]
            checked = None
            if check is not None and any(op.size for op in ops[: check.operands]):
                # The verdict is copied to pinned memory before the transform is queued: the host then
                # waits for the check only, while the GPU goes on with the transform. One flag of this
                # thread (reused in stream order) serves every operand: nothing allocated or combined.
                with state.phase("check"):
                    bound = _device_bound(state, check)
                    flag = state.device_flag()
                    flag.fill(False)
                    for op in ops[: check.operands]:
                        if op.size:
                            _fused_check(state, op, bound, out=flag)
                    verdict = state.pinned_flag()
                    cupy.asnumpy(flag, stream=stream, out=verdict, blocking=False)
                    checked = state.record(stream)
            with state.phase("transform"):
                y = fn(*ops)
        if registered:
            with state.phase("upload wait"):
                stream.synchronize()  # the uploads read host memory that is unregistered below
        if checked is not None:
            with state.phase("check wait"):
                checked.synchronize()  # the task's one wait, only with check, and not for the transform
            if bool(verdict[()]):
                check.raise_for(ops, cupy)
        with state.phase("finish"):
            outputs = (
                [y] if is_device_array(y) else [a for a in (y if isinstance(y, tuple) else ()) if is_device_array(a)]
            )
            state.produced(stream, outputs)
            state.release_to(producers, stream)
        if state.per_thread_default_stream:
            stream.synchronize()  # per-thread default streams do not wait for ours: readers would race
        return y
    except BaseException:
        if registered:
            stream.synchronize()  # no upload may still read memory unregistered below
        raise
    finally:
        _unregister(registered)


def _register(x, registered):
    """x (NumPy) as C-contiguous host memory registered as pinned (added to `registered` when this call
    pinned it, to be unregistered after its copies); pageable memory if registering is not possible."""
    import cupy

    x = np.ascontiguousarray(x)
    if x.nbytes == 0 or is_pinned(x):
        return x
    runtime = cupy.cuda.runtime
    for flags in (0,) if x.flags.writeable else (0, HOST_REGISTER_READ_ONLY):
        try:
            runtime.hostRegister(x.ctypes.data, x.nbytes, flags)
        except Exception:  # already pinned (by another task or its owner), or not registrable
            continue
        registered.append(x)
        return x
    return x  # copied from pageable memory: correct, only slower


def is_pinned(x) -> bool:
    """Whether NumPy array x lies in page-locked host memory (allocated pinned or registered): then it
    is copied to and from the GPU at full speed as it is, with nothing to register (which costs about
    as much as copying the chunk)."""
    import cupy

    attributes = getattr(cupy.cuda.runtime, "pointerGetAttributes", None)
    if attributes is None or not x.nbytes:
        return False
    try:
        return attributes(x.ctypes.data).type == cupy.cuda.runtime.memoryTypeHost
    except Exception:  # memory CUDA does not know: pageable
        return False


def pinned_empty(shape, dtype=np.uint64) -> np.ndarray:
    """An uninitialised NumPy array in pinned host memory from the worker's pool (CuPy's pinned memory
    pool: blocks freed by earlier results are reused, so a steady job allocates none). Code that makes
    or reads chunks on a GPU worker (generators, Zarr reads) writes them here, so the tasks after it
    copy them to the GPU as they are; on a worker without a GPU, plain NumPy memory."""
    if not worker_has_gpu():
        return np.empty(shape, dtype)
    import cupyx

    return cupyx.empty_pinned(shape, dtype=dtype)


def _unregister(registered) -> None:
    import sys

    cupy = sys.modules.get("cupy")
    while registered:
        x = registered.pop()
        try:
            cupy.cuda.runtime.hostUnregister(x.ctypes.data)
        except Exception:  # the copies are done; a failed unregister only leaks a pin
            pass


def _upload(x, stream, registered):
    """x (NumPy) copied to the current GPU on `stream`, straight from its registered memory."""
    import cupy

    host = _register(x, registered)
    d = cupy.empty(host.shape, host.dtype)
    d.set(host, stream=stream)
    return d


def _pipelined(state, fn, operands, check):
    """fn over NumPy operands on the GPU, in slices of axis 0 spread over PIPELINE_STREAMS streams.

    Each slice is copied in, checked, transformed and copied out on one stream; the streams run
    side by side, so the copies of one slice overlap the kernels and the opposite copies of others.
    The host waits once, at the end."""
    import cupy
    import cupyx

    rows = max(op.shape[0] if op.ndim else 1 for op in operands)
    sliced = [op.ndim > 0 and op.shape[0] == rows for op in operands]
    row_bytes = sum(op[0].nbytes for op, s in zip(operands, sliced) if s) or 1
    step = max(1, min(rows, STAGE_BYTES // row_bytes))
    streams = state.streams(PIPELINE_STREAMS)
    registered = []
    out, flags, slices = None, None, list(range(0, rows, step))
    try:
        with state.phase("register"):
            hosts = [_register(op, registered) if s else op for op, s in zip(operands, sliced)]
        with streams[0]:
            with state.phase("copy in"):
                fixed = [None if s else _upload(op, streams[0], registered) for op, s in zip(operands, sliced)]
            if check is not None:
                bound = _device_bound(state, check)
                flags = cupy.zeros((len(slices) + 1, check.operands), dtype=cupy.bool_)
                for k in range(check.operands):
                    if not sliced[k] and fixed[k].size:  # a broadcast operand is checked once
                        _fused_check(state, fixed[k], bound, out=flags[len(slices), k, ...])
        ready = state.record(streams[0])  # the flags' zeros and the broadcast operands come first
        for s in streams[1:]:
            s.wait_event(ready)
        for index, start in enumerate(slices):
            stop = min(start + step, rows)
            stream = streams[index % len(streams)]
            with stream:
                with state.phase("copy in"):
                    device_ops = []
                    for k, (host, s) in enumerate(zip(hosts, sliced)):
                        if not s:
                            device_ops.append(fixed[k])
                            continue
                        d = cupy.empty((stop - start,) + host.shape[1:], host.dtype)
                        d.set(host[start:stop], stream=stream)
                        device_ops.append(d)
                if check is not None:
                    for k in range(check.operands):
                        if sliced[k]:
                            _fused_check(state, device_ops[k], bound, out=flags[index, k, ...])
                with state.phase("transform"):
                    y = fn(*device_ops)
                if out is None:
                    with state.phase("result alloc"):
                        out = cupyx.empty_pinned((rows,) + y.shape[1:], y.dtype)
                with state.phase("copy out"):
                    cupy.asnumpy(y, stream=stream, out=out[start:stop], blocking=False)
                del device_ops, y  # back to this stream's pool: reused in stream order
        with state.phase("pipeline wait"):
            for stream in streams:
                stream.synchronize()
        if flags is not None and bool(flags.get(stream=streams[0]).any()):
            check.raise_for(list(operands[: check.operands]), np)
    except BaseException:
        for stream in streams:
            stream.synchronize()  # no copy may still read registered memory or write `out`
        raise
    finally:
        with state.phase("unregister"):
            _unregister(registered)
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
def failures_named(where):
    """Re-raise a failure of the block with `where` (the task's chunk, or a function giving it, called
    only on failure) in its message; the original stays its __cause__."""
    try:
        yield
    except _CONTEXT_TYPES as exc:
        _rename(exc, where)


def _rename(exc, where) -> NoReturn:
    if type(exc) not in _CONTEXT_TYPES:  # subclasses may take other constructor arguments
        raise exc
    raise type(exc)(f"{exc} (in {where if isinstance(where, str) else where()})") from exc


def run_task(fn, *operands, device: str, where, keep_on_device: bool = False, check: EntryCheck | None = None):
    """on_worker, with the task named in the message of a failure (the original is its __cause__).

    where: the task's name for that message, or a function giving it (called only on failure)."""
    state = current_state()
    try:
        with state.phase("task"):
            return _on_worker(state, fn, operands, device, keep_on_device, check)
    except _CONTEXT_TYPES as exc:
        _rename(exc, where)
