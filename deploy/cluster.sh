#!/usr/bin/env bash
# A local Kiln cluster as plain processes on 127.0.0.1, for development and tests: N kiln-server
# replicas, a Redis for the shared function cache (allkeys-lru), a Redis for sessions
# (noeviction), and nginx in front routing by the `kiln-route` header with a consistent hash.
#
#   deploy/cluster.sh up [N]          start N replicas (default 3) and the rest; prints the front
#   deploy/cluster.sh status          what runs, and each replica's health
#   deploy/cluster.sh down            stop everything (SIGTERM, then SIGKILL after 10 s)
#   deploy/cluster.sh start I         (re)start replica I (1-based)
#   deploy/cluster.sh stop I [SIG]    stop replica I with SIGTERM or SIG (KILL, STOP...)
#   deploy/cluster.sh redis-stop | redis-start    stop or start the cache's Redis
#
# Environment: KILN_CLUSTER_DIR (state, logs; default /tmp/kiln-cluster), KILN_CLUSTER_PORT (the
# front's port, default 50060; replica I listens on +I, its metrics on +100+I, the Redis of
# the cache on +200 and of sessions on +201), KILN_SERVER_BIN, KILN_SERVER_FLAGS (more flags
# for every replica).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${KILN_CLUSTER_DIR:-/tmp/kiln-cluster}
BASE=${KILN_CLUSTER_PORT:-50060}
SERVER_BIN=${KILN_SERVER_BIN:-$ROOT/build/server/kiln-server}
CACHE_REDIS=$((BASE + 200))
SESSION_REDIS=$((BASE + 201))

# True while the process runs (a zombie, exited but not yet reaped by init, does not).
running() { [[ -n $(ps -o stat= -p "$1" 2>/dev/null | grep -v Z) ]]; }
alive() { [[ -f $DIR/$1.pid ]] && running "$(cat "$DIR/$1.pid")"; }

# Waits until 127.0.0.1:$1 accepts connections, or fails after 20 s.
wait_port() {
  for _ in $(seq 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "cluster: nothing listens on 127.0.0.1:$1 after 20 s (logs in $DIR)" >&2
  return 1
}

start_redis() {  # name port policy
  alive "$1" && return 0
  redis-server --bind 127.0.0.1 --port "$2" --save '' --appendonly no --daemonize no \
    --maxmemory 512mb --maxmemory-policy "$3" --dir "$DIR" >"$DIR/$1.log" 2>&1 &
  echo $! >"$DIR/$1.pid"
  wait_port "$2"
}

start_replica() {  # index
  alive "replica-$1" && return 0
  # shellcheck disable=SC2086
  "$SERVER_BIN" --host 127.0.0.1 --port $((BASE + $1)) --metrics_port $((BASE + 100 + $1)) \
    --redis "127.0.0.1:$CACHE_REDIS" --redis_sessions "127.0.0.1:$SESSION_REDIS" \
    --cache_dir "$DIR/cache-$1" ${KILN_SERVER_FLAGS:-} >>"$DIR/replica-$1.log" 2>&1 &
  echo $! >"$DIR/replica-$1.pid"
  wait_port $((BASE + $1))
}

write_nginx_conf() {  # replicas
  mkdir -p "$DIR/nginx/tmp"
  chmod 0777 "$DIR/nginx/tmp"
  {
    echo "worker_processes 1;"
    echo "pid $DIR/nginx.pid;"
    echo "error_log $DIR/nginx.log warn;"
    echo "events { worker_connections 4096; }"
    echo "http {"
    echo "  access_log off;"
    echo "  client_body_temp_path $DIR/nginx/tmp;"
    echo "  client_max_body_size 0;"
    echo "  # Calls without a route spread at random; with one, the same key finds the same replica."
    echo "  map \$http_kiln_route \$kiln_route { \"\" \$request_id; default \$http_kiln_route; }"
    echo "  upstream kiln {"
    echo "    hash \$kiln_route consistent;"
    for i in $(seq "$1"); do
      echo "    server 127.0.0.1:$((BASE + i)) max_fails=1 fail_timeout=2s;"
    done
    echo "    keepalive 64;"
    echo "  }"
    echo "  server {"
    echo "    listen 127.0.0.1:$BASE http2;"
    echo "    http2_max_concurrent_streams 1024;"
    echo "    location / {"
    echo "      grpc_pass grpc://kiln;"
    echo "      grpc_read_timeout 300s;"
    echo "      grpc_send_timeout 300s;"
    echo "    }"
    echo "  }"
    echo "}"
  } >"$DIR/nginx.conf"
}

health() {  # metrics port: the replica's /healthz first line
  local reply
  reply=$( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3 &&
    cat <&3) 2>/dev/null | tr -d '\r' | sed -n '/^$/,$p' | sed 1d | paste -sd ';' -)
  echo "${reply:-no answer}"
}

stop_pid() {  # name signal
  alive "$1" || return 0
  local pid
  pid=$(cat "$DIR/$1.pid")
  kill "-$2" "$pid" 2>/dev/null || true
  [[ $2 == STOP ]] && return 0
  for _ in $(seq 200); do running "$pid" || break; sleep 0.05; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$DIR/$1.pid"
}

replicas() { cat "$DIR/replicas" 2>/dev/null || echo 0; }

case "${1:-}" in
  up)
    N=${2:-3}
    [[ -x $SERVER_BIN ]] || { echo "cluster: build kiln-server first (./deploy/build.sh kiln-server)" >&2; exit 1; }
    mkdir -p "$DIR"
    echo "$N" >"$DIR/replicas"
    start_redis redis-cache "$CACHE_REDIS" allkeys-lru
    start_redis redis-sessions "$SESSION_REDIS" noeviction
    for i in $(seq "$N"); do start_replica "$i"; done
    write_nginx_conf "$N"
    if ! alive nginx; then
      nginx -p "$DIR/nginx" -c "$DIR/nginx.conf" -g 'daemon off;' >>"$DIR/nginx.log" 2>&1 &
      echo $! >"$DIR/nginx.pid"
    fi
    wait_port "$BASE"
    echo "cluster: $N replicas behind 127.0.0.1:$BASE (logs and state in $DIR)"
    ;;
  status)
    for name in redis-cache redis-sessions nginx; do
      printf '%-16s %s\n' "$name" "$(alive "$name" && echo running || echo stopped)"
    done
    for i in $(seq "$(replicas)"); do
      printf '%-16s %s, 127.0.0.1:%d, health: %s\n' "replica-$i" \
        "$(alive "replica-$i" && echo running || echo stopped)" $((BASE + i)) \
        "$(health $((BASE + 100 + i)))"
    done
    ;;
  down)
    stop_pid nginx TERM
    for i in $(seq "$(replicas)"); do stop_pid "replica-$i" TERM; done
    stop_pid redis-sessions TERM
    stop_pid redis-cache TERM
    echo "cluster: stopped"
    ;;
  start) start_replica "$2" ;;
  stop) stop_pid "replica-$2" "${3:-TERM}" ;;
  redis-stop) stop_pid redis-cache TERM ;;
  redis-start) start_redis redis-cache "$CACHE_REDIS" allkeys-lru ;;
  *)
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
