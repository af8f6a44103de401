#!/usr/bin/env bash
# Installs the Debian packages that tessera's build needs, when missing.
# Usage: scripts/deps.sh [extra packages...]
set -euo pipefail
needed=(meson ninja-build g++ pkg-config libxsimd-dev doctest-dev "$@")
missing=()
for p in "${needed[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "tessera: installing missing Debian packages with apt-get: ${missing[*]}"
  echo "         (they provide the build system, the SIMD library and the test framework)"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi
