#!/usr/bin/env bash
# Compile-fail tests: each file here must fail to compile, and the compiler's
# output must contain the text after "// expect: " on its first line.
# Usage: run.sh <include dir> <compiler command...>
set -u
inc=$1
shift
dir=$(dirname "$0")
status=0
for f in "$dir"/*.cpp; do
  want=$(head -n 1 "$f" | sed 's|^// expect: ||')
  if out=$("$@" -std=c++20 -fsyntax-only -I"$inc" "$f" 2>&1); then
    echo "FAIL $(basename "$f"): compiled, but it must not"
    status=1
  elif ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL $(basename "$f"): the error does not say: $want"
    echo "$out" | grep -m 3 error
    status=1
  else
    echo "ok   $(basename "$f")"
  fi
done
exit $status
