"""`hebatch run CONFIG.toml` / `hebatch workflow run|list|show`: scripted batch jobs from TOML files
(the jobs are hebatch.jobs.workflow; see its docstring for the config format)."""

from __future__ import annotations

import json

import click

from ..jobs.workflow import find_workflows, load_config, run_workflow
from .app import main
from .common import CONTEXT, CleanErrorGroup, json_option, report


def _run_options(f):
    options = [
        click.argument("config", type=click.Path(dir_okay=False)),
        click.option(
            "--output-dir",
            "-o",
            type=click.Path(file_okay=False),
            default=None,
            help="where results go (default: job.output_dir of the config)",
        ),
        click.option("--scheduler", metavar="ADDR", default=None, help="run on this Dask scheduler"),
        click.option("--workers", type=click.IntRange(1, 1024), default=None, help="workers of the local cluster"),
        click.option(
            "--device",
            type=click.Choice(["auto", "cpu", "gpu"]),
            default=None,
            help="where chunks run: auto, cpu or gpu (default: cluster.device of the config)",
        ),
        click.option(
            "--threads-only",
            is_flag=True,
            default=None,
            help="CPU workers as threads of this process (quick start for small jobs)",
        ),
        click.option("--fresh", is_flag=True, help="delete earlier outputs instead of resuming them"),
        json_option,
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _run(config, output_dir, scheduler, workers, device, threads_only, fresh, as_json):
    summary = run_workflow(
        config,
        output_dir=output_dir,
        scheduler=scheduler,
        workers=workers,
        device=device,
        threads_only=threads_only or None,
        fresh=fresh,
    )
    shown = dict(summary)
    if not as_json and isinstance(shown.get("seconds"), dict):
        shown["seconds"] = ", ".join(f"2^{k}: {v:.3g} s" for k, v in shown["seconds"].items())
    report(shown, as_json, f"hebatch run {config}")


RUN_HELP = """Run the scripted job of a workflow CONFIG (TOML); rerunning an interrupted job resumes it.

    Results, summary.json and a Dask performance report (performance-report.html) are written to
    the job's output directory.

    \b
    Examples:
      hebatch run workflows/batch_ntt.toml
      hebatch run workflows/zk_ntt.toml --output-dir results/zk --workers 2
      hebatch run workflows/bfv_analytics.toml --json
      hebatch run workflows/batch_ntt.toml --fresh       # start over instead of resuming
    """


@main.command("run", help=RUN_HELP)
@_run_options
def run_command(**kwargs):
    _run(**kwargs)


@main.group("workflow", cls=CleanErrorGroup, context_settings=CONTEXT)
def workflow():
    """Scripted batch jobs (TOML configs in workflows/): run, list, show.

    \b
    Examples:
      hebatch workflow list
      hebatch workflow show workflows/zk_ntt.toml
      hebatch workflow run workflows/batch_ntt.toml
    """


@workflow.command("run", help=RUN_HELP)
@_run_options
def workflow_run(**kwargs):
    _run(**kwargs)


@workflow.command("list")
@json_option
def workflow_list(as_json):
    """The workflow configs in workflows/ of this checkout.

    \b
    Example:
      hebatch workflow list --json
    """
    found = find_workflows()
    report(found, as_json, "workflows")


@workflow.command("show")
@click.argument("config", type=click.Path(dir_okay=False))
def workflow_show(config):
    """A config with every default filled in, as JSON.

    \b
    Example:
      hebatch workflow show workflows/batch_ntt.toml
    """
    click.echo(json.dumps(load_config(config), indent=2, default=str))
