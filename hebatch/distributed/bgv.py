"""BGV computations over batches of ciphertexts spread across the cluster's workers (as bfv_map).

The ciphertext data is a Dask array (batch, K, l + 1, n) chunked along the batch axis, at one level of
the chain; the evaluation keys go to every worker once and each worker builds its BGV context once per
process (kept by the worker's plugin state, beside its BFV contexts), so a task only carries its chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

import dask.array as da
import numpy as np
from dask.base import tokenize

from .. import bgv as scheme
from .arrays import current_client, from_numpy
from .plugin import current_state
from .worker import describe_block, failures_named


def worker_context(params: scheme.Params, backend: str = "auto") -> scheme.Context:
    """The BGV context of this worker for (params, backend), built once and reused by every task: kept
    in the worker plugin's state (WorkerState.contexts, under its lock, beside the BFV contexts; the
    key names the scheme), dropped when the worker's state closes."""
    state = current_state()
    key = ("bgv", params.fingerprint, backend)
    with state.lock:
        if key not in state.contexts:
            state.contexts[key] = scheme.Context(params, backend=backend)
        return state.contexts[key]


@dataclass(frozen=True)
class _Payload:
    """What every worker needs once: parameters, backend name and the public evaluation keys."""

    params: scheme.Params
    keys: scheme.Keys
    backend: str


def _bgv_task(*blocks, fn, payload, label, components, limbs, block_info=None):
    if not isinstance(payload, _Payload):  # the scheduler hands over the scattered value
        raise TypeError(f"{label}: the key payload did not arrive (got {type(payload).__name__})")
    state = current_state()
    ctx = worker_context(payload.params, payload.backend)
    fingerprint, key_id = payload.params.fingerprint, payload.keys.key_id
    cts = [scheme.Ciphertext(ctx.ops.asarray(b), fingerprint, key_id) for b in blocks]
    with failures_named(describe_block(label, block_info)), state.phase(label):
        out = fn(ctx, payload.keys, *cts)
    if not isinstance(out, scheme.Ciphertext):
        raise TypeError(f"{label}: fn must return a bgv.Ciphertext, got {type(out).__name__}")
    if out.data.shape[-3:-1] != (components, limbs):
        raise ValueError(
            f"{label}: fn returned {out.data.shape[-3]} components at level {out.level}; "
            f"bgv_map was told components={components}, level={limbs - 1}"
        )
    return ctx.ops.to_host(out.data)


def _as_dask(x, name):
    if isinstance(x, scheme.Ciphertext):
        x = x.data
    if isinstance(x, np.ndarray):
        x = from_numpy(x)
    if not isinstance(x, da.Array):
        raise TypeError(
            f"{name} must be a Dask or NumPy array of ciphertext data, or a bgv.Ciphertext, got {type(x).__name__}"
        )
    if x.ndim != 4 or x.dtype != np.uint64:
        raise ValueError(f"{name} must be uint64 of shape (batch, K, l + 1, n), got {x.dtype} {x.shape}")
    if any(len(c) != 1 for c in x.chunks[1:]):
        x = x.rechunk({1: -1, 2: -1, 3: -1})
    return x


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
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if not isinstance(params, scheme.Params):
        raise TypeError(f"params must be a bgv.Params, got {type(params).__name__}")
    if not isinstance(keys, scheme.Keys):
        raise TypeError(f"keys must be bgv.Keys (from Context.keygen), got {type(keys).__name__}")
    if keys.fingerprint != params.fingerprint:
        raise ValueError(
            f"keys were made under parameters {keys.fingerprint}, not these parameters {params.fingerprint}"
        )
    items = list(ct_arrays) if isinstance(ct_arrays, (list, tuple)) else [ct_arrays]
    if not items:
        raise ValueError("ct_arrays: give at least one array of ciphertext data")
    for item in items:
        if isinstance(item, scheme.Ciphertext) and (
            item.fingerprint != params.fingerprint or item.key_id != keys.key_id
        ):
            raise ValueError(
                f"ct_arrays: a ciphertext of parameters {item.fingerprint} and key {item.key_id} "
                f"does not match parameters {params.fingerprint} and key {keys.key_id}"
            )
    arrays = [_as_dask(x, f"ct_arrays[{i}]") for i, x in enumerate(items)]
    first = arrays[0]
    for i, x in enumerate(arrays):
        if x.shape[-1] != params.n or not 1 <= x.shape[2] <= len(params.q):
            raise ValueError(
                f"ct_arrays[{i}]: shape {x.shape} does not fit these parameters (1 .. {len(params.q)} "
                f"limbs, n = {params.n})"
            )
        if x.shape[0] != first.shape[0]:
            raise ValueError(f"ct_arrays[{i}] has batch {x.shape[0]}, ct_arrays[0] {first.shape[0]}: they must agree")
        if x.chunks[0] != first.chunks[0]:
            arrays[i] = x.rechunk({0: first.chunks[0]})
    components = first.shape[1] if components is None else int(components)
    limbs = first.shape[2] if level is None else int(level) + 1
    if components not in (2, 3) or not 1 <= limbs <= len(params.q):
        raise ValueError(
            f"components must be 2 or 3 and level from 0 to {len(params.q) - 1}, got {components}, {limbs - 1}"
        )
    label = name or f"bgv_{getattr(fn, '__name__', 'map')}".replace("<", "").replace(">", "")
    payload = _Payload(params, keys.public_keys(), backend)
    client = current_client()
    shipped = client.scatter(payload, broadcast=True, hash=False) if client is not None else payload
    chunks = (first.chunks[0], (components,), (limbs,), (params.n,))
    return da.map_blocks(
        _bgv_task,
        *arrays,
        fn=fn,
        payload=shipped,
        label=label,
        components=components,
        limbs=limbs,
        dtype=np.uint64,
        chunks=chunks,
        meta=np.empty((0, 0, 0, 0), dtype=np.uint64),
        name=f"{label}-{tokenize(fn, params.fingerprint, keys.key_id, components, limbs, *arrays)}",
    )


__all__ = ["bgv_map", "worker_context"]
