// open_layer picks the device layer an `init` asks for.
#include <cstdlib>
#include <iostream>

#include "server.hpp"

namespace zyx {

std::unique_ptr<DeviceLayer> open_layer(const LayerRequest& req) {
  // The emulator reads its DPRINT switch from the environment
  // (docs/protocol.md, "Kernel output"); init's `dprint` turns it on.
  if (req.dprint) ::setenv("ZYX_EMU_DPRINT", "1", 1);
  if (req.layer == "metal") return make_metal_layer(req.chip, req.cache_dir);
  if (req.layer == "emu") return make_emu_layer(req.board, req.chip, req.cache_dir);
#ifdef ZYX_HAVE_METAL
  // auto: a card when there is one, else the emulator.
  try {
    return make_metal_layer(req.chip, req.cache_dir);
  } catch (const Error& e) {
    std::cerr << "zyx-tt-runtime: layer auto: metal is not available (" << e.code << ": " << e.what()
              << "); using the emulator\n";
  }
#endif
  return make_emu_layer(req.board, req.chip, req.cache_dir);
}

}  // namespace zyx
