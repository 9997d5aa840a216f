"""L2 and device-memory bandwidth of the current GPU: a kernel that reads (or copies) a buffer many times over,
for buffer sizes from a few MB (held by the L2) to 256 MB (device memory). Loads bypass L1 (ld.global.cg).
Prints one line per (size, kind); JSON to the path given.

    python benchmarks/l2_bandwidth.py l2.json
"""

import json
import pathlib
import sys

import cupy as cp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from hebatch.benchmarks.harness import cuda_time

SOURCE = r"""
extern "C" __global__ void read_all(const ulonglong2* __restrict__ a, long long n, int reps,
                                    unsigned long long* sink) {
    const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    unsigned long long s = 0;
    for (int r = 0; r < reps; ++r)
        for (long long i = first; i < n; i += step) {
            const ulonglong2 v = __ldcg(a + i);
            s += v.x ^ v.y;
        }
    if (s == 42) sink[0] = s;  // keeps the loads
}
extern "C" __global__ void copy_all(const ulonglong2* __restrict__ a, ulonglong2* __restrict__ b, long long n,
                                    int reps) {
    const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    for (int r = 0; r < reps; ++r)
        for (long long i = first; i < n; i += step) b[i] = __ldcg(a + i);
}
"""


def main(out_path):
    module = cp.RawModule(code=SOURCE)
    read_all, copy_all = module.get_function("read_all"), module.get_function("copy_all")
    blocks = cp.cuda.Device().attributes["MultiProcessorCount"] * 8
    results = []
    for mb in (4, 8, 16, 24, 32, 48, 256):
        n = mb * 2**20 // 16  # 16-byte words
        a, b = cp.zeros(2 * n, dtype=cp.uint64), cp.zeros(2 * n, dtype=cp.uint64)
        sink = cp.zeros(1, dtype=cp.uint64)
        reps = max(1, 2048 // mb)
        kinds = (
            ("read", lambda: read_all((blocks,), (256,), (a, cp.int64(n), cp.int32(reps), sink)), 16),
            ("copy", lambda: copy_all((blocks,), (256,), (a, b, cp.int64(n), cp.int32(reps))), 32),
        )
        for kind, launch, bytes_per_word in kinds:
            seconds = cuda_time(lambda _, launch=launch: launch(), [None], 5, warmup=1) / 1e3
            r = dict(buffer_MB=mb, kind=kind, TBps=round(n * bytes_per_word * reps / seconds / 1e12, 2))
            results.append(r)
            print(r, flush=True)
    pathlib.Path(out_path).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "l2-bandwidth.json")
