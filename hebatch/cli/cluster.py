"""`hebatch cluster` (a local Dask cluster until Ctrl-C) and `hebatch info` (devices, versions, caches)."""

from __future__ import annotations

import contextlib
import threading

import click

from ..jobs.cluster import serving_cluster
from ..jobs.info import info as info_job
from .app import main
from .common import console, json_option, report


@main.command("cluster")
@click.option("--cpu", is_flag=True, help="CPU workers even where GPUs are visible")
@click.option(
    "--workers", type=click.IntRange(1, 1024), default=None, help="workers (default: one per GPU, or by CPU cores)"
)
@click.option("--threads", type=click.IntRange(1, 1024), default=None, help="tasks each worker runs at once")
@click.option(
    "--protocol",
    type=click.Choice(["tcp", "ucx", "ucxx"]),
    default="tcp",
    show_default=True,
    help="transport between workers (ucx: NVLink/InfiniBand where dask-cuda and ucx-py are installed)",
)
@click.option("--nvlink", is_flag=True, help="UCX over NVLink between GPUs (needs --protocol ucx or ucxx)")
@click.option(
    "--scheduler-port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="port of the scheduler (0: any free port)",
)
@click.option(
    "--dashboard", metavar="ADDR", default=":8787", show_default=True, help="dashboard address; 'none' for no dashboard"
)
@click.option(
    "--seconds",
    type=click.FloatRange(0),
    default=None,
    help="stop after this many seconds instead of waiting for Ctrl-C",
)
@json_option
def cluster_command(cpu, workers, threads, protocol, nvlink, scheduler_port, dashboard, seconds, as_json):
    """Start a local Dask cluster (LocalCUDACluster on GPUs, else CPU workers) and wait until Ctrl-C.

    Jobs join it with --scheduler ADDR (or HEBATCH_SCHEDULER=ADDR); watch them on the dashboard.

    \b
    Examples:
      hebatch cluster                              # one worker per visible GPU
      hebatch cluster --cpu --workers 4
      hebatch cluster --protocol ucx --nvlink      # GPUs talking over NVLink
      hebatch cluster --json                       # addresses as JSON (for scripts), then wait
    """
    stop = threading.Event()
    with serving_cluster(
        cpu=cpu,
        workers=workers,
        threads=threads,
        protocol=protocol,
        nvlink=nvlink,
        scheduler_port=scheduler_port,
        dashboard=dashboard,
    ) as summary:
        report(summary, as_json, "hebatch cluster")
        console.print(
            f"jobs join with: --scheduler {summary['scheduler']}   (Ctrl-C stops the cluster)", highlight=False
        )
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait(seconds)
    console.print("cluster stopped", highlight=False)


@main.command("info")
@json_option
def info(as_json):
    """Devices, versions and kernel cache of this installation.

    \b
    Examples:
      hebatch info
      hebatch info --json | jq .devices
    """
    summary = info_job()
    if as_json:
        report(summary, True, "hebatch info")
        return
    shown = dict(summary)
    shown["devices"] = (
        "; ".join(
            f"{g['index']}: {g['name']} ({g['memory_GiB']} GiB, sm {g['compute_capability']})"
            for g in summary["devices"]
        )
        or "none (CPU only: NumPy backend)"
    )
    cache = summary["table_cache"]
    shown["table_cache"] = (
        "; ".join(
            f"GPU {device}: {c['entries']} tables, {c['bytes'] / 2**20:.1f} of {c['budget_bytes'] / 2**20:.0f} MiB"
            for device, c in cache.items()
        )
        or "none (no GPU)"
    )
    found = summary["prebuilt_cubin"]
    if found is None:
        shown["prebuilt_cubin"] = "none (kernels compile on first use; `hebatch warmup` compiles them once)"
    else:
        entries = found.get("cubins") or [found]
        shown["prebuilt_cubin"] = "; ".join(
            f"{e['path']}: "
            + (
                f"{e['arch']}, {e['kernels']} kernels, "
                + (
                    "matches the sources"
                    if e["matches_sources"]
                    else "built from other sources: not used (rebuild: python -m hebatch.ntt.prebuild)"
                )
                if e["present"]
                else "missing (rebuild: python -m hebatch.ntt.prebuild)"
            )
            for e in entries
        )
    report(shown, False, "hebatch info")
