"""Stores of the command-line and library jobs: a rerun resumes only the same job (batch NTT,
workflows, BFV ciphertexts and results under the same keys and parameters)."""

import os

import numpy as np
import pytest

import hebatch as hb
from hebatch import dist
from hebatch.jobs import bfv as bfv_jobs

from .cli_support import FAST_CLUSTER, assert_clean_failure, invoke, last_json
from .dist_support import residues
from .test_workflows import BATCH, _write

Q = hb.ntt_primes(50, 2**7, 2)
T = 65537


def test_cli_ntt_refuses_another_job_into_its_output(tmp_path):
    x = np.stack([residues(q, (12, 128)) for q in Q], axis=1)
    np.save(tmp_path / "in.npy", x)
    moduli = ",".join(str(q) for q in Q)
    run = ("ntt", tmp_path / "in.npy", tmp_path / "out.zarr", "-q", moduli, "--chunk", 4, *FAST_CLUSTER)
    assert last_json(invoke(*run, "--negacyclic", "--json"))["chunks_written"] == 3
    failure = invoke(*run, "--json")
    assert_clean_failure(failure, "negacyclic: true vs false", "--overwrite")
    assert_clean_failure(invoke(*run, "--negacyclic", "--inverse"), '"ntt" vs "intt"')
    assert last_json(invoke(*run, "--negacyclic", "--json"))["chunks_written"] == 0  # the same job: resumed
    assert np.array_equal(dist.from_zarr(tmp_path / "out.zarr").compute(), hb.ntt(x, Q, negacyclic=True))

    y = np.stack([residues(q, (12, 128)) for q in Q], axis=1)
    np.save(tmp_path / "in.npy", y)  # another input under the same name
    stat = os.stat(tmp_path / "in.npy")
    os.utime(tmp_path / "in.npy", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))  # coarse clocks: surely newer
    assert_clean_failure(invoke(*run, "--negacyclic"), "modified_ns")
    assert last_json(invoke(*run, "--overwrite", "--json"))["chunks_written"] == 3
    assert np.array_equal(dist.from_zarr(tmp_path / "out.zarr").compute(), hb.ntt(y, Q))


def test_workflow_with_changed_transform_is_refused(tmp_path):
    out, data = tmp_path / "out", tmp_path / "in.zarr"
    config = _write(tmp_path, BATCH, out=out, data=data)
    assert last_json(invoke("run", config, "--json"))["chunks_written"] == 6
    changed = _write(tmp_path, BATCH + "negacyclic = false\n", name="changed.toml", out=out, data=data)
    assert_clean_failure(invoke("run", changed), "negacyclic: true vs false", "--fresh")
    assert last_json(invoke("run", changed, "--fresh", "--json"))["rows_wrong"] == 0


@pytest.fixture(scope="module")
def two_keys(tmp_path_factory):
    root = tmp_path_factory.mktemp("keys")
    for name in ("a", "b"):
        invoke("bfv", "keygen", "--keys", root / name, "--preset", "n4096", "--max-features", 4, "--device", "cpu")
    return root / "a", root / "b"


def test_bfv_store_is_tagged_from_the_first_chunk_and_keeps_its_key(client, tmp_path, two_keys, monkeypatch):
    keys_a, keys_b = two_keys
    values = np.random.default_rng().integers(0, T, size=(6, 3))
    np.save(tmp_path / "r.npy", values)
    ct = tmp_path / "r.ct.zarr"

    def interrupted(*jobs, **options):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(dist, "run", interrupted)
        with pytest.raises(KeyboardInterrupt):
            bfv_jobs.encrypt_dataset(tmp_path / "r.npy", ct, keys_a, chunk=2, backend="cpu")
    assert dist.zarr_status(ct) == (0, 3)
    _, meta_a, _ = bfv_jobs.read_keys(keys_a, secret=False)
    _, meta_b, _ = bfv_jobs.read_keys(keys_b, secret=False)
    assert dist.zarr_provenance(ct)["job"]["hebatch_bfv"]["key_id"] == meta_a["key_id"]

    with pytest.raises(ValueError, match=f'key_id: "{meta_a["key_id"]}" vs "{meta_b["key_id"]}"'):
        bfv_jobs.encrypt_dataset(tmp_path / "r.npy", ct, keys_b, chunk=2, backend="cpu")
    assert bfv_jobs.encrypt_dataset(tmp_path / "r.npy", ct, keys_a, chunk=2, backend="cpu")["chunks_written"] == 3
    with pytest.raises(ValueError, match="key_id"):  # a finished store is not re-tagged either
        bfv_jobs.encrypt_dataset(tmp_path / "r.npy", ct, keys_b, chunk=2, backend="cpu")

    options = bfv_jobs.pipeline_options(None, True, None, None, None)
    square = tmp_path / "sq.ct.zarr"
    assert bfv_jobs.evaluate_store(ct, square, keys_a, options, backend="cpu")["chunks_written"] == 3
    other = bfv_jobs.pipeline_options(None, False, 3, None, None)
    with pytest.raises(ValueError, match=r"square.*mul-const 3"):
        bfv_jobs.evaluate_store(ct, square, keys_a, other, backend="cpu")
    _, got = bfv_jobs.decrypt_store(square, tmp_path / "sq.npy", keys_a, backend="cpu")
    assert got.tolist() == [[int(v) ** 2 % T for v in row] for row in values]
    with pytest.raises(ValueError, match="key"):
        bfv_jobs.decrypt_store(square, tmp_path / "sq2.npy", keys_b, backend="cpu")
