"""One transform split over workers (4-step), and the block steps and twiddle primitive under it."""

import random

import dask.array as da
import numpy as np
import pytest

import hebatch as hb
from hebatch import dist
from hebatch.backend import get
from hebatch.field import default_root
from hebatch.ntt import blocks

from .conftest import to_host
from .dist_support import residues
from .oracle import spot_check_ntt

Q = hb.ntt_primes(60, 2**20, 1)[0]
KINDS = [(False, False), (False, True), (True, False), (True, True)]  # (negacyclic, inverse)


# -- the twiddle primitive and the block steps (no Dask) ----------------------------------------


@pytest.mark.parametrize(
    "q", [hb.ntt_primes(30, 2**10, 1)[0], hb.ntt_primes(62, 2**10, 1)[0], hb.GOLDILOCKS, hb.BABYBEAR]
)
def test_twiddle_grid_against_python_ints(xp, q):
    rng = random.Random()
    for rows, cols in [(1, 1), (3, 5), (7, 64), (16, 17), (2, 1000), (33, 2)]:
        x = residues(q, (rows, cols))
        root = rng.randrange(1, q)
        row0, col0 = rng.randrange(2**40), rng.randrange(2**70)  # exponents far beyond 2^64
        row_step, col_step = rng.randrange(3), rng.randrange(1, 4)
        y = blocks.twiddle_grid(xp.asarray(x), q, root, row0, col0, row_step, col_step)
        want = [
            [int(x[i, j]) * pow(root, (row0 + row_step * i) * (col0 + col_step * j), q) % q for j in range(cols)]
            for i in range(rows)
        ]
        assert to_host(y).tolist() == want


def test_twiddle_grid_in_place_strided_and_validated():
    q = Q
    x = residues(q, (6, 40))
    view = x[::2, 3:35]  # strided input
    want = get("cpu").ntt.twiddle_grid_mul(np.ascontiguousarray(view), q, 5, 2, 3)
    assert np.array_equal(blocks.twiddle_grid(view, q, 5, 2, 3), want)
    out = view.copy()
    assert blocks.twiddle_grid(out, q, 5, 2, 3, out=out) is out and np.array_equal(out, want)
    for call, error, match in [
        (lambda: blocks.twiddle_grid(x[0], q, 5, 0, 0), ValueError, "2-D"),
        (lambda: blocks.twiddle_grid(x.astype(np.int64), q, 5, 0, 0), TypeError, "uint64"),
        (lambda: blocks.twiddle_grid(x, q + 2, 5, 0, 0), ValueError, "not prime"),
        (lambda: blocks.twiddle_grid(x, q, q, 0, 0), ValueError, "0 < root < modulus"),
        (lambda: blocks.twiddle_grid(x, q, 5, -1, 0), ValueError, "row0"),
        (lambda: blocks.twiddle_grid(x, q, 5, 0, 1.0), TypeError, "col0"),
        (lambda: blocks.twiddle_grid(x, q, 5, 0, 0, out=np.empty((2, 2), np.uint64)), ValueError, "out"),
        (lambda: blocks.twiddle_grid([[1]], q, 5, 0, 0), TypeError, "NumPy or CuPy"),
    ]:
        with pytest.raises(error, match=match):
            call()


@pytest.mark.parametrize("q", [Q, hb.GOLDILOCKS, hb.BABYBEAR])
@pytest.mark.parametrize("negacyclic,inverse", KINDS)
def test_block_steps_compose_to_hb_ntt(xp, q, negacyclic, inverse):
    """Column blocks, a transpose and row blocks give hb.ntt, for several splits and block counts."""
    for n, split, parts in [(16, (4, 4), 3), (32, (2, 16), 2), (1024, None, 5), (2**12, (128, 32), 4)]:
        x = xp.asarray(residues(q, n))
        spec = blocks.four_step_spec(
            n, q, default_root(q, n, negacyclic), negacyclic=negacyclic, inverse=inverse, split=split
        )
        a = x.reshape(spec.n1, spec.n2)
        y = xp.concatenate(
            [blocks.column_block(a[:, lo:hi], spec, lo) for lo, hi in dist.large.split_bounds(spec.n2, parts)]
        )
        z = xp.ascontiguousarray(y.T)
        d = xp.concatenate([blocks.row_block(z[lo:hi], spec) for lo, hi in dist.large.split_bounds(spec.n1, 2)])
        got = to_host(d.T.reshape(-1))
        assert np.array_equal(got, to_host(hb.ntt(x, q, negacyclic=negacyclic, inverse=inverse)))


def test_four_step_spec_rejects_bad_split():
    with pytest.raises(ValueError, match="split"):
        blocks.four_step_spec(16, Q, default_root(Q, 16, False), split=(2, 4))
    with pytest.raises(ValueError, match="split"):
        blocks.four_step_spec(16, Q, default_root(Q, 16, False), split=(1, 16))


# -- ntt_large on a CPU cluster -------------------------------------------------------------------


@pytest.mark.parametrize("negacyclic,inverse", KINDS)
@pytest.mark.parametrize("transpose", ["tasks", "direct"])
def test_ntt_large_2_16_both_transposes(client, negacyclic, inverse, transpose):
    x = residues(Q, 2**16)
    want = hb.ntt(x, Q, negacyclic=negacyclic, inverse=inverse)
    got = dist.ntt_large(x, Q, workers=2, negacyclic=negacyclic, inverse=inverse, transpose=transpose)
    assert isinstance(got, np.ndarray) and got.dtype == np.uint64 and np.array_equal(got, want)
    spread = dist.ntt_large(x, Q, workers=2, negacyclic=negacyclic, inverse=inverse, transpose=transpose, gather=False)
    assert isinstance(spread, da.Array) and len(spread.chunks[0]) == 2
    assert np.array_equal(spread.compute(), want)


def test_ntt_large_against_definition(client):
    x = residues(Q, 2**16)
    for negacyclic in (False, True):
        y = dist.ntt_large(x, Q, negacyclic=negacyclic)
        spot_check_ntt(x.tolist(), y.tolist(), Q, default_root(Q, 2**16, negacyclic), negacyclic)


@pytest.mark.parametrize(
    "log_n,negacyclic,inverse,transpose",
    [(18, True, False, "direct"), (18, False, True, "tasks"), (20, False, False, "tasks"), (20, True, True, "direct")],
)
def test_ntt_large_up_to_2_20(client, log_n, negacyclic, inverse, transpose):
    x = residues(Q, 2**log_n)
    got = dist.ntt_large(x, Q, workers=2, negacyclic=negacyclic, inverse=inverse, transpose=transpose)
    assert np.array_equal(got, hb.ntt(x, Q, negacyclic=negacyclic, inverse=inverse))


@pytest.mark.parametrize("q,dtype", [(hb.GOLDILOCKS, np.uint64), (hb.BABYBEAR, np.uint32)])
def test_ntt_large_fields_dask_input_and_round_trip(client, q, dtype):
    n = 2**16
    x = residues(q, n, dtype)
    xd = da.from_array(x, chunks=3 * n // 8 + 5)  # chunks that do not line up with rows of the n1 x n2 view
    y = dist.ntt_large(xd, q, negacyclic=True, gather=False)
    got = y.compute()
    assert got.dtype == dtype and np.array_equal(got, hb.ntt(x, q, negacyclic=True))
    back = dist.ntt_large(y, q, negacyclic=True, inverse=True, transpose="direct")
    assert back.dtype == dtype and np.array_equal(back, x)


def test_ntt_large_root_override_worker_choice_and_timings(client):
    n = 2**16
    root = pow(hb.primitive_root(Q), 5 * (Q - 1) // n, Q)
    x = residues(Q, n)
    addresses = sorted(client.scheduler_info(n_workers=-1)["workers"])
    timings = {}
    job = dist.LargeNTT(x, Q, workers=addresses[1:], root=root)
    assert np.array_equal(job.run(timings=timings), hb.ntt(x, Q, root=root))
    assert set(timings) == {"distribute", "columns", "transpose", "rows", "gather"}
    assert all(t >= 0 for t in timings.values())
    assert np.array_equal(dist.ntt_large(x, Q, workers=1), hb.ntt(x, Q))


def test_ntt_large_bad_input_rejected(client):
    x = residues(Q, 2**16)
    for call, error, match in [
        (lambda: dist.ntt_large(x.reshape(2, -1), Q), ValueError, "1-D"),
        (lambda: dist.ntt_large(x[:3000], Q), ValueError, "power of two"),
        (lambda: dist.ntt_large(x, Q + 2), ValueError, "not prime"),
        (lambda: dist.ntt_large(x, [Q]), ValueError, "limbs"),
        (lambda: dist.ntt_large(x.astype(np.int64), Q), TypeError, "dtype uint64"),
        (lambda: dist.ntt_large(x, Q, root=3), ValueError, "root=3"),
        (lambda: dist.ntt_large(x, Q, workers=3), ValueError, "between 1 and the 2 workers"),
        (lambda: dist.ntt_large(x, Q, workers=["tcp://nowhere:1"]), ValueError, "worker addresses"),
        (lambda: dist.ntt_large(x[:16], Q, workers=2, transpose="p2p"), ValueError, "transpose"),
        (lambda: dist.ntt_large(x[:2], Q), ValueError, "at least 4"),
        (lambda: dist.ntt_large(x, Q, gather="no"), TypeError, "gather"),
        (lambda: dist.ntt_large(list(x), Q), TypeError, "NumPy or CuPy"),
    ]:
        with pytest.raises(error, match=match):
            call()


def test_ntt_large_entry_error_from_worker(client):
    x = residues(Q, 2**16)
    x[12345] = Q
    with pytest.raises(ValueError, match=r"entries >= modulus.*\(in ntt_large_cyclic_2\^16 columns") as info:
        dist.ntt_large(x, Q, workers=2)
    assert isinstance(info.value.__cause__, ValueError)


def test_ntt_large_needs_a_client(monkeypatch):
    monkeypatch.setattr(dist.large, "current_client", lambda: None)  # as if no cluster were running
    with pytest.raises(ValueError, match="distributed client"):
        dist.ntt_large(residues(Q, 2**16), Q)


@pytest.mark.gpu
@pytest.mark.parametrize("negacyclic,inverse", KINDS)
def test_ntt_large_gpu_workers(negacyclic, inverse):
    import cupy

    with dist.cluster(device="gpu", verbose=False) as c:
        k = min(2, len(c.scheduler_info(n_workers=-1)["workers"]))
        x = residues(Q, 2**20)
        want = hb.ntt(x, Q, negacyclic=negacyclic, inverse=inverse)
        for transpose in dist.TRANSPOSES:
            got = dist.ntt_large(x, Q, workers=k, negacyclic=negacyclic, inverse=inverse, transpose=transpose)
            assert np.array_equal(got, want)
        on_device = dist.ntt_large(cupy.asarray(x), Q, workers=k, negacyclic=negacyclic, inverse=inverse)
        assert isinstance(on_device, cupy.ndarray) and np.array_equal(on_device.get(), want)
