"""`hebatch run CONFIG.toml` / `hebatch workflow run|list|show`: scripted batch jobs from TOML files.

A config names its kind and output directory, the cluster to use, and the settings of its kind:

    [job]
    kind = "batch-ntt"                 # batch-ntt | zk-ntt | bfv-analytics
    output_dir = "results/batch-ntt"   # results, summary.json, performance-report.html
    [cluster]
    workers = 2                        # local cluster (scheduler = "tcp://..." joins one instead)
    [input] / [transform] / [zk] / [bfv]   settings of the kind (see workflows/*.toml)

Relative paths are taken from the directory the command runs in.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import pathlib
import sys

import click

from .app import main
from .clusteropts import job_cluster, worker_count
from .common import CONTEXT, CleanErrorGroup, Timer, json_option, repo_root, report, status
from .jobs import KINDS, write_json

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CLUSTER_DEFAULTS = {"scheduler": None, "workers": None, "device": "auto", "threads_only": False,
                    "dashboard": "none"}
REPORT = "performance-report.html"


def load_config(path) -> dict:
    """A workflow config with every default filled in; ValueError naming any unknown or missing key."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"workflow config {os.fspath(path)!r} does not exist")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not valid TOML: {error}") from None
    job = raw.get("job")
    if not isinstance(job, dict) or "kind" not in job:
        raise ValueError(f"{path}: needs a [job] table with kind = one of {', '.join(KINDS)}")
    kind = job["kind"]
    if kind not in KINDS:
        raise ValueError(f"{path}: job.kind must be one of {', '.join(KINDS)}, got {kind!r}")
    defaults = {"job": {"kind": kind, "output_dir": f"results/{kind}"}, "cluster": CLUSTER_DEFAULTS,
                **KINDS[kind]}
    config = copy.deepcopy(defaults)
    for section, values in raw.items():
        if section not in defaults:
            raise ValueError(f"{path}: unknown section [{section}] for a {kind} job "
                             f"(sections: {', '.join(defaults)})")
        if not isinstance(values, dict):
            raise ValueError(f"{path}: {section} must be a table")
        for key, value in values.items():
            if key not in defaults[section]:
                raise ValueError(f"{path}: unknown key {section}.{key} (known: {', '.join(defaults[section])})")
            config[section][key] = value
    return config


def run_workflow(path, *, output_dir=None, scheduler=None, workers=None, device=None, threads_only=None,
                 fresh: bool = False) -> dict:
    """Run the job of a workflow config on its cluster; its summary (also written to summary.json).

    output_dir, scheduler, workers, device, threads_only: override the config. fresh: delete the
    outputs of an earlier run first instead of resuming them.
    """
    from distributed import performance_report

    config = load_config(path)
    kind = config["job"]["kind"]
    out_dir = pathlib.Path(output_dir or config["job"]["output_dir"])
    cluster = dict(config["cluster"])
    for key, value in (("scheduler", scheduler), ("workers", workers), ("device", device),
                       ("threads_only", threads_only)):
        if value is not None:
            cluster[key] = value
    if cluster["scheduler"]:
        cluster["workers"] = None
        cluster["threads_only"] = False
    if fresh and out_dir.exists():
        import shutil

        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    status(f"workflow {path} ({kind}) -> {out_dir}")
    with job_cluster(cluster["scheduler"], cluster["workers"], cluster["device"], bool(cluster["threads_only"]),
                     cluster["dashboard"] or "none") as client:
        with Timer() as timer, performance_report(filename=os.fspath(out_dir / REPORT)):
            summary = _run_kind(kind, config, out_dir, cluster["device"], client)
        summary = {"workflow": os.fspath(path), "kind": kind, "output_dir": os.fspath(out_dir),
                   "workers": worker_count(client), **summary, "job_seconds": timer.seconds,
                   "performance_report": os.fspath(out_dir / REPORT),
                   "finished": datetime.datetime.now().isoformat(timespec="seconds")}
    write_json(out_dir / "summary.json", summary)
    return summary


def _run_kind(kind, config, out_dir, device, client) -> dict:
    from . import jobs

    if kind == "batch-ntt":
        return jobs.batch_ntt_job(config, out_dir, device)
    if kind == "zk-ntt":
        return jobs.zk_ntt_job(config, out_dir, device, client)
    return jobs.bfv_job(config, out_dir, device)


def _run_options(f):
    options = [
        click.argument("config", type=click.Path(dir_okay=False)),
        click.option("--output-dir", "-o", type=click.Path(file_okay=False), default=None,
                     help="where results go (default: job.output_dir of the config)"),
        click.option("--scheduler", metavar="ADDR", default=None, help="run on this Dask scheduler"),
        click.option("--workers", type=click.IntRange(1, 1024), default=None, help="workers of the local cluster"),
        click.option("--device", type=click.Choice(["auto", "cpu", "gpu"]), default=None,
                     help="where chunks run (default: cluster.device of the config)"),
        click.option("--threads-only", is_flag=True, default=None,
                     help="CPU workers as threads of this process (quick start for small jobs)"),
        click.option("--fresh", is_flag=True, help="delete earlier outputs instead of resuming them"),
        json_option,
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _run(config, output_dir, scheduler, workers, device, threads_only, fresh, as_json):
    summary = run_workflow(config, output_dir=output_dir, scheduler=scheduler, workers=workers, device=device,
                           threads_only=threads_only or None, fresh=fresh)
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
    root = repo_root()
    folder = root / "workflows" if root else None
    if folder is None or not folder.is_dir():
        raise FileNotFoundError("no workflows/ folder: run from a source checkout of hebatch or set HEBATCH_REPO")
    found = {}
    for path in sorted(folder.glob("*.toml")):
        shown = os.path.relpath(path)
        found[shown if not shown.startswith("..") else str(path)] = load_config(path)["job"]["kind"]
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
