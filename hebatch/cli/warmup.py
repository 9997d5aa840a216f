"""`hebatch warmup`: compile the common GPU kernels once, so that later runs and workers start warm."""

from __future__ import annotations

import click

from ..jobs.warmup import warmup as warmup_job
from .app import main
from .clusteropts import device_option
from .common import json_option, report


@main.command()
@click.option(
    "--log-n",
    "log_ns",
    type=click.IntRange(1, 28),
    multiple=True,
    help="only these sizes (log2 n; repeat the option); default: the common sizes 2^8..2^24",
)
@device_option("the GPU to warm (auto: the GPU where one is visible; cpu: nothing to do)")
@json_option
def warmup(log_ns, device, as_json):
    """Compile the common GPU kernels into CuPy's on-disk cache (once per machine and CUDA version).

    Afterwards `hebatch info` shows the cache; a prebuilt cubin (python -m hebatch.ntt.prebuild, or the
    one shipped for sm_90) is used instead where it matches the sources.

    \b
    Examples:
      hebatch warmup
      hebatch warmup --log-n 20 --log-n 24 --json
    """
    report(warmup_job(device=device, log_ns=tuple(log_ns) or None), as_json, "hebatch warmup")
