// Linked instead of metal_layer.cpp when the build has no tt-metal
// (cmake without -DZYX_TT_METAL=ON).
#include "device_layer.hpp"

namespace zyx {

std::unique_ptr<DeviceLayer> make_metal_layer(int, const std::string&) {
  throw Error("unsupported", "built without tt-metal (rebuild with -DZYX_TT_METAL=ON and TT_METAL_ROOT set)");
}

}  // namespace zyx
