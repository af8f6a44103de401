#!/usr/bin/env bash
# Builds the benchmarks with their peers (Eigen, xtensor, libtorch, OpenBLAS) and runs one.
# Usage: scripts/bench.sh [elementwise|reduce_linalg|autograd|special|nn|training|distributed|cuda]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh libeigen3-dev xtensor-dev libtorch-dev libopenblas-dev zlib1g-dev dataset-fashion-mnist \
  libopenmpi-dev openmpi-bin
scripts/configure.sh build-bench -Dbench=true -Dtests=false -Dexamples=false
ninja -C build-bench "bench/${1:-elementwise}" >/dev/null
# libtorch's OpenMP threads busy-wait after each parallel region unless told
# otherwise; on two cores that takes the cores from its own BLAS threads and
# from the other side's turns (libtorch's CNN step: 17-26 ms spinning, 9-13 ms
# passive). The nn comparison lets them sleep, and so the OpenBLAS threads
# that libtorch's products run on, which otherwise spin after each product
# and took a core from tessera's next turn in about half the runs (its MLP
# step 0.39 or 1.03 ms, its CNN step 11 or 25 ms, from run to run).
if [ "${1:-}" = nn ] || [ "${1:-}" = training ]; then export OMP_WAIT_POLICY=passive OPENBLAS_THREAD_TIMEOUT=4; fi
if [ "${1:-}" = distributed ]; then
  # Two ranks on this machine (--allow-run-as-root: containers run as root).
  exec mpirun --allow-run-as-root --oversubscribe -np "${NP:-2}" ./build-bench/bench/distributed
fi
./build-bench/bench/"${1:-elementwise}"
# PyTorch's figures for the same measures on the same GPU, where python3 has it.
if [ "${1:-}" = cuda ] && command -v python3 >/dev/null; then python3 bench/cuda_peer.py; fi
