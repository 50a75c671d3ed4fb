#!/usr/bin/env bash
# Installs every Debian package that Kiln's build, tests and demo need. Idempotent: packages
# already present are skipped, so a second run does nothing. Run as root on Debian 12.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git
  # libraries (all from Debian; nothing is vendored)
  libabsl-dev libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc
  libopenblas-dev libsleef-dev libssl-dev libcpp-httplib-dev libjemalloc-dev libhiredis-dev
  libboost-dev  # Boost.Math (header-only) for the special functions (core/ops/special_scalar.cc)
  # ONNX models in (proto/onnx): the checker, shape inference and version converter, and ONNX's
  # own backend test cases (tests/conformance/onnx)
  libonnx-dev libonnx-testdata
  # the local cluster (deploy/cluster.sh, tests/cluster): the shared Redis and the nginx front
  redis-server redis-tools nginx-light
  # certificates made at test time (tests/security); ps for deploy/cluster.sh
  openssl procps
  # python client and numeric reference
  python3 python3-numpy python3-scipy python3-pytest python3-grpcio python3-protobuf
  python3-mpmath  # tests/golden/gen_numpy_cases.py: reference values SciPy lacks (j0, i0...)
  python3-onnx  # tests/python/test_onnx.py builds models with ONNX's helpers
  python3-pip python3-setuptools python3-dev pybind11-dev
  # pictures of graphs
  graphviz
  # the console's browser tests (tests/console): headless Chromium driven by selenium
  chromium chromium-driver python3-selenium
  # coverage-guided fuzzing (tests/fuzz/run): clang's libFuzzer and sanitizers
  clang libclang-rt-14-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# The Node.js client example (its packages come from the npm registry): Debian's nodejs and npm
# unless the commands are already there (another build of Node.js ships its own npm).
command -v node > /dev/null || missing+=(nodejs)
command -v npm > /dev/null || missing+=(npm)

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
