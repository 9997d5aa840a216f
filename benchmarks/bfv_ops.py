"""Time the BFV operations of one preset on one backend, over a batch of ciphertexts.

Prints a table (median wall-clock seconds per call over --repeat runs, per batch) and writes JSON.
On a GPU backend each timing ends with a device synchronisation. Usage:
    python benchmarks/bfv_ops.py --preset n8192 --batch 8 --backend cpu [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import secrets
import statistics
import time

import numpy as np

from hebatch import bfv


def _sync(ctx):
    if ctx.backend == "gpu":
        ctx.xp.cuda.get_current_stream().synchronize()


def time_ops(preset: str, batch: int, backend: str, repeat: int) -> dict:
    params = bfv.Params.preset(preset)
    ctx = bfv.Context(params, backend=backend)
    rng = np.random.default_rng(secrets.randbits(64))
    values = rng.integers(0, params.t, (batch, params.n))
    keys = ctx.keygen(rotations=[1])
    pt = ctx.encode(values)
    a = ctx.encrypt(keys.public, pt)
    b = ctx.encrypt(keys.public, pt)
    c3 = ctx.multiply(a, b)
    cases = {
        "keygen(rotations=[1])": lambda: ctx.keygen(rotations=[1]),
        "encode": lambda: ctx.encode(values),
        "encrypt": lambda: ctx.encrypt(keys.public, pt),
        "decrypt": lambda: ctx.decrypt(keys.secret, a),
        "add": lambda: ctx.add(a, b),
        "multiply_plain": lambda: ctx.multiply_plain(a, pt),
        "multiply (3 components)": lambda: ctx.multiply(a, b),
        "relinearize": lambda: ctx.relinearize(c3, keys.relin),
        "multiply + relinearize": lambda: ctx.multiply(a, b, keys.relin),
        "rotate": lambda: ctx.rotate(a, 1, keys.galois),
    }
    rows = {}
    for name, fn in cases.items():
        fn()
        _sync(ctx)
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            _sync(ctx)
            times.append(time.perf_counter() - start)
        rows[name] = statistics.median(times)
    return {"preset": preset, "batch": batch, "backend": ctx.backend, "machine": platform.processor() or platform.machine(),
            "median_seconds": rows}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="n8192")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    result = time_ops(args.preset, args.batch, args.backend, args.repeat)
    print(f"{args.preset}, batch {args.batch}, backend {result['backend']}")
    for name, seconds in result["median_seconds"].items():
        print(f"  {name:<24} {seconds * 1e3:10.2f} ms   {seconds * 1e3 / args.batch:9.3f} ms/item")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
