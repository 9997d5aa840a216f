"""`hebatch ntt`: .npy and Zarr in and out on a CPU cluster, bit for bit equal to hb.ntt; resume; bad input."""

import numpy as np
import pytest
import zarr

import hebatch as hb
from hebatch import dist

from .cli_support import FAST_CLUSTER, assert_clean_failure, invoke, last_json


def _random(rng, shape, moduli):
    moduli = moduli if isinstance(moduli, (list, tuple)) else [moduli]
    if len(moduli) == 1:
        return rng.integers(0, moduli[0], size=shape, dtype=np.uint64)
    return np.stack([rng.integers(0, q, size=(shape[0], shape[-1]), dtype=np.uint64) for q in moduli], axis=1)


def test_npy_to_npy_goldilocks_with_report(tmp_path):
    x = _random(np.random.default_rng(), (12, 64), hb.GOLDILOCKS)
    np.save(tmp_path / "in.npy", x)
    result = invoke(
        "ntt",
        tmp_path / "in.npy",
        tmp_path / "out.npy",
        "--modulus",
        "goldilocks",
        "--chunk",
        5,
        *FAST_CLUSTER,
        "--report",
        tmp_path / "report.html",
        "--json",
    )
    summary = last_json(result)
    assert "Dask Performance Report" in (tmp_path / "report.html").read_text()
    assert summary["elements"] == x.size and summary["chunks_total"] == 3
    assert np.array_equal(np.load(tmp_path / "out.npy"), hb.ntt(x, hb.GOLDILOCKS))


def test_rns_negacyclic_inverse_to_zarr_and_table(tmp_path):
    moduli = hb.ntt_primes(50, 128, 3)
    x = _random(np.random.default_rng(), (10, 3, 128), moduli)
    np.save(tmp_path / "in.npy", x)
    result = invoke(
        "ntt",
        tmp_path / "in.npy",
        tmp_path / "out.zarr",
        "-q",
        ",".join(map(str, moduli)),
        "--negacyclic",
        "--inverse",
        "--chunk",
        4,
        *FAST_CLUSTER,
    )
    assert result.exit_code == 0, result.output
    assert "throughput_GBps" in result.stdout and "chunks_written" in result.stdout
    got = zarr.open_group(str(tmp_path / "out.zarr"), mode="r")["data"][:]
    assert np.array_equal(got, hb.intt(x, moduli, negacyclic=True))


def test_zarr_output_resumes_after_interruption(tmp_path):
    q = hb.ntt_primes(40, 256, 1)[0]
    x = _random(np.random.default_rng(), (16, 256), q)
    np.save(tmp_path / "in.npy", x)
    args = ("ntt", tmp_path / "in.npy", tmp_path / "out.zarr", "-q", q, "--chunk", 4, *FAST_CLUSTER, "--json")
    assert last_json(invoke(*args))["chunks_written"] == 4
    # An interrupted run: chunks 1 and 3 never finished (no marker, stale data).
    group = zarr.open_group(str(tmp_path / "out.zarr"), mode="r+")
    group["data_done"][1] = 0
    group["data_done"][3] = 0
    group["data"][4:8] = 0
    group["data"][12:16] = 0
    assert dist.zarr_status(str(tmp_path / "out.zarr")) == (2, 4)
    summary = last_json(invoke(*args))
    assert summary["chunks_written"] == 2 and summary["resumed"] is True
    assert np.array_equal(group["data"][:], hb.ntt(x, q))


def test_zarr_input_babybear_uint32(tmp_path):
    x = _random(np.random.default_rng(), (8, 32), hb.BABYBEAR).astype(np.uint32)
    dist.to_zarr(x, str(tmp_path / "in.zarr"))
    result = invoke("ntt", tmp_path / "in.zarr", tmp_path / "out.npy", "-q", "babybear", *FAST_CLUSTER, "--json")
    assert last_json(result)["dtype"] == "uint32"
    assert np.array_equal(np.load(tmp_path / "out.npy"), hb.ntt(x, hb.BABYBEAR))


@pytest.mark.parametrize(
    "args, words",
    [
        (("missing.npy", "out.npy", "-q", "goldilocks"), ["IN", "does not exist"]),
        (("in.npy", "out.csv", "-q", "goldilocks"), ["OUT", ".zarr or .npy"]),
        (("in.npy", "out.npy", "-q", "17"), ["modulus"]),
        (("in.npy", "out.npy", "-q", "goldilocks,babybear,17"), ["modulus"]),
        (
            ("in.npy", "out.npy", "-q", "goldilocks", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"),
            ["--workers"],
        ),
    ],
)
def test_bad_input_one_line(tmp_path, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "in.npy", np.zeros((2, 64), dtype=np.uint64))
    assert_clean_failure(invoke("ntt", *args, "--dashboard", "none"), *words)


def test_unreadable_inputs(tmp_path):
    (tmp_path / "empty.zarr").mkdir()
    (tmp_path / "text.npy").write_text("not an array")
    assert_clean_failure(invoke("ntt", tmp_path / "empty.zarr", tmp_path / "o.npy", "-q", "goldilocks"), "Zarr")
    assert_clean_failure(invoke("ntt", tmp_path / "text.npy", tmp_path / "o.npy", "-q", "goldilocks"), ".npy")


def test_entries_above_modulus_fail_cleanly(tmp_path):
    x = np.full((4, 16), 2**40, dtype=np.uint64)
    np.save(tmp_path / "in.npy", x)
    assert_clean_failure(invoke("ntt", tmp_path / "in.npy", tmp_path / "out.npy", "-q", "257", *FAST_CLUSTER))


def test_bad_modulus_text_is_a_usage_error(tmp_path):
    result = invoke("ntt", tmp_path / "in.npy", tmp_path / "out.npy", "-q", "seventeen")
    assert result.exit_code == 2 and "--modulus" in result.output


def test_existing_npy_output_needs_overwrite(tmp_path):
    x = _random(np.random.default_rng(), (2, 16), hb.GOLDILOCKS)
    np.save(tmp_path / "in.npy", x)
    np.save(tmp_path / "out.npy", x)
    args = ("ntt", tmp_path / "in.npy", tmp_path / "out.npy", "-q", "goldilocks", *FAST_CLUSTER)
    assert_clean_failure(invoke(*args), "--overwrite")
    assert invoke(*args, "--overwrite").exit_code == 0
    assert np.array_equal(np.load(tmp_path / "out.npy"), hb.ntt(x, hb.GOLDILOCKS))


def test_runs_on_a_given_scheduler(tmp_path):
    from distributed import LocalCluster

    x = _random(np.random.default_rng(), (6, 32), hb.GOLDILOCKS)
    np.save(tmp_path / "in.npy", x)
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as running:
        summary = last_json(
            invoke(
                "ntt",
                tmp_path / "in.npy",
                tmp_path / "out.zarr",
                "-q",
                "goldilocks",
                "--chunk",
                2,
                "--scheduler",
                running.scheduler_address,
                "--json",
            )
        )
    assert summary["workers"] == 1 and summary["chunks_written"] == 3
    assert np.array_equal(zarr.open_group(str(tmp_path / "out.zarr"), mode="r")["data"][:], hb.ntt(x, hb.GOLDILOCKS))


def test_chunk_counts_of_an_irregular_batch(tmp_path):
    """write_batch reports the chunks the store holds: to_zarr makes irregular chunks regular."""
    import dask.array as dsk

    from hebatch.jobs.io import write_batch

    values = np.random.default_rng().integers(0, 2**63, size=(100, 4), dtype=np.uint64)
    x = dsk.from_array(values, chunks=((10, 30, 20, 40), 4))
    out = write_batch(x, tmp_path / "o.zarr", progress=False)
    group = zarr.open_group(str(tmp_path / "o.zarr"), mode="r")
    assert out["chunks_total"] == out["chunks_written"] == group["data_done"].shape[0]
    assert (group["data"][:] == values).all()
