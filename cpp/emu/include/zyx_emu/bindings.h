// The device side of Metal 2.0 kernel bindings (tt-metal's
// experimental/kernel_args.h and the binding tokens of its dataflow-buffer
// and tensor-accessor headers): the types the generated args::, dfb::, sem::
// and ta:: names have (kernel_bindings.cpp writes them), and get_arg.
#pragma once

#include <cstdint>

#include "zyx_emu/common.h"

namespace experimental {

// A named runtime or common runtime arg: its byte offset from the start of
// the kernel's runtime (common) args; the named words come first.
template <typename T>
struct RtaArg {
  uint32_t byte_offset;
};
template <typename T>
struct CrtaArg {
  uint32_t byte_offset;
};
// A named compile-time arg: its value.
template <typename T>
struct CtaVal {
  T value;
};

template <typename T>
FORCE_INLINE T get_arg(RtaArg<T> arg) {
  static_assert(sizeof(T) == 4, "named args are 32-bit words");
  return ckernel::get_arg_val<T>(static_cast<int>(arg.byte_offset / 4));
}
template <typename T>
FORCE_INLINE T get_arg(CrtaArg<T> arg) {
  static_assert(sizeof(T) == 4, "named args are 32-bit words");
  return ckernel::get_common_arg_val<T>(static_cast<int>(arg.byte_offset / 4));
}
// Compile-time args are constants: `constexpr auto x = get_arg(args::x);`.
template <typename T>
FORCE_INLINE constexpr T get_arg(CtaVal<T> arg) {
  return arg.value;
}

}  // namespace experimental

// A dataflow-buffer binding (dfb::name): the buffer's id, which on Wormhole
// and Blackhole is the CB index, and converts to the CB id that the Gen1
// calls take (in constant expressions too).
struct DFBAccessor {
  explicit constexpr DFBAccessor(uint16_t id) noexcept : id_(id) {}
  constexpr operator uint32_t() const noexcept { return id_; }

 private:
  uint16_t id_;
};
namespace experimental {
using ::DFBAccessor;
}  // namespace experimental

namespace tensor_accessor {
// A tensor-accessor binding (ta::name): where its accessor words start in
// the compile-time args, and the byte offset of its buffer's address in the
// common runtime args. TensorAccessor(ta::name) reads both.
template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
struct TensorAccessorBindingToken {
  static constexpr uint32_t cta_offset = CTA_OFFSET;
  static constexpr uint32_t addr_crta_offset = ADDR_CRTA_OFFSET;
  static constexpr uint32_t ArgsConfig = get_compile_time_arg_val(CTA_OFFSET);
  static constexpr bool is_sharded = (ArgsConfig & 1u) != 0;
  static constexpr bool is_dram = (ArgsConfig & 2u) != 0;
  static constexpr uint32_t AlignedPageSize = get_compile_time_arg_val(CTA_OFFSET + 1);
};
template <uint32_t CTA_OFFSET, uint32_t ADDR_CRTA_OFFSET>
using TensorBindingToken = TensorAccessorBindingToken<CTA_OFFSET, ADDR_CRTA_OFFSET>;
}  // namespace tensor_accessor
