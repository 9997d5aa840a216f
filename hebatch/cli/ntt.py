"""`hebatch ntt`: a batch of NTTs from a Zarr store or .npy file to another, on a Dask cluster."""

from __future__ import annotations

import click

from ..jobs.ntt import ALGORITHMS, run_batch_ntt
from .app import main
from .clusteropts import cluster_options, cluster_spec
from .common import MODULUS, json_option, refuse_existing, report


@main.command("ntt")
@click.argument("in_path", metavar="IN", type=click.Path(dir_okay=True))
@click.argument("out_path", metavar="OUT", type=click.Path(dir_okay=True))
@click.option(
    "--modulus",
    "-q",
    type=MODULUS,
    required=True,
    help="a prime, 'goldilocks', 'babybear', or a comma list (one per RNS limb, axis -2)",
)
@click.option("--negacyclic", is_flag=True, help="negacyclic transform (Z_q[x]/(x^n + 1))")
@click.option("--inverse", is_flag=True, help="inverse transform (scaled by n^-1)")
@click.option("--algorithm", type=click.Choice(ALGORITHMS), default="auto", show_default=True)
@click.option(
    "--chunk", type=click.IntRange(1), default=None, help="rows per chunk (default: sized from worker memory)"
)
@click.option("--component", default=None, help="array inside a Zarr group IN (default 'data')")
@click.option("--overwrite", is_flag=True, help="replace OUT instead of resuming it")
@click.option("--no-progress", is_flag=True, help="no progress bar")
@cluster_options
@json_option
def ntt_command(in_path, out_path, modulus, no_progress, as_json, **options):
    """Transform a batch (axis 0) from IN to OUT (.zarr or .npy each) on a Dask cluster.

    Every row along the last axis is one transform of n points (n a power of two); for RNS input the
    axis before it holds the limbs, one modulus each. Entries must be below their modulus, of dtype
    uint64 (uint32 when every modulus < 2^32). A Zarr OUT is written chunk by chunk, each with a
    checksum, and records what made it: rerunning an interrupted command resumes it (damaged chunks
    are redone); another job into the same OUT is refused unless --overwrite.

    \b
    Examples:
      hebatch ntt in.npy out.npy --modulus goldilocks
      hebatch ntt in.zarr out.zarr -q 1152921504606584833,1152921504598720513 --negacyclic --chunk 64
      hebatch ntt out.zarr back.zarr -q babybear --inverse --scheduler tcp://10.0.0.5:8786 --json
      hebatch ntt in.zarr out.zarr -q goldilocks --workers 4 --report ntt-report.html
    """
    refuse_existing(out_path, options["overwrite"])
    cluster = cluster_spec(options)
    summary = run_batch_ntt(in_path, out_path, modulus, progress=not no_progress, cluster=cluster, **options)
    report(summary, as_json, "hebatch ntt")
