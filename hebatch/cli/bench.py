"""`hebatch bench ntt|bfv|dist|zk|zk-cpu`: run a benchmark script of benchmarks/ and show its table."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile

import click

from ..backend import gpu_available
from .app import main
from .common import CONTEXT, CleanErrorGroup, repo_root, status

# benchmark name -> (script in benchmarks/, its arguments for a quick run, whether it needs a GPU);
# each script writes its JSON result under $OUT as well
SCRIPTS = {
    "ntt": ("ntt_bench.py", ["--quick"], True),
    "dist": ("dist_bench.py", ["--quick"], True),
    "bfv": ("bfv_bench.py", ["--quick"], True),
    "zk": ("zk_bench.py", ["--quick"], True),
    "zk-cpu": ("zk_cpu_bench.py", ["--log-n", "10", "14", "--repeats", "1"], False),
}


def script_path(name: str) -> pathlib.Path:
    """benchmarks/<script> of the source checkout; FileNotFoundError with the reason otherwise."""
    root = repo_root()
    script = SCRIPTS[name][0]
    if root is None:
        raise FileNotFoundError(f"benchmarks/{script} not found: run from a source checkout of hebatch "
                                "or set HEBATCH_REPO to one")
    path = root / "benchmarks" / script
    if not path.is_file():
        raise FileNotFoundError(f"{path} is not present in this checkout")
    return path


def run_script(name: str, quick: bool, extra: tuple[str, ...], as_json: bool, cpu_smoke: bool = False) -> int:
    path = script_path(name)
    _, quick_args, needs_gpu = SCRIPTS[name]
    if needs_gpu and not cpu_smoke and not gpu_available():
        raise RuntimeError(f"bench {name} needs a CUDA GPU with CuPy; none is visible")
    command = [sys.executable, str(path)]
    if quick:
        command += quick_args
    with tempfile.TemporaryDirectory() as scratch:
        if cpu_smoke:  # a smoke run's numbers are not results: keep them out of benchmarks/results
            command += ["--cpu", "--out-dir", scratch]
        command += list(extra)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(path.parent.parent), env.get("PYTHONPATH")]))
        if as_json:
            env["OUT"] = scratch  # the scripts also write their JSON result under $OUT
        status(f"running {' '.join(command[1:])}")
        # The script's output, its table included, is passed on line by line as it comes (to stderr
        # with --json, so that stdout holds only the JSON).
        with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              bufsize=1) as process:
            for line in process.stdout:
                click.echo(line, nl=False, err=as_json)
        if process.returncode != 0:
            raise RuntimeError(f"benchmarks/{path.name} exited with status {process.returncode}")
        if as_json:
            results = sorted(pathlib.Path(scratch).rglob("*.json"))
            payload = {"benchmark": name, "results": [json.loads(p.read_text()) for p in results]}
            click.echo(json.dumps(payload, default=str))
    return 0


def _bench_command(name: str, help_text: str, cpu_smoke: bool):
    @click.option("--quick", is_flag=True, help="smaller sizes and fewer repeats")
    @click.option("--json", "as_json", is_flag=True, help="print the script's JSON results on stdout")
    @click.argument("extra", nargs=-1, type=click.UNPROCESSED)
    def command(quick, as_json, extra, **kwargs):
        run_script(name, quick, extra, as_json, cpu_smoke=kwargs.get("cpu", False))

    command.__doc__ = help_text
    if cpu_smoke:
        smoke = click.option("--cpu", is_flag=True, help="smoke run of the script on a CPU cluster (tiny sizes)")
        command = smoke(command)
    return bench.command(name, context_settings={"ignore_unknown_options": True, **CONTEXT})(command)


@main.group(cls=CleanErrorGroup, context_settings=CONTEXT)
def bench():
    """Run a benchmark of benchmarks/ (GPU) and print its table beside the same-run references.

    Arguments after the benchmark name go to the script (see `python benchmarks/<script> --help`).

    \b
    Examples:
      hebatch bench ntt --quick
      hebatch bench dist --cases copy,large --max-gpus 2
      hebatch bench dist --cpu                 # smoke run on CPU workers, no GPU needed
      hebatch bench bfv --json > bfv.json
      hebatch bench zk-cpu --quick             # CPU prime-field transforms, no GPU needed
    """


_bench_command("ntt", """NTT throughput beside cuFFT and device copies (benchmarks/ntt_bench.py).

    \b
    Example:
      hebatch bench ntt --quick --algorithms auto,4step
    """, cpu_smoke=False)
_bench_command("dist", """Dask batch throughput, scaling and ntt_large (benchmarks/dist_bench.py).

    \b
    Examples:
      hebatch bench dist --quick
      hebatch bench dist --cpu
    """, cpu_smoke=True)
_bench_command("bfv", """BFV operations on the GPU (benchmarks/bfv_bench.py).

    \b
    Example:
      hebatch bench bfv --quick
    """, cpu_smoke=False)
_bench_command("zk", """256-bit zk-field NTTs on the GPU (benchmarks/zk_bench.py).

    \b
    Example:
      hebatch bench zk --quick
    """, cpu_smoke=False)
_bench_command("zk-cpu", """Prime-field NTTs, coset NTTs and LDEs on the CPU (benchmarks/zk_cpu_bench.py).

    \b
    Examples:
      hebatch bench zk-cpu --quick
      hebatch bench zk-cpu --fields bn254 bls12-381 --log-n 16 20
    """, cpu_smoke=False)
