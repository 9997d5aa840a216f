"""The Dask scheduler layer on CPU clusters: batched transforms, validation, errors, cluster start-up."""

import os
import re

import dask.array as da
import numpy as np
import pytest
from dask.utils import key_split
from distributed import LocalCluster

import hebatch as hb
from hebatch import dist
from hebatch.distributed import worker

from .dist_support import fail_once, poison, residues

Q = hb.ntt_primes(60, 2**12, 3)
Q31 = hb.ntt_primes(31, 2**12, 1)[0]


@pytest.mark.parametrize("negacyclic", [False, True])
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("chunks", [1, 7, (3, 20, 1, 16)])
def test_batch_rns_equals_hb_ntt(client, negacyclic, inverse, chunks):
    x = np.stack([residues(q, (40, 256)) for q in Q], axis=1)  # (batch, limbs, n)
    y = dist.ntt(dist.from_numpy(x, chunks=chunks), Q, negacyclic=negacyclic, inverse=inverse)
    assert isinstance(y, da.Array) and y.chunks == dist.from_numpy(x, chunks=chunks).chunks
    assert np.array_equal(dist.run(y), hb.ntt(x, Q, negacyclic=negacyclic, inverse=inverse))


@pytest.mark.parametrize(
    "q,dtype", [(Q[0], np.uint64), (hb.GOLDILOCKS, np.uint64), (hb.BABYBEAR, np.uint32), (Q31, np.uint32)]
)
@pytest.mark.parametrize("algorithm", ["radix2", "4step"])
def test_batch_single_modulus_and_dtypes(client, q, dtype, algorithm):
    x = residues(q, (3, 5, 512), dtype)  # two batch axes, no limb axis
    xd = da.from_array(x, chunks=(2, 3, 512))
    y = dist.ntt(xd, q, negacyclic=True, algorithm=algorithm)
    got = y.compute()
    assert got.dtype == dtype and np.array_equal(got, hb.ntt(x, q, negacyclic=True, algorithm=algorithm))
    assert np.array_equal(dist.intt(y, q, negacyclic=True).compute(), x)


def test_batch_root_override_and_split_transform_axis(client):
    q, n = Q[0], 128
    root = pow(hb.primitive_root(q), 3 * (q - 1) // n, q)  # another primitive n-th root
    x = residues(q, (9, n))
    xd = da.from_array(x, chunks=(4, 32))  # the transform axis is split: it must be joined first
    y = dist.ntt(xd, q, root=root)
    assert y.chunks[-1] == (n,)
    assert np.array_equal(y.compute(), hb.ntt(x, q, root=root))


def test_batch_is_lazy_with_dashboard_names(client, tmp_path):
    marker = str(tmp_path / "ran")
    x = da.from_array(residues(Q[0], (8, 2**10)), chunks=(2, 2**10))
    x = x.map_blocks(poison, marker, meta=x._meta)  # with meta given, Dask does not call it to infer one
    y = dist.ntt(x, Q[0], negacyclic=True)
    z = dist.intt(y, Q[0])
    p = dist.polymul(x, x, Q[0])
    assert not os.path.exists(marker)  # nothing ran yet
    assert key_split(y.name) == "ntt_negacyclic_2^10"
    assert key_split(z.name) == "ntt_negacyclic_2^10_then_intt"  # a direct chain is one task per chunk
    assert key_split(dist.intt(dist.ntt(x, Q[0]).rechunk(4), Q[0]).name) == "intt_cyclic_2^10"
    assert key_split(p.name) == "polymul_negacyclic_2^10"
    assert len(y.__dask_keys__()) == 4  # one task per chunk


@pytest.mark.parametrize("b_shape", [(1, 3, 128), (3, 128), (25, 3, 128)])
def test_polymul(client, b_shape):
    a = np.stack([residues(q, (25, 128)) for q in Q], axis=1)
    b = np.stack([residues(q, b_shape[:-2] + (128,)) for q in Q], axis=-2)
    ad = dist.from_numpy(a, chunks=6)
    bd = b if len(b_shape) < 3 else dist.from_numpy(b, chunks=10)
    for negacyclic in (True, False):
        got = dist.run(dist.polymul(ad, bd, Q, negacyclic=negacyclic))
        assert np.array_equal(got, hb.polymul(a, b, Q, negacyclic=negacyclic))


def test_polymul_against_convolution(client):
    from .oracle import convolve

    q = Q[1]
    a, b = residues(q, (4, 64)), residues(q, (4, 64))
    got = dist.polymul(da.from_array(a, chunks=(2, 64)), da.from_array(b, chunks=(2, 64)), q).compute()
    for i in range(4):
        assert got[i].tolist() == convolve(a[i].tolist(), b[i].tolist(), q, True)


def _hb_message(call):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    return info.type, str(info.value)


@pytest.mark.parametrize(
    "shape,dtype,modulus,kwargs",
    [
        ((4, 12), np.uint64, Q[0], {}),
        ((4, 16), np.int64, Q[0], {}),
        ((4, 16), np.uint64, Q[0] + 2, {}),
        ((4, 32), np.uint64, 97, {"negacyclic": True}),
        ((4, 64), np.uint64, 97, {}),
        ((4, 3, 16), np.uint64, Q[:2], {}),
        ((4, 16), np.uint64, Q[0], {"root": 2}),
        ((4, 16), np.uint64, Q[0], {"algorithm": "fft"}),
        ((4, 16), np.uint64, Q[0], {"inverse": "yes"}),
        ((4, 16), np.uint32, Q[0], {}),
    ],
)
def test_bad_input_rejected_before_submission_with_hb_messages(client, tmp_path, shape, dtype, modulus, kwargs):
    marker = str(tmp_path / "ran")
    x = da.zeros(shape, dtype=dtype, chunks=(2,) + shape[1:])
    x = x.map_blocks(poison, marker, meta=x._meta)
    error, message = _hb_message(lambda: hb.ntt(np.zeros(shape, dtype=dtype), modulus, **kwargs))
    with pytest.raises(error, match=re.escape(message)):
        dist.ntt(x, modulus, **kwargs)
    assert not os.path.exists(marker)


def test_bad_numpy_input_is_not_scattered(client, monkeypatch):
    scattered = []
    monkeypatch.setattr(client, "scatter", lambda *a, **k: scattered.append(a))
    x = residues(Q[0], (8, 16))
    with pytest.raises(ValueError, match="not prime"):
        dist.ntt(x, Q[0] + 2)
    with pytest.raises(ValueError, match="broadcast"):
        dist.polymul(x, x[:3], Q[0])
    with pytest.raises(ValueError, match="batch axis"):
        dist.to_zarr(np.zeros((), np.uint64), "unused.zarr")
    assert scattered == []


def test_bad_polymul_and_options_rejected(client, tmp_path):
    a = da.zeros((4, 16), dtype=np.uint64, chunks=2)
    with pytest.raises(ValueError, match="broadcast"):
        dist.polymul(a, da.zeros((3, 16), dtype=np.uint64), Q[0])
    with pytest.raises(ValueError, match="trailing"):
        dist.polymul(a, da.zeros((4, 32), dtype=np.uint64), Q[0])
    with pytest.raises(TypeError, match="one dtype"):
        dist.polymul(a, da.zeros((4, 16), dtype=np.uint32), 97)
    with pytest.raises(TypeError, match="b must be a Dask, NumPy or CuPy array"):
        dist.polymul(a, [1, 2], Q[0])
    with pytest.raises(ValueError, match="device"):
        dist.ntt(a, Q[0], device="tpu")
    with pytest.raises(TypeError, match="x must be a Dask, NumPy or CuPy array"):
        dist.ntt([1, 2, 3, 4], Q[0])
    with pytest.raises(ValueError, match="chunks"):
        dist.from_numpy(np.zeros((4, 16), np.uint64), chunks=0)
    with pytest.raises(ValueError, match="adding up"):
        dist.from_numpy(np.zeros((4, 16), np.uint64), chunks=(1, 2))


def test_entry_error_in_a_worker_reaches_caller_with_cause(client):
    x = residues(Q[0], (20, 64))
    x[13, 5] = Q[0]  # in chunk 2 of 4
    y = dist.ntt(dist.from_numpy(x, chunks=5), Q[0])
    with pytest.raises(ValueError, match=r"entries >= modulus.*chunk \(2, 0\) rows 10:15") as info:
        dist.run(y)
    cause = info.value.__cause__
    assert isinstance(cause, ValueError) and "entries >= modulus" in str(cause) and "chunk" not in str(cause)
    with pytest.raises(ValueError, match="entries >= modulus"):
        y.compute()  # plain Dask compute reports it too


def test_check_false_skips_the_entry_check_in_tasks(client):
    x = residues(Q[0], (8, 64))
    assert (dist.ntt(dist.from_numpy(x, chunks=4), Q[0], check=False).compute() == hb.ntt(x, Q[0])).all()
    x[3, 7] = Q[0]
    dist.ntt(dist.from_numpy(x, chunks=4), Q[0], check=False).compute()  # the caller vouched for x
    with pytest.raises(TypeError, match="check"):
        dist.ntt(dist.from_numpy(x, chunks=4), Q[0], check="no")


def test_rerun_after_a_failed_job_recomputes(client, tmp_path):
    """The keys of a failed job are released when the error is raised, so the same job runs again."""
    x = residues(Q[0], (20, 64))
    xd = dist.from_numpy(x, chunks=5)
    marker, log = str(tmp_path / "failed-once"), str(tmp_path / "log")
    y = dist.ntt(xd, Q[0]).map_blocks(fail_once, marker, log, 1, meta=xd._meta)
    with pytest.raises(RuntimeError, match="injected failure in chunk 1") as info:
        dist.run(y)
    assert info.value is not None  # the error stays alive here, as it would in a caller's handler
    assert np.array_equal(dist.run(y), hb.ntt(x, Q[0]))


def test_gpu_device_on_cpu_worker_fails_in_task(client):
    y = dist.ntt(dist.from_numpy(residues(Q[0], (4, 16)), chunks=2), Q[0], device="gpu")
    with pytest.raises(RuntimeError, match="no CUDA GPU") as info:
        dist.run(y)
    assert isinstance(info.value.__cause__, RuntimeError)


def test_run_lists_progress_and_rerun_after_failure(client, capsys):
    x = residues(Q[0], (12, 64))
    xd = dist.from_numpy(x, chunks=4)
    y, parts = dist.run(dist.ntt(xd, Q[0]), [dist.intt(xd, Q[0]), xd], progress=True)
    assert np.array_equal(y, hb.ntt(x, Q[0]))
    assert np.array_equal(parts[0], hb.intt(x, Q[0])) and np.array_equal(parts[1], x)
    assert "ntt_cyclic_2^6" in capsys.readouterr().err
    with pytest.raises(TypeError, match="Dask collections"):
        dist.run(x)
    with pytest.raises(ValueError, match="retries"):
        dist.run(xd, retries=-1)


def test_from_numpy_default_chunks_follow_worker_memory(client):
    budget = dist.chunk_budget(client)
    info = client.scheduler_info(n_workers=-1)["workers"]
    limit = min(int(w["memory_limit"]) or 2**62 for w in info.values())
    assert 0 < budget <= limit
    rows = dist.batch_chunks((10**7, 4, 2**16), np.uint64, client=client)
    assert rows[0] == max(1, budget // (4 * 2**16 * 8))
    assert dist.batch_chunks((100, 8), np.uint64, client=client) == (100,)
    store_rows = 7  # from_zarr: a multiple of the store's chunk length
    rows = dist.batch_chunks((10**7, 2**16), np.uint64, multiple=store_rows, client=client)
    assert rows[0] % store_rows == 0 and rows[0] * 2**16 * 8 <= max(budget, store_rows * 2**16 * 8)
    x = residues(Q[0], (30, 2**10))
    xd = dist.from_numpy(x)
    assert all(len(c) == 1 for c in xd.chunks[1:]) and np.array_equal(xd.compute(), x)
    assert np.array_equal(dist.to_host(xd).compute(), x)


def test_cluster_with_address_and_environment(monkeypatch, capsys):
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as started:
        x = residues(Q[0], (6, 32))
        with dist.cluster(started.scheduler_address) as c:
            assert c.scheduler.address == started.scheduler_address
            assert np.array_equal(dist.ntt(da.from_array(x, chunks=(2, 32)), Q[0]).compute(), hb.ntt(x, Q[0]))
        assert "connected to the Dask scheduler" in capsys.readouterr().err
        monkeypatch.setenv(dist.SCHEDULER_ENV, started.scheduler_address)
        with dist.cluster(verbose=False) as c:
            assert c.scheduler.address == started.scheduler_address
        assert started.scheduler_info["workers"]  # connecting and closing the client left the cluster up
        with (
            pytest.raises(ValueError, match="n_workers only apply to a cluster started here"),
            dist.cluster(n_workers=2),
        ):
            pass


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"device": "tpu"}, ValueError, "device"),
        ({"n_workers": 0}, ValueError, "n_workers"),
        ({"threads_per_worker": 1.5}, ValueError, "threads_per_worker"),
        ({"protocol": "udp"}, ValueError, "protocol"),
        ({"enable_nvlink": True}, ValueError, "enable_nvlink=True needs protocol"),
        ({"enable_nvlink": "yes"}, TypeError, "enable_nvlink"),
    ],
)
def test_cluster_options_validated(kwargs, error, match):
    with pytest.raises(error, match=match), dist.cluster(**kwargs):
        pass


@pytest.mark.skipif(worker.worker_has_gpu(), reason="checks the CPU-only fallback")
def test_cluster_gpu_requested_without_gpu():
    with pytest.raises(RuntimeError, match="no CUDA GPU"), dist.cluster(device="gpu"):
        pass


def test_real_worker_processes():
    """Tasks, errors and the 4-step transform with workers in their own processes (pickling, caches)."""
    q = hb.ntt_primes(60, 2**16, 1)[0]
    with dist.cluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", verbose=False) as c:
        assert len(c.scheduler_info(n_workers=-1)["workers"]) == 2
        x = np.stack([residues(p, (10, 2**9)) for p in Q], axis=1)
        y = dist.run(dist.ntt(dist.from_numpy(x, chunks=3), Q, negacyclic=True))
        assert np.array_equal(y, hb.ntt(x, Q, negacyclic=True))
        v = residues(q, 2**16)
        assert np.array_equal(dist.ntt_large(v, q, workers=2, negacyclic=True), hb.ntt(v, q, negacyclic=True))
        x[4, 1, 7] = Q[1]
        with pytest.raises(ValueError, match="entries >=") as info:
            dist.run(dist.ntt(dist.from_numpy(x, chunks=3), Q))
        assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.gpu
def test_gpu_cluster_batches():
    import cupy

    with dist.cluster(device="gpu", verbose=False) as c:
        n_workers = len(c.scheduler_info(n_workers=-1)["workers"])
        x = np.stack([residues(q, (64, 2**12)) for q in Q], axis=1)
        xd = dist.from_numpy(x, chunks=16)
        want = hb.ntt(x, Q, negacyclic=True)
        assert np.array_equal(dist.run(dist.ntt(xd, Q, negacyclic=True)), want)  # host chunks through pinned copies
        on_device = dist.to_device(xd).persist()
        y = dist.ntt(on_device, Q, negacyclic=True)
        assert isinstance(y._meta, cupy.ndarray)
        got = dist.run(y)
        assert isinstance(got, cupy.ndarray) and np.array_equal(got.get(), want)
        assert np.array_equal(dist.run(dist.to_host(dist.intt(y, Q, negacyclic=True))), x)
        b = x[:1]
        assert np.array_equal(dist.run(dist.polymul(xd, b, Q)), hb.polymul(x, b, Q))
        assert n_workers >= 1


@pytest.mark.gpu
def test_gpu_staged_copies_in_many_slices(monkeypatch):
    """The pinned double-buffered pipeline inside one task, forced into many slices."""
    monkeypatch.setattr(worker, "STAGE_BYTES", 3 * 2**10 * 8)
    x = np.stack([residues(q, (50, 2**10)) for q in Q], axis=1)
    b = np.stack([residues(q, (1, 2**10)) for q in Q], axis=1)
    got = worker.on_worker(lambda v: hb.ntt(v, Q), x, device="gpu")
    assert isinstance(got, np.ndarray) and np.array_equal(got, hb.ntt(x, Q))
    got = worker.on_worker(lambda u, v: hb.polymul(u, v, Q), x, b, device="gpu")
    assert np.array_equal(got, hb.polymul(x, b, Q))
    with pytest.raises(ValueError, match="entries"):
        bad = x.copy()
        bad[40, 0, 0] = Q[0]
        worker.on_worker(lambda v: hb.ntt(v, Q), bad, device="gpu")


def test_gpu_cluster_refuses_more_workers_than_gpus():
    from hebatch.distributed.cluster import _check_gpu_workers

    with pytest.raises(ValueError, match=r"n_workers=2 but 1 GPU is visible"):
        _check_gpu_workers(2, "3")
    with pytest.raises(ValueError, match=r"n_workers=3 but 2 GPUs are visible"):
        _check_gpu_workers(3, [0, 1])
    _check_gpu_workers(2, "0,1")
    _check_gpu_workers(None, "0")


def _tasks_after_optimisation(y) -> int:
    """Tasks Dask runs for y (after its graph optimisation, as compute/persist see it)."""
    import dask

    (optimised,) = dask.optimize(y)
    return len(dict(optimised.__dask_graph__()))


def test_chains_are_one_task_per_chunk_and_exact(client):
    """ntt -> intt, polymul -> ntt -> intt and the like run as one task per chunk, bit for bit as hb."""
    x = np.stack([residues(q, (12, 2**8)) for q in Q], axis=1)
    b = np.stack([residues(q, (12, 2**8)) for q in Q], axis=1)
    xd, bd = dist.from_numpy(x, chunks=4), dist.from_numpy(b, chunks=4)
    y = dist.intt(dist.ntt(xd, Q, negacyclic=True), Q, negacyclic=True)
    assert key_split(y.name) == "ntt_negacyclic_2^8_then_intt"
    layers = len(dist.ntt(xd, Q).__dask_graph__().layers)
    assert len(y.__dask_graph__().layers) == layers  # the second step joined the first's task
    assert _tasks_after_optimisation(y) == _tasks_after_optimisation(dist.ntt(xd, Q))
    assert np.array_equal(dist.run(y), x)
    z = dist.intt(dist.ntt(dist.polymul(xd, bd, Q), Q, negacyclic=True), Q, negacyclic=False)
    want = hb.intt(hb.ntt(hb.polymul(x, b, Q), Q, negacyclic=True), Q)
    assert key_split(z.name) == "polymul_negacyclic_2^8_then_ntt_then_intt"
    assert len(z.__dask_graph__().layers) == len(dist.polymul(xd, bd, Q).__dask_graph__().layers)
    assert np.array_equal(dist.run(z), want)
    # a chain over other moduli checks its intermediate: entries of the first result may exceed them
    small = hb.ntt_primes(40, 2**8, len(Q))
    with pytest.raises(ValueError, match=r"entries >= .*\(in ntt_cyclic_2\^8_then_ntt chunk"):
        dist.run(dist.ntt(dist.ntt(xd, Q), small))


def test_chain_refuses_bad_entries_naming_the_chunk(client):
    x = np.stack([residues(q, (12, 2**8)) for q in Q], axis=1)
    x[9, 1, 3] = Q[1]
    xd = dist.from_numpy(x, chunks=4)
    with pytest.raises(ValueError, match=r"entries >= its limb's modulus.*chunk \(2, 0, 0\) rows 8:12"):
        dist.run(dist.intt(dist.ntt(xd, Q), Q))


def test_in_memory_input_is_checked_before_submission(client, tmp_path):
    x = residues(Q[0], (8, 64))
    x[5, 1] = Q[0] + 1
    before = set(client.run_on_scheduler(lambda dask_scheduler=None: list(dask_scheduler.tasks)))
    with pytest.raises(ValueError, match=r"x has entries >= modulus"):
        dist.ntt(x, Q[0])
    with pytest.raises(ValueError, match=r"b has entries >= modulus"):
        dist.polymul(residues(Q[0], (8, 64)), x, Q[0])
    after = set(client.run_on_scheduler(lambda dask_scheduler=None: list(dask_scheduler.tasks)))
    assert after <= before  # nothing was scattered or submitted


@pytest.mark.gpu
def test_gpu_host_pipeline_pins_results_and_releases_inputs(monkeypatch):
    """Host chunks: copied from their own (registered, then released) memory into a pinned result."""
    import cupy

    monkeypatch.setattr(worker, "STAGE_BYTES", 5 * 3 * 2**10 * 8)
    x = np.stack([residues(q, (64, 2**10)) for q in Q], axis=1)
    check = worker.EntryCheck(tuple(Q), True)
    got = worker.on_worker(lambda v: hb.ntt(v, Q, check=False), x, device="gpu", check=check)
    assert np.array_equal(got, hb.ntt(x, Q))
    attributes = cupy.cuda.runtime.pointerGetAttributes(got.ctypes.data)
    assert attributes.type == cupy.cuda.runtime.memoryTypeHost  # pinned: no page faults while copying out
    cupy.cuda.runtime.hostRegister(x.ctypes.data, x.nbytes, 0)  # the task unregistered its input
    cupy.cuda.runtime.hostUnregister(x.ctypes.data)
    x[63, 2, 5] = Q[2]
    with pytest.raises(ValueError, match=r"entries >= its limb's modulus"):
        worker.on_worker(lambda v: hb.ntt(v, Q, check=False), x, device="gpu", check=check)


@pytest.mark.gpu
def test_gpu_device_tasks_without_host_waits_stay_ordered():
    """Device tasks return before their kernels end; jobs reading their results (other threads, other
    streams, the host) still see finished data, and chains stay one task per chunk."""
    with dist.cluster(device="gpu", threads_per_worker=4, dashboard_address=":0", verbose=False):
        x = np.stack([residues(q, (256, 2**12)) for q in Q], axis=1)
        xd = dist.to_device(dist.from_numpy(x, chunks=8)).persist()
        for _ in range(3):
            y = dist.ntt(xd, Q, negacyclic=True, check=False).persist()  # own job, own tasks and streams
            z = dist.intt(y, Q, negacyclic=True, check=False).persist()
            assert np.array_equal(dist.run(dist.to_host(z)), x)
            chain = dist.intt(dist.ntt(xd, Q), Q)
            assert np.array_equal(dist.run(dist.to_host(chain)), x)
            assert np.array_equal(dist.run(dist.to_host(dist.polymul(xd, xd, Q))), hb.polymul(x, x, Q))
            fused = dist.intt(dist.map_chunks(_negate, dist.ntt(xd, Q)), Q)  # one task per chunk, on the GPU
            assert np.array_equal(dist.run(dist.to_host(fused)), _negate(x))
        bad = x.copy()
        bad[77, 1, 9] = Q[1]
        with pytest.raises(ValueError, match=r"entries >= .*chunk \(9, 0, 0\) rows 72:80"):
            dist.run(dist.ntt(dist.to_device(dist.from_numpy(bad, chunks=8)), Q))


def _negate(v):
    """-v mod the limb's modulus (Q), with the array module of v."""
    from hebatch.device import array_module

    xp = array_module(v)
    q = xp.asarray(np.array(Q, dtype=np.uint64).reshape(-1, 1))
    return xp.where(v == 0, v, q - v)


def test_map_chunks_joins_a_chain_of_transforms(client):
    """ntt -> a pointwise step -> intt as one task per chunk; intt(-ntt(x)) == -x exactly."""
    x = np.stack([residues(q, (10, 2**8)) for q in Q], axis=1)
    xd = dist.from_numpy(x, chunks=3)
    y = dist.intt(dist.map_chunks(_negate, dist.ntt(xd, Q, negacyclic=True)), Q, negacyclic=True)
    assert key_split(y.name) == "ntt_negacyclic_2^8_then_map_then_intt"
    assert len(y.__dask_graph__().layers) == len(dist.ntt(xd, Q).__dask_graph__().layers)
    assert np.array_equal(dist.run(y), _negate(x))
    alone = dist.map_chunks(_negate, xd, name="negate")
    assert key_split(alone.name) == "negate" and np.array_equal(dist.run(alone), _negate(x))
    with pytest.raises(TypeError, match="fn must be callable"):
        dist.map_chunks(3, xd)
    with pytest.raises(ValueError, match="batch length"):
        dist.map_chunks(_negate, xd, x[:4])
    with pytest.raises(ValueError, match="name must be"):
        dist.map_chunks(_negate, xd, name="a-b")


def test_cluster_exit_tolerates_a_slow_worker_exit(monkeypatch, caplog):
    """A worker killed by its nanny for exiting slowly (Dask raises TimeoutError from close) does not
    turn a finished job into a failure: the results stand and a warning says what happened."""
    from distributed import LocalCluster as Started

    closed = []

    def slow_close(self, *args, **kwargs):
        closed.append(self)
        original(self, *args, **kwargs)
        raise TimeoutError

    original = Started.close
    monkeypatch.setattr(Started, "close", slow_close)
    x = residues(Q[0], (6, 32))
    with (
        caplog.at_level("WARNING", logger="hebatch.distributed"),
        dist.cluster(device="cpu", n_workers=1, processes=False, dashboard_address=None, verbose=False),
    ):
        y = dist.run(dist.ntt(dist.from_numpy(x, chunks=2), Q[0]))
    assert closed and np.array_equal(y, hb.ntt(x, Q[0]))
    assert "took too long to exit" in caplog.text
