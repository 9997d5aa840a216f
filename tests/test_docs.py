"""The docs keep their promises: every Python snippet runs as written, as a script, on a 2-core CPU
machine, and the transcripts show commands that exist as shown."""

import os
import pathlib
import re
import shlex
import subprocess
import sys

import click
import pytest

from hebatch.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "deploy").rglob("*.md"))]
TRANSCRIPTS = sorted((ROOT / "docs" / "transcripts").glob("*.md"))


def _snippets():
    for doc in DOCS:
        text = doc.read_text()
        for match in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            line = text.count("\n", 0, match.start()) + 1
            yield pytest.param(match.group(1), id=f"{doc.relative_to(ROOT)}:{line}")


SNIPPETS = list(_snippets())


def test_snippets_found():
    assert len(SNIPPETS) >= 5


@pytest.mark.parametrize("code", SNIPPETS)
def test_snippet_runs(code, tmp_path):
    (tmp_path / "snippet.py").write_text(code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env["CUDA_VISIBLE_DEVICES"] = ""  # the CPU path, as on a machine without a GPU
    done = subprocess.run(
        [sys.executable, "snippet.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _shown_commands(path):
    """(section title, command) of every `$ hebatch ...` line of a transcript."""
    title = ""
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            title = line[3:]
        elif line.startswith("$ ") and "hebatch" in line:
            words = shlex.split(line[2:])
            if "hebatch" in words:
                yield title, words[words.index("hebatch") :]


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_transcript_commands_exist(path):
    """Every command and option a transcript shows exists, and no option it uses is hidden from --help."""
    shown = list(_shown_commands(path))
    assert shown
    for _, words in shown:
        command, rest = main, words[1:]
        while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
            name, rest = rest[0], rest[1:]
            assert name in command.commands, f"{' '.join(words)}: no command {name!r}"
            command = command.commands[name]
        if command.context_settings.get("ignore_unknown_options"):
            continue  # its options pass through to the benchmark script
        options = {opt: param for param in command.params for opt in param.opts + param.secondary_opts}
        options.update({"--help": None, "-h": None})
        for word in rest:
            if word.startswith("--") or re.fullmatch(r"-[a-zA-Z]", word):
                flag = word.split("=")[0]
                assert flag in options, f"{' '.join(words)}: {command.name} has no option {flag}"
                assert options[flag] is None or not options[flag].hidden, f"{flag} is hidden from --help"


def test_transcripts_show_what_make_demo_runs():
    """A section about `make demo` shows the Makefile's command, and the script that writes the
    transcripts runs that command under that title."""
    recipe = re.search(r"^demo:.*\n\t(.+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    command = recipe.replace("$(BIN)/", "").split()
    sections = [(path, words) for path in TRANSCRIPTS for title, words in _shown_commands(path) if "make demo" in title]
    assert sections
    for path, words in sections:
        assert words == command, f"{path.name} shows {' '.join(words)}; make demo runs {' '.join(command)}"
    script = (ROOT / "docs" / "transcripts" / "make_transcripts.sh").read_text()
    line = next(line for line in script.splitlines() if line.startswith("run ") and "make demo" in line)
    assert shlex.split(line)[2:] == ["hb", *command[1:]], line


def test_dependencies_are_not_installed_as_extras():
    """What pyproject.toml lists as a dependency (bokeh, for the dashboard) is not installed again by
    the deploy files, nor described as something to add."""
    names = {re.split(r"[<>=!~\[; ]", dep, maxsplit=1)[0].lower() for dep in _project()["dependencies"]}
    assert "bokeh" in names
    files = [ROOT / "README.md", *(p for p in (ROOT / "deploy").rglob("*") if p.is_file())]
    for path in files:
        text = path.read_text(errors="replace")
        for name in names:
            for pattern in (rf"pip install [^\n]*['\"]{name}[<>=]", rf"--extra-package '{name}", rf"plus `{name}`"):
                assert not re.search(pattern, text), f"{path.relative_to(ROOT)} installs {name}, a dependency"


def _project() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
