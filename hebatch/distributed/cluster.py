"""Starting (or joining) the Dask cluster that runs hebatch jobs."""

from __future__ import annotations

import importlib.util
import inspect
import logging
import os
import sys
from contextlib import contextmanager

from ..backend import gpu_available
from .plugin import PLUGIN_NAME, HebatchPlugin
from .worker import check_device

log = logging.getLogger("hebatch.distributed")

SCHEDULER_ENV = "HEBATCH_SCHEDULER"
PROTOCOLS = ("tcp", "ucx", "ucxx", "inproc")
GPU_THREADS = 4  # tasks per GPU worker: copies of some host chunks overlap the kernels of others (host batches
# ran fastest with 4; device-resident tasks are host-bound and would need fewer: see dist_bench)
WORKER_TIMEOUT = 120.0  # seconds to wait for the workers of a cluster to register (busy machines are slow)


def wait_for_workers(client, n: int = 1, timeout: float | None = None) -> dict:
    """The scheduler's workers once at least `n` have registered; RuntimeError after `timeout` seconds
    (default WORKER_TIMEOUT) saying how many came. Calls that need workers use it, so that a job
    started right after `cluster()` waits for them instead of failing."""
    timeout = WORKER_TIMEOUT if timeout is None else timeout
    workers = client.scheduler_info(n_workers=-1)["workers"]
    if len(workers) >= n:
        return workers
    try:
        client.wait_for_workers(n, timeout=timeout)
    except TimeoutError:
        found = len(client.scheduler_info(n_workers=-1)["workers"])
        raise RuntimeError(
            f"the Dask cluster has {found} worker{'s' if found != 1 else ''} after waiting "
            f"{timeout:g} s for {n}: check that its workers started (and can reach the "
            "scheduler)"
        ) from None
    return client.scheduler_info(n_workers=-1)["workers"]


def _positive(value, name):
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int or None, got {value!r}")
    return value


@contextmanager
def cluster(
    address=None,
    *,
    device="auto",
    n_workers=None,
    threads_per_worker=None,
    processes=True,
    protocol=None,
    enable_nvlink=False,
    rmm_pool_size=None,
    device_memory_limit=None,
    dashboard_address=":8787",
    verbose=True,
    warm=(),
    worker_timeout=None,
    **cluster_options,
):
    """A distributed.Client for hebatch jobs, as a context manager (closed on exit).

    address: a scheduler address (e.g. "tcp://10.0.0.5:8786") to connect to; default the
    HEBATCH_SCHEDULER environment variable. Then only the client is closed on exit, and the
    options for starting a cluster must be left at their defaults.
    Without an address a cluster is started and closed on exit, by `device`: "auto" (a GPU cluster
    when GPUs are visible), "gpu" (one is required) or "cpu":
    - GPUs visible (device "auto" or "gpu") and dask_cuda importable: dask_cuda.LocalCUDACluster,
      one worker per visible GPU (CUDA_VISIBLE_DEVICES selects them) with `threads_per_worker`
      (default 4) concurrent tasks each. protocol: "tcp" (default), "ucx" or "ucxx"; enable_nvlink
      (needs a UCX protocol), rmm_pool_size (e.g. "24GB") and device_memory_limit pass through.
    - otherwise (device "cpu", or no GPU): distributed.LocalCluster with n_workers,
      threads_per_worker and processes (False: threads of this process, quick to start).
    dashboard_address: where the Dask dashboard listens (None: no dashboard); its link is logged on
    the "hebatch.distributed" logger and, if verbose, printed to stderr. Other keyword arguments go to the
    cluster class.
    Every worker gets the HebatchPlugin (per-worker streams, kernels and contexts; CuPy allocating from
    the RMM pool when rmm_pool_size is given). warm: transforms whose kernels every GPU worker loads
    when it starts, as (log2 n, moduli, negacyclic) tuples, so no task pays a compile. The client is
    handed over once the workers have registered (worker_timeout seconds at most, default 120).
    """
    device = check_device(device)
    n_workers = _positive(n_workers, "n_workers")
    threads_per_worker = _positive(threads_per_worker, "threads_per_worker")
    if protocol is not None and protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(map(repr, PROTOCOLS))} or None, got {protocol!r}")
    if enable_nvlink not in (True, False):
        raise TypeError(f"enable_nvlink must be True or False, got {enable_nvlink!r}")
    if enable_nvlink and protocol not in ("ucx", "ucxx"):
        raise ValueError(f"enable_nvlink=True needs protocol 'ucx' or 'ucxx', got {protocol!r}")
    address = address if address is not None else os.environ.get(SCHEDULER_ENV) or None
    HebatchPlugin(warm=warm)  # its arguments are checked before anything starts
    if worker_timeout is not None and (
        isinstance(worker_timeout, bool) or not isinstance(worker_timeout, (int, float)) or not worker_timeout > 0
    ):
        raise ValueError(f"worker_timeout must be a positive number of seconds or None, got {worker_timeout!r}")

    from distributed import Client, LocalCluster

    if address is not None:
        given = {
            "n_workers": n_workers,
            "threads_per_worker": threads_per_worker,
            "protocol": protocol,
            "enable_nvlink": enable_nvlink or None,
            "rmm_pool_size": rmm_pool_size,
            "device_memory_limit": device_memory_limit,
            "processes": None if processes else False,
            "device": None if device == "auto" else device,
            "dashboard_address": None if dashboard_address == ":8787" else dashboard_address,
            **cluster_options,
        }
        extra = sorted(k for k, v in given.items() if v is not None)
        if extra:
            raise ValueError(
                f"{', '.join(extra)} only apply to a cluster started here, not to the scheduler at {address}"
            )
        client = Client(address)
        try:
            wait_for_workers(client, 1, worker_timeout)
            client.register_plugin(HebatchPlugin(warm=warm), name=PLUGIN_NAME)
            _announce(client, f"connected to the Dask scheduler at {address}", verbose, True)
            yield client
        finally:
            client.close()
        return

    gpu_options = {
        "enable_nvlink": enable_nvlink or None,
        "rmm_pool_size": rmm_pool_size,
        "device_memory_limit": device_memory_limit,
    }
    use_gpu = device != "cpu" and gpu_available()
    if device == "gpu" and not use_gpu:
        raise RuntimeError("device='gpu' but no CUDA GPU with CuPy is visible")
    if use_gpu:
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            if device == "gpu":
                raise RuntimeError("device='gpu' needs dask-cuda (pip install dask-cuda)") from None
            log.warning("GPUs are visible but dask_cuda is missing: starting a CPU-style LocalCluster")
            use_gpu = False
    if use_gpu:
        _check_gpu_workers(n_workers, cluster_options.get("CUDA_VISIBLE_DEVICES"))
        options = {k: v for k, v in gpu_options.items() if v is not None}
        if (
            rmm_pool_size is not None
            and "rmm_allocator_external_lib_list" not in cluster_options
            and "rmm_allocator_external_lib_list" in inspect.signature(LocalCUDACluster).parameters
        ):
            options["rmm_allocator_external_lib_list"] = ["cupy"]  # CuPy allocates from the pool (else the plugin does)
        with _quiet_profiler():
            started = LocalCUDACluster(
                n_workers=n_workers,
                threads_per_worker=threads_per_worker or GPU_THREADS,
                protocol=protocol or "tcp",
                dashboard_address=dashboard_address,
                **options,
                **cluster_options,
            )
        kind = "LocalCUDACluster"
    else:
        ignored = sorted(k for k, v in gpu_options.items() if v is not None)
        if ignored:
            log.warning("no GPU cluster: ignoring %s", ", ".join(ignored))
        options = {} if protocol is None else {"protocol": protocol}
        started = LocalCluster(
            n_workers=n_workers,
            threads_per_worker=threads_per_worker,
            processes=processes,
            dashboard_address=dashboard_address,
            **options,
            **cluster_options,
        )
        kind = "LocalCluster"
    try:
        client = Client(started)
        try:
            expected = len(getattr(started, "worker_spec", ())) or 0  # 0: an adaptive cluster, none to wait for
            workers = wait_for_workers(client, expected, worker_timeout) if expected else {}
            client.register_plugin(
                HebatchPlugin(warm=warm, rmm=use_gpu and rmm_pool_size is not None), name=PLUGIN_NAME
            )
            _announce(client, f"started a {kind} with {len(workers)} workers", verbose, dashboard_address is not None)
            yield client
        finally:
            client.close()
    finally:
        _close_started(started)


def _close_started(started) -> None:
    """Close a cluster started here. A worker that takes longer to exit than Dask's nanny waits (a
    worker freeing tens of GiB of pinned memory does) is killed by the nanny, and Dask then raises
    TimeoutError: by then the job is done and its results are delivered, so that is a warning, not a
    failure of the job."""
    try:
        started.close()
    except TimeoutError:
        log.warning("hebatch: a worker took too long to exit while the cluster closed; it was killed")


PROFILE_ENV = "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED"


@contextmanager
def _quiet_profiler():
    """GPU workers start without Dask's statistical profiler unless its setting is given in the
    environment: the profiler's thread takes the GIL every 10 ms to sample the task threads, and a task
    on device-resident chunks is host-bound (its kernels take a millisecond or less), so every task
    feels it (measured on an H100: host time per task nearly halved without it)."""
    if os.environ.get(PROFILE_ENV) is not None:
        yield
        return
    import dask

    os.environ[PROFILE_ENV] = "False"  # worker processes started now inherit it, whatever ships the config
    try:
        with dask.config.set({"distributed.worker.profile.enabled": False}):
            yield
    finally:
        os.environ.pop(PROFILE_ENV, None)


def _check_gpu_workers(n_workers, visible) -> None:
    """A GPU cluster has one worker per GPU: more workers than GPUs is refused before anything starts."""
    if n_workers is None:
        return
    if visible is None:
        import cupy

        gpus = cupy.cuda.runtime.getDeviceCount()
    else:
        gpus = len(visible.split(",")) if isinstance(visible, str) else len(visible)
    if n_workers > gpus:
        raise ValueError(
            f"n_workers={n_workers} but {gpus} GPU{'s are' if gpus != 1 else ' is'} visible: a GPU "
            f"cluster runs one worker per GPU (ask for at most {gpus}, or device='cpu' for CPU workers)"
        )


def _announce(client, what: str, verbose: bool, dashboard: bool) -> None:
    if not dashboard:
        link = "off"
    elif importlib.util.find_spec("bokeh") is None:
        link = "unavailable (install bokeh)"
    else:
        link = client.dashboard_link
    message = f"hebatch: {what}; dashboard: {link}"
    log.info(message)
    if verbose:
        print(message, file=sys.stderr)
