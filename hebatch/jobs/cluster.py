"""The Dask cluster a job runs on: a running scheduler, or a local cluster started for the job."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from contextlib import contextmanager

from .. import distributed as dist
from ..device import check_device

SCHEDULER_ENV = dist.SCHEDULER_ENV  # where commands read a scheduler address from
# Seconds to reach a running scheduler: a live one answers in well under a second, even on a busy
# machine; a wrong address should fail while the user still waits for it (Dask's default is 30 s).
CONNECT_TIMEOUT = 5


@contextmanager
def connected(scheduler):
    """dist.cluster(scheduler), failing within CONNECT_TIMEOUT seconds with a ConnectionError that says
    what to check when nothing answers there."""
    import dask

    with contextlib.ExitStack() as stack:
        try:
            with dask.config.set({"distributed.comm.timeouts.connect": f"{CONNECT_TIMEOUT}s"}):
                client = stack.enter_context(dist.cluster(scheduler))
        except OSError as error:
            if isinstance(error, ConnectionError) or "connect" in str(error).lower():
                raise ConnectionError(
                    f"no Dask scheduler answers at {scheduler} (within {CONNECT_TIMEOUT} s): check the "
                    f"address given by --scheduler or {SCHEDULER_ENV} and that the scheduler is running, "
                    "or leave --scheduler out to start a local cluster"
                ) from error
            raise
        yield client


@contextmanager
def local_cluster(**options):
    """dist.cluster(**options), its worker processes started with Ctrl-C ignored (an ignored signal
    stays ignored in a child process): Ctrl-C then reaches this process alone, which closes the
    cluster in order instead of every worker printing its own KeyboardInterrupt."""
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None
    try:
        started = dist.cluster(**options)
        client = started.__enter__()
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, previous)
    with contextlib.ExitStack() as stack:
        stack.push(started)
        yield client


@contextmanager
def job_cluster(scheduler=None, workers=None, device="auto", threads_only=False, dashboard=":8787", report_path=None):
    """The distributed.Client of a job: the scheduler at `scheduler`, or a local cluster.

    report_path: a Dask performance report (HTML) of everything run inside the block goes there.
    """
    check_device(device, "--device")
    # the environment's scheduler, as dist.cluster() reads it: joined, not mixed with local options
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    if scheduler:
        if workers is not None or threads_only:
            raise ValueError(
                f"--workers and --threads-only only apply to a local cluster, not with --scheduler or "
                f"{SCHEDULER_ENV} ({scheduler}): drop them, or unset {SCHEDULER_ENV} to start a local cluster"
            )
        with connected(scheduler) as client, reported(report_path):
            yield client
        return
    # Dask's size estimates of task results it cannot measure are not the user's concern.
    logging.getLogger("distributed.sizeof").setLevel(logging.ERROR)
    if threads_only and device == "gpu":
        raise ValueError("--threads-only starts CPU workers; it cannot be combined with --device gpu")
    dashboard_address = None if str(dashboard).lower() == "none" else dashboard
    cluster_device = "cpu" if threads_only else device
    # A failed chunk reaches the caller as one error; the workers' own error logs would repeat it.
    with (
        local_cluster(
            device=cluster_device,
            n_workers=workers,
            processes=not threads_only,
            dashboard_address=dashboard_address,
            silence_logs=logging.CRITICAL,
        ) as client,
        reported(report_path),
    ):
        yield client


@contextmanager
def reported(report_path):
    """A Dask performance report of the block written to report_path (nothing when it is None)."""
    if report_path is None:
        yield
        return
    from distributed import performance_report

    with performance_report(filename=str(report_path)):
        yield


def worker_count(client) -> int:
    return len(client.scheduler_info(n_workers=-1)["workers"])


@contextmanager
def serving_cluster(
    *, cpu=False, workers=None, threads=None, protocol="tcp", nvlink=False, scheduler_port=0, dashboard=":8787"
):
    """A local cluster for other jobs to join; yields its addresses and size (it stops on exit)."""
    from ..device import gpu_available

    dashboard = None if str(dashboard).lower() == "none" else dashboard
    options = {
        "device": "cpu" if cpu else "auto",
        "n_workers": workers,
        "threads_per_worker": threads,
        "protocol": protocol,
        "enable_nvlink": nvlink,
        "dashboard_address": dashboard,
        "scheduler_port": scheduler_port,
        "verbose": False,
    }
    with local_cluster(**options) as client:
        info = client.scheduler_info(n_workers=-1)
        yield {
            "scheduler": info["address"],
            "dashboard": client.dashboard_link if dashboard else None,
            "workers": len(info["workers"]),
            "threads": sum(w.get("nthreads", 0) for w in info["workers"].values()),
            "gpu": (not cpu) and gpu_available(),
            "protocol": protocol,
        }
