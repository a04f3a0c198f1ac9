// Compatibility tests: the kernels of tt-metal's single-chip programming
// examples built and run unmodified on the emulator, with the buffers,
// kernels, core ranges, circular buffers, semaphores and compile-time and
// runtime arguments their host programs create (the TensorAccessorArgs
// words as the host's append_to lays them out: ttmetal_host.hpp), each
// result checked with the host's own golden and tolerance or PCC. The
// single-core examples are here, the multi-core and printing ones in
// ttmetal_multi_tests.cpp. The kernels are not part of this repository: set
// ZYX_TTMETAL_EXAMPLES to a copy of tt-metal's tt_metal/programming_examples
// directory; without it the test is skipped. ZYX_TTMETAL_ONLY (a
// comma-separated list of case names) runs a subset. Where a kernel's
// contract changed between tt-metal revisions, the case follows what the
// kernel source shows.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <sstream>

#include "ttmetal_host.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_test::ttmetal;

namespace {

const char* kEmpty = "void kernel_main() {}";

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


// loopback: one core copies tiles DRAM -> L1 -> DRAM (the 2025 revision
// and later: two TensorAccessorArgs, a one-tile L1 buffer).
void loopback(DeviceLayer& layer) {
  std::string source = src("loopback/kernels/loopback_dram_copy.cpp");
  if (source.find("dram_src_noc_x") != std::string::npos) return loopback_2023(layer, source);
  const uint32_t tiles = 50;
  auto in = bf16_random(tiles * 1024, -100, 100, 1);
  uint64_t src_id = upload(layer, in, 2048);
  uint64_t dst_id = layer.alloc(in.size() * 2, dram_spec(2048), nullptr);
  uint64_t l1_id = layer.alloc(2048, l1_spec(2048), nullptr);
  GroupProgram p;
  p.name = "ttmetal_loopback";
  p.params = {P("src", "global", "bf16"), P("dst", "global_mut", "bf16"), P("l1", "global_mut", "bf16")};
  p.reader.source = source;
  if (takes_accessor(source)) p.reader.compile_args = cat({accessor(layer, dram_spec(2048)), accessor(layer, dram_spec(2048))});
  p.reader.runtime_args = {L("buffer_addr", 2), L("buffer_addr", 0), L("buffer_addr", 1), L("buffer_pages", 0)};
  p.compute.source = kEmpty;
  p.writer.source = kEmpty;
  layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(src_id), Buf(dst_id), Buf(l1_id)}, false);
  CHECK(download<uint16_t>(layer, dst_id, in.size()) == in);  // the host compares every element
  for (uint64_t id : {src_id, dst_id, l1_id}) layer.free(id);
  std::printf("  loopback: pass (%u tiles)\n", tiles);
}

// A single-core reader/compute/writer run over DRAM buffers of bf16 tiles
// (page = one tile): inputs uploaded, the output allocated and read back.
struct OneCore {
  DeviceLayer& layer;
  GroupProgram p;
  std::vector<uint64_t> ids;
  OneCore(DeviceLayer& l, const std::string& name) : layer(l) { p.name = "ttmetal_" + name; }
  void input(const std::vector<uint16_t>& v) {
    p.params.push_back(P("in" + std::to_string(ids.size()), "global", "bf16"));
    ids.push_back(upload(layer, v, 2048));
  }
  void output(size_t elements) {
    p.params.push_back(P("out", "global_mut", "bf16"));
    ids.push_back(layer.alloc(elements * 2, dram_spec(2048), nullptr));
  }
  std::vector<RunArg> args() const {
    std::vector<RunArg> out;
    for (uint64_t id : ids) out.push_back(Buf(id));
    return out;
  }
  // Run, read the output (the last buffer) back widened, and free all.
  std::vector<double> run(size_t elements) {
    layer.run(layer.compile(one_group_program(p, 1, 1)), args(), false);
    return output_values(elements);
  }
  std::vector<double> output_values(size_t elements) {
    auto got = widen(download<uint16_t>(layer, ids.back(), elements));
    for (uint64_t id : ids) layer.free(id);
    return got;
  }
  std::vector<Arg> dram_accessor() { return accessor(layer, dram_spec(2048)); }
};

// eltwise_binary: c = a + b over 64 tiles, a in [0, 1), b = -1; the host
// checks |c - (a + b)| <= 1e-2.
void eltwise_binary(DeviceLayer& layer) {
  const uint32_t tiles = 64;
  auto a = bf16_random(tiles * 1024, 0, 1, 2);
  std::vector<uint16_t> b(a.size(), to_bf16(-1.0f));
  OneCore run(layer, "eltwise_binary");
  run.input(a), run.input(b), run.output(a.size());
  GroupProgram& p = run.p;
  p.reader.source = src("eltwise_binary/kernels/dataflow/read_tiles.cpp");
  if (takes_accessor(p.reader.source)) p.reader.compile_args = cat({run.dram_accessor(), run.dram_accessor()});
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), L("buffer_pages", 0)};
  p.compute.source = src("eltwise_binary/kernels/compute/tiles_add.cpp");
  p.compute.runtime_args = {L("buffer_pages", 0)};
  // The 2024-2025 revisions' compute kernel reads a runtime arg its host
  // never sets (and never uses it): the watcher's opt-out.
  p.compute.defines = {{"ZYX_EMU_ALLOW_ARGS_PAST_END", "1"}};
  p.writer.source = src("eltwise_binary/kernels/dataflow/write_tile.cpp");
  if (takes_accessor(p.writer.source)) p.writer.compile_args = run.dram_accessor();
  p.writer.runtime_args = {L("buffer_addr", 2), L("buffer_pages", 2)};
  p.cbs = {CB(0, "Float16_b", 2048, 2), CB(1, "Float16_b", 2048, 2), CB(16, "Float16_b", 2048, 2)};
  auto got = run.run(a.size());
  auto wa = widen(a);
  std::vector<double> want(got.size());
  for (size_t i = 0; i < want.size(); i++) want[i] = wa[i] - 1.0;
  check_close(got, want, 1e-2, 0, "eltwise_binary");
  std::printf("  eltwise_binary: pass (%u tiles)\n", tiles);
}

// eltwise_sfpu: exp over 64 tiles of [0, 1); the host checks
// |c - bf16(exp(a))| <= 5e-2.
void eltwise_sfpu(DeviceLayer& layer) {
  const uint32_t tiles = 64;
  auto a = bf16_random(tiles * 1024, 0, 1, 4);
  OneCore run(layer, "eltwise_sfpu");
  run.input(a), run.output(a.size());
  GroupProgram& p = run.p;
  p.reader.source = src("eltwise_sfpu/kernels/dataflow/read_tile.cpp");
  p.reader.compile_args = run.dram_accessor();
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_pages", 0)};
  p.compute.source = src("eltwise_sfpu/kernels/compute/eltwise_sfpu.cpp");
  p.compute.runtime_args = {L("buffer_pages", 0)};
  p.writer.source = src("eltwise_sfpu/kernels/dataflow/write_tile.cpp");
  if (takes_accessor(p.writer.source)) p.writer.compile_args = run.dram_accessor();
  p.writer.runtime_args = {L("buffer_addr", 1), L("buffer_pages", 1)};
  p.cbs = {CB(0, "Float16_b", 2048, 2), CB(16, "Float16_b", 2048, 2)};
  auto got = run.run(a.size());
  auto wa = widen(a);
  check_close(got, bf16_golden(got.size(), [&](size_t i) { return std::exp(wa[i]); }), 5e-2, 0, "eltwise_sfpu");
  std::printf("  eltwise_sfpu: pass (%u tiles)\n", tiles);
}

// matmul_single_core: M = N = K = 640 (20 x 20 x 20 tiles) of [0, 1); the
// host wants PCC > 0.97 against its golden.
void matmul_single_core(DeviceLayer& layer) {
  const uint32_t Mt = 20, Kt = 20, Nt = 20;
  auto a = bf16_random(Mt * Kt * 1024, 0, 1, 5), b = bf16_random(Kt * Nt * 1024, 0, 1, 6);
  OneCore run(layer, "matmul_single_core");
  run.input(a), run.input(b), run.output(Mt * Nt * 1024);
  GroupProgram& p = run.p;
  const std::string d = "matmul/matmul_single_core/kernels/";
  p.reader.source = src(d + "dataflow/reader_single_core_mm.cpp");
  p.reader.compile_args = cat({run.dram_accessor(), run.dram_accessor()});
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), C(Mt), C(Kt), C(Nt)};
  p.compute.source = src(d + "compute/mm.cpp");
  p.compute.compile_args = {C(Mt), C(Kt), C(Nt)};
  p.writer.source = src(d + "dataflow/writer_single_core_mm.cpp");
  p.writer.compile_args = run.dram_accessor();
  p.writer.runtime_args = {L("buffer_addr", 2), C(Mt), C(Kt), C(Nt)};
  p.cbs = {CB(0, "Float16_b", 2048, 2), CB(1, "Float16_b", 2048, 2), CB(16, "Float16_b", 2048, 2)};
  auto got = run.run(Mt * Nt * 1024);
  check_pcc(got, matmul_golden(widen(a), widen(b), Mt, Kt, Nt), 0.97, "matmul_single_core");
  std::printf("  matmul_single_core: pass (%ux%ux%u tiles)\n", Mt, Kt, Nt);
}

// add_2_integers_in_compute: one tile, a in [0, 14), b in [0, 8); the host
// checks |c - (a + b)| <= 0.3.
void add_2_integers(DeviceLayer& layer) {
  auto a = bf16_random(1024, 0, 14, 7), b = bf16_random(1024, 0, 8, 8);
  OneCore run(layer, "add_2_integers_in_compute");
  run.input(a), run.input(b), run.output(1024);
  GroupProgram& p = run.p;
  p.reader.source = src("add_2_integers_in_compute/kernels/dataflow/reader_binary_1_tile.cpp");
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1)};
  p.compute.source = src("add_2_integers_in_compute/kernels/compute/add_2_tiles.cpp");
  p.writer.source = src("add_2_integers_in_compute/kernels/dataflow/writer_1_tile.cpp");
  p.writer.runtime_args = {L("buffer_addr", 2)};
  p.cbs = {CB(0, "Float16_b", 2048, 1), CB(1, "Float16_b", 2048, 1), CB(16, "Float16_b", 2048, 1)};
  // The kernels of 2025 and later push the output tile without reserving it.
  run_past_finding(layer, layer.compile(one_group_program(p, 1, 1)), run.args(), unreserved_push("cb_push_back(16, 1)"));
  auto got = run.output_values(1024);
  auto wa = widen(a), wb = widen(b);
  std::vector<double> want(1024);
  for (size_t i = 0; i < 1024; i++) want[i] = wa[i] + wb[i];
  check_close(got, want, 0.3, 0, "add_2_integers_in_compute");
  std::printf("  add_2_integers_in_compute: pass\n");
}

// sfpu_eltwise_chain: softplus = log(exp(x) + 1) of one tile of [0, 1) by
// three SFPU ops in DST (the reader makes the tile of ones); the host wants
// PCC > 0.999 against bf16(log1p(exp(x))).
void sfpu_eltwise_chain(DeviceLayer& layer) {
  auto a = bf16_random(1024, 0, 1, 9);
  OneCore run(layer, "sfpu_eltwise_chain");
  run.input(a), run.output(1024);
  GroupProgram& p = run.p;
  const std::string d = "sfpu_eltwise_chain/kernels/";
  p.reader.source = src(d + "dataflow/reader.cpp");
  p.reader.compile_args = cat({{C(0), C(1)}, run.dram_accessor()});
  p.reader.runtime_args = {L("buffer_addr", 0)};
  p.compute.source = src(d + "compute/compute.cpp");
  p.compute.compile_args = {C(0), C(1), C(2)};
  p.writer.source = src(d + "dataflow/writer.cpp");
  p.writer.compile_args = cat({{C(2)}, run.dram_accessor()});
  p.writer.runtime_args = {L("buffer_addr", 1)};
  p.cbs = {CB(0, "Float16_b", 2048, 1), CB(1, "Float16_b", 2048, 1), CB(2, "Float16_b", 2048, 1)};
  auto got = run.run(1024);
  auto wa = widen(a);
  auto want = bf16_golden(got.size(), [&](size_t i) { return std::log1p(std::exp(wa[i])); });
  check_pcc(got, want, 0.999, "sfpu_eltwise_chain");
  std::printf("  sfpu_eltwise_chain: pass (PCC %.6f)\n", pcc(got, want));
}

// contributed/vecadd: c = a + b over 64 tiles on one core, 4-tile CBs. The
// host prints ten sums and checks nothing; this checks every element
// against bf16(a + b) to one bf16 ulp.
void contributed_vecadd(DeviceLayer& layer) {
  const uint32_t tiles = 64;
  auto a = bf16_random(tiles * 1024, 0, 10, 10), b = bf16_random(tiles * 1024, 0, 10, 11);
  OneCore run(layer, "contributed_vecadd");
  run.input(a), run.input(b), run.output(a.size());
  GroupProgram& p = run.p;
  p.reader.source = src("contributed/vecadd/kernels/interleaved_tile_read.cpp");
  p.reader.compile_args = cat({run.dram_accessor(), run.dram_accessor()});
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), C(tiles)};
  p.compute.source = src("contributed/vecadd/kernels/add.cpp");
  p.compute.runtime_args = {C(tiles)};
  p.writer.source = src("contributed/vecadd/kernels/tile_write.cpp");
  p.writer.compile_args = run.dram_accessor();
  p.writer.runtime_args = {L("buffer_addr", 2), C(tiles)};
  p.cbs = {CB(0, "Float16_b", 2048, 4), CB(1, "Float16_b", 2048, 4), CB(16, "Float16_b", 2048, 4)};
  auto got = run.run(a.size());
  auto wa = widen(a), wb = widen(b);
  check_close(got, bf16_golden(got.size(), [&](size_t i) { return wa[i] + wb[i]; }), 0, 1.0 / 128,
              "contributed/vecadd");
  std::printf("  contributed/vecadd: pass (%u tiles)\n", tiles);
}

// vecadd_sharding: a compute kernel alone on the cores of three sharded L1
// buffers, its circular buffers at the buffers' addresses. The host shards
// a 4x4-tile tensor over 4 cores: height, 4x1-tile shards on tt-metal's
// cores {0,0}-{3,0} (a row); width, 1x4-tile shards on {0,0}-{0,3} (a
// column); block, 2x2 on 2x2 cores. It checks |c - (a + b)| <= 0.2.
void vecadd_sharding(DeviceLayer& layer) {
  struct Mode {
    const char* name;
    BufferLayout layout;
    uint32_t core_rows, core_cols;
  };
  for (const Mode& m : {Mode{"height", BufferLayout::HeightSharded, 1, 4}, Mode{"width", BufferLayout::WidthSharded, 4, 1},
                        Mode{"block", BufferLayout::BlockSharded, 2, 2}}) {
    const uint32_t t = 4, per_core = t * t / 4;
    CoreRangeSet cores = cores_of({{0, 0, m.core_rows - 1, m.core_cols - 1}});
    // The shard shape is {tiles per core along x, along y} in tiles (rows, cols).
    BufferSpec spec = sharded_spec(Placement::L1, m.layout, 2048, cores, t / m.core_cols, t / m.core_rows, t, t);
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
    check_close(got, want, 0.2, 0, std::string("vecadd_sharding ") + m.name);
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
  r0.compile_args = to_entries(cat({{C(0)}, accessor(layer, dram_spec(2048))}));
  runtime(r0, c0, {L("buffer_addr", 0)});
  KernelDesc w0 = kernel("writer0", Processor::Riscv0, c0, src(d + "writer0.cpp"));
  w0.compile_args = entries({C(0), C(1)});
  runtime(w0, c0, {CoreNoc(true, 1, 0), CoreNoc(false, 1, 0), C(0)});
  KernelDesc r1 = kernel("reader1", Processor::Riscv1, c1, src(d + "reader1.cpp"));
  r1.compile_args = entries({C(0), C(1)});
  runtime(r1, c1, {CoreNoc(true, 0, 0), CoreNoc(false, 0, 0), C(0)});
  KernelDesc w1 = kernel("writer1", Processor::Riscv0, c1, src(d + "writer1.cpp"));
  w1.compile_args = to_entries(cat({{C(1)}, accessor(layer, dram_spec(2048))}));
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
  if (takes_accessor(out.source)) out.compile_args = to_entries(accessor(layer, dram_spec(2048)));
  for (uint32_t i = 0; i < 3; i++) runtime(out, one_core(0, 1 + i), {L("buffer_addr", 1), C(i)});
  KernelDesc comp = kernel("compute", Processor::Compute, receivers, src(d + "compute/void_compute_kernel.cpp"));
  p.kernels = {coord, in, out, comp};
  // The coordinator of 2025 and later pushes the tile it read without reserving it.
  run_past_finding(layer, layer.compile(p), {Buf(isrc), Buf(iout)}, unreserved_push("cb_push_back(0, 1)"));
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
  g_examples_dir = dir;
  std::set<std::string> only;
  if (const char* o = std::getenv("ZYX_TTMETAL_ONLY"); o && *o) {
    std::stringstream ss(o);
    for (std::string n; std::getline(ss, n, ',');) only.insert(n);
  }
  std::vector<Example> examples = {
      {"loopback", loopback},
      {"eltwise_binary", eltwise_binary},
      {"eltwise_sfpu", eltwise_sfpu},
      {"matmul_single_core", matmul_single_core},
      {"add_2_integers_in_compute", add_2_integers},
      {"sfpu_eltwise_chain", sfpu_eltwise_chain},
      {"contributed_vecadd", contributed_vecadd},
      {"vecadd_sharding", vecadd_sharding},
      {"NoC_tile_transfer", noc_tile_transfer},
      {"multicast", multicast},
  };
  for (Example& e : multi_core_examples()) examples.push_back(std::move(e));
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
