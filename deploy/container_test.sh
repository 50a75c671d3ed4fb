#!/usr/bin/env bash
# Builds kiln-server's image with podman from deploy/Dockerfile, then runs the cluster's tests
# (tests/cluster) with every replica in a container of that image; Redis and nginx stay host
# processes on 127.0.0.1, as deploy/cluster.sh starts them. Run as root on Debian 12; takes
# about as long as a Release build of kiln-server (the image builds from source).
#
# No image registry is reachable from these machines, so debian:bookworm and
# debian:bookworm-slim are made locally, once: mmdebstrap --variant=minbase from the Debian
# mirror apt already uses, then podman import. A real user's machine pulls the real images; the
# Dockerfile is the same.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGE=${KILN_IMAGE:-localhost/kiln-server:dev}
export DEBIAN_FRONTEND=noninteractive

"$ROOT/deploy/setup.sh"
for p in podman runc mmdebstrap; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    apt-get install -y -qq --no-install-recommends podman runc mmdebstrap
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

echo "container_test: building $IMAGE"
start=$(date +%s)
podman build --quiet --format docker --pull=never --network host -f "$ROOT/deploy/Dockerfile" \
  --ignorefile "$ROOT/deploy/Dockerfile.dockerignore" -t "$IMAGE" "$ROOT"
echo "container_test: built in $(($(date +%s) - start)) s; $(podman image inspect -f '{{.Size}}' "$IMAGE") bytes"

# The image runs as its non-root user, declares its volume and health check.
[[ $(podman image inspect -f '{{.Config.User}}' "$IMAGE") == kiln ]]
podman image inspect -f '{{.Config.Volumes}}' "$IMAGE" | grep -q /var/cache/kiln
podman image inspect -f '{{.Config.Healthcheck}}' "$IMAGE" | grep -q healthz

KILN_CONTAINER_IMAGE=$IMAGE /usr/bin/python3 -m pytest -q -p no:cacheprovider "$ROOT/tests/cluster"
