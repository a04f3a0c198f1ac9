#!/usr/bin/env bash
# The emulator's 1..N-thread speed-up table on this host: builds the emulator
# and its compute benchmark (cpp/emu, bench/emu) into BUILD_DIR with cmake and
# the host C++ compiler, then runs the f32 matmul 512^3 and the bf16 add of
# 1M elements, both on an 8x8 emulated grid, with ZYX_EMU_THREADS = 1 .. N.
# Needs cmake (3.20 or later) and g++ with C++20; no Go, no OpenBLAS.
# Kernels are compiled at run time by ZYX_EMU_CXX (default c++).
#
# Usage: bench/emu/scaling.sh BUILD_DIR [N] [REPEATS]
#   BUILD_DIR  where to build (created; reused on a second run)
#   N          largest thread count (default: the host's CPU count)
#   REPEATS    runs per figure, the best is reported (default 5)
set -euo pipefail
usage() { echo "usage: $0 BUILD_DIR [N] [REPEATS]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 3 ] || usage
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1
n=${2:-$(nproc)}
reps=${3:-5}
case $n in ''|*[!0-9]*) echo "$0: N '$n' is not a positive integer" >&2; exit 2 ;; esac
case $reps in ''|*[!0-9]*) echo "$0: REPEATS '$reps' is not a positive integer" >&2; exit 2 ;; esac
[ "$n" -ge 1 ] && [ "$reps" -ge 1 ] || usage
command -v cmake >/dev/null || { echo "$0: cmake is not installed" >&2; exit 1; }
jobs=$(nproc)
mkdir -p "$build"
echo "building into $build ($jobs jobs)..." >&2
cmake -S "$root/cpp/emu" -B "$build" -DCMAKE_BUILD_TYPE=Release -DZYX_EMU_BENCH=ON >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
cmake --build "$build" --target emu_compute_bench -j"$jobs" >"$build/build.log" 2>&1 ||
  { tail -50 "$build/build.log" >&2; exit 1; }
echo "host: $(uname -m), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
ZYX_BENCH_THREADS=$(seq -s, 1 "$n") "$build/bench/emu_compute_bench" "$reps" scaling
