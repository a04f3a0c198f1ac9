// Linked instead of cpp/emu when the emulator is not part of the build.
#include "device_layer.hpp"

namespace zyx {

std::unique_ptr<DeviceLayer> make_emu_layer(const std::string&, int, const std::string&) {
  throw Error("unsupported", "built without the emulator (cpp/emu was not part of this build)");
}

}  // namespace zyx
