"""Failures a user can cause end in one line `Error: ...` saying what to do, before any cluster starts;
`hebatch --debug` shows the traceback instead."""

import subprocess
import sys

import numpy as np
import pytest

from hebatch.cli.common import one_line
from hebatch.jobs import cluster as job_cluster_module

from .cli_support import assert_clean_failure, invoke

UNREACHABLE = "tcp://127.0.0.1:1"  # nothing listens on port 1


@pytest.fixture
def batch(tmp_path):
    path = tmp_path / "in.npy"
    np.save(path, np.random.default_rng().integers(0, 1 << 31, size=(4, 16), dtype=np.uint64))
    return path


@pytest.fixture
def no_cluster(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("no cluster may start for input that is refused")

    monkeypatch.setattr(job_cluster_module, "job_cluster", refuse)
    monkeypatch.setattr(job_cluster_module.dist, "cluster", refuse)


def test_unreachable_scheduler(tmp_path, batch):
    assert job_cluster_module.CONNECT_TIMEOUT <= 10
    result = invoke("ntt", batch, tmp_path / "out.npy", "-q", "goldilocks", "--scheduler", UNREACHABLE)
    assert_clean_failure(result, UNREACHABLE, "--scheduler", "local cluster")
    assert not (tmp_path / "out.npy").exists()


def test_debug_shows_the_traceback(tmp_path, batch):
    command = [sys.executable, "-m", "hebatch.cli", "ntt", str(batch), str(tmp_path / "o.npy"), "-q", "12"]
    plain = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 1 and "Traceback" not in plain.stderr
    assert plain.stderr.strip().splitlines()[-1].startswith("Error:")
    debug = subprocess.run(command[:3] + ["--debug"] + command[3:], capture_output=True, text=True, timeout=300)
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "not prime" in debug.stderr


def test_existing_output_refused_before_the_cluster(tmp_path, batch, no_cluster):
    out = tmp_path / "out.npy"
    np.save(out, np.arange(3))
    assert_clean_failure(invoke("ntt", batch, out, "-q", "goldilocks"), "exists", "--overwrite")
    assert (np.load(out) == np.arange(3)).all()
    assert_clean_failure(invoke("ntt", batch, batch, "-q", "goldilocks", "--overwrite"), "would overwrite")
    assert_clean_failure(
        invoke("ntt", tmp_path / "missing.npy", tmp_path / "o.npy", "-q", "goldilocks"), "does not exist"
    )
    assert_clean_failure(invoke("ntt", batch, tmp_path / "o.npy", "-q", "12"), "not prime")


def test_cli_messages_name_the_flag():
    error = ValueError("out.zarr/data exists and was not written by to_zarr; pass overwrite=True to replace it")
    assert one_line(error).endswith("pass --overwrite to replace it")
    assert "overwrite=True" not in one_line(error)


def test_scheduler_from_the_environment(tmp_path, batch, monkeypatch):
    """HEBATCH_SCHEDULER is joined like --scheduler (here unreachable: a clean error), never mixed with a
    local cluster's options."""
    monkeypatch.setenv(job_cluster_module.SCHEDULER_ENV, UNREACHABLE)
    result = invoke("ntt", batch, tmp_path / "out.npy", "-q", "goldilocks", "--workers", 2)
    assert_clean_failure(result, "--workers", job_cluster_module.SCHEDULER_ENV)
    with pytest.raises(ConnectionError, match="no Dask scheduler answers"), job_cluster_module.job_cluster():
        pass


def test_bfv_input_refused_before_the_cluster(tmp_path, no_cluster):
    keys = tmp_path / "keys"
    common = ("--keys", keys, "--device", "cpu")
    invoke("bfv", "keygen", "--preset", "n4096", "--max-features", 4, *common)
    bad = np.random.default_rng().integers(0, 65537, size=(3, 4))
    bad[1, 2] = 65537 + int(np.random.default_rng().integers(0, 100))
    np.save(tmp_path / "bad.npy", bad)
    result = invoke("bfv", "encrypt", tmp_path / "bad.npy", tmp_path / "bad.ct.zarr", *common)
    assert_clean_failure(result, "[0, t) = [0, 65537)", str(bad.max()))
    np.save(tmp_path / "flat.npy", bad.reshape(-1))
    assert_clean_failure(invoke("bfv", "encrypt", tmp_path / "flat.npy", tmp_path / "f.ct.zarr", *common), "shape")
    assert not (tmp_path / "bad.ct.zarr").exists()
