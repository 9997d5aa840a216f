"""CUDA graph replay of deterministic device computations (CuPy).

A BFV multiplication or rotation on one ciphertext is some forty kernel launches of a few
microseconds of GPU work each; launched one by one from Python, the host is the bottleneck. A
`GraphReplayer` records such a computation once as a CUDA graph and afterwards replays it with one
launch.

What may be recorded: a function of device arrays that returns one new device array, launches its
work on the current stream, never waits for the GPU or copies from the host once it has run for
these shapes (its tables and plans are cached by then), and always launches the same kernels with the
same scalar arguments for the same cache key. Anything that reads results back to the host cannot be
recorded. A function that samples randomness is recorded only when the caller names the engine it
draws from (`sampler`): its graph then draws under a ChaCha20 key and nonce counter of its own, on the
device, so every replay draws fresh randomness (an encryption replayed twice never repeats its noise).

Life of a cache key: the first call runs the function directly (building tables and plans); the
second records the graph on a private stream with a private memory pool (so no other allocation ever
reuses its buffers), replays it once and compares with a direct run: only an identical result keeps
the graph (otherwise the key runs directly from then on, with a warning). A sampling graph is checked
the same way: its counter is rewound between the replay and the direct run, which draws under the
graph's own sampler, so both see the same randomness and only one of the two results is returned.
Later calls copy the inputs into the graph's input buffers, replay, and copy the output out.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections import OrderedDict

_SEEN, _OFF = "seen", "off"


def _copy_into(dst, src):
    """dst[...] = src on the current stream: a plain device-to-device copy where both are contiguous
    (a few microseconds less host time than an element-wise copy kernel)."""
    if src.flags.c_contiguous and hasattr(dst.data, "copy_from_device_async"):
        dst.data.copy_from_device_async(src.data, src.nbytes)
    else:
        dst[...] = src


def _drawing(sampler, sampling):
    """Random draws inside the block come from a graph's own sampler (none without a sampler)."""
    return sampler.sampling_with(sampling) if sampler is not None else contextlib.nullcontext()


class _Recorded:
    """One recorded graph: its input and constant buffers, output buffer and private memory pool."""

    def __init__(self, cp, fn, inputs, constants, owners, sampler=None):
        self.cp = cp
        # a sampling graph's own (key, counter), made before the capture: a counter allocated inside the
        # recording would be zeroed again by every replay
        self.sampling = sampler.private_sampler() if sampler is not None else None
        self.pool = cp.cuda.MemoryPool()
        with cp.cuda.using_allocator(self.pool.malloc):
            self.inputs = [cp.empty(a.shape, dtype=a.dtype) for a in inputs]
            self.constants = [cp.empty(c.shape, dtype=c.dtype) for c in constants]
        for dst, src in zip(self.constants, constants):
            _copy_into(dst, src)
        self.owners = list(owners)  # held, so that an id is never reused for another key while recorded
        stream = cp.cuda.Stream(non_blocking=True)
        # the buffers were filled on the caller's stream; the recording stream orders nothing at replay
        stream.begin_capture()
        out = None
        try:
            with cp.cuda.using_allocator(self.pool.malloc), stream, _drawing(sampler, self.sampling):
                out = fn(*self.inputs, *self.constants)
        finally:
            graph = stream.end_capture()  # raises too when the recording was invalidated
        if not isinstance(out, cp.ndarray):
            raise TypeError(f"a recorded function must return one CuPy array, got {type(out).__name__}")
        self.graph, self.out = graph, out
        total = getattr(self.pool, "total_bytes", None)
        self.nbytes = total() if total is not None else 0  # device memory this graph holds
        self.lock = threading.Lock()
        # recorded after each replay's output copy: one event, recorded again each time (creating one per replay
        # cost about 3 us of host time on an H100's host, 2026-11-26); waiting on it before its first record
        # waits for nothing
        self.done = cp.cuda.Event(disable_timing=True)

    def replay(self, inputs, constants, owners):
        """The graph's output for these inputs, or None once released (evicted from another thread)."""
        with self.lock:
            return None if self.graph is None else self._replay(inputs, constants, owners)

    def release(self):
        """Frees the graph and its memory now, in order: once the device has finished its replays, the graph
        first, then its buffers and pool. Left to the teardown of a dropped entry (its attributes in any order),
        an eviction made a later context's first recorded graph replay into an illegal address on an H100
        (2026-11-27, benchmarks/results/bfv-two-contexts-crash-probe-H100-80GB-HBM3-2026-11-27.json)."""
        with self.lock:
            self.cp.cuda.Device().synchronize()
            self.graph = self.out = None
            self.inputs, self.constants = [], []
            self.pool.free_all_blocks()

    def _replay(self, inputs, constants, owners):
        cp = self.cp
        stream = cp.cuda.get_current_stream()
        stream.wait_event(self.done)  # a replay from another stream may still read or write the buffers
        for dst, src in zip(self.inputs, inputs):
            _copy_into(dst, src)
        for i, (dst, src, owner) in enumerate(zip(self.constants, constants, owners)):
            if owner is not self.owners[i]:  # another key object: its data moves in
                _copy_into(dst, src)
                self.owners[i] = owner
        self.graph.launch(stream=stream)
        out = cp.empty(self.out.shape, dtype=self.out.dtype)  # the next replay overwrites self.out
        _copy_into(out, self.out)
        self.done.record(stream)
        return out


class GraphReplayer:
    """Records and replays CUDA graphs per cache key (see the module docstring).

    max_input_bytes: calls whose inputs are larger run directly (large batches keep the GPU busy without
    graphs, and each graph holds all its intermediates). max_constant_bytes: the same for the constants, of
    which each graph holds a copy (a key-switching key of n32768, 110 MB, is kept with the one-ciphertext
    graphs it serves; one of n65536, 0.9 GB, is not). max_graphs and max_graph_bytes: recorded graphs kept,
    and the device memory they may hold together (least recently used dropped first). cupy: the CuPy module
    (a stand-in in tests).
    """

    def __init__(
        self,
        max_input_bytes: int = 32 << 20,
        max_graphs: int = 32,
        max_graph_bytes: int = 2 << 30,
        cupy=None,
        max_constant_bytes: int = 256 << 20,
    ):
        if cupy is None:
            import cupy
        self.cp = cupy
        self.max_input_bytes, self.max_graphs, self.max_graph_bytes = max_input_bytes, max_graphs, max_graph_bytes
        self.max_constant_bytes = max_constant_bytes
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self.replays = 0  # calls answered by a graph (for tests and benchmarks)

    def __call__(self, key, fn, inputs=(), constants=(), owners=(), sampler=None):
        """fn(*inputs, *constants), replayed from a graph where possible.

        key: hashable, names fn and every scalar it bakes into its launches (shapes, dtypes and the
        device are added here). constants: arrays that rarely change (keys); owners: one object per
        constant whose identity says the constant's data is unchanged since the last call. sampler:
        the RnsOps engine fn draws randomness from, if it does (private_sampler, sampling_with and
        rewind_sampler: see the module docstring); without it a sampling fn is never kept as a graph.
        """
        cp = self.cp
        arrays = tuple(inputs) + tuple(constants)
        if (
            sum(a.nbytes for a in inputs) > self.max_input_bytes
            or sum(c.nbytes for c in constants) > self.max_constant_bytes
        ):
            return fn(*arrays)
        full_key = (key, cp.cuda.Device().id) + tuple((a.shape, a.dtype.str) for a in arrays)
        with self._lock:
            entry = self._entries.get(full_key)
            if entry is None:
                self._entries[full_key] = _SEEN
                self._trim()
            else:
                self._entries.move_to_end(full_key)
        if entry is None or entry == _OFF:
            return fn(*arrays)
        if entry == _SEEN:
            return self._record(full_key, fn, inputs, constants, owners, sampler)
        out = entry.replay(inputs, constants, owners)
        if out is None:  # evicted between the lookup and the replay
            return fn(*arrays)
        self.replays += 1
        return out

    def _record(self, full_key, fn, inputs, constants, owners, sampler):
        cp = self.cp
        arrays = tuple(inputs) + tuple(constants)
        try:
            recorded = _Recorded(cp, fn, inputs, constants, owners, sampler)
            out = recorded.replay(inputs, constants, owners)
        except Exception as err:  # recording is an optimisation; the direct run decides
            self._set(full_key, _OFF)
            warnings.warn(
                f"CUDA graph for {full_key[0]!r} not recorded ({type(err).__name__}: {err}); "
                "running its launches one by one",
                RuntimeWarning,
                stacklevel=3,
            )
            return fn(*arrays)
        if sampler is not None:  # the direct run draws what the replay drew
            sampler.rewind_sampler(recorded.sampling)
        with _drawing(sampler, recorded.sampling):
            direct = fn(*arrays)
        if not bool(cp.array_equal(out, direct)):
            self._set(full_key, _OFF)
            warnings.warn(
                f"CUDA graph for {full_key[0]!r} replayed a different result than its direct run; "
                "running its launches one by one",
                RuntimeWarning,
                stacklevel=3,
            )
            return direct
        self._set(full_key, recorded)
        return direct

    def _set(self, full_key, value):
        with self._lock:
            self._entries[full_key] = value
            self._trim()

    def _trim(self):
        recorded = [k for k, v in self._entries.items() if isinstance(v, _Recorded)]  # oldest first
        held = sum(self._entries[k].nbytes for k in recorded)
        while recorded and (len(recorded) > self.max_graphs or held > self.max_graph_bytes):
            dropped = self._entries.pop(recorded.pop(0))
            held -= dropped.nbytes
            dropped.release()
        while len(self._entries) > 4 * self.max_graphs:
            _, dropped = self._entries.popitem(last=False)
            if isinstance(dropped, _Recorded):
                dropped.release()


__all__ = ["GraphReplayer"]
