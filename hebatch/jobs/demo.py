"""The demo batch (`hebatch demo`, `make demo`): negacyclic NTTs of random RNS polynomials on this
machine's device, timed and checked by an exact round trip."""

from __future__ import annotations

import time

import numpy as np

import hebatch as hb

from ..device import array_module, resolve_device


def _sync(x) -> None:
    xp = array_module(x)
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()


def demo(*, log_n=12, limbs=8, batch=32, device="auto") -> dict:
    """The demo's summary. Raises ArithmeticError (summary in args[1]) if the round trip is not exact."""
    where = resolve_device(device, "--device")
    n = 1 << log_n
    moduli = hb.ntt_primes(60, n, limbs)
    rng = np.random.default_rng()
    x = np.stack([rng.integers(0, q, size=(batch, n), dtype=np.uint64) for q in moduli], axis=1)
    if where == "gpu":
        import cupy

        x = cupy.asarray(x)
    _sync(hb.ntt(x[:1], moduli, negacyclic=True))  # warm-up: tables (and kernels) built once
    start = time.perf_counter()
    y = hb.ntt(x, moduli, negacyclic=True)
    _sync(y)
    forward_s = time.perf_counter() - start
    ok = bool((hb.intt(y, moduli, negacyclic=True) == x).all())
    summary = {"device": where, "n": n, "limbs": limbs, "batch": batch, "elements": int(x.size),
               "forward_seconds": forward_s, "throughput_GBps": x.nbytes / forward_s / 1e9,
               "round_trip_exact": ok}
    if not ok:
        raise ArithmeticError("round trip mismatch", summary)
    return summary
