#!/bin/sh
# Builds a CUDA test program with nvcc and runs it. Usage:
#   build_and_run.sh NVCC OUTPUT NVCC-ARGUMENTS...
# A build failure fails the test. The program itself exits with 77 when the
# machine has no GPU, which Meson reports as a skipped test.
set -e
nvcc="$1"
output="$2"
shift 2
"$nvcc" "$@" -o "$output"
exec "$output"
