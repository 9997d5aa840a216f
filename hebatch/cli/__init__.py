"""The `hebatch` command line (entry point `hebatch = hebatch.cli:main`).

One module per command family; importing them registers their commands on the root group.
"""

from . import bench, bfv, cluster, demo, ntt, workflow, zk  # noqa: F401  (registers the commands)
from .app import main

__all__ = ["main"]
