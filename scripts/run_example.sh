#!/usr/bin/env bash
# Builds and runs an example: by default the main one, examples/fashion_mnist.cpp
# (the MLP on Fashion-MNIST from Debian's dataset-fashion-mnist); the
# arguments after an example's name go to it. ddp_fashion_mnist runs as
# NP ranks (default 2) under Open MPI's mpirun.
# Usage: scripts/run_example.sh [fashion_mnist|ddp_fashion_mnist|tour] [arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
example=${1:-fashion_mnist}
[ $# -gt 0 ] && shift
case "$example" in
  fashion_mnist) scripts/deps.sh zlib1g-dev dataset-fashion-mnist ;;
  ddp_fashion_mnist) scripts/deps.sh zlib1g-dev dataset-fashion-mnist libopenmpi-dev openmpi-bin ;;
  tour) scripts/deps.sh zlib1g-dev ;;
  *) echo "run_example.sh: unknown example '$example' (fashion_mnist, ddp_fashion_mnist or tour)" >&2; exit 2 ;;
esac
scripts/configure.sh build -Dexamples=true
meson compile -C build "$example" >/dev/null
if [ "$example" = ddp_fashion_mnist ]; then
  # --allow-run-as-root: containers run as root; --oversubscribe: more ranks than cores.
  exec mpirun --allow-run-as-root --oversubscribe -np "${NP:-2}" ./build/examples/ddp_fashion_mnist "$@"
fi
./build/examples/"$example" "$@"
