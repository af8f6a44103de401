#!/usr/bin/env bash
# Builds the benchmarks with their peers (Eigen, xtensor, libtorch, OpenBLAS) and runs one.
# Usage: scripts/bench.sh [elementwise|reduce_linalg|autograd|special|nn]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh libeigen3-dev xtensor-dev libtorch-dev libopenblas-dev
scripts/configure.sh build-bench -Dbench=true -Dtests=false -Dexamples=false
ninja -C build-bench "bench/${1:-elementwise}" >/dev/null
./build-bench/bench/"${1:-elementwise}"
