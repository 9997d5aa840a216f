#!/usr/bin/env bash
# Start a Dask cluster on this machine for hebatch: one `dask scheduler` and one `dask cuda worker`
# per visible GPU (nvidia-smi -L, or the GPUs listed in CUDA_VISIBLE_DEVICES), in the background,
# with logs and pid files in RUN_DIR. Stop it with stop-local-gpu-cluster.sh.
#
#   deploy/local/start-local-gpu-cluster.sh [--dry-run]
#
# Settings (environment): HEBATCH_RUN_DIR (default ./hebatch-cluster), HEBATCH_PORT (8786),
# HEBATCH_DASHBOARD_PORT (8787), HEBATCH_THREADS (tasks per GPU worker, 4), HEBATCH_HOST
# (address the scheduler listens on and advertises, default 127.0.0.1),
# HEBATCH_WORKER_ARGS (more `dask cuda worker` flags, e.g. "--rmm-pool-size 24GB").
set -euo pipefail

RUN_DIR="${HEBATCH_RUN_DIR:-$PWD/hebatch-cluster}"
PORT="${HEBATCH_PORT:-8786}"
DASHBOARD_PORT="${HEBATCH_DASHBOARD_PORT:-8787}"
THREADS="${HEBATCH_THREADS:-4}"
HOST="${HEBATCH_HOST:-127.0.0.1}"
read -r -a WORKER_ARGS <<< "${HEBATCH_WORKER_ARGS:-}"
DRY_RUN=0
case "${1:-}" in
    "") ;;
    --dry-run) DRY_RUN=1 ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "start-local-gpu-cluster.sh: unknown argument $1" >&2; exit 2 ;;
esac
for name in PORT DASHBOARD_PORT THREADS; do
    if ! [[ "${!name}" =~ ^[1-9][0-9]*$ ]]; then
        echo "start-local-gpu-cluster.sh: HEBATCH_$name must be a positive integer, got '${!name}'" >&2; exit 2
    fi
done

# The GPUs: CUDA_VISIBLE_DEVICES when set (indices or UUIDs), else every GPU nvidia-smi lists.
GPUS=()
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    IFS=',' read -r -a GPUS <<< "$CUDA_VISIBLE_DEVICES"
elif command -v nvidia-smi >/dev/null 2>&1; then
    count="$(nvidia-smi -L | grep -c '^GPU ' || true)"
    for ((i = 0; i < count; i++)); do GPUS+=("$i"); done
fi
if [ ${#GPUS[@]} -eq 0 ]; then
    if [ "$DRY_RUN" = 0 ]; then
        echo "start-local-gpu-cluster.sh: no GPU visible (nvidia-smi -L lists none); for CPU work use" \
             "dist.cluster(device='cpu') instead" >&2
        exit 1
    fi
    # A dry run shows the plan anyway, for one GPU: a real run starts one worker per GPU it finds.
    echo "start-local-gpu-cluster.sh: no GPU visible here; the plan below is for one GPU (a real run" \
         "needs GPUs and starts one worker per GPU)" >&2
    GPUS=(0)
fi

if [ "$DRY_RUN" = 0 ] && [ -f "$RUN_DIR/scheduler.pid" ] && kill -0 "$(cat "$RUN_DIR/scheduler.pid")" 2>/dev/null; then
    echo "start-local-gpu-cluster.sh: a cluster already runs from $RUN_DIR (pid $(cat "$RUN_DIR/scheduler.pid"));" \
         "stop it with stop-local-gpu-cluster.sh" >&2
    exit 1
fi

# Start a command in the background with its log and pid file (only print it with --dry-run).
launch() {
    local name="$1"; shift
    printf '+ [%s]' "$name"; printf ' %q' "$@"; printf '\n'
    if [ "$DRY_RUN" = 0 ]; then
        nohup "$@" > "$RUN_DIR/$name.log" 2>&1 &
        echo $! > "$RUN_DIR/$name.pid"
    fi
}

[ "$DRY_RUN" = 1 ] || mkdir -p "$RUN_DIR"
SCHEDULER_FILE="$RUN_DIR/scheduler.json"
[ "$DRY_RUN" = 1 ] || rm -f "$SCHEDULER_FILE"
launch scheduler dask scheduler --host "$HOST" --port "$PORT" --dashboard-address ":$DASHBOARD_PORT" \
    --scheduler-file "$SCHEDULER_FILE"

if [ "$DRY_RUN" = 0 ]; then
    for _ in $(seq 1 60); do [ -s "$SCHEDULER_FILE" ] && break; sleep 0.5; done
    if [ ! -s "$SCHEDULER_FILE" ]; then
        echo "start-local-gpu-cluster.sh: the scheduler did not start; see $RUN_DIR/scheduler.log" >&2; exit 1
    fi
fi

# One worker process per GPU: each sees only its GPU, so `dask cuda worker` starts exactly one worker.
for i in "${!GPUS[@]}"; do
    launch "worker-$i" env CUDA_VISIBLE_DEVICES="${GPUS[$i]}" \
        dask cuda worker --scheduler-file "$SCHEDULER_FILE" --name "gpu-$i" --nthreads "$THREADS" \
        --resources GPU=1 --dashboard-address ":0" ${WORKER_ARGS[@]+"${WORKER_ARGS[@]}"}
done

if [ "$DRY_RUN" = 0 ]; then
    sleep 3  # a worker that cannot start (no driver, no CuPy, a busy GPU) exits within seconds
    for i in "${!GPUS[@]}"; do
        if ! kill -0 "$(cat "$RUN_DIR/worker-$i.pid")" 2>/dev/null; then
            echo "start-local-gpu-cluster.sh: worker-$i exited; see $RUN_DIR/worker-$i.log" >&2
        fi
    done
fi

ADDRESS="tcp://$HOST:$PORT"
if [ "$DRY_RUN" = 1 ]; then
    echo "dry run: nothing started; a real run would give:"
fi
echo "scheduler: $ADDRESS with ${#GPUS[@]} GPU workers; logs and pid files in $RUN_DIR"
echo "dashboard: http://$HOST:$DASHBOARD_PORT/status"
echo "export HEBATCH_SCHEDULER=$ADDRESS"
