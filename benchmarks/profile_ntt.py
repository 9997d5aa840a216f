"""Run a few transforms once each (after a warm-up) for a profiler such as Nsight Compute:
    ncu --clock-control none --kernel-name regex:ntt_pass --launch-skip K --launch-count M \\
        python benchmarks/profile_ntt.py 12x4096 16x256 24x1
Each case is LOGNxBATCH, optionally :modulus (q60, goldilocks, babybear) and :radix2."""

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import cupy as cp

import hebatch as hb

MODULI = {
    "q60": (hb.ntt_primes(60, 2**27, 1)[0], np.uint64),
    "goldilocks": (hb.GOLDILOCKS, np.uint64),
    "babybear": (hb.BABYBEAR, np.uint32),
}

for case in sys.argv[1:]:
    parts = case.split(":")
    log_n, batch = (int(v) for v in parts[0].split("x"))
    q, dtype = MODULI[parts[1] if len(parts) > 1 else "q60"]
    algorithm = parts[2] if len(parts) > 2 else "auto"
    shape = (batch, 1 << log_n) if batch > 1 else (1 << log_n,)
    x = (cp.random.randint(0, 2**31, size=shape, dtype=cp.int64).astype(cp.uint64) % cp.uint64(q)).astype(dtype)
    hb.ntt(x, q, negacyclic=True, algorithm=algorithm, check=False)  # warm-up: tables, kernels
    cp.cuda.Device().synchronize()
    hb.ntt(x, q, negacyclic=True, algorithm=algorithm, check=False)
    cp.cuda.Device().synchronize()
    print(case, "done", flush=True)
