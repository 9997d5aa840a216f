"""Running Dask collections with progress and with the first failure reported with its cause."""

from __future__ import annotations

import gc
import time

import dask
from dask.utils import key_split

from .arrays import current_client, lost_input

RELEASE_TIMEOUT = 10.0  # seconds to wait, after a failure, for the scheduler to forget the job


def run(*jobs, progress: bool = False, retries: int = 0, fail_fast: bool = True, console=None):
    """Compute Dask collections on the active cluster; one result per argument, like dask.compute.

    A list or tuple argument is a job of several collections (e.g. what `to_zarr(..., compute=False)`
    returns) and gives a list of results. progress: a progress bar over the tasks producing the
    chunks (on stderr, or on `console`, a rich Console). retries: times Dask retries a failed task.
    fail_fast: raise at the first failed chunk; with False every other chunk finishes first, which a
    resumable job wants. A failure raises the worker's exception, with its cause and traceback.
    """
    if not jobs:
        return ()
    flat, sizes = [], []
    for job in jobs:
        items = list(job) if isinstance(job, (list, tuple)) else [job]
        for item in items:
            if not dask.is_dask_collection(item):
                raise TypeError(f"run takes Dask collections (or lists of them), got {type(item).__name__}")
        flat.extend(items)
        sizes.append(len(items) if isinstance(job, (list, tuple)) else None)
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise ValueError(f"retries must be an int >= 0, got {retries!r}")

    client = current_client()
    if client is None:
        if progress:
            from dask.diagnostics import ProgressBar

            with ProgressBar():
                results = dask.compute(*flat)
        else:
            results = dask.compute(*flat)
    else:
        results = _run_on_cluster(client, flat, progress, retries, fail_fast, console)

    out, position = [], 0
    for size in sizes:
        if size is None:
            out.append(results[position])
            position += 1
        else:
            out.append(list(results[position : position + size]))
            position += size
    return out[0] if len(out) == 1 else tuple(out)


def _run_on_cluster(client, collections, progress, retries, fail_fast, console):
    from distributed import futures_of

    inputs = futures_of(collections)  # data the graphs refer to (chunks scattered by from_numpy)
    persisted = client.persist(collections, retries=retries)
    futures = futures_of(persisted)
    failure = first_failure(futures, progress=progress, fail_fast=fail_fast, console=console)
    if failure is None:
        return dask.compute(*persisted)
    # Drop this job's futures before raising and wait until the scheduler has forgotten their keys
    # (the erred ones too): a rerun of the same job then computes them afresh.
    keys = [f.key for f in futures]
    del persisted, futures
    gc.collect()  # futures caught in reference cycles (tracebacks, graphs) are released now
    deadline = time.monotonic() + RELEASE_TIMEOUT
    try:
        while client.run_on_scheduler(_wanted, keys, client.id) and time.monotonic() < deadline:
            time.sleep(0.01)
    except Exception:  # e.g. a scheduler that cannot import hebatch: the job's error matters more
        pass
    error, traceback = failure
    lost = lost_input(inputs)
    if lost is not None:
        raise lost from error.with_traceback(traceback)
    raise error.with_traceback(traceback)


def _wanted(keys, client_id, dask_scheduler=None) -> bool:
    """Whether the client still holds any of these keys on the scheduler (runs on the scheduler)."""
    for key in keys:
        task = dask_scheduler.tasks.get(key)
        if task is not None and any(c.client_key == client_id for c in task.who_wants or ()):
            return True
    return False


def wait_for(futures, *, progress: bool = False, fail_fast: bool = True, console=None) -> None:
    """Wait until every future is done; raise the first failure (at once if fail_fast)."""
    failure = first_failure(futures, progress=progress, fail_fast=fail_fast, console=console)
    if failure is not None:
        error, traceback = failure
        raise error.with_traceback(traceback)


def first_failure(futures, *, progress: bool = False, fail_fast: bool = True, console=None):
    """Wait for the futures (all, or until one fails if fail_fast); (exception, traceback) of the
    first failure, or None. Holds no future after it returns."""
    from distributed import as_completed

    futures = list(futures)
    bar = task = None
    if progress and futures:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console or Console(stderr=True),
        )
        names = sorted({key_split(f.key) for f in futures})
        task = bar.add_task(", ".join(names[:3]) + (" ..." if len(names) > 3 else ""), total=len(futures))
        bar.start()
    failure = None
    completed = as_completed(futures)
    del futures
    try:
        for future in completed:
            if bar is not None:
                bar.advance(task)
            if future.status == "error" and failure is None:
                failure = (future.exception(), future.traceback())
                if fail_fast:
                    break
            elif future.status == "cancelled" and failure is None:
                failure = (RuntimeError(f"task {future.key} was cancelled"), None)
                if fail_fast:
                    break
    finally:
        completed.clear()
        if bar is not None:
            bar.stop()
    return failure
