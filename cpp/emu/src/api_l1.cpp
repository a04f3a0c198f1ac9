// The core's L1 as a kernel sees it (api/core_local_mem.h, pointers from
// L1 addresses), the section's scratch words the kernel headers keep NOC
// state in, and the page sizes of the run's buffers by address
// (TensorAccessor without a page size).
#include "kernel_api.hpp"

namespace zyx::emu {

void* api_l1_ptr(uint32_t addr) { return l1_target(t_fiber->core, addr, 0, "l1 pointer"); }
void* api_l1_range(uint32_t addr, uint32_t size, const char* op) {
  return l1_target(t_fiber->core, addr, size, op ? op : "L1 access");
}

// A DRAM address, or an L1 address (a core's pointer or a plain offset);
// an L1 lookup is tried for values that are pointers into L1 or that no DRAM
// buffer of the run has.
uint32_t api_buffer_page_size(uint32_t addr) {
  RunState* rs = t_fiber->core->run;
  if (!rs->l1->contains(addr)) {
    auto it = rs->dram_page_sizes.find(addr);
    if (it != rs->dram_page_sizes.end()) return it->second;
  }
  auto it = rs->l1_page_sizes.find(static_cast<uint32_t>(addr & (L1Arena::kWindow - 1)));
  return it == rs->l1_page_sizes.end() ? 0 : it->second;
}

uint64_t* api_scratch() { return t_fiber->api.scratch; }

}  // namespace zyx::emu
