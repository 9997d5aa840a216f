"""Shared pieces of the Dask tests: task functions that leave traces (the `client` fixture is in conftest)."""

import os

import numpy as np


def poison(block, marker, block_info=None):
    """A task that records that it ran (bad input must be refused before any task runs)."""
    open(marker, "a").close()
    return block


def fail_once(block, marker, log, chunk=2, block_info=None):
    """Logs every chunk it computes; raises on chunk `chunk` the first time (when `marker` is absent)."""
    index = block_info[None]["chunk-location"][0]
    with open(log, "a") as f:
        f.write(f"{index}\n")
    if index == chunk and not os.path.exists(marker):
        open(marker, "w").close()
        raise RuntimeError(f"injected failure in chunk {index}")
    return block


def logged_chunks(log) -> list[int]:
    with open(log) as f:
        return sorted(int(line) for line in f)


def residues(q, shape, dtype=np.uint64):
    from .oracle import random_residues

    return random_residues(np.random.default_rng(), q, shape, dtype)
