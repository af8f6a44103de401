#!/usr/bin/env bash
# Builds the libFuzzer harnesses in fuzz/ (clang++ -fsanitize=fuzzer,address,
# undefined) and runs each for a number of executions (default 1000000),
# starting from the seed corpora in fuzz/corpus/<reader>/. New inputs go to
# build-fuzz/corpus/, crashes to build-fuzz/crashes/; the committed seeds are
# not modified.
#   scripts/fuzz.sh                  all four readers, 10^6 runs each
#   scripts/fuzz.sh pt 5000000       one reader, more runs
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh clang zlib1g-dev
runs=${2:-1000000}
readers=(npy safetensors pt idx)
[ $# -ge 1 ] && readers=("$1")
mkdir -p build-fuzz/crashes
for r in "${readers[@]}"; do
  exe=build-fuzz/fuzz_$r
  clang++ -std=c++20 -O1 -g -Iinclude -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "fuzz/fuzz_$r.cpp" -o "$exe" -lz
  mkdir -p "build-fuzz/corpus/$r"
  echo "== $r: $runs runs"
  # -rss_limit_mb: a reader that allocated what a header claims fails here.
  "$exe" -runs="$runs" -rss_limit_mb=1024 -max_len=65536 -artifact_prefix=build-fuzz/crashes/"$r"- \
    -print_final_stats=1 "build-fuzz/corpus/$r" "fuzz/corpus/$r" 2>&1 | grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|==|SUMMARY|Done)" || true
  [ -z "$(ls build-fuzz/crashes/"$r"-* 2>/dev/null)" ] || { echo "fuzz_$r: crash inputs in build-fuzz/crashes/"; exit 1; }
done
