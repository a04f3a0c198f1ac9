# Sourced by bench/run-h200.sh and bench/h200-cli.sh: makes the Vulkan and
# OpenCL loaders and NVIDIA's ICDs reachable on a host that has the driver
# but not the loaders (the GPU hosts of bench/run-h200.sh).
#   - no libvulkan.so.1: unpacks .gl/*.deb (libvulkan1 libegl1 libglvnd0
#     libopengl0 libgl1 libglx0 libgles2, fetched for amd64 with apt-get
#     download) into / and runs ldconfig;
#   - no libOpenCL.so.1: unpacks $DEBS/ocl-icd-libopencl1*.deb into a
#     private folder on LD_LIBRARY_PATH (DEBS defaults to devbin);
#   - libnvidia-opencl.so.1 without a registration: writes
#     /etc/OpenCL/vendors/nvidia.icd;
#   - VK_DRIVER_FILES: NVIDIA's Vulkan ICD file where one exists;
#   - no vulkan/vulkan.h (the native Vulkan reference's headers): unpacks
#     .gl/dev/libvulkan-dev*.deb into /tmp/vkdev (not /) and sets
#     VK_INCLUDE.
# It prints what it did, one line each.
if ! ldconfig -p | grep -q 'libvulkan.so.1'; then
  for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" / && echo "gpu-env: unpacked $f"; done
  ldconfig
fi
if ! ldconfig -p | grep -q 'libOpenCL.so.1'; then
  for f in "${DEBS:-devbin}"/ocl-icd-libopencl1*.deb; do [ -f "$f" ] && dpkg -x "$f" /tmp/ocl && echo "gpu-env: unpacked $f"; done
  export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && ldconfig -p | grep -q libnvidia-opencl.so.1; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd &&
    echo "gpu-env: registered /etc/OpenCL/vendors/nvidia.icd"
fi
for j in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$j" ]; then
    export VK_DRIVER_FILES=$j
    echo "gpu-env: VK_DRIVER_FILES=$j"
    break
  fi
done
if [ -z "${VK_INCLUDE:-}" ] && [ ! -f /usr/include/vulkan/vulkan.h ]; then
  for f in .gl/dev/libvulkan-dev*.deb; do
    [ -f "$f" ] && dpkg -x "$f" /tmp/vkdev && export VK_INCLUDE=/tmp/vkdev/usr/include && echo "gpu-env: VK_INCLUDE=$VK_INCLUDE"
  done
fi
