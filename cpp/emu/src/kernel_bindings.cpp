// The Metal 2.0 bindings a kernel is built with: what a Metal 2.0 host's JIT
// build generates per kernel from the program's named resources (its
// kernel_bindings_generated.h and kernel_args_generated.h), as one block of
// text that the builder places after the kernel prelude and before the
// kernel (compiler.cpp). Being part of the generated source, it is part of
// the kernel cache key. docs/emulator.md "Metal 2.0 bindings".
#include <cctype>
#include <sstream>

#include "emu.hpp"

namespace zyx::emu {

namespace {

// The words of the tensor-accessor entry at pos[at] (program_args.cpp's
// accessor_words): the flags and the page size; a sharded one adds the rank,
// the bank count, the tensor and shard shapes and the packed bank
// coordinates, two per word.
size_t accessor_word_count(const std::vector<uint32_t>& pos, size_t at) {
  if (at + 1 >= pos.size() || !(pos[at] & 1u)) return 2;
  if (at + 3 >= pos.size()) return pos.size() - at;
  return 4 + 2 * size_t{pos[at + 2]} + (size_t{pos[at + 3]} + 1) / 2;
}

// The word offset of each compile_args entry within the resolved words:
// every entry is one word but an accessor.
std::vector<uint32_t> entry_offsets(const KernelDesc& kd, const std::vector<uint32_t>& pos) {
  std::vector<uint32_t> out;
  size_t at = 0;
  for (const ArgEntry& e : kd.compile_args) {
    out.push_back(static_cast<uint32_t>(at));
    at += e.kind == ArgKind::Accessor ? accessor_word_count(pos, at) : 1;
  }
  return out;
}

// Names become code: the server checks them, and so does the builder, which
// the emulator's own tests drive without it.
const std::string& identifier(const std::string& name, const KernelDesc& kd) {
  bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok) throw Error("invalid_argument", "binding name \"" + name + "\" of the " + kd.name + " kernel is not a C identifier");
  return name;
}

// namespace dfb, sem and ta: the binding tokens (kernel_bindings_generated.h).
void resource_bindings(std::ostream& out, const KernelDesc& kd, const std::vector<uint32_t>& pos) {
  const KernelBindings& b = kd.bindings;
  if (!b.dfb_ids.empty()) {
    out << "namespace dfb {\n";
    for (const auto& [n, id] : b.dfb_ids)
      out << "constexpr experimental::DFBAccessor " << identifier(n, kd) << "{" << id << "};\n";
    out << "}  // namespace dfb\n";
  }
  if (!b.semaphore_ids.empty()) {
    out << "namespace sem {\n";
    for (const auto& [n, id] : b.semaphore_ids) out << "constexpr std::uint32_t " << identifier(n, kd) << " = " << id << "u;\n";
    out << "}  // namespace sem\n";
  }
  if (b.tensor_slots.empty()) return;
  std::vector<uint32_t> offsets = entry_offsets(kd, pos);
  out << "namespace ta {\n";
  for (const auto& t : b.tensor_slots) {
    if (t.compile_entry >= offsets.size())
      throw Error("internal", "tensor binding " + t.name + " of the " + kd.name + " kernel has no compile-time words");
    const std::string& n = identifier(t.name, kd);
    out << "using " << n << "_t = ::tensor_accessor::TensorAccessorBindingToken<" << offsets[t.compile_entry] << "u, "
        << t.common_word * 4 << "u>;\n";
    out << "constexpr " << n << "_t " << n << "{};\n";
  }
  out << "}  // namespace ta\n";
}

// namespace args and the vararg helpers (kernel_args_generated.h): named
// runtime and common args by byte offset from the start of their lists,
// named compile args by value. Varargs follow the named words, and the
// common ones the tensor addresses too.
void arg_bindings(std::ostream& out, const KernelDesc& kd, const std::vector<std::pair<std::string, uint32_t>>& named) {
  const KernelBindings& b = kd.bindings;
  if (!b.runtime_arg_names.empty() || !b.common_arg_names.empty() || !named.empty()) {
    out << "namespace args {\n";
    for (size_t i = 0; i < b.runtime_arg_names.size(); i++)
      out << "constexpr experimental::RtaArg<uint32_t> " << identifier(b.runtime_arg_names[i], kd) << "{" << i * 4 << "};\n";
    for (size_t i = 0; i < b.common_arg_names.size(); i++)
      out << "constexpr experimental::CrtaArg<uint32_t> " << identifier(b.common_arg_names[i], kd) << "{" << i * 4 << "};\n";
    for (const auto& [n, v] : named) out << "constexpr experimental::CtaVal<uint32_t> " << identifier(n, kd) << "{" << v << "u};\n";
    out << "}  // namespace args\n";
  }
  out << "FORCE_INLINE uint32_t get_vararg(uint32_t idx) { return get_arg_val<uint32_t>(" << b.runtime_arg_names.size()
      << " + idx); }\n";
  out << "FORCE_INLINE uint32_t get_common_vararg(uint32_t idx) { return get_common_arg_val<uint32_t>("
      << b.common_arg_names.size() + b.tensor_slots.size() << " + idx); }\n";
}

}  // namespace

std::string kernel_bindings_source(const KernelDesc& kd, const std::vector<uint32_t>& compile_args,
                                   const std::vector<std::pair<std::string, uint32_t>>& named) {
  if (!kd.bindings.any()) return "";
  std::ostringstream out;
  out << "#line 1 \"kernel_bindings_generated.h\"\n#include \"zyx_emu/bindings.h\"\n";
  resource_bindings(out, kd, compile_args);
  out << "#line 1 \"kernel_args_generated.h\"\n";
  arg_bindings(out, kd, named);
  return out.str();
}

}  // namespace zyx::emu
