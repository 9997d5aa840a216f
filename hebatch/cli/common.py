"""Shared pieces of the command line: clean one-line errors, output, argument parsing."""

from __future__ import annotations

import json
import os

import click
from rich.console import Console
from rich.table import Table

from ..jobs.ntt import parse_modulus
from ..jobs.report import console, status  # noqa: F401  (status lines and progress go to stderr)

# Errors of bad input or of the environment that the user can fix: shown as one line, no traceback.
CLEAN_ERRORS = (
    ValueError,
    TypeError,
    OSError,  # missing files, permissions, a full disk, an unreachable scheduler
    RuntimeError,
    ImportError,
    NotImplementedError,
    ArithmeticError,
)


def one_line(error: BaseException) -> str:
    """The message of an exception as one line (its type name where it has no text)."""
    # a job's ArithmeticError carries (message, summary): the message is the line
    message = error.args[0] if len(error.args) > 1 and isinstance(error.args[0], str) else str(error)
    text = " ".join(message.split()) if message else ""
    if isinstance(error, KeyError) and error.args:
        text = f"not found: {error.args[0]}"
    # the library's messages name its Python keyword; on the command line it is the flag
    text = text.replace("pass overwrite=True", "pass --overwrite")
    return text or type(error).__name__


class CleanErrorGroup(click.Group):
    """A click group whose commands fail with `Error: <one line>` and exit code 1 on bad input."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):  # click's own (Exit is a RuntimeError)
            raise
        except CLEAN_ERRORS as error:
            if debugging(ctx):
                raise
            raise click.ClickException(one_line(error)) from None


def debugging(ctx: click.Context) -> bool:
    """`hebatch --debug ...`: errors show their traceback instead of one line."""
    return bool(ctx.find_root().params.get("debug"))


def refuse_existing(out_path, overwrite: bool, name: str = "OUT") -> None:
    """An existing .npy output without --overwrite is refused before any cluster starts (a Zarr output
    is resumed instead)."""
    path = os.fspath(out_path)
    if not overwrite and path.endswith(".npy") and os.path.exists(path):
        raise FileExistsError(f"{name} {path!r} exists; pass --overwrite to replace it, or choose another {name}")


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


class ModulusType(click.ParamType):
    """--modulus: an int (decimal or 0x hex), a named field, or a comma list of them (RNS limbs)."""

    name = "Q"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, tuple)):
            return value
        try:
            return parse_modulus(value)
        except ValueError as error:
            self.fail(str(error).removeprefix("--modulus: "), param, ctx)


MODULUS = ModulusType()


def report_checked(job, title: str, as_json: bool, *args, **kwargs) -> dict:
    """Run a job and report its summary; a job whose exact check failed raises ArithmeticError with its
    summary as the second argument: the summary is shown, then the one-line error."""
    try:
        summary = job(*args, **kwargs)
    except ArithmeticError as error:
        if len(error.args) > 1 and isinstance(error.args[1], dict):
            report(error.args[1], as_json, title)
            raise click.ClickException(str(error.args[0])) from None
        raise
    report(summary, as_json, title)
    return summary
