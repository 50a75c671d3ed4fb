#!/usr/bin/env bash
# Builds the images (kiln-server, and Redis and nginx from Debian's packages) with podman, then
# runs the cluster's tests (tests/cluster) three ways, each stage timed:
#   host     every replica a container of the image; Redis and nginx host processes on
#            127.0.0.1, as deploy/cluster.sh starts them (KILN_CONTAINER_IMAGE)
#   compose  deploy/compose.yaml, run by podman-compose (deploy/podman_cluster.sh)
#   kube     deploy/k8s, run by `podman kube play` (deploy/podman_cluster.sh, deploy/k8s_podman.py)
# Run as root on Debian 12: deploy/container_test.sh [host] [compose] [kube] (default: all three).
# Not part of CI; deploy/README.md says what it shows and what it cannot.
#
# KILN_PREBUILT=build/server/kiln-server makes kiln-server's image from that binary
# (deploy/Dockerfile.prebuilt) in a minute; without it the image builds from source
# (deploy/Dockerfile), which takes as long as a Release build of kiln-server. KILN_IMAGE names
# the image (default localhost/kiln-server:latest, the name compose.yaml and deploy/k8s use).
# The tests need the Python client's native module (a build of kiln_core_python).
#
# No image registry is reachable from these machines, so debian:bookworm and
# debian:bookworm-slim are made locally, once: mmdebstrap --variant=minbase from the Debian
# mirror apt already uses, then podman import. A real user's machine pulls the real images; the
# Dockerfiles are the same.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGE=${KILN_IMAGE:-localhost/kiln-server:latest}
PREBUILT=${KILN_PREBUILT:-}
STAGES=("$@")
((${#STAGES[@]})) || STAGES=(host compose kube)
for s in "${STAGES[@]}"; do
  [[ $s == host || $s == compose || $s == kube ]] ||
    { echo "container_test: a stage is host, compose or kube, not $s" >&2; exit 2; }
done
export DEBIAN_FRONTEND=noninteractive
LOGS=${KILN_CONTAINER_LOGS:-/tmp/kiln-container-test}
mkdir -p "$LOGS"

"$ROOT/deploy/setup.sh"
# podman-compose, and netavark with aardvark-dns: a network's containers find each other by
# name (compose's services, kube play's aliases), as on Docker and Kubernetes.
for p in podman runc mmdebstrap podman-compose netavark aardvark-dns iptables; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    apt-get install -y -qq --no-install-recommends podman runc mmdebstrap podman-compose \
      netavark aardvark-dns iptables
done

# Rootful podman on these machines: runc (the host's mixed cgroup hierarchy stops crun),
# cgroupfs, events in a file, and limits root may set. An existing configuration is kept.
if [[ ! -f /etc/containers/containers.conf ]]; then
  cat >/etc/containers/containers.conf <<'CONF'
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
fi

if ! podman image exists docker.io/library/debian:bookworm-slim; then
  echo "container_test: making debian:bookworm-slim with mmdebstrap (once)"
  tarball=$(mktemp --suffix=.tar)
  mmdebstrap --quiet --variant=minbase bookworm "$tarball"
  podman import --quiet "$tarball" docker.io/library/debian:bookworm-slim >/dev/null
  rm -f "$tarball"
fi
podman image exists docker.io/library/debian:bookworm ||
  podman tag docker.io/library/debian:bookworm-slim docker.io/library/debian:bookworm

# What a stage leaves if it is cut short: the tests stop their clusters, this stops the rest.
cleanup() {
  podman ps -aq --filter 'name=^kiln-[0-9]+(_|-)' | xargs -r podman rm -f >/dev/null 2>&1
  podman pod ls -q --filter 'name=^(kiln|kiln-front|redis-cache|redis-sessions)-pod-[0-9]+$' |
    xargs -r podman pod rm -f >/dev/null 2>&1
  podman network ls -q --filter 'name=^kiln-[0-9]+(_default)?$' |
    xargs -r podman network rm -f >/dev/null 2>&1
  return 0
}
trap cleanup EXIT

build() {  # image dockerfile context [more podman build flags]
  local start
  start=$(date +%s)
  podman build --quiet --format docker --pull=never --network host -f "$2" "${@:4}" -t "$1" \
    "$3" >/dev/null
  echo "container_test: built $1 in $(($(date +%s) - start)) s," \
    "$(($(podman image inspect -f '{{.Size}}' "$1") / 1000000)) MB"
}

if [[ -n $PREBUILT ]]; then
  [[ -x $PREBUILT ]] || { echo "container_test: no binary $PREBUILT" >&2; exit 1; }
  context=$(mktemp -d)
  strip -o "$context/kiln-server" "$PREBUILT"
  build "$IMAGE" "$ROOT/deploy/Dockerfile.prebuilt" "$context"
  rm -rf "$context"
else
  build "$IMAGE" "$ROOT/deploy/Dockerfile" "$ROOT" \
    --ignorefile "$ROOT/deploy/Dockerfile.dockerignore"
fi
build localhost/kiln-redis:latest "$ROOT/deploy/Dockerfile.redis" "$ROOT/deploy"
build localhost/kiln-nginx:latest "$ROOT/deploy/Dockerfile.nginx" "$ROOT/deploy"
[[ $IMAGE == localhost/kiln-server:latest ]] || podman tag "$IMAGE" localhost/kiln-server:latest

# The image runs as its non-root user, declares its volume and health check, and finds every
# library its binary needs.
[[ $(podman image inspect -f '{{.Config.User}}' "$IMAGE") == kiln ]]
podman image inspect -f '{{.Config.Volumes}}' "$IMAGE" | grep -q /var/cache/kiln
podman image inspect -f '{{.Config.Healthcheck}}' "$IMAGE" | grep -q healthz
if podman run --rm --entrypoint ldd "$IMAGE" /usr/local/bin/kiln-server 2>/dev/null |
    grep 'not found'; then
  echo "container_test: the image lacks the libraries above" >&2
  exit 1
fi

declare -A SUMMARY
failed=0
for stage in "${STAGES[@]}"; do
  env=(KILN_CLUSTER_TIMEOUT=240)
  case $stage in
    host) env+=(KILN_CONTAINER_IMAGE="$IMAGE") ;;
    *) env+=(KILN_CLUSTER_SH="$ROOT/deploy/podman_cluster.sh" KILN_CLUSTER_MODE="$stage") ;;
  esac
  echo "container_test: $stage: tests/cluster (log: $LOGS/$stage.log)"
  start=$(date +%s)
  rc=0
  env "${env[@]}" timeout 3600 /usr/bin/python3 -m pytest -v -p no:cacheprovider \
    --durations=0 "$ROOT/tests/cluster" >"$LOGS/$stage.log" 2>&1 || rc=$?
  cleanup
  # Each test's outcome, then its times: setup (the cluster's start), call, teardown (its stop).
  grep -E '(PASSED|FAILED|ERROR)( |$)' "$LOGS/$stage.log" | sed 's/^/  /' || true
  grep -E '^[0-9.]+s (setup|call|teardown) ' "$LOGS/$stage.log" |
    sed 's/tests\/cluster\/test_cluster.py:://; s/^/  /' || true
  SUMMARY[$stage]="$(tail -n 1 "$LOGS/$stage.log" | tr -d '=' | sed 's/^ *//;s/ *$//')"
  SUMMARY[$stage]+=" (wall $(($(date +%s) - start)) s)"
  ((rc == 0)) || failed=1
done
for stage in "${STAGES[@]}"; do echo "container_test: $stage: ${SUMMARY[$stage]}"; done
exit $failed
