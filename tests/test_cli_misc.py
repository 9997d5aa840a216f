"""`hebatch info`, `cluster`, `bench`, `workflow list/show` and the root group's error handling."""

import json
import pathlib

import pytest

from hebatch.cli import main
from hebatch.device import gpu_available

from .cli_support import assert_clean_failure, invoke, last_json

COMMANDS = [
    ["demo"],
    ["ntt"],
    ["zk-ntt"],
    ["bfv"],
    ["bfv", "keygen"],
    ["bfv", "encrypt"],
    ["bfv", "eval"],
    ["bfv", "decrypt"],
    ["bfv", "demo"],
    ["bench"],
    ["bench", "bfv"],
    ["bench", "zk"],
    ["bench", "ntt"],
    ["bench", "dist"],
    ["bench", "zk-cpu"],
    ["cluster"],
    ["info"],
    ["run"],
    ["workflow"],
    ["workflow", "run"],
    ["workflow", "list"],
    ["workflow", "show"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_help_with_examples(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0, result.output
    assert "Example" in result.output


def test_info_json():
    summary = last_json(invoke("info", "--json"))
    for key in ("hebatch", "numpy", "dask", "distributed", "cupy", "dask-cuda", "devices", "kernel_cache"):
        assert key in summary
    assert isinstance(summary["devices"], list)
    assert (len(summary["devices"]) > 0) == gpu_available()


def test_info_table():
    result = invoke("info")
    assert result.exit_code == 0 and "kernel_cache" in result.stdout


def test_cluster_prints_addresses_and_stops():
    summary = last_json(invoke("cluster", "--cpu", "--workers", "1", "--dashboard", ":0", "--seconds", "0", "--json"))
    assert summary["scheduler"].startswith("tcp://") and summary["workers"] == 1


def test_cluster_bad_protocol_options():
    assert_clean_failure(invoke("cluster", "--cpu", "--nvlink", "--seconds", "0"), "nvlink")


@pytest.mark.skipif(gpu_available(), reason="checks the message shown without a GPU")
def test_bench_without_gpu_says_so():
    assert_clean_failure(invoke("bench", "ntt", "--quick"), "GPU")


@pytest.mark.skipif(gpu_available(), reason="checks the messages shown without a GPU")
@pytest.mark.parametrize(
    "command",
    [
        ["zk-ntt", "--log-n", "8", "--device", "gpu"],
        ["demo", "--log-n", "6", "--device", "gpu"],
        ["bfv", "keygen", "--keys", "k", "--device", "gpu"],
    ],
)
def test_missing_gpu_is_one_line(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_clean_failure(invoke(*command), "GPU")


@pytest.mark.skipif(gpu_available(), reason="checks the message shown without a GPU")
def test_ntt_on_missing_gpu(tmp_path):
    import numpy as np

    np.save(tmp_path / "in.npy", np.zeros((2, 16), dtype=np.uint64))
    assert_clean_failure(
        invoke(
            "ntt",
            tmp_path / "in.npy",
            tmp_path / "out.npy",
            "-q",
            "goldilocks",
            "--device",
            "gpu",
            "--dashboard",
            "none",
        ),
        "gpu",
    )


def test_bench_dist_missing_script(monkeypatch, tmp_path):
    """bench dist runs the script of a source checkout: elsewhere it says where it looked."""
    import hebatch.jobs.bench as jobs_bench

    monkeypatch.setenv("HEBATCH_REPO", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(jobs_bench.BENCHMARKS, "dist", ("benchmarks/no_such_bench.py", [], False, "--out-dir"))
    assert_clean_failure(invoke("bench", "dist"), "no_such_bench.py", "not present")


def test_bench_zk_cpu_writes_where_pointed(tmp_path, monkeypatch):
    """bench zk-cpu runs the shipped module from any directory and writes its JSON into --out only."""
    monkeypatch.chdir(tmp_path)
    payload = last_json(
        invoke("bench", "zk-cpu", "--quick", "--json", "--out", tmp_path / "res", "--log-n", "6", "7", "--repeats", "1")
    )
    [written] = payload["files"]
    assert pathlib.Path(written).parent == (tmp_path / "res").resolve() and pathlib.Path(written).is_file()
    record = payload["results"][0]
    assert record["benchmark"] == "zk-cpu" and [r["n"] for r in record["rows"]] == [64, 128]
    assert record["versions"]["numpy"] and record["date"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]  # nothing else written here


@pytest.mark.slow
def test_bench_dist_cpu_smoke_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the result goes into the current directory
    payload = last_json(invoke("bench", "dist", "--cpu", "--json", "--cases", "host_batch"))
    assert [pathlib.Path(p).parent for p in payload["files"]] == [tmp_path.resolve()]
    assert payload["benchmark"] == "dist" and payload["results"][0]["cases"][0]["case"] == "host_batch"


def test_workflow_list_and_show():
    listed = last_json(invoke("workflow", "list", "--json"))
    assert set(listed.values()) >= {"batch-ntt", "zk-ntt", "bfv-analytics"}
    result = invoke("workflow", "show", "workflows/zk_ntt.toml")
    assert result.exit_code == 0 and json.loads(result.stdout)["job"]["kind"] == "zk-ntt"


def test_unknown_command_is_a_usage_error():
    result = invoke("frobnicate")
    assert result.exit_code == 2 and "No such command" in result.output


def test_one_line_for_multi_line_errors():
    from hebatch.cli.common import one_line

    assert one_line(ValueError("first\n  second")) == "first second"
    assert one_line(KeyError("x")) == "not found: x"
    assert one_line(RuntimeError()) == "RuntimeError"


def test_entry_point_is_the_command_group():
    """pyproject's console script `hebatch` names hebatch.cli:main, the group holding every command."""
    import importlib
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    target = re.search(r'^hebatch\s*=\s*"([\w.]+):(\w+)"', text, re.M)
    assert target, "no hebatch console script in pyproject.toml"
    loaded = getattr(importlib.import_module(target.group(1)), target.group(2))
    assert loaded is main and {"ntt", "zk-ntt", "bfv", "bench", "cluster", "info"} <= set(main.commands)


def _sigint_handler():
    import signal

    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def test_local_cluster_workers_ignore_ctrl_c():
    import signal

    from hebatch.jobs.cluster import local_cluster

    before = signal.getsignal(signal.SIGINT)
    with local_cluster(device="cpu", n_workers=1, processes=True, dashboard_address=None, verbose=False) as client:
        assert signal.getsignal(signal.SIGINT) == before  # this process still takes Ctrl-C
        assert list(client.run(_sigint_handler).values()) == [True]
