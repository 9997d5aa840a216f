"""The scheduler layer: hebatch jobs on a Dask cluster (GPU workers, or CPU workers where none).

    from hebatch import dist
    with dist.cluster() as client:              # LocalCUDACluster on GPUs, else LocalCluster
        X = dist.from_zarr("in.zarr")           # Dask array (batch, limbs, n), chunked along the batch
        Y = dist.ntt(X, moduli)                 # lazy, one task per chunk (ntt_cyclic_2^16, ...)
        dist.to_zarr(Y, "out.zarr", progress=True)   # chunk by chunk; a rerun resumes
        big = dist.ntt_large(x, q, workers=4)   # one 2^20..2^28 transform as a 4-step across workers
        Z = dist.bfv_map(fn, C, keys, params)   # fn(ctx, keys, ct) per chunk of ciphertexts, keys sent once

A transform applied directly to another's result (dist.intt(dist.polymul(A, B, q), q)) joins its
task: one task per chunk for the chain, its intermediates never leave the GPU. Every worker of
`cluster()` carries a HebatchPlugin that owns its streams, kernels and contexts (plugin.py); host
chunks are pipelined over several CUDA streams from their own pinned-registered memory, and device
chunks are transformed without the host waiting (worker.py).
"""

from .arrays import batch_chunks, chunk_budget, from_numpy, to_device, to_host
from .batch import intt, map_chunks, ntt, polymul
from .bfv import bfv_map
from .bgv import bgv_map
from .cluster import SCHEDULER_ENV, cluster, wait_for_workers
from .jobs import run
from .large import TRANSPOSES, LargeNTT, ntt_large
from .plugin import HebatchPlugin, worker_report
from .worker import DEVICES
from .zarr_io import from_zarr, to_zarr, zarr_provenance, zarr_status

__all__ = [
    "bfv_map",
    "bgv_map",
    "cluster",
    "from_numpy",
    "from_zarr",
    "to_zarr",
    "zarr_status",
    "zarr_provenance",
    "ntt",
    "intt",
    "polymul",
    "ntt_large",
    "LargeNTT",
    "run",
    "to_device",
    "to_host",
    "batch_chunks",
    "chunk_budget",
    "SCHEDULER_ENV",
    "DEVICES",
    "TRANSPOSES",
    "map_chunks",
    "HebatchPlugin",
    "worker_report",
    "wait_for_workers",
]
