"""Kernel warm-up: run one small transform of each common kind on the current GPU, so that every kernel
those transforms launch is compiled once (NVRTC, kept in CuPy's on-disk kernel cache, or taken from a
prebuilt cubin) and loaded into this process before real work needs it.

A kernel's compiled form is keyed by its exact source, options and template instantiations, so the
warm-up goes through the public transforms, which launch exactly what later calls launch. Later
processes on the machine (workers included) then load kernels from the disk cache instead of compiling.
"""

from __future__ import annotations

import time

import numpy as np

from ..field import BABYBEAR, BLS12_377_FR, BLS12_381_FR, BN254_FR, GOLDILOCKS, ntt_primes

# Sizes and batch shapes the warm-up covers: the jobs' and benchmarks' common cases. A transform of
# another size may still launch kernels of its own (compiled on first use, then cached too).
WORD_LOG_NS = (8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 22, 24)
FIELD_LOG_NS = (10, 12, 14, 16, 18, 20, 22, 24)
ROWS = (1, 8)
WIDE_FIELDS = (BN254_FR, BLS12_381_FR, BLS12_377_FR)


def _word_cases():
    rns = tuple(ntt_primes(60, 2**17, 2))
    for modulus in (rns, GOLDILOCKS, BABYBEAR):
        qs = modulus if isinstance(modulus, tuple) else (modulus,)
        for log_n in WORD_LOG_NS:
            for negacyclic in (False, True):
                if any((q - 1) % ((2 if negacyclic else 1) << log_n) for q in qs):
                    continue
                yield modulus, log_n, negacyclic


def warm_kernels(*, log_ns=None, progress=None) -> dict:
    """Compile and load the common GPU kernels on the current CUDA device (a GPU worker calls this once
    at start-up). log_ns: the sizes (log2 n) to cover, default WORD_LOG_NS / FIELD_LOG_NS. progress:
    called with (done, total) after each case. Returns {"device", "cases", "seconds"}; on a machine
    without a GPU it does nothing ({"device": "cpu", "cases": 0, ...}: the CPU backend compiles nothing).
    """
    from ..device import gpu_available

    start = time.perf_counter()
    if not gpu_available():
        return {"device": "cpu", "cases": 0, "seconds": 0.0}
    import cupy

    from .api import intt, ntt, polymul
    from .fields import coset_ntt

    word = [c for c in _word_cases() if log_ns is None or c[1] in log_ns]
    wide = [(f, n) for f in WIDE_FIELDS for n in (FIELD_LOG_NS if log_ns is None else log_ns) if n <= f.two_adicity]
    total, done = len(word) * len(ROWS) + len(wide), 0
    for modulus, log_n, negacyclic in word:
        limbs = len(modulus) if isinstance(modulus, tuple) else None
        dtype = np.uint32 if modulus == BABYBEAR else np.uint64
        for rows in ROWS:
            shape = (rows, limbs, 1 << log_n) if limbs else (rows, 1 << log_n)
            x = cupy.ones(shape, dtype=dtype)
            y = ntt(x, modulus, negacyclic=negacyclic)
            intt(y, modulus, negacyclic=negacyclic)
            if rows == 1:
                polymul(x, x, modulus, negacyclic=negacyclic)
                if not limbs and not negacyclic:
                    coset_ntt(x, modulus)
                    coset_ntt(x, modulus, inverse=True)
            done += 1
            if progress is not None:
                progress(done, total)
    for field, log_n in wide:
        x = cupy.zeros((1 << log_n, field.limbs), dtype=np.uint64)
        x[:, 0] = 1
        intt(ntt(x, field), field)
        coset_ntt(x, field)
        coset_ntt(x, field, inverse=True)
        done += 1
        if progress is not None:
            progress(done, total)
    cupy.cuda.Device().synchronize()
    return {"device": f"gpu {cupy.cuda.Device().id}", "cases": total, "seconds": time.perf_counter() - start}


__all__ = ["warm_kernels"]
