import json

from click.testing import CliRunner

from hebatch.cli import main


def test_demo_json_cpu():
    result = CliRunner().invoke(main, ["demo", "--log-n", "8", "--limbs", "2", "--batch", "4", "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["round_trip_exact"] is True
    assert summary["elements"] == 4 * 2 * 256


def test_demo_table():
    result = CliRunner().invoke(main, ["demo", "--log-n", "6", "--batch", "2", "--device", "cpu"])
    assert result.exit_code == 0
    assert "throughput_GBps" in result.output


def test_bad_option_exits_nonzero():
    result = CliRunner().invoke(main, ["demo", "--log-n", "40"])
    assert result.exit_code != 0
    assert "log-n" in result.output
