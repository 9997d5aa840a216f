"""The integer-modulus transforms in natural order: validation, plan choice and one backend call."""

from __future__ import annotations

import math

import numpy as np

from ..backend import WordNTT, get
from ..device import device_of
from .plan import NTTPlan, make_plan
from .recipes import choose_algorithm, small_batch_split
from .validate import TransformArgs, _check_flag, check_entries, check_transform_args


def plan_for(args: TransformArgs, backend: WordNTT, batch: int = 1, dtype=np.uint64) -> NTTPlan:
    """The cached plan for validated arguments, resolving algorithm="auto" for this backend and the
    dtype it computes in, and cutting few GPU rows of a one-pass size into two merge passes."""
    log_n, rows, word_bytes = args.n.bit_length() - 1, batch * args.limbs, np.dtype(dtype).itemsize
    algorithm = args.algorithm
    if algorithm == "auto":
        algorithm = choose_algorithm(backend.name, log_n, rows, word_bytes)
    split = None
    if algorithm == "radix2" and backend.name == "gpu":
        split = small_batch_split(log_n, rows, word_bytes)
    return make_plan(args.n, args.moduli, args.roots, args.negacyclic, algorithm, split)


def _lead_shape(shape, args: TransformArgs) -> tuple[int, ...]:
    return tuple(shape[:-2] if args.rns else shape[:-1])


def _as_batch(x, args: TransformArgs, backend: WordNTT):
    """x viewed (or copied) as (batch, limbs, n) in the dtype the backend computes in."""
    batch = math.prod(_lead_shape(x.shape, args))
    x3 = x.reshape(batch, args.limbs, args.n)
    dtype = backend.work_dtype(x.dtype, args.moduli)
    return x3 if x3.dtype == dtype else x3.astype(dtype)


def _validated(x, modulus, negacyclic, algorithm, root, check, name="x"):
    backend = get(device_of(x, name)).ntt
    args = check_transform_args(
        x.shape, x.dtype, modulus, negacyclic=negacyclic, algorithm=algorithm, root=root, name=name
    )
    if _check_flag(check, "check"):
        check_entries(x, args, backend.xp, name)
    return backend, args


class _on_stream:
    """Run on `stream` (a cupy.cuda.Stream) for CuPy arrays; None keeps the current stream."""

    def __init__(self, stream, backend: WordNTT):
        if stream is not None and backend.name != "gpu":
            raise TypeError("stream= applies to CuPy arrays only")
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream.__enter__()

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream.__exit__(*exc)


def ntt_natural(
    x, modulus, *, negacyclic=False, inverse=False, algorithm="auto", root=None, inplace=False, check=True, stream=None
):
    """`ntt` over int moduli in natural order (the integer transforms of the backends)."""
    inverse = _check_flag(inverse, "inverse")
    inplace = _check_flag(inplace, "inplace")
    backend, args = _validated(x, modulus, negacyclic, algorithm, root, check)
    if inplace and not backend.writeable(x):
        raise ValueError("inplace=True needs a writeable x")
    with _on_stream(stream, backend):
        x3 = _as_batch(x, args, backend)
        plan = plan_for(args, backend, x3.shape[0], x3.dtype)
        out = x3 if inplace and x3.flags.c_contiguous and backend.shares_memory(x3, x) else None
        run = backend.inverse if inverse else backend.forward
        y3 = run(x3, plan, out=out)
    if inplace:
        if out is None:
            x[...] = y3.reshape(x.shape)
        return x
    return y3.reshape(x.shape).astype(x.dtype, copy=False)
