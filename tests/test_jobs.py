"""The library jobs of hebatch.jobs (called directly, as the CLI calls them) and the benchmark harness."""

import ast
import contextlib
import importlib
import json
import pathlib

import numpy as np
import pytest

import hebatch as hb
from hebatch import jobs
from hebatch.benchmarks import harness
from hebatch.device import gpu_available
from hebatch.jobs import bench as jobs_bench
from hebatch.jobs import zk as jobs_zk

from .cli_support import assert_clean_failure, invoke

FAST = {"threads_only": True, "dashboard": "none", "device": "cpu"}
PACKAGE = pathlib.Path(hb.__file__).resolve().parent


def test_batch_ntt_job_is_exact(tmp_path):
    moduli = tuple(hb.ntt_primes(50, 64, 2))
    rng = np.random.default_rng()
    x = np.stack([rng.integers(0, q, size=(6, 64), dtype=np.uint64) for q in moduli], axis=1)
    np.save(tmp_path / "in.npy", x)
    summary = jobs.ntt.run_batch_ntt(
        tmp_path / "in.npy", tmp_path / "out.zarr", moduli, negacyclic=True, chunk=2, progress=False, cluster=FAST
    )
    assert summary["chunks_written"] == summary["chunks_total"] == 3 and summary["workers"] >= 1
    import zarr

    got = np.asarray(zarr.open_group(str(tmp_path / "out.zarr"), mode="r")["data"][:])
    assert np.array_equal(got, hb.ntt(x, moduli, negacyclic=True))


@pytest.mark.parametrize(
    "out, modulus, words", [("out.txt", hb.GOLDILOCKS, ["OUT", ".zarr"]), ("out.npy", 101, ["101"])]
)  # 16 does not divide 101 - 1
def test_batch_ntt_checks_before_a_cluster_starts(tmp_path, monkeypatch, out, modulus, words):
    """Bad arguments fail before any cluster starts (here: starting one would raise)."""
    import hebatch.jobs.cluster as cluster

    def no_cluster(**_):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(cluster, "job_cluster", no_cluster)
    np.save(tmp_path / "in.npy", np.zeros((2, 16), np.uint64))
    with pytest.raises(ValueError) as caught:
        jobs.ntt.run_batch_ntt(tmp_path / "in.npy", tmp_path / out, modulus, cluster=FAST)
    for word in words:
        assert word in str(caught.value)


def test_parse_modulus_names_the_option():
    assert jobs.parse_modulus("goldilocks, babybear") == (hb.GOLDILOCKS, hb.BABYBEAR)
    assert jobs.parse_modulus("0x61") == 97
    with pytest.raises(ValueError, match=r"transform.moduli"):
        jobs.parse_modulus("nope", "transform.moduli")


@pytest.mark.parametrize("field", ["babybear", "bn254"])
def test_zk_ntt_job_verified(field):
    summary = jobs.zk_ntt(field, 8, verify_points=3, device="cpu", seed=None)
    assert summary["points_wrong"] == 0 and summary["round_trip_exact"] and summary["device"] == "cpu"


def test_zk_verification_failure_carries_the_summary(monkeypatch):
    """A wrong transform is caught: ArithmeticError with the summary, and the CLI prints one line."""
    real = jobs_zk.time_transform

    def corrupted(*args, **kwargs):
        y, seconds = real(*args, **kwargs)
        y = y.copy()
        y[0] ^= 1  # point 0 is always checked
        return y, seconds

    monkeypatch.setattr(jobs_zk, "time_transform", corrupted)
    with pytest.raises(ArithmeticError) as caught:
        jobs.zk_ntt("goldilocks", 6, verify_points=2, device="cpu")
    assert caught.value.args[1]["points_wrong"] >= 1
    result = invoke("zk-ntt", "--log-n", 6, "--verify", "--device", "cpu")
    assert_clean_failure(result, "verification failed")
    assert "points_wrong" in result.output  # the summary is shown before the error


def test_zk_checks_name_the_setting():
    with pytest.raises(ValueError, match=r"zk.log_n 28: the field babybear"):
        jobs_zk.check_zk_args(jobs_zk.resolve_field("babybear"), 28, name="zk.log_n")


def test_demo_job(tmp_path):
    summary = jobs.demo(
        out_dir=tmp_path / "d", log_n=6, limbs=2, batch=3, chunk=2, device="cpu", threads_only=True, dashboard="none"
    )
    assert summary["rows_wrong"] == 0 and summary["oracle_points_wrong"] == 0 and summary["shape"] == [3, 2, 64]


@pytest.mark.gpu
def test_demo_on_gpu_workers(tmp_path):
    summary = jobs.demo(out_dir=tmp_path / "d", batch=64, chunk=16, device="gpu", dashboard="none")
    assert summary["device"] == "gpu" and summary["rows_wrong"] == 0 and summary["oracle_points_wrong"] == 0
    assert summary["device_copy_GBps"] > 0 and (tmp_path / "d" / "performance-report.html").is_file()


def test_demo_oracle_catches_a_wrong_entry():
    jobs_demo = importlib.import_module("hebatch.jobs.demo")

    moduli = tuple(hb.ntt_primes(40, 16, 2))
    rng = np.random.default_rng()
    x = np.stack([rng.integers(0, q, 16, dtype=np.uint64) for q in moduli])
    y = hb.ntt(x, moduli, negacyclic=True)
    assert jobs_demo.oracle_points(x, y, moduli, 20, rng) == 0
    y = y + np.uint64(1)  # every entry wrong (still below q: the primes are far below 2^64)
    assert jobs_demo.oracle_points(x, y, moduli, 5, rng) == 5


def test_info_reports_the_backend_table_cache(monkeypatch):
    from hebatch import backend

    stats = {0: {"entries": 2, "bytes": 1024, "budget_bytes": 4096}}
    monkeypatch.setattr(backend, "cache_stats", lambda: stats)
    found = jobs.info()
    assert found["table_cache"] == stats
    assert found["hebatch"] == hb.__version__ and isinstance(found["devices"], list)
    assert (len(found["devices"]) > 0) == gpu_available()


def test_workflows_are_found_and_loaded(monkeypatch):
    monkeypatch.chdir(PACKAGE.parent)
    found = jobs.workflow.find_workflows()
    assert set(found.values()) >= {"batch-ntt", "zk-ntt", "bfv-analytics"}


def test_bench_command_lines(tmp_path):
    command = jobs_bench.bench_command("zk-cpu", quick=True, out=tmp_path, extra=("--repeats", "1"))
    assert command[1:] == ["-m", "hebatch.benchmarks.zk_cpu", "--quick", "--out", str(tmp_path), "--repeats", "1"]
    with pytest.raises(ValueError, match="benchmark must be one of"):
        jobs_bench.bench_command("nope")
    dist = jobs_bench.bench_command("dist", cpu_smoke=True, out=tmp_path)
    assert dist[1].endswith("benchmarks/dist_bench.py") and dist[-2:] == ["--out-dir", str(tmp_path)]


def test_harness_json_writer(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rows = [{"log_n": 10, "ms": 1.5}]
    here = harness.write_result("ntt", {"repeats": 3, "results": rows}, device="NVIDIA Test GPU")
    assert here == (tmp_path / here.name).resolve() and here.name.startswith("ntt-Test-GPU-")
    record = json.loads(here.read_text())
    assert record["benchmark"] == "ntt" and record["device"] == "NVIDIA Test GPU" and record["results"] == rows
    assert record["versions"]["hebatch"] == hb.__version__ and record["date"]
    named = harness.write_result("zk", {"results": []}, tmp_path / "sub" / "mine.json", device="cpu-x")
    assert named == (tmp_path / "sub" / "mine.json").resolve() and named.is_file()
    assert f"wrote {named}" in capsys.readouterr().out


def test_harness_host_timer_rotates_inputs_after_warmup():
    seen = []
    ms = harness.host_time(seen.append, ["a", "b", "c"], repeats=4, warmup=1)
    assert seen == ["a", "a", "b", "c", "a"] and ms >= 0


@pytest.mark.gpu
def test_harness_cuda_timer_and_references():
    import cupy as cp

    x = cp.arange(1 << 16, dtype=cp.uint64)
    assert harness.cuda_time(lambda a: a + 1, [x], repeats=3) > 0
    found = harness.references(1 << 16, 8 << 16, 3)
    assert set(found) == {"cufft_ms", "cufft_graph_ms", "copy_ms", "copy_GBps"}
    assert found["cufft_ms"] > 0 and found["cufft_graph_ms"] > 0 and found["copy_GBps"] > 0
    # graph_time: the device's time of recorded calls; None for a call that waits for the device
    assert harness.graph_time(lambda a: a + 1, [x], repeats=3) > 0
    assert harness.graph_time(lambda a: int((a + 1)[0]), [x], repeats=3) is None


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            found |= {f"{base}.{a.name}" if base.endswith(".") is False else base + a.name for a in node.names}
            found.add(base)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_cli_reaches_only_jobs_and_public_faces():
    """The command line imports no backend, no scheduler internals and no command module of another layer."""
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        for name in _imports(path):
            assert "backend" not in name, f"{path.name} imports {name}"
            assert "distributed." not in name and "dist." not in name, f"{path.name} imports {name}"


def test_jobs_do_not_import_the_cli():
    for path in sorted((PACKAGE / "jobs").glob("*.py")):
        assert not any("cli" in name.split(".") for name in _imports(path)), path.name


def _clock_cupy(step_ms: float):
    """A NumPy-backed stand-in for the CuPy calls of the harness whose events advance a fake clock by
    step_ms per recorded event, so that the timer's arithmetic runs (and is checked) on a CPU."""
    import types

    clock = {"now": 0.0}

    class Event:
        def record(self, stream=None):
            clock["now"] += step_ms
            self.at = clock["now"]

        def synchronize(self):
            pass

    class Stream:  # records nothing: a graph's replay is only the events around it
        def __init__(self, non_blocking=False):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def begin_capture(self):
            pass

        def end_capture(self):
            return types.SimpleNamespace(launch=lambda stream=None: None)

    rng = np.random.default_rng()
    random = types.SimpleNamespace(
        random=lambda shape, dtype: rng.random(shape).astype(dtype),
        randint=lambda lo, hi, size, dtype: rng.integers(lo, hi, size=size, dtype=dtype),
    )
    cuda = types.SimpleNamespace(
        Event=Event,
        Stream=Stream,
        MemoryPool=lambda: types.SimpleNamespace(malloc=None),
        using_allocator=lambda malloc: contextlib.nullcontext(),
        Device=lambda: types.SimpleNamespace(synchronize=lambda: None),
        get_elapsed_time=lambda a, b: b.at - a.at,
    )
    return types.SimpleNamespace(
        cuda=cuda,
        random=random,
        fft=np.fft,
        float32=np.float32,
        int64=np.int64,
        uint64=np.uint64,
        complex64=np.complex64,
        empty_like=np.empty_like,
        get_default_memory_pool=lambda: types.SimpleNamespace(free_all_blocks=lambda: None),
    )


def test_harness_cuda_timer_arithmetic_on_a_fake_clock(monkeypatch):
    """One sample spans back_to_back calls between two events; the result is per call, the median of samples."""
    import sys

    monkeypatch.setitem(sys.modules, "cupy", _clock_cupy(step_ms=4.0))
    calls = []
    assert harness.cuda_time(calls.append, [1, 2], repeats=5, warmup=2, back_to_back=2) == pytest.approx(2.0)
    assert calls == [1, 2] + [1, 2] * 5  # warm-ups, then inputs rotating across the samples
    monkeypatch.setattr(harness, "_REFERENCES", {})
    found = harness.references(64, 8 * 64, 3, rows=4)
    # each reference is one event pair (4 ms) over STREAMED calls; the copy moves 2 x 512 bytes in that time
    assert found["cufft_ms"] == pytest.approx(4.0 / harness.STREAMED)
    assert found["cufft_graph_ms"] == pytest.approx(4.0 / harness.STREAMED)  # one replay of STREAMED calls
    recorded = []
    assert harness.graph_time(recorded.append, [1, 2, 3], repeats=5, calls=4, warmup=1) == pytest.approx(1.0)
    assert recorded == [1] + [1, 2, 3, 1]  # a warm-up, then the recorded calls, inputs rotating
    assert found["copy_GBps"] == pytest.approx(2 * 512 / found["copy_ms"] / 1e6)
    assert harness.references(64, 8 * 64, 3, rows=4) is found  # cached


@pytest.mark.parametrize("out", ["in.zarr", "in.zarr/inner.zarr", "./in.zarr/"])
def test_an_output_inside_the_input_is_refused(tmp_path, monkeypatch, out):
    """Writing into the store being read would destroy it: refused, --overwrite or not, before a cluster."""
    import zarr

    monkeypatch.chdir(tmp_path)
    zarr.open_array("in.zarr", mode="w", shape=(2, 16), dtype="uint64")[:] = 1
    result = invoke("ntt", "in.zarr", out, "-q", "goldilocks", "--overwrite", "--threads-only", "--dashboard", "none")
    assert_clean_failure(result, "would overwrite IN")
    assert (np.asarray(zarr.open_array("in.zarr", mode="r")[:]) == 1).all()
