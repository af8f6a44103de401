#!/usr/bin/env bash
# Builds and runs the whole test suite (and the examples, which are tests too).
# --portable: the same with -Dnative=false (baseline x86-64 instead of this
#   CPU's instruction set), in build-portable/.
# --sanitize: the same under AddressSanitizer + UBSan, in build-sanitize/.
# The suite is built against the precompiled core (-Dprecompiled=true: the
# tessera_core library), compiled once, instead of instantiating it again in
# every test file. Except under --sanitize, the headers alone are checked too
# (the default way to use tessera), with the tour and the autograd tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# OpenBLAS: the -Dblas=openblas path is tested too; zlib: data loading's gzip
# files; Open MPI: the distributed collectives, run under mpirun.
scripts/deps.sh libopenblas-dev zlib1g-dev libopenmpi-dev openmpi-bin
dir=build
opts=(-Dtests=true -Dexamples=true -Dbench=false)
jobs=()
if [ "${1:-}" = "--portable" ]; then
  dir=build-portable
  opts+=(-Dnative=false)
elif [ "${1:-}" = "--sanitize" ]; then
  dir=build-sanitize
  # -O1 with line tables only: full debug info makes the big test files
  # take many minutes to assemble.
  opts+=(-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=plain -Doptimization=1 -Dcpp_args=-g1)
  # Instrumented test files take a lot of memory to compile (elementwise
  # about 11.6 GiB, most far less); ninja's default of cores + 2 jobs ran a
  # 24 GiB machine out of memory. One job per 10 GiB available, at most one
  # per core.
  avail_gib=$(awk '/MemAvailable/ {print int($2 / 1048576)}' /proc/meminfo)
  n=$((avail_gib / 10)); cores=$(nproc)
  [ "$n" -gt "$cores" ] && n=$cores
  [ "$n" -lt 1 ] && n=1
  jobs=(-j "$n")
fi
scripts/configure.sh "$dir" "${opts[@]}" -Dprecompiled=true
meson compile -C "$dir" "${jobs[@]}"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 meson test -C "$dir" --print-errorlogs

# The same matrix-product tests with -Dblas=openblas (only that binary, with
# the headers alone: the core would be compiled again for it).
blas_dir=$dir-blas
scripts/configure.sh "$blas_dir" "${opts[@]}" -Dexamples=false -Dblas=openblas -Dprecompiled=false
meson compile -C "$blas_dir" "${jobs[@]}" test/test_linalg
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 meson test -C "$blas_dir" --no-rebuild --print-errorlogs linalg

# The headers alone: every translation unit instantiates what it uses, the
# core's part included.
if [ "${1:-}" != "--sanitize" ]; then
  headers_dir=$dir-header-only
  scripts/configure.sh "$headers_dir" "${opts[@]}" -Dprecompiled=false
  meson compile -C "$headers_dir" "${jobs[@]}" examples/tour test/test_autograd
  meson test -C "$headers_dir" --no-rebuild --print-errorlogs example-tour autograd
fi
