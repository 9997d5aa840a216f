"""`hebatch demo`: the main batch job end to end on a local Dask cluster (the README's first command)."""

from __future__ import annotations

import click

from ..jobs.demo import demo as demo_job
from .app import main
from .clusteropts import device_option
from .common import json_option, report_checked


@main.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="results/demo",
    show_default=True,
    help="folder of the run: input.zarr, ntt.zarr, performance-report.html, summary.json (replaced)",
)
@click.option(
    "--batch",
    type=click.IntRange(1, 1 << 20),
    default=None,
    help="polynomials (default: 2048 on GPU workers, 256 on CPU workers)",
)
@click.option("--log-n", type=click.IntRange(4, 17), default=12, show_default=True, help="log2 of the transform size")
@click.option("--limbs", type=click.IntRange(1, 64), default=4, show_default=True, help="RNS limbs (60-bit primes)")
@click.option("--chunk", type=click.IntRange(1, 1 << 20), default=None, help="polynomials per task")
@click.option(
    "--workers",
    type=click.IntRange(1, 1024),
    default=None,
    help="workers of the local cluster (default: one per GPU, or by CPU cores)",
)
@device_option("where the workers transform: their GPUs where GPUs are visible (auto), GPUs, or CPUs")
@click.option("--threads-only", is_flag=True, help="CPU workers as threads of this process (starts faster)")
@click.option(
    "--dashboard",
    metavar="ADDR",
    default=":8787",
    show_default=True,
    help="where the cluster's dashboard listens; 'none' for no dashboard",
)
@click.option(
    "--sample-rows", type=click.IntRange(0, 64), default=2, show_default=True, help="rows checked exactly after the job"
)
@click.option("--seed", type=int, default=None, help="seed of the random dataset (default: fresh)")
@json_option
def demo(out_dir, batch, log_n, limbs, chunk, workers, device, threads_only, dashboard, sample_rows, seed, as_json):
    """The main batch job on a local Dask cluster: a Zarr dataset of random RNS polynomials is created,
    transformed chunk by chunk into another Zarr store, sample rows are checked exactly, and the
    throughput is shown beside this machine's copy bandwidth; a Dask performance report is written.

    \b
    Examples:
      hebatch demo
      hebatch demo --device cpu --workers 2 --dashboard none
      hebatch demo --batch 1024 --log-n 13 --out /tmp/demo --json
    """
    report_checked(
        demo_job,
        "hebatch demo",
        as_json,
        out_dir=out_dir,
        batch=batch,
        log_n=log_n,
        limbs=limbs,
        chunk=chunk,
        workers=workers,
        device=device,
        threads_only=threads_only,
        dashboard=dashboard,
        sample_rows=sample_rows,
        seed=seed,
    )
