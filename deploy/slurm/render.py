"""Render hebatch-job.sbatch.in, the one-allocation SLURM job script for a hebatch batch NTT.

    python deploy/slurm/render.py --input /scratch/in.zarr --output /scratch/out.zarr \\
        --modulus 1152921504606584833 --nodes 2 --gpus-per-node 4 --venv /shared/hebatch/.venv \\
        --partition gpu --account myproj > job.sbatch && sbatch job.sbatch

The template uses string.Template: `${name}` is a value filled here, `$$` a literal `$` for the shell.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from string import Template

TEMPLATE = Path(__file__).with_name("hebatch-job.sbatch.in")
DEFAULTS = {
    "job_name": "hebatch-ntt",
    "nodes": 1,
    "gpus_per_node": 1,
    "cpus_per_gpu": 8,
    "memory_per_gpu": "64G",
    "walltime": "01:00:00",
    "log_dir": ".",
    "run_dir": "hebatch-runs",
    "scheduler_port": 8786,
    "dashboard_port": 8787,
    "threads": 4,
    "worker_timeout": 600,
    "negacyclic": False,
    "inverse": False,
    "partition": None,
    "account": None,
    "extra_directives": (),
}
REQUIRED = ("input", "output", "modulus", "venv")
_POSITIVE = ("nodes", "gpus_per_node", "cpus_per_gpu", "scheduler_port", "dashboard_port", "threads", "worker_timeout")
_WALLTIME = re.compile(r"^(\d+-)?\d{1,2}(:\d{2}){0,2}$")


def _check(values: dict) -> None:
    missing = [k for k in REQUIRED if values.get(k) in (None, "")]
    if missing:
        raise ValueError(f"missing values: {', '.join(missing)}")
    unknown = sorted(set(values) - set(DEFAULTS) - set(REQUIRED))
    if unknown:
        raise ValueError(f"unknown values: {', '.join(unknown)}")
    for key in _POSITIVE:
        v = values[key]
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{key} must be a positive int, got {v!r}")
    if values["threads"] > values["cpus_per_gpu"]:
        raise ValueError(f"threads ({values['threads']}) must not exceed cpus_per_gpu ({values['cpus_per_gpu']})")
    if not _WALLTIME.match(str(values["walltime"])):
        raise ValueError(f"walltime must look like HH:MM:SS or D-HH:MM:SS, got {values['walltime']!r}")
    for key in ("job_name", "memory_per_gpu"):
        if not re.fullmatch(r"[A-Za-z0-9_.+-]+", str(values[key])):
            raise ValueError(f"{key} must be letters, digits and _.+- only, got {values[key]!r}")
    # An #SBATCH line is not read by the shell, so its path cannot be quoted.
    if not re.fullmatch(r"[^\s'\"$`\\]+", str(values["log_dir"])):
        raise ValueError(f"log_dir must be a path without spaces, quotes or $, got {values['log_dir']!r}")


def _modulus_options(modulus) -> str:
    moduli = list(modulus) if isinstance(modulus, (list, tuple)) else [modulus]
    for q in moduli:
        if not isinstance(q, int) or isinstance(q, bool) or q < 2:
            raise ValueError(f"modulus must be an int >= 2 or a list of them, got {q!r}")
    return "--modulus " + ",".join(str(q) for q in moduli)  # hebatch ntt: one comma list, a prime per RNS limb


def template_fields(**values) -> dict:
    """The template's fields for these values (see DEFAULTS and REQUIRED), quoted for the shell."""
    values = {**DEFAULTS, **values}
    _check(values)
    directives = [f"#SBATCH --partition={values['partition']}"] if values["partition"] else []
    directives += [f"#SBATCH --account={values['account']}"] if values["account"] else []
    for d in values["extra_directives"]:
        if not isinstance(d, str) or not d.startswith("-") or "\n" in d:
            raise ValueError(f"extra_directives must be sbatch options like '--mail-type=END', got {d!r}")
        directives.append(f"#SBATCH {d}")
    options = "".join(f"--{flag} " for flag in ("negacyclic", "inverse") if values[flag])
    return {
        **{k: values[k] for k in _POSITIVE},
        **{k: values[k] for k in ("job_name", "memory_per_gpu", "walltime")},
        "log_dir": str(values["log_dir"]),
        "run_dir": shlex.quote(str(values["run_dir"])),
        "venv": shlex.quote(str(values["venv"])),
        "input": shlex.quote(str(values["input"])),
        "output": shlex.quote(str(values["output"])),
        "modulus_options": _modulus_options(values["modulus"]),
        "ntt_options": options,
        "extra_directives": "\n".join(directives),
    }


def render(**values) -> str:
    """The job script for these values (see DEFAULTS and REQUIRED); ValueError names a bad one."""
    fields = template_fields(**values)
    # substitute (not safe_substitute): a placeholder without a value is an error, never left in the script.
    return Template(TEMPLATE.read_text()).substitute(fields)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="Zarr store of the batch")
    parser.add_argument("--output", required=True, help="Zarr store to write")
    parser.add_argument("--modulus", required=True, help="modulus, or one per limb separated by commas")
    parser.add_argument("--venv", required=True, help="virtual environment with hebatch[gpu], same path on all nodes")
    parser.add_argument("--negacyclic", action="store_true")
    parser.add_argument("--inverse", action="store_true")
    parser.add_argument("--partition")
    parser.add_argument("--account")
    parser.add_argument(
        "--extra",
        action="append",
        default=[],
        dest="extra_directives",
        help="another sbatch option, e.g. --extra=--constraint=h100 (repeatable)",
    )
    for key in ("job_name", "memory_per_gpu", "walltime", "log_dir", "run_dir"):
        parser.add_argument("--" + key.replace("_", "-"), default=DEFAULTS[key])
    for key in _POSITIVE:
        parser.add_argument("--" + key.replace("_", "-"), type=int, default=DEFAULTS[key])
    parser.add_argument("-o", "--out", help="write the script here (default: stdout)")
    args = vars(parser.parse_args(argv))
    out = args.pop("out")
    try:
        args["modulus"] = [int(q, 0) for q in args["modulus"].split(",") if q.strip()]
    except ValueError:
        print(f"render.py: --modulus takes integers separated by commas, got {args['modulus']!r}", file=sys.stderr)
        return 2
    try:
        script = render(**args)
    except ValueError as error:
        print(f"render.py: {error}", file=sys.stderr)
        return 2
    if out:
        Path(out).write_text(script)
    else:
        sys.stdout.write(script)
    return 0


if __name__ == "__main__":
    sys.exit(main())
