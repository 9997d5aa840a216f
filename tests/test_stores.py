"""Output stores: what made them is recorded and compared on resume, chunks carry checksums."""

import os
import pathlib

import numpy as np
import pytest
import zarr

import hebatch as hb
from hebatch import dist

from .dist_support import residues

Q = hb.ntt_primes(60, 2**8, 2)


def _chunk_file(store, index, component="data") -> pathlib.Path:
    files = [p for p in (pathlib.Path(store) / component / "c" / str(index)).rglob("*") if p.is_file()]
    assert len(files) == 1, files
    return files[0]


def _input(tmp_path, batch=24, chunks=4):
    x = np.stack([residues(q, (batch, 64)) for q in Q], axis=1)
    dist.to_zarr(dist.from_numpy(x, chunks=chunks), tmp_path / "in.zarr")
    return x, dist.from_zarr(tmp_path / "in.zarr", chunks=chunks)


def test_other_job_into_the_same_store_is_refused(client, tmp_path):
    x, X = _input(tmp_path)
    out = tmp_path / "o.zarr"
    assert dist.to_zarr(dist.ntt(X, Q, negacyclic=True), out) == 6
    with pytest.raises(ValueError, match=r"negacyclic: true vs false.*overwrite=True"):
        dist.to_zarr(dist.ntt(X, Q, negacyclic=False), out)
    with pytest.raises(ValueError, match=r"operation: \"ntt\" vs \"intt\""):
        dist.to_zarr(dist.intt(X, Q, negacyclic=True), out)
    with pytest.raises(ValueError, match=r"moduli\[1\]"):
        dist.to_zarr(dist.ntt(X, [Q[0], hb.ntt_primes(59, 2**8, 1)[0]], negacyclic=True), out)
    other = x.copy()
    other[0, 0, 0] = (int(other[0, 0, 0]) + 1) % Q[0]
    with pytest.raises(ValueError, match=r"inputs\[0\]\.content"):
        dist.to_zarr(dist.ntt(dist.from_numpy(other, chunks=4), Q, negacyclic=True), out)
    # the refused jobs left the results alone; the same job again resumes with nothing to do
    assert np.array_equal(dist.from_zarr(out).compute(), hb.ntt(x, Q, negacyclic=True))
    assert dist.to_zarr(dist.ntt(dist.from_zarr(tmp_path / "in.zarr", chunks=4), Q, negacyclic=True), out) == 0
    assert dist.to_zarr(dist.ntt(X, Q, negacyclic=False), out, overwrite=True) == 6
    assert np.array_equal(dist.from_zarr(out).compute(), hb.ntt(x, Q))

    record = dist.zarr_provenance(out)
    assert record["hebatch"] == hb.__version__ and record["shape"] == [24, 2, 64]
    step = record["job"]["steps"][0]
    assert step["operation"] == "ntt" and step["negacyclic"] is False and step["moduli"] == [str(q) for q in Q]
    assert step["input_order"] == step["output_order"] == "natural"
    assert record["job"]["inputs"][0]["source"] == "zarr"


def test_in_memory_input_identity(client, tmp_path):
    x = residues(Q[0], (12, 64))
    out = tmp_path / "o.zarr"
    assert dist.to_zarr(dist.ntt(x, Q[0]), out) == 1  # NumPy input, transformed and stored
    assert dist.to_zarr(dist.ntt(x.copy(), Q[0]), out) == 0  # same values: the same job
    with pytest.raises(ValueError, match="content"):
        dist.to_zarr(dist.ntt(residues(Q[0], (12, 64)), Q[0]), out)
    assert dist.to_zarr(x, tmp_path / "raw.zarr") == 1
    with pytest.raises(ValueError, match=r"source: \"array\" vs \(absent\)|steps"):
        dist.to_zarr(dist.ntt(x, Q[0]), tmp_path / "raw.zarr")


def test_record_is_written_before_the_first_chunk(client, tmp_path):
    _, X = _input(tmp_path)
    job = dist.to_zarr(dist.ntt(X, Q, negacyclic=True), tmp_path / "o.zarr", compute=False)
    assert len(job) == 6 and dist.zarr_status(tmp_path / "o.zarr") == (0, 6)
    with pytest.raises(ValueError, match="negacyclic: true vs false"):
        dist.to_zarr(dist.ntt(X, Q), tmp_path / "o.zarr")


def test_explicit_provenance(client, tmp_path):
    x = residues(Q[0], (8, 32))
    out = tmp_path / "o.zarr"
    dist.to_zarr(x, out, provenance={"operation": "mine", "key": 1})
    with pytest.raises(ValueError, match="key: 1 vs 2"):
        dist.to_zarr(x, out, provenance={"operation": "mine", "key": 2})
    with pytest.raises(TypeError, match="provenance must be a dict"):
        dist.to_zarr(x, out, provenance="mine")


def test_store_without_record_is_not_resumed(client, tmp_path):
    x = residues(Q[0], (8, 32))
    out = tmp_path / "o.zarr"
    dist.to_zarr(x, out)
    zarr.open_array(str(out), path="data", mode="r+").attrs.clear()
    with pytest.raises(ValueError, match="records nothing of the job"):
        dist.to_zarr(x, out)


def test_corrupt_chunk_is_named_when_read(client, tmp_path):
    x = residues(Q[0], (20, 64))
    out = tmp_path / "o.zarr"
    dist.to_zarr(dist.ntt(dist.from_numpy(x, chunks=4), Q[0]), out)
    path = _chunk_file(out, 3)
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 8] = bytes(8)  # eight bytes overwritten mid-chunk
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"o\.zarr/data: chunk 3 \(rows 12:16\) is corrupt.*checksum"):
        dist.from_zarr(out).compute()
    assert np.array_equal(dist.from_zarr(out, chunks=4)[:12].compute(), hb.ntt(x, Q[0])[:12])  # others read


def test_resume_redoes_missing_truncated_and_corrupt_chunks(client, tmp_path):
    x = residues(Q[1], (28, 64))
    x[4:8] = 0  # an all-zero result chunk is stored too
    out = tmp_path / "o.zarr"
    X = dist.from_numpy(x, chunks=4)
    assert dist.to_zarr(dist.ntt(X, Q[1]), out) == 7
    os.remove(_chunk_file(out, 2))
    with pytest.raises(ValueError, match=r"chunk 2 \(rows 8:12\) is missing"):
        dist.from_zarr(out).compute()  # not zeros
    truncated = _chunk_file(out, 5)
    truncated.write_bytes(truncated.read_bytes()[:100])
    flipped = _chunk_file(out, 6)
    data = bytearray(flipped.read_bytes())
    data[17] ^= 1
    flipped.write_bytes(bytes(data))
    assert dist.to_zarr(dist.ntt(X, Q[1]), out) == 3
    assert np.array_equal(dist.from_zarr(out).compute(), hb.ntt(x, Q[1]))
    assert dist.to_zarr(dist.ntt(X, Q[1]), out) == 0


def test_in_memory_input_identity_without_a_cluster(tmp_path, monkeypatch):
    from hebatch.distributed import arrays, jobs, zarr_io

    for module in (arrays, jobs, zarr_io):  # Dask's local scheduler, even where a client is running
        monkeypatch.setattr(module, "current_client", lambda: None)
    x = residues(Q[0], (12, 64))
    out = tmp_path / "o.zarr"
    assert dist.to_zarr(dist.ntt(x, Q[0], negacyclic=True), out) == 1
    assert dist.to_zarr(dist.ntt(x.copy(), Q[0], negacyclic=True), out) == 0
    with pytest.raises(ValueError, match="content"):
        dist.to_zarr(dist.ntt(residues(Q[0], (12, 64)), Q[0], negacyclic=True), out)
    with pytest.raises(ValueError, match="negacyclic: true vs false"):
        dist.to_zarr(dist.ntt(x, Q[0]), out)
    assert np.array_equal(dist.from_zarr(out).compute(), hb.ntt(x, Q[0], negacyclic=True))


@pytest.mark.gpu
def test_device_input_identity(tmp_path):
    import cupy

    with dist.cluster(device="gpu", verbose=False):
        x = residues(Q[0], (16, 256))
        out = tmp_path / "o.zarr"
        assert dist.to_zarr(dist.ntt(cupy.asarray(x), Q[0], negacyclic=True), out) == 1
        assert dist.to_zarr(dist.ntt(cupy.asarray(x), Q[0], negacyclic=True), out) == 0
        with pytest.raises(ValueError, match="content"):
            dist.to_zarr(dist.ntt(cupy.asarray(residues(Q[0], (16, 256))), Q[0], negacyclic=True), out)
        assert np.array_equal(dist.from_zarr(out).compute(), hb.ntt(x, Q[0], negacyclic=True))
