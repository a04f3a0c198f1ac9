// Semaphores (get_semaphore, noc_semaphore_wait and its forms): L1 words
// below the unreserved base of every core; increments and remote sets go
// over the NOC (api_noc.cpp).
#include "kernel_api.hpp"
#include "watcher.hpp"

namespace zyx::emu {

uint32_t api_semaphore_addr(uint32_t id) {
  if (id >= kSemaphoresPerCore)
    kernel_fail("get_semaphore(" + std::to_string(id) + "): the emulator has " + std::to_string(kSemaphoresPerCore) +
                " semaphores per core");
  return l1_va(semaphore_offset(*t_fiber->core->run->board, id));
}

void api_wait_word(uint32_t addr, uint32_t value, uint32_t cmp) {
  Wait w;
  w.kind = Wait::Word;
  w.word = reinterpret_cast<volatile uint32_t*>(l1_target(t_fiber->core, addr, 4, "noc_semaphore_wait"));
  w.value = value, w.cmp = cmp;
  w.site = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  block_until(w);
  // The wait returned: what the cores that released the word did before
  // their release is ordered before what this kernel does next (race check).
  const RunState* rs = t_fiber->core->run;
  uintptr_t a = reinterpret_cast<uintptr_t>(w.word), arena = reinterpret_cast<uintptr_t>(rs->l1->core_base(0));
  noc_note_acquire(static_cast<uint32_t>((a - arena) / L1Arena::kWindow), a & (L1Arena::kWindow - 1));
}

}  // namespace zyx::emu
