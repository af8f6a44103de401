#!/usr/bin/env bash
# Sets up a Meson build directory with the given options, or applies them to
# one that exists (so a directory made with other options follows them).
# Usage: scripts/configure.sh <dir> [meson options...]
set -euo pipefail
dir=$1
shift
if [ -f "$dir/build.ninja" ]; then
  meson setup --reconfigure "$dir" "$@" >/dev/null
else
  meson setup "$dir" "$@" >/dev/null
fi
