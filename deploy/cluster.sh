#!/usr/bin/env bash
# A local Kiln cluster as plain processes on 127.0.0.1, for development and tests: N kiln-server
# replicas, a Redis for the shared function cache (allkeys-lru), a Redis for sessions
# (noeviction), and nginx in front routing by the `kiln-route` header with a consistent hash
# (deploy/k8s/nginx.conf, as in compose.yaml and on Kubernetes).
#
#   deploy/cluster.sh up [N]          start N replicas (default 3) and the rest; prints the front
#   deploy/cluster.sh status          what runs, and each replica's health
#   deploy/cluster.sh down            stop everything (SIGTERM, then SIGKILL after 10 s)
#   deploy/cluster.sh start I         (re)start replica I (1-based)
#   deploy/cluster.sh stop I [SIG]    stop replica I with SIGTERM or SIG (KILL, STOP...)
#   deploy/cluster.sh redis-stop | redis-start    stop or start the cache's Redis
#   deploy/cluster.sh addresses       where each part listens, one a line: front HOST:PORT,
#                                     replica I GRPC METRICS, redis-cache and redis-sessions
#                                     HOST:PORT (as deploy/podman_cluster.sh prints them)
#
# Environment: KILN_CLUSTER_DIR (state, logs; default /tmp/kiln-cluster), KILN_CLUSTER_PORT (the
# front's port, default 50060; replica I listens on +I, its metrics on +100+I, the Redis of
# the cache on +200 and of sessions on +201), KILN_SERVER_BIN, KILN_SERVER_FLAGS (more flags
# for every replica), KILN_CONTAINER_IMAGE (run each replica in a podman container of this image
# instead of the binary).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${KILN_CLUSTER_DIR:-/tmp/kiln-cluster}
BASE=${KILN_CLUSTER_PORT:-50060}
SERVER_BIN=${KILN_SERVER_BIN:-$ROOT/build/server/kiln-server}
NGINX=$(command -v nginx || echo /usr/sbin/nginx)  # /usr/sbin is not on every user's PATH
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
  tail -n 5 "$DIR"/*.log >&2 2>/dev/null || true
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
  local flags=(--host 127.0.0.1 --port $((BASE + $1)) --metrics_port $((BASE + 100 + $1))
    --redis "127.0.0.1:$CACHE_REDIS" --redis_sessions "127.0.0.1:$SESSION_REDIS")
  # shellcheck disable=SC2206
  flags+=(${KILN_SERVER_FLAGS:-})
  if [[ -n ${KILN_CONTAINER_IMAGE:-} ]]; then
    # A container of the image on the host's network; its disk tier is the image's volume.
    # The pid file holds kiln-server's pid as the host sees it.
    local name="kiln-$BASE-$1"
    podman rm -f -v "$name" >/dev/null 2>&1 || true
    podman run -d --rm --name "$name" --network host "$KILN_CONTAINER_IMAGE" "${flags[@]}" >/dev/null
    podman inspect -f '{{.State.Pid}}' "$name" >"$DIR/replica-$1.pid"
  else
    "$SERVER_BIN" "${flags[@]}" --cache_dir "$DIR/cache-$1" >>"$DIR/replica-$1.log" 2>&1 &
    echo $! >"$DIR/replica-$1.pid"
  fi
  wait_port $((BASE + $1))
}

# deploy/k8s/nginx.conf, with this cluster's replicas in place of `kiln:50051` and its port.
write_nginx_conf() {  # replicas
  mkdir -p "$DIR/nginx"
  awk -v n="$1" -v base="$BASE" '
    /server kiln:50051/ {
      for (i = 1; i <= n; i++) printf "    server 127.0.0.1:%d max_fails=1 fail_timeout=2s;\n", base + i
      next
    }
    /listen 50051/ { sub(/listen 50051/, "listen 127.0.0.1:" base) }
    /^worker_processes/ { print "worker_processes 1;"; next }
    { print }' "$ROOT/deploy/k8s/nginx.conf" >"$DIR/nginx.conf"
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
    [[ -n ${KILN_CONTAINER_IMAGE:-} || -x $SERVER_BIN ]] || { echo "cluster: build kiln-server first (./deploy/build.sh kiln-server)" >&2; exit 1; }
    mkdir -p "$DIR"
    echo "$N" >"$DIR/replicas"
    start_redis redis-cache "$CACHE_REDIS" allkeys-lru
    start_redis redis-sessions "$SESSION_REDIS" noeviction
    for i in $(seq "$N"); do start_replica "$i"; done
    write_nginx_conf "$N"
    if ! alive nginx; then
      "$NGINX" -p "$DIR/nginx/" -c "$DIR/nginx.conf" \
        -g "daemon off; pid $DIR/nginx.pid; error_log $DIR/nginx.log warn;" >>"$DIR/nginx.log" 2>&1 &
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
  addresses)
    echo "front 127.0.0.1:$BASE"
    for i in $(seq "$(replicas)"); do
      echo "replica $i 127.0.0.1:$((BASE + i)) 127.0.0.1:$((BASE + 100 + i))"
    done
    echo "redis-cache 127.0.0.1:$CACHE_REDIS"
    echo "redis-sessions 127.0.0.1:$SESSION_REDIS"
    ;;
  *)
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
