#include "metal_checks.hpp"

#include <string>
#include <vector>

namespace zyx::metal {

namespace {

std::string indexed(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

[[noreturn]] void refuse_semaphore_addr(const std::string& path, const KernelDesc& k) {
  throw Error("unsupported", path + ": kernel " + k.name +
                                 ": semaphore_addr args are emulator-only; on metal pass the semaphore's id "
                                 "(kind semaphore in the bundle) and call get_semaphore in the kernel");
}

void check_list(const std::vector<ArgEntry>& list, const std::string& path, const KernelDesc& k) {
  for (size_t i = 0; i < list.size(); i++)
    if (list[i].kind == ArgKind::SemaphoreAddr) refuse_semaphore_addr(indexed(path, i), k);
}

void check_kernel(const KernelDesc& k, const std::string& path) {
  // tt-metal builds these from its own Metal 2.0 host API (ProgramSpec),
  // which the layer does not drive yet; CreateKernel would leave the kernel
  // without its args::, dfb::, sem:: and ta:: names.
  if (k.bindings.any())
    throw Error("unsupported", path + ": kernel " + k.name +
                                   ": Metal 2.0 bindings (named runtime or common args, dfbs, semaphore_bindings, "
                                   "tensors, metal2) are emulator-only for now");
  check_list(k.compile_args, path + ".compile_args", k);
  for (const auto& [name, e] : k.named_compile_args) {
    std::string at = path + ".named_compile_args." + name;
    if (e.kind == ArgKind::SemaphoreAddr) refuse_semaphore_addr(at, k);
  }
  check_list(k.common_args, path + ".common_args", k);
  for (size_t j = 0; j < k.runtime_args.size(); j++)
    check_list(k.runtime_args[j].args, indexed(path + ".runtime_args", j) + ".args", k);
}

}  // namespace

bool has_tt_metal_format(DataFormat f) {
  switch (f) {
    case DataFormat::Float32:
    case DataFormat::Float16:
    case DataFormat::Float16_b:
    case DataFormat::Bfp8_b:
    case DataFormat::Bfp4_b:
    case DataFormat::Int32:
    case DataFormat::UInt32:
    case DataFormat::UInt16:
    case DataFormat::UInt8:
    case DataFormat::Int8:
      return true;
    case DataFormat::Invalid:
      break;
  }
  return false;
}

void check_program(const ProgramDesc& p) {
  for (size_t k = 0; k < p.kernels.size(); k++) check_kernel(p.kernels[k], indexed("compile.kernels", k));
  for (size_t c = 0; c < p.cbs.size(); c++)
    for (size_t i = 0; i < p.cbs[c].indices.size(); i++)
      if (!has_tt_metal_format(p.cbs[c].indices[i].format))
        throw Error("invalid_argument", indexed(indexed("compile.cbs", c) + ".indices", i) +
                                            ".format: data format " + data_format_name(p.cbs[c].indices[i].format) +
                                            " has no tt-metal equivalent");
}

}  // namespace zyx::metal
