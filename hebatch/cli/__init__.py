"""The `hebatch` command line (entry point `hebatch = hebatch.cli:main`).

One module per command family; importing them registers their commands on the root group. Each
command parses options, calls one job of hebatch.jobs and prints its summary.
"""

from . import bench, bfv, cluster, demo, ntt, warmup, workflow, zk  # noqa: F401  (registers the commands)
from .app import main

__all__ = ["main"]
