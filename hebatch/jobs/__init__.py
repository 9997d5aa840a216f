"""Scripted jobs as library functions: batch NTTs of datasets, BFV over datasets (keys in files,
encrypt, evaluate, decrypt), zk-sized transforms and their sweeps, the workflows of
`workflows/*.toml`, the demo and the facts `hebatch info` shows.

Each job checks its inputs before any cluster starts, reports progress on stderr (rich) and returns
a summary dict; the command line (`hebatch.cli`) only parses options, calls one job and prints.
"""

from .bfv import decrypt_store, encrypt_dataset, evaluate_store, keygen, pipeline_options, run_pipeline_demo
from .cluster import job_cluster, local_cluster, worker_count
from .demo import demo
from .info import info
from .ntt import batch_ntt, parse_modulus
from .workflow import load_config, run_workflow
from .zk import zk_ntt

__all__ = [
    "batch_ntt",
    "parse_modulus",
    "keygen",
    "encrypt_dataset",
    "evaluate_store",
    "decrypt_store",
    "pipeline_options",
    "run_pipeline_demo",
    "zk_ntt",
    "load_config",
    "run_workflow",
    "demo",
    "info",
    "job_cluster",
    "local_cluster",
    "worker_count",
]
