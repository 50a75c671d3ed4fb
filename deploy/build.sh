#!/usr/bin/env bash
# Configures and builds Kiln with CMake, Ninja and ccache. Usage: deploy/build.sh [target...]
# Environment: KILN_BUILD_DIR (default build/), KILN_CMAKE_ARGS (extra -D options),
# CCACHE_DIR (default ~/.cache/kiln-ccache, outside the checkout so CI can keep it). Paths under
# the checkout are hashed relative to it (CCACHE_BASEDIR), so that another clone of the same tree,
# such as CI's, hits the same cache entries.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${KILN_BUILD_DIR:-$ROOT/build}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/kiln-ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
mkdir -p "$CCACHE_DIR" "$BUILD"
# shellcheck disable=SC2086
cmake -S "$ROOT" -B "$BUILD" -G Ninja ${KILN_CMAKE_ARGS:-} > "$BUILD/configure.log" 2>&1 ||
  { cat "$BUILD/configure.log"; exit 1; }
ninja -C "$BUILD" "$@"
