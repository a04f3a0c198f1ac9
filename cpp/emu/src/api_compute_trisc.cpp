// The compute kernel's three TRISC builds as cooperating fibers of a core
// (docs/emulator.md, "Compute model"), and the order of the DST calls in
// both modes (the DST checks of "Debugging kernels").
//
// As on the card: an FPU op issued by the unpack build takes its operands
// from the CBs (a copy of the tiles, what SrcA/SrcB hold) into a short
// per-core queue, and the same op issued by the math build computes them
// into DST; math owns DST between tile_regs_acquire and tile_regs_commit,
// pack between tile_regs_wait and tile_regs_release, and a committed section
// (a copy of the tiles math wrote) waits for pack while math fills the other
// half. A build that must wait blocks its fiber (block_until), so the
// others run.
#include <cstring>
#include <string>

#include "compute_api.hpp"

namespace zyx::emu {

using namespace compute;

const char* trisc_name(Trisc t) {
  static const char* names[] = {"compute", "unpack", "math", "pack"};
  return names[static_cast<int>(t)];
}

namespace compute {

namespace {

const char* const kFpuOpNames[] = {
    "copy_tile",         "add_tiles",         "sub_tiles",           "mul_tiles",
    "add_tiles_bcast",   "sub_tiles_bcast",   "mul_tiles_bcast",     "binary_dest_reuse_tiles",
    "unary_bcast",       "transpose_wh_tile", "matmul_tiles",        "reduce_tile",
    "unpack_tilizeA_B_block", "tilize_block", "untilize_block", "llk_unpack_AB"};

bool through(FpuOp op) { return op == kFpuTilize || op == kFpuUntilize; }

TriscHandover& ho() { return core().trisc; }

// The kernel's return address of the API call being served (for the
// deadlock table's line of a blocked build).
thread_local uintptr_t t_site = 0;

void wait_for(Wait::Kind k) {
  Wait w;
  w.kind = k;
  w.site = t_site;
  block_until(w);
}

[[noreturn]] void order_fail(const std::string& call, const std::string& what) {
  kernel_fail(call + ": " + what + " (DST protocol: tile_regs_acquire, tile_regs_commit by math; tile_regs_wait, " +
              "tile_regs_release by pack)");
}

// Math takes a DST section: in three builds it waits for a free one; the
// tiles math wrote in its last section read as zero again (the packer
// clears a section it releases).
void math_acquire(const char* call, bool old_style) {
  auto& h = ho();
  if (h.math_held)
    order_fail(call, "math already holds DST: the section it acquired was not committed (tile_regs_commit missing)");
  if (trisc() == Trisc::Math) wait_for(Wait::DstFree);
  auto& c = core();
  for (int i = 0; i < 16; i++)
    if (c.dst_written & (1u << i)) c.dst[i].fill(0);
  c.dst_written = 0;
  c.dst_acquired = true;
  h.math_held = true;
  h.old_style = old_style;
}

// Math hands its section to pack: in three builds a copy of the tiles it
// wrote joins the committed sections.
void math_commit(const char* call) {
  auto& h = ho();
  if (!h.math_held) order_fail(call, "math holds no DST section (tile_regs_acquire missing, or committed twice)");
  h.math_held = false;
  core().dst_acquired = false;
  if (trisc() != Trisc::Math) {
    h.pending++;
    return;
  }
  auto& c = core();
  DstSection& s = h.sections[(h.sec_head + h.sec_count) % 2];
  if (s.tiles.empty()) s.tiles.resize(16);
  s.written = c.dst_written;
  for (int i = 0; i < 16; i++)
    if (c.dst_written & (1u << i)) {
      s.tiles[i] = c.dst[i];
      s.kind[i] = static_cast<uint8_t>(c.dst_kind[i]);
    }
  h.sec_count++;
}

void pack_wait(const char* call) {
  auto& h = ho();
  if (h.pack_held)
    order_fail(call, "pack already holds a DST section: the one it waited for was not released (tile_regs_release "
                     "missing)");
  if (trisc() == Trisc::Pack) {
    wait_for(Wait::DstDone);
  } else {
    if (h.pending == 0)
      order_fail(call, "no DST section is committed: math must tile_regs_commit before pack waits for it");
    h.pending--;
  }
  h.pack_held = true;
}

void pack_release(const char* call) {
  auto& h = ho();
  if (!h.pack_held) order_fail(call, "pack holds no DST section (tile_regs_wait missing, or released twice)");
  h.pack_held = false;
  if (trisc() == Trisc::Pack) {
    h.sec_head = (h.sec_head + 1) % 2;
    h.sec_count--;
  }
}

// tt-metal's release_dst is math's dest_section_done and pack's. On a card
// one called with no section held (tt-metal's vecadd_multi_core example calls
// it after tile_regs_release) has math post an empty section and pack take it
// back, so both stay in step: not an error here either, but a warning (once
// per kernel and run). In the single build a release_dst after tile_regs_wait
// is pack's release alone. Returns whether the call was handled so.
bool release_dst_unpaired(Trisc t) {
  if (t == Trisc::Unpack) return false;  // release_dst has no unpack part
  auto& h = ho();
  if (t == Trisc::Single && !h.math_held && h.pack_held) {
    pack_release("release_dst");
    return true;
  }
  const bool unpaired = t == Trisc::Pack ? !h.pack_held : (!h.math_held && (t != Trisc::Single || !h.pack_held));
  if (!unpaired) return false;
  Fiber* f = t_fiber;
  RunState* rs = f->core->run;
  bool first;
  {
    std::lock_guard<std::mutex> lock(rs->warn_mu);
    first = rs->arg_warned.insert({f->desc, 3u}).second;
  }
  if (first)
    rs->warn(where(f) + ": release_dst with no DST section held: an empty section, as on a card (pair it with "
             "acquire_dst, or drop it after tile_regs_release); further such calls of this kernel are not reported");
  return true;
}

}  // namespace

void dst_sync(uint32_t op, void* site) {
  t_site = reinterpret_cast<uintptr_t>(site);
  Trisc t = trisc();
  bool math = t == Trisc::Single || t == Trisc::Math, pack = t == Trisc::Single || t == Trisc::Pack;
  switch (op) {
    case kDstAcquire: if (math) math_acquire("tile_regs_acquire", false); break;
    case kDstCommit: if (math) math_commit("tile_regs_commit"); break;
    case kDstWait: if (pack) pack_wait("tile_regs_wait"); break;
    case kDstRelease: if (pack) pack_release("tile_regs_release"); break;
    case kDstAcquireOld:
      // acquire_dst: math's acquire; pack's wait (the single build's pack
      // part comes with release_dst, after math's commit).
      if (math) math_acquire("acquire_dst", true);
      if (t == Trisc::Pack) pack_wait("acquire_dst");
      break;
    case kDstReleaseOld:
      if (release_dst_unpaired(t)) break;
      if (math) math_commit("release_dst");
      if (t == Trisc::Single) pack_wait("release_dst");
      if (pack) pack_release("release_dst");
      break;
    default: kernel_fail("unknown DST call " + std::to_string(op));
  }
}

[[noreturn]] void dst_unheld_fail(uint32_t i) {
  order_fail("DST[" + std::to_string(i) + "]",
             "math uses DST without holding a section (call tile_regs_acquire first; after tile_regs_commit DST "
             "belongs to pack)");
}

const uint32_t* pack_dst(uint32_t i, DstKind* kind, const char* call) {
  auto& h = ho();
  if (!h.pack_held && !(trisc() == Trisc::Single && h.math_held && h.old_style))
    order_fail(call, "pack reads DST[" + std::to_string(i) + "] without holding a committed section (tile_regs_wait "
                     "missing)");
  if (i >= dst_capacity()) dst_tile(i);  // reports the index past the limit
  if (trisc() != Trisc::Pack) {
    *kind = core().dst_kind[i];
    return core().dst[i].data();
  }
  static const std::array<uint32_t, 1024> zeros{};
  const DstSection& s = h.sections[h.sec_head];
  if (!(s.written & (1u << i))) {
    *kind = DstKind::F32;
    return zeros.data();
  }
  *kind = static_cast<DstKind>(s.kind[i]);
  return s.tiles[i].data();
}

uint32_t* pack_dst_for_sfpu(uint32_t i, DstKind* kind, const char* call) {
  DstKind k;
  const uint32_t* t = pack_dst(i, &k, call);
  auto& h = ho();
  const bool written = trisc() == Trisc::Pack ? (h.sections[h.sec_head].written & (1u << i)) != 0
                                              : (core().dst_written & (1u << i)) != 0;
  if (!written) kernel_fail(std::string(call) + ": DST[" + std::to_string(i) + "] holds no tile math wrote");
  *kind = k;
  return const_cast<uint32_t*>(t);
}

FpuStep::FpuStep(FpuOp op, std::initializer_list<TileRef> tiles, void* site) : op_(op) {
  t_site = reinterpret_cast<uintptr_t>(site);
  switch (trisc()) {
    case Trisc::Single: run_ = true; break;
    case Trisc::Unpack: capture(tiles); break;
    case Trisc::Math:
      consume(tiles);
      if (through(op)) pass_to_pack();
      else run_ = true;
      break;
    case Trisc::Pack:
      if (through(op)) take_in_pack(), run_ = true;
      break;
  }
}

FpuStep::~FpuStep() {
  auto& h = ho();
  if (packed_) {
    h.pack_current = nullptr;
    h.pack_head = (h.pack_head + 1) % TriscHandover::kSrcDepth;
    h.pack_count--;
  }
  if (!consumed_) return;
  h.current = nullptr;
  h.src_head = (h.src_head + 1) % TriscHandover::kSrcDepth;
  h.src_count--;
}

// Math: a through op's operands go on to pack's queue (waiting for room).
void FpuStep::pass_to_pack() {
  auto& h = ho();
  h.current = nullptr;
  if (h.pack_count == TriscHandover::kSrcDepth) wait_for(Wait::PackSpace);
  std::swap(h.src[h.src_head], h.to_pack[(h.pack_head + h.pack_count) % TriscHandover::kSrcDepth]);
  h.pack_count++;
}

// Pack: the oldest op math passed on (waiting for one) is this one.
void FpuStep::take_in_pack() {
  auto& h = ho();
  if (h.pack_count == 0) wait_for(Wait::PackOps);
  SrcOp& s = h.to_pack[h.pack_head];
  if (s.op != op_)
    kernel_fail(std::string(kFpuOpNames[op_]) + ": the pack build issues " + kFpuOpNames[op_] +
                " but the next op unpack and math passed it is " + kFpuOpNames[s.op] + ": the TRISC builds diverged");
  s.next = 0;
  h.pack_current = &s;
  packed_ = true;
}

// Unpack: a copy of each operand tile, as the op reads it from the CB's
// front now, joins the queue (waiting for room).
void FpuStep::capture(std::initializer_list<TileRef> tiles) {
  auto& h = ho();
  if (h.src_count == TriscHandover::kSrcDepth) wait_for(Wait::SrcSpace);
  SrcOp& s = h.src[(h.src_head + h.src_count) % TriscHandover::kSrcDepth];
  s.op = op_;
  s.tiles.clear();
  s.data.clear();
  const char* name = kFpuOpNames[op_];
  for (const TileRef& r : tiles) {
    uint32_t size = cb_of(r.cb).page_size;
    for (uint32_t k = 0; k < r.count; k++) {
      const uint8_t* p = front_page(r.cb, r.tile + k, name);
      s.tiles.push_back(SrcOp::Tile{r.cb, r.tile + k, s.data.size(), size});
      s.data.insert(s.data.end(), p, p + size);
    }
  }
  h.src_count++;
}

// Math: the oldest unpacked op (waiting for one) must be this op. Its
// tiles need not be the ones math names: on the card math computes what
// unpack put in the source registers, and names no CB tile.
void FpuStep::consume(std::initializer_list<TileRef> tiles) {
  auto& h = ho();
  if (h.src_count == 0) wait_for(Wait::SrcOps);
  SrcOp& s = h.src[h.src_head];
  if (s.op != op_) {
    std::string mine = tiles.size() ? " on tile " + std::to_string(tiles.begin()->tile) + " of cb " +
                                          std::to_string(tiles.begin()->cb)
                                    : "";
    std::string theirs = s.tiles.empty() ? "" : " on tile " + std::to_string(s.tiles[0].tile) + " of cb " +
                                                    std::to_string(s.tiles[0].cb);
    kernel_fail(std::string(kFpuOpNames[op_]) + ": the math build issues " + kFpuOpNames[op_] + mine +
                " but the unpack build's next operands are for " + kFpuOpNames[s.op] + theirs +
                ": the TRISC builds diverged (code under TRISC_UNPACK/TRISC_MATH or UNPACK()/MATH() must issue the "
                "same FPU ops in the same order)");
  }
  s.next = 0;
  h.current = &s;
  consumed_ = true;
}

// Math, for an LLK math call that names no CB tile: the op unpack queued
// next (waiting for one). llk_unpack_AB leaves the op to math (the card's
// unpacker loads SrcA and SrcB, the math thread chooses add, sub or mul), so
// its kind becomes `as`; any other kind is left for FpuStep to check.
const SrcOp& next_unpacked(FpuOp as, void* site) {
  t_site = reinterpret_cast<uintptr_t>(site);
  auto& h = ho();
  if (h.src_count == 0) wait_for(Wait::SrcOps);
  SrcOp& s = h.src[h.src_head];
  if (s.op == kFpuLlkAB && as >= kFpuAdd && as <= kFpuMulBcast) s.op = as;
  return s;
}

// Unpack: `data` (one tile in the CB's format) joins the queue as the operand
// of a copy from tile `tile` of `cb`, as FpuStep's capture copies a CB page
// (llk_unpack_untilize's rows, which no CB page holds as they are).
void capture_tile_data(uint32_t cb, uint32_t tile, const uint8_t* data, uint32_t size, void* site) {
  t_site = reinterpret_cast<uintptr_t>(site);
  auto& h = ho();
  if (h.src_count == TriscHandover::kSrcDepth) wait_for(Wait::SrcSpace);
  SrcOp& s = h.src[(h.src_head + h.src_count) % TriscHandover::kSrcDepth];
  s.op = kFpuCopy;
  s.tiles.assign(1, SrcOp::Tile{cb, tile, 0, size});
  s.data.assign(data, data + size);
  h.src_count++;
}

// The tile the op being executed reads: unpack's copy of that CB tile, else
// (the builds named different tiles, as the card allows) the next operand in
// unpack's order, when it holds a tile of the size this build reads.
const uint8_t* captured_tile(uint32_t cb, uint32_t tile, const char* op) {
  SrcOp* cur = trisc() == Trisc::Pack ? ho().pack_current : ho().current;
  if (!cur)
    kernel_fail(std::string(op) + ": reads cb " + std::to_string(cb) + " in the " + trisc_name(trisc()) +
                " build, which has no access to the CBs' tiles (only unpack does; the emulator does not split "
                "this call between the TRISC builds yet: run with ZYX_EMU_TRISC=1)");
  SrcOp& s = *cur;
  for (size_t i = 0; i < s.tiles.size(); i++)
    if (s.tiles[i].cb == cb && s.tiles[i].tile == tile) {
      s.next = static_cast<uint32_t>(i + 1);
      return s.data.data() + s.tiles[i].offset;
    }
  if (s.next < s.tiles.size() && s.tiles[s.next].size >= format_tile_bytes(cb_of(cb).format))
    return s.data.data() + s.tiles[s.next++].offset;
  kernel_fail(std::string(op) + ": the " + trisc_name(trisc()) + " build reads tile " + std::to_string(tile) +
              " of cb " + std::to_string(cb) + " but unpack captured no further operand of that size for this op: the "
              "TRISC builds diverged");
}

}  // namespace compute

std::string trisc_wait_text(const CoreState& c, Wait::Kind k) {
  const TriscHandover& h = c.trisc;
  switch (k) {
    case Wait::SrcOps: return "for unpack's next FPU operands (the source-register queue is empty)";
    case Wait::SrcSpace:
      return "for math to take unpacked operands (the source-register queue holds " + std::to_string(h.src_count) +
             " ops)";
    case Wait::PackOps: return "for an op math passes to pack";
    case Wait::PackSpace: return "for pack to take the ops math passed it";
    case Wait::DstFree:
      return "in tile_regs_acquire for a free DST section (" + std::to_string(h.sec_count) +
             " committed and not released by pack)";
    case Wait::DstDone: return "in tile_regs_wait for math to commit a DST section (tile_regs_commit)";
    default: return "";
  }
}

}  // namespace zyx::emu
