"""Butterfly throughput of each modular arithmetic of kernels/modarith.cuh in registers alone
(benchmarks/butterfly_throughput.cu): the cost of the arithmetic's instructions without memory traffic, the floor
under an NTT pass of that modulus. First checks a few rounds of every arithmetic against Python ints, then times
long runs (CUDA events, median of 7 after 2 warm-ups) and reports butterflies per second, per SM and clock, and the
issue cycles a warp spends on one butterfly on one of an SM's 4 schedulers.

    python benchmarks/butterfly_throughput.py results.json
"""

import json
import pathlib
import subprocess
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from hebatch.arith import with_companions
from hebatch.backend.gpu.loader import COMPILE_OPTIONS, kernel_dir
from hebatch.backend.kernels import modconst_rows
from hebatch.benchmarks.harness import cuda_time, device_name
from hebatch.benchmarks.ntt import MODULI_BY_NAME
from hebatch.field import ntt_primes

# (name, modulus, arithmetic struct, word type)
CASES = [
    ("q60", MODULI_BY_NAME["q60"][0], "Mod60", np.uint64),
    ("q62", ntt_primes(62, 2**27, 1)[0], "Mod64", np.uint64),
    ("goldilocks", MODULI_BY_NAME["goldilocks"][0], "Goldilocks", np.uint64),
    ("babybear", MODULI_BY_NAME["babybear"][0], "Mod32", np.uint32),
]
THREADS = 256
CHECK_ROUNDS = 3
TIMED_ROUNDS = 1000
BUTTERFLIES_PER_ROUND = 32


def oracle(values, twiddles, q, rounds):
    """The kernel's rounds on one thread's 16 values (Python ints mod q)."""
    v = [int(a) % q for a in values]
    w = [int(t) for t in twiddles]
    for _ in range(rounds):
        for u in range(4):
            half = 8 >> u
            for b in range(8):
                j, e = b // half, (b // half) * 2 * half + b % half
                t = w[(j + u) & 7]
                a, c = v[e], v[e + half] * t % q
                v[e], v[e + half] = (a + c) % q, (a - c) % q
    return v


def main(out_path):
    import cupy as cp

    source = (pathlib.Path(__file__).resolve().parent / "butterfly_throughput.cu").read_text()
    names = [f"butterfly_rounds<{arith}>" for _, _, arith, _ in CASES]
    module = cp.RawModule(code=source, options=COMPILE_OPTIONS + (f"-I{kernel_dir()}",), name_expressions=names)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    clock = subprocess.run(
        ["nvidia-smi", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits"], capture_output=True, text=True
    ).stdout.split()
    max_mhz = float(clock[0]) if clock else float("nan")
    rng = np.random.default_rng()
    results = []
    for (name, q, arith, dtype), kname in zip(CASES, names):
        kernel = module.get_function(kname)
        bits = 32 if dtype == np.uint32 else 64
        tw = cp.asarray(with_companions(q, rng.integers(1, min(q, 2**63), size=256, dtype=np.uint64), bits))
        consts = cp.asarray(modconst_rows([q]).view(np.uint8))

        def run(blocks, rounds, x):
            kernel((blocks,), (THREADS,), (x, tw, consts, np.int32(rounds)))

        # exactness: a small grid, CHECK_ROUNDS rounds, the first 64 threads against Python ints
        blocks = 4
        stride = blocks * THREADS
        host = (rng.integers(0, 2**63, size=16 * stride, dtype=np.uint64) % np.uint64(q)).astype(dtype)
        x = cp.asarray(host)
        run(blocks, CHECK_ROUNDS, x)
        got = cp.asnumpy(x)
        tw_host = cp.asnumpy(tw)[:, 0]
        exact = all(
            [int(got[i + e * stride]) for e in range(16)]
            == oracle(
                [host[i + e * stride] for e in range(16)], tw_host[(i & 31) * 8 : (i & 31) * 8 + 8], q, CHECK_ROUNDS
            )
            for i in range(64)
        )
        # throughput: 16 blocks a SM, long enough that launch and tail are noise
        blocks = sms * 16
        x = cp.asarray(
            (rng.integers(0, 2**63, size=16 * blocks * THREADS, dtype=np.uint64) % np.uint64(q)).astype(dtype)
        )
        ms = cuda_time(lambda a: run(blocks, TIMED_ROUNDS, a), [x], 7, warmup=2)
        butterflies = blocks * THREADS * TIMED_ROUNDS * BUTTERFLIES_PER_ROUND
        per_clock_sm = butterflies / (ms * 1e-3) / (max_mhz * 1e6) / sms
        r = dict(
            modulus=name,
            q=q,
            arithmetic=arith,
            exact=exact,
            ms=ms,
            butterflies=butterflies,
            G_butterflies_per_s=butterflies / (ms * 1e-3) / 1e9,
            per_sm_per_clock_at_max=per_clock_sm,
            warp_cycles_per_butterfly=4 * 32 / per_clock_sm,
        )
        results.append(r)
        print(json.dumps(r), flush=True)
    result = dict(
        benchmark="Butterflies of kernels/modarith.cuh in registers alone (benchmarks/butterfly_throughput.cu): "
        f"{BUTTERFLIES_PER_ROUND} Cooley-Tukey butterflies a round, {TIMED_ROUNDS} rounds, {THREADS}-thread blocks, "
        "16 blocks per SM; CUDA events, median of 7 after 2 warm-ups; per clock at the maximum SM clock; "
        "warp_cycles_per_butterfly = the issue cycles of one scheduler (4 an SM) per butterfly of a warp; "
        f"exact: {CHECK_ROUNDS} rounds of the first 64 threads equal to Python ints",
        device=device_name(),
        sms=sms,
        max_sm_clock_mhz=max_mhz,
        results=results,
    )
    pathlib.Path(out_path).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "butterfly-throughput.json")
