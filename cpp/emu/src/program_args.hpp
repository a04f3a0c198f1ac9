// A program's argument entries (ArgEntry, docs/emulator.md "Arguments"):
// their values on a core, at compile (the
// compile args that need nothing from a run) or at a run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runner.hpp"
#include "validate.hpp"

namespace zyx::emu {

inline Error invalid(const std::string& msg) { return Error("invalid_argument", msg); }

// Whether an entry names a buffer param (its address, size, pages, banks,
// accessor words).
bool names_buffer(ArgKind k);

// Whether an entry resolves from the program alone.
bool static_entry(const ArgEntry& e, const Program& p);

// Appends the tensor-accessor compile-time words of a buffer layout.
void accessor_words(const Geometry& g, const Board& b, std::vector<uint32_t>& out);

// Where arg values come from: at compile only the program; at a run also
// the args and their buffers, and for runtime and common args the core
// whose L1 pointers L1 buffer addresses become.
struct ArgSource {
  const Board* board = nullptr;
  const Program* prog = nullptr;
  const std::vector<RunArg>* args = nullptr;
  const std::vector<std::shared_ptr<const Buffer>>* bufs = nullptr;
  const L1Arena* l1 = nullptr;
  uint32_t core = 0;
};

// Resolves one entry; `at` names it in errors.
template <typename At>
void resolve(const ArgEntry& e, const ArgSource& src, std::vector<uint32_t>& out, At&& at) {
  const Board& b = *src.board;
  // `at` builds its message only for a failing check: a run resolves the
  // runtime args of every core before its kernels start, and naming every
  // buffer address of every core cost a run of the 512^3 matmul on 16
  // threads about a tenth of its time (docs/emulator.md).
  auto word = [&](uint64_t v, const char* what) {
    if (v > UINT32_MAX) check_arg_word(at(), what, v);
    out.push_back(static_cast<uint32_t>(v));
  };
  const Buffer* buf = nullptr;
  if (names_buffer(e.kind) && src.bufs) buf = (*src.bufs)[e.param].get();
  switch (e.kind) {
    case ArgKind::Const: out.push_back(e.value); return;
    case ArgKind::CoreNocX: out.push_back(worker_noc_x(e.core.col)); return;
    case ArgKind::CoreNocY: out.push_back(worker_noc_y(e.core.row)); return;
    case ArgKind::SemaphoreAddr:
      // In runtime and common args the core's own L1 pointer, which a
      // kernel may dereference; in compile args (one binary for every
      // core) the L1 offset, which the API's semaphore calls accept.
      if (src.l1)
        out.push_back(src.l1->core_addr(src.core, semaphore_offset(b, e.value)));
      else
        word(semaphore_offset(b, e.value), "semaphore offset");
      return;
    case ArgKind::Param: out.push_back(static_cast<uint32_t>((*src.args)[e.param].value)); return;
    case ArgKind::BufferAddr:
      if (buf->l1() && src.l1)
        out.push_back(src.l1->core_addr(src.core, buf->address));
      else
        word(buf->address, "buffer address");
      return;
    case ArgKind::BufferSize: word(buf->size, "buffer size"); return;
    case ArgKind::BufferPages: word(buf->pages, "page count"); return;
    case ArgKind::PageSize: word(buf->geo.spec.page_size, "page size"); return;
    default: break;
  }
  // Layout-dependent kinds use the declared layout when there is one.
  auto d = src.prog->decls.find(e.param);
  const Geometry& g = d != src.prog->decls.end() ? d->second : buf->geo;
  if (e.kind == ArgKind::Accessor) {
    accessor_words(g, b, out);
    return;
  }
  uint64_t limit = buf ? buf->pages : g.sharded() ? uint64_t(g.spec.shard->tensor[0]) * g.spec.shard->tensor[1] : 0;
  if ((buf || g.sharded()) && e.page >= limit) check_bank_page(at(), e.page, limit, src.prog->desc.params[e.param].name);
  PageLoc l = g.locate(0, e.page, b);
  if (e.kind == ArgKind::BankId)
    out.push_back(l.unit);
  else if (e.kind == ArgKind::BankNocX)
    out.push_back(l.dram ? dram_noc_x(l.unit) : worker_noc_x(l.unit % b.cols));
  else
    out.push_back(l.dram ? dram_noc_y(l.unit) : worker_noc_y(l.unit / b.cols));
}

// "kernels[k] (NAME).LIST[i]" for messages.
std::string entry_at(const ProgramDesc& d, uint32_t k, const char* list, size_t i);

// The compile-time values of a kernel: positional, then named.
void compile_values(const Program& prog, uint32_t k, const ArgSource& src, std::vector<uint32_t>& pos,
                    std::vector<std::pair<std::string, uint32_t>>& named);

}  // namespace zyx::emu
