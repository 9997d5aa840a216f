"""Batched transforms over Dask arrays: one task per chunk, validated before anything is submitted.

A transform applied directly to the result of another (`dist.intt(dist.polymul(a, b, q), q)`, ...)
joins its task: the chain runs as one task per chunk, so its intermediates stay on the GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial

import dask.array as da
import numpy as np
from dask.array.core import broadcast_chunks

from ..device import array_module
from ..ntt.api import ntt as array_ntt
from ..ntt.api import polymul as array_polymul
from ..ntt.validate import TransformArgs, _check_flag, check_polymul_args, check_transform_args
from .arrays import as_batch, chunk_backend
from .provenance import chain as record_chain
from .worker import EntryCheck, check_device, run_task


def task_label(operation: str, negacyclic: bool, n: int) -> str:
    """Dashboard name of a task group, e.g. ntt_negacyclic_2^16 (Dask's key_split keeps a first
    word without dashes whole, so the size stays visible on the dashboard)."""
    return f"{operation}_{'negacyclic' if negacyclic else 'cyclic'}_2^{n.bit_length() - 1}"


@dataclass(frozen=True)
class _Transform:
    """The arguments of one batched transform, validated on the client; small to ship with a task."""

    modulus: int | tuple[int, ...]
    root: int | tuple[int, ...] | None  # None: the default root
    negacyclic: bool
    inverse: bool
    algorithm: str
    check: bool
    names = ("x",)

    def __call__(self, x):
        return array_ntt(
            x,
            self.modulus,
            negacyclic=self.negacyclic,
            inverse=self.inverse,
            algorithm=self.algorithm,
            root=self.root,
            check=self.check,
        )


@dataclass(frozen=True)
class _Polymul:
    modulus: int | tuple[int, ...]
    negacyclic: bool
    algorithm: str
    check: bool
    names = ("a", "b")

    def __call__(self, a, b):
        return array_polymul(a, b, self.modulus, negacyclic=self.negacyclic, algorithm=self.algorithm, check=self.check)


@dataclass(frozen=True)
class _Map:
    """A user function of the chunks' arrays (NumPy on CPU workers, CuPy on GPU workers)."""

    fn: object
    names: tuple = ("x",)
    modulus: object = None  # unknown: a transform after it checks its input
    check: bool = False

    def __call__(self, *arrays):
        return self.fn(*arrays)


@dataclass(frozen=True)
class _Chain:
    """Steps applied one after another to a chunk inside one task: the first takes the task's operands,
    each next one the previous result, so intermediates stay where the task computes (on its GPU).
    The entry check of the first step runs once, fused on the device (see worker.EntryCheck); a later
    step checks its input only when its moduli differ from the step before (else it is reduced already)."""

    steps: tuple

    def entry_check(self) -> EntryCheck | None:
        first = self.steps[0]
        if not first.check:
            return None
        moduli = first.modulus if isinstance(first.modulus, tuple) else (first.modulus,)
        return EntryCheck(moduli, isinstance(first.modulus, tuple), first.names)

    def unchecked(self) -> _Chain:
        steps = [replace(self.steps[0], check=False)]
        for before, step in zip(self.steps, self.steps[1:]):
            steps.append(replace(step, check=False) if step.modulus == before.modulus else step)
        return _Chain(tuple(steps))

    def __call__(self, *arrays):
        y = self.steps[0](*arrays)
        for step in self.steps[1:]:
            y = step(y)
        return y


STARTS_KEPT = 64  # irregular chunks: rows named in errors up to this many chunks (else just the chunk index)


@dataclass(frozen=True)
class _Job:
    """What every task of one lazy result runs, prepared once when its graph is built rather than in
    each task: the chain as it runs (its first step unchecked, the entry check covering it), the entry
    check, the device word, and the task group's name and chunk rows for error messages (a few
    numbers, as the job ships with every task: not a list as long as the batch)."""

    chain: _Chain
    check: EntryCheck | None
    device: str
    label: str
    step: int = 0  # rows per chunk along axis 0 when every chunk but the last has that many, else 0
    rows: int = 0  # length of axis 0
    starts: tuple[int, ...] = ()  # else the chunks' row offsets and the end of the last (a few chunks)

    @staticmethod
    def row_layout(chunks: tuple[int, ...]) -> dict:
        """step, rows and starts (the fields above) for chunk lengths `chunks` along axis 0."""
        if chunks and all(c == chunks[0] for c in chunks[:-1]) and chunks[-1] <= chunks[0]:
            return {"step": chunks[0], "rows": sum(chunks)}
        if len(chunks) <= STARTS_KEPT:
            return {"starts": tuple(np.cumsum((0,) + tuple(chunks)).tolist())}
        return {}

    def where(self, block_id) -> str:
        """'<label> chunk (i, ...) rows a:b' (for a failure: made only then)."""
        if not block_id:
            return self.label
        i, rows = block_id[0], ""
        if self.step:
            rows = f" rows {i * self.step}:{min((i + 1) * self.step, self.rows)}"
        elif i + 1 < len(self.starts):
            rows = f" rows {self.starts[i]}:{self.starts[i + 1]}"
        return f"{self.label} chunk {tuple(block_id)}{rows}"


def _chunk_task(*blocks, job, block_id=None):
    return run_task(job.chain, *blocks, device=job.device, where=partial(job.where, block_id), check=job.check)


FUSED = "_hebatch_fused"  # attribute of a result of ntt/intt/polymul: (operands, chain, device, label)


def _lazy(operands, step, device: str, label: str, meta, dtype) -> da.Array:
    """One task per chunk applying `step` to the operands' chunks. When the single operand is itself an
    unchanged result of this module (same device), the step joins that result's chain instead: one
    task per chunk for the whole chain, and its intermediates never leave the task.

    Tasks get their chunk index (block_id), not Dask's block_info: that one is a dictionary per task
    built on the client and shipped with the task, a cost per chunk that block_id does not have."""
    chain = _Chain((step,))
    fused = getattr(operands[0], FUSED, None) if len(operands) == 1 else None
    if fused is not None and fused[2] == device:
        operands, previous, _, before = fused
        chain, label = _Chain(previous.steps + (step,)), f"{before}_then_{label.split('_')[0]}"
    rows = tuple(broadcast_chunks(*(op.chunks for op in operands))[0]) if operands[0].ndim else ()
    job = _Job(chain.unchecked(), chain.entry_check(), device, label, **_Job.row_layout(rows))
    y = da.map_blocks(_chunk_task, *operands, job=job, dtype=dtype, meta=meta, token=label)
    if y.ndim and y.chunks[0] != rows:  # not expected: errors then name the chunk without its rows
        y = da.map_blocks(
            _chunk_task, *operands, job=replace(job, step=0, starts=()), dtype=dtype, meta=meta, token=label
        )
    setattr(y, FUSED, (tuple(operands), chain, device, label))
    return record_chain(y, chain.steps, operands)  # what y computes, for the outputs' records


def _checked_here(check: bool, args: TransformArgs, *arrays) -> bool:
    """The entry check of in-memory (NumPy or CuPy) operands, here, before anything is submitted: one
    pass over each, read once; returns whether the tasks still have to check (Dask operands)."""
    if not check:
        return False
    names = ("x",) if len(arrays) == 1 else ("a", "b")
    moduli = args.moduli
    entry = EntryCheck(tuple(moduli), args.rns, names)
    for name, x in zip(names, arrays):
        if not isinstance(x, da.Array):
            EntryCheck(entry.moduli, entry.rns, (name,)).host_check([x], array_module(x))
    return any(isinstance(x, da.Array) for x in arrays)


def _per_limb(values: tuple[int, ...], args: TransformArgs):
    """values (one per limb) in hb.ntt's argument form: a tuple for RNS input, else one int."""
    return values if args.rns else values[0]


def _whole_transform_axes(x: da.Array, args: TransformArgs, name: str) -> da.Array:
    """x with its transform axes (n, and limbs for RNS) in one chunk each; batch axes as they are."""
    tail = 2 if args.rns else 1
    if any(math.isnan(s) for s in x.shape[-tail:]):
        raise ValueError(f"{name} must have known sizes along its transform axes, got shape {x.shape}")
    axes = range(x.ndim - tail, x.ndim)
    if all(len(x.chunks[a]) == 1 for a in axes):
        return x
    return x.rechunk(dict.fromkeys(axes, -1))


def ntt(
    x, modulus, *, negacyclic=False, inverse=False, algorithm="auto", root=None, device="auto", check=True
) -> da.Array:
    """Lazy hb.ntt of every chunk of a batch: a Dask array of the same shape, chunks, dtype and type.

    x: Dask array (NumPy or CuPy chunks) or a NumPy/CuPy array (wrapped by `from_numpy`), shape
    (..., n) or (..., limbs, n) with the batch along the leading axes; the transform axes are put
    into single chunks if they are split. modulus, negacyclic, inverse, algorithm, root: as hb.ntt,
    checked here with hb.ntt's messages; entries >= modulus are found inside the tasks and raise
    there (check=False skips that pass over each chunk, for data known to be reduced). device: where
    NumPy chunks are transformed: "auto" (the worker's GPU if it has one), "gpu" or "cpu"; CuPy
    chunks stay on their GPU. Tasks are named like ntt_negacyclic_2^16.
    A NumPy or CuPy x is checked here, before anything is submitted (one pass); Dask chunks are
    checked in their tasks by one fused pass on the device. Applied directly to the result of
    ntt/intt/polymul, the transform joins that result's tasks (named like
    ntt_negacyclic_2^16_then_intt); computing both that result and this one runs the first step twice.
    """
    inverse = _check_flag(inverse, "inverse")
    check = _check_flag(check, "check")
    device = check_device(device)
    chunk_backend(x, "x")
    args = check_transform_args(x.shape, x.dtype, modulus, negacyclic=negacyclic, algorithm=algorithm, root=root)
    check = _checked_here(check, args, x)
    x = _whole_transform_axes(as_batch(x), args, "x")
    # A default root is left for the task's hb.ntt to derive: its validation of arguments seen before is
    # then a dictionary lookup, while a given root is checked again in every task (number theory per limb).
    roots = None if root is None else _per_limb(args.roots, args)
    op = _Transform(_per_limb(args.moduli, args), roots, args.negacyclic, inverse, args.algorithm, check)
    label = task_label("intt" if inverse else "ntt", args.negacyclic, args.n)
    return _lazy((x,), op, device, label, x._meta, x.dtype)


def intt(y, modulus, *, negacyclic=False, algorithm="auto", root=None, device="auto", check=True) -> da.Array:
    """Lazy exact inverse of `ntt` (scaled by n^-1): intt(ntt(x)) == x."""
    return ntt(
        y, modulus, negacyclic=negacyclic, inverse=True, algorithm=algorithm, root=root, device=device, check=check
    )


def polymul(a, b, modulus, *, negacyclic=True, algorithm="auto", device="auto", check=True) -> da.Array:
    """Lazy hb.polymul of two batches whose batch axes broadcast (b may be one polynomial for all).

    a, b: Dask, NumPy or CuPy arrays as for `ntt`, one dtype and one array type. The result is
    chunked like a (b's chunks are aligned to a's by Dask).
    """
    negacyclic = _check_flag(negacyclic, "negacyclic")
    check = _check_flag(check, "check")
    device = check_device(device)
    backend_a, backend_b = chunk_backend(a, "a"), chunk_backend(b, "b")
    if backend_a is not backend_b:
        raise TypeError(
            f"a and b must both be {backend_a.name} arrays (or Dask arrays of them), got "
            f"{type(a).__name__} and {type(b).__name__} of {backend_a.name} and {backend_b.name} chunks"
        )
    args, _, _ = check_polymul_args(
        a.shape, a.dtype, b.shape, b.dtype, modulus, negacyclic=negacyclic, algorithm=algorithm
    )
    check = _checked_here(check, args, a, b)
    a, b = _whole_transform_axes(as_batch(a), args, "a"), _whole_transform_axes(as_batch(b), args, "b")
    if a.ndim != b.ndim:  # one number of axes, so that broadcast axes line up for Dask
        a = a.reshape((1,) * (b.ndim - a.ndim) + a.shape) if a.ndim < b.ndim else a
        b = b.reshape((1,) * (a.ndim - b.ndim) + b.shape) if b.ndim < a.ndim else b
    aligned = {
        axis: a.chunks[axis]
        for axis in range(a.ndim)
        if a.shape[axis] == b.shape[axis] and a.chunks[axis] != b.chunks[axis]
    }
    if aligned:  # b chunked like a along the batch axes they share (Dask's map_blocks needs it)
        b = b.rechunk(aligned)
    op = _Polymul(_per_limb(args.moduli, args), args.negacyclic, args.algorithm, check)
    label = task_label("polymul", args.negacyclic, args.n)
    return _lazy((a, b), op, device, label, a._meta, a.dtype)


def map_chunks(fn, *arrays, name: str | None = None, device: str = "auto", dtype=None) -> da.Array:
    """Lazy fn(*chunks) on every batch chunk, inside one task that joins the ntt/intt/polymul calls
    applied directly before or after it (e.g. ntt -> a pointwise product -> intt as one task per chunk,
    its intermediates on the GPU).

    fn: a picklable function of arrays (CuPy arrays on a GPU worker, NumPy on a CPU one) returning
    one array with the first operand's batch length; it should call hb functions (which accept both).
    arrays: Dask, NumPy or CuPy arrays chunked alike along axis 0 (an operand with batch length 1
    broadcasts). device: as `ntt`. dtype: of the result (default: the first operand's). name: the
    task group's name (default map_<fn name>).
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if not arrays:
        raise ValueError("map_chunks needs at least one array")
    device = check_device(device)
    label = name or f"map_{getattr(fn, '__name__', 'fn')}".replace("<", "").replace(">", "")
    if not isinstance(label, str) or not label or "-" in label:
        raise ValueError(f"name must be a non-empty name without '-', got {name!r}")
    for i, a in enumerate(arrays):  # checked before anything is scattered
        chunk_backend(a, f"arrays[{i}]")
        if a.ndim < 1:
            raise ValueError(f"arrays[{i}] must have a batch axis: got a 0-d array")
        if i and a.shape[0] not in (arrays[0].shape[0], 1):
            raise ValueError(
                f"arrays[{i}] has batch length {a.shape[0]}, arrays[0] {arrays[0].shape[0]}: they "
                "must agree (or be 1, to broadcast)"
            )
    batches = [as_batch(a, f"arrays[{i}]") for i, a in enumerate(arrays)]
    first = batches[0]
    for i, b in enumerate(batches[1:], 1):
        if b.shape[0] == first.shape[0] and b.chunks[0] != first.chunks[0]:
            batches[i] = b.rechunk({0: first.chunks[0]})
    step = _Map(fn, tuple(f"arrays[{i}]" for i in range(len(batches))))
    dtype = np.dtype(dtype or first.dtype)
    return _lazy(tuple(batches), step, device, label, first._meta.astype(dtype), dtype)
