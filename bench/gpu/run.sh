#!/usr/bin/env bash
# Runs the OpenCL and Vulkan backends' tests and the vadd-vs-copy bandwidth
# benchmark on a host without Go, from test binaries built elsewhere:
#
#   go test -c -o gpubin/opencl.test ./backends/opencl
#   go test -c -o gpubin/vulkan.test ./backends/vulkan
#   bash bench/gpu/run.sh            # logs also go to $OUT (default /tmp/zyx-gpu)
#
# Where the host has no Vulkan loader, .gl/*.deb (libvulkan1 …) are unpacked
# first; where it has no OpenCL ICD loader, gpubin/ocl-icd-libopencl1*.deb is
# unpacked into a private folder. NVIDIA's ICDs are registered when the
# driver's files exist but no registration does. BENCHTIME sets the
# benchmark iterations (default 5x).
set -u
OUT=${OUT:-/tmp/zyx-gpu}
mkdir -p "$OUT"
ROOT=$(pwd)
BENCHTIME=${BENCHTIME:-5x}
log() { echo "## $*"; }

{
log "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -4
if ! ldconfig -p | grep -q 'libvulkan.so.1'; then
  for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
  ldconfig
fi
ldconfig -p | grep -E 'libvulkan.so.1|libOpenCL.so.1|libnvidia-opencl' | head
if ! ldconfig -p | grep -q 'libOpenCL.so.1'; then
  for f in gpubin/ocl-icd-libopencl1*.deb; do [ -f "$f" ] && dpkg -x "$f" /tmp/ocl; done
  export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  echo "OpenCL ICD loader from gpubin: $(ls /tmp/ocl/usr/lib/x86_64-linux-gnu 2>/dev/null | tr '\n' ' ')"
fi
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && ldconfig -p | grep -q libnvidia-opencl.so.1; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
  echo "registered /etc/OpenCL/vendors/nvidia.icd"
fi
for j in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$j" ]; then export VK_DRIVER_FILES=$j; echo "VK_DRIVER_FILES=$j"; break; fi
done
} 2>&1 | tee "$OUT/machine.log"
# The exports above ran in a subshell for tee; repeat them here.
ldconfig -p | grep -q 'libOpenCL.so.1' || export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for j in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$j" ]; then export VK_DRIVER_FILES=$j; break; fi
done

status=0
for b in opencl vulkan; do
  log "$b tests" | tee "$OUT/$b-tests.log"
  (cd "backends/$b" && timeout 200 "$ROOT/gpubin/$b.test" -test.v -test.count=1 -test.timeout 190s) 2>&1 | tee -a "$OUT/$b-tests.log"
  rc=${PIPESTATUS[0]}; echo "$b tests exit: $rc" | tee -a "$OUT/$b-tests.log"; [ "$rc" = 0 ] || status=1
done
for b in opencl vulkan; do
  log "$b benchmark" | tee "$OUT/$b-bench.log"
  (cd "backends/$b" && timeout 200 "$ROOT/gpubin/$b.test" -test.run '^$' -test.bench VaddBandwidth -test.benchtime "$BENCHTIME") 2>&1 | tee -a "$OUT/$b-bench.log"
  rc=${PIPESTATUS[0]}; echo "$b bench exit: $rc" | tee -a "$OUT/$b-bench.log"; [ "$rc" = 0 ] || status=1
done
exit $status
