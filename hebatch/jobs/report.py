"""What jobs share: progress lines on stderr, a wall-clock timer, atomic JSON files."""

from __future__ import annotations

import json
import os
import pathlib
import time

from rich.console import Console

# Status lines and progress bars for people go to stderr, so that a command's --json output alone
# is on stdout.
console = Console(stderr=True)


def status(message: str) -> None:
    """A progress line for people, on stderr."""
    console.print(message, highlight=False)


def progress_bar(label: str, unit: str = "", spinner: bool = False):
    """A rich progress bar on stderr, gone when done: `label` (may name {task.description}), the bar,
    "done/total unit" and the elapsed time."""
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    count = "{task.completed}/{task.total}" + (f" {unit}" if unit else "")
    columns = [TextColumn(label), BarColumn(), TextColumn(count), TimeElapsedColumn()]
    return Progress(*([SpinnerColumn()] if spinner else []), *columns, console=console, transient=True)


class Timer:
    """Wall-clock seconds of a with-block, in .seconds."""

    def __enter__(self):
        self.start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
        return False


def write_json(path, value) -> None:
    """Write JSON atomically (a reader never sees half a file, even after a crash)."""
    path = pathlib.Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(value, indent=2, default=str) + "\n")
    os.replace(tmp, path)
