"""BGV computations over batches of ciphertexts spread across the cluster's workers (as bfv_map).

The ciphertext data is a Dask array (batch, K, l + 1, n) chunked along the batch axis, at one level of
the chain; the evaluation keys go to every worker once and each worker builds its BGV context once per
process (kept by the worker's plugin state), so a task only carries its chunk (the machinery is shared
with BFV: schemes.py).
"""

from __future__ import annotations

import dask.array as da

from .. import bgv as scheme
from .schemes import checked_inputs, map_ciphertexts
from .schemes import worker_context as scheme_context


def worker_context(params: scheme.Params, backend: str = "auto") -> scheme.Context:
    """The BGV context of this worker for (params, backend), built once (kept by the worker's plugin)."""
    return scheme_context("bgv", params, backend)


def bgv_map(
    fn,
    ct_arrays,
    keys: scheme.Keys,
    params: scheme.Params,
    *,
    components: int | None = None,
    level: int | None = None,
    backend: str = "auto",
    name: str | None = None,
) -> da.Array:
    """Lazy fn(ctx, keys, ct, ...) over every batch chunk of BGV ciphertext data, on the cluster's workers.

    fn: a picklable function of (bgv.Context, bgv.Keys, *Ciphertext) returning a bgv.Ciphertext. ct_arrays:
    one Dask array (batch, K, l + 1, n) of ciphertext data (a NumPy array or bgv.Ciphertext is chunked with
    dist.from_numpy), or a list of them chunked alike; inputs may sit at different levels. keys: from
    keygen; only the public part is shipped, once per worker. params: the bgv.Params of the data.
    components, level: K and the chain level of the result (defaults: those of the first input; a
    multiply with automatic switching gives one level less). backend: the Context backend on the
    workers. name: the task group name (default bgv_<fn name>).
    Returns the result's data as a Dask array (batch, components, level + 1, n) chunked like the input.
    """
    arrays = checked_inputs("bgv", fn, ct_arrays, keys, params)
    for i, x in enumerate(arrays):
        if x.shape[-1] != params.n or not 1 <= x.shape[2] <= len(params.q):
            raise ValueError(
                f"ct_arrays[{i}]: shape {x.shape} does not fit these parameters (1 .. {len(params.q)} "
                f"limbs, n = {params.n})"
            )
    first = arrays[0]
    components = first.shape[1] if components is None else int(components)
    limbs = first.shape[2] if level is None else int(level) + 1
    if components not in (2, 3) or not 1 <= limbs <= len(params.q):
        raise ValueError(
            f"components must be 2 or 3 and level from 0 to {len(params.q) - 1}, got {components}, {limbs - 1}"
        )
    return map_ciphertexts("bgv", fn, arrays, keys, params, components, limbs, backend, name, True)


__all__ = ["bgv_map", "worker_context"]
