#!/usr/bin/env bash
# Builds and runs the emulator benchmark: emulated bf16 eltwise add over 1M
# elements on an 8x8 grid (warm kernel cache) against a plain C++ loop, and
# kernel build time cold and warm. Usage: bench/emu/run.sh [repeats]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${ZYX_EMU_BUILD:-$root/build/emu-dev}
cmake -S "$root/cpp/emu" -B "$build" -DCMAKE_BUILD_TYPE=Release -DZYX_EMU_BENCH=ON >/dev/null
cmake --build "$build" --target emu_bench -j2 >/dev/null
"$build/bench/emu_bench" "${1:-5}"
