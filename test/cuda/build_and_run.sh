#!/bin/sh
# Builds a CUDA test program (with nvcc, or with the host compiler as the
# emulated device build) and runs it. Usage:
#   build_and_run.sh COMPILER OUTPUT COMPILER-ARGUMENTS...
# A build failure fails the test. The program itself exits with 77 when the
# machine has no GPU, which Meson reports as a skipped test.
set -e
nvcc="$1"
output="$2"
shift 2
"$nvcc" "$@" -o "$output"
exec "$output"
