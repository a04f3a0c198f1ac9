// A Metal 2.0 kernel (shared by cpp/emu/tests/dataflow_metal2_tests.cpp and
// tt/v2_emulator_test.go): each core writes one 32-byte page of tensor
// ta::out (page args::page) holding what its generated bindings read: named
// runtime, common and compile args (args::), a runtime and a common vararg,
// semaphore sem::go's value and id, dataflow buffer dfb::scratch's CB id,
// and ta::out's page size.
#include "api/dataflow/dataflow_api.h"
#include "experimental/dataflow_buffer.h"
#include "experimental/kernel_args.h"

void kernel_main() {
  constexpr uint32_t bias = get_arg(args::bias);
  static_assert(bias == 7, "a named compile arg is a constant expression");
  experimental::DataflowBuffer scratch(dfb::scratch);
  const TensorAccessor out(ta::out);
  scratch.reserve_back(1);
  uint32_t* w = reinterpret_cast<uint32_t*>(scratch.get_write_ptr());
  w[0] = get_arg(args::base) * get_arg(args::scale) + bias;
  w[1] = get_vararg(0);
  w[2] = get_common_vararg(0);
  w[3] = *reinterpret_cast<volatile uint32_t*>(get_semaphore(sem::go));
  w[4] = dfb::scratch;
  w[5] = sem::go;
  w[6] = out.get_aligned_page_size();
  w[7] = get_arg(args::page);
  noc_async_write(scratch.get_write_ptr(), out.get_noc_addr(get_arg(args::page)), 32);
  noc_async_write_barrier();
}
