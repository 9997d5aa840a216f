"""Print the requirements of hebatch's runtime and GPU extra, read from pyproject.toml.

The wheelhouse scripts call this so their package list is always the one in pyproject.toml.

    python deploy/wheelhouse/requirements.py [--extra gpu] [--extra ucx] [--pyproject PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
# Not an extra of the package: the UCX communication module for CUDA 13 (UCX/NVLink/InfiniBand transports).
UCX_REQUIREMENTS = ("distributed-ucxx-cu13",)


def _load_toml(path: Path) -> dict:
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:
        try:
            import tomli as tomllib  # the same parser, packaged for Python 3.10
        except ModuleNotFoundError:
            raise RuntimeError("reading pyproject.toml on Python 3.10 needs tomli (pip install tomli)") from None
    with open(path, "rb") as f:
        return tomllib.load(f)


def requirements(pyproject: Path = PYPROJECT, extras=("gpu",), ucx: bool = False) -> list[str]:
    """The runtime dependencies, then those of each extra in `extras`, then UCX's if ucx; no repeats."""
    project = _load_toml(Path(pyproject))["project"]
    optional = project.get("optional-dependencies", {})
    found = list(project.get("dependencies", []))
    for extra in extras:
        if extra not in optional:
            raise ValueError(f"extra {extra!r} is not in {pyproject} (extras there: {', '.join(sorted(optional))})")
        found += optional[extra]
    if ucx:
        found += UCX_REQUIREMENTS
    return list(dict.fromkeys(found))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyproject", type=Path, default=PYPROJECT, help="the pyproject.toml to read")
    parser.add_argument("--extra", action="append", dest="extras", help="an extra to add (default: gpu)")
    parser.add_argument("--ucx", action="store_true", help="add the UCX communication module (distributed-ucxx-cu13)")
    args = parser.parse_args(argv)
    try:
        lines = requirements(args.pyproject, tuple(args.extras or ["gpu"]), args.ucx)
    except (OSError, ValueError, RuntimeError, KeyError) as error:
        print(f"requirements.py: {error}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
