"""`hebatch bench ntt|bfv|zk --plot`: plots from committed result JSON (no GPU), and their errors."""

import json
import pathlib

import pytest

from hebatch.benchmarks.plot import series

from .cli_support import assert_clean_failure, invoke

RESULTS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "results"
COMMITTED = {
    "ntt": "ntt-H100-80GB-HBM3-2026-11-22.json",
    "zk": "zk-H100-80GB-HBM3-2026-11-23-wide-chains.json",
    "bfv": "bfv-H100-80GB-HBM3-2026-11-23-graphs.json",
}


@pytest.mark.parametrize("name", sorted(COMMITTED))
def test_plot_from_committed_json(name, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / f"{name}.png"
    result = invoke("bench", name, "--from-json", str(RESULTS / COMMITTED[name]), "--plot", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_series_has_references_beside_each_case():
    result = json.loads((RESULTS / COMMITTED["ntt"]).read_text())
    _, _, measured, refs = series(result)
    row = next(
        r
        for r in result["results"]
        if r.get("log_n") == 12
        and r.get("batch") == 4096
        and r.get("direction") == "forward"
        and r.get("algorithm") == "auto"
        and r["modulus"] == "q60"
    )
    assert dict(measured["q60 negacyclic"])[4096 * 4096] == row["ms"]
    final = json.loads((RESULTS / "ntt-H100-80GB-HBM3-2026-11-26-final8.json").read_text())
    assert any(r.get("check") for r in final["results"])
    assert "q60" not in series(final)[2]  # the rows that time the entry check are not a series of their own
    copy = dict(refs["device copy, same bytes"])[4096 * 4096]
    assert copy == pytest.approx(2 * 4096 * 4096 * 8 / (row["copy_GBps"] * 1e6))


def test_plot_errors_say_what_to_do(tmp_path):
    pytest.importorskip("matplotlib")
    assert_clean_failure(
        invoke("bench", "ntt", "--from-json", str(tmp_path / "none.json"), "--plot", str(tmp_path / "x.png")),
        "does not exist",
        "hebatch bench",
    )
    assert_clean_failure(
        invoke("bench", "ntt", "--from-json", str(RESULTS / COMMITTED["zk"]), "--plot", str(tmp_path / "x.png")),
        "bench zk --from-json",
    )
    assert_clean_failure(
        invoke("bench", "ntt", "--from-json", str(RESULTS / COMMITTED["ntt"]), "--plot", str(tmp_path / "x.jpg")),
        ".png",
    )
    (tmp_path / "other.json").write_text(json.dumps({"results": [{"x": 1}]}))
    assert_clean_failure(
        invoke("bench", "ntt", "--from-json", str(tmp_path / "other.json"), "--plot", str(tmp_path / "x.png")),
        "hebatch bench ntt|zk|bfv",
    )
    result = invoke("bench", "ntt", "--from-json", str(RESULTS / COMMITTED["ntt"]))
    assert result.exit_code == 2 and "--plot" in result.output
