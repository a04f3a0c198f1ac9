// Names of the program model's enums (device_layer.hpp), shared by the
// server and both device layers.
#include "device_layer.hpp"

#include <algorithm>
#include <optional>

namespace zyx {

std::optional<DataFormat> parse_data_format(const std::string& name) {
  for (const auto& [n, f] : kDataFormatNames)
    if (name == n) return f;
  return std::nullopt;
}

const char* data_format_name(DataFormat f) { return name_in(kDataFormatNames, f, "Invalid"); }

const char* processor_name(Processor p) { return name_in(kProcessorNames, p, "unknown"); }

namespace {

// The lookups leave a name the program lacks unresolved: check_program
// reports it, with its field path.
std::optional<uint32_t> cb_index_named(const ProgramDesc& p, const std::string& n) {
  for (const auto& cb : p.cbs)
    for (const auto& x : cb.indices)
      if (x.name == n) return x.index;
  return std::nullopt;
}

std::optional<uint32_t> semaphore_named(const ProgramDesc& p, const std::string& n) {
  for (const auto& s : p.semaphores)
    if (s.name == n) return s.id;
  return std::nullopt;
}

std::optional<uint32_t> buffer_param_named(const ProgramDesc& p, const std::string& n) {
  for (size_t i = 0; i < p.params.size(); i++)
    if (p.params[i].name == n && p.params[i].is_buffer()) return static_cast<uint32_t>(i);
  return std::nullopt;
}

}  // namespace

ProgramDesc lower_bindings(const ProgramDesc& p) {
  ProgramDesc out = p;
  for (KernelDesc& kd : out.kernels) {
    KernelBindings& b = kd.bindings;
    b.dfb_ids.clear(), b.semaphore_ids.clear(), b.tensor_slots.clear();
    for (const auto& [acc, n] : b.dfbs)
      if (auto id = cb_index_named(p, n)) b.dfb_ids.emplace_back(acc, *id);
    for (const auto& [acc, n] : b.semaphores)
      if (auto id = semaphore_named(p, n)) b.semaphore_ids.emplace_back(acc, *id);
    // In accessor-name order (the map's), as the protocol's object gives no
    // other order that every client keeps.
    uint32_t word = static_cast<uint32_t>(std::min(b.common_arg_names.size(), kd.common_args.size()));
    for (const auto& [acc, n] : b.tensors) {
      std::optional<uint32_t> param = buffer_param_named(p, n);
      if (!param) continue;
      KernelBindings::Tensor t{acc, *param, static_cast<uint32_t>(kd.compile_args.size()), word};
      ArgEntry words, addr;
      words.kind = ArgKind::Accessor, words.param = t.param;
      addr.kind = ArgKind::BufferAddr, addr.param = t.param;
      kd.compile_args.push_back(words);
      kd.common_args.insert(kd.common_args.begin() + word, addr);
      b.tensor_slots.push_back(t);
      word++;
    }
  }
  return out;
}

}  // namespace zyx
