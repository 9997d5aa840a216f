"""`hebatch zk-ntt`: one zk-sized transform (2^20 .. 2^28 points) on one device or spread over workers."""

from __future__ import annotations

import click

from ..field import MAX_LOG_N
from ..jobs.zk import FIELD_HELP, zk_ntt
from .app import main
from .clusteropts import device_option
from .common import json_option, report_checked


@main.command("zk-ntt")
@click.option(
    "--log-n",
    type=click.IntRange(2, MAX_LOG_N),
    default=20,
    show_default=True,
    help="log2 of the transform size (zk sizes: 20..28)",
)
@click.option("--field", "field_name", default="goldilocks", show_default=True, metavar="FIELD", help=FIELD_HELP)
@click.option("--inverse", is_flag=True, help="inverse transform (scaled by n^-1)")
@click.option("--coset", is_flag=True, help="evaluate on the coset g*H (hb.coset_ntt; g the field's generator)")
@click.option(
    "--verify",
    is_flag=True,
    help="exact checks on the device: random points against the polynomial evaluated there, and the round trip",
)
@click.option("--points", type=click.IntRange(1, 64), default=3, show_default=True, help="points checked by --verify")
@click.option(
    "--workers",
    type=click.IntRange(1, 1024),
    default=None,
    help="spread the transform over K workers of a local cluster (4-step, dist.ntt_large)",
)
@click.option("--scheduler", metavar="ADDR", default=None, help="spread it over the workers of this scheduler")
@device_option()
@click.option(
    "--repeats",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="timed runs (the median is reported); a warm-up run comes first on GPUs and when > 1",
)
@click.option("--seed", type=int, default=None, help="seed of the random input (default: fresh)")
@json_option
def zk_ntt_command(
    log_n, field_name, inverse, coset, verify, points, workers, scheduler, device, repeats, seed, as_json
):
    """One NTT (or coset NTT) of 2^LOG_N random field elements, timed; on one device or over workers.

    \b
    Examples:
      hebatch zk-ntt --log-n 20 --field goldilocks --verify
      hebatch zk-ntt --log-n 24 --field babybear --inverse --device gpu --repeats 5
      hebatch zk-ntt --log-n 22 --field 18446744069414584321 --workers 2 --json
      hebatch zk-ntt --log-n 20 --field bn254 --verify
      hebatch zk-ntt --log-n 20 --field bls12-381 --coset --verify
    """
    report_checked(
        zk_ntt,
        "hebatch zk-ntt",
        as_json,
        field_name,
        log_n,
        inverse=inverse,
        coset=coset,
        verify_points=points if verify else 0,
        workers=workers,
        scheduler=scheduler,
        device=device,
        repeats=repeats,
        seed=seed,
    )
