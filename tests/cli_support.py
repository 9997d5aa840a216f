"""Helpers of the command-line tests: invoking `hebatch` in-process and reading its JSON."""

import json

from click.testing import CliRunner

from hebatch.cli import main

FAST_CLUSTER = ["--threads-only", "--dashboard", "none"]  # CPU workers as threads: quick to start


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def last_json(result) -> dict:
    """The JSON object a command printed on stdout (its last line)."""
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])


def assert_clean_failure(result, *words):
    """Non-zero exit, a one-line `Error: ...` naming `words`, and no traceback."""
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    for word in words:
        assert word in errors[0], errors[0]
