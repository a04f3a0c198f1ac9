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

// A read past the args the host set (kind 0 runtime, 1 common, 2
// compile-time; bit 8: the kernel opted out with ZYX_EMU_ALLOW_ARGS_PAST_END).
// On a card it reads whatever that L1 word holds. With the watcher's arg
// check on it is a run error; opted out (or with the check off) the kernel
// reads 0, with one warning per kernel, kind and run.
uint32_t api_arg_past_end(uint32_t kind_flags, int32_t index, uint32_t count) {
  Fiber* f = t_fiber;
  RunState* rs = f->core->run;
  uint32_t kind = kind_flags & 0xff;
  bool opted_out = (kind_flags & 0x100) != 0;
  static const char* calls[] = {"get_arg_val(", "get_common_arg_val(", "get_compile_time_arg_val("};
  static const char* kinds[] = {" runtime", " common", " compile-time"};
  if (kind > 2) kind = 0;
  std::string call = calls[kind] + std::to_string(index) + ")";
  std::string past = "index " + std::to_string(index) + " is past the " + std::to_string(count) + kinds[kind] +
                     " args the host set";
  if (rs->watch.args && !opted_out)
    kernel_fail(call + ": " + past +
                " (watcher check args: on a card it reads whatever that L1 word holds; set the arg, or opt out: "
                "define ZYX_EMU_ALLOW_ARGS_PAST_END for the kernel to read 0, or run with ZYX_EMU_WATCHER=no-args)");
  bool first;
  {
    std::lock_guard<std::mutex> lock(rs->warn_mu);
    first = rs->arg_warned.insert({f->desc, kind}).second;
  }
  if (first)
    rs->warn(where(f) + ": " + call + ": " + past +
             "; it reads 0 (on a card, whatever that L1 word holds); further such reads of this kernel are not "
             "reported");
  return 0;
}

}  // namespace zyx::emu
