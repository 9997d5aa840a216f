"""Programmatic dependent launch in recorded graphs (hebatch/backend/gpu/dependent_launch.py) on a GPU:
which edges become programmatic, and replays that equal the direct launches exactly on fresh inputs, many
times over (a kernel that ran ahead of its prerequisite would read stale data sooner or later). BFV
operations replayed from such graphs are checked in tests/test_gpu_rns.py::test_bfv_graph_replay."""

import numpy as np
import pytest

import hebatch as hb

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")


def record(fn, x):
    """fn(x) captured on a private stream: (the CuPy graph, its input buffer, its output)."""
    pool = cp.cuda.MemoryPool()
    stream = cp.cuda.Stream(non_blocking=True)
    with cp.cuda.using_allocator(pool.malloc), stream:
        buffer = cp.empty_like(x)
        stream.begin_capture()
        try:
            out = fn(buffer)
        finally:
            graph = stream.end_capture()
    return graph, buffer, out, pool


def replays_equal_direct_runs(graph, buffer, out, fn, make, times):
    stream = cp.cuda.Stream(non_blocking=True)
    for _ in range(times):
        x = make()
        with stream:
            buffer[...] = x
            graph.launch(stream=stream)
            got = out.copy()
        stream.synchronize()
        assert cp.array_equal(got, fn(x))


def test_edges_into_package_kernels_become_programmatic():
    """A chain of RNS kernels with one CuPy kernel in the middle: the edges into package kernels become
    programmatic (two between package kernels, one from the CuPy kernel), the edge into the CuPy kernel
    stays ordinary; replays equal the direct run on fresh inputs."""
    from hebatch.backend import get
    from hebatch.backend.gpu.dependent_launch import OverlappedGraph, overlapped

    if int(cp.cuda.Device().compute_capability) < 90:
        pytest.skip("programmatic dependent launch needs sm_90 or later")
    ops = get("gpu").rns
    moduli = hb.ntt_primes(60, 1 << 12, 3)
    rng = np.random.default_rng()

    def make():
        return cp.asarray(np.stack([rng.integers(0, q, size=(4, 1 << 12), dtype=np.uint64) for q in moduli], axis=1))

    def chain(x):
        y = ops.sub(ops.mul(ops.add(x, x, moduli), x, moduli), x, moduli)  # three package kernels
        y = cp.bitwise_and(y, cp.uint64((1 << 59) - 1))  # a CuPy kernel: stays below every 60-bit modulus
        return ops.add(y, x, moduli)  # a package kernel after the CuPy one

    chain(make())  # tables built, kernels loaded
    graph, buffer, out, _pool = record(chain, make())
    made = overlapped(graph)
    assert isinstance(made, OverlappedGraph)
    assert made.programmatic_edges == 3
    replays_equal_direct_runs(made, buffer, out, chain, make, 20)


@pytest.mark.parametrize("log_n, batch, negacyclic", [(12, 64, True), (14, 8, True), (20, 1, False), (22, 1, True)])
def test_transform_graphs_replay_exactly(log_n, batch, negacyclic):
    """Forward and inverse transforms chained in one graph (one- and multi-pass plans, batches and single
    rows) replay to the direct result on fresh inputs, and the inverse undoes the forward."""
    from hebatch.backend.gpu.dependent_launch import OverlappedGraph, overlapped

    q = hb.ntt_primes(60, 1 << (log_n + 1), 1)[0]
    rng = np.random.default_rng()

    def make():
        return cp.asarray(rng.integers(0, q, size=(batch, 1 << log_n), dtype=np.uint64))

    def chain(x):
        y = hb.ntt(x, q, negacyclic=negacyclic, check=False)
        z = hb.ntt(y, q, negacyclic=negacyclic, check=False)
        return hb.ntt(z, q, negacyclic=negacyclic, inverse=True, check=False)

    x0 = make()
    assert cp.array_equal(hb.intt(chain(x0), q, negacyclic=negacyclic), x0)
    graph, buffer, out, _pool = record(chain, make())
    made = overlapped(graph)
    if int(cp.cuda.Device().compute_capability) >= 90:
        assert isinstance(made, OverlappedGraph) and made.programmatic_edges >= 2
    replays_equal_direct_runs(made, buffer, out, chain, make, 10)


def test_switched_off_by_the_environment(monkeypatch):
    from hebatch.backend.gpu.dependent_launch import ENV, overlapped

    monkeypatch.setenv(ENV, "0")
    q = hb.ntt_primes(60, 1 << 13, 1)[0]
    x = cp.asarray(np.random.default_rng().integers(0, q, size=(2, 1 << 12), dtype=np.uint64))
    hb.ntt(x, q, check=False)  # its plan and tables built before the capture
    graph, *_ = record(lambda a: hb.ntt(a, q, check=False), x)
    assert overlapped(graph) is graph
