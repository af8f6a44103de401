#!/usr/bin/env bash
# Builds the programs that need a GPU with nvcc and runs them: the device
# tests (test/cuda/gpu_*.cu), the CUDA tour and, with --bench, the device
# benchmark and PyTorch's figures beside it. The test suite builds only the
# small ones (nvcc takes 2 to 22 CPU minutes on each of the others), so run
# this on a machine with a GPU after changing the device path.
# Usage: scripts/test_gpu.sh [--bench]
#   ARCH=sm_90 (default: native, the GPUs of this machine); JOBS (default: cores)
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
arch=${ARCH:-native}
out=build-gpu
mkdir -p "$out"
programs=(gpu_backend:test/cuda/gpu_backend.cu gpu_device_ops:test/cuda/gpu_device_ops.cu
          gpu_training:test/cuda/gpu_training.cu gpu_evaluation:test/cuda/gpu_evaluation.cu
          cuda_tour:examples/cuda_tour.cu)
[ "${1:-}" = --bench ] && programs+=(bench_cuda:bench/cuda.cu)
build() {
  # GCC's unroll pragmas in the CPU's GEMM (1675) and Thrust's notes on
  # host/device lambdas are not ours to fix.
  MALLOC_PERTURB_=0 "$nvcc" -std=c++20 -O2 -arch="$arch" -diag-suppress 1675,2810,20011,20014 -Iinclude \
    "${1#*:}" -lcublas -o "$out/${1%%:*}"
}
export -f build
export nvcc arch out
printf '%s\n' "${programs[@]}" | xargs -P "${JOBS:-$(nproc)}" -I{} bash -c 'build {}'
failed=()
for p in "${programs[@]}"; do
  name=${p%%:*}
  [ "$name" = bench_cuda ] && continue
  echo "== $name"
  rc=0
  "$out/$name" || rc=$?
  [ $rc -eq 77 ] && echo "skipped: no GPU"
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && failed+=("$name")
done
if [ "${1:-}" = --bench ]; then
  "$out/bench_cuda"
  python3 bench/cuda_peer.py
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}"
  exit 1
fi
