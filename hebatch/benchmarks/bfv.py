"""BFV benchmark: encrypt, decrypt, add, multiply (with relinearization), relinearize alone and
rotate, for every parameter preset (n = 2^12 .. 2^15, and 2^16 where a preset exists).

For each operation two numbers: the latency of one call on one ciphertext (CUDA events around the
call, host work included) and the time per ciphertext of one call on a batch of 64 ciphertexts; on a
GPU also the device time of each (the calls' launches recorded as a CUDA graph and replayed: no host
work, which moves between processes and machines). Medians of >= 15 timings after warm-up, inputs
rotating over freshly encrypted data. The same-run references of hebatch.benchmarks.harness (cuFFT
complex64 and a device-to-device copy of one ciphertext's element count) make numbers comparable across
machines.
Prints a table and writes bfv-<device>-<date>.json into --out (default: the current directory).

    python -m hebatch.benchmarks.bfv                    # GPU, every preset
    python -m hebatch.benchmarks.bfv --presets n16384   # one preset
    python -m hebatch.benchmarks.bfv --cpu --quick      # smoke run of the script on the CPU backend

Variants: "graphs" is hebatch.bfv.Context as it is: multiply, key switching and decryption through the
fused RnsOps steps (tensor, behz_extend, behz_scale_down (the fast floor and Shenoy-Kumaresan together),
inner_product, mod_down, mod_down_rotated (a rotation's c0(X^g) added in the mod-down), scale_round: one
kernel each on the GPU), and operations on small batches replayed from recorded CUDA graphs
(Context(graphs=True)); "fused" is the same without graphs (every kernel launched from Python); "plain"
also replaces the fused steps by RnsOps' generic compositions of the elementary primitives (one launch per
primitive). All three give identical ciphertexts.
"""

from __future__ import annotations

import argparse
import copy
import platform
import sys
import traceback
import types

import numpy as np

from hebatch import bfv
from hebatch.backend import RnsOps
from hebatch.benchmarks.harness import (
    add_common_args,
    cuda_time,
    device_name,
    graph_time,
    host_time,
    references,
    write_result,
)

PRESETS = ["n4096", "n8192", "n16384", "n32768"]  # n65536: add with --presets (0.9 GB relinearization key)
OPERATIONS = ["encrypt", "decrypt", "add", "multiply_relin", "relinearize", "rotate"]
BATCH = 64
INPUTS = 3  # distinct inputs the timed calls rotate over


def available_presets(names, digit_sizes=(1,)):
    """(name, params) of every preset and key-switching digit size that exist (a digit size above a preset's limb
    count does not)."""
    out = []
    for name in names:
        for digit_limbs in digit_sizes:
            try:
                out.append((name, bfv.Params.preset(name, digit_limbs=digit_limbs)))
            except ValueError:
                continue
    return out


def operation_inputs(ctx, keys, params, batch: int, rng):
    """For each operation: (function of one input, list of inputs), inputs on the context's device."""
    shape = (batch, params.n) if batch > 1 else (params.n,)

    def plain():
        return ctx.encode(rng.integers(0, params.t, size=shape, dtype=np.int64))

    def cipher():
        return ctx.encrypt(keys.public, plain())

    pts = [plain() for _ in range(INPUTS)]
    pairs = [(cipher(), cipher()) for _ in range(INPUTS)]
    cts = [a for a, _ in pairs]
    products = [ctx.multiply(a, b) for a, b in pairs]  # unrelinearized (3 components)
    return {
        "encrypt": (lambda p: ctx.encrypt(keys.public, p), pts),
        "decrypt": (lambda c: ctx.decrypt(keys.secret, c), cts),
        "add": (lambda ab: ctx.add(*ab), pairs),
        "multiply_relin": (lambda ab: ctx.multiply(ab[0], ab[1], keys.relin), pairs),
        "relinearize": (lambda c3: ctx.relinearize(c3, keys.relin), products),
        "rotate": (lambda c: ctx.rotate(c, 1, keys.galois), cts),
    }


NOT_KERNELS = ("asarray", "to_host")  # data movement, not kernel launches


class CallCounter:
    """Wraps an RnsOps and counts its kernel-launching method calls (one launch each on the GPU). A step
    that is RnsOps' generic composition runs with this counter as self, so its parts are counted instead.
    The ring NTTs, a few launches each, are calls of the transforms layer and not counted."""

    def __init__(self, ops):
        self.ops, self.calls = ops, {}

    def __getattr__(self, name):
        value = getattr(self.ops, name)
        if not callable(value) or name in NOT_KERNELS:
            return value
        if getattr(value, "__func__", None) is getattr(RnsOps, name, None):
            return types.MethodType(value.__func__, self)

        def counted(*args, **kwargs):
            self.calls[name] = self.calls.get(name, 0) + 1
            return value(*args, **kwargs)

        return counted


def count_calls(ctx, fn, inp) -> dict:
    """RnsOps calls made by one fn(inp) on ctx."""
    ops, graphs = ctx.ops, ctx.graphs
    ctx.ops, ctx.graphs = (counter := CallCounter(ops)), None  # a replayed graph makes no calls
    try:
        fn(inp)
    finally:
        ctx.ops, ctx.graphs = ops, graphs
    return dict(sorted(counter.calls.items()))


FUSED_STEPS = (
    "tensor",
    "behz_extend",
    "behz_extend_stack",
    "behz_floor",
    "behz_sk",
    "behz_scale_down",
    "inner_product",
    "mod_down",
    "mod_down_rotated",
    "scale_round",
)


def composed_steps(ops):
    """A copy of ops whose fused steps are RnsOps' generic compositions of the elementary primitives."""
    plain = copy.copy(ops)
    for step in FUSED_STEPS:
        setattr(plain, step, types.MethodType(getattr(RnsOps, step), plain))
    return plain


def device_time(ctx, fn, inputs, repeats: int, per: int) -> float | None:
    """Milliseconds of device time per ciphertext of fn(input) (a call on `per` ciphertexts): its launches recorded
    as one CUDA graph and replayed (hebatch.benchmarks.harness.graph_time), four calls a graph for one ciphertext
    and one for a batch, with the context's own graphs off so that the kernels themselves are recorded (the
    launches of the "graphs" variant are those of "fused", less the copies in and out of its graphs). None where
    the call cannot be recorded."""
    graphs, ctx.graphs = ctx.graphs, None
    try:
        ms = graph_time(fn, inputs, repeats, calls=4 if per == 1 else 1)
    finally:
        ctx.graphs = graphs
    return None if ms is None else ms / per


def run_variant(name, params, variant, cpu, batch, rng, timed, fft_ms, copy_gbps, repeats=None):
    """Time every operation of one preset and variant; one result row per operation. repeats: samples of the device
    times (GPU only; None: none taken)."""
    rows = []
    limbs = len(params.q)
    try:
        ctx = bfv.Context(params, backend="cpu" if cpu else "gpu", graphs=variant == "graphs")
        if variant == "plain":
            ctx.ops = composed_steps(ctx.ops)
        keys = ctx.keygen(rotations=[1])
        cases = {b: operation_inputs(ctx, keys, params, b, rng) for b in (1, batch)}
    except Exception as exc:
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        print(f"{name:>8} {variant:>7} ERROR {error}", flush=True)
        return [dict(preset=name, n=params.n, variant=variant, error=error)]
    for op in OPERATIONS:
        entry = dict(
            preset=name,
            n=params.n,
            log_q=params.log_q,
            log_qp=params.log_qp,
            limbs=limbs,
            digit_limbs=params.digit_limbs,
            t=params.t,
            variant=variant,
            case=op,
            batch=batch,
            cufft_ms=fft_ms,
            copy_GBps=copy_gbps,
        )
        try:
            fn, inputs = cases[1][op]
            entry["latency_ms"] = timed(fn, inputs, 1)
            fn, inputs = cases[batch][op]
            entry["per_ciphertext_ms"] = timed(fn, inputs, batch)
            if repeats is not None:
                entry["device_ms"] = device_time(ctx, *cases[1][op], repeats, 1)
                entry["per_ciphertext_device_ms"] = device_time(ctx, *cases[batch][op], repeats, batch)
            entry["rns_calls"] = count_calls(ctx, *[cases[1][op][0], cases[1][op][1][0]])
            nan = float("nan")
            print(
                f"{name:>8} {params.log_qp:>5} {variant:>7} {op:>15} {entry['latency_ms']:9.4f} "
                f"{entry['per_ciphertext_ms']:17.4f} {entry.get('device_ms') or nan:9.4f} "
                f"{entry.get('per_ciphertext_device_ms') or nan:11.4f} {fft_ms or nan:9.4f} "
                f"{copy_gbps or nan:9.0f} {sum(entry['rns_calls'].values()):6d}",
                flush=True,
            )
        except Exception as exc:
            entry["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            print(f"{name:>8} {variant:>7} {op:>15} ERROR {entry['error']}", flush=True)
        rows.append(entry)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", action="store_true", help="the CPU backend (a smoke run of the script)")
    add_common_args(parser, repeats=25)
    parser.add_argument("--presets", default=",".join(PRESETS), help="comma-separated preset names")
    parser.add_argument("--batch", type=int, default=BATCH, help="ciphertexts per batched call")
    parser.add_argument("--variants", default="plain,fused,graphs", help="comma-separated: plain, fused, graphs")
    parser.add_argument(
        "--digit-limbs", default="1", help="comma-separated key-switching digit sizes (limbs of q a digit; bfv.Params)"
    )
    args = parser.parse_args(argv)
    try:
        digit_sizes = [int(v) for v in args.digit_limbs.split(",") if v]
    except ValueError:
        parser.error(f"--digit-limbs: comma-separated ints, got {args.digit_limbs!r}")

    names = [p for p in args.presets.split(",") if p]
    if args.quick:
        names = names[:1]
    batch = 2 if args.cpu and args.quick else args.batch
    if args.cpu:
        repeats = 2 if args.quick else max(3, args.repeats)
        device, cp = f"cpu-{platform.machine()}", None
    else:
        import cupy as cp

        repeats = max(15, args.repeats)
        device = device_name()

    def timed(fn, inputs, per):
        if cp is None:
            return host_time(fn, inputs, repeats) / per
        return cuda_time(fn, inputs, repeats) / per

    rng = np.random.default_rng()
    rows = []
    print(f"device: {device}  batch: {batch}  repeats: {repeats}")
    variants = [v for v in args.variants.split(",") if v]
    if not set(variants) <= {"plain", "fused", "graphs"}:
        parser.error(f"--variants: any of plain, fused, graphs, got {args.variants}")
    print(
        f"{'preset':>8} {'log q':>5} {'variant':>7} {'operation':>15} {'1 ct ms':>9} {f'per ct of {batch} ms':>17}"
        f" {'1 ct dev':>9} {'per ct dev':>11} {'cuFFT ms':>9} {'copy GB/s':>9} {'calls':>6}"
    )
    for name, params in available_presets(names, digit_sizes):
        if params.digit_limbs != 1:
            name = f"{name}/d{params.digit_limbs}"
        log_n = params.n.bit_length() - 1
        limbs = len(params.q)
        fft_ms = copy_gbps = None
        if cp is not None:  # references for one ciphertext's element count (2 components x L limbs x n)
            found = references((2 * limbs) << log_n, 8 * ((2 * limbs) << log_n), repeats, rows=2 * limbs)
            fft_ms, copy_gbps = found["cufft_ms"], found["copy_GBps"]
        for variant in variants:
            device_repeats = None if cp is None else repeats
            rows += run_variant(name, params, variant, args.cpu, batch, rng, timed, fft_ms, copy_gbps, device_repeats)
        if cp is not None:
            cp.get_default_memory_pool().free_all_blocks()

    result = dict(
        device=device,
        backend="cpu" if args.cpu else "gpu",
        repeats=repeats,
        batch=batch,
        variants=variants,
        timing=(
            "latency_ms: one call on one ciphertext; per_ciphertext_ms: one call on a batch of "
            f"{batch} divided by {batch}; GPU: CUDA events around the call (host work included), "
            "3 warm-up calls, median; CPU: wall clock, median; inputs rotate over "
            f"{INPUTS} freshly encrypted ones. device_ms / per_ciphertext_device_ms (GPU): the same calls' "
            "device time alone, from CUDA graphs of their launches (4 calls a graph for one ciphertext, 1 for a "
            "batch; benchmarks.bfv.device_time), median. multiply_relin includes relinearization; "
            "relinearize times it alone on 3-component products. rns_calls: RnsOps method calls of one "
            "single-ciphertext call (one kernel launch each; the NTTs, a few launches each, are not "
            "among them)."
        ),
        references=(
            "per preset, for 2 x limbs rows of n elements (one ciphertext): cuFFT complex64 "
            "time and device-to-device copy GB/s (hebatch.benchmarks.harness.references)"
        ),
        results=rows,
    )
    write_result("bfv", result, args.out, device=device)
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
