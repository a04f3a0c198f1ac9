// Argument entries: the tensor-accessor words, and the
// compile-time values of a kernel (program_args.hpp).
#include "program_args.hpp"

namespace zyx::emu {

namespace {

bool layout_dependent(ArgKind k) {
  return k == ArgKind::BankId || k == ArgKind::BankNocX || k == ArgKind::BankNocY || k == ArgKind::Accessor;
}

}  // namespace

bool names_buffer(ArgKind k) {
  switch (k) {
    case ArgKind::BufferAddr:
    case ArgKind::BufferSize:
    case ArgKind::BufferPages:
    case ArgKind::PageSize:
    case ArgKind::BankId:
    case ArgKind::BankNocX:
    case ArgKind::BankNocY:
    case ArgKind::Accessor: return true;
    default: return false;
  }
}

bool static_entry(const ArgEntry& e, const Program& p) {
  switch (e.kind) {
    case ArgKind::Const:
    case ArgKind::CoreNocX:
    case ArgKind::CoreNocY:
    case ArgKind::SemaphoreAddr: return true;
    default: return layout_dependent(e.kind) && p.decls.count(e.param);
  }
}

// Tensor-accessor compile-time words (docs/emulator.md), as tt-metal's
// TensorAccessorArgs lays them out: the ArgsConfig flags (bit 0 sharded,
// bit 1 DRAM) and the aligned page size; a sharded tensor adds the rank (2),
// the number of banks (shard holders), the tensor shape and the shard shape
// in pages (rows, cols), and the holders' coordinates (x << 8) | y, two per
// word (even holders in the low half): a worker's NOC coordinates, or for
// DRAM the logical DRAM core (x = bank id, y = 0), as tt-metal's host
// writes them.
void accessor_words(const Geometry& g, const Board& b, std::vector<uint32_t>& out) {
  bool dram = g.spec.placement == Placement::Dram;
  uint64_t align = dram ? b.dram_alignment : b.l1_alignment;
  out.push_back((g.sharded() ? 1u : 0u) | (dram ? 2u : 0u));
  out.push_back(static_cast<uint32_t>((g.spec.page_size + align - 1) / align * align));
  if (!g.sharded()) return;
  // The page-order view: a height-sharded shard narrower than the tensor is
  // described as the block sharding of rows of shard width that it is.
  const ShardSpec& s = g.view;
  out.push_back(2);
  out.push_back(g.shards);
  out.push_back(s.tensor[0]), out.push_back(s.tensor[1]);
  out.push_back(s.shape[0]), out.push_back(s.shape[1]);
  for (uint32_t k = 0; k < g.shards; k += 2) {
    uint32_t packed = 0;
    for (uint32_t h = 0; h < 2 && k + h < g.shards; h++) {
      uint32_t u = g.shard_unit(k + h, b);
      uint32_t x = dram ? u : worker_noc_x(u % b.cols), y = dram ? 0 : worker_noc_y(u / b.cols);
      packed |= (((x & 0xff) << 8) | (y & 0xff)) << (16 * h);
    }
    out.push_back(packed);
  }
}

std::string entry_at(const ProgramDesc& d, uint32_t k, const char* list, size_t i) {
  return "kernels[" + std::to_string(k) + "] (" + d.kernels[k].name + ")." + list + "[" + std::to_string(i) + "]";
}

void compile_values(const Program& prog, uint32_t k, const ArgSource& src, std::vector<uint32_t>& pos,
                    std::vector<std::pair<std::string, uint32_t>>& named) {
  const KernelDesc& kd = prog.desc.kernels[k];
  for (size_t i = 0; i < kd.compile_args.size(); i++)
    resolve(kd.compile_args[i], src, pos, [&] { return entry_at(prog.desc, k, "compile_args", i); });
  std::vector<uint32_t> one;
  for (size_t i = 0; i < kd.named_compile_args.size(); i++) {
    one.clear();
    const auto& [name, e] = kd.named_compile_args[i];
    resolve(e, src, one, [&] { return entry_at(prog.desc, k, "named_compile_args", i) + " (" + name + ")"; });
    if (one.size() != 1)
      throw invalid(entry_at(prog.desc, k, "named_compile_args", i) + " (" + name + "): an entry of " +
                    std::to_string(one.size()) + " words cannot be a named arg");
    named.emplace_back(name, one[0]);
  }
}

}  // namespace zyx::emu
