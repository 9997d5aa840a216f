"""Per-worker state of hebatch jobs, owned by a Dask WorkerPlugin.

`HebatchPlugin` is registered on every worker by `dist.cluster` (and can be registered on any
cluster: `client.register_plugin(HebatchPlugin())`). When a worker starts it builds the worker's
`WorkerState` (CUDA streams per task thread, the pinned output pool, the fused entry-check kernel,
BFV and BGV contexts), points CuPy at RMM when a pool was asked for, and loads the kernels of the transforms
it is told about (`warm`: from a prebuilt cubin, HEBATCH_KERNEL_CUBIN, or compiled by NVRTC), so no
task pays a compile. Tasks find the state with `current_state()`; tasks that run outside a worker
(Dask's local scheduler) share one state of this process.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np

from ..device import gpu_available

PLUGIN_NAME = "hebatch"
COPY_THREADS = 8  # host copies run on several cores (NumPy drops the GIL): one core copies slower than PCIe
PRODUCERS_KEPT = 4096  # device results whose producing stream is remembered (for cross-stream ordering)


def scheme_module(name: str):
    """hebatch.bfv or hebatch.bgv by name (imported where first needed: the scheduler layer loads
    neither scheme unless a job uses it)."""
    if name not in ("bfv", "bgv"):
        raise ValueError(f"scheme must be 'bfv' or 'bgv', got {name!r}")
    return importlib.import_module(f"hebatch.{name}")


class WorkerState:
    """What a worker process keeps between tasks. Thread-safe; GPU parts are made on first use."""

    def __init__(self):
        self.lock = threading.Lock()
        self._thread = threading.local()
        self._copy_pool = None
        self._has_gpu = None
        self.contexts: dict = {}  # (scheme, params fingerprint, backend) -> bfv or bgv Context
        self.kernels: dict = {}  # name -> compiled CuPy kernel (the fused entry check)
        self.producers: dict = {}  # device pointer -> (stream, its event) that wrote it last
        self.warmed: list = []  # transforms whose kernels were loaded at start-up
        self.allocator = "cupy"  # CuPy's allocator: "cupy" (its own pool) or "rmm"
        self.timed = os.environ.get("HEBATCH_TASK_TIMES") == "1"
        # CuPy's per-thread default streams do not wait for the task streams: tasks then wait for theirs
        self.per_thread_default_stream = os.environ.get("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM") == "1"
        self.times: dict = {}  # phase -> (host seconds, count), when timed
        self._phases: dict = {}  # phase name -> its context manager (see `phase`)

    # -- devices ---------------------------------------------------------------------------------
    def has_gpu(self) -> bool:
        if self._has_gpu is None:
            self._has_gpu = gpu_available()
        return self._has_gpu

    def streams(self, count: int = 1):
        """This thread's `count` CUDA streams on the current device (made once, reused by its tasks).

        Blocking streams (not `non_blocking`): work on CUDA's legacy default stream, which Dask's
        serialisation and `ndarray.get()` use, waits for them, so results need no host synchronisation
        before they leave a task."""
        import cupy

        device = cupy.cuda.Device().id
        mine = getattr(self._thread, "streams", None)
        if mine is None:
            mine = self._thread.streams = {}
        found = [s for s in mine.get(device, []) if isinstance(s, cupy.cuda.Stream)]  # (CuPy reloaded: new ones)
        if len(found) < count:
            found += [cupy.cuda.Stream(non_blocking=False) for _ in range(count - len(found))]
            mine[device] = found
        return found[:count]

    def order_after_producers(self, stream, arrays) -> list:
        """Make `stream` wait (on the GPU, not the host) for the task streams that wrote `arrays`;
        returns those streams (see `release_to`)."""
        with self.lock:
            found = {
                id(s): (s, e)
                for s, e in (self.producers.get(_base_ptr(a), (None, None)) for a in arrays)
                if s is not None and s is not stream
            }
        for _, event in found.values():
            stream.wait_event(event)
        return [s for s, _ in found.values()]

    def release_to(self, producers, stream) -> None:
        """Make the producers' streams wait for `stream`'s reads: memory freed back to their pools may
        be reused by their next kernels, which must not overwrite what `stream` still reads."""
        if producers:
            done = self.record(stream)
            for producer in producers:
                producer.wait_event(done)

    def produced(self, stream, arrays) -> None:
        """Record that `stream` wrote `arrays` (read by order_after_producers in later tasks)."""
        event = self.record(stream)
        with self.lock:
            for a in arrays:
                self.producers.pop(_base_ptr(a), None)
                self.producers[_base_ptr(a)] = (stream, event)
            while len(self.producers) > PRODUCERS_KEPT:  # oldest first: their work is long done
                self.producers.pop(next(iter(self.producers)))

    @staticmethod
    def record(stream):
        """An event recorded on `stream` for ordering only (no timing: cheaper to record and wait on)."""
        import cupy

        event_type = getattr(cupy.cuda, "Event", None)
        if event_type is None:  # a stand-in CuPy (tests)
            return stream.record()
        event = event_type(disable_timing=True)
        event.record(stream)
        return event

    def wait_for(self, array) -> None:
        """Block until the stream that wrote `array` has finished it (before reading it on the host)."""
        with self.lock:
            _, event = self.producers.get(_base_ptr(array), (None, None))
        if event is not None:
            event.synchronize()

    def device_flag(self):
        """This thread's one-byte device flag on the current GPU (for the entry check: reset, set and
        read in its stream's order, so one serves every task of the thread)."""
        import cupy

        device = cupy.cuda.Device().id
        flags = getattr(self._thread, "device_flags", None)
        if flags is None:
            flags = self._thread.device_flags = {}
        flag = flags.get(device)
        if flag is None:
            flag = flags[device] = cupy.zeros((), cupy.bool_)
        return flag

    def pinned_flag(self):
        """This thread's one-byte pinned buffer for a device verdict (reused: read before the next use)."""
        import cupyx

        flag = getattr(self._thread, "flag", None)
        if flag is None:
            flag = self._thread.flag = cupyx.empty_pinned((), dtype=np.bool_)
        return flag

    def copy_pool(self) -> ThreadPoolExecutor:
        with self.lock:
            if self._copy_pool is None:
                self._copy_pool = ThreadPoolExecutor(COPY_THREADS, thread_name_prefix="hebatch-copy")
            return self._copy_pool

    def kernel(self, name: str, make):
        with self.lock:
            if name not in self.kernels:
                self.kernels[name] = make()
            return self.kernels[name]

    def scheme_context(self, scheme: str, params, backend: str = "auto"):
        """The context of `scheme` ("bfv" or "bgv") for (params, backend) on this worker, built once and
        reused by every task. Chunks are batches that keep the GPU busy on their own, so BFV kernels
        launch directly (no CUDA graphs: recording them in a worker running several tasks at once failed
        on the GPU)."""
        key = (scheme, params.fingerprint, backend)
        with self.lock:
            if key not in self.contexts:
                options = {"graphs": False} if scheme == "bfv" else {}
                self.contexts[key] = scheme_module(scheme).Context(params, backend=backend, **options)
            return self.contexts[key]

    def phase(self, name: str):
        """An NVTX range around a phase of a task (copy in, transform, copy out, ...) on a GPU worker, as
        Nsight Systems shows them; nothing on CPU workers. With HEBATCH_TASK_TIMES=1 the host time spent
        in each phase (queuing work, or waiting for it) is also summed (`task_times`).
        Tasks enter several phases each, so this is kept to a lookup: one range object per name,
        made once (ranges hold no state of their own)."""
        found = self._phases.get(name)
        if found is None:
            if not self.has_gpu():
                found = nullcontext()
            else:
                found = _Range(_nvtx(), name)
                if self.timed:
                    found = _Timed(self, found, name)
            self._phases[name] = found
        return found

    def _add_time(self, name: str, elapsed: float) -> None:
        with self.lock:
            total, count = self.times.get(name, (0.0, 0))
            self.times[name] = (total + elapsed, count + 1)

    def task_times(self, reset: bool = False) -> dict:
        """{phase: (host seconds summed over tasks, count)} since the last reset (HEBATCH_TASK_TIMES=1)."""
        with self.lock:
            times = dict(self.times)
            if reset:
                self.times.clear()
        return times

    def close(self) -> None:
        with self.lock:
            if self._copy_pool is not None:
                self._copy_pool.shutdown(wait=False)
                self._copy_pool = None
            self.contexts.clear()
            self.kernels.clear()
            self.producers.clear()


def _base_ptr(a) -> int:
    """The start of the allocation holding a device array (views of one result share it)."""
    memory = getattr(a.data, "mem", None)
    return int(getattr(memory, "ptr", None) or a.data.ptr)


def _nvtx():
    """CuPy's NVTX module, or None without it."""
    try:
        from cupy.cuda import nvtx
    except ImportError:
        return None
    return nvtx


class _Range:
    """An NVTX range as a reusable context manager (no state per use, so threads may share it)."""

    __slots__ = ("name", "pop", "push")

    def __init__(self, nvtx, name: str):
        self.name = name
        self.push = nvtx.RangePush if nvtx is not None else None
        self.pop = nvtx.RangePop if nvtx is not None else None

    def __enter__(self):
        if self.push is not None:
            self.push(self.name)

    def __exit__(self, *exc):
        if self.pop is not None:
            self.pop()


class _Timed:
    """A phase's range with its host time summed into the state (HEBATCH_TASK_TIMES=1). Start times are
    kept per thread (a stack: one name may nest), so threads may share it."""

    __slots__ = ("inner", "local", "name", "state")

    def __init__(self, state, inner, name: str):
        self.state, self.inner, self.name, self.local = state, inner, name, threading.local()

    def __enter__(self):
        self.inner.__enter__()
        starts = getattr(self.local, "starts", None)
        if starts is None:
            starts = self.local.starts = []
        starts.append(time.perf_counter())

    def __exit__(self, *exc):
        elapsed = time.perf_counter() - self.local.starts.pop()
        self.inner.__exit__(*exc)
        self.state._add_time(self.name, elapsed)


def _warm(spec) -> str:
    """Run one tiny transform of the given shape on this worker's device: its kernels load now."""
    import hebatch as hb

    log_n, moduli, negacyclic = spec
    moduli = tuple(int(q) for q in (moduli if isinstance(moduli, (list, tuple)) else [moduli]))
    import cupy

    x = cupy.zeros((1, len(moduli), 1 << int(log_n)), dtype=cupy.uint64)
    arg = moduli if len(moduli) > 1 else moduli[0]
    if len(moduli) == 1:
        x = x[:, 0]
    y = hb.ntt(x, arg, negacyclic=bool(negacyclic))
    hb.intt(y, arg, negacyclic=bool(negacyclic))
    hb.polymul(x, x, arg, negacyclic=bool(negacyclic))
    cupy.cuda.Device().synchronize()
    return f"2^{log_n} x {len(moduli)} {'negacyclic' if negacyclic else 'cyclic'}"


def _use_rmm_for_cupy() -> bool:
    """CuPy allocates through RMM's current resource (the pool dask-cuda made); False without RMM."""
    try:
        import cupy
        from rmm.allocators.cupy import rmm_cupy_allocator
    except ImportError:
        return False
    cupy.cuda.set_allocator(rmm_cupy_allocator)
    return True


try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # distributed is a dependency; this only keeps the module importable without it
    _WorkerPlugin = object


class HebatchPlugin(_WorkerPlugin):
    """Sets up a worker for hebatch tasks (registered under the name "hebatch").

    warm: transforms whose kernels are loaded at start-up, as (log2 n, moduli, negacyclic) tuples.
    rmm: True when the cluster was given an RMM pool: CuPy then allocates from it (dask-cuda does this
    itself with rmm_allocator_external_lib_list=["cupy"]; doing it here too covers older dask-cuda and
    clusters started elsewhere).
    """

    name = PLUGIN_NAME
    idempotent = True

    def __init__(self, warm=(), rmm: bool = False):
        try:
            self.warm = tuple(
                (int(n), tuple(int(q) for q in (m if isinstance(m, (list, tuple)) else [m])), bool(c))
                for n, m, c in warm
            )
        except (TypeError, ValueError):
            raise ValueError(f"warm must be a list of (log2 n, moduli, negacyclic) tuples, got {warm!r}") from None
        if any(not 1 <= n <= 28 for n, _, _ in self.warm):
            raise ValueError(f"warm: log2 n must be 1..28, got {warm!r}")
        self.rmm = bool(rmm)
        self.state = None

    def setup(self, worker=None):
        self.state = WorkerState()
        if not self.state.has_gpu():
            return
        if (self.rmm and _use_rmm_for_cupy()) or _cupy_uses_rmm():
            self.state.allocator = "rmm"
        for spec in self.warm:
            self.state.warmed.append(_warm(spec))

    def teardown(self, worker=None):
        if self.state is not None:
            self.state.close()


def _cupy_uses_rmm() -> bool:
    try:
        import cupy

        allocator = cupy.cuda.get_allocator()
    except (ImportError, AttributeError):
        return False
    return "rmm" in (getattr(allocator, "__module__", "") or "") + (getattr(allocator, "__name__", "") or "")


class _LocalState:
    """The state shared by tasks that run outside a Dask worker (the local scheduler, this process)."""

    state: WorkerState | None = None
    lock = threading.Lock()


def current_state() -> WorkerState:
    """The state of the worker running this task: its plugin's, else one kept on the worker object
    (a cluster without the plugin), else this process's (no worker: Dask's local scheduler)."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        worker = None
    if worker is not None:
        plugin = worker.plugins.get(PLUGIN_NAME)
        if isinstance(plugin, HebatchPlugin) and plugin.state is not None:
            return plugin.state
        with _LocalState.lock:
            state = getattr(worker, "_hebatch_state", None)
            if state is None:
                state = worker._hebatch_state = WorkerState()
            return state
    with _LocalState.lock:
        if _LocalState.state is None:
            _LocalState.state = WorkerState()
        return _LocalState.state


def worker_report(dask_worker=None, reset=False) -> dict:
    """What a worker's plugin set up (for client.run): GPU, allocator, kernels warmed, and with
    HEBATCH_TASK_TIMES=1 the host time of each task phase since the last reset (reset: start anew)."""
    state = current_state() if dask_worker is None else _state_of(dask_worker)
    report = {
        "plugin": dask_worker is not None and PLUGIN_NAME in dask_worker.plugins,
        "gpu": state.has_gpu(),
        "allocator": state.allocator,
        "warmed": list(state.warmed),
        "contexts": len(state.contexts),
    }
    if state.timed:
        report["task_times"] = state.task_times(reset=bool(reset))
    if state.has_gpu():
        import cupy

        report["cupy_pool_used_bytes"] = int(cupy.get_default_memory_pool().used_bytes())
        report["cupy_allocator_rmm"] = _cupy_uses_rmm()
    return report


def _state_of(worker) -> WorkerState:
    plugin = worker.plugins.get(PLUGIN_NAME)
    if isinstance(plugin, HebatchPlugin) and plugin.state is not None:
        return plugin.state
    return getattr(worker, "_hebatch_state", None) or WorkerState()


__all__ = ["HebatchPlugin", "WorkerState", "current_state", "worker_report", "PLUGIN_NAME"]
