"""`hebatch ntt`: a batch of NTTs from a Zarr store or .npy file to another, on a Dask cluster."""

from __future__ import annotations

import os

import click

from .. import distributed as dist
from ..ntt.plan import ALGORITHMS
from ..ntt.validate import check_transform_args
from .app import main
from .clusteropts import cluster_options, job_cluster, worker_count
from .common import MODULUS, Timer, console, json_option, report
from .io import kind_of, open_batch, peek, write_batch


def batch_ntt(in_path, out_path, modulus, *, negacyclic=False, inverse=False, algorithm="auto", chunk=None,
              component=None, overwrite=False, device="auto", progress=True) -> dict:
    """Transform the batch at in_path into out_path on the active cluster; a summary of the run.

    A Zarr output that an interrupted run left unfinished is resumed: only missing chunks are computed.
    """
    x = open_batch(in_path, component=component, chunks=chunk, name="IN")
    y = dist.ntt(x, modulus, negacyclic=negacyclic, inverse=inverse, algorithm=algorithm, device=device)
    with Timer() as timer:
        written = write_batch(y, out_path, overwrite=overwrite, progress=progress, console=console, name="OUT")
    total, done = written["chunks_total"], written["chunks_written"]
    fraction = done / total if total else 0.0
    computed_bytes = x.nbytes * fraction
    return {
        "input": os.fspath(in_path),
        "output": os.fspath(out_path),
        "shape": list(x.shape),
        "dtype": str(x.dtype),
        "modulus": list(modulus) if isinstance(modulus, tuple) else modulus,
        "negacyclic": negacyclic,
        "inverse": inverse,
        "elements": int(x.size),
        "chunks_total": total,
        "chunks_written": done,
        "resumed": done < total,
        "seconds": timer.seconds,
        "throughput_GBps": computed_bytes / timer.seconds / 1e9 if timer.seconds > 0 and done else 0.0,
    }


@main.command("ntt")
@click.argument("in_path", metavar="IN", type=click.Path(dir_okay=True))
@click.argument("out_path", metavar="OUT", type=click.Path(dir_okay=True))
@click.option("--modulus", "-q", type=MODULUS, required=True,
              help="a prime, 'goldilocks', 'babybear', or a comma list (one per RNS limb, axis -2)")
@click.option("--negacyclic", is_flag=True, help="negacyclic transform (Z_q[x]/(x^n + 1))")
@click.option("--inverse", is_flag=True, help="inverse transform (scaled by n^-1)")
@click.option("--algorithm", type=click.Choice(ALGORITHMS), default="auto", show_default=True)
@click.option("--chunk", type=click.IntRange(1), default=None,
              help="rows per chunk (default: sized from worker memory)")
@click.option("--component", default=None, help="array inside a Zarr group IN (default 'data')")
@click.option("--overwrite", is_flag=True, help="replace OUT instead of resuming it")
@click.option("--no-progress", is_flag=True, help="no progress bar")
@cluster_options
@json_option
def ntt_command(in_path, out_path, modulus, negacyclic, inverse, algorithm, chunk, component, overwrite, no_progress,
                scheduler, workers, device, threads_only, dashboard, report_path, as_json):
    """Transform a batch (axis 0) from IN to OUT (.zarr or .npy each) on a Dask cluster.

    Every row along the last axis is one transform of n points (n a power of two); for RNS input the
    axis before it holds the limbs, one modulus each. Entries must be below their modulus, of dtype
    uint64 (uint32 when every modulus < 2^32). A Zarr OUT is written chunk by chunk: rerunning an
    interrupted command resumes it.

    \b
    Examples:
      hebatch ntt in.npy out.npy --modulus goldilocks
      hebatch ntt in.zarr out.zarr -q 1152921504606584833,1152921504598720513 --negacyclic --chunk 64
      hebatch ntt out.zarr back.zarr -q babybear --inverse --scheduler tcp://10.0.0.5:8786 --json
      hebatch ntt in.zarr out.zarr -q goldilocks --workers 4 --report ntt-report.html
    """
    kind_of(out_path, "OUT")
    shape, dtype = peek(in_path, component=component, name="IN")
    # Everything that can be checked without the data is checked before a cluster starts.
    check_transform_args(shape, dtype, modulus, negacyclic=negacyclic, algorithm=algorithm, name="IN")
    with job_cluster(scheduler, workers, device, threads_only, dashboard, report_path) as client:
        summary = batch_ntt(in_path, out_path, modulus, negacyclic=negacyclic, inverse=inverse, algorithm=algorithm,
                            chunk=chunk, component=component, overwrite=overwrite, device=device,
                            progress=not no_progress)
        summary["workers"] = worker_count(client)
    report(summary, as_json, "hebatch ntt")
