#!/usr/bin/env python
"""Where the time of one BFV operation goes on the GPU: per step (each RnsOps call and each ring NTT)
the host time of the call and the GPU time between CUDA events around it, for one ciphertext and
for a batch; then Python's profiler over repeated single-ciphertext calls.

    python benchmarks/profile_bfv.py [--preset n16384] [--op multiply_relin] [--batch 64]

Prints the tables and writes profile-bfv-<preset>-<op>.json under $OUT (or the working directory).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pathlib
import pstats
import statistics
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import cupy as cp  # noqa: E402

from hebatch import bfv  # noqa: E402
from hebatch.benchmarks.bfv import operation_inputs  # noqa: E402
from hebatch.rlwe import ring as ring_module  # noqa: E402


class StepTimer:
    """Records, per named step, host seconds of the call and a pair of CUDA events around it."""

    def __init__(self):
        self.records = []  # (name, host_s, start_event, end_event)

    def wrap(self, name, fn):
        def timed(*args, **kwargs):
            start = cp.cuda.Event()
            end = cp.cuda.Event()
            start.record()
            t0 = time.perf_counter()
            out = fn(*args, **kwargs)
            host = time.perf_counter() - t0
            end.record()
            self.records.append((name, host, start, end))
            return out

        return timed

    def summary(self):
        cp.cuda.Device().synchronize()
        steps = {}
        for name, host, start, end in self.records:
            steps.setdefault(name, []).append((host * 1e6, cp.cuda.get_elapsed_time(start, end) * 1e3))
        return steps


class TimedOps:
    """An RnsOps whose every method call is a timed step (fused steps count as one)."""

    def __init__(self, ops, timer):
        self._ops, self._timer = ops, timer

    def __getattr__(self, name):
        value = getattr(self._ops, name)
        if callable(value) and not name.startswith("_"):
            return self._timer.wrap(name, value)
        return value


def profile_steps(ctx, fn, inputs, repeats):
    """Median host and GPU microseconds per step name over `repeats` calls (per call: summed over the
    calls of that step)."""
    timer = StepTimer()
    ops, ntt, intt, digits = ctx.ops, ring_module.ntt, ring_module.intt, ring_module.ntt_digits  # graphs=False
    ctx.ops = TimedOps(ops, timer)
    ring_module.ntt = timer.wrap("ring_ntt", ntt)
    ring_module.intt = timer.wrap("ring_intt", intt)
    ring_module.ntt_digits = timer.wrap("ring_ntt_digits", digits)
    per_call = []
    try:
        for i in range(repeats):
            timer.records.clear()
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            fn(inputs[i % len(inputs)])
            host_total = time.perf_counter() - t0
            cp.cuda.Device().synchronize()
            wall = time.perf_counter() - t0
            steps = timer.summary()
            per_call.append(
                (
                    host_total * 1e6,
                    wall * 1e6,
                    {k: (sum(h for h, _ in v), sum(g for _, g in v), len(v)) for k, v in steps.items()},
                )
            )
    finally:
        ctx.ops, ring_module.ntt, ring_module.intt, ring_module.ntt_digits = ops, ntt, intt, digits
    calls = per_call[1:]  # the first call warms caches
    names = calls[0][2].keys()
    return dict(
        host_us=statistics.median(c[0] for c in calls),
        wall_us=statistics.median(c[1] for c in calls),
        steps={
            k: dict(
                count=calls[0][2][k][2],
                host_us=statistics.median(c[2][k][0] for c in calls),
                gpu_us=statistics.median(c[2][k][1] for c in calls),
            )
            for k in names
        },
    )


def graph_times(params, keys, op, rng, repeats=30):
    """One ciphertext on a Context(graphs=True): median latency of the call (CUDA events around it),
    host time of the call (no wait), and GPU time of the recorded graph's launch alone."""
    ctx = bfv.Context(params, backend="gpu")
    fn, inputs = operation_inputs(ctx, keys, params, 1, rng)[op]
    for i in range(3):  # direct, recorded, replayed
        fn(inputs[i % len(inputs)])
    graphs = [v for v in ctx.graphs._entries.values() if not isinstance(v, str)]
    lat, host, launch = [], [], []
    for i in range(repeats):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        cp.cuda.Device().synchronize()
        start.record()
        t0 = time.perf_counter()
        fn(inputs[i % len(inputs)])
        host.append((time.perf_counter() - t0) * 1e6)
        end.record()
        end.synchronize()
        lat.append(cp.cuda.get_elapsed_time(start, end) * 1e3)
        start.record()
        for g in graphs:
            g.graph.launch(stream=cp.cuda.get_current_stream())
        end.record()
        end.synchronize()
        launch.append(cp.cuda.get_elapsed_time(start, end) * 1e3)
    return dict(
        latency_us=statistics.median(lat),
        host_us=statistics.median(host),
        graph_gpu_us=statistics.median(launch),
        graphs=len(graphs),
        replays=ctx.graphs.replays,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="n16384")
    parser.add_argument("--op", default="multiply_relin")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=8)
    args = parser.parse_args(argv)
    params = bfv.Params.preset(args.preset)
    ctx = bfv.Context(params, backend="gpu", graphs=False)  # every launch from Python, to be timed
    keys = ctx.keygen(rotations=[1])
    rng = np.random.default_rng()
    result = dict(
        preset=args.preset,
        op=args.op,
        device=cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        limbs=len(params.q),
    )
    for batch in (1, args.batch):
        fn, inputs = operation_inputs(ctx, keys, params, batch, rng)[args.op]
        for i in range(3):
            fn(inputs[i % len(inputs)])
        prof = profile_steps(ctx, fn, inputs, args.repeats)
        result[f"batch{batch}"] = prof
        print(
            f"\n{args.preset} {args.op} batch {batch}: host {prof['host_us']:.0f} us, "
            f"wall (to sync) {prof['wall_us']:.0f} us"
        )
        print(f"{'step':>16} {'calls':>5} {'host us':>9} {'gpu us':>9}")
        for name, s in sorted(prof["steps"].items(), key=lambda kv: -kv[1]["gpu_us"]):
            print(f"{name:>16} {s['count']:5d} {s['host_us']:9.1f} {s['gpu_us']:9.1f}")
    result["graphs_batch1"] = graph_times(params, keys, args.op, rng)
    print("\nbatch 1 with CUDA graphs (us):", {k: round(v, 1) for k, v in result["graphs_batch1"].items()})
    fn, inputs = operation_inputs(ctx, keys, params, 1, rng)[args.op]
    profiler = cProfile.Profile()
    cp.cuda.Device().synchronize()
    profiler.enable()
    for i in range(20):
        fn(inputs[i % len(inputs)])
    profiler.disable()
    cp.cuda.Device().synchronize()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(30)
    pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(40)
    print(text.getvalue())
    result["cprofile_20_calls"] = text.getvalue()
    out = pathlib.Path(os.environ.get("OUT", "."))
    (out / f"profile-bfv-{args.preset}-{args.op}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
