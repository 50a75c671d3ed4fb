#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: installs what is missing, builds, and runs the demo
# (the seed's examples: the graph of x * 2.0, its dprint, and a + a**10 evaluated on [0, 1, 2]).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/deploy/setup.sh"
"$ROOT/deploy/build.sh" kiln_demo
"${KILN_BUILD_DIR:-$ROOT/build}/client/cpp/kiln_demo" "$@"
