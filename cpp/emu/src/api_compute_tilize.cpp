// Tilize and untilize (api/compute/tilize.h, untilize.h, pack_untilize.h,
// pack_rows), and the source registers of unpack_tilizeA_B_block with the
// math-only calls that consume them (reduce_tile_math, matmul_tiles_math,
// and the other compute_special operations).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compute_api.hpp"

namespace zyx::emu {

using namespace compute;

namespace {

// The byte address of element `e` of a row-major strip held in consecutive
// pages of a circular buffer, starting at page `first` of the ring.
uint8_t* strip_elem(CircularBuffer& cb, uint32_t first, uint64_t e, uint32_t esize) {
  uint64_t off = e * esize;
  uint64_t page = (first + off / cb.page_size) % cb.num_pages;
  return core().l1 + cb.offset + page * cb.page_size + off % cb.page_size;
}

// Pages [first, first + n) from the front of a circular buffer (unpack's
// copies in the math and pack builds), and element `e` of the row-major
// strip they hold.
std::vector<const uint8_t*> front_pages(uint32_t id, uint32_t first, uint32_t n, const char* op) {
  std::vector<const uint8_t*> pages(n);
  for (uint32_t k = 0; k < n; k++) pages[k] = front_page(id, first + k, op);
  return pages;
}
const uint8_t* strip_in(const std::vector<const uint8_t*>& pages, uint32_t page_size, uint64_t e, uint32_t esize) {
  uint64_t off = e * esize;
  return pages[off / page_size] + off % page_size;
}

// Whether the calling build sees the CBs' fill levels as the op's checks
// need: the input side in the single build and unpack, the output side in
// the single build and pack.
bool checks_input() { return trisc() == Trisc::Single || trisc() == Trisc::Unpack; }

constexpr size_t kMaxSrcPairs = 64;

ComputeState::SrcPair pop_src(const char* op) {
  auto& cs = cstate();
  if (cs.src_head == cs.src.size())
    kernel_fail(std::string(op) +
                ": the source registers hold no tile (call unpack_tilizeA_B_block first, or llk_unpack_AB_matmul)");
  ComputeState::SrcPair p = cs.src[cs.src_head++];
  if (cs.src_head == cs.src.size()) cs.src.clear(), cs.src_head = 0;
  return p;
}

// tt-llk's per-thread calls (llk_api.h). On a card the unpack thread loads
// SrcA/SrcB and the math thread computes from them; in the three builds the
// unpack build's call queues its operand tiles as the matching kernel-API
// op's unpack part does (FpuStep), and the math build's call takes the next
// queued op and computes it through that op, so both halves keep the API
// op's numerics and checks. The single build runs both calls in program
// order: the unpack call names tiles at the front, the math call computes
// them.

// llk_unpack_AB_matmul: tile t0 of in0 (A) and tile t1 of in1 (B) for
// llk_math_matmul. Single build: into the source registers, B transposed
// when the last matmul init asked for it, as matmul_tiles reads them.
void unpack_ab_matmul(uint32_t in0, uint32_t in1, uint32_t t0, uint32_t t1) {
  if (trisc() == Trisc::Unpack) {
    FpuStep step(kFpuMatmul, {{in0, t0}, {in1, t1}});
    return;
  }
  if (trisc() != Trisc::Single) return;  // an unpack call: math and pack do not run it
  const char* op = "llk_unpack_AB_matmul";
  auto& cs = cstate();
  if (cs.src.size() - cs.src_head >= kMaxSrcPairs)
    kernel_fail(std::string(op) + ": more than " + std::to_string(kMaxSrcPairs) +
                " unpacked tile pairs wait for llk_math_matmul");
  ComputeState::SrcPair p;
  unpack_floats(in0, t0, p.a.data(), op);
  unpack_floats(in1, t1, p.b.data(), op);
  if (cs.mm_transpose) transpose_tile(reinterpret_cast<uint32_t*>(p.b.data()), false);
  p.fmt_a = static_cast<uint32_t>(cb_of(in0).format);
  p.fmt_b = static_cast<uint32_t>(cb_of(in1).format);
  cs.src.push_back(p);
}

// llk_math_matmul: DST[dst] += the next unpacked pair (unpack_tilizeA_B_block's
// pairs first, as matmul_tiles_math takes them).
void llk_matmul(uint32_t dst, void* site) {
  auto& cs = cstate();
  if (trisc() == Trisc::Math && cs.src_head == cs.src.size()) {
    const SrcOp& s = next_unpacked(kFpuMatmul, site);
    if (s.tiles.size() != 2)
      kernel_fail("llk_math_matmul: the unpack build's next operands are not a matmul pair: the TRISC builds diverged");
    api_matmul(s.tiles[0].cb, s.tiles[1].cb, s.tiles[0].tile, s.tiles[1].tile, dst, 2);
    return;
  }
  if (dst >= dst_capacity()) dst_tile(dst);  // reports the bad index
  ComputeState::SrcPair p = pop_src("llk_math_matmul (matmul_tiles_math)");
  mm_into(dst, p.a.data(), p.b.data(), float_kind(Format(p.fmt_a), Format(p.fmt_b)));
}

// llk_unpack_A names a tile for llk_math_eltwise_unary_datacopy, which
// copies it into DST as copy_tile does.
void unpack_a(uint32_t cb, uint32_t tile) {
  if (trisc() == Trisc::Unpack) return api_copy_tile(cb, tile, 0);  // queues the operand only
  if (trisc() != Trisc::Single) return;
  front_tile(cb, tile, "llk_unpack_A");  // reports a bad cb or a tile not at the front
  cstate().unpack_a_cb = cb;
  cstate().unpack_a_tile = tile;
}
void datacopy(uint32_t dst, void* site) {
  if (trisc() == Trisc::Math) {
    const SrcOp& s = next_unpacked(kFpuCopy, site);
    if (s.tiles.empty())
      kernel_fail("llk_math_eltwise_unary_datacopy: the unpack build's next operands are not a tile to copy: the "
                  "TRISC builds diverged");
    return api_copy_tile(s.tiles[0].cb, s.tiles[0].tile, dst);
  }
  auto& cs = cstate();
  if (cs.unpack_a_cb == ~0u)
    kernel_fail("llk_math_eltwise_unary_datacopy: no tile unpacked (call llk_unpack_A first)");
  uint32_t cb = cs.unpack_a_cb;
  cs.unpack_a_cb = ~0u;
  api_copy_tile(cb, cs.unpack_a_tile, dst);
}

// llk_unpack_AB: tile t0 of cb0 to SrcA, t1 of cb1 to SrcB, for
// llk_math_eltwise_binary, which chooses the op.
void llk_unpack_ab(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1) {
  if (trisc() == Trisc::Unpack) {
    FpuStep step(kFpuLlkAB, {{cb0, t0}, {cb1, t1}});
    return;
  }
  if (trisc() != Trisc::Single) return;
  front_tile(cb0, t0, "llk_unpack_AB");  // reports a bad cb or a tile not at the front
  front_tile(cb1, t1, "llk_unpack_AB");
  auto& cs = cstate();
  cs.unpack_ab_cb0 = cb0, cs.unpack_ab_cb1 = cb1, cs.unpack_ab_t0 = t0, cs.unpack_ab_t1 = t1;
}

// llk_math_eltwise_binary: DST[dst] = A op B (B broadcast), from the pair
// llk_unpack_AB unpacked (as add_tiles and its kin compute it), or from
// unpack_tilizeA_B_block's next pair (its tilized A with B).
void llk_binary(uint32_t dst, uint32_t op, uint32_t bcast, void* site) {
  const char* name = "llk_math_eltwise_binary";
  if (op > ZYX_BIN_MUL || bcast > ZYX_BC_SCALAR)
    kernel_fail(std::string(name) + ": op " + std::to_string(op) + ", broadcast " + std::to_string(bcast) +
                " is not an add, sub or mul with a broadcast the FPU has");
  auto& cs = cstate();
  if (cs.src_head != cs.src.size()) {
    ComputeState::SrcPair p = pop_src(name);
    uint32_t* d = dst_tile(dst);
    DstKind k = float_kind(Format(p.fmt_a), Format(p.fmt_b));
    const bool acc = cs.acc_to_dest && op != ZYX_BIN_MUL && ((core().dst_written >> dst) & 1) &&
                     core().dst_kind[dst] != DstKind::Int;
    float* out = reinterpret_cast<float*>(d);
    for (int i = 0; i < 1024; i++) {
      const int f = i >> 8, r = ((f >> 1) << 4) | ((i >> 4) & 15), c = ((f & 1) << 4) | (i & 15);
      const float y = p.b[bcast == ZYX_BC_NONE ? i : bcast == ZYX_BC_COL ? fidx(r, 0) : bcast == ZYX_BC_ROW ? fidx(0, c) : 0];
      const float v = op == ZYX_BIN_ADD ? p.a[i] + y : op == ZYX_BIN_SUB ? p.a[i] - y : p.a[i] * y;
      out[i] = acc ? out[i] + v : v;
    }
    dst_round(d, k);
    mark(dst, k);
    return;
  }
  if (trisc() == Trisc::Math) {
    const FpuOp as = FpuOp((bcast == ZYX_BC_NONE ? kFpuAdd : kFpuAddBcast) + op);
    const SrcOp& s = next_unpacked(as, site);
    if (s.tiles.size() != 2)
      kernel_fail(std::string(name) + ": the unpack build's next operands are not a tile pair: the TRISC builds "
                  "diverged");
    return api_binary_bcast(op, bcast, s.tiles[0].cb, s.tiles[1].cb, s.tiles[0].tile, s.tiles[1].tile, dst, 0);
  }
  if (cs.unpack_ab_cb0 == ~0u) kernel_fail(std::string(name) + ": no tiles unpacked (call llk_unpack_AB first)");
  uint32_t cb0 = cs.unpack_ab_cb0;
  cs.unpack_ab_cb0 = ~0u;
  api_binary_bcast(op, bcast, cb0, cs.unpack_ab_cb1, cs.unpack_ab_t0, cs.unpack_ab_t1, dst, 0);
}

// llk_unpack_untilize (pass 0) or one of its two passes (1, 2): the block of
// n tiles at cb's front as n tiles of rows, tile k holding elements
// 1024 k .. 1024 k + 1023 of the block read row by row (32 rows of 32 n), in
// face order, so that math's copies packed in order lay the block out
// row-major. On a card the first pass unpacks the top 16 rows of the block
// and the second the bottom 16; here the first queues the n / 2 (rounded
// down) tiles that lie wholly in the top rows and the second the rest, the
// same tiles in the same order. The three builds only: in the single build
// the copies would read the CB's tiles themselves.
void llk_unpack_untilize(uint32_t cb, uint32_t n, uint32_t pass, void* site) {
  const char* op = "llk_unpack_untilize";
  if (trisc() == Trisc::Single)
    kernel_fail(std::string(op) + ": runs in the three TRISC builds only (the kernel names TRISC_UNPACK, TRISC_MATH "
                "or TRISC_PACK, or ZYX_EMU_TRISC=3)");
  if (trisc() != Trisc::Unpack) return;
  auto& in = cb_of(cb);
  const uint32_t es = format_bytes(in.format);
  if (es == 0 || format_is_block(in.format))
    kernel_fail(std::string(op) + ": cb " + std::to_string(cb) + " holds " + format_name(in.format) +
                ", which has no row-major form");
  if (n == 0) return;
  const uint32_t bytes = 1024 * es;
  std::vector<const uint8_t*> tiles(n);
  for (uint32_t t = 0; t < n; t++) tiles[t] = front_tile(cb, t, op);  // reports tiles not at the front
  const uint32_t first = pass == 2 ? n / 2 : 0, last = pass == 1 ? n / 2 : n;
  const uint64_t width = uint64_t(n) * 32;
  std::vector<uint8_t> rows(bytes);
  for (uint32_t k = first; k < last; k++) {
    for (uint32_t p = 0; p < 1024; p++) {
      const uint64_t e = uint64_t(k) * 1024 + p;
      const uint32_t r = static_cast<uint32_t>(e / width), c = static_cast<uint32_t>(e % width);
      std::memcpy(&rows[size_t(p) * es], tiles[c / 32] + size_t(fidx(r, c % 32)) * es, es);
    }
    capture_tile_data(cb, k, rows.data(), bytes, site);
  }
}

}  // namespace

void api_tilize(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t in_tile, uint32_t out_tile) {
  auto& in = cb_of(icb);
  auto& out = cb_of(ocb);
  uint32_t es = format_bytes(in.format);
  if (es == 0 || format_is_block(in.format))
    kernel_fail(std::string("tilize_block: cb ") + std::to_string(icb) + " holds " + format_name(in.format) +
                ", which has no row-major form");
  if (checks_input() && in_tile + block > in.available())
    kernel_fail("tilize_block: " + std::to_string(block) + " tiles from " + std::to_string(in_tile) + " of cb " +
                std::to_string(icb) + " but only " + std::to_string(in.available()) + " page(s) are at the front");
  FpuStep step(kFpuTilize, {{icb, in_tile, block}});
  if (!step.execute()) return;
  if (out_tile + block > out.num_pages - out.available())
    kernel_fail("tilize_block: output tiles beyond the free space of cb " + std::to_string(ocb) +
                " (missing cb_reserve_back?)");
  std::vector<const uint8_t*> pages = front_pages(icb, in_tile, block, "tilize_block");
  uint64_t width = uint64_t(block) * 32;
  DstKind k = format_is_int(in.format) ? DstKind::Int : DstKind::F32;
  std::vector<uint8_t> face(1024 * es);
  uint32_t tile[1024];
  for (uint32_t t = 0; t < block; t++) {
    for (int r = 0; r < 32; r++)
      for (int c = 0; c < 32; c++)
        std::memcpy(&face[size_t(fidx(r, c)) * es], strip_in(pages, in.page_size, r * width + t * 32 + c, es), es);
    tile_unpack(face.data(), in.format, tile, k);
    uint32_t page = (out.wr_page + out_tile + t) % out.num_pages;
    pack_to(tile, k, core().l1 + out.offset + uint64_t(page) * out.page_size, out.format);
  }
}

void api_untilize(uint32_t icb, uint32_t ntiles, uint32_t ocb) {
  FpuStep step(kFpuUntilize, {{icb, 0, ntiles}});
  if (!step.execute()) return;
  auto& out = cb_of(ocb);
  uint32_t es = format_bytes(out.format);
  if (es == 0 || format_is_block(out.format))
    kernel_fail(std::string("untilize: cb ") + std::to_string(ocb) + " holds " + format_name(out.format) +
                ", which has no row-major form");
  if (out.pack_next + ntiles > out.num_pages - out.available())
    kernel_fail("untilize: output beyond the free space of cb " + std::to_string(ocb) + " (missing cb_reserve_back?)");
  uint32_t first = (out.wr_page + out.pack_next) % out.num_pages;
  out.pack_next += ntiles;
  Format fi = cb_of(icb).format;
  DstKind k = format_is_int(fi) ? DstKind::Int : dst_kind_for(fi, core().run->fp32_dest_acc);
  uint64_t width = uint64_t(ntiles) * 32;
  uint32_t tile[1024];
  std::vector<uint8_t> face(1024 * es);
  for (uint32_t t = 0; t < ntiles; t++) {
    tile_unpack(front_tile(icb, t, "untilize_block"), fi, tile, k);
    tile_pack(tile, k, face.data(), out.format);
    for (int r = 0; r < 32; r++)
      for (int c = 0; c < 32; c++)
        std::memcpy(strip_elem(out, first, r * width + t * 32 + c, es), &face[size_t(fidx(r, c)) * es], es);
  }
}

void api_pack_untilize(uint32_t dst0, uint32_t block_rt, uint32_t block_ct, uint32_t full_ct, uint32_t block_c,
                       uint32_t ocb) {
  if (!on_pack()) return;
  auto& out = cb_of(ocb);
  uint32_t es = format_bytes(out.format);
  if (es == 0 || format_is_block(out.format))
    kernel_fail(std::string("pack_untilize: cb ") + std::to_string(ocb) + " holds " + format_name(out.format) +
                ", which has no row-major form");
  uint32_t row0 = block_c >> 16;
  block_c &= 0xffff;
  if (block_ct == 0 || full_ct < block_ct || (block_c + 1) * block_ct > full_ct)
    kernel_fail("pack_untilize: block " + std::to_string(block_c) + " of " + std::to_string(block_ct) +
                " tiles does not fit a row of " + std::to_string(full_ct) + " tiles");
  if ((row0 + block_rt) * full_ct > out.num_pages - out.available())
    kernel_fail("pack_untilize: output beyond the free space of cb " + std::to_string(ocb) +
                " (missing cb_reserve_back?)");
  uint64_t width = uint64_t(full_ct) * 32;
  std::vector<uint8_t> face(1024 * es);
  for (uint32_t r = 0; r < block_rt; r++) {
    uint32_t first = (out.wr_page + (row0 + r) * full_ct) % out.num_pages;
    for (uint32_t c = 0; c < block_ct; c++) {
      DstKind kind;
      const uint32_t* d = pack_dst(dst0 + r * block_ct + c, &kind, "pack_untilize");
      pack_to(d, kind, face.data(), out.format);
      uint64_t col0 = uint64_t(block_c * block_ct + c) * 32;
      for (int rr = 0; rr < 32; rr++)
        for (int cc = 0; cc < 32; cc++)
          std::memcpy(strip_elem(out, first, rr * width + col0 + cc, es), &face[size_t(fidx(rr, cc)) * es], es);
    }
  }
}

void api_pack_rows(uint32_t dst, uint32_t ocb, uint32_t out_index) {
  if (!on_pack()) return;
  auto& out = cb_of(ocb);
  uint32_t rows = cstate().pack_rows;
  uint32_t es = format_bytes(out.format);
  if (rows == 0 || rows > 64) kernel_fail("pack_rows: call pack_rows_init with 1 to 64 rows first");
  if (es == 0 || format_is_block(out.format)) kernel_fail("pack_rows: the output format has no row form");
  if (out_index >= out.num_pages - out.available()) kernel_fail("pack_rows: beyond the free space of the cb");
  std::vector<uint8_t> face(1024 * es);
  DstKind kind;
  const uint32_t* d = pack_dst(dst, &kind, "pack_rows");
  pack_to(d, kind, face.data(), out.format);
  uint32_t page = (out.wr_page + out_index) % out.num_pages;
  uint64_t bytes = std::min<uint64_t>(uint64_t(rows) * 16 * es, out.page_size);
  std::memcpy(core().l1 + out.offset + uint64_t(page) * out.page_size, face.data(), bytes);
}

void api_unpack_tilize_ab(uint32_t icb0, uint32_t icb1, uint32_t block, uint32_t tile_b, uint32_t num_faces,
                          uint32_t face_r_dim, uint32_t flags) {
  const char* op = "unpack_tilizeA_B_block";
  auto& in = cb_of(icb0);
  uint32_t es = format_bytes(in.format);
  if (es == 0 || format_is_block(in.format))
    kernel_fail(std::string(op) + ": cb " + std::to_string(icb0) + " holds " + format_name(in.format) +
                ", which has no row-major form");
  if (num_faces != 1 && num_faces != 2 && num_faces != 4)
    kernel_fail(std::string(op) + ": num_faces " + std::to_string(num_faces) + " is not 1, 2 or 4");
  if (face_r_dim < 1 || face_r_dim > 16)
    kernel_fail(std::string(op) + ": srca_face_r_dim " + std::to_string(face_r_dim) + " is not 1 to 16");
  // The strip: rows of block * tile-width elements, face_r_dim rows for the
  // top faces and (num_faces 4) as many again for the bottom ones.
  uint32_t tw = num_faces == 1 ? 16 : 32;
  uint32_t rows = (num_faces > 2 ? 2 : 1) * face_r_dim;
  uint64_t width = uint64_t(block) * tw;
  uint64_t need = uint64_t(rows) * width * es;
  uint64_t have = uint64_t(in.available()) * in.page_size;
  if (checks_input() && need > have)
    kernel_fail(std::string(op) + ": " + std::to_string(rows) + " rows of " + std::to_string(width) +
                " elements need " + std::to_string(need) + " bytes at the front of cb " + std::to_string(icb0) +
                " but " + std::to_string(in.available()) + " page(s) hold " + std::to_string(have) +
                " (missing cb_wait_front?)");
  uint32_t npages = static_cast<uint32_t>((need + in.page_size - 1) / in.page_size);
  FpuStep step(kFpuTilizeAB, {{icb0, 0, npages}, {icb1, tile_b}});
  if (!step.execute()) return;
  auto& cs = cstate();
  if (block > kMaxSrcPairs || cs.src.size() - cs.src_head + block > kMaxSrcPairs)
    kernel_fail(std::string(op) + ": more than " + std::to_string(kMaxSrcPairs) +
                " unpacked tiles wait for reduce_tile_math/matmul_tiles_math");
  if (block == 0) return;
  std::vector<const uint8_t*> pages = front_pages(icb0, 0, npages, op);
  alignas(64) float b[1024];
  unpack_floats(icb1, tile_b, b, "unpack_tilizeA_B_block (B)");
  const float fill = (flags & 1) ? -INFINITY : 0.0f;
  std::vector<uint8_t> face(1024 * es);
  for (uint32_t t = 0; t < block; t++) {
    std::fill(face.begin(), face.end(), 0);
    auto present = [&](int r, int c) {
      return uint32_t((r >> 4) * 2 + (c >> 4)) < num_faces && uint32_t(r & 15) < face_r_dim;
    };
    for (int r = 0; r < 32; r++)
      for (int c = 0; c < 32; c++)
        if (present(r, c)) {
          uint64_t sr = uint64_t(r >> 4) * face_r_dim + (r & 15);
          std::memcpy(&face[size_t(fidx(r, c)) * es], strip_in(pages, in.page_size, sr * width + t * tw + c, es), es);
        }
    ComputeState::SrcPair p;
    uint32_t* u = reinterpret_cast<uint32_t*>(p.a.data());
    tile_unpack(face.data(), in.format, u, DstKind::F32);
    if (format_is_int(in.format))
      for (int i = 0; i < 1024; i++) p.a[i] = int_word_value(u[i], in.format);
    for (int r = 0; r < 32; r++)
      for (int c = 0; c < 32; c++)
        if (!present(r, c)) p.a[fidx(r, c)] = fill;
    std::memcpy(p.b.data(), b, sizeof b);
    p.fmt_a = static_cast<uint32_t>(in.format);
    p.fmt_b = static_cast<uint32_t>(cb_of(icb1).format);
    cs.src.push_back(p);
  }
}

void api_compute_special(uint32_t op, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  // An FPU op on CB tiles: every build takes part (FpuStep).
  if (op == ZYX_CS_REDUCE_MAX_ROW_RUNTIME) return reduce_max_row_runtime(a, b, c, d);
  void* site = __builtin_return_address(0);
  // tt-llk's unpack-thread calls: the unpack build queues operands.
  switch (op) {
    case ZYX_CS_UNPACK_AB: return unpack_ab_matmul(a, b, c, d);
    case ZYX_CS_UNPACK_A: return unpack_a(a, b);
    case ZYX_CS_LLK_UNPACK_AB: return llk_unpack_ab(a, b, c, d);
    case ZYX_CS_LLK_UNTILIZE: return llk_unpack_untilize(a, b, c, site);
    default: break;
  }
  if (!on_math()) return;  // the math-only calls
  switch (op) {
    case ZYX_CS_MATMUL_MATH:
      // matmul_tiles_math takes what llk_math_matmul takes: the next
      // unpack_tilizeA_B_block pair, or (three builds) llk_unpack_AB_matmul's.
      if (b != 4)
        kernel_fail("matmul_tiles_math: num_faces " + std::to_string(b) + " is not emulated (32x32 tiles only)");
      return llk_matmul(a, site);
    case ZYX_CS_REDUCE_MATH: {
      if (a >= dst_capacity()) dst_tile(a);
      ComputeState::SrcPair p = pop_src("reduce_tile_math");
      reduce_into(b, c, p.a.data(), p.b[0], a, d, float_kind(Format(p.fmt_a)));
      return;
    }
    case ZYX_CS_TRANSPOSE_FACES_DST:
      transpose_tile(dst_tile(a), true);
      core().dst_written |= 1u << a;
      return;
    case ZYX_CS_SFPU_REDUCE: {
      SfpuScope sfpu;
      sfpu_reduce_cols(a, b, c);
      return;
    }
    case ZYX_CS_ADD_TOP_ROW: {
      SfpuScope sfpu;
      sfpu_add_top_row_of(a, b, c, d);
      return;
    }
    case ZYX_CS_DATACOPY: return datacopy(a, site);
    case ZYX_CS_LLK_BINARY: return llk_binary(a, b, c, site);
    case ZYX_CS_LLK_MATMUL: return llk_matmul(a, site);
    case ZYX_CS_CUMSUM: {
      SfpuScope sfpu;
      sfpu_cumsum(a, b);
      return;
    }
    case ZYX_CS_RESHUFFLE_ROWS: reshuffle_rows(a, b); return;
    case ZYX_CS_EMA_INIT: ema_init(a, b); return;
    case ZYX_CS_EMA_CLEAR: ema_clear(); return;
    case ZYX_CS_EMA_TILE: ema_tile(a); return;
    case ZYX_CS_SUM_DST_SCALAR: sum_dst_scalar(a, b); return;
    case ZYX_CS_TOPK_INIT:
    case ZYX_CS_TOPK_LOCAL_SORT:
    case ZYX_CS_TOPK_MERGE:
    case ZYX_CS_TOPK_REBUILD:
    case ZYX_CS_MAX_POOL_INIT:
    case ZYX_CS_MAX_POOL: sort_special(op, a, b, c, d); return;
    default: kernel_fail("compute: special operation " + std::to_string(op) + " is not emulated");
  }
}

}  // namespace zyx::emu
