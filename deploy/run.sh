#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: installs what is missing, builds, starts kiln-server
# on its embedded defaults (gRPC on KILN_PORT, default 50051; /metrics on 9464) and runs the demo
# client against it: the seed's examples locally, then compiled, executed and differentiated on
# the server. The server is stopped (SIGTERM, graceful) when the demo ends.
# `./deploy/run.sh out.png` also draws the demo's graph and its optimized form.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${KILN_BUILD_DIR:-$ROOT/build}
PORT=${KILN_PORT:-50051}
"$ROOT/deploy/setup.sh"
"$ROOT/deploy/build.sh" kiln-server kiln_demo
"$BUILD/server/kiln-server" --port "$PORT" &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER 2>/dev/null || true' EXIT
"$BUILD/client/cpp/kiln_demo" --server="localhost:$PORT" "$@"
