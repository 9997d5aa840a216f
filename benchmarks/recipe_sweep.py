"""Time transforms under alternative launch recipes (hebatch/ntt/recipes.py constants), to choose
the recipe from measurements: ms, a stream of calls (host work included), and graph_ms, the same calls
replayed as a CUDA graph (the device's time alone). Prints one line per (case, setting); JSON to
$OUT/recipe-sweep.json.

    python benchmarks/recipe_sweep.py 12x4096 16x256 20x1 24x1
"""

import json
import os
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import cupy as cp

import hebatch as hb
from hebatch.backend.gpu import loader as cuda
from hebatch.ntt import recipes

BASE_OPTIONS = cuda.COMPILE_OPTIONS
from hebatch.ntt.plan import make_plan  # noqa: E402
from hebatch.ntt.word import _plan_choice  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from hebatch.benchmarks.harness import STREAMED, graph_time  # noqa: E402
from hebatch.benchmarks.harness import cuda_time as time_calls  # noqa: E402
from hebatch.benchmarks.ntt import MODULI_BY_NAME, random_inputs  # noqa: E402

SETTINGS = {
    "radix": [3, 4],
    "multi_tile": [11, 12, 13],  # log2 elements per block in multi-pass transforms (64-bit words)
    "lanes": [2, 3, 4],
    "small_tile": [11, 12, 13],
    "few_blocks_lanes": [1, 2, 3],  # columns per block of merges that run few blocks (recipes.few_blocks_lanes)
}
DEFAULT = dict(
    radix=recipes.RADIX_LOG,
    multi_tile=recipes.TILE_LOG[8],
    lanes=recipes.MULTI_PASS_LANES_LOG,
    small_tile=recipes.SMALL_TILE_LOG,
    few_blocks_lanes=recipes.FEW_BLOCKS_LANES_LOG,
)


KERNEL_VARIANTS = {"default": (), "regs64": ("-DNTT_MAX_REGS=64",), "exact-shoup": ("-DNTT_EXACT_SHOUP=1",)}


def use_kernel_variant(name):
    """Compile the kernels at run time with the variant's -D options (the prebuilt cubin has none)."""
    from hebatch.backend.gpu import loader as cuda

    os.environ.pop("HEBATCH_KERNEL_CUBIN", None)
    cuda.COMPILE_OPTIONS = BASE_OPTIONS + KERNEL_VARIANTS[name]
    cuda._MODULES.clear()
    make_plan.cache_clear()
    _plan_choice.cache_clear()


def apply(setting):
    recipes.RADIX_LOG = setting["radix"]
    recipes.TILE_LOG[8] = setting["multi_tile"]
    recipes.TILE_LOG[4] = setting["multi_tile"] + 1
    recipes.MULTI_PASS_LANES_LOG = setting["lanes"]
    recipes.SMALL_TILE_LOG = setting["small_tile"]
    recipes.FEW_BLOCKS_LANES_LOG = setting["few_blocks_lanes"]
    make_plan.cache_clear()
    _plan_choice.cache_clear()  # plan_for memoizes its choice per shape


def main():
    args = sys.argv[1:]
    variants = False
    if args and args[0] == "--kernel-variants":
        variants, args = True, args[1:]
    cases = args or ["12x4096", "16x256", "20x1", "24x1"]
    results = []
    if variants:
        for case in cases:
            log_n, batch = (int(v) for v in case.split(":")[0].split("x"))
            q, dtype = MODULI_BY_NAME[case.split(":")[1] if ":" in case else "q60"]
            shape = (batch, 1 << log_n) if batch > 1 else (1 << log_n,)
            inputs = random_inputs(cp, q, shape, dtype, 3)
            for name in KERNEL_VARIANTS:
                use_kernel_variant(name)
                ms = time_calls(lambda a: hb.ntt(a, q, negacyclic=True, check=False), inputs, 15, back_to_back=STREAMED)
                results.append(dict(case=case, kernel_variant=name, ms=ms))
                print(f"{case:>14} kernel {name:>12} {ms:.4f} ms", flush=True)
            del inputs
        use_kernel_variant("default")
        cases = []  # kernel variants only
    for case in cases:
        parts = case.split(":")
        log_n, batch = (int(v) for v in parts[0].split("x"))
        modulus = parts[1] if len(parts) > 1 else "q60"
        q, dtype = MODULI_BY_NAME[modulus]
        shape = (batch, 1 << log_n) if batch > 1 else (1 << log_n,)
        inputs = random_inputs(cp, q, shape, dtype, 3)
        # vary one knob at a time around the default
        trials = [dict(DEFAULT)]
        for knob, values in SETTINGS.items():
            for v in values:
                if v != DEFAULT[knob]:
                    trials.append(dict(DEFAULT, **{knob: v}))
        for setting in trials:
            apply(setting)
            try:
                call = lambda a: hb.ntt(a, q, negacyclic=True, check=False)  # noqa: E731
                ms = time_calls(call, inputs, 15, back_to_back=STREAMED)
                graph_ms = graph_time(call, inputs, 15)
                digits = [p.log_np for p in recipes.gpu_passes("4step", log_n, np.dtype(dtype).itemsize)]
                results.append(dict(case=case, setting=setting, ms=ms, graph_ms=graph_ms, digits=digits))
                print(
                    f"{case:>14} {setting} digits={digits} {ms:.4f} ms, graph {graph_ms or float('nan'):.4f} ms",
                    flush=True,
                )
            except Exception as exc:
                results.append(dict(case=case, setting=setting, error=repr(exc)))
                print(f"{case:>14} {setting} ERROR {exc!r}", flush=True)
        apply(DEFAULT)
        del inputs
    if os.environ.get("OUT"):
        pathlib.Path(os.environ["OUT"], "recipe-sweep.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
