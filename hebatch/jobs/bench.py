"""Running the shipped benchmarks (hebatch.benchmarks) as `hebatch bench NAME` does: in a fresh
process, their output passed on line by line, their JSON result written where the caller points."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

from ..device import gpu_available

# benchmark name -> (module of hebatch.benchmarks, or a script of a source checkout's benchmarks/;
#                    its arguments for a quick run; whether it needs a GPU; its option naming the output)
BENCHMARKS = {
    "ntt": ("hebatch.benchmarks.ntt", ["--quick"], True, "--out"),
    "bfv": ("hebatch.benchmarks.bfv", ["--quick"], True, "--out"),
    "zk": ("hebatch.benchmarks.zk", ["--quick"], True, "--out"),
    "zk-cpu": ("hebatch.benchmarks.zk_cpu", ["--quick"], False, "--out"),
    "dist": ("benchmarks/dist_bench.py", ["--quick"], True, "--out-dir"),
}


def _checkout_script(relative: str) -> pathlib.Path:
    """A benchmark script that lives in a source checkout (HEBATCH_REPO, this package's checkout, or the
    current directory); FileNotFoundError saying where it was looked for."""
    roots = [pathlib.Path(os.environ["HEBATCH_REPO"])] if os.environ.get("HEBATCH_REPO") else []
    roots += [pathlib.Path(__file__).resolve().parents[2], pathlib.Path.cwd()]
    for root in roots:
        if (root / relative).is_file():
            return root / relative
    raise FileNotFoundError(
        f"{relative} is not present here: run from a source checkout of hebatch or set HEBATCH_REPO to one"
    )


def bench_command(name: str, *, quick=False, extra=(), out=None, cpu_smoke=False) -> list[str]:
    """The command line that runs benchmark `name`, its result going into the directory `out`."""
    if name not in BENCHMARKS:
        raise ValueError(f"benchmark must be one of {', '.join(BENCHMARKS)}, got {name!r}")
    target, quick_args, needs_gpu, out_option = BENCHMARKS[name]
    if needs_gpu and not cpu_smoke and not gpu_available():
        raise RuntimeError(f"bench {name} needs a CUDA GPU with CuPy; none is visible (bench zk-cpu runs on CPUs)")
    if target.endswith(".py"):
        command = [sys.executable, str(_checkout_script(target))]
    else:
        command = [sys.executable, "-m", target]
    if quick:
        command += quick_args
    if cpu_smoke:
        command += ["--cpu"]
    command += [out_option, os.fspath(out if out is not None else pathlib.Path.cwd())]
    return command + list(extra)


def run_benchmark(name: str, *, quick=False, extra=(), out=None, cpu_smoke=False, echo=print) -> dict:
    """Run a benchmark in a fresh process; its output lines go to echo as they come.

    Returns {"benchmark", "command", "out", "results": [paths of the JSON files it wrote]}; RuntimeError
    when it fails.
    """
    out = pathlib.Path(out if out is not None else pathlib.Path.cwd()).resolve()
    out.mkdir(parents=True, exist_ok=True)
    before = {p: p.stat().st_mtime_ns for p in out.glob("*.json")}
    command = bench_command(name, quick=quick, extra=extra, out=out, cpu_smoke=cpu_smoke)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # the child imports this same hebatch, wherever it was imported from
    package_root = str(pathlib.Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    echo(f"running {' '.join(command[1:])}")
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    ) as process:
        for line in process.stdout:
            echo(line.rstrip("\n"))
    if process.returncode != 0:
        raise RuntimeError(
            f"bench {name} exited with status {process.returncode}: see its message above (options "
            "it does not know are passed on to its script, whose usage it prints)"
        )
    written = sorted(p for p in out.glob("*.json") if before.get(p) != p.stat().st_mtime_ns)
    return {
        "benchmark": name,
        "command": command[1:],
        "out": os.fspath(out),
        "results": [os.fspath(p) for p in written],
    }


def load_results(paths) -> list:
    """The JSON results a run wrote."""
    return [json.loads(pathlib.Path(p).read_text()) for p in paths]


PLOTTED = ("ntt", "bfv", "zk")  # the benchmarks `--plot` draws


def plot_result(name: str, result_path, out_path) -> str:
    """Draw a result JSON of benchmark `name` into out_path (PNG); the path written. ValueError when the
    file holds another benchmark's result."""
    from ..benchmarks.plot import kind_of, plot

    path = pathlib.Path(result_path)
    if path.is_file() and path.suffix == ".json":
        try:
            found = kind_of(json.loads(path.read_text()), os.fspath(path))
        except json.JSONDecodeError:
            found = name  # plot() names the problem
        if found != name:
            raise ValueError(
                f"{os.fspath(path)} is a result of the {found} benchmark: use `hebatch bench {found} "
                f"--from-json {os.fspath(path)} --plot ...`"
            )
    return os.fspath(plot(path, out_path))
