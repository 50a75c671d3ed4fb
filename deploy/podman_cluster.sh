#!/usr/bin/env bash
# deploy/cluster.sh's cluster and verbs, run by rootful podman from the deployment files
# themselves: KILN_CLUSTER_MODE=compose runs deploy/compose.yaml with podman-compose, and
# KILN_CLUSTER_MODE=kube runs deploy/k8s with `podman kube play` (rendered for podman 4.3 by
# deploy/k8s_podman.py). The cluster tests run against it with KILN_CLUSTER_SH naming this
# script (deploy/container_test.sh). The images must exist: localhost/kiln-server:latest,
# localhost/kiln-redis:latest, localhost/kiln-nginx:latest (deploy/container_test.sh builds them).
#
#   deploy/podman_cluster.sh up [N]        start the cluster with N replicas (default 3)
#   deploy/podman_cluster.sh status        what runs, and each replica's health
#   deploy/podman_cluster.sh down          stop and remove everything, volumes and network too
#   deploy/podman_cluster.sh start I       start replica I's container (1-based) again
#   deploy/podman_cluster.sh stop I [SIG]  stop it (TERM: podman stop) or send it SIG (KILL...)
#   deploy/podman_cluster.sh redis-stop | redis-start    stop or start the cache's Redis
#   deploy/podman_cluster.sh addresses     where each part listens, one a line:
#       front HOST:PORT | replica I GRPC METRICS | redis-cache HOST:PORT | redis-sessions HOST:PORT
#
# Only the front is published, on 127.0.0.1:KILN_CLUSTER_PORT; the replicas and Redis are reached
# at their addresses on the cluster's own podman network, which the host routes to (rootful).
# A replica's pid file ($KILN_CLUSTER_DIR/replica-I.pid) holds kiln-server's pid as the host sees
# it, as with deploy/cluster.sh. Under kube play a killed replica is restarted (restartPolicy
# Always), as on Kubernetes; under compose it stays down (compose.yaml sets no restart policy).
#
# Environment: KILN_CLUSTER_MODE (compose, the default, or kube), KILN_CLUSTER_DIR (state and
# logs; default /tmp/kiln-podman-cluster), KILN_CLUSTER_PORT (the front's port, default 50060;
# compose clusters on different ports are apart, kube play runs one cluster at a time: the pods
# take the manifests' names), KILN_SERVER_FLAGS (more flags for every replica).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODE=${KILN_CLUSTER_MODE:-compose}
DIR=${KILN_CLUSTER_DIR:-/tmp/kiln-podman-cluster}
BASE=${KILN_CLUSTER_PORT:-50060}
PROJECT=kiln-$BASE
IMAGES=(localhost/kiln-server:latest localhost/kiln-redis:latest localhost/kiln-nginx:latest)
# The order kube play starts the workloads in: Redis before the replicas, the replicas before
# the front (nginx resolves `kiln` once, when it starts).
KUBE_ORDER=(redis-cache redis-sessions kiln kiln-front)
COMPOSE=(podman-compose --no-ansi -p "$PROJECT" -f "$ROOT/deploy/compose.yaml"
  -f "$DIR/compose.override.yaml")
export KILN_FRONT=127.0.0.1:$BASE  # compose.yaml's published address of the front
case $MODE in
  compose) NET=${PROJECT}_default ;;
  kube) NET=$PROJECT ;;
  *) echo "podman_cluster: KILN_CLUSTER_MODE is compose or kube, not $MODE" >&2; exit 2 ;;
esac

container() {  # role [index]: the container's name
  case $MODE:$1 in
    compose:replica) echo "${PROJECT}_kiln_$2" ;;
    compose:nginx) echo "${PROJECT}_front_1" ;;
    compose:*) echo "${PROJECT}_$1_1" ;;
    kube:replica) echo "kiln-pod-$(($2 - 1))-kiln-server" ;;
    kube:nginx) echo "kiln-front-pod-0-nginx" ;;
    kube:*) echo "$1-pod-0-redis" ;;
  esac
}

ip_of() {  # container: its address on the cluster's network (a pod's, under kube play)
  local c=$1 pod ip
  pod=$(podman inspect -f '{{.Pod}}' "$c" 2>/dev/null) || { echo -; return 0; }
  [[ -n $pod ]] && c=$(podman pod inspect -f '{{.InfraContainerID}}' "$pod")
  ip=$(podman inspect -f "{{with index .NetworkSettings.Networks \"$NET\"}}{{.IPAddress}}{{end}}" \
    "$c" 2>/dev/null || true)
  echo "${ip:--}"
}

is_running() { [[ $(podman inspect -f '{{.State.Running}}' "$1" 2>/dev/null) == true ]]; }

# Waits until HOST:PORT accepts connections, or fails after 60 s.
wait_port() {
  for _ in $(seq 600); do
    (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "podman_cluster: nothing listens on $1 after 60 s (logs: podman logs, $DIR)" >&2
  return 1
}

replicas() { cat "$DIR/replicas" 2>/dev/null || echo 0; }

write_pid() {  # index
  podman inspect -f '{{.State.Pid}}' "$(container replica "$1")" >"$DIR/replica-$1.pid"
}

wait_replica() {  # index
  local ip
  ip=$(ip_of "$(container replica "$1")")
  [[ $ip != - ]] || { echo "podman_cluster: replica $1 has no address" >&2; return 1; }
  wait_port "$ip:50051"
  write_pid "$1"
}

health() {  # HOST:PORT of metrics: the replica's /healthz first line
  local reply
  reply=$( (exec 3<>"/dev/tcp/${1%:*}/${1##*:}" && printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3 &&
    timeout 5 cat <&3) 2>/dev/null | tr -d '\r' | sed -n '/^$/,$p' | sed 1d | paste -sd ';' -)
  echo "${reply:-no answer}"
}

compose_up() {  # replicas
  {
    echo "services:"
    echo "  kiln:"
    echo "    deploy: {replicas: $1}"
    if [[ -n ${KILN_SERVER_FLAGS:-} ]]; then
      echo "    command: $(python3 -c 'import json, shlex, sys
print(json.dumps(shlex.split(sys.argv[1])))' "$KILN_SERVER_FLAGS")"
    fi
  } >"$DIR/compose.override.yaml"
  "${COMPOSE[@]}" up -d --no-build >>"$DIR/compose.log" 2>&1 ||
    { tail -n 20 "$DIR/compose.log" >&2; return 1; }
}

volumes_of() {  # containers: the volumes they mount (the images' anonymous ones too)
  (($#)) || return 0
  podman inspect -f '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}' "$@" |
    tr ' ' '\n' | sed '/^$/d' | sort -u
}

compose_down() {
  local ids
  mapfile -t ids < <(podman ps -aq --filter "label=io.podman.compose.project=$PROJECT")
  volumes_of "${ids[@]}" >"$DIR/volumes"
  if [[ -f $DIR/compose.override.yaml ]]; then
    "${COMPOSE[@]}" down -v >>"$DIR/compose.log" 2>&1 || true
  fi
  # Whatever podman-compose left: the project's containers, their volumes (it leaves the
  # anonymous ones), its network.
  if ((${#ids[@]})); then podman rm -f "${ids[@]}" >/dev/null 2>&1 || true; fi
  xargs -r podman volume rm <"$DIR/volumes" >/dev/null 2>&1 || true
  podman network exists "$NET" && podman network rm -f "$NET" >/dev/null
  return 0
}

kube_up() {  # replicas
  podman network exists "$NET" ||
    podman network create --label "kiln.cluster=$BASE" "$NET" >/dev/null
  python3 "$ROOT/deploy/k8s_podman.py" --out "$DIR/kube" --front "127.0.0.1:$BASE" \
    --replicas "$1" --server-args "${KILN_SERVER_FLAGS:-}" >/dev/null
  local file aliases
  for want in "${KUBE_ORDER[@]}"; do
    read -r _ file aliases < <(awk -v w="$want" '$1 == w' "$DIR/kube/plan")
    [[ -n ${file:-} ]] || { echo "podman_cluster: no workload $want in deploy/k8s" >&2; return 1; }
    local net=$NET sep=:  # each Service that selects the workload: an alias on the network
    for a in $aliases; do net+="${sep}alias=$a"; sep=,; done
    echo "+ podman kube play --network $net $file" >>"$DIR/kube.log"
    local configmaps
    configmaps=$(printf '%s,' "$DIR"/kube/configmap-*.yaml)
    podman kube play --network "$net" --configmap "${configmaps%,}" "$file" \
      >>"$DIR/kube.log" 2>&1 || { tail -n 20 "$DIR/kube.log" >&2; return 1; }
  done
  [[ $(wc -l <"$DIR/kube/plan") == "${#KUBE_ORDER[@]}" ]] ||
    { echo "podman_cluster: deploy/k8s has workloads beyond ${KUBE_ORDER[*]}" >&2; return 1; }
}

kube_down() {
  if [[ -f $DIR/kube/plan ]]; then
    local file ids=()
    for want in "${KUBE_ORDER[@]}"; do
      mapfile -t -O "${#ids[@]}" ids < <(podman ps -aq --filter "name=^$want-pod-[0-9]+-")
    done
    volumes_of "${ids[@]}" >"$DIR/volumes"
    while read -r _ file _; do
      podman kube down "$file" >>"$DIR/kube.log" 2>&1 || true
    done < <(tac "$DIR/kube/plan")
    # Volumes kube down leaves: the ConfigMaps', the claims', the images' anonymous ones.
    cat "$DIR/kube/volumes" "$DIR/volumes" | xargs -r podman volume rm >/dev/null 2>&1 || true
  fi
  podman network exists "$NET" && podman network rm -f "$NET" >/dev/null
  return 0
}

address() {  # role: HOST:PORT of a Redis
  echo "$(ip_of "$(container "$1")"):6379"
}

case "${1:-}" in
  up)
    N=${2:-3}
    for image in "${IMAGES[@]}"; do
      podman image exists "$image" ||
        { echo "podman_cluster: no image $image (deploy/container_test.sh builds it)" >&2; exit 1; }
    done
    mkdir -p "$DIR"
    echo "$N" >"$DIR/replicas"
    "${MODE}_up" "$N"
    wait_port "$(address redis-cache)"
    wait_port "$(address redis-sessions)"
    for i in $(seq "$N"); do wait_replica "$i"; done
    wait_port "127.0.0.1:$BASE"
    echo "podman_cluster: $N replicas ($MODE) behind 127.0.0.1:$BASE (logs and state in $DIR)"
    ;;
  status)
    for role in redis-cache redis-sessions nginx; do
      printf '%-16s %s\n' "$role" \
        "$(is_running "$(container "$role")" && echo running || echo stopped)"
    done
    for i in $(seq "$(replicas)"); do
      c=$(container replica "$i")
      ip=$(ip_of "$c")
      printf '%-16s %s, %s:50051, health: %s\n' "replica-$i" \
        "$(is_running "$c" && echo running || echo stopped)" "$ip" "$(health "$ip:9464")"
    done
    ;;
  addresses)
    echo "front 127.0.0.1:$BASE"
    for i in $(seq "$(replicas)"); do
      ip=$(ip_of "$(container replica "$i")")
      echo "replica $i $ip:50051 $ip:9464"
    done
    echo "redis-cache $(address redis-cache)"
    echo "redis-sessions $(address redis-sessions)"
    ;;
  down)
    mkdir -p "$DIR"
    "${MODE}_down"
    rm -f "$DIR"/replica-*.pid
    echo "podman_cluster: stopped"
    ;;
  start)
    podman start "$(container replica "$2")" >/dev/null
    wait_replica "$2"
    ;;
  stop)
    if [[ ${3:-TERM} == TERM ]]; then
      podman stop -t 10 "$(container replica "$2")" >/dev/null
    else
      podman kill -s "${3}" "$(container replica "$2")" >/dev/null
    fi
    ;;
  redis-stop) podman stop -t 10 "$(container redis-cache)" >/dev/null ;;
  redis-start)
    podman start "$(container redis-cache)" >/dev/null
    wait_port "$(address redis-cache)"
    ;;
  *)
    sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
