"""The worker-side GPU path against a NumPy model of the few CuPy calls it makes.

The model keeps device-to-host copies pending until their event (or stream) is synchronised, as a
GPU would, so reading a pinned output buffer too early shows up as wrong data. The real thing runs
in the GPU tests.
"""

import sys
import types
from typing import ClassVar

import numpy as np
import pytest

import hebatch as hb
from hebatch.distributed import plugin, worker

from .dist_support import residues

Q = hb.ntt_primes(60, 2**10, 2)


class _DeviceArray(np.ndarray):
    """A 'device' array: NumPy memory, CuPy's set(), get() and data pointer."""

    def set(self, host, stream=None):
        assert isinstance(host, np.ndarray) and host.flags.c_contiguous and host.shape == self.shape
        assert stream is _Model.current, "copies go on the task's stream"
        start = host.ctypes.data
        assert start in getattr(_Model, "pinned", ()) or any(
            p <= start and start + host.nbytes <= p + n for p, n in _Model.registered.items()
        ), "uploads read registered or pinned host memory"
        self[...] = host  # kernels later in the stream see it

    def get(self, stream=None):
        _Model.flush()
        return np.array(self)

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data, mem=None)


class _Model:
    """Copies stay pending until a stream or event is synchronised, as on a GPU: reading a result too
    early, or changing host memory that a pending copy still reads, shows up as wrong data."""

    pending: ClassVar[list] = []
    current = None
    registered: ClassVar[dict] = {}
    log: ClassVar[list] = []  # "fn" (a transform queued), "wait" (the host waited for the GPU)

    @classmethod
    def flush(cls):
        while cls.pending:
            dst, src, snapshot = cls.pending.pop(0)
            assert np.array_equal(src, snapshot), "host memory changed under a pending copy"
            dst[...] = src


def _model():
    _Model.pending.clear()
    _Model.registered.clear()
    _Model.log.clear()

    class Event:
        def synchronize(self):
            _Model.log.append("wait")
            _Model.flush()

    class Stream:
        def __init__(self, non_blocking=False):
            assert not non_blocking, "task streams are blocking streams (ordered with the default stream)"

        def __enter__(self):
            self.previous, _Model.current = _Model.current, self
            return self

        def __exit__(self, *exc):
            _Model.current = self.previous

        def record(self):
            return Event()

        def wait_event(self, event):
            pass

        def synchronize(self):
            _Model.log.append("wait")
            _Model.flush()

    def empty(shape, dtype):
        return np.empty(shape, dtype).view(_DeviceArray)

    def zeros(shape, dtype):
        return np.zeros(shape, dtype).view(_DeviceArray)

    def asnumpy(a, stream=None, out=None, blocking=True):
        assert stream is _Model.current and not blocking
        assert out.ctypes.data in _Model.pinned, "results are copied into pinned memory"
        _Model.pending.append((out, a, np.array(a)))

    def host_register(ptr, size, flags):
        assert ptr not in _Model.registered
        _Model.registered[ptr] = size

    def host_unregister(ptr):
        assert not _Model.pending, "host memory unregistered while a copy may read it"
        del _Model.registered[ptr]

    _Model.pinned = set()

    def empty_pinned(shape, dtype):
        out = np.empty(shape, dtype)
        _Model.pinned.add(out.ctypes.data)
        _Model.pinned.update(out[i:].ctypes.data for i in range(out.shape[0] if out.ndim else 0))
        return out

    cupy = types.ModuleType("cupy")
    cupy.ndarray, cupy.empty, cupy.zeros, cupy.asnumpy = _DeviceArray, empty, zeros, asnumpy
    cupy.asarray = lambda a: np.asarray(a).view(_DeviceArray)
    cupy.bool_ = np.bool_
    cupy.stack = lambda arrays: np.stack(arrays).view(_DeviceArray)
    cupy.cuda = types.SimpleNamespace(
        Stream=Stream,
        Device=lambda: types.SimpleNamespace(id=0),
        get_current_stream=lambda: _Model.current or Stream(),
        runtime=types.SimpleNamespace(hostRegister=host_register, hostUnregister=host_unregister),
    )
    cupyx = types.ModuleType("cupyx")
    cupyx.empty_pinned = empty_pinned
    return cupy, cupyx


@pytest.fixture
def model_gpu(monkeypatch):
    cupy, cupyx = _model()
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    monkeypatch.setattr(worker, "worker_has_gpu", lambda: True)
    state = plugin.WorkerState()  # fresh streams and kernels for the stand-in CuPy
    state._has_gpu = True
    monkeypatch.setattr(worker, "current_state", lambda: state)
    yield cupy
    assert not _Model.registered, "every registered chunk is unregistered"


def _on_model_device(fn):
    """fn on 'device' arrays, checking that it only ever sees them inside the task's stream."""

    def run(*arrays):
        cupy = sys.modules["cupy"]
        assert _Model.current is not None
        _Model.log.append("fn")
        assert all(isinstance(a, cupy.ndarray) for a in arrays)
        return fn(*[np.asarray(a) for a in arrays]).view(cupy.ndarray)

    return run


@pytest.mark.parametrize("stage_rows", [1, 3, 7, 50, 1000])
def test_staged_host_chunks_in_slices(model_gpu, monkeypatch, stage_rows):
    monkeypatch.setattr(worker, "STAGE_BYTES", stage_rows * 2 * 2**10 * 8)
    x = np.stack([residues(q, (50, 2**10)) for q in Q], axis=1)
    got = worker.on_worker(_on_model_device(lambda v: hb.ntt(v, Q, negacyclic=True)), x, device="auto")
    assert type(got) is np.ndarray and np.array_equal(got, hb.ntt(x, Q, negacyclic=True))


def test_staged_broadcast_operand_and_strided_input(model_gpu, monkeypatch):
    monkeypatch.setattr(worker, "STAGE_BYTES", 4 * 2 * 2**10 * 8)
    a = np.stack([residues(q, (30, 2**10)) for q in Q], axis=1)[::2]  # strided rows
    b = np.stack([residues(q, (1, 2**10)) for q in Q], axis=1)
    got = worker.on_worker(_on_model_device(lambda u, v: hb.polymul(u, v, Q)), a, b, device="gpu")
    assert np.array_equal(got, hb.polymul(a, b, Q))


def test_device_operands_and_keep_on_device(model_gpu):
    x = residues(Q[0], (6, 64))
    on_device = x.copy().view(model_gpu.ndarray)
    got = worker.on_worker(_on_model_device(lambda v: hb.ntt(v, Q[0])), on_device, device="cpu")
    assert isinstance(got, model_gpu.ndarray) and np.array_equal(np.asarray(got), hb.ntt(x, Q[0]))
    kept = worker.on_worker(_on_model_device(lambda v: hb.ntt(v, Q[0])), x, device="auto", keep_on_device=True)
    assert isinstance(kept, model_gpu.ndarray) and np.array_equal(np.asarray(kept), hb.ntt(x, Q[0]))


def test_cpu_paths_and_errors_with_context():
    x = residues(Q[0], (4, 32))
    assert np.array_equal(worker.on_worker(lambda v: hb.ntt(v, Q[0]), x, device="cpu"), hb.ntt(x, Q[0]))
    x[2, 3] = Q[0]
    with pytest.raises(ValueError, match=r"entries >= modulus.* \(in my task\)$") as info:
        worker.run_task(lambda v: hb.ntt(v, Q[0]), x, device="cpu", where="my task")
    assert "in my task" not in str(info.value.__cause__)

    class Custom(ValueError):
        def __init__(self, code):
            super().__init__(f"code {code}")

    def custom(v):
        raise Custom(7)

    with pytest.raises(Custom, match=r"^code 7$"):  # subclasses pass through unchanged
        worker.run_task(custom, x, device="cpu", where="my task")
    assert worker.describe_block("label", None) == "label"
    with pytest.raises(ValueError, match="device"):
        worker.check_device("tpu")


@pytest.mark.parametrize("bad_row", [None, 0, 17])
def test_entry_check_fused_on_the_device(model_gpu, monkeypatch, bad_row):
    """The check runs on the device per slice (the transform itself does not check) and is read once."""
    monkeypatch.setattr(worker, "STAGE_BYTES", 3 * 2 * 2**10 * 8)
    x = np.stack([residues(q, (20, 2**10)) for q in Q], axis=1)
    check = worker.EntryCheck(tuple(Q), True)
    fn = _on_model_device(lambda v: hb.ntt(v, Q, check=False))
    if bad_row is not None:
        x[bad_row, 1, 5] = Q[1] + 3
    for operand, keep in ((x, False), (x.copy().view(model_gpu.ndarray), False), (x, True)):
        if bad_row is None:
            got = worker.on_worker(fn, operand, check=check, keep_on_device=keep)
            assert np.array_equal(np.asarray(got), hb.ntt(x, Q))
        else:
            with pytest.raises(ValueError, match=rf"x has entries >= its limb's modulus \(e.g. {Q[1] + 3}\)"):
                worker.on_worker(fn, operand, check=check, keep_on_device=keep)
    b = x[:1].copy()
    b[0, 0, 0] = Q[0]  # a broadcast operand is checked too
    pair = worker.EntryCheck(tuple(Q), True, ("a", "b"))
    with pytest.raises(ValueError, match="has entries >="):
        worker.on_worker(_on_model_device(lambda u, v: hb.polymul(u, v, Q, check=False)), x, b, check=pair)


def test_device_check_shares_one_flag_per_thread_reset_per_task(model_gpu):
    """Device operands: every checked operand sets this thread's one flag, which each task resets, so
    a failure (here only in b) is found, and a good task after it passes."""
    x = np.stack([residues(q, (6, 2**10)) for q in Q], axis=1)
    a, b = x.copy().view(model_gpu.ndarray), x[::-1].copy().view(model_gpu.ndarray)
    pair = worker.EntryCheck(tuple(Q), True, ("a", "b"))
    fn = _on_model_device(lambda u, v: hb.polymul(u, v, Q, check=False))
    b_bad = b.copy().view(model_gpu.ndarray)
    b_bad[4, 1, 7] = Q[1]
    with pytest.raises(ValueError, match=r"^b has entries >= its limb's modulus"):
        worker.on_worker(fn, a, b_bad, check=pair)
    flag = worker.current_state().device_flag()
    got = worker.on_worker(fn, a, b, check=pair)
    assert np.array_equal(np.asarray(got), hb.polymul(x, x[::-1], Q))
    assert worker.current_state().device_flag() is flag and not bool(flag)


def test_host_waits_once_per_task_after_everything_is_queued(model_gpu, monkeypatch):
    """Host chunks: every slice is queued before the host waits (one wait per stream, at the end).
    Device chunks: no wait without the entry check; with it, one wait, after the transform is queued."""
    monkeypatch.setattr(worker, "STAGE_BYTES", 2 * 2 * 2**10 * 8)
    x = np.stack([residues(q, (12, 2**10)) for q in Q], axis=1)
    fn = _on_model_device(lambda v: hb.ntt(v, Q, check=False))
    check = worker.EntryCheck(tuple(Q), True)
    worker.on_worker(fn, x, check=check)  # the first also uploads the moduli, once per worker
    _Model.log.clear()
    worker.on_worker(fn, x, check=check)
    last = max(i for i, e in enumerate(_Model.log) if e == "fn")
    assert _Model.log.count("fn") == 6 and "wait" not in _Model.log[:last]
    assert _Model.log.count("wait") == worker.PIPELINE_STREAMS
    on_device = x.copy().view(model_gpu.ndarray)
    _Model.log.clear()
    worker.on_worker(fn, on_device)
    assert _Model.log == ["fn"]
    _Model.log.clear()
    worker.on_worker(fn, on_device, check=check)
    assert _Model.log == ["fn", "wait"]


def test_pinned_chunks_are_not_registered_again(model_gpu, monkeypatch):
    """A chunk already in pinned memory (made there on the worker) is copied as it is."""
    monkeypatch.setattr(worker, "STAGE_BYTES", 3 * 2 * 2**10 * 8)
    x = sys.modules["cupyx"].empty_pinned((20, 2, 2**10), np.uint64)
    x[...] = np.stack([residues(q, (20, 2**10)) for q in Q], axis=1)
    monkeypatch.setattr(worker, "is_pinned", lambda a: a.ctypes.data in _Model.pinned)
    monkeypatch.setattr(sys.modules["cupy"].cuda.runtime, "hostRegister", None)  # never called
    got = worker.on_worker(_on_model_device(lambda v: hb.ntt(v, Q, negacyclic=True)), x, device="gpu")
    assert np.array_equal(got, hb.ntt(x, Q, negacyclic=True))


def test_pinned_memory_unknown_to_cuda_is_pageable(model_gpu):
    assert not worker.is_pinned(np.ones(8))  # the stand-in runtime has no pointer attributes: pageable


def test_pinned_empty_is_numpy_on_cpu_workers(monkeypatch):
    monkeypatch.setattr(worker, "worker_has_gpu", lambda: False)
    a = worker.pinned_empty((3, 4), np.uint64)
    assert type(a) is np.ndarray and a.shape == (3, 4) and a.dtype == np.uint64
