"""Key directories: never replaced unless asked, old keys moved aside, private modes from the first byte."""

import os
import stat

import pytest

from hebatch.jobs import bfv as jobs

from .cli_support import assert_clean_failure, invoke, last_json

KEYGEN = ["bfv", "keygen", "--preset", "n4096", "--max-features", 2, "--device", "cpu"]


@pytest.fixture
def open_umask():
    """umask 0, so modes come from the code and not from the umask."""
    previous = os.umask(0)
    yield
    os.umask(previous)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_modes_set_at_creation(tmp_path, open_umask, monkeypatch):
    def no_chmod(*args, **kwargs):
        raise AssertionError("modes must be set when a file is created, not changed afterwards")

    monkeypatch.setattr(os, "chmod", no_chmod)
    monkeypatch.setattr(os, "fchmod", no_chmod)
    directory = tmp_path / "new" / "keys"
    summary = last_json(invoke(*KEYGEN, "--keys", directory, "--json"))
    assert _mode(directory) == 0o700
    assert _mode(directory / "secret.key") == 0o600
    assert {_mode(directory / name) for name in ("public.key", "relin.key", "galois.key", "params.json")} == {0o644}
    assert "moved_aside" not in summary


def test_existing_keys_kept(tmp_path):
    directory = tmp_path / "keys"
    first = last_json(invoke(*KEYGEN, "--keys", directory, "--json"))
    secret = (directory / "secret.key").read_bytes()
    result = invoke(*KEYGEN, "--keys", directory)
    assert_clean_failure(result, "not empty", "--overwrite")
    assert "overwrite=True" not in result.output
    assert (directory / "secret.key").read_bytes() == secret
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keys"]

    second = last_json(invoke(*KEYGEN, "--keys", directory, "--overwrite", "--json"))
    assert second["key_id"] != first["key_id"]
    aside = tmp_path / os.path.basename(second["moved_aside"])
    assert aside.name.startswith("keys.old-") and aside.is_dir()
    assert (aside / "secret.key").read_bytes() == secret  # the old key set is whole, beside the new one
    assert jobs.read_params(aside)[1]["key_id"] == first["key_id"]
    assert jobs.read_params(directory)[1]["key_id"] == second["key_id"]

    third = last_json(invoke(*KEYGEN, "--keys", directory, "--overwrite", "--json"))  # same second: a new name
    assert third["moved_aside"] != second["moved_aside"]
    assert len(list(tmp_path.iterdir())) == 3


def test_empty_directory_made_private(tmp_path, open_umask):
    directory = tmp_path / "keys"
    directory.mkdir(mode=0o755)
    last_json(invoke(*KEYGEN, "--keys", directory, "--json"))
    assert _mode(directory) == 0o700 and _mode(directory / "secret.key") == 0o600


def test_other_contents_refused_before_keygen(tmp_path, monkeypatch):
    directory = tmp_path / "data"
    directory.mkdir()
    (directory / "notes.txt").write_text("mine")

    def no_keygen(*args, **kwargs):
        raise AssertionError("refused input must not generate keys")

    monkeypatch.setattr(jobs.bfv.Context, "keygen", no_keygen)
    assert_clean_failure(invoke(*KEYGEN, "--keys", directory), "not empty")
    assert_clean_failure(invoke(*KEYGEN, "--keys", directory / "notes.txt"), "is a file")
    assert (directory / "notes.txt").read_text() == "mine"
