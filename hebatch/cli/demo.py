"""`hebatch demo`: a demo batch job (what `make demo` runs)."""

from __future__ import annotations

import click

from ..jobs.demo import demo as demo_job
from .app import main
from .clusteropts import device_option
from .common import json_option, report_checked


@main.command()
@click.option("--log-n", type=click.IntRange(1, 17), default=12, show_default=True, help="log2 of the transform size")
@click.option("--limbs", type=click.IntRange(1, 64), default=8, show_default=True, help="RNS limbs (60-bit primes)")
@click.option("--batch", type=click.IntRange(1, 1 << 16), default=32, show_default=True, help="polynomials")
@device_option()
@json_option
def demo(log_n, limbs, batch, device, as_json):
    """Run a demo batch: negacyclic NTTs of random RNS polynomials, checked by a round trip.

    \b
    Example:
      hebatch demo --log-n 13 --limbs 4 --batch 128
    """
    report_checked(demo_job, "hebatch demo", as_json, log_n=log_n, limbs=limbs, batch=batch, device=device)
