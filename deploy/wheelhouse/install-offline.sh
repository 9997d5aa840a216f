#!/usr/bin/env bash
# Install hebatch with its GPU extra from a wheelhouse made by build-wheelhouse.sh, with no network.
#
#   deploy/wheelhouse/install-offline.sh WHEELHOUSE [--venv DIR] [--dry-run]
#
# --venv DIR creates (or reuses) a virtual environment there and installs into it; without it the
# current `python3` (an activated venv, say) is used.
set -euo pipefail

WHEELHOUSE=""
VENV=""
DRY_RUN=0
PYTHON="${PYTHON:-python3}"
while [ $# -gt 0 ]; do
    case "$1" in
        --venv) VENV="${2:?--venv needs a directory}"; shift ;;
        --dry-run) DRY_RUN=1 ;;
        -h|--help) sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "install-offline.sh: unknown option $1" >&2; exit 2 ;;
        *)
            if [ -n "$WHEELHOUSE" ]; then echo "install-offline.sh: only one WHEELHOUSE" >&2; exit 2; fi
            WHEELHOUSE="$1" ;;
    esac
    shift
done
if [ -z "$WHEELHOUSE" ]; then echo "install-offline.sh: WHEELHOUSE is required" >&2; exit 2; fi
if ! ls "$WHEELHOUSE"/hebatch-*.whl >/dev/null 2>&1; then
    if [ "$DRY_RUN" = 0 ]; then
        echo "install-offline.sh: no hebatch-*.whl in $WHEELHOUSE (build it with build-wheelhouse.sh)" >&2; exit 2
    fi
    echo "install-offline.sh: note: no hebatch-*.whl in $WHEELHOUSE yet (build it with build-wheelhouse.sh)" >&2
fi

run() {
    printf '+'; printf ' %q' "$@"; printf '\n'
    if [ "$DRY_RUN" = 0 ]; then "$@"; fi
}

if [ -n "$VENV" ]; then
    run "$PYTHON" -m venv "$VENV"
    PYTHON="$VENV/bin/python"
fi
# --no-index: never reach for PyPI; every wheel must come from the wheelhouse.
run "$PYTHON" -m pip install --no-index --find-links "$WHEELHOUSE" --upgrade pip
run "$PYTHON" -m pip install --no-index --find-links "$WHEELHOUSE" "hebatch[gpu]"
if [ -f "$WHEELHOUSE/requirements-gpu.txt" ] && grep -q '^distributed-ucxx' "$WHEELHOUSE/requirements-gpu.txt"; then
    run "$PYTHON" -m pip install --no-index --find-links "$WHEELHOUSE" --requirement "$WHEELHOUSE/requirements-gpu.txt"
fi
if [ "$DRY_RUN" = 1 ]; then
    echo "dry run: nothing installed"
else
    echo "installed; check with: ${VENV:+$VENV/bin/}hebatch info"
fi
