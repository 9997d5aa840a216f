"""GPU NTT benchmark: hebatch's transforms beside same-run references (cuFFT complex64 of the same
element count, and a device-to-device copy of the same bytes).

Every time is the median of >= 15 CUDA-event timings (hebatch.benchmarks.harness), after warm-up,
rotating over several freshly drawn random inputs. Prints a table and writes
ntt-<device>-<date>.json into --out (default: the current directory).

    python -m hebatch.benchmarks.ntt [--quick] [--repeats 25] [--algorithms auto,4step,radix2] [--out DIR]
"""

from __future__ import annotations

import argparse
import traceback

import numpy as np

import hebatch as hb
from hebatch.benchmarks.harness import (
    STREAMED,
    add_common_args,
    cuda_time,
    device_name,
    graph_time,
    references,
    write_result,
)

BATCH_CASES = [(12, 4096), (14, 1024), (16, 256), (16, 64), (17, 128)]
SINGLE_CASES = [(20, 1), (22, 1), (24, 1), (26, 1), (27, 1), (28, 1)]
RADIX2_MAX_LOG_N = 24


MODULI_BY_NAME = {
    "q60": (hb.ntt_primes(60, 2**27, 1)[0], np.uint64),
    "goldilocks": (hb.GOLDILOCKS, np.uint64),
    "babybear": (hb.BABYBEAR, np.uint32),
}


def moduli():
    return MODULI_BY_NAME


def random_inputs(cp, q, shape, dtype, count):
    out = []
    for _ in range(count):
        hi = cp.random.randint(0, 2**31, size=shape, dtype=cp.int64).astype(cp.uint64)
        lo = cp.random.randint(0, 2**31, size=shape, dtype=cp.int64).astype(cp.uint64)
        out.append(((hi << cp.uint64(33)) ^ lo) % cp.uint64(q) if q > 2**32 else (lo % cp.uint64(q)))
        out[-1] = out[-1].astype(dtype)
    return out


def case_references(log_n, batch, repeats):
    """(cuFFT ms, cuFFT ms replayed as a graph, copy GB/s) for a batch x 2^log_n case: cuFFT along rows of
    the same shape, a copy of the same element count in 64-bit words."""
    found = references(batch << log_n, 8 * (batch << log_n), repeats, rows=batch)
    return found["cufft_ms"], found["cufft_graph_ms"], found["copy_GBps"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(parser, repeats=25)
    parser.add_argument("--algorithms", default="auto", help="comma-separated: auto, 4step, radix2")
    parser.add_argument("--max-log-n", type=int, default=28)
    args = parser.parse_args(argv)
    import cupy as cp

    repeats = 15 if args.quick else max(15, args.repeats)
    cases = BATCH_CASES + [c for c in SINGLE_CASES if c[0] <= args.max_log_n]
    if args.quick:
        cases = [(12, 4096), (16, 256), (20, 1), (24, 1)]
    algorithms = args.algorithms.split(",")
    device = device_name()
    rows = []
    print(f"device: {device}")
    header = (
        f"{'case':>12} {'modulus':>10} {'dir':>4} {'algo':>6} {'ms':>9} {'1-call ms':>9} {'cuFFT ms':>9} "
        f"{'ratio':>6} {'graph ms':>9} {'ratio':>6} {'GB/s':>7} {'copy GB/s':>9} {'of copy':>7}"
    )
    print(header)
    for log_n, batch in cases:
        fft_ms, fft_graph_ms, copy_gbps = case_references(log_n, batch, repeats)
        for name, (q, dtype) in moduli().items():
            shape = (batch, 1 << log_n) if batch > 1 else (1 << log_n,)
            # negacyclic where the field allows it (2n | q - 1), else cyclic (BabyBear at 2^27), else skip
            negacyclic = (q - 1) % (2 << log_n) == 0
            if not negacyclic and (q - 1) % (1 << log_n):
                rows.append(dict(log_n=log_n, batch=batch, modulus=name, skipped=f"q - 1 has no factor 2^{log_n}"))
                continue
            try:
                inputs = random_inputs(cp, q, shape, dtype, 2 if log_n >= 27 else 3)
            except Exception as exc:  # out of memory, say: record and go on
                rows.append(dict(log_n=log_n, batch=batch, modulus=name, error=repr(exc)))
                continue
            for inverse in (False, True):
                for algorithm in algorithms:
                    if algorithm == "radix2" and log_n > RADIX2_MAX_LOG_N:
                        continue  # its full-size tables are built on the host: not worth it here
                    entry = dict(
                        log_n=log_n,
                        batch=batch,
                        modulus=name,
                        q=q,
                        dtype=np.dtype(dtype).name,
                        direction="inverse" if inverse else "forward",
                        algorithm=algorithm,
                        negacyclic=negacyclic,
                        cufft_ms=fft_ms,
                        cufft_graph_ms=fft_graph_ms,
                        copy_GBps=copy_gbps,
                    )
                    try:

                        def call(a):
                            return hb.ntt(
                                a, q, negacyclic=negacyclic, inverse=inverse, algorithm=algorithm, check=False
                            )

                        ms = cuda_time(call, inputs, repeats, back_to_back=STREAMED)
                        latency = cuda_time(call, inputs, repeats)
                        graph_ms = graph_time(call, inputs, repeats)
                        graph_ratio = graph_ms / fft_graph_ms if graph_ms and fft_graph_ms else float("nan")
                        nbytes = inputs[0].nbytes
                        entry.update(
                            ms=ms,
                            latency_ms=latency,
                            ratio_to_cufft=ms / fft_ms,
                            graph_ms=graph_ms,
                            graph_ratio_to_cufft=graph_ratio,
                            GBps=2 * nbytes / ms / 1e6,
                            fraction_of_copy=(2 * nbytes / ms / 1e6) / copy_gbps,
                        )
                        print(
                            f"{f'2^{log_n}x{batch}':>12} {name:>10} {'inv' if inverse else 'fwd':>4} {algorithm:>6} "
                            f"{ms:9.4f} {latency:9.4f} {fft_ms:9.4f} {ms / fft_ms:6.2f} "
                            f"{graph_ms or float('nan'):9.4f} {graph_ratio:6.2f} {entry['GBps']:7.0f} "
                            f"{copy_gbps:9.0f} {entry['fraction_of_copy']:7.2f}",
                            flush=True,
                        )
                    except Exception as exc:
                        entry["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                        print(
                            f"{f'2^{log_n}x{batch}':>12} {name:>10} {algorithm:>6} ERROR {entry['error']}", flush=True
                        )
                    rows.append(entry)
            # the cost of the entry range check (one extra read and a host synchronisation)
            if name == "q60":
                checked = cuda_time(lambda a: hb.ntt(a, q, negacyclic=negacyclic), inputs, repeats)
                rows.append(
                    dict(
                        log_n=log_n,
                        batch=batch,
                        modulus=name,
                        direction="forward",
                        algorithm="auto",
                        check=True,
                        ms=checked,
                    )
                )
            del inputs
            cp.get_default_memory_pool().free_all_blocks()

    result = dict(
        device=device,
        repeats=repeats,
        cases=[list(c) for c in cases],
        algorithms=algorithms,
        timing=f"ms: median over samples of CUDA-event time / {STREAMED} for {STREAMED} consecutive calls "
        "(cuFFT and copy timed the same way); latency_ms: events around one call, host work "
        f"included; graph_ms: {STREAMED} consecutive calls recorded as one CUDA graph and replayed, per call (the "
        "device's time alone; cufft_graph_ms the same for cuFFT; null where a call could not be recorded); "
        "3 warm-up calls; inputs rotate "
        "over freshly drawn random arrays; negacyclic transforms (cyclic where the field has "
        "no 2n-th root); check=False",
        references="cuFFT: cupy.fft.fft on complex64 of the same element count; copy: device-to-device "
        "of the same bytes, GB/s counting read + write",
        results=rows,
    )
    return write_result("ntt", result, args.out, device=device)


if __name__ == "__main__":
    main()
