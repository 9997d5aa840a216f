"""The BGV benchmark script: its CPU smoke mode runs every operation and writes the JSON it promises."""

import importlib.util
import json
import pathlib

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "bgv_bench.py"


def test_cpu_quick_run_writes_json(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("bgv_bench", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setenv("OUT", str(tmp_path / "out"))
    (tmp_path / "out").mkdir()
    assert bench.main(["--cpu", "--quick", "--out", str(tmp_path / "results")]) == 0
    files = sorted((tmp_path / "results").glob("bgv-*.json"))
    assert len(files) == 1 and (tmp_path / "out" / files[0].name).exists()
    record = json.loads(files[0].read_text())
    assert record["benchmark"] == "bgv" and record["backend"] == "cpu"
    cases = {r["case"]: r for r in record["results"]}
    assert set(cases) == set(bench.OPERATIONS) and all(r["scheme"] == "bgv" for r in record["results"])
    for entry in cases.values():
        assert "error" not in entry, entry.get("error")
        assert entry["latency_ms"] > 0 and entry["per_ciphertext_ms"] > 0 and entry["n"] == 8192
    assert "mod_switch" in capsys.readouterr().out
