"""A batch NTT job of hebatch on SLURM GPU nodes, through dask-jobqueue's SLURMCluster.

The scheduler runs in this process (a login node or a small job); every worker is one SLURM job of
one task with one GPU (`--gpus-per-task=1`) running `dask cuda worker` (dask-jobqueue's
worker_command "dask_cuda.cli") with the resource GPU=1. `--nodes N --gpus-per-node G` asks for
N*G such workers, then the job reads a Zarr batch, transforms it with `hebatch.distributed` and writes the
result chunk by chunk (a rerun resumes):

    python deploy/slurm/hebatch_slurm.py in.zarr out.zarr --modulus 1152921504606584833 \\
        --nodes 2 --gpus-per-node 4 --queue gpu --account myproj --walltime 01:00:00
    python deploy/slurm/hebatch_slurm.py in.zarr out.zarr --modulus Q --print-job-script

Needs dask-jobqueue >= 0.8.2 here (worker_command) and hebatch[gpu] on the nodes (a shared
filesystem or the same venv path); both paths must be on storage every node sees.
dask-jobqueue is imported only when a cluster is started, so this file imports without it.
"""

from __future__ import annotations

import argparse
import sys

JOB_NAME = "hebatch-gpu"
WORKER_THREADS = 4  # tasks per GPU worker, as dist.cluster uses for a LocalCUDACluster


def _positive_int(value, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def cluster_options(
    *,
    queue=None,
    account=None,
    walltime="01:00:00",
    cpus_per_gpu=8,
    memory_per_gpu="64GB",
    threads=WORKER_THREADS,
    interface=None,
    python=None,
    log_directory="hebatch-slurm-logs",
    dashboard_address=":8787",
    job_extra_directives=(),
) -> dict:
    """The keyword arguments of dask_jobqueue.SLURMCluster for one-GPU hebatch workers.

    Each SLURM job is one task (dask-jobqueue writes `-n 1`) with `cpus_per_gpu` CPUs
    (`--cpus-per-task`, from job_cpu), `memory_per_gpu` host memory (`--mem`, also the worker's
    memory limit) and one GPU (`--gpus-per-task=1`); it runs `python -m dask_cuda.cli` (one worker,
    since the job sees one GPU) with `threads` concurrent tasks and the resource GPU=1.
    interface: the network interface of the workers and scheduler (e.g. "ib0"); python: the
    interpreter on the nodes (default this one); job_extra_directives: more `#SBATCH` options.
    """
    _positive_int(cpus_per_gpu, "cpus_per_gpu")
    _positive_int(threads, "threads")
    if threads > cpus_per_gpu:
        raise ValueError(f"threads ({threads}) must not exceed cpus_per_gpu ({cpus_per_gpu})")
    extra = list(job_extra_directives)
    if any(d.strip().startswith(("--gpus", "--gres", "-G")) for d in extra):
        raise ValueError(
            "job_extra_directives must not request GPUs: each worker job asks for exactly one (--gpus-per-task=1)"
        )
    return {
        "queue": queue,
        "account": account,
        "walltime": walltime,
        "job_name": JOB_NAME,
        "cores": threads,  # dask-jobqueue: worker threads = cores / processes
        "processes": 1,
        "job_cpu": cpus_per_gpu,
        "memory": memory_per_gpu,
        "job_extra_directives": ["--gpus-per-task=1", *extra],
        "worker_command": "dask_cuda.cli",
        "worker_extra_args": ["--resources", "GPU=1"],
        "interface": interface,
        "python": python or sys.executable,
        "log_directory": log_directory,
        "scheduler_options": {"dashboard_address": dashboard_address},
    }


def slurm_cluster_class():
    """dask_jobqueue.SLURMCluster, or ModuleNotFoundError saying what to install."""
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise ModuleNotFoundError(
            "SLURM deployment needs the dask-jobqueue package (>= 0.8.2): pip install 'dask-jobqueue>=0.8.2'"
        ) from None
    return SLURMCluster


def start_cluster(nodes: int, gpus_per_node: int, **options):
    """A SLURMCluster asked for nodes * gpus_per_node one-GPU worker jobs (options: cluster_options)."""
    workers = _positive_int(nodes, "nodes") * _positive_int(gpus_per_node, "gpus_per_node")
    cluster = slurm_cluster_class()(**cluster_options(**options))
    cluster.scale(jobs=workers)
    return cluster


def run_ntt(
    address: str, source: str, target: str, moduli, *, negacyclic=False, inverse=False, workers=None, wait_timeout=600
) -> int:
    """Transform the Zarr batch at `source` into `target` on the cluster at `address`; chunks written.

    moduli: one modulus (an int, or a one-element list) for a (batch, n) store, or one per limb for
    (batch, limbs, n). workers: wait until this many workers joined (None: do not wait).
    """
    from hebatch import dist

    moduli = list(moduli) if isinstance(moduli, (list, tuple)) else [moduli]
    if not moduli:
        raise ValueError("moduli must name at least one modulus")
    modulus = moduli[0] if len(moduli) == 1 else moduli
    with dist.cluster(address) as client:
        if workers:
            client.wait_for_workers(workers, timeout=wait_timeout)
        x = dist.from_zarr(source)
        y = dist.ntt(x, modulus, negacyclic=negacyclic, inverse=inverse)
        return dist.to_zarr(y, target, progress=True)


def _moduli(text: str) -> list[int]:
    try:
        return [int(part, 0) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--modulus takes integers separated by commas, got {text!r}") from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Batch NTT of a Zarr store on SLURM GPU nodes (dask-jobqueue).")
    parser.add_argument("input", help="Zarr store of the batch: (batch, n) or (batch, limbs, n)")
    parser.add_argument("output", help="Zarr store to write (a rerun resumes it)")
    parser.add_argument(
        "--modulus",
        type=_moduli,
        action="append",
        required=True,
        help="modulus, or one per limb separated by commas (repeatable)",
    )
    parser.add_argument("--negacyclic", action="store_true")
    parser.add_argument("--inverse", action="store_true")
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--gpus-per-node", type=int, default=1)
    parser.add_argument("--queue", help="partition (#SBATCH -p)")
    parser.add_argument("--account", help="account (#SBATCH -A)")
    parser.add_argument("--walltime", default="01:00:00")
    parser.add_argument("--cpus-per-gpu", type=int, default=8)
    parser.add_argument("--memory-per-gpu", default="64GB", help="host memory per GPU worker")
    parser.add_argument("--threads", type=int, default=WORKER_THREADS, help="concurrent tasks per GPU worker")
    parser.add_argument("--interface", help="network interface of scheduler and workers, e.g. ib0")
    parser.add_argument("--python", help="Python on the nodes (default: this one)")
    parser.add_argument("--job-extra", action="append", default=[], help="another #SBATCH option (repeatable)")
    parser.add_argument("--wait-timeout", type=float, default=600, help="seconds to wait for all workers")
    parser.add_argument("--print-job-script", action="store_true", help="print one worker's job script and exit")
    args = parser.parse_args(argv)
    options = dict(
        queue=args.queue,
        account=args.account,
        walltime=args.walltime,
        cpus_per_gpu=args.cpus_per_gpu,
        memory_per_gpu=args.memory_per_gpu,
        threads=args.threads,
        interface=args.interface,
        python=args.python,
        job_extra_directives=args.job_extra,
    )
    moduli = [q for group in args.modulus for q in group]
    try:
        workers = _positive_int(args.nodes, "--nodes") * _positive_int(args.gpus_per_node, "--gpus-per-node")
        if args.print_job_script:
            with slurm_cluster_class()(**cluster_options(**options)) as cluster:
                print(cluster.job_script())
            return 0
        with start_cluster(args.nodes, args.gpus_per_node, **options) as cluster:
            print(
                f"hebatch: asked SLURM for {workers} GPU workers; dashboard: {cluster.dashboard_link}", file=sys.stderr
            )
            written = run_ntt(
                cluster.scheduler_address,
                args.input,
                args.output,
                moduli,
                negacyclic=args.negacyclic,
                inverse=args.inverse,
                workers=workers,
                wait_timeout=args.wait_timeout,
            )
    except (ValueError, TypeError, ModuleNotFoundError) as error:
        print(f"hebatch_slurm.py: {error}", file=sys.stderr)
        return 2
    print(f"hebatch: wrote {written} chunks to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
