"""CPU timings of the prime-field transforms (NumPy engine, hebatch/backend/cpu/ntt256.py).

For each field and size: hb.ntt, hb.intt, hb.coset_ntt and hb.lde (blowup 2) on one vector of n
random elements, wall clock, median of --repeats runs after one warm-up (the warm-up also builds
the cached twiddle tables). The warm-up's forward result is checked at one random point against
Horner's rule with Python ints (the timed calls and the other transforms are not checked). Writes
zk-cpu-<host>-<date>.json into --out (default: the current directory).

  python -m hebatch.benchmarks.zk_cpu                       # BN254, n = 2^10 .. 2^20
  python -m hebatch.benchmarks.zk_cpu --fields bn254 bls12-381 --log-n 16 20 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import platform
import random

import numpy as np

import hebatch as hb
from hebatch.benchmarks.harness import add_common_args, host_time, write_result


def random_elements(field, n):
    rng = random.Random()
    return field.to_limbs([rng.randrange(field.p) for _ in range(n)])


def horner_check(field, x, X):
    """X[k] == sum_j x[j] w^(jk) at one random k, with Python ints."""
    n, p = x.shape[0], field.p
    k = random.randrange(n)
    z = pow(field.root_of_unity(n), k, p)
    acc = 0
    for c in reversed([int(v) for v in field.from_limbs(x)]):
        acc = (acc * z + c) % p
    if acc != field.from_limbs(X[k]):
        raise AssertionError(f"{field.name} n={n}: NTT disagrees with Horner's rule at k={k}")


def timed(fn, repeats):
    """Median seconds of fn() after one warm-up (which builds the twiddle tables)."""
    return host_time(lambda _: fn(), [None], repeats) / 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fields", nargs="+", default=["bn254"])
    parser.add_argument(
        "--log-n",
        nargs=2,
        type=int,
        default=None,
        metavar=("FROM", "TO"),
        help="sizes 2^FROM .. 2^TO (default 10 20; 10 14 with --quick)",
    )
    add_common_args(parser, repeats=3)
    args = parser.parse_args(argv)
    if args.log_n is None:
        args.log_n = [10, 14] if args.quick else [10, 20]
    rows = []
    print(f"{'field':<10} {'n':>8} {'ntt s':>9} {'intt s':>9} {'coset s':>9} {'lde(2) s':>9}")
    for name in args.fields:
        field = hb.field_by_name(name)
        for log_n in range(args.log_n[0], args.log_n[1] + 1):
            n = 2**log_n
            x = random_elements(field, n)
            X = hb.ntt(x, field)
            horner_check(field, x, X)
            row = {
                "field": field.name,
                "n": n,
                "ntt_s": timed(lambda: hb.ntt(x, field), args.repeats),
                "intt_s": timed(lambda: hb.intt(X, field), args.repeats),
                "coset_ntt_s": timed(lambda: hb.coset_ntt(x, field), args.repeats),
                "lde2_s": timed(lambda: hb.lde(X, field, 2), args.repeats) if 2 * n <= 2**field.two_adicity else None,
            }
            rows.append(row)
            lde = "-" if row["lde2_s"] is None else f"{row['lde2_s']:9.4f}"
            print(
                f"{field.name:<10} {f'2^{log_n}':>8} {row['ntt_s']:9.4f} {row['intt_s']:9.4f} "
                f"{row['coset_ntt_s']:9.4f} {lde:>9}",
                flush=True,
            )
    host = platform.node() or "host"
    result = {
        "host": host,
        "processor": platform.processor(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "numpy": np.__version__,
        "repeats": args.repeats,
        "timing": "wall clock, median of --repeats calls after one warm-up",
        "rows": rows,
    }
    return write_result("zk-cpu", result, args.out, device=host)


if __name__ == "__main__":
    main()
