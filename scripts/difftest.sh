#!/usr/bin/env bash
# Differential test against libtorch: random programs computed by tessera and
# by libtorch side by side (tools/difftest/README.md).
# Usage: scripts/difftest.sh [SEEDS [CASES_PER_SEED [FIRST_SEED]]]
#   defaults: 20 seeds of 100 cases from seed 1 (2,000 cases).
# DIFFTEST_CXXFLAGS adds compiler flags (-march=native, -O2, ...); DIFFTEST_JOBS
# sets how many seeds compile at once (default: one per core).
# Prints each failure with its repro, then "N passed, N failed" over all
# seeds; exits non-zero when any case failed. Work files: build-difftest/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh libtorch-dev python3-torch
seeds=${1:-20}
per=${2:-100}
first=${3:-1}
dir=build-difftest
mkdir -p "$dir"

# One seed: generate, compile (-O0: the cases are tiny; libtorch's
# headers dominate the compile either way), run.
run_seed() {
  local s=$1 per=$2 dir=$3
  /usr/bin/python3 tools/difftest/gen.py "$s" "$per" "$dir/seed$s.cpp"
  g++ -std=c++20 -O0 -w -Iinclude -Itools/difftest -isystem /usr/include/torch/csrc/api/include ${DIFFTEST_CXXFLAGS:-} \
    "$dir/seed$s.cpp" -o "$dir/seed$s" -ltorch -ltorch_cpu -lc10 -pthread
  "./$dir/seed$s" >"$dir/seed$s.log" 2>&1 || true
}
export -f run_seed
# Each compile takes 2-4 GiB; one per core unless DIFFTEST_JOBS says.
seq "$first" $((first + seeds - 1)) | xargs -P "${DIFFTEST_JOBS:-$(nproc)}" -I{} bash -c 'run_seed "$@"' _ {} "$per" "$dir"

passed=0 failed=0
for s in $(seq "$first" $((first + seeds - 1))); do
  log=$dir/seed$s.log
  if ! tail -n 1 "$log" | grep -Eq '^[0-9]+ passed, [0-9]+ failed$'; then
    echo "seed $s did not finish:"; tail -n 20 "$log"; failed=$((failed + 1)); continue
  fi
  grep -v -E '^[0-9]+ passed, [0-9]+ failed$' "$log" || true
  read -r p _ f _ < <(tail -n 1 "$log")
  passed=$((passed + p)) failed=$((failed + f))
done
echo "difftest, seeds $first..$((first + seeds - 1)): $passed passed, $failed failed"
[ "$failed" -eq 0 ]
