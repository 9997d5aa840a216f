"""BFV computations over batches of ciphertexts spread across the cluster's workers.

The ciphertext data is a Dask array (batch, K, L, n) chunked along the batch axis; the evaluation
keys go to every worker once (scattered with broadcast) and each worker builds its BFV context
once per process, so a task only carries its chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

import dask.array as da
import numpy as np
from dask.base import tokenize

from .. import bfv as scheme
from .arrays import current_client, from_numpy
from .plugin import current_state
from .worker import describe_block, failures_named


def worker_context(params: scheme.Params, backend: str = "auto") -> scheme.Context:
    """The BFV context of this worker for (params, backend), built once (kept by the worker's plugin)."""
    return current_state().bfv_context(params, backend)


@dataclass(frozen=True)
class _Payload:
    """What every worker needs once: parameters, backend name and the public evaluation keys."""

    params: scheme.Params
    keys: scheme.Keys
    backend: str


def _bfv_task(*blocks, fn, payload, label, block_info=None):
    if not isinstance(payload, _Payload):  # the scheduler hands over the scattered value
        raise TypeError(f"{label}: the key payload did not arrive (got {type(payload).__name__})")
    state = current_state()
    ctx = state.bfv_context(payload.params, payload.backend)
    fingerprint, key_id = payload.params.fingerprint, payload.keys.key_id
    cts = [scheme.Ciphertext(ctx.ops.asarray(b), fingerprint, key_id) for b in blocks]
    with failures_named(describe_block(label, block_info)), state.phase(label):
        out = fn(ctx, payload.keys, *cts)
    if not isinstance(out, scheme.Ciphertext):
        raise TypeError(f"{label}: fn must return a bfv.Ciphertext, got {type(out).__name__}")
    return ctx.ops.to_host(out.data)


def _as_dask(x, name):
    if isinstance(x, scheme.Ciphertext):
        x = x.data
    if isinstance(x, np.ndarray):
        x = from_numpy(x)
    if not isinstance(x, da.Array):
        raise TypeError(
            f"{name} must be a Dask or NumPy array of ciphertext data, or a bfv.Ciphertext, got {type(x).__name__}"
        )
    if x.ndim != 4 or x.dtype != np.uint64:
        raise ValueError(f"{name} must be uint64 of shape (batch, K, L, n), got {x.dtype} {x.shape}")
    if any(len(c) != 1 for c in x.chunks[1:]):
        x = x.rechunk({1: -1, 2: -1, 3: -1})
    return x


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
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if not isinstance(params, scheme.Params):
        raise TypeError(f"params must be a bfv.Params, got {type(params).__name__}")
    if not isinstance(keys, scheme.Keys):
        raise TypeError(f"keys must be bfv.Keys (from Context.keygen), got {type(keys).__name__}")
    if keys.fingerprint != params.fingerprint:
        raise ValueError(
            f"keys were made under parameters {keys.fingerprint}, not these parameters {params.fingerprint}"
        )
    for item in ct_arrays if isinstance(ct_arrays, (list, tuple)) else [ct_arrays]:
        if isinstance(item, scheme.Ciphertext) and (
            item.fingerprint != params.fingerprint or item.key_id != keys.key_id
        ):
            raise ValueError(
                f"ct_arrays: a ciphertext of parameters {item.fingerprint} and key {item.key_id} "
                f"does not match parameters {params.fingerprint} and key {keys.key_id}"
            )
    arrays = [
        _as_dask(x, f"ct_arrays[{i}]")
        for i, x in enumerate(ct_arrays if isinstance(ct_arrays, (list, tuple)) else [ct_arrays])
    ]
    first = arrays[0]
    _, _, limbs, n = first.shape
    if (limbs, n) != (len(params.q), params.n):
        raise ValueError(
            f"ct_arrays: shape {first.shape} does not fit these parameters (L = {len(params.q)}, n = {params.n})"
        )
    for i, x in enumerate(arrays[1:], 1):
        if x.shape[0] != first.shape[0] or x.shape[2:] != first.shape[2:]:
            raise ValueError(
                f"ct_arrays[{i}] has shape {x.shape}, ct_arrays[0] {first.shape}: batch, L and n must agree"
            )
        if x.chunks[0] != first.chunks[0]:
            arrays[i] = x.rechunk({0: first.chunks[0]})
    components = first.shape[1] if components is None else int(components)
    label = name or f"bfv_{getattr(fn, '__name__', 'map')}".replace("<", "").replace(">", "")
    payload = _Payload(params, keys.public_keys(), backend)
    client = current_client()
    shipped = client.scatter(payload, broadcast=True, hash=False) if client is not None else payload
    chunks = (first.chunks[0], (components,), (limbs,), (n,))
    return da.map_blocks(
        _bfv_task,
        *arrays,
        fn=fn,
        payload=shipped,
        label=label,
        dtype=np.uint64,
        chunks=chunks,
        meta=np.empty((0, 0, 0, 0), dtype=np.uint64),
        name=f"{label}-{tokenize(fn, payload.params.fingerprint, payload.keys.key_id, *arrays)}",
    )


__all__ = ["bfv_map", "worker_context"]
