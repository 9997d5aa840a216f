#!/usr/bin/env python
"""BGV benchmark beside BFV's: encrypt, decrypt, add, multiply (relinearized and switched one level
down), relinearize, rotate and mod_switch at the top of each preset's chain, with benchmarks/bfv_bench.py's
timers, batch and JSON layout; --compare-bfv adds BFV's rows for the presets of the same n in the same run.

For each operation: the latency of one call on one ciphertext and the time per ciphertext of one call
on a batch of 64 (CUDA events around the call, host work included; medians of >= 15 timings after
warm-up; inputs rotate over freshly encrypted data), with the same-run cuFFT and copy references.
Writes benchmarks/results/bgv-<device>-<date>.json (and $OUT/<same name> when OUT is set).

    python benchmarks/bgv_bench.py                               # GPU, presets n8192 .. n32768
    python benchmarks/bgv_bench.py --presets n16384 --compare-bfv
    python benchmarks/bgv_bench.py --cpu --quick                 # smoke run on the CPU backend
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import sys
import traceback

import numpy as np

from hebatch import bfv, bgv
from hebatch.benchmarks import bfv as bfv_bench
from hebatch.benchmarks.harness import cuda_time, device_name, host_time, references

PRESETS = ["n8192", "n16384", "n32768"]  # n65536: add with --presets (1.4 GB per key-switching key)
OPERATIONS = ["encrypt", "decrypt", "add", "multiply_relin", "relinearize", "rotate", "mod_switch"]
BATCH = bfv_bench.BATCH
INPUTS = bfv_bench.INPUTS


def operation_inputs(ctx, keys, params, batch: int, rng):
    """For each operation: (function of one input, list of inputs) at the top of the chain."""
    shape = (batch, params.n) if batch > 1 else (params.n,)

    def plain():
        return ctx.encode(rng.integers(0, params.t, size=shape, dtype=np.int64))

    def cipher():
        return ctx.encrypt(keys.public, plain())

    pts = [plain() for _ in range(INPUTS)]
    pairs = [(cipher(), cipher()) for _ in range(INPUTS)]
    cts = [a for a, _ in pairs]
    manual = bgv.Context(params, backend=ctx.backend, auto_mod_switch=False)
    products = [manual.multiply(a, b) for a, b in pairs]  # 3 components, still at the top level
    return {
        "encrypt": (lambda p: ctx.encrypt(keys.public, p), pts),
        "decrypt": (lambda c: ctx.decrypt(keys.secret, c), cts),
        "add": (lambda ab: ctx.add(*ab), pairs),
        "multiply_relin": (lambda ab: ctx.multiply(ab[0], ab[1], keys.relin), pairs),
        "relinearize": (lambda c3: ctx.relinearize(c3, keys.relin), products),
        "rotate": (lambda c: ctx.rotate(c, 1, keys.galois), cts),
        "mod_switch": (lambda c: ctx.mod_switch(c), cts),
    }


def run_preset(name, params, cpu, batch, rng, timed, fft_ms, copy_gbps):
    """Time every operation of one BGV preset; one result row per operation."""
    rows = []
    try:
        ctx = bgv.Context(params, backend="cpu" if cpu else "gpu")
        keys = ctx.keygen(rotations=[1], columns=False)
        cases = {b: operation_inputs(ctx, keys, params, b, rng) for b in (1, batch)}
    except Exception as exc:
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        print(f"{name:>8}     bgv ERROR {error}", flush=True)
        return [dict(scheme="bgv", preset=name, n=params.n, error=error)]
    for op in OPERATIONS:
        entry = dict(
            scheme="bgv",
            preset=name,
            n=params.n,
            log_q=params.log_q,
            log_qp=params.log_qp,
            limbs=len(params.q),
            t=params.t,
            variant="fused",
            case=op,
            batch=batch,
            cufft_ms=fft_ms,
            copy_GBps=copy_gbps,
        )
        try:
            fn, inputs = cases[1][op]
            entry["latency_ms"] = timed(fn, inputs, 1)
            fn, inputs = cases[batch][op]
            entry["per_ciphertext_ms"] = timed(fn, inputs, batch)
            entry["rns_calls"] = bfv_bench.count_calls(ctx, cases[1][op][0], cases[1][op][1][0])
            print(
                f"{name:>8} {params.log_qp:>5} {'bgv':>7} {op:>15} {entry['latency_ms']:9.4f} "
                f"{entry['per_ciphertext_ms']:17.4f} {fft_ms or float('nan'):9.4f} "
                f"{copy_gbps or float('nan'):9.0f} {sum(entry['rns_calls'].values()):6d}",
                flush=True,
            )
        except Exception as exc:
            entry["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            print(f"{name:>8}     bgv {op:>15} ERROR {entry['error']}", flush=True)
        rows.append(entry)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", action="store_true", help="the CPU backend (a smoke run of the script)")
    parser.add_argument("--quick", action="store_true", help="the smallest preset, few repeats, small batch")
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--presets", default=",".join(PRESETS), help="comma-separated BGV preset names")
    parser.add_argument("--batch", type=int, default=BATCH, help="ciphertexts per batched call")
    parser.add_argument(
        "--compare-bfv",
        action="store_true",
        help="also time BFV (bfv_bench's graphs and fused variants) at the presets of the same n",
    )
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("."), help="directory of the JSON result")
    args = parser.parse_args(argv)

    names = [p for p in args.presets.split(",") if p]
    if args.quick:
        names = names[:1]
    batch = 2 if args.cpu and args.quick else args.batch
    if args.cpu:
        repeats = 2 if args.quick else max(3, args.repeats)
        device, cp = f"cpu-{platform.machine()}", None
    else:
        import cupy as cp

        repeats = max(15, args.repeats)
        device = device_name()

    def timed(fn, inputs, per):
        if cp is None:
            return host_time(fn, inputs, repeats) / per
        return cuda_time(fn, inputs, repeats) / per

    rng = np.random.default_rng()
    rows = []
    print(f"device: {device}  batch: {batch}  repeats: {repeats}")
    print(
        f"{'preset':>8} {'log q':>5} {'variant':>7} {'operation':>15} {'1 ct ms':>9} {f'per ct of {batch} ms':>17}"
        f" {'cuFFT ms':>9} {'copy GB/s':>9} {'calls':>6}"
    )
    for name in names:
        try:
            params = bgv.Params.preset(name)
        except ValueError as exc:
            parser.error(f"--presets: {exc}")
        fft_ms = copy_gbps = None
        if cp is not None:  # references for one top-level ciphertext's element count (2 x limbs x n)
            elements = 2 * len(params.q) * params.n
            found = references(elements, 8 * elements, repeats, rows=2 * len(params.q))
            fft_ms, copy_gbps = found["cufft_ms"], found["copy_GBps"]
        rows += run_preset(name, params, args.cpu, batch, rng, timed, fft_ms, copy_gbps)
        if args.compare_bfv and name in bfv_bench.PRESETS:
            for variant in ["fused"] if args.cpu else ["fused", "graphs"]:
                for row in bfv_bench.run_variant(
                    name, bfv.Params.preset(name), variant, args.cpu, batch, rng, timed, fft_ms, copy_gbps
                ):
                    rows.append(dict(row, scheme="bfv"))
        if cp is not None:
            cp.get_default_memory_pool().free_all_blocks()

    date = datetime.date.today().isoformat()
    slug = device.replace("NVIDIA ", "").replace(" ", "-")
    result = dict(
        benchmark="bgv",
        device=device,
        date=date,
        backend="cpu" if args.cpu else "gpu",
        repeats=repeats,
        batch=batch,
        presets=names,
        compare_bfv=args.compare_bfv,
        timing=(
            "latency_ms: one call on one ciphertext at the top of the chain; per_ciphertext_ms: one "
            f"call on a batch of {batch} divided by {batch}; GPU: CUDA events around the call (host "
            "work included), 3 warm-up calls, median; CPU: wall clock, median; inputs rotate over "
            f"{INPUTS} freshly encrypted ones. multiply_relin includes relinearization and the switch "
            "one level down; relinearize times it alone on 3-component products; mod_switch drops one "
            "limb. BGV launches every kernel from Python (no CUDA graphs); rows with scheme bfv are "
            "benchmarks/bfv_bench.py's own, in the same run. rns_calls: RnsOps method calls of one "
            "single-ciphertext call."
        ),
        references=(
            "per preset, for 2 x limbs rows of n elements (one ciphertext): cuFFT complex64 "
            "time and device-to-device copy GB/s (benchmarks/ntt_bench.py)"
        ),
        results=rows,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"bgv-{slug}-{date}.json"
    out.write_text(json.dumps(result, indent=1))
    if os.environ.get("OUT"):
        pathlib.Path(os.environ["OUT"], out.name).write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
