"""GPU NTT benchmark: hebatch's transforms beside same-run references (cuFFT complex64 of the same
element count, and a device-to-device copy of the same bytes).

Every time is the median of >= 15 CUDA-event timings of one call, after warm-up, rotating over
several freshly drawn random inputs. Prints a table and writes JSON to
benchmarks/results/ntt-<device>-<date>.json (and to $OUT when set).

    python benchmarks/ntt_bench.py [--quick] [--repeats 25] [--algorithms auto,4step,radix2]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import statistics
import sys
import traceback

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import hebatch as hb  # noqa: E402

BATCH_CASES = [(12, 4096), (14, 1024), (16, 256), (16, 64), (17, 128)]
SINGLE_CASES = [(20, 1), (22, 1), (24, 1), (26, 1), (27, 1), (28, 1)]
RADIX2_MAX_LOG_N = 24


MODULI_BY_NAME = {"q60": (hb.ntt_primes(60, 2**27, 1)[0], np.uint64), "goldilocks": (hb.GOLDILOCKS, np.uint64),
                  "babybear": (hb.BABYBEAR, np.uint32)}


def moduli():
    return MODULI_BY_NAME


def time_calls(fn, inputs, repeats: int, warmup: int = 3, back_to_back: int = 1) -> float:
    """Median milliseconds per call of fn(input): CUDA events around `back_to_back` consecutive
    calls (1: the latency of one call, host work included; more: the time per call of a stream of
    calls, whose host work overlaps the device's), `repeats` samples after warm-up."""
    import cupy as cp

    for i in range(warmup):
        fn(inputs[i % len(inputs)])
    cp.cuda.Device().synchronize()
    times = []
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for i in range(repeats):
        start.record()
        for j in range(back_to_back):
            fn(inputs[(i * back_to_back + j) % len(inputs)])
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / back_to_back)
    return statistics.median(times)


STREAMED = 8  # calls per sample for the throughput time


def random_inputs(cp, q, shape, dtype, count):
    out = []
    for _ in range(count):
        hi = cp.random.randint(0, 2**31, size=shape, dtype=cp.int64).astype(cp.uint64)
        lo = cp.random.randint(0, 2**31, size=shape, dtype=cp.int64).astype(cp.uint64)
        out.append(((hi << cp.uint64(33)) ^ lo) % cp.uint64(q) if q > 2**32 else (lo % cp.uint64(q)))
        out[-1] = out[-1].astype(dtype)
    return out


def references(cp, log_n, batch, repeats, cache):
    """cuFFT complex64 ms and device-to-device copy GB/s for this element count (cached per shape)."""
    key = (log_n, batch)
    if key not in cache:
        n = 1 << log_n
        shape = (batch, n) if batch > 1 else (n,)
        z = [(cp.random.random(shape, dtype=cp.float32) + 1j * cp.random.random(shape, dtype=cp.float32))
             .astype(cp.complex64) for _ in range(2)]
        fft_ms = time_calls(lambda a: cp.fft.fft(a, axis=-1), z, repeats, back_to_back=STREAMED)
        del z
        src = cp.random.randint(0, 2**31, size=shape, dtype=cp.int64).view(cp.uint64)
        dst = cp.empty_like(src)
        copy_ms = time_calls(lambda a: dst.__setitem__(Ellipsis, a), [src], repeats, back_to_back=STREAMED)
        cache[key] = (fft_ms, 2 * src.nbytes / copy_ms / 1e6)
        del src, dst
        cp.get_default_memory_pool().free_all_blocks()
    return cache[key]


def device_name(cp) -> str:
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else name


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer cases and repeats (a smoke run)")
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--algorithms", default="auto", help="comma-separated: auto, 4step, radix2")
    parser.add_argument("--max-log-n", type=int, default=28)
    parser.add_argument("--out", type=pathlib.Path, default=None, help="JSON path (default benchmarks/results/...)")
    args = parser.parse_args(argv)
    import cupy as cp

    repeats = 15 if args.quick else max(15, args.repeats)
    cases = BATCH_CASES + [c for c in SINGLE_CASES if c[0] <= args.max_log_n]
    if args.quick:
        cases = [(12, 4096), (16, 256), (20, 1), (24, 1)]
    algorithms = args.algorithms.split(",")
    device = device_name(cp)
    refs: dict = {}
    rows = []
    print(f"device: {device}")
    header = (f"{'case':>12} {'modulus':>10} {'dir':>4} {'algo':>6} {'ms':>9} {'1-call ms':>9} {'cuFFT ms':>9} "
              f"{'ratio':>6} {'GB/s':>7} {'copy GB/s':>9} {'of copy':>7}")
    print(header)
    for log_n, batch in cases:
        fft_ms, copy_gbps = references(cp, log_n, batch, repeats, refs)
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
                    entry = dict(log_n=log_n, batch=batch, modulus=name, q=q, dtype=np.dtype(dtype).name,
                                 direction="inverse" if inverse else "forward", algorithm=algorithm,
                                 negacyclic=negacyclic, cufft_ms=fft_ms, copy_GBps=copy_gbps)
                    try:
                        def call(a):
                            return hb.ntt(a, q, negacyclic=negacyclic, inverse=inverse, algorithm=algorithm,
                                          check=False)

                        ms = time_calls(call, inputs, repeats, back_to_back=STREAMED)
                        latency = time_calls(call, inputs, repeats)
                        nbytes = inputs[0].nbytes
                        entry.update(ms=ms, latency_ms=latency, ratio_to_cufft=ms / fft_ms, GBps=2 * nbytes / ms / 1e6,
                                     fraction_of_copy=(2 * nbytes / ms / 1e6) / copy_gbps)
                        print(f"{f'2^{log_n}x{batch}':>12} {name:>10} {'inv' if inverse else 'fwd':>4} {algorithm:>6} "
                              f"{ms:9.4f} {latency:9.4f} {fft_ms:9.4f} {ms / fft_ms:6.2f} {entry['GBps']:7.0f} {copy_gbps:9.0f} "
                              f"{entry['fraction_of_copy']:7.2f}", flush=True)
                    except Exception as exc:
                        entry["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                        print(f"{f'2^{log_n}x{batch}':>12} {name:>10} {algorithm:>6} ERROR {entry['error']}", flush=True)
                    rows.append(entry)
            # the cost of the entry range check (one extra read and a host synchronisation)
            if name == "q60":
                checked = time_calls(lambda a: hb.ntt(a, q, negacyclic=negacyclic), inputs, repeats)
                rows.append(dict(log_n=log_n, batch=batch, modulus=name, direction="forward", algorithm="auto",
                                 check=True, ms=checked))
            del inputs
            cp.get_default_memory_pool().free_all_blocks()

    date = datetime.date.today().isoformat()
    slug = device.replace("NVIDIA ", "").replace(" ", "-")
    result = dict(device=device, date=date, cupy=cp.__version__, repeats=repeats,
                  timing=f"ms: median over samples of CUDA-event time / {STREAMED} for {STREAMED} consecutive calls "
                         "(cuFFT and copy timed the same way); latency_ms: events around one call, host work "
                         "included; 3 warm-up calls; inputs rotate "
                         "over freshly drawn random arrays; negacyclic transforms (cyclic where the field has "
                         "no 2n-th root); check=False",
                  references="cuFFT: cupy.fft.fft on complex64 of the same element count; copy: device-to-device "
                             "of the same bytes, GB/s counting read + write",
                  results=rows)
    out = args.out or ROOT / "benchmarks" / "results" / f"ntt-{slug}-{date}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    if os.environ.get("OUT"):
        pathlib.Path(os.environ["OUT"], out.name).write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
