"""The root `hebatch` command group; each command module registers itself on it."""

from __future__ import annotations

import click

import hebatch as hb

from .common import CONTEXT, CleanErrorGroup


@click.group(cls=CleanErrorGroup, context_settings=CONTEXT)
@click.version_option(hb.__version__, prog_name="hebatch")
@click.option("--debug", is_flag=True, help="show the full traceback of an error instead of one line")
def main(debug):
    """hebatch: batched NTTs, polynomial arithmetic and BFV on CPUs and NVIDIA GPUs.

    \b
    Examples:
      hebatch demo                                  # the main batch job on a local cluster
      hebatch ntt in.zarr out.zarr --modulus goldilocks --negacyclic
      hebatch zk-ntt --log-n 20 --field babybear --verify
      hebatch bfv demo --records 64
      hebatch run workflows/batch_ntt.toml          # a scripted batch job with a performance report
      hebatch cluster --cpu --workers 2             # a local cluster; its dashboard address
      hebatch info --json
    """
