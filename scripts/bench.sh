#!/usr/bin/env bash
# Builds the benchmarks with their peers (Eigen, xtensor, libtorch, OpenBLAS) and runs one.
# Usage: scripts/bench.sh [elementwise|reduce_linalg|autograd|special]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh libeigen3-dev xtensor-dev libtorch-dev libopenblas-dev
[ -f build-bench/build.ninja ] || meson setup build-bench -Dtests=false >/dev/null
ninja -C build-bench "bench/${1:-elementwise}" >/dev/null
./build-bench/bench/"${1:-elementwise}"
