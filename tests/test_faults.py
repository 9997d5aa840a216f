"""Faults survived: a worker process killed mid-job, and a command interrupted with Ctrl-C, then rerun.

These tests start clusters of worker processes and kill them; they hold a lock while they run so that
two of them never run at once (on a busy CI box too). Nothing here waits on time: a worker dies when a
task takes a given ticket, and the interrupted command is interrupted once its first chunk is stored.
"""

import contextlib
import fcntl
import functools
import os
import pathlib
import signal
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import zarr

import hebatch as hb
from hebatch import dist

from .dist_support import residues

pytestmark = pytest.mark.faults

Q = hb.ntt_primes(60, 2**14, 2)
ROOT = pathlib.Path(__file__).resolve().parents[1]
WAIT = 300  # seconds: generous, for a busy 2-core machine


@pytest.fixture(scope="module", autouse=True)
def one_at_a_time():
    """Fault tests never overlap, even when several test processes share the machine: one lock for
    the whole module (its cluster included)."""
    with open(os.path.join(tempfile.gettempdir(), "hebatch-fault-tests.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def processes(one_at_a_time):
    with dist.cluster(
        device="cpu", n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", verbose=False
    ) as client:
        yield client


def _take_ticket(folder: str) -> int:
    """The next number of a counter shared by every process (a file created exclusively per number)."""
    number = 0
    while True:
        try:
            os.close(os.open(os.path.join(folder, str(number)), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return number
        except FileExistsError:
            number += 1


def kill_at(x, folder, at):
    """Pass x through; the task that takes ticket `at` kills its own worker process (so: once)."""
    if _take_ticket(folder) == at:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def _job(source, tickets, at=3):
    killer = functools.partial(kill_at, folder=str(tickets), at=at)
    return dist.ntt(dist.map_chunks(killer, source, name="kill_at"), Q, negacyclic=True)


def test_killed_worker_with_zarr_input_finishes_bit_identical(processes, tmp_path):
    x = np.stack([residues(q, (32, 512)) for q in Q], axis=1)
    dist.to_zarr(dist.from_numpy(x, chunks=4), tmp_path / "in.zarr")
    (tmp_path / "tickets").mkdir()
    out = tmp_path / "out.zarr"
    written = dist.to_zarr(_job(dist.from_zarr(tmp_path / "in.zarr", chunks=4), tmp_path / "tickets"), out)
    assert written == 8 and len(os.listdir(tmp_path / "tickets")) > 8  # a task ran again after the kill
    assert np.array_equal(dist.from_zarr(out).compute(), hb.ntt(x, Q, negacyclic=True))


def test_killed_worker_with_scattered_input(processes, tmp_path):
    x = np.stack([residues(q, (32, 512)) for q in Q], axis=1)
    (tmp_path / "tickets").mkdir()
    out = tmp_path / "out.zarr"
    try:
        dist.to_zarr(_job(dist.from_numpy(x, chunks=4), tmp_path / "tickets"), out)
    except RuntimeError as error:  # the input the dead worker held is gone: the error says so and what to do
        message = str(error)
        assert "dist.from_numpy" in message and "lost" in message, message
        assert "Rerun" in message and "dist.from_zarr" in message, message
        assert dist.zarr_status(out)[0] < 8
    # the rerun (input scattered again, no kill left) resumes the same job and finishes it
    dist.to_zarr(_job(dist.from_numpy(x, chunks=4), tmp_path / "tickets"), out)
    assert dist.zarr_status(out) == (8, 8)
    assert np.array_equal(dist.from_zarr(out).compute(), hb.ntt(x, Q, negacyclic=True))


def _hebatch(*args) -> list[str]:
    return [sys.executable, "-m", "hebatch.cli", *[str(a) for a in args]]


def _stored_bytes(store: pathlib.Path) -> dict:
    return {
        p.relative_to(store).as_posix(): p.read_bytes()
        for p in sorted((store / "data").rglob("*"))
        if p.is_file() and p.name != "zarr.json"
    }


def test_ctrl_c_during_cli_ntt_then_rerun_gives_the_clean_bytes(tmp_path):
    x = np.stack([residues(q, (64, 2**14)) for q in Q], axis=1)
    np.save(tmp_path / "in.npy", x)
    moduli = ",".join(str(q) for q in Q)
    options = ("-q", moduli, "--negacyclic", "--chunk", 1, "--workers", 1, "--dashboard", "none", "--no-progress")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    run = functools.partial(subprocess.run, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=WAIT)

    clean = run(_hebatch("ntt", tmp_path / "in.npy", tmp_path / "clean.zarr", *options))
    assert clean.returncode == 0, clean.stderr

    out = tmp_path / "out.zarr"
    # Ctrl-C reaches the whole foreground process group: the command and its cluster's processes
    command = subprocess.Popen(
        _hebatch("ntt", tmp_path / "in.npy", out, *options),
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        interrupted = _interrupt_after_first_chunk(command, out)
        _, stderr = command.communicate(timeout=WAIT)
    finally:
        if command.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(command.pid, signal.SIGKILL)
            command.wait()
    if interrupted and command.returncode == 0:  # on a busy machine the last chunks can finish before the signal
        assert dist.zarr_status(out) == (64, 64), stderr
    rerun = run(_hebatch("ntt", tmp_path / "in.npy", out, *options))
    assert rerun.returncode == 0, rerun.stderr
    assert dist.zarr_status(out) == (64, 64)
    assert _stored_bytes(out) == _stored_bytes(tmp_path / "clean.zarr")
    expected = hb.ntt(x, Q, negacyclic=True)
    assert np.array_equal(zarr.open_group(str(out), mode="r")["data"][:], expected)


def _interrupt_after_first_chunk(command, out: pathlib.Path) -> bool:
    """Send Ctrl-C (SIGINT to the group) once a chunk of out is marked done; False if the command ended
    first. Polls the store's completion record, which is what the test waits for (no fixed sleeps)."""
    import time

    deadline = time.monotonic() + WAIT
    while command.poll() is None and time.monotonic() < deadline:
        try:
            done = zarr.open_array(str(out), path="data_done", mode="r")[:]
        except Exception:  # not created yet, or being created
            done = np.zeros(1, dtype=np.uint8)
        if done.any():
            os.killpg(command.pid, signal.SIGINT)
            return True
        time.sleep(0.05)  # polling interval only: the condition above is what is waited for
    return False
