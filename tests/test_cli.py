import json

from click.testing import CliRunner

from hebatch.cli import main


def test_demo_json_cpu(tmp_path):
    """The demo runs the batch job on a local cluster: Zarr in and out, a performance report, exact checks."""
    out = tmp_path / "demo"
    result = CliRunner().invoke(
        main,
        [
            "demo",
            "--log-n",
            "6",
            "--limbs",
            "2",
            "--batch",
            "6",
            "--chunk",
            "2",
            "--device",
            "cpu",
            "--threads-only",
            "--dashboard",
            "none",
            "--out",
            str(out),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["shape"] == [6, 2, 64] and summary["rows_wrong"] == 0 and summary["oracle_points_wrong"] == 0
    assert summary["host_copy_GBps"] > 0 and summary["throughput_GBps"] > 0
    assert (out / "ntt.zarr").is_dir() and (out / "performance-report.html").is_file()
    assert json.loads((out / "summary.json").read_text())["oracle_points_checked"] == 2 * 8


def test_demo_refuses_a_folder_of_other_files(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    result = CliRunner().invoke(main, ["demo", "--device", "cpu", "--out", str(tmp_path)])
    assert result.exit_code == 1 and "empty or new folder" in result.output
    assert (tmp_path / "mine.txt").exists()


def test_bad_option_exits_nonzero():
    result = CliRunner().invoke(main, ["demo", "--log-n", "40"])
    assert result.exit_code != 0
    assert "log-n" in result.output
