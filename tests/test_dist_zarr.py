"""Zarr input and output of batches: round trips, resumable writes, refusing to mix jobs."""

import os

import dask.array as da
import numpy as np
import pytest
import zarr

import hebatch as hb
from hebatch import dist

from .dist_support import fail_once, logged_chunks, residues

Q = hb.ntt_primes(60, 2**10, 2)


def test_round_trip_and_transform(client, tmp_path):
    x = np.stack([residues(q, (23, 256)) for q in Q], axis=1)
    assert dist.to_zarr(dist.from_numpy(x, chunks=5), tmp_path / "in.zarr") == 5
    assert dist.zarr_status(tmp_path / "in.zarr") == (5, 5)
    stored = zarr.open_group(str(tmp_path / "in.zarr"), mode="r")
    assert stored["data"].chunks == (5, 2, 256) and np.array_equal(stored["data"][:], x)

    xd = dist.from_zarr(tmp_path / "in.zarr", chunks=7)
    assert xd.chunks[0] == (7, 7, 7, 2)
    assert dist.from_zarr(tmp_path / "in.zarr").chunks[0] == (23,)  # default: memory allows it all
    y = dist.ntt(xd, Q, negacyclic=True)
    dist.to_zarr(y, str(tmp_path / "out.zarr"), component="spectrum")
    got = dist.from_zarr(tmp_path / "out.zarr", "spectrum").compute()
    assert np.array_equal(got, hb.ntt(x, Q, negacyclic=True))


def test_plain_zarr_array_input_and_irregular_chunks(client, tmp_path):
    x = residues(Q[0], (17, 3, 64))
    zarr.create_array(str(tmp_path / "plain.zarr"), data=x, chunks=(4, 3, 64))
    xd = dist.from_zarr(tmp_path / "plain.zarr")
    assert np.array_equal(xd.compute(), x) and xd.chunks[0] == (17,)
    with pytest.raises(ValueError, match="single Zarr array"):
        dist.from_zarr(tmp_path / "plain.zarr", "data")
    irregular = da.from_array(x, chunks=((2, 9, 6), (1, 2), (64,)))
    dist.to_zarr(irregular, tmp_path / "out.zarr")
    stored = zarr.open_group(str(tmp_path / "out.zarr"), mode="r")["data"]
    assert stored.chunks == (9, 3, 64) and np.array_equal(stored[:], x)


def test_resume_after_interrupted_job(client, tmp_path):
    x = residues(Q[0], (40, 128))
    dist.to_zarr(x, tmp_path / "in.zarr")
    marker, log = str(tmp_path / "failed-once"), str(tmp_path / "computed")
    xd = dist.from_zarr(tmp_path / "in.zarr", chunks=5)
    y = dist.ntt(xd, Q[0]).map_blocks(fail_once, marker, log, 3, meta=xd._meta)  # chunk 3 fails the first time
    out = tmp_path / "out.zarr"
    with pytest.raises(RuntimeError, match="injected failure in chunk 3"):
        dist.to_zarr(y, out)
    assert logged_chunks(log) == list(range(8))  # every other chunk finished before the error was raised
    assert dist.zarr_status(out) == (7, 8)
    with pytest.raises(ValueError, match="incomplete: 7 of 8"):
        dist.from_zarr(out)

    os.remove(log)
    assert dist.to_zarr(y, out) == 1  # the rerun computes only the missing chunk
    assert logged_chunks(log) == [3]
    assert np.array_equal(dist.from_zarr(out).compute(), hb.ntt(x, Q[0]))
    assert dist.to_zarr(y, out) == 0


def test_job_for_run_with_progress(client, tmp_path, capsys):
    x = residues(Q[1], (12, 64))
    job = dist.to_zarr(dist.intt(dist.from_numpy(x, chunks=4), Q[1]), tmp_path / "o.zarr", compute=False)
    assert len(job) == 3 and dist.zarr_status(tmp_path / "o.zarr") == (0, 3)
    assert sorted(dist.run(job, progress=True)) == [0, 1, 2]
    assert "to_zarr" in capsys.readouterr().err
    assert np.array_equal(dist.from_zarr(tmp_path / "o.zarr").compute(), hb.intt(x, Q[1]))


def test_existing_output_rules(client, tmp_path):
    x = residues(Q[0], (8, 32))
    out = tmp_path / "o.zarr"
    dist.to_zarr(dist.from_numpy(x, chunks=4), out)
    with pytest.raises(ValueError, match=r"exists with shape \(8, 32\).*chunks \(4, 32\).*overwrite=True"):
        dist.to_zarr(dist.from_numpy(x, chunks=2), out)
    with pytest.raises(ValueError, match="shape"):
        dist.to_zarr(dist.from_numpy(x[:6], chunks=4), out)
    y = residues(Q[0], (8, 32))
    assert dist.to_zarr(dist.from_numpy(y, chunks=2), out, overwrite=True) == 4
    assert np.array_equal(dist.from_zarr(out).compute(), y)
    zarr.open_group(str(out), mode="a").create_array("other", shape=(8, 32), dtype="uint64", chunks=(4, 32))
    with pytest.raises(ValueError, match="not written by to_zarr"):
        dist.to_zarr(dist.from_numpy(x, chunks=4), out, component="other")
    with pytest.raises(ValueError, match="component"):
        dist.to_zarr(x, out, component="a/b")
    with pytest.raises(ValueError, match="has no array 'missing'"):
        dist.from_zarr(out, "missing")


@pytest.mark.gpu
def test_device_chunks_to_zarr(tmp_path):
    with dist.cluster(device="gpu", verbose=False):
        x = residues(Q[0], (32, 256))
        y = dist.ntt(dist.to_device(dist.from_numpy(x, chunks=8)), Q[0])
        dist.to_zarr(y, tmp_path / "o.zarr")
        assert np.array_equal(dist.from_zarr(tmp_path / "o.zarr").compute(), hb.ntt(x, Q[0]))
