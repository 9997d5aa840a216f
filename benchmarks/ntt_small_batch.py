"""Device time of few-row NTTs (2^12..2^16 points, 60-bit prime, negacyclic) under the plan hb.ntt picks,
one pass (up to 2^14) and each two-pass split, to set recipes.SMALL_BATCH_SPLIT. Every plan's output is
compared with the chosen plan's (exact equality).

A one-ciphertext BFV step transforms a handful of rows, and its host work per call outlasts the kernels:
timing back-to-back calls would time Python. A spin kernel therefore holds the stream while the host
enqueues the calls, and CUDA events around them time the device only (median of 5 samples of 20 calls).

    python benchmarks/ntt_small_batch.py [--quick] [--out DIR]
"""

import argparse
import pathlib
import statistics
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import cupy as cp

import hebatch as hb
from hebatch.backend import get
from hebatch.benchmarks.harness import add_common_args, write_result
from hebatch.field import default_root
from hebatch.ntt import recipes
from hebatch.ntt.plan import make_plan
from hebatch.ntt.validate import check_transform_args
from hebatch.ntt.word import plan_for

SPIN = r"""extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}"""
SPIN_CYCLES = 8_000_000  # about 4 ms: longer than the host takes to enqueue one sample's calls
CALLS = 20


def device_us(fn, spin, samples: int) -> float:
    for _ in range(3):
        fn()
    start, end, times = cp.cuda.Event(), cp.cuda.Event(), []
    for _ in range(samples):
        spin((1,), (1,), (np.int64(SPIN_CYCLES),))
        start.record()
        for _ in range(CALLS):
            fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e3 / CALLS)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser, repeats=5)
    args = parser.parse_args(argv)
    sizes = (13, 14) if args.quick else (12, 13, 14, 15, 16)
    row_counts = (1, 7, 64, 128) if args.quick else (1, 2, 7, 14, 28, 64, 128, 256)
    spin = cp.RawKernel(SPIN, "spin")
    engine = get("gpu").ntt
    results = []
    for log_n in sizes:
        n = 1 << log_n
        q = hb.ntt_primes(60, 2 * n, 1)[0]
        root = default_root(q, n, True)
        for rows in row_counts:
            x = cp.asarray(np.random.default_rng().integers(0, q, size=(rows, 1, n), dtype=np.uint64))
            chosen = plan_for(check_transform_args((rows, n), np.uint64, q, negacyclic=True), engine, rows)
            plans = {"chosen": chosen}
            if log_n <= recipes.SINGLE_PASS_MAX_LOG[8]:
                plans["one-pass"] = make_plan(n, (q,), (root,), True, "radix2")
            for a in range(max(3, log_n - 10), min(10, log_n - 3) + 1):
                plans[f"radix2-{a}+{log_n - a}"] = make_plan(n, (q,), (root,), True, "radix2", (1 << a, n >> a))
            want = {}
            for name, plan in plans.items():
                row = dict(log_n=log_n, rows=rows, plan=name, passes=[p.log_np for p in plan.gpu_passes(8)])
                for direction, run in (("forward", engine.forward), ("inverse", engine.inverse)):
                    got = run(x, plan)
                    if direction in want and not bool(cp.array_equal(got, want[direction])):
                        raise AssertionError(f"2^{log_n} x {rows} {name} {direction}: differs from the chosen plan")
                    want.setdefault(direction, got)
                    row[f"{direction}_us"] = device_us(lambda run=run, plan=plan: run(x, plan), spin, args.repeats)
                results.append(row)
                print(
                    f"2^{log_n} x {rows:4d} {name:>13} {row['passes']!s:>8}: "
                    f"forward {row['forward_us']:7.1f} us, inverse {row['inverse_us']:7.1f} us",
                    flush=True,
                )
    write_result(
        "ntt-small-batch",
        {
            "modulus_bits": 60,
            "timing": f"device time per call: median of {args.repeats} samples of {CALLS} calls queued "
            "behind a spin kernel",
            "results": results,
        },
        args.out,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
