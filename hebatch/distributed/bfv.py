"""BFV computations over batches of ciphertexts spread across the cluster's workers.

The ciphertext data is a Dask array (batch, K, L, n) chunked along the batch axis; the evaluation
keys go to every worker once (scattered with broadcast) and each worker builds its BFV context
once per process, so a task only carries its chunk (the machinery is shared with BGV: schemes.py).
"""

from __future__ import annotations

import dask.array as da

from .. import bfv as scheme
from .schemes import checked_inputs, map_ciphertexts
from .schemes import worker_context as scheme_context


def worker_context(params: scheme.Params, backend: str = "auto") -> scheme.Context:
    """The BFV context of this worker for (params, backend), built once (kept by the worker's plugin)."""
    return scheme_context("bfv", params, backend)


def bfv_map(
    fn,
    ct_arrays,
    keys: scheme.Keys,
    params: scheme.Params,
    *,
    components: int | None = None,
    backend: str = "auto",
    name: str | None = None,
) -> da.Array:
    """Lazy fn(ctx, keys, ct, ...) over every batch chunk of encrypted data, on the cluster's workers.

    fn: a picklable function of (bfv.Context, bfv.Keys, *Ciphertext) returning a bfv.Ciphertext (it
    runs once per chunk on that chunk). ct_arrays: one Dask array (batch, K, L, n) of ciphertext data
    (a NumPy array or bfv.Ciphertext is chunked with dist.from_numpy), or a list of them chunked alike.
    keys: the keys from keygen; only the public part (public, relin, galois) is shipped, once per
    worker. params: the bfv.Params the data was made under. components: K of the result (default:
    that of the first input). backend: the Context backend on the workers. name: the task group
    name on the dashboard (default bfv_<fn name>).
    Returns the result's data as a Dask array (batch, components, L, n) chunked like the input.
    """
    arrays = checked_inputs("bfv", fn, ct_arrays, keys, params)
    for i, x in enumerate(arrays):
        if x.shape[2:] != (len(params.q), params.n):
            raise ValueError(
                f"ct_arrays[{i}]: shape {x.shape} does not fit these parameters (L = {len(params.q)}, n = {params.n})"
            )
    components = arrays[0].shape[1] if components is None else int(components)
    return map_ciphertexts("bfv", fn, arrays, keys, params, components, len(params.q), backend, name, False)


__all__ = ["bfv_map", "worker_context"]
