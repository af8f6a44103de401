#!/usr/bin/env bash
# Compile cost of tessera as a user pays it: compiles each reference program
# in this folder the way a user would (g++ -std=c++20 -O2 -march=native, one
# translation unit) and prints the CPU seconds (user + system, the minimum of
# RUNS compiles) and the peak memory of the compiler, with the ratio to
# Eigen's hello world compiled the same way. Each program is compiled
# header-only; against the precompiled core (-DTSR_PRECOMPILED, with
# src/tessera_core.cpp compiled once first; its own cost is printed too);
# and against the core with tessera.hpp as a precompiled header (GCC's .gch,
# built once with the same flags; its cost is printed too), the fastest
# edit-compile loop a build system gives (CMake's target_precompile_headers,
# Meson's cpp_pch). nn_mlp is mlp written with nn and optim; the core's nn
# part (src/tessera_nn.cpp) is its precompiled share. The programs with
# expressions autograd may record (all but hello) are compiled the same
# three ways again with per-op autograd (-DTSR_PER_OP_AUTOGRAD).
#
# Usage: bench/compile_time/run.sh [RUNS]     (default 3)
#   CXX, CXXFLAGS: the compiler and flags (default g++, -O2 -march=native)
# The Eigen and xtensor references are compiled when their Debian packages
# (libeigen3-dev, xtensor-dev) are installed, and skipped otherwise.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
runs="${1:-3}"
cxx="${CXX:-g++}"
read -r -a flags <<< "${CXXFLAGS:--O2 -march=native}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Prints "cpu_seconds peak_mb" for one compile (the minimum CPU time of $runs).
measure() {
  local src="$1"; shift
  local best="" best_mem=""
  for ((r = 0; r < runs; ++r)); do
    /usr/bin/time -f "%U %S %M" -o "$work/time" "$cxx" -std=c++20 "${flags[@]}" "$@" -c "$src" -o "$work/out.o"
    read -r user sys kb < "$work/time"
    local cpu
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    if [ -z "$best" ] || awk -v a="$cpu" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$cpu; best_mem=$((kb / 1024))
    fi
  done
  echo "$best $best_mem"
}

command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian package time)"; exit 1; }
echo "compiler: $("$cxx" --version | head -1); flags: -std=c++20 ${flags[*]}; minimum of $runs runs"

reference=""
if [ -f /usr/include/eigen3/Eigen/Dense ]; then
  read -r reference reference_mem < <(measure "$here/eigen_hello.cpp" -I/usr/include/eigen3)
fi
ratio() { [ -n "$reference" ] && awk -v a="$1" -v b="$reference" 'BEGIN { printf "%.2f", a / b }' || echo "-"; }

line() { printf "%-28s %9s %9s %9s   %9s %9s %9s   %9s %9s %9s\n" "$@"; }
line "" "header-" "only" "" "precom-" "piled" "" "core +" "precomp." "header"
line program "CPU s" "peak MB" "x Eigen" "CPU s" "peak MB" "x Eigen" "CPU s" "peak MB" "x Eigen"
[ -n "$reference" ] && line "eigen_hello (reference)" "$reference" "$reference_mem" "1.00" "" "" "" "" "" ""
if [ -f /usr/include/xtensor/xarray.hpp ]; then
  read -r s m < <(measure "$here/xtensor_hello.cpp")
  line "xtensor_hello (reference)" "$s" "$m" "$(ratio "$s")" "" "" "" "" "" ""
fi
read -r s m < <(measure "$root/src/tessera_core.cpp")
line "tessera_core (once)" "" "" "" "$s" "$m" "$(ratio "$s")" "" "" ""
read -r s m < <(measure "$root/src/tessera_nn.cpp")
line "  its nn part (once)" "" "" "" "$s" "$m" "$(ratio "$s")" "" "" ""
# The precompiled header: GCC reads pch/tessera_pch.hpp.gch in place of
# pch/tessera_pch.hpp (force-included first) when the flags match, and
# -Winvalid-pch says when they do not.
mkdir -p "$work/pch"
printf '#include <tessera.hpp>\n' > "$work/pch/tessera_pch.hpp"
read -r s m < <(measure "$work/pch/tessera_pch.hpp" -x c++-header -I"$root/include" -DTSR_PRECOMPILED)
mv "$work/out.o" "$work/pch/tessera_pch.hpp.gch"  # what the measured compiles wrote is the header
line "precompiled header (once)" "" "" "" "" "" "" "$s" "$m" "$(ratio "$s")"
for prog in hello stencil fit mlp nn_mlp; do
  read -r s m < <(measure "$here/$prog.cpp" -I"$root/include")
  read -r ps pm < <(measure "$here/$prog.cpp" -I"$root/include" -DTSR_PRECOMPILED)
  read -r hs hm < <(measure "$here/$prog.cpp" -I"$work/pch" -include tessera_pch.hpp -Winvalid-pch -Werror=invalid-pch \
                      -I"$root/include" -DTSR_PRECOMPILED)
  line "$prog" "$s" "$m" "$(ratio "$s")" "$ps" "$pm" "$(ratio "$ps")" "$hs" "$hm" "$(ratio "$hs")"
done
# Per-op autograd (-DTSR_PER_OP_AUTOGRAD, with the core and the precompiled
# header built the same way): each expression that may record is recorded
# one op at a time instead of compiling a fused backward of its own; the
# stencil's expression never records, but its node is compiled all the same.
mkdir -p "$work/pch_per_op"
cp "$work/pch/tessera_pch.hpp" "$work/pch_per_op/"
"$cxx" -std=c++20 "${flags[@]}" -x c++-header -I"$root/include" -DTSR_PRECOMPILED -DTSR_PER_OP_AUTOGRAD \
  -c "$work/pch_per_op/tessera_pch.hpp" -o "$work/pch_per_op/tessera_pch.hpp.gch"
for prog in stencil fit mlp nn_mlp; do
  read -r s m < <(measure "$here/$prog.cpp" -I"$root/include" -DTSR_PER_OP_AUTOGRAD)
  read -r ps pm < <(measure "$here/$prog.cpp" -I"$root/include" -DTSR_PRECOMPILED -DTSR_PER_OP_AUTOGRAD)
  read -r hs hm < <(measure "$here/$prog.cpp" -I"$work/pch_per_op" -include tessera_pch.hpp -Winvalid-pch \
                      -Werror=invalid-pch -I"$root/include" -DTSR_PRECOMPILED -DTSR_PER_OP_AUTOGRAD)
  line "$prog, per-op autograd" "$s" "$m" "$(ratio "$s")" "$ps" "$pm" "$(ratio "$ps")" "$hs" "$hm" "$(ratio "$hs")"
done
