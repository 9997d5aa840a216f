"""One BFV multiply with relinearization on a batch, after a warm-up, for Nsight Compute:
ncu --kernel-name regex:rns_ python benchmarks/profile_bfv_kernels.py [preset] [batch]"""

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import cupy as cp

from hebatch import bfv

preset = sys.argv[1] if len(sys.argv) > 1 else "n16384"
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 64
params = bfv.Params.preset(preset)
ctx = bfv.Context(params, backend="gpu", graphs=False)
keys = ctx.keygen(rotations=[])
rng = np.random.default_rng()
a, b = (ctx.encrypt(keys.public, ctx.encode(rng.integers(0, params.t, size=(batch, params.n)))) for _ in range(2))
ctx.multiply(a, b, keys.relin)  # warm-up: tables, plans, kernels
cp.cuda.Device().synchronize()
print("profiled call", flush=True)
ctx.multiply(a, b, keys.relin)
cp.cuda.Device().synchronize()
print("done", flush=True)
