"""Multiplicative depth of the BFV presets: sequential squarings (relinearized) with noise budget left.

Prints, per preset, the noise budget after each squaring and the depth reached. The presets use
t = 65537 (17 bits); depth depends on t, so compare with other libraries at the same t.
Usage: python -m hebatch.benchmarks.bfv_depth [--presets n4096,n8192] [--batch 2] [--digit-limbs 1,2]
[--json out.json]
"""

from __future__ import annotations

import argparse
import json
import secrets
import time

import numpy as np

from hebatch import bfv

# Depth of SEAL's BFVDefault moduli at t = 65537, measured with SEAL (None: not measured yet).


def measure_depth(
    preset: str, batch: int = 2, backend: str = "cpu", max_depth: int = 64, verbose=False, digit_limbs: int = 1
) -> dict:
    """Square a fresh encryption until the budget is 0; depth = squarings that still decrypt correctly.
    digit_limbs: key-switching digit size (bfv.Params)."""
    params = bfv.Params.preset(preset, digit_limbs=digit_limbs)
    ctx = bfv.Context(params, backend=backend)
    keys = ctx.keygen()
    rng = np.random.default_rng(secrets.randbits(64))
    values = rng.integers(0, params.t, (batch, params.n))
    ct = ctx.encrypt(keys.public, ctx.encode(values))
    budgets = [int(ctx.noise_budget(keys.secret, ct).min())]
    depth, start = 0, time.perf_counter()
    expected = values.astype(object)
    while depth < max_depth:
        ct = ctx.multiply(ct, ct, keys.relin)
        expected = expected * expected % params.t
        budget = int(ctx.noise_budget(keys.secret, ct).min())
        budgets.append(budget)
        if verbose:
            print(f"  {preset}: squaring {len(budgets) - 1}: budget {budget} bits", flush=True)
        decrypted = np.asarray(ctx.decode(ctx.decrypt(keys.secret, ct))).astype(object)
        if budget <= 0 or not (decrypted == expected).all():
            break
        depth += 1
    return {
        "preset": preset,
        "n": params.n,
        "log_qp": params.log_qp,
        "digit_limbs": digit_limbs,
        "t": params.t,
        "depth": depth,
        "budgets": budgets,
        "seconds": round(time.perf_counter() - start, 2),
        "backend": ctx.backend,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", default="n4096,n8192,n16384,n32768")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--json", default=None)
    ap.add_argument("--verbose", action="store_true", help="print the budget after every squaring")
    ap.add_argument("--digit-limbs", default="1", help="comma-separated key-switching digit sizes (bfv.Params)")
    args = ap.parse_args(argv)
    try:
        digit_sizes = [int(v) for v in args.digit_limbs.split(",") if v]
    except ValueError:
        ap.error(f"--digit-limbs: comma-separated ints, got {args.digit_limbs!r}")
    rows = []
    print(f"{'preset':>8} {'digits':>6} {'log qp':>7} {'t':>6} {'depth':>6}  budgets")
    for preset in args.presets.split(","):
        for digit_limbs in digit_sizes:
            row = measure_depth(preset, args.batch, args.backend, verbose=args.verbose, digit_limbs=digit_limbs)
            rows.append(row)
            print(
                f"{preset:>8} {digit_limbs:>6} {row['log_qp']:>7} {row['t']:>6} {row['depth']:>6}  {row['budgets']} "
                f"({row['seconds']} s)",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
