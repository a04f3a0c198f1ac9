// The FPU calls with the card's numerics (the default; ZYX_EMU_NUMERICS=exact
// keeps f32 arithmetic): tiles of Float32, Float16_b, Bfp8_b and Bfp4_b (and
// Float16 into a 16-bit DST) enter the source registers as the unpacker
// converts them, go through the bit-level FPU model (numerics.hpp) element
// by element in the order tt-llk issues the instructions, and leave DST
// through the packer's conversions. The api_compute*.cpp calls use these when hw_path() says so.
#include <cstring>
#include <string>

#include "compute_api.hpp"

namespace zyx::emu {

namespace compute {

hw::Config hw_config(bool fp16) {
  hw::Config c;
  c.fp32_dest = core().fp32_dest_acc;
  c.wormhole = core().run->board->arch != "blackhole";
  c.fp16 = fp16;
  return c;
}

namespace {
// An fp16 DST tile keeps f32 values (kind F16); the model works on its
// 5-bit-exponent words. (Float16 operands into a 32-bit DST need no
// conversion: its words are f32.)
bool fp16_dst(const hw::Config& c) { return c.fp16 && !c.fp32_dest; }
void dst_to_f16_words(uint32_t* d) {
  for (int i = 0; i < 1024; i++) d[i] = hw::f32_to_f16_word(d[i]);
}
void dst_from_f16_words(uint32_t* d) {
  for (int i = 0; i < 1024; i++) d[i] = hw::f16_word_to_f32(d[i]);
}
DstKind dst_kind_of(const hw::Config& c) { return c.fp32_dest ? DstKind::F32 : c.fp16 ? DstKind::F16 : DstKind::BF16; }
}  // namespace

ZYX_HOT void unpack_src(uint32_t cb, uint32_t tile, uint32_t* out, const char* op) {
  const uint8_t* src = front_tile(cb, tile, op);
  Format f = cb_of(cb).format;
  switch (f) {
    case Format::Float32: {
      bool tf32 = core().fp32_dest_acc;
      const uint32_t* s = reinterpret_cast<const uint32_t*>(src);
      for (int i = 0; i < 1024; i++) out[i] = hw::src_from_f32(s[i], tf32);
      return;
    }
    case Format::Float16_b: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      for (int i = 0; i < 1024; i++) out[i] = uint32_t(s[i]) << 16;
      return;
    }
    case Format::Float16: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      for (int i = 0; i < 1024; i++) out[i] = hw::src_from_f16(s[i]);
      return;
    }
    case Format::Bfp8_b:
      for (int k = 0; k < 1024; k++) out[k] = uint32_t(hw::bfp8_to_bf16(src[64 + k], src[k / 16])) << 16;
      return;
    case Format::Bfp4_b:
      for (int k = 0; k < 1024; k++) {
        uint32_t nib = (k & 1) ? src[64 + k / 2] >> 4 : src[64 + k / 2] & 0xf;
        uint8_t e8 = static_cast<uint8_t>(((nib & 8) << 4) | ((nib & 7) << 4));  // widened to Bfp8_b
        out[k] = uint32_t(hw::bfp8_to_bf16(e8, src[k / 16])) << 16;
      }
      return;
    default: kernel_fail(std::string(op) + ": no hardware numerics for " + format_name(f));
  }
}

ZYX_HOT void hw_copy(const uint32_t* src, uint32_t* d, bool fp16) {
  const hw::Config c = hw_config(fp16);
  for (int i = 0; i < 1024; i++) d[i] = hw::src_to_dst(src[i], c);
  if (fp16_dst(c)) dst_from_f16_words(d);
}

namespace {
void binary_words(uint32_t op, const uint32_t* a, const uint32_t* b, uint32_t* d, bool acc, const hw::Config& c) {
  if (op == ZYX_BIN_MUL) {
    const auto f = static_cast<hw::Fidelity>(core().math_fidelity);
    if (!acc) return hw::elwmul_tile(a, b, d, 1024, f, c);
    // ELWMUL always adds to DST: a tile that holds values is the first
    // addend of the first phase.
    const int np = hw::phases(f);
    for (int i = 0; i < 1024; i++)
      for (int p = 0; p < np; p++) d[i] = hw::elwmul_phase(a[i], b[i], d[i], p, c);
    return;
  }
  const bool sub = op == ZYX_BIN_SUB;
  if (!acc) return hw::elwadd_tile(a, b, d, 1024, sub, c);
  for (int i = 0; i < 1024; i++) d[i] = hw::elwadd(a[i], b[i], sub, d[i], acc, c);
}
}  // namespace

void hw_binary(uint32_t op, const uint32_t* a, const uint32_t* b, uint32_t* d, bool acc, bool fp16) {
  const hw::Config c = hw_config(fp16);
  if (fp16_dst(c) && acc) dst_to_f16_words(d);
  binary_words(op, a, b, d, acc, c);
  if (fp16_dst(c)) dst_from_f16_words(d);
}

// DST[dst] += in0 * in1 as tt-llk's matmul runs it: in0 in SrcB, in1 in
// SrcA; for every fidelity phase, each output element takes the MVMUL of k
// 0-15 and then of k 16-31.
void hw_matmul(uint32_t dst, const uint32_t* in0, const uint32_t* in1, bool fp16) {
  auto& cs = core();
  uint32_t* d = dst_tile(dst);
  if (!(cs.dst_written & (1u << dst))) std::memset(d, 0, 4096);
  const hw::Config c = hw_config(fp16);
  if (fp16_dst(c)) dst_to_f16_words(d);
  hw::matmul_tile(in0, in1, d, static_cast<hw::Fidelity>(cs.math_fidelity), c);
  if (fp16_dst(c)) dst_from_f16_words(d);
  mark(dst, dst_kind_of(c));
}

// Sum reduction (REDUCE_ROW, REDUCE_COL, REDUCE_SCALAR) into DST as
// tt-llk's GAPOOLs compute it: the input in SrcA, the scaler in SrcB, a dot
// product of 16 elements per face, face by face, every fidelity phase of
// one face before the next. REDUCE_SCALAR pools the four faces into one row
// of 16 column sums, moves it through SrcB (MOVD2B: 19 bits when SrcA holds
// TF32, else 16) into a column of SrcA and pools that against the scaler
// again.
void hw_reduce(uint32_t dim, const uint32_t* a, uint32_t scaler, bool tf32_src, bool fp16, uint32_t dst,
               uint32_t num_faces) {
  auto& cs = core();
  uint32_t* d = dst_tile(dst);
  if (!(cs.dst_written & (1u << dst))) std::memset(d, 0, 4096);
  const hw::Config c = hw_config(fp16);
  if (fp16_dst(c)) dst_to_f16_words(d);
  const int np = hw::phases(static_cast<hw::Fidelity>(cs.math_fidelity));
  uint32_t in[1024];
  for (int i = 0; i < 1024; i++) in[i] = uint32_t(i >> 8) < num_faces ? a[i] : 0;
  uint32_t s[16];
  for (int i = 0; i < 16; i++) s[i] = scaler;
  if (dim == ZYX_RED_ROW) {
    for (int r = 0; r < 32; r++)
      for (int h = 0; h < 2; h++)
        for (int p = 0; p < np; p++) d[fidx(r, 0)] = hw::mvmul_phase(in + fidx(r, 16 * h), 1, s, 1, d[fidx(r, 0)], p, c);
  } else if (dim == ZYX_RED_COL) {
    for (int col = 0; col < 32; col++)
      for (int h = 0; h < 2; h++)
        for (int p = 0; p < np; p++)
          d[fidx(0, col)] = hw::mvmul_phase(in + fidx(16 * h, col), 16, s, 1, d[fidx(0, col)], p, c);
  } else {
    uint32_t v[16] = {};
    for (int f = 0; f < 4; f++)
      for (int col = 0; col < 16; col++)
        for (int p = 0; p < np; p++) v[col] = hw::mvmul_phase(in + f * 256 + col, 16, s, 1, v[col], p, c);
    // MOVD2B passes an fp16 DST word through whole (the callers keep
    // Float16 into a 32-bit DST off this path).
    if (!fp16)
      for (int i = 0; i < 16; i++) v[i] = hw::dst_to_src(v[i], tf32_src);
    for (int p = 0; p < np; p++) d[0] = hw::mvmul_phase(v, 1, s, 1, d[0], p, c);
  }
  if (fp16_dst(c)) dst_from_f16_words(d);
  mark(dst, dst_kind_of(c));
}

// Max reduction into DST as tt-llk's GMPOOLs compute it: the input face in
// SrcA (transposed by the unpacker for REDUCE_ROW), row 0 of the scaler
// tile's matching face in SrcB, each GMPOOL taking the column maxima of a
// face against a DST row (kPoolEmpty where that row was not written since
// DST was cleared) and zeroing the three rows below it.
// - REDUCE_COL: faces 0 and 2 into row 0 of face 0, faces 1 and 3 into row
//   0 of face 1.
// - REDUCE_ROW: for each row of faces, both faces into row 0 of its left
//   face, which then goes through SrcB (MOVD2B), is transposed and comes
//   back by ELWADD with a zeroed SrcA into column 0 and, untransposed, row 0
//   (where the next reduce_tile reads it).
// - REDUCE_SCALAR: the four faces into a scratch row 4 of face 0, that row
//   moved through SrcB into column 0 of SrcA and pooled again (against face
//   3's scaler) into row 0; the scratch rows are cleared.
void hw_reduce_max(uint32_t dim, const uint32_t* a, const uint32_t* scaler, bool tf32_src, uint32_t dst) {
  auto& cs = core();
  uint32_t* d = dst_tile(dst);
  const bool fresh = !(cs.dst_written & (1u << dst));
  if (fresh) std::memset(d, 0, 4096);
  const hw::Config c = hw_config();
  auto clear_rows = [&](int face, int first, int count) { std::memset(d + face * 256 + first * 16, 0, count * 64); };
  if (dim == ZYX_RED_COL) {
    for (int col = 0; col < 32; col++) {
      uint32_t m = fresh ? hw::kPoolEmpty : d[fidx(0, col)];
      for (int h = 0; h < 2; h++)
        m = hw::gmpool(a + fidx(16 * h, col), 16, scaler + (2 * h + col / 16) * 256, m, tf32_src, c);
      d[fidx(0, col)] = m;
    }
    clear_rows(0, 1, 3);
    clear_rows(1, 1, 3);
  } else if (dim == ZYX_RED_ROW) {
    for (int h = 0; h < 2; h++) {
      uint32_t* row = d + 2 * h * 256;  // row 0 of the left face
      for (int r = 0; r < 16; r++) {
        uint32_t m = fresh ? hw::kPoolEmpty : row[r];
        for (int f = 2 * h; f < 2 * h + 2; f++)
          m = hw::gmpool(a + f * 256 + r * 16, 1, scaler + f * 256, m, tf32_src, c);
        row[r] = m;
      }
      clear_rows(2 * h, 1, 3);
      for (int r = 0; r < 16; r++) {
        const uint32_t v = hw::elwadd(0, hw::dst_to_src(row[r], tf32_src), false, 0, false, c);
        row[r] = v;
        row[r * 16] = v;
      }
    }
  } else {
    uint32_t v[16];
    for (int col = 0; col < 16; col++) {
      v[col] = hw::kPoolEmpty;
      for (int f = 0; f < 4; f++) v[col] = hw::gmpool(a + f * 256 + col, 16, scaler + f * 256, v[col], tf32_src, c);
      v[col] = hw::dst_to_src(v[col], tf32_src);
    }
    d[0] = hw::gmpool(v, 1, scaler + 3 * 256, fresh ? hw::kPoolEmpty : d[0], tf32_src, c);
    clear_rows(0, 1, 7);
  }
  mark(dst, c.fp32_dest ? DstKind::F32 : DstKind::BF16);
}

namespace {
// An fp16 DST tile (f32 values) packed to Float16, Float32 or Float16_b
// through the packer's fp16 intermediate: ReLU acts on the intermediate's
// 16 bits (relu_bf16 compares any 16-bit word), then the late conversion,
// then L1 accumulation in the output format. Other formats: false.
bool pack_from_f16(const uint32_t* d, uint8_t* out, Format f) {
  const ComputeState& cs = cstate();
  const uint32_t relu = cs.relu & 0xf;
  const uint16_t threshold = static_cast<uint16_t>(cs.relu >> 16);
  const bool acc = cs.l1_acc != 0;
  if (relu > 3 || (f != Format::Float16 && f != Format::Float16_b && f != Format::Float32)) return false;
  uint16_t* o16 = reinterpret_cast<uint16_t*>(out);
  uint32_t* o32 = reinterpret_cast<uint32_t*>(out);
  for (int i = 0; i < 1024; i++) {
    const uint16_t h = hw::relu_bf16(hw::pack_f16(hw::f32_to_f16_word(d[i])), relu, threshold);
    if (f == Format::Float16) {
      o16[i] = acc ? hw::l1_acc_f16(o16[i], h) : h;
    } else if (f == Format::Float16_b) {
      const uint16_t v = hw::f16_late_bf16(h);
      o16[i] = acc ? hw::l1_acc_bf16(o16[i], v) : v;
    } else {
      const uint32_t v = hw::f16_late_f32(h);
      o32[i] = acc ? hw::l1_acc_f32(o32[i], v) : v;
    }
  }
  return true;
}

// 16-bit DST storage of a bf16 or fp16 value, as the register holds it
// (ttsim's DST encoding): the sign in bit 15, the mantissa above the
// exponent (bf16: mantissa in bits 8-14, exponent in 0-7; fp16: mantissa in
// bits 5-14, exponent in 0-4).
uint16_t dst16_storage_bf16(uint16_t h) {
  return static_cast<uint16_t>((h & 0x8000u) | ((h & 0x7fu) << 8) | ((h >> 7) & 0xffu));
}
uint16_t dst16_storage_f16(uint16_t h) {
  return static_cast<uint16_t>((h & 0x8000u) | ((h & 0x3ffu) << 5) | ((h >> 10) & 0x1fu));
}

// A float DST tile packed to an integer format. The packer converts no
// float to an integer (tt-metal casts with typecast_tile first): it reads
// the DST word as it reads an integer one. From a 32-bit DST, Int32 and
// UInt32 get the word's bits, Int8 and UInt8 its sign-magnitude clamp
// (pack_int8), UInt16 the stored high half (a 32-bit DST word is kept as
// two 16-bit halves, the high one in the bf16 storage layout, and UInt16
// reads that half raw); from a 16-bit DST UInt16 gets the 16 bits the
// register stores; ReLU mode 1 into Int32/UInt32 (from a 32-bit DST) makes
// a word with bit 31 set 0. Returns false for what ttsim does not model
// (Int8/UInt8/Int32/UInt32 from a 16-bit DST, the other ReLU modes and
// intermediates, L1 accumulation).
bool pack_float_to_int(const uint32_t* d, DstKind kind, uint8_t* out, Format f) {
  const ComputeState& cs = cstate();
  const uint32_t relu = cs.relu & 0xf;
  const bool int32_out = f == Format::Int32 || f == Format::UInt32;
  if (cs.l1_acc || (relu && !(relu == 1 && kind == DstKind::F32 && int32_out))) return false;
  uint16_t* o16 = reinterpret_cast<uint16_t*>(out);
  if (kind != DstKind::F32) {
    if (f != Format::UInt16) return false;
    if (kind == DstKind::F16)
      for (int i = 0; i < 1024; i++) o16[i] = dst16_storage_f16(hw::f16_bits(hw::f32_to_f16_word(d[i])));
    else
      for (int i = 0; i < 1024; i++) o16[i] = dst16_storage_bf16(static_cast<uint16_t>(d[i] >> 16));
    return true;
  }
  switch (f) {
    case Format::Int32:
    case Format::UInt32: {
      uint32_t* o = reinterpret_cast<uint32_t*>(out);
      for (int i = 0; i < 1024; i++) o[i] = relu && (d[i] & 0x80000000u) ? 0 : d[i];
      return true;
    }
    case Format::Int8:
    case Format::UInt8:
      for (int i = 0; i < 1024; i++) out[i] = hw::pack_int8(d[i], f == Format::UInt8);
      return true;
    case Format::UInt16:
      for (int i = 0; i < 1024; i++) o16[i] = dst16_storage_bf16(static_cast<uint16_t>(d[i] >> 16));
      return true;
    default: return false;
  }
}
}  // namespace

ZYX_HOT bool hw_pack(const uint32_t* d, DstKind kind, uint8_t* out, Format f) {
  if (kind != DstKind::Int && format_is_int(f)) return pack_float_to_int(d, kind, out, f);
  if (kind == DstKind::F16) return pack_from_f16(d, out, f);
  if (kind != DstKind::F32 && kind != DstKind::BF16) return false;
  const bool fp32 = kind == DstKind::F32;
  const ComputeState& cs = cstate();
  const uint32_t relu = cs.relu & 0xf;
  const uint16_t threshold = static_cast<uint16_t>(cs.relu >> 16);
  const bool acc = cs.l1_acc != 0;
  if (relu > 3) return false;
  switch (f) {
    case Format::Float32: {
      uint32_t* o = reinterpret_cast<uint32_t*>(out);
      if (fp32 && !relu && !acc) {
        std::memcpy(o, d, 4096);
        return true;
      }
      for (int i = 0; i < 1024; i++) {
        // A 32-bit DST packs through an f32 intermediate; a 16-bit one through bf16.
        const uint32_t v = fp32 ? hw::relu_f32(d[i], relu, threshold)
                                : uint32_t(hw::relu_bf16(hw::pack_bf16(d[i], false), relu, threshold)) << 16;
        o[i] = acc ? hw::l1_acc_f32(o[i], v) : v;
      }
      return true;
    }
    case Format::Float16_b: {
      uint16_t* o = reinterpret_cast<uint16_t*>(out);
      if (!relu && !acc) {
        if (fp32)
          for (int i = 0; i < 1024; i++) o[i] = hw::pack_bf16(d[i], true);
        else
          for (int i = 0; i < 1024; i++) o[i] = hw::pack_bf16(d[i], false);
        return true;
      }
      for (int i = 0; i < 1024; i++) {
        const uint16_t v = hw::relu_bf16(hw::pack_bf16(d[i], fp32), relu, threshold);
        o[i] = acc ? hw::l1_acc_bf16(o[i], v) : v;
      }
      return true;
    }
    case Format::Bfp8_b:
    case Format::Bfp4_b: {
      if (acc) return false;  // the packer's L1 accumulation is not modelled for block floats
      const bool bfp4 = f == Format::Bfp4_b, precise = core().bfp8_pack_precise;
      // With bfp8_pack_precise a 32-bit DST packs through an f32 intermediate
      // (ReLU on the f32 word); otherwise through bf16 (ReLU after rounding).
      const bool relu_on_f32 = fp32 && precise;
      uint16_t v[16];
      uint8_t m[16];
      for (int g = 0; g < 64; g++) {
        for (int i = 0; i < 16; i++) {
          const uint32_t word = relu_on_f32 ? hw::relu_f32(d[g * 16 + i], relu, threshold) : d[g * 16 + i];
          v[i] = hw::bfp_intermediate(word, fp32, precise);
          if (!relu_on_f32) v[i] = hw::relu_bf16(v[i], relu, threshold);
        }
        out[g] = hw::bfp_block(v, bfp4, m);
        if (bfp4)
          for (int i = 0; i < 16; i += 2) out[64 + g * 8 + i / 2] = static_cast<uint8_t>((m[i] & 0xf) | (m[i + 1] << 4));
        else
          std::memcpy(out + 64 + g * 16, m, 16);
      }
      return true;
    }
    default: return false;
  }
}

}  // namespace compute

}  // namespace zyx::emu
