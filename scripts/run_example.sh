#!/usr/bin/env bash
# Builds and runs the main example (examples/tour.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/configure.sh build -Dexamples=true
meson compile -C build tour >/dev/null
./build/examples/tour
