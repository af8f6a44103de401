#!/usr/bin/env bash
# Builds and runs the whole test suite (and the examples, which are tests too).
# Pass --sanitize to build and run it under AddressSanitizer + UBSan instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh libopenblas-dev  # OpenBLAS: the -Dblas=openblas path is tested too
dir=build
opts=(-Dbench=false)
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-sanitize
  # -O1 with line tables only: full debug info makes the big test files
  # take many minutes to assemble.
  opts+=(-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=plain -Doptimization=1 -Dcpp_args=-g1)
fi
[ -f "$dir/build.ninja" ] || meson setup "$dir" "${opts[@]}" >/dev/null
meson compile -C "$dir"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 meson test -C "$dir" --print-errorlogs

# The same matrix-product tests with -Dblas=openblas (only that binary).
blas_dir=$dir-blas
[ -f "$blas_dir/build.ninja" ] || meson setup "$blas_dir" "${opts[@]}" -Dblas=openblas >/dev/null
meson compile -C "$blas_dir" test/test_linalg
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 meson test -C "$blas_dir" --no-rebuild --print-errorlogs linalg
