#!/usr/bin/env bash
# Build an offline wheelhouse for GPU nodes without internet: the hebatch wheel (built here from
# this checkout) plus every wheel its runtime and `gpu` extra need, for a target platform and Python.
#
#   deploy/wheelhouse/build-wheelhouse.sh OUTDIR [--ucx] [--python-version 3.12] [--arch x86_64|aarch64]
#       [--platform TAG]... [--extra-package SPEC]... [--dry-run]
#   deploy/wheelhouse/build-wheelhouse.sh --list [--ucx]     # print the requirements, download nothing
#
# The requirement list is generated from pyproject.toml (deploy/wheelhouse/requirements.py), written
# to OUTDIR/requirements-gpu.txt, and never kept by hand, so it cannot drift from the package.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python3}"

usage() {
    sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

OUTDIR=""
UCX=0
LIST=0
DRY_RUN=0
PY_VERSION="3.12"
ARCH="x86_64"
PLATFORMS=()
EXTRA_PACKAGES=()
while [ $# -gt 0 ]; do
    case "$1" in
        --ucx) UCX=1 ;;
        --list) LIST=1 ;;
        --dry-run) DRY_RUN=1 ;;
        --python-version) PY_VERSION="${2:?--python-version needs a value like 3.12}"; shift ;;
        --arch) ARCH="${2:?--arch needs x86_64 or aarch64}"; shift ;;
        --platform) PLATFORMS+=("${2:?--platform needs a wheel platform tag}"); shift ;;
        --extra-package) EXTRA_PACKAGES+=("${2:?--extra-package needs a requirement}"); shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "build-wheelhouse.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *)
            if [ -n "$OUTDIR" ]; then echo "build-wheelhouse.sh: only one OUTDIR, got '$OUTDIR' and '$1'" >&2; exit 2; fi
            OUTDIR="$1" ;;
    esac
    shift
done
if [ "$ARCH" != x86_64 ] && [ "$ARCH" != aarch64 ]; then
    echo "build-wheelhouse.sh: --arch must be x86_64 or aarch64, got '$ARCH'" >&2; exit 2
fi
if ! [[ "$PY_VERSION" =~ ^3\.[0-9]+$ ]]; then
    echo "build-wheelhouse.sh: --python-version must look like 3.12, got '$PY_VERSION'" >&2; exit 2
fi

REQ_ARGS=()
if [ "$UCX" = 1 ]; then REQ_ARGS+=(--ucx); fi
REQUIREMENTS="$("$PYTHON" "$HERE/requirements.py" --pyproject "$ROOT/pyproject.toml" ${REQ_ARGS[@]+"${REQ_ARGS[@]}"})"
if [ ${#EXTRA_PACKAGES[@]} -gt 0 ]; then
    REQUIREMENTS="$REQUIREMENTS"$'\n'"$(printf '%s\n' "${EXTRA_PACKAGES[@]}")"
fi

if [ "$LIST" = 1 ]; then
    printf '%s\n' "$REQUIREMENTS"
    exit 0
fi
if [ -z "$OUTDIR" ]; then
    echo "build-wheelhouse.sh: OUTDIR is required (or --list)" >&2; usage >&2; exit 2
fi
if [ ${#PLATFORMS[@]} -eq 0 ]; then
    # Nodes with glibc >= 2.35 (Ubuntu 22.04, RHEL 9 and later). pip takes a manylinux tag only as
    # written, not the older ones it implies, so every tag a wheel might carry is listed.
    for glibc in 17 24 27 28 31 34 35; do PLATFORMS+=("manylinux_2_${glibc}_$ARCH"); done
    PLATFORMS+=("manylinux2014_$ARCH")
fi
PLATFORM_ARGS=()
for p in "${PLATFORMS[@]}"; do PLATFORM_ARGS+=(--platform "$p"); done

# Every command, printed before it runs (and only printed with --dry-run).
run() {
    printf '+'; printf ' %q' "$@"; printf '\n'
    if [ "$DRY_RUN" = 0 ]; then "$@"; fi
}

run mkdir -p "$OUTDIR"
if [ "$DRY_RUN" = 0 ]; then
    printf '%s\n' "$REQUIREMENTS" > "$OUTDIR/requirements-gpu.txt"
fi
echo "+ requirements -> $OUTDIR/requirements-gpu.txt"
# The hebatch wheel itself, built from this checkout (pure Python plus the kernels/ sources).
run "$PYTHON" -m pip wheel --no-deps --wheel-dir "$OUTDIR" "$ROOT"
# Binary wheels only: the target nodes cannot build anything.
run "$PYTHON" -m pip download --dest "$OUTDIR" --only-binary=:all: \
    --implementation cp --python-version "$PY_VERSION" "${PLATFORM_ARGS[@]}" \
    --requirement "$OUTDIR/requirements-gpu.txt"
# pip itself, so an old pip on the node can be upgraded offline first.
run "$PYTHON" -m pip download --dest "$OUTDIR" --only-binary=:all: --no-deps pip

if [ "$DRY_RUN" = 1 ]; then
    echo "dry run: nothing downloaded and $OUTDIR not created; run again without --dry-run to build it"
else
    echo "wheelhouse ready: $OUTDIR (copy it to the GPU nodes, then run deploy/wheelhouse/install-offline.sh $OUTDIR)"
fi
