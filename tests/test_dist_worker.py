"""The worker-side GPU path against a NumPy model of the few CuPy calls it makes.

The model keeps device-to-host copies pending until their event (or stream) is synchronised, as a
GPU would, so reading a pinned output buffer too early shows up as wrong data. The real thing runs
in the GPU tests.
"""

import sys
import types

import numpy as np
import pytest

import hebatch as hb
from hebatch.distributed import worker

from .dist_support import residues

Q = hb.ntt_primes(60, 2**10, 2)


class _DeviceArray(np.ndarray):
    """A 'device' array: NumPy memory, CuPy's set()."""

    def set(self, host, stream=None):
        assert isinstance(host, np.ndarray) and host.flags.c_contiguous and host.shape == self.shape
        self[...] = host


def _model():
    pending = []  # device-to-host copies not yet done

    def flush():
        while pending:
            out, src = pending.pop(0)
            out[...] = src

    class Event:
        def synchronize(self):
            flush()

    class Stream:
        current = None

        def __init__(self, non_blocking=False):
            assert non_blocking

        def __enter__(self):
            Stream.current = self
            return self

        def __exit__(self, *exc):
            Stream.current = None

        def record(self):
            return Event()

        def synchronize(self):
            flush()

    def empty(shape, dtype):
        return np.empty(shape, dtype).view(_DeviceArray)

    def asnumpy(a, stream=None, out=None, blocking=True):
        assert Stream.current is not None and stream is Stream.current and not blocking
        pending.append((out, np.array(a)))  # copied later, like an asynchronous copy

    cupy = types.ModuleType("cupy")
    cupy.ndarray, cupy.empty, cupy.asnumpy = _DeviceArray, empty, asnumpy
    cupy.cuda = types.SimpleNamespace(Stream=Stream, Device=lambda: types.SimpleNamespace(id=0))
    cupyx = types.ModuleType("cupyx")
    cupyx.empty_pinned = lambda shape, dtype: np.empty(shape, dtype)
    return cupy, cupyx


@pytest.fixture
def model_gpu(monkeypatch):
    cupy, cupyx = _model()
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    monkeypatch.setattr(worker, "worker_has_gpu", lambda: True)
    return cupy


def _on_model_device(fn):
    """fn on 'device' arrays, checking that it only ever sees them inside the task's stream."""
    def run(*arrays):
        cupy = sys.modules["cupy"]
        assert cupy.cuda.Stream.current is not None
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

    with pytest.raises(Custom, match="^code 7$"):  # subclasses pass through unchanged
        worker.run_task(custom, x, device="cpu", where="my task")
    assert worker.describe_block("label", None) == "label"
    with pytest.raises(ValueError, match="device"):
        worker.check_device("tpu")
