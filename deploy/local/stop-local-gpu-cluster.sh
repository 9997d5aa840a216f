#!/usr/bin/env bash
# Stop a cluster started by start-local-gpu-cluster.sh: the workers first, then the scheduler,
# each by the pid in its pid file (HEBATCH_RUN_DIR, default ./hebatch-cluster). Logs are kept.
set -euo pipefail

RUN_DIR="${HEBATCH_RUN_DIR:-$PWD/hebatch-cluster}"
if [ ! -d "$RUN_DIR" ]; then
    echo "stop-local-gpu-cluster.sh: no cluster directory $RUN_DIR" >&2; exit 1
fi

# Alive: it exists and is not a zombie waiting for its parent to collect it.
alive() {
    kill -0 "$1" 2>/dev/null && [[ "$(ps -o stat= -p "$1" 2>/dev/null)" != Z* ]]
}

stop() {
    local pidfile="$1" pid
    pid="$(cat "$pidfile")"
    if alive "$pid"; then
        kill -TERM "$pid"
        for _ in $(seq 1 40); do alive "$pid" || break; sleep 0.25; done
        if alive "$pid"; then kill -KILL "$pid"; fi
        echo "stopped $(basename "$pidfile" .pid) (pid $pid)"
    fi
    rm -f "$pidfile"
}

shopt -s nullglob
for pidfile in "$RUN_DIR"/worker-*.pid; do stop "$pidfile"; done
if [ -f "$RUN_DIR/scheduler.pid" ]; then stop "$RUN_DIR/scheduler.pid"; fi
rm -f "$RUN_DIR/scheduler.json"
echo "cluster in $RUN_DIR stopped (logs kept there)"
