// Compatibility tests, continued (ttmetal_tests.cpp runs them): tt-metal's
// multi-core programming examples, with the work split over the compute
// grid as split_work_to_cores deals it, and the examples whose only output
// is what their kernels print (checked from the emulator's DPRINT lines).
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "ttmetal_host.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_test::ttmetal;

namespace {

// The cores of a split, one range each, and the union as a set.
CoreRangeSet cores_of_work(const std::vector<Work>& work) {
  CoreRangeSet s;
  for (const Work& w : work) s.ranges.push_back(CoreRange{{w.row, w.col}, {w.row, w.col}});
  return s;
}

KernelDesc dm_kernel(const std::string& name, Processor proc, const CoreRangeSet& cores, const std::string& source,
                     const std::vector<Arg>& compile_args) {
  KernelDesc k = kernel(name, proc, cores, source);
  k.compile_args = to_entries(compile_args);
  return k;
}

// vecadd_multi_core: c = a + b over 640 tiles of [0, 10), split row-wise
// over the whole compute grid; CBs c_0, c_1, c_2 of 4 tiles on every core;
// named compile args "c_0", "c_1" (reader) and "c_0".."c_2" (compute). The
// host checks |c - (a + b)| <= 0.3.
void vecadd_multi_core(DeviceLayer& layer) {
  const uint32_t tiles = 640;
  GridInfo g = layer.describe().grid;
  auto work = split_work(g.rows, g.cols, tiles, true);
  CoreRangeSet cores = cores_of_work(work), grid = cores_of({{0, 0, g.rows - 1, g.cols - 1}});
  auto a = bf16_random(tiles * 1024, 0, 10, 21), b = bf16_random(tiles * 1024, 0, 10, 22);
  uint64_t ia = upload(layer, a, 2048), ib = upload(layer, b, 2048), ic = layer.alloc(a.size() * 2, dram_spec(2048), nullptr);
  ProgramDesc p;
  p.name = "ttmetal_vecadd_multi_core";
  p.params = {P("a", "global", "bf16"), P("b", "global", "bf16"), P("c", "global_mut", "bf16")};
  for (uint32_t i = 0; i < 3; i++) p.cbs.push_back(cb_config(grid, 4 * 2048, {cb_index(i, DataFormat::Float16_b, 2048)}));
  const std::string d = "vecadd_multi_core/kernels/";
  auto acc = accessor(layer, dram_spec(2048));
  KernelDesc r = dm_kernel("reader", Processor::Riscv0, cores, src(d + "interleaved_tile_read_multi_core.cpp"),
                           cat({{C(0), C(1)}, acc, acc}));
  r.named_compile_args = {{"c_0", C(0).entry}, {"c_1", C(1).entry}};
  KernelDesc w = dm_kernel("writer", Processor::Riscv1, cores, src(d + "tile_write_multi_core.cpp"), cat({{C(2)}, acc}));
  KernelDesc c = dm_kernel("compute", Processor::Compute, cores, src(d + "add_multi_core.cpp"), {C(0), C(1), C(2)});
  c.named_compile_args = {{"c_0", C(0).entry}, {"c_1", C(1).entry}, {"c_2", C(2).entry}};
  for (const Work& u : work) {
    CoreRangeSet one = one_core(u.row, u.col);
    runtime(r, one, {L("buffer_addr", 0), L("buffer_addr", 1), C(u.units), C(u.start)});
    runtime(w, one, {L("buffer_addr", 2), C(u.units), C(u.start)});
    runtime(c, one, {C(u.units), C(u.start)});
  }
  p.kernels = {r, w, c};
  layer.run(layer.compile(p), {Buf(ia), Buf(ib), Buf(ic)}, false);
  auto got = widen(download<uint16_t>(layer, ic, a.size()));
  auto wa = widen(a), wb = widen(b);
  std::vector<double> want(got.size());
  for (size_t i = 0; i < want.size(); i++) want[i] = wa[i] + wb[i];
  check_close(got, want, 0.3, 0, "vecadd_multi_core");
  for (uint64_t id : {ia, ib, ic}) layer.free(id);
  std::printf("  vecadd_multi_core: pass (%u tiles on %zu cores)\n", tiles, work.size());
}

// matmul_multi_core: M = N = K = 640 of [-0.5, 0.5), the 400 output tiles
// split column by column over the compute grid (split_work_to_cores'
// default); the host wants PCC > 0.97 against its golden.
void matmul_multi_core(DeviceLayer& layer) {
  const uint32_t Mt = 20, Kt = 20, Nt = 20;
  GridInfo g = layer.describe().grid;
  auto work = split_work(g.rows, g.cols, Mt * Nt, false);
  CoreRangeSet cores = cores_of_work(work);
  auto a = bf16_random(Mt * Kt * 1024, -0.5, 0.5, 23), b = bf16_random(Kt * Nt * 1024, -0.5, 0.5, 24);
  uint64_t ia = upload(layer, a, 2048), ib = upload(layer, b, 2048);
  uint64_t ic = layer.alloc(Mt * Nt * 2048, dram_spec(2048), nullptr);
  ProgramDesc p;
  p.name = "ttmetal_matmul_multi_core";
  p.params = {P("a", "global", "bf16"), P("b", "global", "bf16"), P("c", "global_mut", "bf16")};
  for (uint32_t i : {0u, 1u, 16u}) p.cbs.push_back(cb_config(cores, 2 * 2048, {cb_index(i, DataFormat::Float16_b, 2048)}));
  const std::string d = "matmul/matmul_multi_core/kernels/";
  auto acc = accessor(layer, dram_spec(2048));
  KernelDesc r = dm_kernel("reader", Processor::Riscv1, cores, src(d + "dataflow/reader_mm_output_tiles_partitioned.cpp"),
                           cat({acc, acc}));
  KernelDesc w = dm_kernel("writer", Processor::Riscv0, cores, src(d + "dataflow/writer_unary_interleaved_start_id.cpp"),
                           acc);
  KernelDesc c = dm_kernel("compute", Processor::Compute, cores, src(d + "compute/mm.cpp"), {});
  for (const Work& u : work) {
    CoreRangeSet one = one_core(u.row, u.col);
    runtime(r, one, {L("buffer_addr", 0), L("buffer_addr", 1), C(Mt), C(Kt), C(Nt), C(u.start), C(u.units)});
    runtime(w, one, {L("buffer_addr", 2), C(u.units), C(u.start)});
    runtime(c, one, {C(u.units), C(Kt)});
  }
  p.kernels = {r, w, c};
  layer.run(layer.compile(p), {Buf(ia), Buf(ib), Buf(ic)}, false);
  auto got = widen(download<uint16_t>(layer, ic, Mt * Nt * 1024));
  check_pcc(got, matmul_golden(widen(a), widen(b), Mt, Kt, Nt), 0.97, "matmul_multi_core");
  for (uint64_t id : {ia, ib, ic}) layer.free(id);
  std::printf("  matmul_multi_core: pass (%ux%ux%u tiles on %zu cores)\n", Mt, Kt, Nt, work.size());
}

// matmul_multicore_reuse: M = N = K = 640, B = 1, A in [-0.4, 0.6), B in
// [-0.3, 0.7); each core computes a per_core_M x per_core_N block of output
// tiles (in0_block_w = 2), the blocks dealt row-major over the grid; the
// host wants PCC > 0.99 against its golden.
void matmul_multicore_reuse(DeviceLayer& layer) {
  const uint32_t Mt = 20, Kt = 20, Nt = 20, w = 2;
  GridInfo g = layer.describe().grid;
  MatmulBlocks bl = large_matmul_blocks(Mt, Nt, g.rows, g.cols, w);
  if (!bl.m) throw Failure("matmul_multicore_reuse: no block fits the grid");
  const uint32_t blocks_y = Mt / bl.m, blocks_x = Nt / bl.n, sub_m = bl.m / bl.sub_h, sub_n = bl.n / bl.sub_w;
  auto a = bf16_random(Mt * Kt * 1024, -0.4, 0.6, 25), b = bf16_random(Kt * Nt * 1024, -0.3, 0.7, 26);
  uint64_t ia = upload(layer, a, 2048), ib = upload(layer, b, 2048);
  uint64_t ic = layer.alloc(Mt * Nt * 2048, dram_spec(2048), nullptr);
  std::vector<Work> work;
  for (uint32_t k = 0; k < blocks_y * blocks_x; k++) work.push_back(Work{k / g.cols, k % g.cols, 0, k});
  CoreRangeSet cores = cores_of_work(work);
  ProgramDesc p;
  p.name = "ttmetal_matmul_multicore_reuse";
  p.params = {P("a", "global", "bf16"), P("b", "global", "bf16"), P("c", "global_mut", "bf16")};
  p.cbs = {cb_config(cores, bl.m * w * 2 * 2048, {cb_index(0, DataFormat::Float16_b, 2048)}),
           cb_config(cores, bl.n * w * 2 * 2048, {cb_index(1, DataFormat::Float16_b, 2048)}),
           cb_config(cores, bl.m * bl.n * 2048,
                     {cb_index(16, DataFormat::Float16_b, 2048), cb_index(24, DataFormat::Float16_b, 2048)})};
  const std::string d = "matmul/matmul_common/kernels/";
  auto acc = accessor(layer, dram_spec(2048));
  KernelDesc r = dm_kernel("reader", Processor::Riscv1, cores, src(d + "dataflow/reader_bmm_tile_layout.cpp"), cat({acc, acc}));
  KernelDesc wr = dm_kernel("writer", Processor::Riscv0, cores, src(d + "dataflow/writer_bmm_tile_layout.cpp"), acc);
  KernelDesc c = dm_kernel("compute", Processor::Compute, cores, src(d + "compute/bmm_large_block_zm.cpp"),
                           consts({w, sub_m, bl.sub_h * w * sub_m, bl.sub_h * w, sub_n, bl.sub_w * w * sub_n,
                                   bl.sub_w * sub_n, Kt / w, bl.sub_h, bl.sub_w, bl.sub_h * bl.sub_w, 1}));
  for (const Work& u : work) {
    uint32_t y = u.start / blocks_x, x = u.start % blocks_x;
    CoreRangeSet one = one_core(u.row, u.col);
    runtime(r, one, {L("buffer_addr", 0), C(Kt * bl.m * y), C(1), C(Kt), C(w), C(w), C(bl.m), C(w * bl.m),
                     L("buffer_addr", 1), C(bl.n * x), C(1), C(Nt), C(w * Nt), C(bl.n), C(w), C(bl.n * w), C(Kt / w),
                     C(Mt * Kt), C(Kt * Nt), C(1), C(0)});
    runtime(wr, one, {L("buffer_addr", 2), C(x * bl.n + y * bl.m * Nt), C(1), C(Nt), C(bl.sub_w), C(bl.sub_h * Nt),
                      C(bl.sub_w), C(bl.sub_h), C(bl.sub_w * bl.sub_h), C(sub_n), C(sub_m), C(Mt * Nt), C(1)});
  }
  p.kernels = {r, wr, c};
  layer.run(layer.compile(p), {Buf(ia), Buf(ib), Buf(ic)}, false);
  auto got = widen(download<uint16_t>(layer, ic, Mt * Nt * 1024));
  check_pcc(got, matmul_golden(widen(a), widen(b), Mt, Kt, Nt), 0.99, "matmul_multicore_reuse");
  for (uint64_t id : {ia, ib, ic}) layer.free(id);
  std::printf("  matmul_multicore_reuse: pass (%u cores, %ux%u-tile blocks)\n", blocks_y * blocks_x, bl.m, bl.n);
}

// The DPRINT lines of a run ("dprint: core (r,c) <processor>: <text>").
// A finding with an empty check: the run must pass the watcher.
std::vector<std::string> printed(DeviceLayer& layer, uint64_t program, const std::vector<RunArg>& args,
                                 const Finding& finding = {}) {
  EnvVar dprint("ZYX_EMU_DPRINT", "1");
  std::string err = capture_stderr([&] {
    if (finding.check.empty()) layer.run(program, args, false);
    else run_past_finding(layer, program, args, finding);
  });
  return dprint_lines(err);
}

void expect_line(const std::vector<std::string>& lines, const std::string& line) {
  for (const auto& l : lines)
    if (l == line) return;
  std::string all;
  for (const auto& l : lines) all += "\n  " + l;
  throw Failure("no DPRINT line \"" + line + "\" in:" + all);
}

// add_2_integers_in_riscv: one data movement kernel adds 14 + 7 from two
// 4-byte DRAM buffers through three 4-byte L1 buffers; the host wants 21.
void add_2_integers_in_riscv(DeviceLayer& layer) {
  std::vector<uint64_t> ids = {upload(layer, std::vector<uint32_t>{14}, 4), upload(layer, std::vector<uint32_t>{7}, 4)};
  ids.push_back(layer.alloc(4, dram_spec(4), nullptr));
  for (int i = 0; i < 3; i++) ids.push_back(layer.alloc(4, l1_spec(4), nullptr));
  GroupProgram p;
  p.name = "ttmetal_add_2_integers_in_riscv";
  p.params = {P("src0", "global", "u32"), P("src1", "global", "u32"), P("dst", "global_mut", "u32")};
  for (const char* n : {"src0_l1", "src1_l1", "dst_l1"}) p.params.push_back(P(n, "global_mut", "u32"));
  p.reader.source = src("add_2_integers_in_riscv/kernels/reader_writer_add_in_riscv.cpp");
  for (uint32_t i = 0; i < 6; i++) p.reader.runtime_args.push_back(L("buffer_addr", i));
  std::vector<RunArg> args;
  for (uint64_t id : ids) args.push_back(Buf(id));
  auto lines = printed(layer, layer.compile(one_group_program(p, 1, 1)), args);
  CHECK_EQ(download<uint32_t>(layer, ids[2], 1)[0], 21u);
  expect_line(lines, "dprint: core (0,0) riscv_0: Adding integers: 14 + 7");
  for (uint64_t id : ids) layer.free(id);
  std::printf("  add_2_integers_in_riscv: pass (14 + 7 = 21)\n");
}

// hello_world_compute_kernel and hello_world_datamovement_kernel: kernels
// that only print, on core {0, 0}; their lines are the check.
void hello_world_compute(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "ttmetal_hello_world_compute";
  p.compute.source = src("hello_world_compute_kernel/kernels/compute/void_compute_kernel.cpp");
  auto lines = printed(layer, layer.compile(one_group_program(p, 1, 1)), {});
  const std::string c = "dprint: core (0,0) ";
  expect_line(lines, c + "trisc0: Hello, I am the UNPACK core running the compute kernel.");
  expect_line(lines, c + "trisc1: Hello, I am the MATH core running the compute kernel.");
  expect_line(lines, c + "trisc2: Hello, I am the PACK core running the compute kernel.");
  CHECK_EQ(lines.size(), size_t(3));
  std::printf("  hello_world_compute_kernel: pass\n");
}

void hello_world_datamovement(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "ttmetal_hello_world_datamovement";
  p.reader.source = src("hello_world_datamovement_kernel/kernels/dataflow/void_dataflow_kernel.cpp");
  p.writer.source = p.reader.source;
  auto lines = printed(layer, layer.compile(one_group_program(p, 1, 1)), {});
  const std::string c = "dprint: core (0,0) ";
  for (int i = 0; i < 2; i++) {
    std::string proc = c + "riscv_" + std::to_string(i) + ": ";
    expect_line(lines, proc + "My logical coordinates are 0,0");
    expect_line(lines,
                proc + "Hello, host, I am running a void data movement kernel on Data Movement core " + std::to_string(i) + ".");
  }
  CHECK_EQ(lines.size(), size_t(4));
  std::printf("  hello_world_datamovement_kernel: pass\n");
}

// hello_world_datatypes_kernel reads its DRAM buffer from the hard-coded NOC
// node (1, 0), DRAM on Grayskull only: on these boards the run must be an
// error that names the node (docs/emulator.md).
void hello_world_datatypes(DeviceLayer& layer) {
  uint64_t id = upload(layer, std::vector<float>(512, 0.1f), 2048);
  GroupProgram p;
  p.name = "ttmetal_hello_world_datatypes";
  p.params = {P("buf", "global", "f32")};
  p.reader.source = src("hello_world_datatypes_kernel/kernels/dataflow/float_dataflow_kernel.cpp");
  p.reader.runtime_args = {L("buffer_addr", 0)};
  p.cbs = {CB(0, "Float16_b", 2048, 1)};
  std::string what = run_error(layer, layer.compile(one_group_program(p, 1, 1)), {Buf(id)});
  layer.free(id);
  if (what.find("(1, 0)") == std::string::npos && what.find("(1,0)") == std::string::npos)
    throw Failure("hello_world_datatypes_kernel: want a run error naming NOC node (1, 0), got \"" + what + "\"");
  std::printf("  hello_world_datatypes_kernel: refused as expected (NOC node (1, 0) is no DRAM here)\n");
}

// shard_data_rm: four cores {0, i} (a column) each read two 4-byte sticks
// of 16 bf16 values {2, 4, ..., 32} through a TensorAccessor and print
// them; the host's expectation (it checks nothing) is each core printing
// its quarter.
void shard_data_rm(DeviceLayer& layer) {
  std::vector<uint16_t> v(16);
  for (uint32_t i = 0; i < 16; i++) v[i] = to_bf16(2.0f * (i + 1));
  uint64_t id = upload(layer, v, 4);
  DeviceDesc desc = layer.describe();
  const uint32_t padded = static_cast<uint32_t>(desc.dram_alignment);  // align(4, DRAM alignment)
  CoreRangeSet cores = cores_of({{0, 0, 3, 0}});
  ProgramDesc p;
  p.name = "ttmetal_shard_data_rm";
  p.params = {P("src", "global", "bf16")};
  p.cbs = {cb_config(cores, 4 * 4, {cb_index(0, DataFormat::Float16_b, 4)})};
  KernelDesc k = dm_kernel("reader", Processor::Riscv0, cores, src("shard_data_rm/kernels/reader_sharded_rm.cpp"),
                           cat({{C(0)}, accessor(layer, dram_spec(4))}));
  for (uint32_t i = 0; i < 4; i++) runtime(k, one_core(i, 0), {L("buffer_addr", 0), C(4), C(padded), C(2 * i)});
  p.kernels = {k};
  // Each core steps its L1 pointer by the DRAM alignment per stick, past
  // its 16-byte CB, into L1 nothing else uses.
  auto lines = printed(layer, layer.compile(p), {Buf(id)},
                       Finding{"noc", "is outside everything the program allocated there"});
  layer.free(id);
  for (uint32_t i = 0; i < 4; i++) {
    std::ostringstream want;
    want << "dprint: core (" << i << ",0) riscv_0: Core (0," << i << "): ";
    for (uint32_t j = 0; j < 4; j++) want << 2 * (4 * i + j + 1) << " ";
    expect_line(lines, want.str());
  }
  std::printf("  shard_data_rm: pass (4 cores)\n");
}

// pad_multi_core: a 64 x 32 bf16 row-major tensor (values 1, 2, ..., two
// to a 4-byte page) padded to 64 x 64 with the value 2 by four cores
// {0, i} (a column), 16 rows each, through one CB allocation holding c_0,
// c_1 and c_2. The host prints the result and checks nothing; this checks
// every row: its 32 values, then 32 pads.
void pad_multi_core(DeviceLayer& layer) {
  const uint32_t rows = 64, src_cols = 32, dst_cols = 64, cores_n = 4;
  std::vector<uint16_t> in(rows * src_cols);
  for (uint32_t i = 0; i < in.size(); i++) in[i] = to_bf16(static_cast<float>(i + 1));
  const uint16_t pad = to_bf16(2.0f);
  const uint32_t packed_pad = uint32_t{pad} | uint32_t{pad} << 16;
  uint64_t src_id = upload(layer, in, 4), dst_id = layer.alloc(rows * dst_cols * 2, dram_spec(4), nullptr);
  CoreRangeSet cores = cores_of({{0, 0, cores_n - 1, 0}});
  const uint32_t c_src = src_cols / 2, c_dst = dst_cols / 2;  // 4-byte sticks per row
  ProgramDesc p;
  p.name = "ttmetal_pad_multi_core";
  p.params = {P("src", "global", "u32"), P("dst", "global_mut", "u32")};
  p.cbs = {cb_config(cores, c_dst * 64,
                     {cb_index(0, DataFormat::UInt32, 64), cb_index(1, DataFormat::UInt32, 64),
                      cb_index(2, DataFormat::UInt32, 4)})};
  const std::string d = "pad_multi_core/kernels/";
  std::vector<uint32_t> reader_ct = {rows, 1,  c_src, 4, rows, 1, c_dst, 64, 0, 0,
                                     1,    64, 1,     packed_pad, 64, 0, 0, 1, 64, 0};
  KernelDesc r = dm_kernel("reader", Processor::Riscv0, cores, src(d + "pad_reader_dims_rm_interleaved.cpp"),
                           cat({consts(reader_ct), accessor(layer, dram_spec(4))}));
  KernelDesc w = dm_kernel("writer", Processor::Riscv1, cores, src(d + "pad_writer_dims_rm_interleaved.cpp"),
                           cat({{C(0), C(4), C(64)}, accessor(layer, dram_spec(4))}));
  const uint32_t per_core = rows / cores_n;
  for (uint32_t i = 0; i < cores_n; i++) {
    CoreRangeSet one = one_core(i, 0);
    runtime(r, one, {L("buffer_addr", 0), C(per_core * c_dst), C(c_dst), C(i * per_core * c_src), C(0), C(0), C(0), C(0),
                     C(0), C(0), C(0)});
    runtime(w, one, {L("buffer_addr", 1), C(per_core * c_dst), C(c_dst), C(i * per_core * c_dst)});
  }
  p.kernels = {r, w};
  layer.run(layer.compile(p), {Buf(src_id), Buf(dst_id)}, false);
  auto got = download<uint16_t>(layer, dst_id, rows * dst_cols);
  for (uint32_t m = 0; m < rows; m++)
    for (uint32_t n = 0; n < dst_cols; n++) {
      uint16_t want = n < src_cols ? in[m * src_cols + n] : pad;
      if (got[m * dst_cols + n] != want)
        throw Failure("pad_multi_core: element (" + std::to_string(m) + ", " + std::to_string(n) + ") = " +
                      std::to_string(from_bf16(got[m * dst_cols + n])) + ", want " + std::to_string(from_bf16(want)));
    }
  layer.free(src_id);
  layer.free(dst_id);
  std::printf("  pad_multi_core: pass (64x32 -> 64x64)\n");
}

}  // namespace

namespace zyx_test::ttmetal {

std::vector<Example> multi_core_examples() {
  return {
      {"vecadd_multi_core", vecadd_multi_core},
      {"matmul_multi_core", matmul_multi_core},
      {"matmul_multicore_reuse", matmul_multicore_reuse},
      {"add_2_integers_in_riscv", add_2_integers_in_riscv},
      {"hello_world_compute_kernel", hello_world_compute},
      {"hello_world_datamovement_kernel", hello_world_datamovement},
      {"hello_world_datatypes_kernel", hello_world_datatypes},
      {"shard_data_rm", shard_data_rm},
      {"pad_multi_core", pad_multi_core},
  };
}

}  // namespace zyx_test::ttmetal
