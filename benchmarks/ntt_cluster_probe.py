"""Probe: rows of 2^14 points (60-bit prime, negacyclic forward) in one launch per row of a 4-CTA thread-block
cluster (benchmarks/ntt_cluster_probe.cu) against hb.ntt's two merge passes. Checks that every variant's output
equals hb.ntt's, then times both as graph-replayed calls (the device's time alone). Needs an sm_90 GPU.

    python benchmarks/ntt_cluster_probe.py results.json
"""

import json
import pathlib
import sys

import cupy as cp
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import hebatch as hb
from hebatch.backend.gpu.loader import COMPILE_OPTIONS, define_options, kernel_dir
from hebatch.backend.kernels import modconst_rows
from hebatch.benchmarks.harness import graph_time
from hebatch.benchmarks.ntt import MODULI_BY_NAME, random_inputs
from hebatch.field import default_root
from hebatch.ntt.tables import merge_table

N = 1 << 14
VARIANTS = ("false,2", "true,2", "true,3", "true,4")  # STORE_THROUGH_CLUSTER, MIN_BLOCKS


def main(out_path):
    q, dtype = MODULI_BY_NAME["q60"]
    source = (pathlib.Path(__file__).resolve().parent / "ntt_cluster_probe.cu").read_text()
    options = COMPILE_OPTIONS + (f"-I{kernel_dir()}",) + define_options("ntt.cu")
    names = [f"cluster_ntt_2p14<Mod60,{v}>" for v in VARIANTS]
    module = cp.RawModule(code=source, options=options, name_expressions=names)
    kernels = {v: module.get_function(name) for v, name in zip(VARIANTS, names)}
    table = cp.asarray(merge_table(q, default_root(q, N, True), N, True, False, 64))
    consts = cp.asarray(modconst_rows([q]).view(np.uint8))

    def runner(variant):
        def call(x):
            y = cp.empty_like(x)
            kernels[variant]((x.shape[0] * 4,), (256,), (x, y, consts, table), shared_mem=8 * 4096)
            return y

        return call

    def plain(x):
        return hb.ntt(x, q, negacyclic=True, check=False)

    results = []
    for rows in (7, 64, 256, 1024, 3840):
        inputs = random_inputs(cp, q, (rows, N), dtype, 3)
        want = plain(inputs[0])
        equal = {v: bool((runner(v)(inputs[0]) == want).all()) for v in VARIANTS}
        for rnd in (1, 2):
            r = dict(rows=rows, round=rnd, equal=equal, plain_ms=graph_time(plain, inputs, 21))
            r["cluster_ms"] = {v: graph_time(runner(v), inputs, 21) for v in VARIANTS}
            results.append(r)
            print(json.dumps(r), flush=True)
        del inputs
    pathlib.Path(out_path).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ntt-cluster-probe.json")
