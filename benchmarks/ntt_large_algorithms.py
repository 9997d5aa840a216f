"""Single large 64-bit NTTs (2^24..2^28 points, negacyclic, a 60-bit prime and Goldilocks) under both
algorithms, to set recipes.MERGE_LOG_N_RANGE: 4-step against merge (radix-2 passes with the full
twiddle table, built on the device), forward and inverse, with the first call's time (tables built,
kernels loaded) and the same-run references (cuFFT complex64 and a device copy of the same bytes).
Each algorithm's output is compared with the other's (exact equality).

    python benchmarks/ntt_large_algorithms.py [--quick] [--out DIR]
"""

import argparse
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import cupy as cp

import hebatch as hb
from hebatch.backend import TABLES
from hebatch.benchmarks.harness import add_common_args, cuda_time, references, write_result
from hebatch.ntt.recipes import MERGE_LOG_N_RANGE

ALGORITHMS = ("4step", "radix2")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(parser, repeats=10)
    parser.add_argument("--log-n", type=int, nargs="+", default=None, help="sizes (default 24 25 26 27 28)")
    args = parser.parse_args(argv)
    sizes = args.log_n or ((24, 26) if args.quick else (24, 25, 26, 27, 28))
    moduli = {"q60": hb.ntt_primes(60, 1 << 28, 1)[0], "goldilocks": hb.GOLDILOCKS}
    rows = []
    for log_n in sizes:
        n = 1 << log_n
        refs = references(n, 8 * n, args.repeats, back_to_back=1)
        for name, q in moduli.items():
            x = cp.random.randint(0, 2**62, size=n, dtype=cp.uint64) % cp.uint64(q)
            outputs = {}
            for algorithm in ALGORITHMS:
                for inverse in (False, True):
                    TABLES.clear()  # the first call builds this plan's tables afresh

                    def call(v, inverse=inverse, algorithm=algorithm):
                        return hb.ntt(v, q, negacyclic=True, inverse=inverse, algorithm=algorithm, check=False)

                    start = time.perf_counter()
                    y = call(x)
                    cp.cuda.Device().synchronize()
                    first_s = time.perf_counter() - start
                    outputs[algorithm, inverse] = y
                    ms = cuda_time(call, [x], args.repeats, warmup=1)
                    rows.append(
                        {
                            "log_n": log_n,
                            "modulus": name,
                            "q": q,
                            "algorithm": algorithm,
                            "direction": "inverse" if inverse else "forward",
                            "auto_takes": "radix2" if log_n in MERGE_LOG_N_RANGE[8] else "4step",
                            "ms": ms,
                            "first_call_s": first_s,
                            "ratio_to_cufft": ms / refs["cufft_ms"],
                            **refs,
                        }
                    )
                    print(
                        f"2^{log_n} {name:10s} {algorithm:6s} {'inv' if inverse else 'fwd'}  {ms:8.3f} ms  "
                        f"first call {first_s:6.2f} s  ({ms / refs['cufft_ms']:.2f}x cuFFT {refs['cufft_ms']:.3f} ms)",
                        flush=True,
                    )
            for inverse in (False, True):
                if not bool((outputs["4step", inverse] == outputs["radix2", inverse]).all()):
                    raise AssertionError(
                        f"2^{log_n} {name}: 4step and radix2 differ ({'inverse' if inverse else 'forward'})"
                    )
            del x, y, outputs
            TABLES.clear()
            cp.get_default_memory_pool().free_all_blocks()
    write_result(
        "ntt-large-algorithms",
        {
            "sizes": list(sizes),
            "repeats": args.repeats,
            "timing": "CUDA events around one call, median",
            "results": rows,
        },
        args.out,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
