// Runtime and common args (get_arg_val, get_common_arg_val, get_arg_addr,
// get_common_arg_addr).
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "kernel_api.hpp"

namespace zyx::emu {

// Runtime and common args live in the core's reserved L1, as on a card, so
// that get_arg_addr is an L1 address (a kernel may send its args over the NOC
// or write them). Lists longer than a slot stay in host memory.
const uint32_t* api_args(uint32_t kind, uint32_t* count) {
  Fiber* f = t_fiber;
  const auto& v = kind == 0 ? f->args : f->common;
  if (count) *count = static_cast<uint32_t>(v.size());
  if (v.size() * 4 > ZYX_EMU_L1_ARGS_SLOT) return v.data();
  uint32_t bit = kind == 0 ? 1 : 2;
  auto* slot = reinterpret_cast<uint32_t*>(f->core->l1 + ZYX_EMU_L1_ARGS_OFFSET +
                                           (2 * static_cast<uint32_t>(f->processor) + (kind ? 1 : 0)) * ZYX_EMU_L1_ARGS_SLOT);
  if (!(f->api.args_in_l1 & bit)) {
    if (!v.empty()) std::memcpy(slot, v.data(), v.size() * 4);
    f->api.args_in_l1 |= bit;
  }
  return slot;
}

// A read past the args the host set: on a card it reads whatever that L1
// word holds; here 0, with one warning line per kernel and run (naming the
// first core, the kernel and the index).
uint32_t api_arg_past_end(uint32_t kind, int32_t index, uint32_t count) {
  Fiber* f = t_fiber;
  RunState* rs = f->core->run;
  bool first;
  {
    std::lock_guard<std::mutex> lock(rs->warn_mu);
    first = rs->arg_warned.insert({f->desc, kind != 0}).second;
  }
  if (first) {
    std::string line = "zyx-emu: warning: " + where(f) + ": " + (kind ? "get_common_arg_val(" : "get_arg_val(") +
                       std::to_string(index) + ") reads past the " + std::to_string(count) +
                       (kind ? " common" : " runtime") +
                       " args the host set; it reads 0 (on a card, whatever that L1 word holds); further such "
                       "reads of this kernel are not reported\n";
    ssize_t w = write(2, line.data(), line.size());
    (void)w;
  }
  return 0;
}

}  // namespace zyx::emu
