"""Workflows: TOML configs run through `hebatch run`, their outputs and reports, and resuming."""

import json
import shutil

import numpy as np
import pytest
import zarr

import hebatch as hb
from hebatch import dist
from hebatch.jobs.workflow import load_config

from .cli_support import assert_clean_failure, invoke, last_json

BATCH = """
[job]
kind = "batch-ntt"
output_dir = "{out}"
[cluster]
workers = 1
threads_only = true
[input]
path = "{data}"
batch = 24
log_n = 7
limbs = 2
bits = 50
chunk = 4
[transform]
chunk = 4
check_rows = 3
"""


def _write(tmp_path, text, name="job.toml", **fields):
    path = tmp_path / name
    path.write_text(text.format(**{k: str(v) for k, v in fields.items()}))
    return path


def _expected(data, out):
    x = zarr.open_group(str(data), mode="r")["data"][:]
    moduli = [int(q) for q in zarr.open_group(str(data), mode="r").attrs["moduli"]]
    return hb.ntt(x, moduli, negacyclic=True), zarr.open_group(str(out / "ntt.zarr"), mode="r")["data"][:]


def test_batch_ntt_creates_dataset_runs_and_reports(tmp_path):
    out, data = tmp_path / "out", tmp_path / "in.zarr"
    config = _write(tmp_path, BATCH, out=out, data=data)
    summary = last_json(invoke("run", config, "--json"))
    assert summary["created_input"] is True and summary["chunks_written"] == 6 and summary["rows_wrong"] == 0
    expected, got = _expected(data, out)
    assert np.array_equal(got, expected)
    report = (out / "performance-report.html").read_text()
    assert "<html" in report.lower() and "Dask Performance Report" in report
    assert json.loads((out / "summary.json").read_text())["kind"] == "batch-ntt"


def test_batch_ntt_resumes_after_interruption(tmp_path):
    out, data = tmp_path / "out", tmp_path / "in.zarr"
    config = _write(tmp_path, BATCH, out=out, data=data)
    assert last_json(invoke("workflow", "run", config, "--json"))["chunks_written"] == 6
    # The run is cut short: chunks 0, 2 and 5 never finished (no markers, data lost).
    group = zarr.open_group(str(out / "ntt.zarr"), mode="r+")
    for index in (0, 2, 5):
        group["data_done"][index] = 0
        group["data"][4 * index : 4 * index + 4] = 0
    summary = last_json(invoke("run", config, "--json"))
    assert summary["created_input"] is False
    assert summary["chunks_written"] == 3 and summary["resumed"] is True
    expected, got = _expected(data, out)
    assert np.array_equal(got, expected)
    assert dist.zarr_status(str(out / "ntt.zarr")) == (6, 6)


def test_batch_ntt_fresh_starts_over(tmp_path):
    out, data = tmp_path / "out", tmp_path / "in.zarr"
    config = _write(tmp_path, BATCH, out=out, data=data)
    invoke("run", config)
    assert last_json(invoke("run", config, "--fresh", "--json"))["chunks_written"] == 6


def test_batch_ntt_missing_input_without_demo(tmp_path):
    config = _write(
        tmp_path, BATCH.replace("batch = 24", "create_demo = false"), out=tmp_path / "o", data=tmp_path / "missing.zarr"
    )
    assert_clean_failure(invoke("run", config), "input.path", "does not exist")


ZK = """
[job]
kind = "zk-ntt"
output_dir = "{out}"
[cluster]
workers = {workers}
threads_only = true
[zk]
field = "{field}"
log_n = [8, 10]
verify_points = 2
workers = {workers}
"""


@pytest.mark.parametrize("field, workers", [("goldilocks", 1), ("babybear", 1), ("goldilocks", 2), ("bn254", 1)])
def test_zk_job_and_resume(tmp_path, field, workers):
    out = tmp_path / "zk"
    config = _write(tmp_path, ZK, out=out, field=field, workers=workers)
    summary = last_json(invoke("run", config, "--json"))
    assert summary["computed"] == 2 and summary["resumed"] == 0
    results = json.loads((out / "results.json").read_text())
    assert [r["log_n"] for r in results] == [8, 10]
    assert all(r["points_wrong"] == 0 and r["round_trip_exact"] for r in results)
    assert (out / "performance-report.html").is_file()
    # Interrupted after the first size: the rerun computes only the second.
    (out / "results.json").write_text(json.dumps(results[:1]))
    summary = last_json(invoke("run", config, "--json"))
    assert summary["computed"] == 1 and summary["resumed"] == 1
    assert len(json.loads((out / "results.json").read_text())) == 2


def test_zk_job_coset(tmp_path):
    config = _write(
        tmp_path,
        ZK.replace("verify_points = 2", "verify_points = 2\ncoset = true"),
        out=tmp_path / "zk",
        field="bls12-377",
        workers=1,
    )
    assert last_json(invoke("run", config, "--json"))["computed"] == 2
    results = json.loads((tmp_path / "zk" / "results.json").read_text())
    assert all(r["coset"] and r["points_wrong"] == 0 and r["round_trip_exact"] for r in results)


@pytest.mark.parametrize(
    "text, words",
    [
        ("[job]\nkind = 'nope'\n", ["job.kind"]),
        ("[job]\nkind = 'zk-ntt'\n[zk]\nlog_m = 3\n", ["zk.log_m"]),
        ("[job]\nkind = 'zk-ntt'\n[extra]\n", ["[extra]"]),
        ("[job\n", ["TOML"]),
        ("[cluster]\n", ["[job]"]),
    ],
)
def test_bad_configs(tmp_path, text, words):
    config = tmp_path / "bad.toml"
    config.write_text(text)
    assert_clean_failure(invoke("run", config), *words)
    with pytest.raises(ValueError):
        load_config(config)


def test_missing_config(tmp_path):
    assert_clean_failure(invoke("run", tmp_path / "none.toml"), "does not exist")


def test_shipped_configs_load():
    for name, kind in (
        ("batch_ntt", "batch-ntt"),
        ("zk_ntt", "zk-ntt"),
        ("zk_ntt_gpu", "zk-ntt"),
        ("bfv_analytics", "bfv-analytics"),
    ):
        assert load_config(f"workflows/{name}.toml")["job"]["kind"] == kind


BFV = """
[job]
kind = "bfv-analytics"
output_dir = "{out}"
[cluster]
workers = 1
threads_only = true
device = "cpu"
[bfv]
preset = "n4096"
records = 4
features = 3
chunk = 2
dot_with = [2, 7, 1]
seed = 5
"""


def test_bfv_analytics_job_and_resume(tmp_path):
    out = tmp_path / "bfv"
    config = _write(tmp_path, BFV, out=out)
    summary = last_json(invoke("run", config, "--json"))
    assert summary["records_wrong"] == 0 and summary["chunks_encrypted"] == 2 and summary["chunks_evaluated"] == 2
    records, result = np.load(out / "records.npy"), np.load(out / "result.npy")
    assert result[:, 0].tolist() == [(2 * int(a) + 7 * int(b) + int(c)) % 65537 for a, b, c in records]
    assert (out / "performance-report.html").is_file() and (out / "keys" / "secret.key").is_file()
    # Interrupted during eval: one result chunk is missing; keys and ciphertexts are kept.
    group = zarr.open_group(str(out / "result.ct.zarr"), mode="r+")
    group["data_done"][0] = 0
    group["data"][0:2] = 0
    summary = last_json(invoke("run", config, "--json"))
    assert summary["chunks_encrypted"] == 0 and summary["chunks_evaluated"] == 1 and "keygen_seconds" not in summary
    assert np.array_equal(np.load(out / "result.npy"), result)


def test_batch_ntt_failed_chunk_then_rerun_finishes_only_it(tmp_path):
    out, data = tmp_path / "out", tmp_path / "in.zarr"
    config = _write(tmp_path, BATCH, out=out, data=data)
    invoke("run", config)  # creates the dataset and the output
    shutil.rmtree(out)
    # Corrupt one input chunk (entries >= modulus): that chunk's task fails, every other one finishes.
    group = zarr.open_group(str(data), mode="r+")
    good = group["data"][8:12].copy()
    group["data"][8:12] = np.uint64(2**63)
    assert_clean_failure(invoke("run", config), "modulus")
    assert dist.zarr_status(str(out / "ntt.zarr")) == (5, 6)
    group["data"][8:12] = good  # the cause is fixed; the rerun computes the one missing chunk
    summary = last_json(invoke("run", config, "--json"))
    assert summary["chunks_written"] == 1 and summary["rows_wrong"] == 0
    expected, got = _expected(data, out)
    assert np.array_equal(got, expected)
