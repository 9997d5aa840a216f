"""Scripted batch jobs from TOML files (`workflows/*.toml`): what each kind reads, runs and writes.

A config names its kind and output directory, the cluster to use, and the settings of its kind:

    [job]
    kind = "batch-ntt"                 # batch-ntt | zk-ntt | bfv-analytics
    output_dir = "results/batch-ntt"   # results, summary.json, performance-report.html
    [cluster]
    workers = 2                        # local cluster (scheduler = "tcp://..." joins one instead)
    [input] / [transform] / [zk] / [bfv]   settings of the kind (see workflows/*.toml)

Relative paths are taken from the directory the job runs in. Every job runs on the Dask cluster of
its run and writes into its output directory: its results, `summary.json` and
`performance-report.html`. A rerun after an interruption resumes: Zarr outputs chunk by chunk
(finished chunks are kept after their checksums are checked; a store made by another job, e.g. after
the config changed, is refused until the run is --fresh), the zk job size by size (finished sizes are
kept in results.json).
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import pathlib
import sys
import time

from ..device import check_device
from .report import Timer, status, write_json

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CLUSTER_DEFAULTS = {"scheduler": None, "workers": None, "device": "auto", "threads_only": False, "dashboard": "none"}
REPORT = "performance-report.html"

BATCH_DEFAULTS = {
    "input": {
        "path": "data/batch-ntt-input.zarr",
        "create_demo": True,
        "batch": 256,
        "log_n": 12,
        "limbs": 4,
        "bits": 60,
        "chunk": 32,
        "seed": None,
    },
    "transform": {
        "moduli": None,
        "negacyclic": True,
        "inverse": False,
        "algorithm": "auto",
        "chunk": None,
        "check_rows": 2,
    },
}
ZK_DEFAULTS = {
    "zk": {
        "field": "goldilocks",
        "log_n": [20, 21, 22],
        "inverse": False,
        "coset": False,
        "verify_points": 2,
        "workers": 0,
        "seed": None,
    },
}
BFV_DEFAULTS = {
    "bfv": {
        "preset": "n4096",
        "records": 256,
        "features": 8,
        "max_value": 15,
        "square": False,
        "mul_const": None,
        "add_const": None,
        "poly": None,
        "dot_with": None,
        "chunk": 32,
        "seed": None,
        "records_path": None,
    },
}
KINDS = {"batch-ntt": BATCH_DEFAULTS, "zk-ntt": ZK_DEFAULTS, "bfv-analytics": BFV_DEFAULTS}


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
    defaults = {"job": {"kind": kind, "output_dir": f"results/{kind}"}, "cluster": CLUSTER_DEFAULTS, **KINDS[kind]}
    config = copy.deepcopy(defaults)
    for section, values in raw.items():
        if section not in defaults:
            raise ValueError(f"{path}: unknown section [{section}] for a {kind} job (sections: {', '.join(defaults)})")
        if not isinstance(values, dict):
            raise ValueError(f"{path}: {section} must be a table")
        for key, value in values.items():
            if key not in defaults[section]:
                raise ValueError(f"{path}: unknown key {section}.{key} (known: {', '.join(defaults[section])})")
            config[section][key] = value
    check_device(config["cluster"]["device"], "cluster.device")
    return config


def find_workflows(folder=None) -> dict:
    """{config path: kind} of the *.toml files in folder (default: workflows/ of the current directory
    or of HEBATCH_REPO)."""
    if folder is None:
        roots = [pathlib.Path(os.environ["HEBATCH_REPO"])] if os.environ.get("HEBATCH_REPO") else []
        roots += [pathlib.Path.cwd(), pathlib.Path(__file__).resolve().parents[2]]
        folder = next((r / "workflows" for r in roots if (r / "workflows").is_dir()), None)
    if folder is None or not pathlib.Path(folder).is_dir():
        raise FileNotFoundError("no workflows/ folder: run from a source checkout of hebatch or set HEBATCH_REPO")
    found = {}
    for path in sorted(pathlib.Path(folder).glob("*.toml")):
        shown = os.path.relpath(path)
        found[shown if not shown.startswith("..") else str(path)] = load_config(path)["job"]["kind"]
    return found


def run_workflow(
    path, *, output_dir=None, scheduler=None, workers=None, device=None, threads_only=None, fresh: bool = False
) -> dict:
    """Run the job of a workflow config on its cluster; its summary (also written to summary.json).

    output_dir, scheduler, workers, device, threads_only: override the config. fresh: delete the
    outputs of an earlier run first instead of resuming them.
    """
    from distributed import performance_report

    from .cluster import job_cluster, worker_count

    config = load_config(path)
    kind = config["job"]["kind"]
    out_dir = pathlib.Path(output_dir or config["job"]["output_dir"])
    cluster = dict(config["cluster"])
    for key, value in (
        ("scheduler", scheduler),
        ("workers", workers),
        ("device", device),
        ("threads_only", threads_only),
    ):
        if value is not None:
            cluster[key] = value
    check_device(cluster["device"], "--device")
    if cluster["scheduler"]:
        cluster["workers"] = None
        cluster["threads_only"] = False
    if fresh and out_dir.exists():
        import shutil

        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    status(f"workflow {path} ({kind}) -> {out_dir}")
    with job_cluster(
        cluster["scheduler"],
        cluster["workers"],
        cluster["device"],
        bool(cluster["threads_only"]),
        cluster["dashboard"] or "none",
    ) as client:
        with Timer() as timer, performance_report(filename=os.fspath(out_dir / REPORT)):
            summary = RUNNERS[kind](config, out_dir, cluster["device"], client)
        summary = {
            "workflow": os.fspath(path),
            "kind": kind,
            "output_dir": os.fspath(out_dir),
            "workers": worker_count(client),
            **summary,
            "job_seconds": timer.seconds,
            "performance_report": os.fspath(out_dir / REPORT),
            "finished": datetime.datetime.now().isoformat(timespec="seconds"),
        }
    write_json(out_dir / "summary.json", summary)
    return summary


# -- batch NTT over a Zarr dataset ---------------------------------------------------------------------


def _moduli_setting(value):
    from .ntt import parse_modulus

    if isinstance(value, (list, tuple)):
        moduli = tuple(parse_modulus(str(v), "transform.moduli") for v in value)
        return moduli if len(moduli) > 1 else moduli[0]
    return parse_modulus(str(value), "transform.moduli")


def batch_ntt_job(config: dict, out_dir: pathlib.Path, device: str, client=None) -> dict:
    from .ntt import batch_ntt, check_rows, dataset_moduli, make_demo_dataset

    source, transform = config["input"], config["transform"]
    in_path = pathlib.Path(source["path"])
    created = None
    if not in_path.exists():
        if not source["create_demo"]:
            raise FileNotFoundError(
                f"input.path {os.fspath(in_path)!r} does not exist (set input.create_demo = true "
                "to create a demo dataset there)"
            )
        status(f"creating the demo dataset {in_path}")
        created = make_demo_dataset(
            in_path,
            batch=source["batch"],
            log_n=source["log_n"],
            limbs=source["limbs"],
            bits=source["bits"],
            chunk=source["chunk"],
            seed=source["seed"],
        )
    if transform["moduli"] is not None:
        moduli = _moduli_setting(transform["moduli"])
    else:
        moduli = dataset_moduli(in_path)
        if moduli is None:
            raise ValueError(f"transform.moduli is not set and {os.fspath(in_path)!r} records no moduli")
        moduli = moduli if len(moduli) > 1 else moduli[0]
    summary = batch_ntt(
        in_path,
        out_dir / "ntt.zarr",
        moduli,
        negacyclic=transform["negacyclic"],
        inverse=transform["inverse"],
        algorithm=transform["algorithm"],
        chunk=transform["chunk"],
        device=device,
        progress=True,
        overwrite_hint="--fresh (or another output_dir)",
    )
    summary["rows_checked"] = transform["check_rows"]
    summary["rows_wrong"] = check_rows(
        in_path,
        out_dir / "ntt.zarr",
        moduli,
        negacyclic=transform["negacyclic"],
        inverse=transform["inverse"],
        rows=transform["check_rows"],
    )
    summary["created_input"] = created is not None
    if summary["rows_wrong"]:
        raise RuntimeError(f"{summary['rows_wrong']} of the checked output rows differ from hb.ntt")
    return summary


# -- zk NTTs of 2^20 .. 2^28 points --------------------------------------------------------------------


def zk_ntt_job(config: dict, out_dir: pathlib.Path, device: str, client) -> dict:
    from .zk import check_zk_args, resolve_field, spread_case, zk_case

    settings = config["zk"]
    field = resolve_field(str(settings["field"]), "zk.field")
    sizes = settings["log_n"]
    sizes = [sizes] if isinstance(sizes, int) else list(sizes)
    workers = int(settings["workers"] or 0)
    coset = bool(settings["coset"])
    if coset and workers >= 2:
        raise ValueError("zk.coset runs on one device: set zk.workers = 0")
    for log_n in sizes:
        check_zk_args(field, log_n, coset=coset, spread=workers >= 2, name="zk.log_n")
    results_path = out_dir / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else []
    done = {(r["field"], r["log_n"], r["inverse"], r.get("coset", False)) for r in results}
    skipped = 0
    for log_n in sizes:
        if (field.name, log_n, settings["inverse"], coset) in done:
            skipped += 1
            status(f"2^{log_n}: already in {results_path} (resumed)")
            continue
        status(f"2^{log_n} over {field.name} ...")
        seed = None if settings["seed"] is None else int(settings["seed"]) + log_n
        if workers >= 2:
            record = spread_case(
                field, log_n, settings["inverse"], int(settings["verify_points"]), seed, device, workers
            )
        else:
            future = client.submit(
                zk_case,
                field.name,
                log_n,
                bool(settings["inverse"]),
                int(settings["verify_points"]),
                seed,
                device,
                coset,
                key=f"zk_ntt_2^{log_n}-{time.time_ns()}",
                pure=False,
            )
            record = future.result()
        results.append(record)
        write_json(results_path, results)  # after each size: an interrupted run keeps what finished
        if record["points_wrong"] or record["round_trip_exact"] is False:
            raise RuntimeError(f"zk NTT of 2^{log_n} over {field.name} failed verification")
    return {
        "field": field.name,
        "sizes": sizes,
        "computed": len(sizes) - skipped,
        "resumed": skipped,
        "results": os.fspath(results_path),
        "seconds": {str(r["log_n"]): r["seconds"] for r in results if r["field"] == field.name},
    }


# -- encrypted analytics with BFV ----------------------------------------------------------------------


def bfv_job(config: dict, out_dir: pathlib.Path, device: str, client=None) -> dict:
    from .bfv import analytics_job

    return analytics_job(config["bfv"], out_dir, device)


RUNNERS = {"batch-ntt": batch_ntt_job, "zk-ntt": zk_ntt_job, "bfv-analytics": bfv_job}
