// The compute API with the card's numerics (the default), word for word:
// every FPU call (add, sub, mul, the broadcast forms, matmul, reduce sum by
// rows and columns, copy, transpose) on Float16_b, Float32 and Bfp8_b
// tiles, packed to Float32, Float16_b and Bfp8_b, at every math fidelity,
// with 16-bit and 32-bit DST, against words computed on the host with the
// FPU model (src/numerics.hpp, itself checked by emu_numerics). The inputs
// hold ties, denormals, infinities, NaN, signed zeros and exponents far
// apart within a block, on Wormhole (n150) and Blackhole (p150a).
// ZYX_EMU_NUMERICS=exact is checked to keep f32.
#include <cstdlib>
#include <random>

#include "compute_harness.hpp"
#include "numerics.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_ctest;
namespace hw = zyx::emu::hw;

namespace {

// The FPU call of each op on the front tiles of cbs 0 (A) and 1 (B), DST 0
// packed: copy_op's OP with no copy to DST first, one case per op.
const std::string kOpCases = op_switch(
    "case 0: add_tiles_init(0, 1); add_tiles(0, 1, 0, 0, 0); break;"
    "case 1: sub_tiles_init(0, 1); sub_tiles(0, 1, 0, 0, 0); break;"
    "case 2: mul_tiles_init(0, 1); mul_tiles(0, 1, 0, 0, 0); break;"
    "case 3: add_tiles_bcast<BroadcastType::ROW>(0, 1, 0, 0, 0); break;"
    "case 4: mul_tiles_bcast<BroadcastType::COL>(0, 1, 0, 0, 0); break;"
    "case 5: mul_tiles_bcast<BroadcastType::SCALAR>(0, 1, 0, 0, 0); break;"
    "case 6: mm_init(0, 1, 16); matmul_tiles(0, 1, 0, 0, 0); break;"
    "case 7: reduce_tile<PoolType::SUM, ReduceDim::REDUCE_ROW>(0, 1, 0, 0, 0); break;"
    "case 8: reduce_tile<PoolType::SUM, ReduceDim::REDUCE_COL>(0, 1, 0, 0, 0); break;"
    "case 9: copy_tile_to_dst_init_short(0); copy_tile(0, 0, 0); break;"
    "case 10: transpose_wh_init(0, 16); transpose_wh_tile(0, 0, 0); break;"
    "case 11: reduce_tile<PoolType::SUM, ReduceDim::REDUCE_SCALAR>(0, 1, 0, 0, 0); break;");
const char* kOpNames[] = {"add", "sub", "mul", "add bcast row", "mul bcast col", "mul bcast scalar",
                          "matmul", "reduce row", "reduce col", "copy", "transpose", "reduce scalar"};
constexpr uint32_t kNumOps = 12;

// A run of op on the tiles a and b, both in format fin (one kernel build
// serves every op).
Run op_run(uint32_t op, const std::string& fin, std::vector<uint8_t> a, std::vector<uint8_t> b) {
  Run r;
  r.formats = {fin, fin};
  r.inputs = {std::move(a), std::move(b)};
  r.compute = copy_op_kernel();
  r.defines = {{"NIN", "2"}, {"COPY", "0"}, {"OP", kOpCases}};
  r.args = {op, 0, 0, 0};
  return r;
}

// bf16 words: mostly normal values near 1, with the edge cases mixed in.
std::vector<uint16_t> bf16_words(uint32_t seed) {
  static const uint16_t special[] = {0x0000, 0x8000, 0x0040, 0x8001, 0x7f80, 0xff80, 0x7fc0, 0x3f80,
                                     0x3b80, 0x7f7f, 0x0080, 0x3f81, 0xbf80, 0x3fff, 0x3b00, 0xc2ff};
  std::mt19937 rng(seed);
  std::vector<uint16_t> v(1024);
  for (auto& w : v) {
    uint32_t k = rng() % 100;
    uint32_t sign = (rng() & 1) << 15, mant = rng() & 127;
    if (k < 6) w = special[rng() % 16];
    else if (k < 20) w = static_cast<uint16_t>(sign | ((60 + rng() % 130) << 7) | mant);  // exponents far apart
    else w = static_cast<uint16_t>(sign | ((121 + rng() % 12) << 7) | mant);
  }
  return v;
}

struct Tile {
  std::vector<uint8_t> bytes;  // in its format
  std::vector<uint32_t> src;   // what the unpacker puts in SrcA/SrcB, face order
};

Tile make_tile(const std::string& fmt, uint32_t seed, bool fp32) {
  std::vector<uint16_t> h = bf16_words(seed);
  Tile t;
  t.src.resize(1024);
  if (fmt == "Float16_b") {
    t.bytes.resize(2048);
    std::memcpy(t.bytes.data(), h.data(), 2048);
    for (int i = 0; i < 1024; i++) t.src[i] = uint32_t(h[i]) << 16;
  } else if (fmt == "Float32") {
    std::mt19937 rng(seed * 7 + 1);
    std::vector<uint32_t> u(1024);
    for (int i = 0; i < 1024; i++) u[i] = (uint32_t(h[i]) << 16) | (rng() & 0xffff);
    t.bytes.resize(4096);
    std::memcpy(t.bytes.data(), u.data(), 4096);
    for (int i = 0; i < 1024; i++) t.src[i] = hw::src_from_f32(u[i], fp32);
  } else {  // Bfp8_b, made by the model's block packer
    t.bytes.resize(1088);
    for (int g = 0; g < 64; g++) {
      uint16_t v[16];
      for (int i = 0; i < 16; i++) {
        uint16_t w = h[g * 16 + i];
        v[i] = (w & 0x7fff) > 0x7f80 ? static_cast<uint16_t>((w & 0x8000) | 0x7f80) : w;  // no NaN in a block
      }
      t.bytes[g] = hw::bfp_block(v, false, &t.bytes[64 + g * 16]);
    }
    for (int k = 0; k < 1024; k++) t.src[k] = uint32_t(hw::bfp8_to_bf16(t.bytes[64 + k], t.bytes[k / 16])) << 16;
  }
  return t;
}

// DST after op on source tiles a and b, as the card computes it; tf32 when
// the source registers hold TF32 (Float32 tiles with a 32-bit DST).
std::vector<uint32_t> expect_dst(uint32_t op, const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                                 hw::Fidelity fid, const hw::Config& c, bool tf32) {
  std::vector<uint32_t> d(1024, 0);
  const int np = hw::phases(fid);
  auto bcast = [&](int i, int kind) {  // 0 row 0, 1 column 0, 2 scalar
    int r = (i >> 9) * 16 + ((i >> 4) & 15), col = ((i >> 8) & 1) * 16 + (i & 15);
    return kind == 0 ? b[fi(0, col)] : kind == 1 ? b[fi(r, 0)] : b[0];
  };
  for (int i = 0; i < 1024; i++) {
    switch (op) {
      case 0: d[i] = hw::elwadd(a[i], b[i], false, 0, false, c); break;
      case 1: d[i] = hw::elwadd(a[i], b[i], true, 0, false, c); break;
      case 2: d[i] = hw::elwmul(a[i], b[i], fid, c); break;
      case 3: d[i] = hw::elwadd(a[i], bcast(i, 0), false, 0, false, c); break;
      case 4: d[i] = hw::elwmul(a[i], bcast(i, 1), fid, c); break;
      case 5: d[i] = hw::elwmul(a[i], bcast(i, 2), fid, c); break;
      case 9: d[i] = hw::src_to_dst(a[i], c); break;
      default: break;
    }
  }
  if (op == 6) {  // in0 (a) is SrcB, in1 (b) SrcA; per phase, k 0-15 then 16-31
    for (int p = 0; p < np; p++)
      for (int r = 0; r < 32; r++)
        for (int col = 0; col < 32; col++)
          for (int kh = 0; kh < 2; kh++)
            d[fi(r, col)] = hw::mvmul_phase(&b[fi(16 * kh, col)], 16, &a[fi(r, 16 * kh)], 1, d[fi(r, col)], p, c);
  } else if (op == 7 || op == 8) {  // the scaler is b's first element; a face's phases, then the next face
    uint32_t s[16];
    for (auto& x : s) x = b[0];
    for (int x = 0; x < 32; x++)
      for (int h = 0; h < 2; h++)
        for (int p = 0; p < np; p++) {
          if (op == 7) d[fi(x, 0)] = hw::mvmul_phase(&a[fi(x, 16 * h)], 1, s, 1, d[fi(x, 0)], p, c);
          else d[fi(0, x)] = hw::mvmul_phase(&a[fi(16 * h, x)], 16, s, 1, d[fi(0, x)], p, c);
        }
  } else if (op == 11) {  // four faces pooled into 16 column sums, then those (through SrcB) pooled again
    uint32_t s[16], v[16] = {};
    for (auto& x : s) x = b[0];
    for (int f = 0; f < 4; f++)
      for (int col = 0; col < 16; col++)
        for (int p = 0; p < np; p++) v[col] = hw::mvmul_phase(&a[f * 256 + col], 16, s, 1, v[col], p, c);
    for (auto& x : v) x &= tf32 ? 0xffffe000u : 0xffff0000u;  // MOVD2B: TF32 keeps 19 bits, bf16 16
    for (int p = 0; p < np; p++) d[0] = hw::mvmul_phase(v, 1, s, 1, d[0], p, c);
  } else if (op == 10) {
    for (int r = 0; r < 32; r++)
      for (int col = 0; col < 32; col++) d[fi(col, r)] = hw::src_to_dst(a[fi(r, col)], c);
  }
  return d;
}

std::vector<uint8_t> expect_pack(const std::vector<uint32_t>& d, const std::string& fmt, bool fp32, bool precise,
                                 uint32_t relu = 0, uint16_t threshold = 0) {
  std::vector<uint8_t> out(tile_bytes(fmt));
  if (fmt == "Float32") {
    for (int i = 0; i < 1024; i++) {
      uint32_t w = fp32 ? hw::relu_f32(d[i], relu, threshold)
                        : uint32_t(hw::relu_bf16(hw::pack_bf16(d[i], false), relu, threshold)) << 16;
      std::memcpy(&out[4 * i], &w, 4);
    }
  } else if (fmt == "Float16_b") {
    for (int i = 0; i < 1024; i++) {
      uint16_t w = hw::relu_bf16(hw::pack_bf16(d[i], fp32), relu, threshold);
      std::memcpy(&out[2 * i], &w, 2);
    }
  } else {
    for (int g = 0; g < 64; g++) {
      uint16_t v[16];
      for (int i = 0; i < 16; i++) {
        const bool on_f32 = fp32 && precise;
        v[i] = hw::bfp_intermediate(on_f32 ? hw::relu_f32(d[g * 16 + i], relu, threshold) : d[g * 16 + i], fp32,
                                    precise);
        if (!on_f32) v[i] = hw::relu_bf16(v[i], relu, threshold);
      }
      out[g] = hw::bfp_block(v, false, &out[64 + g * 16]);
    }
  }
  return out;
}

// The little-endian word of n bytes at `at`, in hex.
std::string hex(const std::vector<uint8_t>& b, size_t at, size_t n) {
  uint32_t w = 0;
  for (size_t i = 0; i < n && at + i < b.size(); i++) w |= uint32_t(b[at + i]) << (8 * i);
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", int(2 * n), w);
  return buf;
}

void check_words(DeviceLayer& layer, const std::string& fid_name, bool fp32, bool precise, bool wormhole = true) {
  const hw::Fidelity fid = fid_name == "LoFi"    ? hw::Fidelity::LoFi
                           : fid_name == "HiFi2" ? hw::Fidelity::HiFi2
                           : fid_name == "HiFi3" ? hw::Fidelity::HiFi3
                                                 : hw::Fidelity::HiFi4;
  const hw::Config c{fp32, wormhole};
  const char* in_formats[] = {"Float16_b", "Float32", "Bfp8_b"};
  const char* out_formats[] = {"Float32", "Float16_b", "Bfp8_b"};
  uint32_t seed = 1;
  for (const char* fin : in_formats) {
    for (uint32_t op = 0; op < kNumOps; op++, seed += 2) {
      Tile a = make_tile(fin, seed, fp32), b = make_tile(fin, seed + 1, fp32);
      std::vector<uint32_t> d = expect_dst(op, a.src, b.src, fid, c, fp32 && std::string(fin) == "Float32");
      for (const char* fout : out_formats) {
        if (precise && std::string(fout) != "Bfp8_b") continue;
        Run r = op_run(op, fin, a.bytes, b.bytes);
        r.out_format = fout;
        r.fp32 = fp32;
        r.fidelity = fid_name;
        r.bfp8_precise = precise;
        std::vector<uint8_t> got = run(layer, r), want = expect_pack(d, fout, fp32, precise);
        if (got != want) {
          size_t at = 0;
          while (got[at] == want[at]) at++;
          size_t w = std::string(fout) == "Float32" ? 4 : std::string(fout) == "Float16_b" ? 2 : 1;
          at -= at % w;
          throw Failure(std::string(kOpNames[op]) + " " + fin + " -> " + fout + ", " + fid_name +
                        (fp32 ? ", fp32 DST" : ", 16-bit DST") + (precise ? ", bfp8_pack_precise" : "") +
                        ": byte " + std::to_string(at) + ": got " + hex(got, at, w) + ", want " + hex(want, at, w));
        }
      }
    }
  }
}

void test_words_16bit_dst(DeviceLayer& layer) {
  for (const char* f : {"LoFi", "HiFi2", "HiFi3", "HiFi4"}) check_words(layer, f, false, false);
}
ZYX_TEST(hw, test_words_16bit_dst);

void test_words_fp32_dst(DeviceLayer& layer) {
  for (const char* f : {"LoFi", "HiFi2", "HiFi3", "HiFi4"}) check_words(layer, f, true, false);
}
ZYX_TEST(hw, test_words_fp32_dst);

void test_words_bfp8_precise(DeviceLayer& layer) {
  check_words(layer, "HiFi4", false, true);
  check_words(layer, "HiFi4", true, true);
}
ZYX_TEST(hw, test_words_bfp8_precise);

// The packer's ReLU (pack_relu_config) in every mode, on add and copy
// results packed to each format from both DST widths (and through the f32
// intermediate of bfp8_pack_precise), against the model's words.
void test_pack_relu(DeviceLayer& layer) {
  const uint16_t threshold = 0x3f80;  // 1.0
  uint32_t seed = 101;
  for (bool fp32 : {false, true})
    for (uint32_t mode = 1; mode <= 3; mode++)
      for (uint32_t op : {0u, 9u}) {
        Tile a = make_tile("Float16_b", seed, fp32), b = make_tile("Float16_b", seed + 1, fp32);
        seed += 2;
        const std::vector<uint32_t> d = expect_dst(op, a.src, b.src, hw::Fidelity::HiFi4, hw::Config{fp32, true}, false);
        for (const char* fout : {"Float32", "Float16_b", "Bfp8_b"})
          for (bool precise : {false, true}) {
            if (precise && std::string(fout) != "Bfp8_b") continue;
            Run r = op_run(op, "Float16_b", a.bytes, b.bytes);
            r.out_format = fout;
            r.fp32 = fp32;
            r.bfp8_precise = precise;
            r.defines["INIT"] = "pack_relu_config(p0)";
            r.args[1] = (uint32_t(threshold) << 16) | mode;
            std::vector<uint8_t> got = run(layer, r), want = expect_pack(d, fout, fp32, precise, mode, threshold);
            if (got != want) {
              size_t at = 0;
              while (got[at] == want[at]) at++;
              throw Failure(std::string("relu mode ") + std::to_string(mode) + " " + kOpNames[op] + " -> " + fout +
                            (fp32 ? ", fp32 DST" : ", 16-bit DST") + (precise ? ", precise" : "") + ": byte " +
                            std::to_string(at) + ": got " + hex(got, at, 1) + ", want " + hex(want, at, 1));
            }
          }
      }
}
ZYX_TEST(hw, test_pack_relu);

// Words worked out by hand, through the whole emulator: tiles of one
// repeated bf16 value, every output element the same word.
void test_hand_words(DeviceLayer& layer) {
  auto tile = [](uint16_t w) { return std::vector<uint8_t>(bf16_bytes(std::vector<float>(1024, from_bf16(w)))); };
  auto one_word = [&](uint32_t op, uint16_t x, uint16_t y, const char* fid, bool fp32, const std::string& fout) {
    Run r = op_run(op, "Float16_b", tile(x), tile(y));
    r.out_format = fout;
    r.fp32 = fp32;
    r.fidelity = fid;
    std::vector<uint8_t> out = run(layer, r);
    uint32_t w = 0;
    std::memcpy(&w, out.data(), fout == "Float32" ? 4 : 2);
    for (size_t i = 0; i < out.size(); i += fout == "Float32" ? 4 : 2) CHECK(std::memcmp(&out[i], out.data(), 2) == 0);
    return w;
  };
  // 1 + 2^-8 is a tie on the bf16 grid: away from zero (the f32 path's
  // nearest-even gives 1.0).
  CHECK_EQ(one_word(0, 0x3f80, 0x3b80, "HiFi4", false, "Float16_b"), 0x3f81u);
  CHECK_EQ(one_word(0, 0x3f80, 0x3b80, "HiFi4", true, "Float32"), 0x3f808000u);
  CHECK_EQ(one_word(0, 0x3f80, 0x3b80, "HiFi4", true, "Float16_b"), 0x3f81u);  // the packer rounds half away too
  // LoFi sees A's top 5 significand bits: 1.9921875 * 1 = 1.9375; HiFi2 is exact.
  CHECK_EQ(one_word(2, 0x3fff, 0x3f80, "LoFi", true, "Float32"), 0x3ff80000u);
  CHECK_EQ(one_word(2, 0x3fff, 0x3f80, "HiFi2", true, "Float32"), 0x3fff0000u);
  // ... and B's top 7: 1 * (1 + 2^-7) needs HiFi3.
  CHECK_EQ(one_word(2, 0x3f80, 0x3f81, "HiFi2", true, "Float32"), 0x3f800000u);
  CHECK_EQ(one_word(2, 0x3f80, 0x3f81, "HiFi3", true, "Float32"), 0x3f810000u);
  // A 16-bit DST rounds after every phase: 1.9921875^2 is 3.96875 at HiFi4
  // (0x407e) and 3.953125 at HiFi2 (0x407d).
  CHECK_EQ(one_word(2, 0x3fff, 0x3fff, "HiFi2", false, "Float16_b"), 0x407du);
  CHECK_EQ(one_word(2, 0x3fff, 0x3fff, "HiFi4", false, "Float16_b"), 0x407eu);
  // Matmul of ones: each element sums 32 products of 1 -> 32.
  CHECK_EQ(one_word(6, 0x3f80, 0x3f80, "LoFi", false, "Float16_b"), 0x4200u);
  // NaN packs as infinity; a denormal operand is zero.
  CHECK_EQ(one_word(9, 0x7fc0, 0x3f80, "HiFi4", false, "Float16_b"), 0x7f80u);
  CHECK_EQ(one_word(0, 0x0040, 0x3f80, "HiFi4", false, "Float16_b"), 0x3f80u);
}
ZYX_TEST(hw, test_hand_words);

// Blackhole (p150a): the same datapath without Wormhole's renormalisation
// quirk.
void test_words_blackhole(DeviceLayer& layer) {
  check_words(layer, "HiFi4", false, false, false);
  check_words(layer, "HiFi4", true, false, false);
}
ZYX_TEST_ON(hw, test_words_blackhole, "p150a");

// ZYX_EMU_NUMERICS=exact: f32 arithmetic (a Float32 add is the f32 sum);
// the default: TF32 operands (the same add differs in the low bits).
void test_exact_mode(DeviceLayer& layer) {
  std::vector<float> x = randf(1024, -4, 4, 5), y = randf(1024, -4, 4, 6);
  Run r = op_run(0, "Float32", f32_bytes(x), f32_bytes(y));
  setenv("ZYX_EMU_NUMERICS", "exact", 1);
  std::vector<float> exact = bytes_f32(run(layer, r));
  unsetenv("ZYX_EMU_NUMERICS");
  std::vector<float> card = bytes_f32(run(layer, r));
  int differ = 0;
  for (int i = 0; i < 1024; i++) {
    CHECK(exact[i] == x[i] + y[i]);
    differ += card[i] != exact[i];
  }
  CHECK(differ > 512);
  setenv("ZYX_EMU_NUMERICS", "approximately", 1);
  bool refused = false;
  try {
    run(layer, r);
  } catch (const std::exception& e) {
    refused = std::string(e.what()).find("ZYX_EMU_NUMERICS") != std::string::npos;
  }
  unsetenv("ZYX_EMU_NUMERICS");
  CHECK(refused);
}
ZYX_TEST(hw, test_exact_mode);

// A Float32 tile copied into a 32-bit DST goes through SrcA as TF32 (the
// low 13 mantissa bits drop) unless its CB is unpacked straight to DST
// (unpack_to_dest_fp32), which keeps every bit.
void test_unpack_to_dest(DeviceLayer& layer) {
  std::vector<float> x = randf(1024, -4, 4, 7);
  Run r = one_tile_op("Float32", f32_bytes(x), "(void)0");
  std::vector<uint8_t> in = r.inputs[0], through_src = run(layer, r);
  r.unpack_to_dest_fp32 = {0};
  std::vector<uint8_t> to_dest = run(layer, r);
  CHECK(to_dest == in);
  int truncated = 0;
  for (int i = 0; i < 1024; i++) {
    uint32_t a, b;
    std::memcpy(&a, &in[4 * i], 4);
    std::memcpy(&b, &through_src[4 * i], 4);
    CHECK(b == (a & 0xffffe000u));
    truncated += a != b;
  }
  CHECK(truncated > 1000);
}
ZYX_TEST(dst, test_unpack_to_dest);

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "numerics_"); }
