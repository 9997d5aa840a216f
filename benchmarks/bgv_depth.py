#!/usr/bin/env python
"""Multiplicative depth of the BGV presets beside BFV's: sequential squarings (relinearized; BGV switches
one level down after each) until a result no longer decrypts or the noise budget is 0.

Prints, per preset, the BGV noise budget after each squaring, the depth reached, and the depth of
BFV's preset of the same n (hebatch.benchmarks.bfv_depth) where there is one. Usage:
    python benchmarks/bgv_depth.py [--presets n8192,n16384] [--backend cpu|gpu] [--no-bfv] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import secrets
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a source checkout without installing
    sys.path.insert(0, str(ROOT))

from hebatch import bgv  # noqa: E402
from hebatch.benchmarks import bfv_depth  # noqa: E402


def measure_depth(preset: str, batch: int = 1, backend: str = "cpu", verbose=False) -> dict:
    """Square a fresh top-level encryption until it fails; depth = squarings that decrypt correctly."""
    params = bgv.Params.preset(preset)
    ctx = bgv.Context(params, backend=backend)
    keys = ctx.keygen(columns=False)
    values = np.random.default_rng(secrets.randbits(64)).integers(0, params.t, (batch, params.n))
    ct = ctx.encrypt(keys.public, ctx.encode(values))
    budgets = [int(ctx.noise_budget(keys.secret, ct).min())]
    expected = values.astype(object)
    depth, start = 0, time.perf_counter()
    while depth < 4 * params.levels:
        ct = ctx.multiply(ct, ct, keys.relin)
        expected = expected * expected % params.t
        budgets.append(int(ctx.noise_budget(keys.secret, ct).min()))
        if verbose:
            print(f"  {preset}: squaring {len(budgets) - 1}: level {ct.level}, budget {budgets[-1]} bits", flush=True)
        decrypted = np.asarray(ctx.ops.to_host(ctx.decode(ctx.decrypt(keys.secret, ct)))).astype(object)
        if budgets[-1] <= 0 or not (decrypted == expected).all():
            break
        depth += 1
    return {
        "scheme": "bgv",
        "preset": preset,
        "n": params.n,
        "log_qp": params.log_qp,
        "t": params.t,
        "levels": params.levels,
        "depth": depth,
        "budgets": budgets,
        "seconds": round(time.perf_counter() - start, 2),
        "backend": ctx.backend,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", default="n8192,n16384,n32768")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--no-bfv", action="store_true", help="BGV only")
    ap.add_argument("--json", default=None)
    ap.add_argument("--verbose", action="store_true", help="print the budget after every squaring")
    args = ap.parse_args(argv)
    rows = []
    print(
        f"{'preset':>8} {'t':>7} {'BGV log qp':>10} {'levels':>6} {'depth':>5} {'BFV log qp':>10} {'depth':>5}  "
        "BGV budgets"
    )
    for preset in args.presets.split(","):
        row = measure_depth(preset, backend=args.backend, verbose=args.verbose)
        rows.append(row)
        other = None
        if not args.no_bfv:
            try:
                other = bfv_depth.measure_depth(preset, 1, args.backend)
            except ValueError:  # no BFV preset of this n
                other = None
        if other is not None:
            rows.append(dict(other, scheme="bfv"))
        bfv_cols = f"{other['log_qp']:>10} {other['depth']:>5}" if other else f"{'-':>10} {'-':>5}"
        print(
            f"{preset:>8} {row['t']:>7} {row['log_qp']:>10} {row['levels']:>6} {row['depth']:>5} {bfv_cols}  "
            f"{row['budgets']}",
            flush=True,
        )
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
