#!/usr/bin/env python
"""Benchmarks of the Dask scheduler layer (hebatch.distributed) on 1, 2 or 4 GPUs of one machine.

Cases (each runs on its own; a failure is recorded with its error text and the rest go on):
  host_memory host memory bandwidth of this run (one thread and several copying): the floor of any
              host-memory batch
  copy        pinned host<->device copy bandwidth (H2D, D2H, their round trip, both at once) and the
              device-to-device bandwidth: the references of the batch cases
  probe       1 GPU, one chunk, no Dask: the costs inside a task (entry check kernels, the transform,
              registering pageable memory, allocating pinned memory fresh and pooled)
  host_batch  1 GPU: batch job from host memory (chunks made on the worker in pinned memory, and at
              the first size also in pageable memory that each task registers), copied in, NTT, copied
              out into pinned results, pipelined over streams; GB/s of input against the same run's
              both-directions copy rate (target >= 80%), for the whole job and per further chunk
  overhead    1 GPU: device-resident batch through dist.ntt (entry check on and off), a fused chain
              (ntt -> intt) and polymul, each against a plain loop of the same hb calls on chunks of
              the same shapes, and a graph of no-op tasks (targets: <= 10% overhead at 256 MiB
              chunks, <= 25% at 64 MiB), at two batch sizes: the whole-job overhead (Dask's fixed
              cost per job included), the marginal overhead per chunk (slope between the sizes) and
              the fixed cost per job are reported apart, with host time per task phase on the worker;
              the same jobs also through Dask's threaded scheduler in this process (no cluster)
  task_cost   the fixed host cost per task, with kernels of ~0 time: many one-row chunks through dist.ntt,
              its unchecked form and an ntt -> intt chain, against a graph of no-op tasks over the same
              chunks, a plain loop of the same hb calls and the task function called without Dask (our
              part of a task), with a profile of that function; on one GPU worker, or on an in-process
              CPU worker with the GPU worker's threads when there is no GPU (or with --cpu)
  scaling     device-resident batch job on 1, 2, 4 GPUs (as many as visible), speedup over 1 GPU
  large       dist.ntt_large at 2^26 and 2^28 on 2 and 4 GPUs (both transposes), time split into
              transforms and transposes, against hb.ntt and cupy.fft.fft on one GPU
Timings: CUDA events for single-GPU loops, wall clock around Dask jobs that end with every worker's
GPU synchronised (tasks return before their kernels end); one warm-up, medians of --repeats runs.
Writes benchmarks/results/dist-<device>-<date>.json (and $OUT/<same name> when OUT is set).

  python benchmarks/dist_bench.py             # full run on the GPUs of this machine
  python benchmarks/dist_bench.py --quick     # smaller sizes, fewer repeats (under 3 minutes on an H100)
  python benchmarks/dist_bench.py --cpu       # smoke test of the script on a CPU cluster
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import json
import os
import pathlib
import platform
import re
import statistics
import sys
import time
import traceback

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a source checkout without installing
    sys.path.insert(0, str(ROOT))

import hebatch as hb  # noqa: E402
from hebatch import dist  # noqa: E402

CASES = ("host_memory", "copy", "probe", "host_batch", "overhead", "task_cost", "scaling", "large")
GIB, MIB = 1 << 30, 1 << 20


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    p.add_argument("--cpu", action="store_true", help="smoke test on a CPU LocalCluster with tiny sizes")
    p.add_argument("--cases", default=",".join(CASES), help=f"comma-separated subset of {','.join(CASES)}")
    p.add_argument("--log-n", type=int, default=16, help="batch transforms: log2 of n")
    p.add_argument("--limbs", type=int, default=8, help="batch transforms: RNS limbs (60-bit primes)")
    p.add_argument("--chunk-mib", type=int, nargs="+", default=None, help="chunk sizes (MiB) of the batch cases")
    p.add_argument("--host-chunk-mib", type=int, nargs="+", default=None, help="chunk sizes (MiB) of host_batch")
    p.add_argument("--host-gib", type=float, default=None, help="input size of host_batch")
    p.add_argument("--device-gib", type=float, default=None, help="input size of overhead and scaling")
    p.add_argument("--large-log-n", type=int, nargs="+", default=None, help="sizes of the large case")
    p.add_argument("--tasks", type=int, default=None, help="task_cost: one-row chunks in the batch")
    p.add_argument("--max-gpus", type=int, default=4, help="use at most this many GPUs")
    p.add_argument("--threads", type=int, default=None, help="task threads per GPU worker (default: dist.cluster's)")
    p.add_argument(
        "--protocol",
        choices=["tcp", "ucx", "ucxx"],
        default=None,
        help="worker communication (ucx/ucxx need the UCX packages)",
    )
    p.add_argument("--nvlink", action="store_true", help="UCX over NVLink between the GPUs (with --protocol ucx[x])")
    p.add_argument("--repeats", type=int, default=None, help="timed runs per measurement (median reported)")
    p.add_argument("--out-dir", type=pathlib.Path, default=ROOT / "benchmarks" / "results")
    args = p.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    args.cases = cases
    if not 1 <= args.log_n <= 28 or not 1 <= args.limbs <= 64 or args.max_gpus < 1:
        p.error("--log-n must be 1..28, --limbs 1..64, --max-gpus >= 1")
    quick, cpu = args.quick, args.cpu
    if cpu:
        args.log_n, args.limbs = min(args.log_n, 10), min(args.limbs, 2)
    defaults = {  # (full, quick, cpu)
        "chunk_mib": ([64, 256, 1024], [64, 256, 1024], [1]),  # overhead and scaling
        "host_chunk_mib": ([256, 1024], [256, 1024], [1]),
        "host_gib": (8.0, 4.0, 1 / 64),
        "device_gib": (16.0, 16.0, 1 / 64),
        "large_log_n": ([26, 28], [24, 26], [16]),
        "repeats": (5, 3, 2),
        "tasks": (1024, 512, 64),
    }
    for name, values in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, values[2] if cpu else values[1] if quick else values[0])
    return args


# -- building blocks -----------------------------------------------------------------------------


def _median(values):
    return float(statistics.median(values))


def _gpu_count() -> int:
    from hebatch.backend import gpu_available

    if not gpu_available():
        return 0
    import cupy

    return int(cupy.cuda.runtime.getDeviceCount())


def device_name(cpu: bool) -> str:
    if cpu or not _gpu_count():
        return platform.processor() or platform.machine() or "cpu"
    import cupy

    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-") or "device"


def _versions() -> dict:
    import importlib.metadata as md

    out = {}
    for package in ("hebatch", "numpy", "dask", "distributed", "dask-cuda", "cupy-cuda13x", "cupy-cuda12x", "zarr"):
        with contextlib.suppress(md.PackageNotFoundError):
            out[package] = md.version(package)
    out["python"] = platform.python_version()
    return out


def _random_chunk(shape, moduli, seed, on_device, pinned=True):
    """Uniform residues of shape (rows, limbs, n), made on the worker: on its GPU when it has one
    (fast), returned on the device if on_device, else copied to host memory (pinned memory from the
    worker's pool if pinned, else pageable NumPy memory)."""
    from hebatch.distributed.worker import worker_has_gpu

    if worker_has_gpu():
        import cupy

        rs = cupy.random.RandomState(seed)
        x = cupy.stack([rs.randint(0, q, size=(shape[0], shape[2]), dtype=cupy.int64) for q in moduli], axis=1).astype(
            cupy.uint64
        )
        if on_device:
            return x
        if pinned:  # made straight into pinned memory from the worker's pool, as a reader on the worker would
            from hebatch.distributed.worker import pinned_empty

            return x.get(out=pinned_empty(x.shape, x.dtype))
        return x.get()
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, q, size=(shape[0], shape[2]), dtype=np.uint64) for q in moduli], axis=1)


def random_batch(client, total_bytes, chunk_bytes, n, moduli, on_device, chunk_multiple=1, pinned=True):
    """A persisted Dask batch (rows, limbs, n) of random residues made on the workers."""
    import dask
    from distributed import wait

    row_bytes = len(moduli) * n * 8
    rows = max(1, chunk_bytes // row_bytes)
    chunks = max(chunk_multiple, round(total_bytes / (rows * row_bytes) / chunk_multiple) * chunk_multiple)
    parts = [
        dask.delayed(_random_chunk)((rows, len(moduli), n), tuple(moduli), seed, on_device, pinned)
        for seed in range(chunks)
    ]
    meta = _meta(on_device)
    import dask.array as da

    x = da.concatenate([da.from_delayed(p, (rows, len(moduli), n), dtype=np.uint64, meta=meta) for p in parts])
    x = client.persist(x)
    wait(x)
    return x


def _meta(on_device):
    if on_device:
        import cupy

        return cupy.empty((0, 0, 0), dtype=cupy.uint64)
    return np.empty((0, 0, 0), dtype=np.uint64)


def _sync_device():
    """Wait for all work on this worker's GPU (device tasks return before their kernels end)."""
    from hebatch.device import gpu_available

    if gpu_available():
        import cupy

        cupy.cuda.Device().synchronize()


def time_dask(client, make, repeats, after_warmup=None):
    """Median wall time of persisting make() and waiting for all of it, kernels included (one
    warm-up run first, then after_warmup() if given)."""
    from distributed import futures_of

    from hebatch.distributed.jobs import wait_for

    times = []
    for i in range(repeats + 1):
        start = time.perf_counter()
        y = client.persist(make())
        futures = futures_of(y)
        wait_for(futures)
        client.run(_sync_device)
        elapsed = time.perf_counter() - start
        keys = [f.key for f in futures]
        del y, futures  # released: the scheduler forgets the keys, and the next run computes them again
        while client.run_on_scheduler(_scheduler_knows, keys):
            time.sleep(0.01)
        if i:
            times.append(elapsed)
        elif after_warmup is not None:
            after_warmup()
    return _median(times), times


def _scheduler_knows(keys, dask_scheduler=None):
    return any(key in dask_scheduler.tasks for key in keys)


def time_cuda(fn, repeats):
    """Median milliseconds of fn() between CUDA events on the current stream (one warm-up)."""
    import cupy

    fn()
    cupy.cuda.get_current_stream().synchronize()
    times = []
    for _ in range(repeats):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return _median(times), times


PROTOCOL = {"protocol": None, "enable_nvlink": False, "threads_per_worker": None}  # set from the command line


def gpu_cluster(k, warm=()):
    return dist.cluster(device="gpu", CUDA_VISIBLE_DEVICES=list(range(k)), verbose=False, warm=warm, **PROTOCOL)


def _warm(args):
    """The batch transforms' kernels, loaded by every worker when it starts (no task compiles)."""
    n = 1 << args.log_n
    return [(args.log_n, hb.ntt_primes(60, n, args.limbs), True)]


# -- cases ---------------------------------------------------------------------------------------


def case_host_memory(args, ctx):
    """Host memory copy bandwidth of this machine now: one thread, and the worker's copy threads."""
    from hebatch.distributed import worker
    from hebatch.distributed.worker import parallel_copy

    nbytes = (1 / 64 if args.cpu else 0.5 if args.quick else 2.0) * GIB
    src = np.ones(int(nbytes) // 8, dtype=np.uint64)
    dst = np.empty_like(src)
    dst[...] = 0  # touched: page faults are not what is measured

    def timed(fn):
        times = []
        for i in range(args.repeats + 1):
            start = time.perf_counter()
            fn()
            if i:
                times.append(time.perf_counter() - start)
        return _median(times)

    one = timed(lambda: np.copyto(dst, src))
    several = timed(lambda: parallel_copy(dst, src))
    result = {
        "bytes": src.nbytes,
        "copy_threads": worker.COPY_THREADS,
        "copy_GBps_one_thread": src.nbytes / one / 1e9,  # bytes copied per second (each read and written)
        "copy_GBps_threads": src.nbytes / several / 1e9,
    }
    ctx["host_memory"] = result
    return result


def case_copy(args, ctx):
    """Pinned H2D and D2H bandwidth (serial and concurrent) and D2D, on GPU 0."""
    import cupy
    import cupyx

    nbytes = (256 if args.quick else 1024) * MIB
    host_in = cupyx.empty_pinned((nbytes,), dtype=np.uint8)
    host_out = cupyx.empty_pinned((nbytes,), dtype=np.uint8)
    host_in[...] = 7
    dev_a, dev_b = cupy.empty(nbytes, dtype=cupy.uint8), cupy.empty(nbytes, dtype=cupy.uint8)
    rt = cupy.cuda.runtime
    s1, s2 = cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True)

    def h2d():
        rt.memcpyAsync(dev_a.data.ptr, host_in.ctypes.data, nbytes, rt.memcpyHostToDevice, s1.ptr)

    def d2h():
        rt.memcpyAsync(host_out.ctypes.data, dev_b.data.ptr, nbytes, rt.memcpyDeviceToHost, s1.ptr)

    def timed(fn, stream):
        times = []
        for i in range(args.repeats + 1):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record(stream)
            fn()
            end.record(stream)
            end.synchronize()
            if i:
                times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
        return _median(times)

    t_h2d, t_d2h = timed(h2d, s1), timed(d2h, s1)

    def both_ways():
        times = []
        for i in range(args.repeats + 1):
            start, e1, e2 = cupy.cuda.Event(), cupy.cuda.Event(), cupy.cuda.Event()
            start.record(s1)
            s2.wait_event(start)
            rt.memcpyAsync(dev_a.data.ptr, host_in.ctypes.data, nbytes, rt.memcpyHostToDevice, s1.ptr)
            rt.memcpyAsync(host_out.ctypes.data, dev_b.data.ptr, nbytes, rt.memcpyDeviceToHost, s2.ptr)
            e1.record(s1)
            e2.record(s2)
            e1.synchronize()
            e2.synchronize()
            if i:
                times.append(max(cupy.cuda.get_elapsed_time(start, e1), cupy.cuda.get_elapsed_time(start, e2)) / 1e3)
        return _median(times)

    t_both = both_ways()
    ms_d2d, _ = time_cuda(lambda: dev_b.__setitem__(Ellipsis, dev_a), args.repeats)
    result = {
        "bytes": nbytes,
        "h2d_GBps": nbytes / t_h2d / 1e9,
        "d2h_GBps": nbytes / t_d2h / 1e9,
        "round_trip_GBps": nbytes / (t_h2d + t_d2h) / 1e9,  # input bytes per second of H2D then D2H
        "both_ways_GBps": nbytes / t_both / 1e9,  # input bytes per second with H2D and D2H overlapped
        "d2d_GBps": 2 * nbytes / (ms_d2d / 1e3) / 1e9,  # read + write
    }
    ctx["copy"] = result
    return result


def _batch_shape(args, chunk_mib):
    n = 1 << args.log_n
    moduli = hb.ntt_primes(60, n, args.limbs)
    return n, moduli, chunk_mib * MIB


def _task_times(client, reset=False):
    """{phase: (host seconds, count)} summed over the workers' tasks (HEBATCH_TASK_TIMES=1)."""
    from hebatch.distributed.plugin import worker_report

    total = {}
    for report in client.run(worker_report, reset=reset).values():
        for phase, (seconds, count) in report.get("task_times", {}).items():
            before = total.get(phase, (0.0, 0))
            total[phase] = (before[0] + seconds, before[1] + count)
    return total


def _per_task_ms(times, tasks):
    """Host milliseconds per task spent in each phase (queuing or waiting), from _task_times."""
    return {phase: 1e3 * seconds / max(1, tasks) for phase, (seconds, _) in sorted(times.items())}


def _marginal(t_small, t_big, n_small, n_big):
    return (t_big - t_small) / (n_big - n_small) if n_big > n_small else float("nan")


def case_host_batch(args, ctx):
    """Batch in the worker's host memory -> NTT on its GPU -> host memory, one GPU.

    Chunks are made on the worker in pinned memory (as a reader on the worker writes them), and, at the
    first chunk size, also in pageable memory, which each task registers as pinned and unregisters.
    Whole-job rates include Dask's fixed cost per job; the marginal rate (from the whole batch and its
    first half) is what each further chunk costs."""
    out = []
    with (
        dist.cluster(device="cpu", n_workers=1, threads_per_worker=2, processes=False, verbose=False)
        if args.cpu
        else gpu_cluster(1, _warm(args))
    ) as client:
        modes = [(c, True) for c in args.host_chunk_mib] + [(args.host_chunk_mib[0], False)]
        for chunk_mib, pinned in modes:
            n, moduli, chunk_bytes = _batch_shape(args, chunk_mib)
            x = random_batch(client, int(args.host_gib * GIB), chunk_bytes, n, moduli, on_device=False, pinned=pinned)
            chunks = len(x.chunks[0])
            half = max(1, chunks // 2)
            x_half = x[: sum(x.chunks[0][:half])]
            seconds_half, _ = time_dask(client, lambda: dist.ntt(x_half, moduli, negacyclic=True), args.repeats)
            seconds, runs = time_dask(
                client,
                lambda: dist.ntt(x, moduli, negacyclic=True),
                args.repeats,
                after_warmup=lambda: _task_times(client, reset=True),
            )
            times = _task_times(client, reset=True)
            chunk_input = x.nbytes / chunks
            marginal = _marginal(seconds_half, seconds, half, chunks)
            entry = {
                "chunk_MiB": chunk_mib,
                "input": "pinned" if pinned else "pageable (registered per task)",
                "chunks": chunks,
                "input_bytes": int(x.nbytes),
                "seconds": seconds,
                "runs": runs,
                "GBps": x.nbytes / seconds / 1e9,
                "half_chunks": half,
                "half_seconds": seconds_half,
                "marginal_seconds_per_chunk": marginal,
                "marginal_GBps": chunk_input / marginal / 1e9,
                "task_phase_ms": _per_task_ms(times, chunks * args.repeats),
            }  # timed runs only
            copy, memory = ctx.get("copy"), ctx.get("host_memory")
            if copy:
                entry["fraction_of_round_trip"] = entry["GBps"] / copy["round_trip_GBps"]
                entry["fraction_of_both_ways"] = entry["GBps"] / copy["both_ways_GBps"]  # the target
                entry["marginal_fraction_of_both_ways"] = entry["marginal_GBps"] / copy["both_ways_GBps"]
            if memory:
                entry["fraction_of_host_copy"] = entry["GBps"] / memory["copy_GBps_threads"]
            out.append(entry)
            x = x_half = None  # released before the next case allocates
    return {"log_n": args.log_n, "limbs": args.limbs, "target_fraction_of_both_ways": 0.8, "chunks": out}


def case_overhead(args, ctx):
    """Device-resident batch on one GPU: dist calls against plain loops of the same hb calls on chunks
    of the same shapes, one GPU, same run, at two batch sizes (the whole batch and a quarter of it).

    Reported per chunk size: the whole-job overhead at each size (Dask's fixed cost per job included),
    the marginal overhead per chunk (the slope between the two sizes, less the loop's slope) and the
    fixed cost per job that remains; a graph of no-op tasks over the same chunks; host time per task
    phase on the worker; and the same jobs through Dask's threaded scheduler in this process (no
    cluster: what a dist call costs on one GPU without a client)."""
    import cupy

    from hebatch.distributed.plugin import worker_report

    out = []
    for chunk_mib in args.chunk_mib:
        n, moduli, chunk_bytes = _batch_shape(args, chunk_mib)
        rows = max(1, chunk_bytes // (len(moduli) * n * 8))
        count = max(2, round(args.device_gib * GIB / (rows * len(moduli) * n * 8)))
        small = max(1, count // 4)
        # The loops run in this process first, alone on GPU 0; then their memory is handed back.
        chunks = [_random_chunk((rows, len(moduli), n), tuple(moduli), s, True) for s in range(count)]
        loops = {
            "ntt": lambda c: hb.ntt(c, moduli, negacyclic=True),
            "ntt_unchecked": lambda c: hb.ntt(c, moduli, negacyclic=True, check=False),
            "chain": lambda c: hb.intt(hb.ntt(c, moduli, negacyclic=True), moduli, negacyclic=True),
            "polymul": lambda c: hb.polymul(c, c, moduli),
        }
        jobs = {
            "ntt": lambda v: dist.ntt(v, moduli, negacyclic=True),
            "ntt_unchecked": lambda v: dist.ntt(v, moduli, negacyclic=True, check=False),
            "chain": lambda v: dist.intt(dist.ntt(v, moduli, negacyclic=True), moduli, negacyclic=True),
            "polymul": lambda v: dist.polymul(v, v, moduli),
            "noop_graph": lambda v: v.map_blocks(_touch, dtype=v.dtype, meta=v._meta),
        }
        loop_seconds = {}
        for name, fn in loops.items():
            for size in (count, small):
                ms, _ = time_cuda(lambda: [fn(c) for c in chunks[:size]], args.repeats)
                loop_seconds[name, size] = ms / 1e3
        local_seconds = _local_jobs(chunks, (count, small), jobs, args.repeats)
        chunks = None  # released before the next case allocates
        cupy.get_default_memory_pool().free_all_blocks()
        with gpu_cluster(1, _warm(args)) as client:
            x = random_batch(
                client, count * rows * len(moduli) * n * 8, rows * len(moduli) * n * 8, n, moduli, on_device=True
            )
            xs = {count: x, small: x[: small * rows]}
            dist_seconds, phases = {}, {}
            for name, job in jobs.items():
                for size in (count, small):
                    dist_seconds[name, size] = time_dask(
                        client,
                        lambda: job(xs[size]),
                        args.repeats,
                        after_warmup=lambda: _task_times(client, reset=True),
                    )[0]
                    if size == count:  # timed runs only
                        phases[name] = _per_task_ms(_task_times(client, reset=True), count * args.repeats)
            build_ms = {name: 1e3 * _timed_host(lambda: job(x), args.repeats) for name, job in jobs.items()}
            roundtrip_ms = 1e3 * _timed_host(lambda: client.submit(_touch, 0, pure=False).result(), args.repeats)
            run_ms = 1e3 * _timed_host(lambda: client.run(_touch, 0), args.repeats)
            plugins = list(client.run(worker_report).values())
            x = xs = None  # released before the next case allocates
        entry = {
            "chunk_MiB": chunk_mib,
            "chunks": count,
            "small_chunks": small,
            "noop_graph_seconds": dist_seconds["noop_graph", count],
            "noop_graph_small_seconds": dist_seconds["noop_graph", small],
            "noop_graph_marginal_ms_per_chunk": 1e3
            * _marginal(dist_seconds["noop_graph", small], dist_seconds["noop_graph", count], small, count),
            "graph_build_ms": build_ms,  # the client making the Dask array of each job (inside its time)
            "one_task_roundtrip_ms": roundtrip_ms,  # submit one no-op task and fetch its result
            "client_run_ms": run_ms,  # client.run on the worker (each timed job ends with one)
            "plugin": plugins[0],
            # the same jobs through Dask's threaded scheduler in this process, on the loops' chunks:
            # {job: {"seconds": {chunks: s}, "threads": {chunks: best thread count}}}
            "local_threads": local_seconds,
        }
        for name in loops:
            d_big, d_small = dist_seconds[name, count], dist_seconds[name, small]
            l_big, l_small = loop_seconds[name, count], loop_seconds[name, small]
            marginal_dist, marginal_loop = (
                _marginal(d_small, d_big, small, count),
                _marginal(l_small, l_big, small, count),
            )
            entry[name] = {
                "loop_seconds": l_big,
                "dist_seconds": d_big,
                "overhead_percent": 100 * (d_big - l_big) / l_big,  # whole job, this batch size
                "small_loop_seconds": l_small,
                "small_dist_seconds": d_small,
                "small_overhead_percent": 100 * (d_small - l_small) / l_small,
                "marginal_ms_per_chunk": {"dist": 1e3 * marginal_dist, "loop": 1e3 * marginal_loop},
                # what each further chunk adds beyond the loop's cost of it
                "marginal_overhead_percent": 100 * (marginal_dist - marginal_loop) / marginal_loop,
                # what is left of the whole-job overhead once the marginal one is taken out: per job
                "fixed_ms_per_job": 1e3 * ((d_big - l_big) - (marginal_dist - marginal_loop) * count),
                "task_phase_ms": phases[name],
                "local_seconds": local_seconds[name]["seconds"][count],
                "local_overhead_percent": 100 * (local_seconds[name]["seconds"][count] - l_big) / l_big,
                "local_small_overhead_percent": 100 * (local_seconds[name]["seconds"][small] - l_small) / l_small,
            }
        entry["noop_graph_task_phase_ms"] = phases["noop_graph"]
        out.append(entry)
    # The smallest chunk whose unchecked and checked ntt stay within 10% of the plain loop per chunk
    # (marginal): the evidence for arrays.GPU_CHUNK_MAX (None: no chunk size measured here met it).
    met = [
        c["chunk_MiB"]
        for c in out
        if max(c["ntt"]["marginal_overhead_percent"], c["ntt_unchecked"]["marginal_overhead_percent"]) <= 10
    ]
    return {
        "log_n": args.log_n,
        "limbs": args.limbs,
        "target_overhead_percent": {"256": 10, "64": 25},
        "smallest_chunk_MiB_within_10_percent_marginal": min(met) if met else None,
        "chunks": out,
    }


def _local_jobs(chunks, sizes, jobs, repeats):
    """Each job on the first `size` device chunks through Dask's threaded scheduler in this process
    (no cluster, no worker: the path of dist calls made without a client), with the best number of
    threads of LOCAL_THREADS: {job: {"seconds": {size: s}, "threads": {size: t}}}, wall time until the
    GPU is idle, median of `repeats` after one warm-up."""
    import dask.array as da

    x = da.concatenate([da.from_array(c, chunks=c.shape, asarray=False) for c in chunks])
    rows = chunks[0].shape[0]
    out = {}
    for name, job in jobs.items():
        entry = out[name] = {"seconds": {}, "threads": {}}
        for size in sizes:
            for threads in LOCAL_THREADS:

                def run(v=x[: size * rows], threads=threads):
                    job(v).persist(scheduler="threads", num_workers=threads)
                    _sync_device()

                seconds = _timed_host(run, repeats)
                if size not in entry["seconds"] or seconds < entry["seconds"][size]:
                    entry["seconds"][size], entry["threads"][size] = seconds, threads
    return out


LOCAL_THREADS = (2, 4)  # threads of the local scheduler tried by the overhead case


def _timed_host(fn, repeats):
    """Median wall seconds of fn() (one warm-up)."""
    times = []
    for i in range(repeats + 1):
        start = time.perf_counter()
        fn()
        if i:
            times.append(time.perf_counter() - start)
    return _median(times)


def _graph_tasks(y):
    """The tasks of lazy array y as the worker runs them (Dask's task objects), with the values of the
    keys they read (computed here), so they can be called without Dask."""
    import dask
    from dask.core import flatten

    graph = dict(y.__dask_graph__())
    tasks = [graph[k] for k in flatten(y.__dask_keys__())]
    deps = sorted(set().union(*(t.dependencies for t in tasks)), key=str)
    values = dict(zip(deps, dask.get(graph, deps)))
    return [(t, {d: values[d] for d in t.dependencies}) for t in tasks]


def _profile(fn, top=15):
    """cProfile of fn(): the `top` functions by own time, as (function, own seconds, calls)."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(fn)
    stats = pstats.Stats(profiler).stats
    rows = sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]
    return [(f"{pathlib.Path(f).name}:{line}({name})", tt, nc) for (f, line, name), (_, nc, tt, _, _) in rows]


def case_task_cost(args, ctx):
    """Fixed host cost per task of the scheduler path, measured with kernels of ~0 time.

    A batch of `--tasks` one-row chunks (2^log_n x limbs: log_n <= 10 on a GPU, 4 on the CPU) on one
    worker with the GPU worker's task threads (on its GPU, device-resident; else an in-process CPU
    worker). Per job, in microseconds per task: dist.ntt (checked and not), an ntt -> intt chain and
    a no-op graph (whole batch, and the slope between it and a quarter of it: marginal); a plain loop
    of the same hb calls; and the job's tasks called here without Dask (what a task costs beyond hb),
    with a profile of those calls."""
    from hebatch.benchmarks.harness import host_time
    from hebatch.distributed.cluster import GPU_THREADS

    on_gpu = bool(ctx["gpus"]) and not args.cpu
    log_n, limbs = min(args.log_n, 10 if on_gpu else 4), min(args.limbs, 2)
    n = 1 << log_n
    moduli = hb.ntt_primes(60, n, limbs)
    count = max(8, args.tasks)
    small = count // 4
    chunk_bytes = limbs * n * 8
    threads = PROTOCOL["threads_per_worker"] or GPU_THREADS
    jobs = {
        "ntt": lambda v: dist.ntt(v, moduli, negacyclic=True),
        "ntt_unchecked": lambda v: dist.ntt(v, moduli, negacyclic=True, check=False),
        "chain": lambda v: dist.intt(dist.ntt(v, moduli, negacyclic=True), moduli, negacyclic=True),
        "noop_graph": lambda v: v.map_blocks(_touch, dtype=v.dtype, meta=v._meta),
    }
    loops = {
        "ntt": lambda c: hb.ntt(c, moduli, negacyclic=True),
        "ntt_unchecked": lambda c: hb.ntt(c, moduli, negacyclic=True, check=False),
        "chain": lambda c: hb.intt(hb.ntt(c, moduli, negacyclic=True), moduli, negacyclic=True),
        "noop_graph": lambda c: c,
    }
    cluster = (
        gpu_cluster(1, [(log_n, moduli, True)])
        if on_gpu
        else dist.cluster(
            device="cpu",
            n_workers=1,
            threads_per_worker=threads,
            processes=False,
            verbose=False,
            dashboard_address=None,
        )
    )
    result = {"on": "gpu" if on_gpu else "cpu", "log_n": log_n, "limbs": limbs, "tasks": count, "threads": threads}
    with cluster as client:
        x = random_batch(client, count * chunk_bytes, chunk_bytes, n, moduli, on_device=on_gpu)
        xs = {count: x, small: x[:small]}
        chunks = [_random_chunk((1, limbs, n), tuple(moduli), s, on_gpu) for s in range(count)]
        import dask.array as da

        local = da.concatenate([da.from_array(c, chunks=c.shape, asarray=False) for c in chunks])
        for name, job in jobs.items():
            entry = {}
            for size in (count, small):
                seconds, _ = time_dask(client, lambda: job(xs[size]), args.repeats)
                entry["dist_us_per_task" if size == count else "small_dist_us_per_task"] = 1e6 * seconds / size
                entry["dist_seconds" if size == count else "small_dist_seconds"] = seconds
            entry["marginal_dist_us_per_task"] = 1e6 * _marginal(
                entry["small_dist_seconds"], entry["dist_seconds"], small, count
            )

            def loop(_, fn=loops[name]):
                for c in chunks:
                    fn(c)
                _sync_device()

            entry["loop_us_per_task"] = 1e3 * host_time(loop, [None], args.repeats) / count
            tasks = _graph_tasks(job(local))

            def direct(_, tasks=tasks):
                for task, values in tasks:
                    task(values)
                _sync_device()

            entry["direct_us_per_task"] = 1e3 * host_time(direct, [None], args.repeats) / count
            entry["task_beyond_hb_us"] = entry["direct_us_per_task"] - entry["loop_us_per_task"]
            # what Dask adds per task (scheduling, messages, the worker's bookkeeping) beyond the task
            entry["dask_beyond_task_us"] = entry["marginal_dist_us_per_task"] - entry["direct_us_per_task"]
            entry["graph_build_ms"] = 1e3 * _timed_host(lambda job=job: job(x), args.repeats)
            entry["profile_top_own_time"] = [
                (where, 1e6 * seconds / count, calls / count)
                for where, seconds, calls in _profile(lambda d=direct: d(None))
            ]  # per task: function, own microseconds, calls
            result[name] = entry
        x = xs = chunks = local = None  # released before the next case allocates
    return result


def case_probe(args, ctx):
    """Costs inside a task, measured alone on GPU 0 for one chunk of the largest chunk size: the entry
    check as a reduction to one scalar (the earlier kernel) and as the elementwise flag kernel now used,
    the transform itself, registering pageable host memory as pinned, and allocating pinned memory
    fresh and from the pool."""
    import cupy
    import cupyx

    from hebatch.distributed import plugin, worker

    n, moduli, chunk_bytes = _batch_shape(args, max(args.chunk_mib))
    rows = max(1, chunk_bytes // (len(moduli) * n * 8))
    x = _random_chunk((rows, len(moduli), n), tuple(moduli), 7, True)
    bound = cupy.asarray(np.array(moduli, dtype=np.uint64).reshape(-1, 1))
    reduction = cupy.ReductionKernel(
        "T x, T q", "bool y", "x >= q", "a | b", "y = a", "false", "probe_out_of_range", reduce_type="bool"
    )
    state = plugin.WorkerState()
    result = {"chunk_bytes": int(x.nbytes)}
    for name, fn in {
        "check_reduction_kernel": lambda: reduction(x, bound),
        "check_elementwise_flag": lambda: worker._fused_check(state, x, bound),
        "check_compare_any": lambda: (x >= bound).any(),
        "ntt_unchecked": lambda: hb.ntt(x, moduli, negacyclic=True, check=False),
        "ntt_checked": lambda: hb.ntt(x, moduli, negacyclic=True),
    }.items():
        ms, _ = time_cuda(fn, args.repeats)
        result[name + "_ms"] = ms
    bad = x.copy()
    bad[rows - 1, len(moduli) - 1, n - 1] = moduli[-1]
    result["check_elementwise_flag_finds_bad_entry"] = bool(worker._fused_check(state, bad, bound).get())
    result["check_elementwise_flag_passes_good"] = not bool(worker._fused_check(state, x, bound).get())
    del bad
    host = np.ones(x.nbytes // 8, dtype=np.uint64)

    def register():
        cupy.cuda.runtime.hostRegister(host.ctypes.data, host.nbytes, 0)
        cupy.cuda.runtime.hostUnregister(host.ctypes.data)

    result["host_register_unregister_ms"] = 1e3 * _timed_host(register, args.repeats)
    pool = cupy.get_default_pinned_memory_pool()

    def fresh():
        pool.free_all_blocks()
        cupyx.empty_pinned(host.shape, host.dtype)

    result["pinned_alloc_fresh_ms"] = 1e3 * _timed_host(fresh, args.repeats)
    result["pinned_alloc_pooled_ms"] = 1e3 * _timed_host(
        lambda: cupyx.empty_pinned(host.shape, host.dtype), args.repeats
    )
    pinned = cupyx.empty_pinned(host.shape, host.dtype)
    result["is_pinned"] = {"pinned": worker.is_pinned(pinned), "pageable": worker.is_pinned(host)}
    result["is_pinned_us"] = 1e6 * _timed_host(lambda: worker.is_pinned(pinned), 20)
    x = pinned = None  # released before the next case allocates
    pool.free_all_blocks()
    cupy.get_default_memory_pool().free_all_blocks()
    return result


def _touch(block):
    """A task that computes nothing: what is left of a run is Dask's own cost per chunk."""
    return block


def case_scaling(args, ctx):
    """The same device-resident batch job on 1, 2, 4 GPUs (strong scaling)."""
    gpus = [k for k in (1, 2, 4) if k <= min(ctx["gpus"], args.max_gpus)]
    chunk_mib = max(args.chunk_mib)
    n, moduli, chunk_bytes = _batch_shape(args, chunk_mib)
    out = []
    for k in gpus:
        with gpu_cluster(k, _warm(args)) as client:
            x = random_batch(
                client, int(args.device_gib * GIB), chunk_bytes, n, moduli, on_device=True, chunk_multiple=4
            )
            seconds, runs = time_dask(client, lambda: dist.ntt(x, moduli, negacyclic=True), args.repeats)
            out.append({"gpus": k, "seconds": seconds, "runs": runs, "GBps": x.nbytes / seconds / 1e9})
            x = None  # released before the next case allocates
    for entry in out:
        entry["speedup"] = out[0]["seconds"] / entry["seconds"]
    return {
        "log_n": args.log_n,
        "limbs": args.limbs,
        "chunk_MiB": chunk_mib,
        "targets": {"2": 1.9, "4": 3.6},
        "runs": out,
    }


def _large_input(client, n, q, parts, on_device):
    """A persisted 1-D Dask array of n random residues mod q in `parts` chunks on the workers."""
    import dask
    import dask.array as da
    from distributed import wait

    size = n // parts

    def make(seed):
        return _random_chunk((1, 1, size), (q,), seed, on_device).reshape(size)

    meta = _meta(on_device).reshape(0)
    x = da.concatenate(
        [da.from_delayed(dask.delayed(make)(s), (size,), dtype=np.uint64, meta=meta) for s in range(parts)]
    )
    x = client.persist(x)
    wait(x)
    return x


def _single_device_reference(n, q, repeats, on_device):
    """hb.ntt of n points on one device (and cupy.fft.fft of complex64 of n elements on a GPU)."""
    if not on_device:
        x = np.random.default_rng().integers(0, q, n, dtype=np.uint64)
        times = []
        for i in range(repeats + 1):
            start = time.perf_counter()
            hb.ntt(x, q)
            if i:
                times.append(time.perf_counter() - start)
        return {"hb_ntt_seconds": _median(times)}
    import cupy

    x = _random_chunk((1, 1, n), (q,), 1, True).reshape(n)
    ms, _ = time_cuda(lambda: hb.ntt(x, q), repeats)
    ref = {"hb_ntt_seconds": ms / 1e3}
    x = None  # released before the next case allocates
    z = cupy.ones(n, dtype=cupy.complex64)
    ms_fft, _ = time_cuda(lambda: cupy.fft.fft(z), repeats)
    ref["cufft_c64_seconds"] = ms_fft / 1e3
    z = None  # released before the next case allocates
    cupy.get_default_memory_pool().free_all_blocks()
    return ref


def case_large(args, ctx):
    """ntt_large with the time split into transforms (columns, rows) and transposes."""
    from distributed import futures_of

    from hebatch.distributed.jobs import wait_for

    q = hb.ntt_primes(60, 1 << max(args.large_log_n), 1)[0]
    on_device = not args.cpu
    worker_counts = [2] if args.cpu else [k for k in (2, 4) if k <= min(ctx["gpus"], args.max_gpus)]
    if not worker_counts:
        raise RuntimeError(f"needs at least 2 GPUs, found {ctx['gpus']}")
    out = {"modulus": q, "references": {}, "runs": []}
    for log_n in args.large_log_n:
        out["references"][str(log_n)] = _single_device_reference(1 << log_n, q, args.repeats, on_device)
    for k in worker_counts:
        cluster = (
            dist.cluster(device="cpu", n_workers=k, threads_per_worker=1, processes=False, verbose=False)
            if args.cpu
            else gpu_cluster(k)
        )
        with cluster as client:
            for log_n in args.large_log_n:
                n = 1 << log_n
                x = _large_input(client, n, q, k, on_device)
                for transpose in dist.TRANSPOSES:
                    entry = {"log_n": log_n, "workers": k, "transpose": transpose}
                    try:
                        walls, stages = [], []
                        for i in range(args.repeats + 1):
                            start = time.perf_counter()  # the whole transform, stages overlapping
                            y = dist.ntt_large(x, q, workers=k, gather=False, transpose=transpose)
                            wait_for(futures_of(client.persist(y)))
                            elapsed = time.perf_counter() - start
                            timings = {}  # again, waiting after each stage to time it
                            z = dist.LargeNTT(x, q, workers=k, transpose=transpose).run(gather=False, timings=timings)
                            del y, z
                            if i:
                                walls.append(elapsed)
                                stages.append(timings)
                        split = {name: _median([s[name] for s in stages]) for name in stages[0]}
                        entry.update(
                            {
                                "seconds": _median(walls),
                                "stage_seconds": split,
                                "transform_seconds": split["columns"] + split["rows"],
                                "transpose_seconds": split["distribute"] + split["transpose"] + split["transpose_out"],
                            }
                        )
                        ref = out["references"][str(log_n)]["hb_ntt_seconds"]
                        entry["speedup_vs_one_device"] = ref / entry["seconds"]
                    except Exception:
                        entry["error"] = traceback.format_exc()
                    out["runs"].append(entry)
                del x
    return out


CASE_FUNCTIONS = {
    "host_memory": case_host_memory,
    "copy": case_copy,
    "probe": case_probe,
    "host_batch": case_host_batch,
    "overhead": case_overhead,
    "task_cost": case_task_cost,
    "scaling": case_scaling,
    "large": case_large,
}
NEEDS_GPU = {"copy", "probe", "overhead", "scaling"}


# -- report ----------------------------------------------------------------------------------------


def summary_rows(record):
    """(case, what, numbers) lines for the printed table."""
    rows = []
    for case in record["cases"]:
        name = case["case"]
        if "error" in case:
            rows.append((name, "error", case["error"].strip().splitlines()[-1][:100]))
            continue
        if "skipped" in case:
            rows.append((name, "skipped", case["skipped"]))
            continue
        r = case["result"]
        if name == "host_memory":
            rows.append(
                (
                    name,
                    "GB/s copied",
                    f"one thread {r['copy_GBps_one_thread']:.1f}, "
                    f"{r['copy_threads']} threads {r['copy_GBps_threads']:.1f}",
                )
            )
        elif name == "copy":
            rows.append(
                (
                    name,
                    "GB/s",
                    f"H2D {r['h2d_GBps']:.1f}, D2H {r['d2h_GBps']:.1f}, round trip "
                    f"{r['round_trip_GBps']:.1f}, both ways {r['both_ways_GBps']:.1f}, "
                    f"D2D {r['d2d_GBps']:.0f}",
                )
            )
        elif name == "probe":
            rows.append(
                (
                    name,
                    f"one {r['chunk_bytes'] >> 20} MiB chunk, ms",
                    f"check: reduction kernel {r['check_reduction_kernel_ms']:.2f}, elementwise flag "
                    f"{r['check_elementwise_flag_ms']:.2f}, compare+any {r['check_compare_any_ms']:.2f}; ntt "
                    f"{r['ntt_unchecked_ms']:.2f} (checked {r['ntt_checked_ms']:.2f}); register+unregister "
                    f"{r['host_register_unregister_ms']:.1f}; pinned alloc fresh {r['pinned_alloc_fresh_ms']:.1f}, "
                    f"pooled {r['pinned_alloc_pooled_ms']:.3f}",
                )
            )
        elif name == "host_batch":
            for c in r["chunks"]:
                frac = (
                    f", {100 * c['fraction_of_both_ways']:.0f}% of both ways (target 80%); marginal "
                    f"{c['marginal_GBps']:.1f} GB/s = {100 * c['marginal_fraction_of_both_ways']:.0f}%"
                    if "fraction_of_both_ways" in c
                    else f"; marginal {c['marginal_GBps']:.2f} GB/s"
                )
                rows.append(
                    (
                        name,
                        f"chunk {c['chunk_MiB']} MiB {c['input'].split()[0]}, {c['chunks']} chunks",
                        f"whole job {c['GBps']:.2f} GB/s{frac}",
                    )
                )
        elif name == "overhead":
            for c in r["chunks"]:
                parts = [
                    f"{job} {c[job]['dist_seconds'] * 1e3:.1f}/{c[job]['loop_seconds'] * 1e3:.1f} ms "
                    f"({c[job]['overhead_percent']:+.0f}%; marginal {c[job]['marginal_overhead_percent']:+.0f}%, "
                    f"fixed {c[job]['fixed_ms_per_job']:.1f} ms)"
                    for job in ("ntt", "ntt_unchecked", "chain", "polymul")
                ]
                rows.append(
                    (
                        name,
                        f"chunk {c['chunk_MiB']} MiB x{c['chunks']} dist/loop",
                        ", ".join(parts) + f"; no-op graph {c['noop_graph_seconds'] * 1e3:.1f} ms "
                        f"({c['noop_graph_marginal_ms_per_chunk']:.2f} ms/chunk); one-task round trip "
                        f"{c['one_task_roundtrip_ms']:.1f} ms",
                    )
                )
                local = c["local_threads"]
                parts = [
                    f"{job} {c[job]['local_seconds'] * 1e3:.1f} ms ({c[job]['local_overhead_percent']:+.0f}%, "
                    f"{local[job]['threads'][c['chunks']]} threads)"
                    for job in ("ntt", "ntt_unchecked", "chain", "polymul")
                ]
                rows.append(
                    (
                        name,
                        f"chunk {c['chunk_MiB']} MiB x{c['chunks']} local threads",
                        ", ".join(parts) + f"; no-op graph {local['noop_graph']['seconds'][c['chunks']] * 1e3:.1f} ms",
                    )
                )
        elif name == "task_cost":
            for job in ("ntt", "ntt_unchecked", "chain", "noop_graph"):
                c = r[job]
                rows.append(
                    (
                        name,
                        f"{job}, {r['tasks']} tasks on {r['on']}, us/task",
                        f"dist {c['dist_us_per_task']:.0f} (marginal {c['marginal_dist_us_per_task']:.0f}), "
                        f"task alone {c['direct_us_per_task']:.0f}, loop {c['loop_us_per_task']:.0f}; "
                        f"task beyond hb {c['task_beyond_hb_us']:.0f}, Dask beyond task {c['dask_beyond_task_us']:.0f}",
                    )
                )
        elif name == "scaling":
            for c in r["runs"]:
                rows.append(
                    (
                        name,
                        f"{c['gpus']} GPU",
                        f"{c['seconds'] * 1e3:.1f} ms, {c['GBps']:.1f} GB/s, speedup {c['speedup']:.2f}x",
                    )
                )
        elif name == "large":
            for log_n, ref in r["references"].items():
                extra = f", cuFFT c64 {ref['cufft_c64_seconds'] * 1e3:.2f} ms" if "cufft_c64_seconds" in ref else ""
                rows.append((name, f"2^{log_n} one device", f"hb.ntt {ref['hb_ntt_seconds'] * 1e3:.2f} ms{extra}"))
            for c in r["runs"]:
                what = f"2^{c['log_n']} x{c['workers']} {c['transpose']}"
                if "error" in c:
                    rows.append((name, what, "error: " + c["error"].strip().splitlines()[-1][:80]))
                else:
                    rows.append(
                        (
                            name,
                            what,
                            f"{c['seconds'] * 1e3:.1f} ms (transforms {c['transform_seconds'] * 1e3:.1f}"
                            f" ms, transposes {c['transpose_seconds'] * 1e3:.1f} ms), "
                            f"{c['speedup_vs_one_device']:.2f}x one device",
                        )
                    )
    return rows


def print_table(record):
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"hebatch.distributed on {record['device']} ({record['gpus']} GPU) {record['date']}")
    for column in ("case", "what", "result"):
        table.add_column(column)
    for row in summary_rows(record):
        table.add_row(*row)
    Console().print(table)


def write_json(record, out_dir: pathlib.Path) -> list[pathlib.Path]:
    cases = "-".join(c["case"] for c in record["cases"])
    name = f"dist-{_slug(record['device'])}-x{record['gpus']}-{cases}-{record['date']}.json"
    targets = [pathlib.Path(out_dir) / name]
    if os.environ.get("OUT"):
        targets.append(pathlib.Path(os.environ["OUT"]) / name)
    for path in targets:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2, default=str) + "\n")
    return targets


def main(argv=None) -> int:
    args = parse_args(argv)
    PROTOCOL.update(protocol=args.protocol, enable_nvlink=args.nvlink, threads_per_worker=args.threads)
    gpus = 0 if args.cpu else _gpu_count()
    record = {
        "benchmark": "dist",
        "date": _dt.date.today().isoformat(),
        "time": _dt.datetime.now().isoformat(timespec="seconds"),
        "device": device_name(args.cpu),
        "gpus": gpus,
        "host": platform.node(),
        "versions": _versions(),
        "args": {k: (str(v) if isinstance(v, pathlib.Path) else v) for k, v in vars(args).items()},
        "cases": [],
    }
    ctx = {"gpus": gpus}
    os.environ.setdefault("HEBATCH_TASK_TIMES", "1")  # workers sum host time per task phase (microseconds a task)
    started = time.perf_counter()
    for name in args.cases:
        entry = {"case": name}
        if name in NEEDS_GPU and not gpus:
            entry["skipped"] = "needs a CUDA GPU" if not args.cpu else "not part of the --cpu smoke run"
        else:
            start = time.perf_counter()
            try:
                entry["result"] = CASE_FUNCTIONS[name](args, ctx)
            except Exception:
                entry["error"] = traceback.format_exc()
            entry["wall_seconds"] = time.perf_counter() - start
        record["cases"].append(entry)
        print(
            f"{name}: {'error' if 'error' in entry else 'skipped' if 'skipped' in entry else 'done'}", file=sys.stderr
        )
    record["wall_seconds"] = time.perf_counter() - started
    print_table(record)
    for path in write_json(record, args.out_dir):
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
