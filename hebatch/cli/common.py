"""Shared pieces of the command line: the root group, clean one-line errors, output, argument parsing."""

from __future__ import annotations

import json
import os
import pathlib
import time

import click
from rich.console import Console
from rich.table import Table

from hebatch.field import NAMED_FIELDS

# Status lines, progress bars and tables for people go to stderr; --json output alone goes to stdout.
console = Console(stderr=True)

# Errors of bad input or of the environment that the user can fix: shown as one line, no traceback.
CLEAN_ERRORS = (ValueError, TypeError, FileNotFoundError, FileExistsError, NotADirectoryError, IsADirectoryError,
                PermissionError, RuntimeError, ImportError, NotImplementedError, ArithmeticError)


def one_line(error: BaseException) -> str:
    """The message of an exception as one line (its type name where it has no text)."""
    text = " ".join(str(error).split()) if str(error) else ""
    if isinstance(error, KeyError) and error.args:
        text = f"not found: {error.args[0]}"
    return text or type(error).__name__


class CleanErrorGroup(click.Group):
    """A click group whose commands fail with `Error: <one line>` and exit code 1 on bad input."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):  # click's own (Exit is a RuntimeError)
            raise
        except CLEAN_ERRORS as error:
            raise click.ClickException(one_line(error)) from None


CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def json_option(f):
    """--json: print the result as one JSON object on stdout (status lines stay on stderr)."""
    return click.option("--json", "as_json", is_flag=True, help="print the result as JSON on stdout")(f)


def report(summary: dict, as_json: bool, title: str) -> None:
    """A summary as a table (stdout) or, with --json, as one line of JSON."""
    if as_json:
        click.echo(json.dumps(summary, default=str))
        return
    table = Table(title=title, show_header=False)
    for key, value in summary.items():
        table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    Console().print(table)


def status(message: str) -> None:
    """A progress line for people, on stderr."""
    console.print(message, highlight=False)


# The one-word named fields (goldilocks, babybear) by name, from hebatch.field's table
NAMED_MODULI = {name: f.p for name, f in NAMED_FIELDS.items() if f.limbs == 1}


def parse_modulus(text: str) -> int | tuple[int, ...]:
    """--modulus: an int (decimal or 0x hex), a named field, or a comma list of them (RNS limbs)."""
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or any(not p for p in parts):
        raise click.BadParameter(f"expected an int, a field name or a comma list of them, got {text!r}",
                                 param_hint="--modulus")
    moduli = []
    for part in parts:
        key = part.lower().replace("_", "-")
        if key in NAMED_MODULI:
            moduli.append(NAMED_MODULI[key])
            continue
        try:
            moduli.append(int(part, 0))
        except ValueError:
            raise click.BadParameter(f"{part!r} is neither an int nor one of {', '.join(NAMED_MODULI)}",
                                     param_hint="--modulus") from None
    return moduli[0] if len(moduli) == 1 else tuple(moduli)


class ModulusType(click.ParamType):
    name = "Q"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, tuple)):
            return value
        return parse_modulus(value)


MODULUS = ModulusType()


def repo_root() -> pathlib.Path | None:
    """The top of the source checkout holding this package (benchmarks/, workflows/), if any."""
    env = os.environ.get("HEBATCH_REPO")
    candidates = [pathlib.Path(env)] if env else []
    candidates += [pathlib.Path(__file__).resolve().parents[2], pathlib.Path.cwd()]
    for candidate in candidates:
        if (candidate / "benchmarks").is_dir() or (candidate / "workflows").is_dir():
            return candidate
    return None


class Timer:
    """Wall-clock seconds of a with-block, in .seconds."""

    def __enter__(self):
        self.start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
        return False
