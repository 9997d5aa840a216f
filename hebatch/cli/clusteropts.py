"""Options shared by the commands that run on a Dask cluster; the jobs start the cluster they describe."""

from __future__ import annotations

import click

from ..device import DEVICES
from ..jobs.cluster import SCHEDULER_ENV

CLUSTER_KEYS = ("scheduler", "workers", "device", "threads_only", "dashboard", "report_path")


def device_option(help_text="where the work runs: a GPU where one is visible (auto), the GPU, or the CPU"):
    """--device auto|cpu|gpu: the one device option of every command."""
    return click.option("--device", type=click.Choice(DEVICES), default="auto", show_default=True, help=help_text)


def cluster_options(f):
    """--scheduler, --workers, --device, --threads-only, --dashboard, --report."""
    options = [
        click.option(
            "--scheduler",
            metavar="ADDR",
            default=None,
            envvar=SCHEDULER_ENV,
            help=f"a running Dask scheduler (e.g. tcp://10.0.0.5:8786; env {SCHEDULER_ENV}); "
            "default: start a local cluster",
        ),
        click.option(
            "--workers",
            type=click.IntRange(1, 1024),
            default=None,
            help="workers of the local cluster (default: one per GPU, or by CPU cores)",
        ),
        device_option("where chunks are transformed: the workers' GPUs (auto, gpu) or CPUs"),
        click.option(
            "--threads-only",
            is_flag=True,
            help="CPU only: workers as threads of this process (quick start for small jobs)",
        ),
        click.option(
            "--dashboard",
            metavar="ADDR",
            default=":8787",
            show_default=True,
            help="where the local cluster's dashboard listens; 'none' for no dashboard",
        ),
        click.option(
            "--report",
            "report_path",
            metavar="FILE.html",
            type=click.Path(dir_okay=False),
            default=None,
            help="write a Dask performance report of the run there",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def cluster_spec(options: dict) -> dict:
    """Take the cluster options out of a command's keyword arguments: the `cluster` of a job."""
    return {key: options.pop(key) for key in CLUSTER_KEYS}
