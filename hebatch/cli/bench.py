"""`hebatch bench ntt|bfv|zk|zk-cpu|dist`: run a shipped benchmark and show its table."""

from __future__ import annotations

import json

import click

from ..jobs.bench import PLOTTED, load_results, plot_result, run_benchmark
from .app import main
from .common import CONTEXT, CleanErrorGroup


def _bench_command(name: str, help_text: str, cpu_smoke: bool):
    @click.option("--quick", is_flag=True, help="smaller sizes and fewer repeats")
    @click.option(
        "--out",
        type=click.Path(file_okay=False),
        default=None,
        help="directory of the JSON result (default: the current directory)",
    )
    @click.option("--json", "as_json", is_flag=True, help="print the JSON results on stdout")
    @click.argument("extra", nargs=-1, type=click.UNPROCESSED)
    def command(quick, out, as_json, extra, cpu=False, plot=None, from_json=None):
        if from_json is not None:  # plot a result already written (no benchmark runs, no GPU needed)
            if plot is None:
                raise click.UsageError("--from-json plots a result: add --plot FILE.png")
            click.echo(f"wrote {plot_result(name, from_json, plot)}", err=as_json)
            return
        # the benchmark's own output, its table included, goes to stderr with --json (stdout holds the JSON)
        summary = run_benchmark(
            name, quick=quick, extra=extra, out=out, cpu_smoke=cpu, echo=lambda line: click.echo(line, err=as_json)
        )
        if as_json:
            click.echo(
                json.dumps(
                    {"benchmark": name, "results": load_results(summary["results"]), "files": summary["results"]},
                    default=str,
                )
            )
        else:
            for path in summary["results"]:
                click.echo(f"result: {path}", err=True)
        if plot is not None:
            click.echo(f"wrote {plot_result(name, summary['results'][-1], plot)}", err=True)

    command.__doc__ = help_text
    if name in PLOTTED:
        command = click.option(
            "--from-json",
            type=click.Path(dir_okay=False),
            default=None,
            help="plot this result JSON instead of running (e.g. benchmarks/results/...)",
        )(command)
        command = click.option(
            "--plot",
            type=click.Path(dir_okay=False),
            default=None,
            metavar="FILE.png",
            help="draw time against size beside cuFFT and copy time (needs hebatch[plot])",
        )(command)
    if cpu_smoke:
        command = click.option("--cpu", is_flag=True, help="smoke run on the CPU (tiny sizes, no GPU needed)")(command)
    return bench.command(name, context_settings={"ignore_unknown_options": True, **CONTEXT})(command)


@main.group(cls=CleanErrorGroup, context_settings=CONTEXT)
def bench():
    """Run a benchmark shipped in hebatch.benchmarks and print its table beside the same-run references.

    Results (JSON) go into --out or the current directory. Arguments after the benchmark name go to
    it (see `python -m hebatch.benchmarks.<name> --help`).

    \b
    Examples:
      hebatch bench ntt --quick
      hebatch bench dist --cases copy,large --max-gpus 2
      hebatch bench dist --cpu                 # smoke run on CPU workers, no GPU needed
      hebatch bench bfv --json > bfv.json
      hebatch bench zk-cpu --quick --out results/   # CPU prime-field transforms, no GPU needed
      hebatch bench ntt --from-json benchmarks/results/ntt-H100-80GB-HBM3-2026-11-22.json --plot ntt.png
    """


_bench_command(
    "ntt",
    """NTT throughput beside cuFFT and device copies (hebatch.benchmarks.ntt).

    \b
    Example:
      hebatch bench ntt --quick --algorithms auto,4step
    """,
    cpu_smoke=False,
)
_bench_command(
    "dist",
    """Dask batch throughput, scaling and ntt_large (benchmarks/dist_bench.py of a checkout).

    \b
    Examples:
      hebatch bench dist --quick
      hebatch bench dist --cpu
    """,
    cpu_smoke=True,
)
_bench_command(
    "bfv",
    """BFV operations on the GPU (hebatch.benchmarks.bfv).

    \b
    Examples:
      hebatch bench bfv --quick
      hebatch bench bfv --cpu --quick          # smoke run on the CPU backend
    """,
    cpu_smoke=True,
)
_bench_command(
    "zk",
    """256-bit zk-field NTTs on the GPU (hebatch.benchmarks.zk).

    \b
    Example:
      hebatch bench zk --quick
    """,
    cpu_smoke=False,
)
_bench_command(
    "zk-cpu",
    """Prime-field NTTs, coset NTTs and LDEs on the CPU (hebatch.benchmarks.zk_cpu).

    \b
    Examples:
      hebatch bench zk-cpu --quick
      hebatch bench zk-cpu --fields bn254 bls12-381 --log-n 16 20
    """,
    cpu_smoke=False,
)
