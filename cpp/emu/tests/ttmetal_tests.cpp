// Compatibility tests: the kernels of tt-metal's programming examples
// (loopback, eltwise_binary, eltwise_sfpu, matmul_single_core,
// add_2_integers_in_compute) built and run unmodified on the emulator, with
// the argument layouts their host programs use. The kernels are not part of
// this repository: set ZYX_TTMETAL_EXAMPLES to a copy of tt-metal's
// tt_metal/programming_examples directory; without it the test is skipped.
#include <cmath>
#include <cstdlib>
#include <random>

#include "harness.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

std::string g_dir;

std::string src(const std::string& rel) { return read_text(g_dir + "/" + rel); }

const char* kEmpty = "void kernel_main() {}";

std::vector<uint16_t> bf16_random(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = to_bf16(d(rng));
  return v;
}

std::vector<double> widen(const std::vector<uint16_t>& v) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); i++) out[i] = from_bf16(v[i]);
  return out;
}

void loopback(DeviceLayer& layer, const DeviceDesc& d) {
  const uint32_t tiles = 50;
  auto in = bf16_random(tiles * 1024, -100, 100, 1);
  uint64_t src_id = upload(layer, in, 2048);
  uint64_t dst_id = layer.alloc(in.size() * 2, dram_spec(2048), nullptr);
  GroupProgram p;
  p.name = "ttmetal_loopback";
  p.params = {P("src", "global", "bf16"), P("dst", "global_mut", "bf16")};
  p.reader.source = src("loopback/kernels/loopback_dram_copy.cpp");
  // l1_buffer_addr: a scratch tile in L1 (the host allocates an L1 buffer).
  p.reader.runtime_args = {C(static_cast<uint32_t>(d.l1_unreserved_base)), L("buffer_addr", 0), L("buffer_addr", 1),
                           L("buffer_pages", 0)};
  p.compute.source = kEmpty;
  p.writer.source = kEmpty;
  layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(src_id), Buf(dst_id)}, false);
  auto out = download<uint16_t>(layer, dst_id, in.size());
  CHECK(out == in);
  std::printf("  loopback: pass (%u tiles)\n", tiles);
}

// Reader, compute and writer of an elementwise example over n tiles.
void eltwise_binary(DeviceLayer& layer) {
  const uint32_t tiles = 64;
  auto a = bf16_random(tiles * 1024, -10, 10, 2), b = bf16_random(tiles * 1024, -10, 10, 3);
  uint64_t ia = upload(layer, a, 2048), ib = upload(layer, b, 2048);
  uint64_t ic = layer.alloc(a.size() * 2, dram_spec(2048), nullptr);
  GroupProgram p;
  p.name = "ttmetal_eltwise_binary";
  p.params = {P("a", "global", "bf16"), P("b", "global", "bf16"), P("c", "global_mut", "bf16")};
  p.reader.source = src("eltwise_binary/kernels/dataflow/read_tiles.cpp");
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), L("buffer_pages", 0)};
  p.compute.source = src("eltwise_binary/kernels/compute/tiles_add.cpp");
  p.compute.runtime_args = {L("buffer_pages", 0)};
  p.writer.source = src("eltwise_binary/kernels/dataflow/write_tile.cpp");
  p.writer.runtime_args = {L("buffer_addr", 2), L("buffer_pages", 2)};
  p.cbs = {CB(0, "Float16_b", 2048, 2), CB(1, "Float16_b", 2048, 2), CB(16, "Float16_b", 2048, 2)};
  layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(ia), Buf(ib), Buf(ic)}, false);
  auto got = widen(download<uint16_t>(layer, ic, a.size()));
  auto wa = widen(a), wb = widen(b);
  std::vector<double> want(got.size());
  for (size_t i = 0; i < want.size(); i++) want[i] = wa[i] + wb[i];
  check_close(got, want, 1e-2, 1e-2, "eltwise_binary");
  std::printf("  eltwise_binary: pass (%u tiles)\n", tiles);
}

void eltwise_sfpu(DeviceLayer& layer) {
  const uint32_t tiles = 64;
  auto a = bf16_random(tiles * 1024, -4, 4, 4);
  uint64_t ia = upload(layer, a, 2048);
  uint64_t ic = layer.alloc(a.size() * 2, dram_spec(2048), nullptr);
  GroupProgram p;
  p.name = "ttmetal_eltwise_sfpu";
  p.params = {P("a", "global", "bf16"), P("c", "global_mut", "bf16")};
  p.reader.source = src("eltwise_sfpu/kernels/dataflow/read_tile.cpp");
  p.reader.compile_args = {L("accessor", 0)};
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_pages", 0)};
  p.compute.source = src("eltwise_sfpu/kernels/compute/eltwise_sfpu.cpp");
  p.compute.runtime_args = {L("buffer_pages", 0)};
  p.writer.source = src("eltwise_sfpu/kernels/dataflow/write_tile.cpp");
  p.writer.runtime_args = {L("buffer_addr", 1), L("buffer_pages", 1)};
  p.cbs = {CB(0, "Float16_b", 2048, 2), CB(16, "Float16_b", 2048, 2)};
  layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(ia), Buf(ic)}, false);
  auto got = widen(download<uint16_t>(layer, ic, a.size()));
  auto wa = widen(a);
  std::vector<double> want(got.size());
  for (size_t i = 0; i < want.size(); i++) want[i] = std::exp(wa[i]);
  check_close(got, want, 1e-2, 1e-2, "eltwise_sfpu");
  std::printf("  eltwise_sfpu: pass (%u tiles)\n", tiles);
}

void matmul_single_core(DeviceLayer& layer) {
  const uint32_t Mt = 4, Kt = 6, Nt = 3;
  // Host data in tiled layout (the example tilizes on the host).
  auto a = bf16_random(Mt * Kt * 1024, -1, 1, 5), b = bf16_random(Kt * Nt * 1024, -1, 1, 6);
  uint64_t ia = upload(layer, a, 2048), ib = upload(layer, b, 2048);
  uint64_t ic = layer.alloc(Mt * Nt * 2048, dram_spec(2048), nullptr);
  GroupProgram p;
  p.name = "ttmetal_matmul_single_core";
  p.params = {P("a", "global", "bf16"), P("b", "global", "bf16"), P("c", "global_mut", "bf16")};
  p.reader.source = src("matmul/matmul_single_core/kernels/dataflow/reader_single_core_mm.cpp");
  p.reader.compile_args = {L("accessor", 0), L("accessor", 1)};
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), C(Mt), C(Kt), C(Nt)};
  p.compute.source = src("matmul/matmul_single_core/kernels/compute/mm.cpp");
  p.compute.compile_args = {C(Mt), C(Kt), C(Nt)};
  p.writer.source = src("matmul/matmul_single_core/kernels/dataflow/writer_single_core_mm.cpp");
  p.writer.compile_args = {L("accessor", 2)};
  p.writer.runtime_args = {L("buffer_addr", 2), C(Mt), C(Nt)};
  p.cbs = {CB(0, "Float16_b", 2048, 2), CB(1, "Float16_b", 2048, 2), CB(16, "Float16_b", 2048, 2)};
  layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(ia), Buf(ib), Buf(ic)}, false);
  auto got = widen(download<uint16_t>(layer, ic, Mt * Nt * 1024));
  auto wa = widen(a), wb = widen(b);
  auto A = [&](uint32_t r, uint32_t c) { return wa[((r / 32) * Kt + c / 32) * 1024 + face_index(r % 32, c % 32)]; };
  auto B = [&](uint32_t r, uint32_t c) { return wb[((r / 32) * Nt + c / 32) * 1024 + face_index(r % 32, c % 32)]; };
  std::vector<double> want(got.size());
  for (uint32_t r = 0; r < Mt * 32; r++)
    for (uint32_t c = 0; c < Nt * 32; c++) {
      double s = 0;
      for (uint32_t k = 0; k < Kt * 32; k++) s += A(r, k) * B(k, c);
      want[((r / 32) * Nt + c / 32) * 1024 + face_index(r % 32, c % 32)] = s;
    }
  // bf16 DST accumulation over k = 192: a few bf16 ulps of the result.
  check_close(got, want, 0.1, 0.03, "matmul_single_core");
  std::printf("  matmul_single_core: pass (%ux%ux%u tiles)\n", Mt, Kt, Nt);
}

void add_2_integers(DeviceLayer& layer) {
  std::vector<uint16_t> a(1024, to_bf16(14.0f)), b(1024, to_bf16(7.0f));
  auto r = bf16_random(1024, 0, 100, 7);
  for (size_t i = 0; i < 512; i++) a[i] = to_bf16(std::floor(from_bf16(r[i])));
  uint64_t ia = upload(layer, a, 2048), ib = upload(layer, b, 2048);
  uint64_t ic = layer.alloc(2048, dram_spec(2048), nullptr);
  GroupProgram p;
  p.name = "ttmetal_add_2_integers_in_compute";
  p.params = {P("a", "global", "bf16"), P("b", "global", "bf16"), P("c", "global_mut", "bf16")};
  p.reader.source = src("add_2_integers_in_compute/kernels/dataflow/reader_binary_1_tile.cpp");
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1)};
  p.compute.source = src("add_2_integers_in_compute/kernels/compute/add_2_tiles.cpp");
  p.writer.source = src("add_2_integers_in_compute/kernels/dataflow/writer_1_tile.cpp");
  p.writer.runtime_args = {L("buffer_addr", 2)};
  p.cbs = {CB(0, "Float16_b", 2048, 1), CB(1, "Float16_b", 2048, 1), CB(16, "Float16_b", 2048, 1)};
  layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(ia), Buf(ib), Buf(ic)}, false);
  auto got = widen(download<uint16_t>(layer, ic, 1024));
  std::vector<double> want(1024);
  for (size_t i = 0; i < 1024; i++) want[i] = from_bf16(to_bf16(static_cast<float>(from_bf16(a[i]) + 7.0)));
  check_close(got, want, 0, 0, "add_2_integers_in_compute");
  CHECK_EQ(got[1000], 21.0);
  std::printf("  add_2_integers_in_compute: pass\n");
}

}  // namespace

void test_ttmetal(const std::string& cache) {
  const char* dir = std::getenv("ZYX_TTMETAL_EXAMPLES");
  if (!dir || !*dir) throw Skip("ZYX_TTMETAL_EXAMPLES is not set (a copy of tt_metal/programming_examples)");
  g_dir = dir;
  for (const char* board : {"n150", "p150a"}) {
    auto layer = make_emu_layer(board, 0, cache);
    std::printf(" board %s:\n", board);
    loopback(*layer, layer->describe());
    eltwise_binary(*layer);
    eltwise_sfpu(*layer);
    matmul_single_core(*layer);
    add_2_integers(*layer);
  }
}
