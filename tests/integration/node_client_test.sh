#!/usr/bin/env bash
# The Node.js client example (client/node/seed.js) against a real kiln-server: starts the server
# on a free port of 127.0.0.1, runs the client twice and checks that a + a**10 on [0, 1, 2] is
# [0, 2, 1026] and that the second run's Compile is served from the server's memory cache.
#
# Usage: tests/integration/node_client_test.sh PATH/TO/kiln-server
# Installs client/node's npm dependencies first when client/node/node_modules is missing.
set -euo pipefail

NAME=node_client_test
EXPECTED='a + a**10 on [0, 1, 2] = [0, 2, 1026]'

fail() {
  echo "$NAME: FAIL: $*" >&2
  exit 1
}

[[ $# -eq 1 ]] || { echo "usage: $0 PATH/TO/kiln-server" >&2; exit 2; }
SERVER=$1
[[ -x $SERVER ]] || fail "kiln-server binary '$SERVER' is missing or not executable"
command -v node >/dev/null || fail "node is not installed"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NODE_DIR=$ROOT/client/node
SEED=$NODE_DIR/seed.js
[[ -f $SEED ]] || fail "$SEED is missing"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kiln-node-client.XXXXXX")
LOG=$WORK/server.log
SERVER_PID=

stop_server() {
  [[ -n $SERVER_PID ]] || return 0
  local pid=$SERVER_PID
  SERVER_PID=
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$NAME: kiln-server (pid $pid) did not stop within 10 s of SIGTERM; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    return 1
  fi
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local rc=$?
  stop_server || true
  if [[ $rc -ne 0 && -s $LOG ]]; then
    echo "$NAME: last lines of the server's log:" >&2
    tail -n 20 "$LOG" >&2
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The client's dependencies.
if [[ ! -d $NODE_DIR/node_modules ]]; then
  command -v npm >/dev/null || fail "npm is not installed and $NODE_DIR/node_modules is missing"
  if [[ -f $NODE_DIR/package-lock.json ]]; then
    install=(npm ci --no-audit --no-fund)
  else
    install=(npm install --no-audit --no-fund)
  fi
  echo "$NAME: ${install[*]} in $NODE_DIR"
  (cd "$NODE_DIR" && "${install[@]}") >"$WORK/npm.log" 2>&1 || {
    cat "$WORK/npm.log" >&2
    fail "'${install[*]}' failed in $NODE_DIR"
  }
fi

# The server, on a port the kernel picks.
"$SERVER" --port 0 --metrics_port -1 --host 127.0.0.1 --cache_dir= >"$WORK/server.out" 2>"$LOG" &
SERVER_PID=$!

PORT=
for _ in $(seq 100); do
  line=$(grep -m1 '"msg":"serving"' "$LOG" || true)
  if [[ -n $line ]]; then
    PORT=$(sed -n 's/.*"address":"[^"]*:\([0-9][0-9]*\)".*/\1/p' <<<"$line")
    [[ -n $PORT ]] || fail "no port in the server's serving line: $line"
    break
  fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    wait "$SERVER_PID" && status=0 || status=$?
    SERVER_PID=
    fail "kiln-server exited (status $status) before serving"
  fi
  sleep 0.1
done
[[ -n $PORT ]] || fail "kiln-server did not log \"serving\" within 10 s"
echo "$NAME: kiln-server (pid $SERVER_PID) serving on 127.0.0.1:$PORT"

# Runs the client; its output goes to $OUT. Fails the test when it exits non-zero or its
# output lacks the expected result or the expected cache source.
run_client() {
  local run=$1 source=$2
  local rc=0
  OUT=$(node "$SEED" "127.0.0.1:$PORT" 2>&1) || rc=$?
  printf '%s\n' "$OUT" | sed "s/^/  run $run: /"
  [[ $rc -eq 0 ]] || fail "run $run: seed.js exited with status $rc"
  grep -qxF "$EXPECTED" <<<"$OUT" || fail "run $run: no line '$EXPECTED' in the output"
  grep -qE "^function_id [0-9a-f]{16}\.\.\. \($source\)\$" <<<"$OUT" ||
    fail "run $run: the function did not come from '$source'"
}

run_client 1 'compiled|memory|disk'
run_client 2 memory

stop_server || fail "kiln-server did not stop on SIGTERM"
echo "$NAME: PASS"
