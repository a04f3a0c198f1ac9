// Compatibility tests: the kernels of tt-metal's programming examples
// (loopback, eltwise_binary, eltwise_sfpu, matmul_single_core,
// add_2_integers_in_compute, vecadd_sharding, NoC_tile_transfer and the
// contributed multicast) built and run unmodified on the emulator, with the
// kernels, core ranges, circular buffers, semaphores and arguments their host
// programs create. The kernels are not part of this repository: set
// ZYX_TTMETAL_EXAMPLES to a copy of tt-metal's tt_metal/programming_examples
// directory; without it the test is skipped. ZYX_TTMETAL_ONLY (a
// comma-separated list of the names above) runs a subset.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <set>
#include <sstream>

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

// The 2023 revision of the loopback kernel: whole-buffer single-page DRAM
// buffers addressed by their bank's NOC coordinates, an L1 buffer as large.
void loopback_2023(DeviceLayer& layer, const std::string& source) {
  const uint32_t tiles = 50, bytes = tiles * 2048;
  auto in = bf16_random(tiles * 1024, -100, 100, 1);
  uint64_t src_id = upload(layer, in, bytes);
  uint64_t dst_id = layer.alloc(bytes, dram_spec(bytes), nullptr);
  uint64_t l1_id = layer.alloc(bytes, l1_spec(bytes), nullptr);
  GroupProgram p;
  p.name = "ttmetal_loopback_2023";
  p.params = {P("src", "global", "bf16"), P("dst", "global_mut", "bf16"), P("l1", "global_mut", "bf16")};
  p.reader.source = source;
  p.reader.runtime_args = {L("buffer_addr", 2),        L("buffer_addr", 0),        Bank("bank_noc_x", 0, 0),
                           Bank("bank_noc_y", 0, 0),    L("buffer_addr", 1),        Bank("bank_noc_x", 1, 0),
                           Bank("bank_noc_y", 1, 0),    L("buffer_size", 0)};
  layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(src_id), Buf(dst_id), Buf(l1_id)}, false);
  CHECK(download<uint16_t>(layer, dst_id, in.size()) == in);
  CHECK(download<uint16_t>(layer, l1_id, in.size()) == in);
  for (uint64_t id : {src_id, dst_id, l1_id}) layer.free(id);
  std::printf("  loopback (2023 revision, bank NOC coordinates): pass (%u tiles)\n", tiles);
}

void loopback(DeviceLayer& layer) {
  std::string source = src("loopback/kernels/loopback_dram_copy.cpp");
  if (source.find("dram_src_noc_x") != std::string::npos) return loopback_2023(layer, source);
  const uint32_t tiles = 50;
  auto in = bf16_random(tiles * 1024, -100, 100, 1);
  uint64_t src_id = upload(layer, in, 2048);
  uint64_t dst_id = layer.alloc(in.size() * 2, dram_spec(2048), nullptr);
  // l1_buffer_addr: a one-tile L1 buffer, as the host allocates.
  uint64_t l1_id = layer.alloc(2048, l1_spec(2048), nullptr);
  GroupProgram p;
  p.name = "ttmetal_loopback";
  p.params = {P("src", "global", "bf16"), P("dst", "global_mut", "bf16"), P("l1", "global_mut", "bf16")};
  p.reader.source = source;
  p.reader.runtime_args = {L("buffer_addr", 2), L("buffer_addr", 0), L("buffer_addr", 1), L("buffer_pages", 0)};
  p.compute.source = kEmpty;
  p.writer.source = kEmpty;
  layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(src_id), Buf(dst_id), Buf(l1_id)}, false);
  auto out = download<uint16_t>(layer, dst_id, in.size());
  CHECK(out == in);
  for (uint64_t id : {src_id, dst_id, l1_id}) layer.free(id);
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
  // The 2024-2025 revisions' compute kernel reads a runtime arg its host
  // never sets (and never uses it): the watcher's opt-out.
  p.compute.defines = {{"ZYX_EMU_ALLOW_ARGS_PAST_END", "1"}};
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

// vecadd_sharding: a compute kernel alone on the cores of three sharded L1
// buffers, its circular buffers at the buffers' addresses. The host shards a
// 4x4-tile tensor over 4 cores (height: 1x4 tiles each on a column of cores,
// width: 4x1 on a row, block: 2x2 on 2x2 cores).
void vecadd_sharding(DeviceLayer& layer) {
  struct Mode {
    const char* name;
    BufferLayout layout;
    uint32_t core_rows, core_cols;
  };
  for (const Mode& m : {Mode{"height", BufferLayout::HeightSharded, 4, 1}, Mode{"width", BufferLayout::WidthSharded, 1, 4},
                        Mode{"block", BufferLayout::BlockSharded, 2, 2}}) {
    const uint32_t t = 4, per_core = t * t / 4;
    CoreRangeSet cores = cores_of({{0, 0, m.core_rows - 1, m.core_cols - 1}});
    BufferSpec spec = sharded_spec(Placement::L1, m.layout, 2048, cores, t / m.core_rows, t / m.core_cols, t, t);
    auto a = bf16_random(t * t * 1024, 0, 10, 11), b = bf16_random(t * t * 1024, 0, 10, 12);
    uint64_t ia = upload(layer, a, spec), ib = upload(layer, b, spec), ic = layer.alloc(a.size() * 2, spec, nullptr);
    ProgramDesc p;
    p.name = "ttmetal_vecadd_sharding";
    p.params = {P("a", "global", "bf16"), P("b", "global", "bf16"), P("c", "global_mut", "bf16")};
    p.buffers = {decl(0, spec), decl(1, spec), decl(2, spec)};
    for (uint32_t i = 0; i < 3; i++)
      p.cbs.push_back(cb_config(cores, per_core * 2048, {cb_index(i, DataFormat::Float16_b, 2048)}, i));
    KernelDesc k = kernel("add_sharding", Processor::Compute, cores, src("vecadd_sharding/kernels/add_sharding.cpp"));
    k.compile_args = entries({C(0), C(1), C(2)});
    runtime(k, cores, {C(per_core)});
    p.kernels = {k};
    layer.run(layer.compile(p), {Buf(ia), Buf(ib), Buf(ic)}, false);
    auto got = widen(download<uint16_t>(layer, ic, a.size()));
    auto wa = widen(a), wb = widen(b);
    std::vector<double> want(got.size());
    for (size_t i = 0; i < want.size(); i++) want[i] = wa[i] + wb[i];
    check_close(got, want, 0.2, 0, std::string("vecadd_sharding ") + m.name);  // the host's own tolerance
    for (uint64_t id : {ia, ib, ic}) layer.free(id);
  }
  std::printf("  vecadd_sharding: pass (height, width, block)\n");
}

// NoC_tile_transfer: core (0,0) reads a tile and sends it to core (1,0)
// (tt-metal's logical {x=0, y=1}) under one semaphore on both cores.
void noc_tile_transfer(DeviceLayer& layer) {
  std::vector<uint16_t> in(1024, 0);
  in[0] = 14;
  uint64_t isrc = upload(layer, in, 2048), idst = layer.alloc(2048, dram_spec(2048), nullptr);
  ProgramDesc p;
  p.name = "ttmetal_noc_tile_transfer";
  p.params = {P("src", "global", "u16"), P("dst", "global_mut", "u16")};
  CoreRangeSet c0 = one_core(0, 0), c1 = one_core(1, 0), both = cores_of({{0, 0, 1, 0}});
  p.cbs = {cb_config(both, 2048, {cb_index(0, DataFormat::UInt16, 2048)}),
           cb_config(both, 2048, {cb_index(1, DataFormat::UInt16, 2048)})};
  p.semaphores = {SemaphoreDesc{both, 0, 0}};
  const std::string d = "NoC_tile_transfer/kernels/dataflow/";
  KernelDesc r0 = kernel("reader0", Processor::Riscv1, c0, src(d + "reader0.cpp"));
  r0.compile_args = entries({C(0), L("accessor", 0)});
  runtime(r0, c0, {L("buffer_addr", 0)});
  KernelDesc w0 = kernel("writer0", Processor::Riscv0, c0, src(d + "writer0.cpp"));
  w0.compile_args = entries({C(0), C(1)});
  runtime(w0, c0, {CoreNoc(true, 1, 0), CoreNoc(false, 1, 0), C(0)});
  KernelDesc r1 = kernel("reader1", Processor::Riscv1, c1, src(d + "reader1.cpp"));
  r1.compile_args = entries({C(0), C(1)});
  runtime(r1, c1, {CoreNoc(true, 0, 0), CoreNoc(false, 0, 0), C(0)});
  KernelDesc w1 = kernel("writer1", Processor::Riscv0, c1, src(d + "writer1.cpp"));
  w1.compile_args = entries({C(1), L("accessor", 1)});
  runtime(w1, c1, {L("buffer_addr", 1)});
  p.kernels = {r0, w0, r1, w1};
  layer.run(layer.compile(p), {Buf(isrc), Buf(idst)}, false);
  CHECK_EQ(download<uint16_t>(layer, idst, 1)[0], uint16_t(14));
  layer.free(isrc);
  layer.free(idst);
  std::printf("  NoC_tile_transfer: pass\n");
}

// contributed/multicast: core (0,0) multicasts an identity tile to cores
// (0,1)-(0,3) (tt-metal's logical {1,0}-{3,0}), which send it to DRAM.
void multicast(DeviceLayer& layer) {
  std::vector<uint16_t> identity(1024, 0);
  for (int i = 0; i < 32; i++) identity[i * 32 + i] = to_bf16(1.0f);
  uint64_t isrc = upload(layer, identity, 2048), iout = layer.alloc(3 * 2048, dram_spec(2048), nullptr);
  ProgramDesc p;
  p.name = "ttmetal_multicast";
  p.params = {P("src", "global", "bf16"), P("out", "global_mut", "bf16")};
  CoreRangeSet all = cores_of({{0, 0, 0, 3}}), sender = one_core(0, 0), receivers = cores_of({{0, 1, 0, 3}});
  p.semaphores = {SemaphoreDesc{all, 0, 0}, SemaphoreDesc{all, 1, 0}};
  p.cbs = {cb_config(all, 2048, {cb_index(0, DataFormat::Float16_b, 2048)}),
           cb_config(all, 2048, {cb_index(16, DataFormat::Float16_b, 2048)})};
  const std::string d = "contributed/multicast/kernels/";
  KernelDesc coord = kernel("coordinator", Processor::Riscv0, sender, src(d + "dataflow/coordinator_kernel.cpp"));
  runtime(coord, sender,
          {CoreNoc(true, 0, 1), CoreNoc(false, 0, 1), CoreNoc(true, 0, 3), CoreNoc(false, 0, 3), C(0), C(1), C(0),
           L("buffer_addr", 0), C(2048), C(3)});
  KernelDesc in = kernel("inbound", Processor::Riscv0, receivers, src(d + "dataflow/inbound_kernel.cpp"));
  runtime(in, receivers, {CoreNoc(true, 0, 0), CoreNoc(false, 0, 0), C(0), C(1)});
  KernelDesc out = kernel("outbound", Processor::Riscv1, receivers, src(d + "dataflow/outbound_kernel.cpp"));
  out.compile_args = entries({L("accessor", 1)});
  for (uint32_t i = 0; i < 3; i++) runtime(out, one_core(0, 1 + i), {L("buffer_addr", 1), C(i)});
  KernelDesc comp = kernel("compute", Processor::Compute, receivers, src(d + "compute/void_compute_kernel.cpp"));
  p.kernels = {coord, in, out, comp};
  p.buffers = {decl(1, dram_spec(2048))};
  layer.run(layer.compile(p), {Buf(isrc), Buf(iout)}, false);
  auto got = download<uint16_t>(layer, iout, 3 * 1024);
  for (uint32_t t = 0; t < 3; t++) CHECK(std::equal(identity.begin(), identity.end(), got.begin() + t * 1024));
  layer.free(isrc);
  layer.free(iout);
  std::printf("  multicast: pass (3 receivers)\n");
}

}  // namespace

static void test_ttmetal(const std::string& cache) {
  const char* dir = std::getenv("ZYX_TTMETAL_EXAMPLES");
  if (!dir || !*dir) throw Skip("ZYX_TTMETAL_EXAMPLES is not set (a copy of tt_metal/programming_examples)");
  g_dir = dir;
  std::set<std::string> only;
  if (const char* o = std::getenv("ZYX_TTMETAL_ONLY"); o && *o) {
    std::stringstream ss(o);
    for (std::string n; std::getline(ss, n, ',');) only.insert(n);
  }
  using Fn = std::function<void(DeviceLayer&)>;
  const std::vector<std::pair<std::string, Fn>> examples = {
      {"loopback", loopback},
      {"eltwise_binary", eltwise_binary},
      {"eltwise_sfpu", eltwise_sfpu},
      {"matmul_single_core", matmul_single_core},
      {"add_2_integers_in_compute", add_2_integers},
      {"vecadd_sharding", vecadd_sharding},
      {"NoC_tile_transfer", noc_tile_transfer},
      {"multicast", multicast},
  };
  size_t ran = 0;
  for (const char* board : {"n150", "p150a"}) {
    auto layer = make_emu_layer(board, 0, cache);
    std::printf(" board %s:\n", board);
    for (const auto& [name, fn] : examples)
      if (only.empty() || only.count(name)) fn(*layer), ran++;
  }
  if (ran == 0) throw Failure("ZYX_TTMETAL_ONLY names none of the examples");
}
ZYX_TEST(ttmetal, test_ttmetal);
