"""What bfv_map and bgv_map share: the key payload every worker receives once, the chunk task that
runs a user function on a worker's scheme context, and the checks of the ciphertext inputs.

The ciphertext data is a Dask array (batch, K, limbs, n) chunked along the batch axis; the evaluation
keys are scattered to every worker once (broadcast) and each worker builds its scheme context once per
process (kept by the worker plugin's state), so a task only carries its chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

import dask.array as da
import numpy as np
from dask.base import tokenize

from .arrays import current_client, from_numpy
from .plugin import current_state, scheme_module
from .worker import describe_block, failures_named


def worker_context(scheme: str, params, backend: str = "auto"):
    """The scheme context of this worker for (params, backend), built once (kept by its plugin state)."""
    return current_state().scheme_context(scheme, params, backend)


@dataclass(frozen=True)
class Payload:
    """What every worker needs once: the scheme's name, parameters, backend and public evaluation keys."""

    scheme: str
    params: object
    keys: object
    backend: str


def scheme_task(*blocks, fn, payload, label, result=None, block_info=None):
    """fn(ctx, keys, *ciphertexts) on one chunk; result: the (components, limbs) the caller announced."""
    if not isinstance(payload, Payload):  # the scheduler hands over the scattered value
        raise TypeError(f"{label}: the key payload did not arrive (got {type(payload).__name__})")
    state = current_state()
    module = scheme_module(payload.scheme)
    ctx = state.scheme_context(payload.scheme, payload.params, payload.backend)
    fingerprint, key_id = payload.params.fingerprint, payload.keys.key_id
    cts = [module.Ciphertext(ctx.ops.asarray(b), fingerprint, key_id) for b in blocks]
    with failures_named(describe_block(label, block_info)), state.phase(label):
        out = fn(ctx, payload.keys, *cts)
    if not isinstance(out, module.Ciphertext):
        raise TypeError(f"{label}: fn must return a {payload.scheme}.Ciphertext, got {type(out).__name__}")
    if result is not None and tuple(out.data.shape[-3:-1]) != tuple(result):
        raise ValueError(
            f"{label}: fn returned {out.data.shape[-3]} components of {out.data.shape[-2]} limbs; the map was "
            f"told {result[0]} components of {result[1]} limbs"
        )
    return ctx.ops.to_host(out.data)


def checked_inputs(scheme: str, fn, ct_arrays, keys, params) -> list[da.Array]:
    """The inputs of a map as Dask arrays (batch, K, limbs, n) whole along every axis but the batch,
    after the checks every scheme shares (fn, types, parameters and key of tagged ciphertexts, dtype,
    rank, batch)."""
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    module = scheme_module(scheme)
    if not isinstance(params, module.Params):
        raise TypeError(f"params must be a {scheme}.Params, got {type(params).__name__}")
    if not isinstance(keys, module.Keys):
        raise TypeError(f"keys must be {scheme}.Keys (from Context.keygen), got {type(keys).__name__}")
    if keys.fingerprint != params.fingerprint:
        raise ValueError(
            f"keys were made under parameters {keys.fingerprint}, not these parameters {params.fingerprint}"
        )
    items = list(ct_arrays) if isinstance(ct_arrays, (list, tuple)) else [ct_arrays]
    if not items:
        raise ValueError("ct_arrays: give at least one array of ciphertext data")
    arrays = []
    for i, x in enumerate(items):
        name = f"ct_arrays[{i}]"
        if isinstance(x, module.Ciphertext):
            if x.fingerprint != params.fingerprint or x.key_id != keys.key_id:
                raise ValueError(
                    f"{name}: a ciphertext of parameters {x.fingerprint} and key {x.key_id} "
                    f"does not match parameters {params.fingerprint} and key {keys.key_id}"
                )
            x = x.data
        if isinstance(x, np.ndarray):
            x = from_numpy(x)
        if not isinstance(x, da.Array):
            raise TypeError(
                f"{name} must be a Dask or NumPy array of ciphertext data, or a {scheme}.Ciphertext, "
                f"got {type(x).__name__}"
            )
        if x.ndim != 4 or x.dtype != np.uint64:
            raise ValueError(f"{name} must be uint64 of shape (batch, K, limbs, n), got {x.dtype} {x.shape}")
        if any(len(c) != 1 for c in x.chunks[1:]):
            x = x.rechunk({1: -1, 2: -1, 3: -1})
        arrays.append(x)
    for i, x in enumerate(arrays):
        if x.shape[0] != arrays[0].shape[0]:
            raise ValueError(
                f"ct_arrays[{i}] has batch {x.shape[0]}, ct_arrays[0] {arrays[0].shape[0]}: they must agree"
            )
        if x.chunks[0] != arrays[0].chunks[0]:
            arrays[i] = x.rechunk({0: arrays[0].chunks[0]})
    return arrays


def map_ciphertexts(scheme: str, fn, arrays, keys, params, components: int, limbs: int, backend, name, check_result):
    """The lazy map of fn over checked inputs (checked_inputs): a Dask array (batch, components,
    limbs, n) chunked like the first input; check_result: compare what fn returns with (components, limbs)."""
    label = name or f"{scheme}_{getattr(fn, '__name__', 'map')}".replace("<", "").replace(">", "")
    payload = Payload(scheme, params, keys.public_keys(), backend)
    client = current_client()
    shipped = client.scatter(payload, broadcast=True, hash=False) if client is not None else payload
    first = arrays[0]
    return da.map_blocks(
        scheme_task,
        *arrays,
        fn=fn,
        payload=shipped,
        label=label,
        result=(components, limbs) if check_result else None,
        dtype=np.uint64,
        chunks=(first.chunks[0], (components,), (limbs,), (params.n,)),
        meta=np.empty((0, 0, 0, 0), dtype=np.uint64),
        name=f"{label}-{tokenize(fn, params.fingerprint, keys.key_id, components, limbs, *arrays)}",
    )
