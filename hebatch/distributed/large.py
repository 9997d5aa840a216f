"""One transform of 2^16 .. 2^28 points spread over workers: the 4-step NTT of `hebatch.ntt.blocks`.

Worker i holds block i of every stage: the columns c_i of A (n1 x n2 view of x), after the column
step the same rows of Y[j2][k1], and after the all-to-all transpose rows r_i of Z[k1][j2], which
the row step turns into D[k1][k2]. The gather writes D transposed into the natural-order result;
a distributed result takes a second all-to-all instead. The transposes are Dask's task-based
rechunk ("tasks") or explicit split/concatenate tasks pinned to the source and destination workers
("direct"); Dask's p2p rechunk is not used because it fails on CuPy chunks.
"""

from __future__ import annotations

import math
import time
import uuid
from functools import partial

import dask.array as da
import numpy as np

from ..backend import get
from ..device import device_of
from ..field import PrimeField
from ..ntt.blocks import column_block, four_step_spec, row_block
from ..ntt.validate import _check_flag, check_field_args, check_transform_args
from .arrays import current_client
from .batch import task_label
from .cluster import wait_for_workers
from .jobs import wait_for
from .worker import check_device, is_device_array, run_task, to_host

TRANSPOSES = ("tasks", "direct")
MORE_WORKERS_TIMEOUT = 10.0  # seconds to wait for more workers than have registered
U64 = np.uint64


def split_bounds(total: int, parts: int) -> list[tuple[int, int]]:
    """[start, stop) of `parts` blocks of 0..total, sizes differing by at most one."""
    edges = [total * i // parts for i in range(parts + 1)]
    return list(zip(edges[:-1], edges[1:]))


# -- tasks (module level, so that they ship by reference) ------------------------------------------


def _columns_task(block, spec, col0, device, where):
    return run_task(partial(column_block, spec=spec, col0=col0), block, device=device, where=where, keep_on_device=True)


def _transposed_columns(block, start, stop):
    return get(block).ntt.xp.ascontiguousarray(block[:, start:stop].swapaxes(0, 1))


def _split_task(block, start, stop, device, where):
    return run_task(
        partial(_transposed_columns, start=start, stop=stop), block, device=device, where=where, keep_on_device=True
    )


def _concat_columns(*pieces):
    return get(pieces[0]).ntt.xp.concatenate(pieces, axis=1)


def _concat_task(*pieces, device, where):
    return run_task(_concat_columns, *pieces, device=device, where=where, keep_on_device=True)


def _rows(block, spec, transposed):
    d = row_block(block, spec)
    return get(d).ntt.xp.ascontiguousarray(d.swapaxes(0, 1)) if transposed else d


def _rows_task(block, spec, transposed, dtype, host, device, where):
    y = run_task(
        partial(_rows, spec=spec, transposed=transposed), block, device=device, where=where, keep_on_device=True
    )
    return _finish(y, dtype, host)


def _finish(block, dtype, host):
    y = block.astype(dtype, copy=False)
    return to_host(y) if host else y


class LargeNTT:
    """One NTT of n points as a 4-step transform over k workers, stage by stage.

    `ntt_large` runs every stage; `run(timings=...)` waits after each stage and records its time,
    for benchmarks. Arguments as `ntt_large`; everything is validated here, before any submission.
    """

    def __init__(
        self,
        x,
        modulus,
        *,
        workers=None,
        negacyclic=False,
        inverse=False,
        root=None,
        transpose="tasks",
        device="auto",
        client=None,
    ):
        self.inverse = _check_flag(inverse, "inverse")
        self.device = check_device(device)
        if not isinstance(transpose, str) or transpose not in TRANSPOSES:
            raise ValueError(f"transpose must be one of {', '.join(map(repr, TRANSPOSES))}, got {transpose!r}")
        self.transpose_method = transpose
        self.is_dask = isinstance(x, da.Array)
        if not self.is_dask:
            device_of(x, "x")
        field = modulus if isinstance(modulus, PrimeField) and modulus.limbs > 1 else None
        self.tail = () if field is None else (field.limbs,)
        if x.ndim != 1 + len(self.tail):
            what = "1-D" if field is None else f"shape (n, {field.limbs}) over {field.name}"
            raise ValueError(
                f"x must be one vector of n points ({what}), got shape {x.shape}; "
                "batches of transforms go through dist.ntt"
            )
        if math.isnan(x.shape[0]):
            raise ValueError("x must have a known length")
        if field is not None:
            args = check_field_args(x.shape, x.dtype, field, negacyclic=negacyclic, root=root)
            n, ring, root_used = args.n, field, args.root
        else:
            one_word = modulus if isinstance(modulus, PrimeField) else None  # Goldilocks, BabyBear fields
            args = check_transform_args(
                x.shape, x.dtype, modulus if one_word is None else one_word.p, negacyclic=negacyclic, root=root
            )
            n, ring, root_used = args.n, args.moduli[0], args.roots[0]
            if one_word is not None and root is None:  # the field's generator fixes the roots
                root_used = one_word.root_of_unity(2 * n if args.negacyclic else n)
        if n < 4:
            raise ValueError(f"the transform size n must be at least 4 for a 4-step split, got {n}")
        self.client = client or current_client()
        if self.client is None:
            raise ValueError("ntt_large needs a distributed client: call it inside `with dist.cluster():`")
        self.workers = self._pick_workers(workers)
        self.spec = four_step_spec(n, ring, root_used, negacyclic=args.negacyclic, inverse=self.inverse)
        k, n1, n2 = len(self.workers), self.spec.n1, self.spec.n2
        if k > min(n1, n2):
            raise ValueError(
                f"workers={k} is more than the {min(n1, n2)} blocks a transform of n={n} ({n1} x {n2}) splits into"
            )
        self.x, self.dtype = x, np.dtype(x.dtype)
        self.host = not is_device_array(x._meta if self.is_dask else x)
        self.col_bounds = split_bounds(n2, k)  # columns of A, rows of Y
        self.row_bounds = split_bounds(n1, k)  # rows of Z and D
        self.label = task_label("intt_large" if self.inverse else "ntt_large", args.negacyclic, n)
        self.token = uuid.uuid4().hex

    def _pick_workers(self, workers) -> list[str]:
        if isinstance(workers, int) and not isinstance(workers, bool) and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        available = sorted(wait_for_workers(self.client, 1))
        spec = getattr(getattr(self.client, "cluster", None), "worker_spec", None)  # a cluster of this process
        complete = spec is not None and len(available) >= len(spec)
        if isinstance(workers, int) and not isinstance(workers, bool) and workers > len(available) and not complete:
            try:  # workers still registering (a cluster just started elsewhere) get a short while
                available = sorted(wait_for_workers(self.client, workers, MORE_WORKERS_TIMEOUT))
            except RuntimeError:
                pass
        if workers is None:
            return available
        if isinstance(workers, int) and not isinstance(workers, bool):
            if not 1 <= workers <= len(available):
                raise ValueError(
                    f"workers must be between 1 and the {len(available)} workers of the cluster, got {workers}"
                )
            return available[:workers]
        if isinstance(workers, str):
            workers = [workers]
        chosen = list(workers)
        unknown = [w for w in chosen if w not in available]
        if not chosen or unknown or len(set(chosen)) != len(chosen):
            raise ValueError(
                f"workers must be an int or distinct worker addresses of the cluster "
                f"({', '.join(available)}), got {workers!r}"
            )
        return chosen

    def _key(self, stage, *index):
        return (f"{self.label}_{stage}-{self.token}",) + index

    # -- stages: each takes and returns one future per worker ------------------------------------
    def distribute(self):
        """Column blocks A[:, c_i] (n1 x len c_i) on worker i."""
        n1, n2 = self.spec.n1, self.spec.n2
        if self.is_dask:
            lengths = tuple(b - a for a, b in self.col_bounds)
            a = self.x.reshape((n1, n2) + self.tail).rechunk(
                ((n1,), lengths) + tuple((t,) for t in self.tail), method="tasks"
            )
            return self._futures(self.client.persist(a))
        matrix = self.x.reshape((n1, n2) + self.tail)
        xp = get(self.x).ntt.xp
        return [
            self.client.scatter(xp.ascontiguousarray(matrix[:, a:b]), workers=[w], hash=False)
            for (a, b), w in zip(self.col_bounds, self.workers)
        ]

    def columns(self, blocks):
        """Length-n1 transforms and twiddles: rows c_i of Y[j2][k1] on worker i."""
        return [
            self.client.submit(
                _columns_task,
                block,
                self.spec,
                a,
                self.device,
                f"{self.label} columns {a}:{b}",
                key=self._key("columns", i),
                workers=[w],
            )
            for i, (block, (a, b), w) in enumerate(zip(blocks, self.col_bounds, self.workers))
        ]

    def transpose(self, blocks, in_bounds, out_bounds, stage="transpose"):
        """The all-to-all: row blocks (in_bounds) of an N x m matrix -> row blocks (out_bounds) of its transpose."""
        if self.transpose_method == "direct":
            return self._transpose_direct(blocks, out_bounds, stage)
        m, total = out_bounds[-1][1], in_bounds[-1][1]
        meta = np.empty((0, 0) + tuple(0 for _ in self.tail), dtype=U64)
        parts = [
            da.from_delayed(b, shape=(hi - lo, m) + self.tail, dtype=U64, meta=meta)
            for b, (lo, hi) in zip(blocks, in_bounds)
        ]
        lengths = tuple(hi - lo for lo, hi in out_bounds)
        z = (
            da.concatenate(parts, axis=0)
            .swapaxes(0, 1)
            .rechunk((lengths, (total,)) + tuple((t,) for t in self.tail), method="tasks")
        )
        return self._futures(self.client.persist(z))

    def _transpose_direct(self, blocks, out_bounds, stage):
        pieces = [
            [
                self.client.submit(
                    _split_task,
                    block,
                    lo,
                    hi,
                    self.device,
                    f"{self.label} {stage} split",
                    key=self._key(f"{stage}_split", i, k),
                    workers=[self.workers[i]],
                )
                for k, (lo, hi) in enumerate(out_bounds)
            ]
            for i, block in enumerate(blocks)
        ]
        return [
            self.client.submit(
                _concat_task,
                *[row[k] for row in pieces],
                device=self.device,
                where=f"{self.label} {stage} concat",
                key=self._key(f"{stage}_concat", k),
                workers=[w],
            )
            for k, w in enumerate(self.workers)
        ]

    def rows(self, blocks, *, transposed: bool, finish: bool):
        """Length-n2 transforms: rows r_k of D[k1][k2], or (transposed) columns r_k of D^T; finish: in
        x's dtype and array type (else uint64, wherever the worker keeps it)."""
        dtype = self.dtype if finish else U64
        host = self.host and finish
        return [
            self.client.submit(
                _rows_task,
                block,
                self.spec,
                transposed,
                dtype,
                host,
                self.device,
                f"{self.label} rows {a}:{b}",
                key=self._key("rows", k),
                workers=[w],
            )
            for k, (block, (a, b), w) in enumerate(zip(blocks, self.row_bounds, self.workers))
        ]

    def gather(self, pieces):
        """The result on the client: piece k holds the columns r_k of X viewed as (n2, n1)."""
        n1, n2 = self.spec.n1, self.spec.n2
        parts = self.client.gather(pieces)
        if self.host:
            out = np.empty((n2, n1) + self.tail, dtype=self.dtype)
        else:
            import cupy

            out = cupy.empty((n2, n1) + self.tail, dtype=self.dtype)
        for (a, b), part in zip(self.row_bounds, parts):
            out[:, a:b] = part
        return out.reshape((self.spec.n,) + self.tail)

    def as_dask(self, blocks):
        """The result as a Dask array: block k holds rows c_k of X viewed as (n2, n1), contiguous in X."""
        finished = [
            self.client.submit(_finish, b, self.dtype, self.host, key=self._key("finish", k), workers=[w])
            for k, (b, w) in enumerate(zip(blocks, self.workers))
        ]
        meta = self.x._meta if self.is_dask else self.x[:0]
        empty = meta[:0].reshape((0, 0) + tuple(0 for _ in self.tail))
        parts = [
            da.from_delayed(f, shape=(hi - lo, self.spec.n1) + self.tail, dtype=self.dtype, meta=empty)
            for f, (lo, hi) in zip(finished, self.col_bounds)
        ]
        return da.concatenate(parts, axis=0).reshape((self.spec.n,) + self.tail)

    def run(self, gather: bool = True, timings: dict | None = None):
        """All stages. timings: a dict to receive the seconds of each stage (waits after each one)."""
        gather = _check_flag(gather, "gather")

        def stage(name, step):
            start = time.perf_counter()
            result = step()
            if timings is not None:
                wait_for(result)
                timings[name] = timings.get(name, 0.0) + time.perf_counter() - start
            return result

        blocks = stage("distribute", self.distribute)
        blocks = stage("columns", lambda: self.columns(blocks))
        blocks = stage("transpose", lambda: self.transpose(blocks, self.col_bounds, self.row_bounds))
        if gather:
            blocks = stage("rows", lambda: self.rows(blocks, transposed=True, finish=True))
            start = time.perf_counter()
            result = self.gather(blocks)
            if timings is not None:
                timings["gather"] = time.perf_counter() - start
            return result
        blocks = stage("rows", lambda: self.rows(blocks, transposed=False, finish=False))
        blocks = stage(
            "transpose_out", lambda: self.transpose(blocks, self.row_bounds, self.col_bounds, "transpose_out")
        )
        return self.as_dask(blocks)

    def _futures(self, persisted):
        from distributed import futures_of

        by_key = {f.key: f for f in futures_of(persisted)}
        return [by_key[key] for key in _flat_keys(persisted.__dask_keys__())]


def _flat_keys(keys):
    for key in keys:
        if isinstance(key, list):
            yield from _flat_keys(key)
        else:
            yield key


def ntt_large(
    x,
    modulus,
    *,
    workers=None,
    negacyclic=False,
    inverse=False,
    root=None,
    gather=True,
    transpose="tasks",
    device="auto",
):
    """One NTT of n = 2^16 .. 2^28 points (any n >= 4 works) as a 4-step transform across workers.

    Bit for bit equal to hb.ntt(x, modulus, negacyclic=..., inverse=..., root=...).
    x: a 1-D NumPy or CuPy array on this machine (its column blocks are scattered to the workers),
    or a 1-D Dask array already on the cluster. modulus: one prime (as hb.ntt), or a hb.PrimeField:
    over a multi-limb field (hb.BN254_FR, ...) x has shape (n, limbs) of uint64 limbs in standard
    form and w = field.root_of_unity(n), as hb.ntt(x, field). workers: how many
    workers (int), which (addresses), or None for all; at most min(n1, n2) for n = n1 * n2.
    gather: True returns the result on this machine, as x's array type; False returns it as a
    Dask array on the workers (contiguous blocks, one per worker). transpose: "tasks" (Dask's
    task-based rechunk) or "direct" (split/concatenate tasks pinned to the workers). device: as
    dist.ntt; on GPU workers the blocks stay in device memory between stages.
    Needs a distributed client (`with dist.cluster():`). Errors in workers (e.g. entries >= modulus)
    are raised here with their cause.
    """
    job = LargeNTT(
        x,
        modulus,
        workers=workers,
        negacyclic=negacyclic,
        inverse=inverse,
        root=root,
        transpose=transpose,
        device=device,
    )
    return job.run(gather=_check_flag(gather, "gather"))
