"""The worker plugin (per-worker state), waiting for workers, and NVTX phases, on CPU clusters."""

import os

import numpy as np
import pytest

import hebatch as hb
from hebatch import dist
from hebatch.distributed import plugin
from hebatch.distributed.cluster import wait_for_workers

from .dist_support import residues

Q = hb.ntt_primes(60, 2**10, 2)


def _plugin_state_id(dask_worker=None):
    return id(dask_worker.plugins[plugin.PLUGIN_NAME].state)


def _task_state_id():
    return id(plugin.current_state())


def test_every_worker_owns_its_state():
    with dist.cluster(
        device="cpu", n_workers=2, threads_per_worker=2, processes=False, dashboard_address=":0", verbose=False
    ) as client:
        reports = client.run(plugin.worker_report)
        assert len(reports) == 2
        for report in reports.values():
            assert report["plugin"] and report["gpu"] is False and report["allocator"] == "cupy"
        owned = client.run(_plugin_state_id)
        seen = {w: client.submit(_task_state_id, workers=[w], pure=False).result() for w in owned}
        assert seen == owned and len(set(owned.values())) == 2  # tasks use their worker's own state
        # tasks use it: a job runs, and its worker's state made no GPU streams on a CPU worker
        x = np.stack([residues(q, (6, 2**10)) for q in Q], axis=1)
        assert np.array_equal(dist.run(dist.ntt(dist.from_numpy(x, chunks=2), Q)), hb.ntt(x, Q))


def test_bfv_contexts_live_in_the_worker_state():
    from hebatch import bfv
    from hebatch.distributed.bfv import worker_context

    params = bfv.Params(n=4096, t=40961, q_bits=[36, 36], special_bits=37)
    state = plugin.current_state()
    ctx = worker_context(params, "cpu")
    assert worker_context(params, "cpu") is ctx and state.contexts[("bfv", params.fingerprint, "cpu")] is ctx


def test_calls_wait_for_workers_and_say_so_when_none_come():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster, Client(cluster) as client:
        with pytest.raises(RuntimeError, match=r"0 workers after waiting 0.5 s for 1"):
            wait_for_workers(client, 1, timeout=0.5)
        cluster.scale(1)  # a worker that registers later is waited for, not refused
        assert len(wait_for_workers(client, 1, timeout=120)) == 1
        x = residues(Q[0], 2**8)
        assert np.array_equal(dist.ntt_large(x, Q[0], workers=1), hb.ntt(x, Q[0]))


def test_cluster_waits_for_its_workers_before_handing_over():
    # processes=True: workers start in their own processes and register later than the client
    with dist.cluster(
        device="cpu", n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", verbose=False
    ) as client:
        assert len(client.scheduler_info(n_workers=-1)["workers"]) == 2
        assert all(r["plugin"] for r in client.run(plugin.worker_report).values())


def test_cluster_arguments_checked_before_start():
    with (
        pytest.raises(ValueError, match="warm must be a list"),
        dist.cluster(device="cpu", warm=[(10,)], verbose=False),
    ):
        pass
    with (
        pytest.raises(ValueError, match=r"log2 n must be 1..28"),
        dist.cluster(device="cpu", warm=[(40, Q, True)], verbose=False),
    ):
        pass
    with pytest.raises(ValueError, match="worker_timeout"), dist.cluster(device="cpu", worker_timeout=0, verbose=False):
        pass


def test_phases_are_no_ops_on_cpu():
    state = plugin.WorkerState()
    state._has_gpu = False
    with state.phase("copy in"):
        pass


def test_task_times_sum_the_phases_when_asked(monkeypatch):
    monkeypatch.setenv("HEBATCH_TASK_TIMES", "1")
    state = plugin.WorkerState()
    state._has_gpu = True  # phases are timed on GPU workers only
    for _ in range(3):
        with state.phase("transform"):
            pass
    with pytest.raises(RuntimeError), state.phase("copy in"):
        raise RuntimeError("a failing phase is timed too")
    times = state.task_times(reset=True)
    assert times["transform"][1] == 3 and times["copy in"][1] == 1
    assert all(seconds >= 0 for seconds, _ in times.values())
    assert state.task_times() == {}


def test_profiler_setting_is_restored(monkeypatch):
    import importlib

    import dask

    cluster = importlib.import_module("hebatch.distributed.cluster")  # the module, not dist.cluster
    monkeypatch.delenv(cluster.PROFILE_ENV, raising=False)
    before = dask.config.get("distributed.worker.profile.enabled")
    with cluster._quiet_profiler():
        assert dask.config.get("distributed.worker.profile.enabled") is False
        assert os.environ[cluster.PROFILE_ENV] == "False"
    assert cluster.PROFILE_ENV not in os.environ
    assert dask.config.get("distributed.worker.profile.enabled") == before
    monkeypatch.setenv(cluster.PROFILE_ENV, "True")  # the user's setting wins
    with cluster._quiet_profiler():
        assert os.environ[cluster.PROFILE_ENV] == "True"
        assert dask.config.get("distributed.worker.profile.enabled") == before


@pytest.mark.gpu
def test_gpu_plugin_warms_kernels_and_cupy_allocates_from_the_rmm_pool():
    pytest.importorskip("rmm")
    q = hb.ntt_primes(60, 2**12, 2)
    with dist.cluster(
        device="gpu", rmm_pool_size="2GB", warm=[(12, q, True)], dashboard_address=":0", verbose=False
    ) as client:
        x = np.stack([residues(p, (64, 2**12)) for p in q], axis=1)
        y = dist.to_device(dist.from_numpy(x, chunks=16)).persist()
        got = dist.run(dist.to_host(dist.intt(dist.ntt(y, q, negacyclic=True), q, negacyclic=True)))
        assert np.array_equal(got, x)
        for report in client.run(plugin.worker_report).values():
            assert report["plugin"] and report["gpu"] and report["allocator"] == "rmm"
            assert report["cupy_allocator_rmm"] and report["cupy_pool_used_bytes"] == 0  # not CuPy's own pool
            assert report["warmed"] == ["2^12 x 2 negacyclic"]

        def pool_in_use(dask_worker=None):
            import rmm

            resource = rmm.mr.get_current_device_resource()
            while "Pool" not in type(resource).__name__ and hasattr(resource, "upstream_mr"):
                resource = resource.upstream_mr  # past adaptors (statistics, tracking)
            return type(resource).__name__, int(resource.pool_size()) if hasattr(resource, "pool_size") else -1

        for name, size in client.run(pool_in_use).values():
            assert "Pool" in name and size >= 2 * 10**9 * 0.9
