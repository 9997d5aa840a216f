"""The integer-modulus transforms in natural order: validation, plan choice and one backend call."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..backend import WordNTT, get
from ..device import device_of
from .plan import NTTPlan, make_plan
from .recipes import (
    choose_algorithm,
    few_blocks_lanes,
    ordered_last_pass,
    paired_last_stage,
    post_one_table,
    small_batch_radix,
    small_batch_split,
)
from .validate import TransformArgs, _check_flag, check_entries, check_transform_args


def plan_for(args: TransformArgs, backend: WordNTT, batch: int = 1, dtype=np.uint64) -> NTTPlan:
    """The cached plan for validated arguments, resolving algorithm="auto" for this backend and the
    dtype it computes in, cutting GPU rows of a one-pass size into two merge passes where that is faster
    (with 8 elements per thread when they are few elements in all), ordering the twiddle table of a
    GPU merge's last pass for its lanes (and, for few large rows per limb or any number of rows of 2^22 points
    and more, reading half of its last two stages), taking a GPU merge inverse's post factor from one table up
    to 2^18 points, and fewer columns per block where a merge runs few blocks."""
    return _plan_choice(args, backend.name, batch * args.limbs, np.dtype(dtype).itemsize)


@lru_cache(maxsize=1024)  # every transform call asks: one lookup instead of the recipes' decisions
def _plan_choice(args: TransformArgs, device: str, rows: int, word_bytes: int) -> NTTPlan:
    log_n = args.n.bit_length() - 1
    algorithm = args.algorithm
    if algorithm == "auto":
        algorithm = choose_algorithm(device, log_n, rows, word_bytes)
    split = radix = lanes = None
    one_post = False
    if algorithm == "radix2" and device == "gpu":
        split = small_batch_split(log_n, rows, word_bytes)
        radix = small_batch_radix(log_n, rows, word_bytes)
        one_post = post_one_table(log_n, args.negacyclic)
        lanes = few_blocks_lanes(log_n, rows, word_bytes) if split is None else None
    choice = (args.n, args.moduli, args.roots, args.negacyclic, algorithm, split, radix)
    plan = make_plan(*choice, False, one_post, lanes)
    gpu_merge = algorithm == "radix2" and device == "gpu" and word_bytes == 8
    if gpu_merge and ordered_last_pass(plan.gpu_passes(word_bytes)):
        plan = make_plan(*choice, True, one_post, lanes, paired_last_stage(log_n, rows // args.limbs))
    return plan


def _lead_shape(shape, args: TransformArgs) -> tuple[int, ...]:
    return tuple(shape[:-2] if args.rns else shape[:-1])


def _as_batch(x, args: TransformArgs, backend: WordNTT):
    """x viewed (or copied) as (batch, limbs, n) in the dtype the backend computes in."""
    batch = math.prod(_lead_shape(x.shape, args))
    shape = (batch, args.limbs, args.n)
    x3 = x if x.shape == shape else x.reshape(shape)
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
    return _as_shape_of(y3, x)


def _as_shape_of(y, x):
    """y (a transform's (batch, limbs, n) result) in x's shape and dtype: no array call where they match
    (a reshape or astype costs a microsecond or two of host time per call)."""
    y = y if y.shape == x.shape else y.reshape(x.shape)
    return y if y.dtype == x.dtype else y.astype(x.dtype)


def ntt_spread(x, moduli, *, negacyclic=False):
    """The forward transform of each row of x (..., n) on every limb of `moduli`: (..., len(moduli), n),
    row (..., l, :) the transform over moduli[l] of the row mod moduli[l] (natural order, default roots).
    Entries must be below max(moduli) (not checked; callers hold residues of one of the moduli). Where the
    backend can, the rows are read once per limb unreduced instead of spread into a copy first."""
    moduli = list(moduli)
    backend = get(device_of(x, "x")).ntt
    shape = tuple(x.shape[:-1]) + (len(moduli), x.shape[-1])
    args = check_transform_args(shape, x.dtype, moduli, negacyclic=negacyclic)
    batch = math.prod(x.shape[:-1])
    x2 = x.reshape(batch, args.n)
    if x2.dtype != np.uint64:
        x2 = x2.astype(np.uint64)
    plan = plan_for(args, backend, batch, np.uint64)
    return backend.forward_spread(x2, plan).reshape(shape)


def intt_product(a, b, moduli, *, negacyclic=False):
    """The inverse transform of a * b mod each limb, for natural-order spectra a (..., len(moduli), n) and b
    of a's shape or (len(moduli), n) (its batch broadcast); entries reduced (not checked). Where the
    backend can, the product is taken in the transform's first pass instead of a pass of its own."""
    moduli = list(moduli)
    backend = get(device_of(a, "a")).ntt
    args = check_transform_args(a.shape, a.dtype, moduli, negacyclic=negacyclic, name="a")
    if b.shape not in (a.shape, (args.limbs, args.n)):
        raise ValueError(f"b must have a's shape {a.shape} or ({args.limbs}, {args.n}), got {b.shape}")
    backend.check_same_device(a, b)
    a3 = _as_batch(a, args, backend)
    b3 = b.reshape(-1, args.limbs, args.n).astype(a3.dtype, copy=False)
    plan = plan_for(args, backend, a3.shape[0], a3.dtype)
    return _as_shape_of(backend.inverse_product_natural(a3, b3, plan), a)
