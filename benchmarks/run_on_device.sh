#!/usr/bin/env bash
# One run on a GPU machine: install carried wheels, GPU tests, benchmarks; logs and JSON under $OUT.
# Usage (from the repository root on a GPU machine): bash benchmarks/run_on_device.sh [tests|bench|bfv|zk|all] [pytest args...]
# bfv: the BFV/RNS GPU tests and hebatch.benchmarks.bfv; zk: the 256-bit field GPU tests and hebatch.benchmarks.zk
set -uo pipefail
what=${1:-all}; shift || true
OUT=${OUT:-/tmp/hebatch-out}; mkdir -p "$OUT"; export OUT PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD
fi
[ -f build/ntt_sm90.cubin ] && export HEBATCH_KERNEL_CUBIN=$PWD/build/ntt_sm90.cubin
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)" | tee -a "$OUT/gpu.txt"
if [ "$what" = tests ] || [ "$what" = all ]; then
    python3 -m pytest -q -m gpu -p no:cacheprovider "$@" 2>&1 | tee "$OUT/gpu-tests.log"
fi
if [ "$what" = zk ]; then
    python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_zk.py "$@" 2>&1 | tee "$OUT/zk-tests.log"
    python3 -m hebatch.benchmarks.zk --out "$OUT" 2>&1 | tee "$OUT/zk-bench.log"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    python3 -m hebatch.benchmarks.ntt --algorithms auto,radix2 --out "$OUT" 2>&1 | tee "$OUT/ntt-bench.log"
fi
if [ "$what" = bfv ]; then
    python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu_rns.py "$@" 2>&1 | tee "$OUT/gpu-rns-tests.log"
    python3 -m hebatch.benchmarks.bfv --out "$OUT" 2>&1 | tee "$OUT/bfv-bench.log"
fi
