#!/usr/bin/env bash
# Runs every test on a fresh Debian 12 machine: installs what is missing, builds everything and
# runs CTest. With --sanitize, builds into build-asan/ with clang's AddressSanitizer and
# UndefinedBehaviorSanitizer instead (the debug build: assertions, -O1, line tables only), and
# with libFuzzer's coverage, so that tests/fuzz/run builds its fuzzers in the same build
# (KILN_FUZZ_BUILD=build-asan): one instrumented build, not two.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/deploy/setup.sh"
if [[ "${1:-}" == "--sanitize" ]]; then
  # The Python tests import a normal build's kiln._core (tests/CMakeLists.txt).
  KILN_BUILD_DIR=$ROOT/build KILN_CMAKE_ARGS= "$ROOT/deploy/build.sh" kiln_python_stubs kiln_core_python
  export KILN_BUILD_DIR=${KILN_BUILD_DIR:-$ROOT/build-asan}
  export CC=clang CXX=clang++
  export KILN_CMAKE_ARGS="${KILN_CMAKE_ARGS:-} -DKILN_SANITIZE=ON -DKILN_FUZZ=ON
    -DCMAKE_BUILD_TYPE=Debug"
fi
BUILD=${KILN_BUILD_DIR:-$ROOT/build}
"$ROOT/deploy/build.sh"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
