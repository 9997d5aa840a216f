"""Options shared by the commands that run on a Dask cluster, and the cluster they describe."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from contextlib import contextmanager

import click

from .. import distributed as dist


def cluster_options(f):
    """--scheduler, --workers, --device, --threads-only, --dashboard, --report."""
    options = [
        click.option("--scheduler", metavar="ADDR", default=None, envvar=dist.SCHEDULER_ENV,
                     help=f"a running Dask scheduler (e.g. tcp://10.0.0.5:8786; env {dist.SCHEDULER_ENV}); "
                          "default: start a local cluster"),
        click.option("--workers", type=click.IntRange(1, 1024), default=None,
                     help="workers of the local cluster (default: one per GPU, or by CPU cores)"),
        click.option("--device", type=click.Choice(dist.DEVICES), default="auto", show_default=True,
                     help="where chunks are transformed: the workers' GPUs (auto, gpu) or CPUs"),
        click.option("--threads-only", is_flag=True,
                     help="CPU only: workers as threads of this process (quick start for small jobs)"),
        click.option("--dashboard", metavar="ADDR", default=":8787", show_default=True,
                     help="where the local cluster's dashboard listens; 'none' for no dashboard"),
        click.option("--report", "report_path", metavar="FILE.html", type=click.Path(dir_okay=False), default=None,
                     help="write a Dask performance report of the run there"),
    ]
    for option in reversed(options):
        f = option(f)
    return f


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
    """The distributed.Client of a command: the scheduler at `scheduler`, or a local cluster.

    report_path: a Dask performance report (HTML) of everything run inside the block goes there.
    """
    if scheduler:
        if workers is not None or threads_only:
            raise ValueError("--workers and --threads-only only apply to a local cluster, not with --scheduler")
        with dist.cluster(scheduler) as client, _reported(report_path):
            yield client
        return
    # Dask's size estimates of task results it cannot measure are not the user's concern.
    logging.getLogger("distributed.sizeof").setLevel(logging.ERROR)
    if threads_only and device == "gpu":
        raise ValueError("--threads-only starts CPU workers; it cannot be combined with --device gpu")
    dashboard_address = None if str(dashboard).lower() == "none" else dashboard
    cluster_device = "cpu" if threads_only else device
    # A failed chunk reaches the command as one line; the workers' own error logs would repeat it.
    with local_cluster(device=cluster_device, n_workers=workers, processes=not threads_only,
                       dashboard_address=dashboard_address, silence_logs=logging.CRITICAL) as client, \
            _reported(report_path):
        yield client


@contextmanager
def _reported(report_path):
    if report_path is None:
        yield
        return
    from distributed import performance_report

    with performance_report(filename=str(report_path)):
        yield


def worker_count(client) -> int:
    return len(client.scheduler_info(n_workers=-1)["workers"])
