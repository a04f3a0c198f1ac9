#!/usr/bin/env bash
# Runs `zyx-tt probe` and every example bundle through `zyx-tt run` on each
# GPU device of an NVIDIA host that has no Go toolchain, from binaries built
# elsewhere (make go-build; the runtime is optional there). Sets up the
# OpenCL ICD registration and Vulkan driver file through bench/gpu-env.sh
# (the loader packages from gpubin/). Logs go to $OUT (default /tmp/zyx-cli).
set -u
OUT=${OUT:-/tmp/zyx-cli}
mkdir -p "$OUT"
DEBS=${DEBS:-gpubin}
. bench/gpu-env.sh
export ZYX_PROGRESS=0
zyx=${ZYX:-bin/zyx-tt}
status=0
{
  echo "## zyx-tt probe"
  $zyx probe
  devs=$($zyx probe --json | grep -o '"name": *"\(cuda\|opencl\|vulkan\):[0-9]*"' | sed 's/.*"\([a-z]*:[0-9]*\)"/\1/' | sort -u)
  echo "## GPU-API devices: $devs"
  for ex in vadd unary matmul; do
    echo "## zyx-tt run examples/$ex --dev auto --verify"
    $zyx run examples/$ex --dev auto --verify --repeat 10 || status=1
    for d in $devs; do
      echo "## zyx-tt run examples/$ex --dev $d --verify --repeat 10"
      $zyx run examples/$ex --dev "$d" --verify --repeat 10 || status=1
    done
  done
  echo "## big vadd on the best device"
  $zyx run examples/vadd --dev auto --set n=268435456 --verify --repeat 10 || status=1
  echo "cli exit: $status"
} 2>&1 | tee "$OUT/cli.log"
exit $status
