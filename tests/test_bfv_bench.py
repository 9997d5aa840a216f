"""The BFV benchmark script: its CPU smoke mode runs every operation and writes the JSON it promises."""

import json

from hebatch.benchmarks import bfv as bench


def test_cpu_quick_run_writes_json(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert bench.main(["--cpu", "--quick", "--out", str(tmp_path / "results")]) == 0
    files = sorted((tmp_path / "results").glob("bfv-*.json"))
    assert len(files) == 1 and sorted(p.name for p in tmp_path.iterdir()) == ["results"]
    record = json.loads(files[0].read_text())
    assert record["benchmark"] == "bfv" and record["backend"] == "cpu"
    cases = {(r["variant"], r["case"]): r for r in record["results"]}
    assert set(cases) == {(v, op) for v in ("plain", "fused", "graphs") for op in bench.OPERATIONS}
    for entry in cases.values():
        assert "error" not in entry, entry.get("error")
        assert entry["latency_ms"] > 0 and entry["per_ciphertext_ms"] > 0 and entry["n"] == 4096
    assert "multiply_relin" in capsys.readouterr().out
