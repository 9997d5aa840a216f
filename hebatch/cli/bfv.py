"""`hebatch bfv demo|keygen|encrypt|eval|decrypt`: BFV over batches of records, keys in files."""

from __future__ import annotations

import click

from .app import main
from .common import CONTEXT, CleanErrorGroup


def bfv_module():
    """hebatch.bfv, or RuntimeError saying it is needed."""
    try:
        from .. import bfv
    except ImportError:
        raise RuntimeError("this command needs hebatch.bfv, which this installation lacks") from None
    return bfv


@main.group("bfv", cls=CleanErrorGroup, context_settings=CONTEXT)
def bfv_group():
    """Homomorphic encryption (BFV) of datasets: keys in files, ciphertexts in Zarr stores."""


@bfv_group.command("demo")
def demo():
    """Encrypt random records, evaluate a pipeline on the cluster, decrypt and check."""
    bfv_module()


def analytics_job(settings: dict, out_dir, device: str) -> dict:
    bfv_module()
    raise RuntimeError("this command needs hebatch.bfv")
