"""What a batch task carries and does per chunk: prepared once per job, a size that does not grow
with the batch, cached validation, and errors that still name the chunk and its rows."""

import pickle

import dask
import dask.array as da
import numpy as np
import pytest

import hebatch as hb
from hebatch import dist
from hebatch.distributed import batch
from hebatch.ntt import validate

from .dist_support import residues

Q = hb.ntt_primes(60, 2**6, 2)


def _tasks(y):
    graph = dict(y.__dask_graph__())
    return {k: v for k, v in graph.items() if k[0] == y.name}


def _largest_task_bytes(y) -> int:
    return max(len(pickle.dumps(task)) for task in _tasks(y).values())


def test_task_size_does_not_grow_with_the_batch():
    """Each task ships its job (the chain, the check, how to name its rows), not a list as long as
    the batch: 4 chunks and 4000 chunks give tasks of about one size."""
    sizes = []
    for chunks in (4, 4000):
        x = da.zeros((chunks * 2, 2, 64), dtype=np.uint64, chunks=(2, 2, 64))
        sizes.append(_largest_task_bytes(dist.intt(dist.ntt(x, Q, negacyclic=True), Q, negacyclic=True)))
    assert sizes[1] <= sizes[0] + 16, sizes


@pytest.mark.parametrize(
    "chunks, where",
    [
        ((5, 5, 5, 5), "rows 10:15"),  # regular
        ((5, 5, 5, 2), "rows 10:15"),  # regular with a shorter last chunk
        ((3, 4, 5, 8), "rows 7:12"),  # irregular, few chunks
    ],
)
def test_errors_name_the_chunk_and_its_rows(chunks, where):
    x = residues(Q[0], (sum(chunks), 64))
    x[sum(chunks[:2]) + 1, 3] = Q[0]  # in chunk 2
    y = dist.ntt(da.from_array(x, chunks=(chunks, 64)), Q[0])
    with pytest.raises(ValueError, match=rf"entries >= modulus.*chunk \(2, 0\) {where}\)$"):
        y.compute(scheduler="sync")


def test_irregular_long_batches_name_the_chunk_without_rows():
    job = batch._Job(batch._Chain(()), None, "cpu", "ntt_cyclic_2^6", **batch._Job.row_layout((1, 2) * 100))
    assert job.where((7, 0)) == "ntt_cyclic_2^6 chunk (7, 0)"
    job = batch._Job(batch._Chain(()), None, "cpu", "label", **batch._Job.row_layout((4, 4, 3)))
    assert job.where((2, 0)) == "label chunk (2, 0) rows 8:11" and job.where(None) == "label"


def test_tasks_carry_a_prepared_job_and_no_block_info():
    x = da.from_array(np.stack([residues(q, (6, 64)) for q in Q], axis=1), chunks=(2, 2, 64))
    y = dist.intt(dist.ntt(x, Q, negacyclic=True), Q, negacyclic=True)
    for task in _tasks(y).values():
        assert "block_info" not in repr(task)
    job = next(iter(_tasks(y).values())).kwargs["job"]
    assert isinstance(job, batch._Job) and job.check is not None and job.check.moduli == tuple(Q)
    first, second = job.chain.steps
    assert not first.check and not second.check  # covered by the entry check (same moduli)
    assert first.root is None and second.root is None  # default roots: the task's validation is a lookup


def test_default_roots_hit_the_validation_cache_in_tasks(monkeypatch):
    """A task's hb call finds its arguments validated before (no number theory per chunk)."""
    x = np.stack([residues(q, (8, 64)) for q in Q], axis=1)
    y = dist.ntt(da.from_array(x, chunks=(2, 2, 64)), Q, negacyclic=True)
    want = hb.ntt(x, Q, negacyclic=True)
    calls = []
    full = validate._check_transform_args

    def counted(*args, **kwargs):
        calls.append(args[0])
        return full(*args, **kwargs)

    monkeypatch.setattr(validate, "_check_transform_args", counted)
    validate._ARGS_CACHE.clear()
    with dask.config.set(scheduler="sync"):
        got = y.compute()
    assert np.array_equal(got, want)
    assert len(calls) <= 1, calls  # the first chunk validates, the others find it


def test_given_roots_are_kept_and_results_bit_identical():
    q = Q[0]
    root = pow(hb.primitive_root(q), 3 * (q - 1) // 64, q)  # another primitive 64th root of unity
    x = residues(q, (9, 64))
    y = dist.ntt(da.from_array(x, chunks=(4, 64)), q, root=root)
    assert np.array_equal(y.compute(scheduler="sync"), hb.ntt(x, q, root=root))
    job = next(iter(_tasks(y).values())).kwargs["job"]
    assert job.chain.steps[0].root == root


@pytest.mark.gpu
def test_gpu_device_check_flag_per_thread_finds_b_and_resets():
    """On a GPU worker: the entry check of device chunks sets one reused flag per task thread; a bad
    entry in b only is found and named, and the jobs after it on the same threads pass."""
    q = hb.ntt_primes(60, 2**10, 2)
    with dist.cluster(device="gpu", threads_per_worker=2, dashboard_address=":0", verbose=False):
        a = np.stack([residues(m, (64, 2**10)) for m in q], axis=1)
        b = a[::-1].copy()
        ad = dist.to_device(dist.from_numpy(a, chunks=8)).persist()
        bad = b.copy()
        bad[42, 1, 3] = q[1]
        with pytest.raises(ValueError, match=r"b has entries >= .*chunk \(5, 0, 0\) rows 40:48"):
            dist.run(dist.polymul(ad, dist.to_device(dist.from_numpy(bad, chunks=8)), q))
        for _ in range(2):
            got = dist.run(dist.to_host(dist.polymul(ad, dist.to_device(dist.from_numpy(b, chunks=8)), q)))
            assert np.array_equal(got, hb.polymul(a, b, q))
