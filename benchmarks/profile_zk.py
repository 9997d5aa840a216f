"""Run 256-bit field transforms once each (after a warm-up) for a profiler such as Nsight Compute:
    ncu --clock-control none --kernel-name regex:ntt256 python benchmarks/profile_zk.py bls12_377:22
Each case is FIELD:LOGN[xBATCH]."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import cupy as cp

import hebatch as hb
from hebatch.field import field_by_name

for case in sys.argv[1:]:
    name, size = case.split(":")
    log_n, _, batch = size.partition("x")
    field = field_by_name(name)
    shape = ((int(batch),) if batch else ()) + (1 << int(log_n), 4)
    x = cp.random.randint(0, 2**63, size=shape, dtype=cp.int64).astype(cp.uint64)
    x[..., 3] &= cp.uint64((1 << 60) - 1)  # below every supported p
    hb.ntt(x, field, check=False)  # warm-up: tables, kernels
    cp.cuda.Device().synchronize()
    hb.ntt(x, field, check=False)
    cp.cuda.Device().synchronize()
    print(case, "done", flush=True)
