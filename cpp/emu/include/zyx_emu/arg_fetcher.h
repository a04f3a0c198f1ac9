// zyx-tt emulator: ArgFetcher, which ttnn's moreh_common helpers (compute
// and dataflow, ttnn/kernel/{compute,dataflow}/moreh_common.hpp) both
// provide by that name: it hands out a kernel's runtime args in order.
#pragma once

#include "zyx_emu/common.h"

namespace zyx_emu_args {
class ArgFetcher {
 public:
  template <typename T>
  T get_next_arg_val() {
    return ckernel::get_arg_val<T>(next_++);
  }

 private:
  int next_ = 0;
};
}  // namespace zyx_emu_args
