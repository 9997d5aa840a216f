"""The distributed benchmark script: its CPU smoke mode runs, and it writes the JSON it promises."""

import importlib.util
import json
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "dist_bench.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("dist_bench", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cpu_smoke_run_writes_json(bench, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OUT", str(tmp_path / "out"))
    assert bench.main(["--cpu", "--out-dir", str(tmp_path / "results")]) == 0
    files = sorted((tmp_path / "results").glob("dist-*.json"))
    assert len(files) == 1 and (tmp_path / "out" / files[0].name).exists()
    record = json.loads(files[0].read_text())
    assert record["benchmark"] == "dist" and record["gpus"] == 0 and record["versions"]["dask"]
    cases = {c["case"]: c for c in record["cases"]}
    assert set(cases) == set(bench.CASES)
    for name in ("copy", "overhead", "scaling"):
        assert "skipped" in cases[name]
    memory = cases["host_memory"]["result"]
    assert memory["copy_GBps_one_thread"] > 0 and memory["copy_GBps_threads"] > 0
    host = cases["host_batch"]["result"]["chunks"][0]
    assert host["fraction_of_host_copy"] > 0 and record["wall_seconds"] > 0
    assert host["GBps"] > 0 and host["input_bytes"] > 0 and len(host["runs"]) == 2
    cost = cases["task_cost"]["result"]
    assert cost["on"] == "cpu" and cost["tasks"] == 64 and set(cost) >= {"ntt", "ntt_unchecked", "chain", "noop_graph"}
    assert all(cost[job]["dist_us_per_task"] > 0 and cost[job]["profile_top_own_time"] for job in ("ntt", "chain"))
    large = cases["large"]["result"]
    assert {r["transpose"] for r in large["runs"]} == {"tasks", "direct"}
    for run in large["runs"]:
        assert "error" not in run, run.get("error")
        assert run["transform_seconds"] > 0 and run["transpose_seconds"] > 0
        assert set(run["stage_seconds"]) == {"distribute", "columns", "transpose", "rows", "transpose_out"}
    table = capsys.readouterr().out
    assert "host_batch" in table and "host_memory" in table and "2^16 x2 direct" in table


def test_errors_are_recorded_not_raised(bench, tmp_path, monkeypatch):
    def broken(args, ctx):
        raise RuntimeError("no such device")

    monkeypatch.setitem(bench.CASE_FUNCTIONS, "host_batch", broken)
    monkeypatch.delenv("OUT", raising=False)
    assert bench.main(["--cpu", "--cases", "host_batch", "--out-dir", str(tmp_path)]) == 0
    record = json.loads(next(tmp_path.glob("dist-*.json")).read_text())
    assert "RuntimeError: no such device" in record["cases"][0]["error"]
    assert bench.summary_rows(record)[0][1] == "error"


def test_arguments(bench):
    args = bench.parse_args(["--quick"])
    assert args.large_log_n == [24, 26] and args.repeats == 3 and args.cases == list(bench.CASES)
    assert args.chunk_mib == [64, 256, 1024] and args.host_gib == 4.0 and args.device_gib == 16.0
    assert args.host_chunk_mib == [256, 1024]
    assert bench.parse_args([]).large_log_n == [26, 28]
    with pytest.raises(SystemExit):
        bench.parse_args(["--cases", "copy,warp"])
    with pytest.raises(SystemExit):
        bench.parse_args(["--log-n", "40"])
