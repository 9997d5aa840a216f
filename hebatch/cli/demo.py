"""`hebatch demo`: a demo batch job (what `make demo` runs)."""

from __future__ import annotations

import time

import click
import numpy as np

import hebatch as hb

from .app import main
from .common import json_option, report


@main.command()
@click.option("--log-n", type=click.IntRange(1, 17), default=12, show_default=True, help="log2 of the transform size")
@click.option("--limbs", type=click.IntRange(1, 64), default=8, show_default=True, help="RNS limbs (60-bit primes)")
@click.option("--batch", type=click.IntRange(1, 1 << 16), default=32, show_default=True, help="polynomials")
@click.option("--device", type=click.Choice(["auto", "cpu", "gpu"]), default="auto", show_default=True)
@json_option
def demo(log_n, limbs, batch, device, as_json):
    """Run a demo batch: negacyclic NTTs of random RNS polynomials, checked by a round trip.

    \b
    Example:
      hebatch demo --log-n 13 --limbs 4 --batch 128
    """
    from ..backend import gpu_available

    use_gpu = device != "cpu" and gpu_available()
    if device == "gpu" and not gpu_available():
        raise click.ClickException("--device gpu: no CUDA GPU with CuPy found")
    n = 1 << log_n
    moduli = hb.ntt_primes(60, n, limbs)
    rng = np.random.default_rng()
    x = np.stack([rng.integers(0, q, size=(batch, n), dtype=np.uint64) for q in moduli], axis=1)
    xp = np
    if use_gpu:
        import cupy as xp

        x = xp.asarray(x)
    hb.ntt(x[:1], moduli, negacyclic=True)  # warm-up: tables (and kernels) built once
    _sync(xp)
    start = time.perf_counter()
    y = hb.ntt(x, moduli, negacyclic=True)
    _sync(xp)
    forward_s = time.perf_counter() - start
    ok = bool((hb.intt(y, moduli, negacyclic=True) == x).all())
    summary = {
        "device": "gpu" if use_gpu else "cpu",
        "n": n,
        "limbs": limbs,
        "batch": batch,
        "elements": int(x.size),
        "forward_seconds": forward_s,
        "throughput_GBps": x.nbytes / forward_s / 1e9,
        "round_trip_exact": ok,
    }
    report(summary, as_json, "hebatch demo")
    if not ok:
        raise click.ClickException("round trip mismatch")


def _sync(xp):
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()
