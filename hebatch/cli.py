"""The `hebatch` command line."""

from __future__ import annotations

import json
import sys
import time

import click
import numpy as np
from rich.console import Console
from rich.table import Table

import hebatch as hb

console = Console(stderr=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(hb.__version__, prog_name="hebatch")
def main():
    """hebatch: batched NTTs, polynomial arithmetic and BFV on CPUs and NVIDIA GPUs.

    \b
    Examples:
      hebatch demo                      # a demo batch job, GPU if present, else CPU
      hebatch demo --log-n 14 --batch 64 --json
    """


@main.command()
@click.option("--log-n", type=click.IntRange(1, 17), default=12, show_default=True, help="log2 of the transform size")
@click.option("--limbs", type=click.IntRange(1, 64), default=8, show_default=True, help="RNS limbs (60-bit primes)")
@click.option("--batch", type=click.IntRange(1, 1 << 16), default=32, show_default=True, help="polynomials")
@click.option("--device", type=click.Choice(["auto", "cpu", "gpu"]), default="auto", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="print the summary as JSON on stdout")
def demo(log_n, limbs, batch, device, as_json):
    """Run a demo batch: negacyclic NTTs of random RNS polynomials, checked by a round trip.

    \b
    Example:
      hebatch demo --log-n 13 --limbs 4 --batch 128
    """
    from .backend import gpu_available

    use_gpu = device == "gpu" or (device == "auto" and gpu_available())
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
    _report(summary, as_json, "hebatch demo")
    if not ok:
        raise click.ClickException("round trip mismatch")


def _sync(xp):
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()


def _report(summary: dict, as_json: bool, title: str) -> None:
    if as_json:
        click.echo(json.dumps(summary))
        return
    table = Table(title=title, show_header=False)
    for key, value in summary.items():
        table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    Console().print(table)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
