// API coverage tests: small kernels written in these tests exercise each part
// of the emulated kernel API (FPU and SFPU ops, reduce, transpose, typecast,
// formats, semaphores and L1-to-L1 traffic, the kernel cache) and check the
// results against float64 references; plus deadlock detection and errors.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <thread>

#include "harness.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

// Reads tile t of input i (i < compile arg 0) into cb i, for t < ntiles.
const char* kTileReader = R"(
#include "dataflow_api.h"
void kernel_main() {
  constexpr uint32_t inputs = get_compile_time_arg_val(0);
  const uint32_t ntiles = get_arg_val<uint32_t>(inputs);
  for (uint32_t t = 0; t < ntiles; t++) {
    for (uint32_t i = 0; i < inputs; i++) {
      experimental::CircularBuffer cb(i);
      const InterleavedAddrGenFast<true> src = {
          .bank_base_address = get_arg_val<uint32_t>(i), .page_size = cb.get_tile_size(),
          .data_format = get_dataformat(i)};
      cb.reserve_back(1);
      noc_async_read_tile(t, src, cb.get_write_ptr());
      noc_async_read_barrier();
      cb.push_back(1);
    }
  }
}
)";

// Writes ntiles tiles of cb 16 to the buffer named by common arg 0.
const char* kTileWriter = R"(
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  const uint32_t dst_addr = get_common_arg_val<uint32_t>(0);
  const uint32_t ntiles = get_arg_val<uint32_t>(0);
  constexpr uint32_t cb = 16;
  const InterleavedAddrGen<true> dst = {.bank_base_address = dst_addr, .page_size = get_tile_size(cb)};
  for (uint32_t t = 0; t < ntiles; t++) {
    cb_wait_front(cb, 1);
    noc_async_write_tile(t, dst, get_read_ptr(cb));
    noc_async_write_barrier();
    cb_pop_front(cb, 1);
  }
}
)";

uint32_t fmt_bytes(const std::string& f) {
  if (f == "Float32" || f == "Int32" || f == "UInt32") return 4;
  if (f == "UInt8") return 1;
  return 2;
}

// A value of type T at p, raw bytes, and back.
template <typename T>
void store(uint8_t* p, T x) {
  std::memcpy(p, &x, sizeof x);
}
template <typename T>
T load(const uint8_t* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

// Encodes/decodes element values of a format.
std::vector<uint8_t> encode(const std::string& f, const std::vector<double>& v) {
  std::vector<uint8_t> out(v.size() * fmt_bytes(f));
  for (size_t i = 0; i < v.size(); i++) {
    uint8_t* p = &out[i * fmt_bytes(f)];
    if (f == "Float32") store(p, static_cast<float>(v[i]));
    else if (f == "Float16_b") store(p, to_bf16(static_cast<float>(v[i])));
    else if (f == "Int32") store(p, static_cast<int32_t>(v[i]));
    else if (f == "UInt32") store(p, static_cast<uint32_t>(v[i]));
    else if (f == "UInt16") store(p, static_cast<uint16_t>(v[i]));
    else if (f == "UInt8") store(p, static_cast<uint8_t>(v[i]));
    else if (f == "Float16") store(p, static_cast<_Float16>(v[i]));
  }
  return out;
}

std::vector<double> decode(const std::string& f, const std::vector<uint8_t>& b) {
  size_t n = b.size() / fmt_bytes(f);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; i++) {
    const uint8_t* p = &b[i * fmt_bytes(f)];
    if (f == "Float32") out[i] = load<float>(p);
    else if (f == "Float16_b") out[i] = from_bf16(load<uint16_t>(p));
    else if (f == "Int32") out[i] = load<int32_t>(p);
    else if (f == "UInt32") out[i] = load<uint32_t>(p);
    else if (f == "UInt16") out[i] = load<uint16_t>(p);
    else if (f == "UInt8") out[i] = load<uint8_t>(p);
    else if (f == "Float16") out[i] = static_cast<double>(load<_Float16>(p));
  }
  return out;
}

struct TileRun {
  std::vector<std::string> in_formats;
  std::vector<std::vector<double>> inputs;  // each ntiles * 1024 values
  std::string out_format = "Float32";
  uint32_t ntiles = 1;
  std::string compute;  // kernel source
  std::map<std::string, std::string> defines;
  std::vector<uint32_t> compute_args;  // the compute kernel's runtime args; none: {ntiles}
  bool fp32 = true;
};

// Runs reader -> compute -> writer on one core and returns the output values.
std::vector<double> run_tiles(DeviceLayer& layer, const TileRun& r) {
  GroupProgram p;
  p.name = "tile_test";
  uint32_t nin = static_cast<uint32_t>(r.inputs.size());
  std::vector<RunArg> args;
  std::vector<uint64_t> ids;
  for (uint32_t i = 0; i < nin; i++) {
    p.params.push_back(P("in" + std::to_string(i), "global"));
    auto bytes = encode(r.in_formats[i], r.inputs[i]);
    uint64_t id = layer.alloc(bytes.size(), dram_spec(1024 * fmt_bytes(r.in_formats[i])), nullptr);
    layer.write(id, 0, bytes.data(), bytes.size());
    ids.push_back(id);
    args.push_back(Buf(id));
    p.reader.runtime_args.push_back(L("buffer_addr", i));
    p.cbs.push_back(CB(i, r.in_formats[i], 1024 * fmt_bytes(r.in_formats[i]), 2));
  }
  p.params.push_back(P("out", "global_mut"));
  size_t out_bytes = r.ntiles * 1024 * fmt_bytes(r.out_format);
  uint64_t out = layer.alloc(out_bytes, dram_spec(1024 * fmt_bytes(r.out_format)), nullptr);
  args.push_back(Buf(out));
  p.reader.source = kTileReader;
  p.reader.compile_args = {C(nin)};
  p.reader.runtime_args.push_back(C(r.ntiles));
  p.compute.source = r.compute;
  p.compute.defines = r.defines;
  if (r.compute_args.empty()) p.compute.runtime_args = {C(r.ntiles)};
  for (uint32_t a : r.compute_args) p.compute.runtime_args.push_back(C(a));
  p.writer.source = kTileWriter;
  p.writer.common_args = {L("buffer_addr", nin)};
  p.writer.runtime_args = {C(r.ntiles)};
  p.cbs.push_back(CB(16, r.out_format, 1024 * fmt_bytes(r.out_format), 2));
  p.fp32_dest_acc = r.fp32;
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  layer.run(prog, args, false);
  layer.release(prog);
  std::vector<uint8_t> b(out_bytes);
  layer.read(out, 0, b.data(), b.size());
  for (auto id : ids) layer.free(id);
  layer.free(out);
  return decode(r.out_format, b);
}

std::vector<double> randoms(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Values as the given float format holds them.
std::vector<double> quantize(const std::string& f, const std::vector<double>& v) { return decode(f, encode(f, v)); }

const char* kBinaryCompute = R"(
#include "compute_kernel_api/eltwise_binary.h"
#include "compute_kernel_api/tile_move_copy.h"
namespace NAMESPACE {
void MAIN {
  const uint32_t ntiles = get_arg_val<uint32_t>(0);
  binary_op_init_common(tt::CB::c_in0, tt::CB::c_in1, tt::CB::c_out0);
  BINARY_INIT(tt::CB::c_in0, tt::CB::c_in1);
  for (uint32_t t = 0; t < ntiles; t++) {
    cb_wait_front(tt::CB::c_in0, 1);
    cb_wait_front(tt::CB::c_in1, 1);
    acquire_dst(tt::DstMode::Half);
    BINARY_OP(tt::CB::c_in0, tt::CB::c_in1, 0, 0, 3);
    cb_reserve_back(tt::CB::c_out0, 1);
    pack_tile(3, tt::CB::c_out0);
    cb_push_back(tt::CB::c_out0, 1);
    release_dst(tt::DstMode::Half);
    cb_pop_front(tt::CB::c_in0, 1);
    cb_pop_front(tt::CB::c_in1, 1);
  }
}
}
)";

const char* kUnaryCompute = R"(
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/tile_move_copy.h"
void kernel_main() {
  const uint32_t ntiles = get_arg_val<uint32_t>(0);
  init_sfpu(tt::CBIndex::c_0, tt::CBIndex::c_16);
  OP_INIT();
  for (uint32_t t = 0; t < ntiles; t++) {
    cb_wait_front(tt::CBIndex::c_0, 1);
    tile_regs_acquire();
    copy_tile_to_dst_init_short(tt::CBIndex::c_0);
    copy_tile(tt::CBIndex::c_0, 0, 1);
    OP(1);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(tt::CBIndex::c_16, 1);
    pack_tile(1, tt::CBIndex::c_16);
    cb_push_back(tt::CBIndex::c_16, 1);
    tile_regs_release();
    cb_pop_front(tt::CBIndex::c_0, 1);
  }
}
)";

void test_binary(DeviceLayer& layer) {
  struct Case {
    const char *init, *op;
    double (*f)(double, double);
  };
  Case cases[] = {{"add_tiles_init", "add_tiles", [](double a, double b) { return a + b; }},
                  {"sub_tiles_init", "sub_tiles", [](double a, double b) { return a - b; }},
                  {"mul_tiles_init", "mul_tiles", [](double a, double b) { return a * b; }}};
  for (auto& c : cases) {
    for (std::string fmt : {"Float32", "Float16_b", "Float16"}) {
      TileRun r;
      r.in_formats = {fmt, fmt};
      r.inputs = {quantize(fmt, randoms(2048, -4, 4, 1)), quantize(fmt, randoms(2048, -4, 4, 2))};
      r.ntiles = 2;
      r.out_format = fmt;
      r.fp32 = fmt == "Float32";
      r.compute = kBinaryCompute;
      r.defines = {{"BINARY_INIT", c.init}, {"BINARY_OP", c.op}};
      auto got = run_tiles(layer, r);
      std::vector<double> want(got.size());
      for (size_t i = 0; i < want.size(); i++) want[i] = c.f(r.inputs[0][i], r.inputs[1][i]);
      double tol = fmt == "Float32" ? 1e-6 : fmt == "Float16" ? 1e-3 : 8e-3;
      check_close(got, want, tol, tol, std::string(c.op) + " " + fmt);
    }
  }
  // Integer add through the FPU path with Int32 inputs stays exact.
  TileRun r;
  r.in_formats = {"Int32", "Int32"};
  r.inputs = {randoms(1024, -1e8, 1e8, 3), randoms(1024, -1e8, 1e8, 4)};
  for (auto& v : r.inputs)
    for (auto& x : v) x = std::floor(x);
  r.out_format = "Int32";
  r.compute = kBinaryCompute;
  r.defines = {{"BINARY_INIT", "add_tiles_init"}, {"BINARY_OP", "add_tiles"}};
  auto got = run_tiles(layer, r);
  std::vector<double> want(1024);
  for (size_t i = 0; i < 1024; i++) want[i] = r.inputs[0][i] + r.inputs[1][i];
  check_close(got, want, 0, 0, "add_tiles Int32");
}
ZYX_TEST(kernels, test_binary);

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

void test_unary(DeviceLayer& layer) {
  struct Case {
    const char* name;
    double lo, hi;
    double (*f)(double);
    const char* tmpl = "";  // template args for both calls: gelu's default is its approximation
  };
  Case cases[] = {
      {"exp", -4, 4, [](double x) { return std::exp(x); }},
      {"log", 0.01, 10, [](double x) { return std::log(x); }},
      {"sqrt", 0, 10, [](double x) { return std::sqrt(x); }},
      {"recip", 0.1, 10, [](double x) { return 1 / x; }},
      {"relu", -2, 2, [](double x) { return x > 0 ? x : 0; }},
      {"sigmoid", -6, 6, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"gelu", -3, 3, gelu, "<false>"},
      {"abs", -2, 2, [](double x) { return std::fabs(x); }},
      {"negative", -2, 2, [](double x) { return -x; }},
  };
  for (auto& c : cases) {
    for (std::string fmt : {"Float32", "Float16_b"}) {
      TileRun r;
      r.in_formats = {fmt};
      r.inputs = {quantize(fmt, randoms(1024, c.lo, c.hi, 7))};
      r.out_format = fmt;
      r.fp32 = fmt == "Float32";
      r.compute = kUnaryCompute;
      r.defines = {{"OP_INIT", std::string(c.name) + "_tile_init" + c.tmpl}, {"OP", std::string(c.name) + "_tile" + c.tmpl}};
      auto got = run_tiles(layer, r);
      std::vector<double> want(got.size());
      for (size_t i = 0; i < want.size(); i++) want[i] = c.f(r.inputs[0][i]);
      double tol = fmt == "Float32" ? 2e-6 : 1e-2;
      check_close(got, want, tol, tol, std::string(c.name) + " " + fmt);
    }
  }
}
ZYX_TEST(kernels, test_unary);

const char* kReduceCompute = R"(
#include "compute_kernel_api/reduce.h"
namespace NAMESPACE {
void MAIN {
  const uint32_t ntiles = get_arg_val<uint32_t>(0);
  reduce_init<REDUCE_OP, REDUCE_DIM>(tt::CBIndex::c_0, tt::CBIndex::c_1, tt::CBIndex::c_16);
  cb_wait_front(tt::CBIndex::c_1, 1);
  tile_regs_acquire();
  for (uint32_t t = 0; t < ntiles; t++) {
    cb_wait_front(tt::CBIndex::c_0, 1);
    reduce_tile(tt::CBIndex::c_0, tt::CBIndex::c_1, 0, 0, 0);
    cb_pop_front(tt::CBIndex::c_0, 1);
  }
  reduce_uninit();
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(tt::CBIndex::c_16, 1);
  pack_tile(0, tt::CBIndex::c_16);
  cb_push_back(tt::CBIndex::c_16, 1);
  tile_regs_release();
}
}
)";

// A reader that fills the scaler tile itself (through an L1 pointer) and
// streams ntiles tiles of input 0.
const char* kReduceReader = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t src = get_arg_val<uint32_t>(0);
  const uint32_t ntiles = get_arg_val<uint32_t>(1);
  const uint32_t scaler_bits = get_arg_val<uint32_t>(2);
  cb_reserve_back(1, 1);
  volatile tt_l1_ptr uint32_t* s = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(1));
  for (uint32_t i = 0; i < 1024; i++) s[i] = scaler_bits;
  cb_push_back(1, 1);
  const InterleavedAddrGen<true> in = {.bank_base_address = src, .page_size = 4096};
  for (uint32_t t = 0; t < ntiles; t++) {
    cb_reserve_back(0, 1);
    noc_async_read(get_noc_addr(t, in), get_write_ptr(0), 4096);
    noc_async_read_barrier();
    cb_push_back(0, 1);
  }
}
)";

void test_reduce(DeviceLayer& layer) {
  const uint32_t ntiles = 3;
  auto in = quantize("Float32", randoms(ntiles * 1024, -3, 3, 11));
  for (std::string op : {"SUM", "MAX"}) {
    for (std::string dim : {"REDUCE_ROW", "REDUCE_COL", "REDUCE_SCALAR"}) {
      float scaler = op == "SUM" ? 0.5f : 1.0f;
      GroupProgram p;
      p.name = "reduce";
      p.params = {P("in", "global"), P("out", "global_mut")};
      p.reader.source = kReduceReader;
      uint32_t sbits;
      std::memcpy(&sbits, &scaler, 4);
      p.reader.runtime_args = {L("buffer_addr", 0), C(ntiles), C(sbits)};
      p.compute.source = kReduceCompute;
      p.compute.defines = {{"REDUCE_OP", "PoolType::" + op}, {"REDUCE_DIM", "ReduceDim::" + dim}};
      p.compute.runtime_args = {C(ntiles)};
      p.writer.source = kTileWriter;
      p.writer.common_args = {L("buffer_addr", 1)};
      p.writer.runtime_args = {C(1)};
      p.cbs = {CB(0, "Float32", 4096, 2), CB(1, "Float32", 4096, 1), CB(16, "Float32", 4096, 1)};
      p.fp32_dest_acc = true;
      auto bytes = encode("Float32", in);
      uint64_t src = layer.alloc(bytes.size(), dram_spec(4096), nullptr);
      layer.write(src, 0, bytes.data(), bytes.size());
      uint64_t dst = layer.alloc(4096, dram_spec(4096), nullptr);
      uint64_t prog = layer.compile(one_group_program(p, 1, 1));
      layer.run(prog, {Buf(src), Buf(dst)}, false);
      std::vector<uint8_t> ob(4096);
      layer.read(dst, 0, ob.data(), ob.size());
      auto got = decode("Float32", ob);
      std::vector<double> want(1024, 0.0);
      bool is_max = op == "MAX";
      auto at = [&](uint32_t t, int r, int c) { return in[t * 1024 + face_index(r, c)]; };
      auto fold = [&](double acc, double x) { return is_max ? std::max(acc, x) : acc + x; };
      double init = is_max ? -INFINITY : 0;
      if (dim == "REDUCE_ROW") {
        for (int r = 0; r < 32; r++) {
          double acc = init;
          for (uint32_t t = 0; t < ntiles; t++)
            for (int c = 0; c < 32; c++) acc = fold(acc, at(t, r, c));
          want[face_index(r, 0)] = acc * scaler;
        }
      } else if (dim == "REDUCE_COL") {
        for (int c = 0; c < 32; c++) {
          double acc = init;
          for (uint32_t t = 0; t < ntiles; t++)
            for (int r = 0; r < 32; r++) acc = fold(acc, at(t, r, c));
          want[face_index(0, c)] = acc * scaler;
        }
      } else {
        double acc = init;
        for (uint32_t t = 0; t < ntiles; t++)
          for (int i = 0; i < 1024; i++) acc = fold(acc, in[t * 1024 + i]);
        want[0] = acc * scaler;
      }
      check_close(got, want, 1e-4, 1e-5, "reduce " + op + " " + dim);
      layer.release(prog);
      layer.free(src);
      layer.free(dst);
    }
  }
}
ZYX_TEST(kernels, test_reduce);

const char* kTransposeCompute = R"(
#include "compute_kernel_api/transpose_wh.h"
namespace NAMESPACE {
void MAIN {
  transpose_wh_init(tt::CBIndex::c_0, tt::CBIndex::c_16);
  cb_wait_front(tt::CBIndex::c_0, 1);
  tile_regs_acquire();
  transpose_wh_tile(tt::CBIndex::c_0, 0, 0);
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(tt::CBIndex::c_16, 1);
  pack_tile(0, tt::CBIndex::c_16);
  cb_push_back(tt::CBIndex::c_16, 1);
  tile_regs_release();
  cb_pop_front(tt::CBIndex::c_0, 1);
}
}
)";

void test_transpose(DeviceLayer& layer) {
  TileRun r;
  r.in_formats = {"Float16_b"};
  r.inputs = {quantize("Float16_b", randoms(1024, -5, 5, 21))};
  r.out_format = "Float16_b";
  r.fp32 = false;
  r.compute = kTransposeCompute;
  auto got = run_tiles(layer, r);
  std::vector<double> want(1024);
  for (int rr = 0; rr < 32; rr++)
    for (int c = 0; c < 32; c++) want[face_index(c, rr)] = r.inputs[0][face_index(rr, c)];
  check_close(got, want, 0, 0, "transpose_wh_tile");
}
ZYX_TEST(kernels, test_transpose);

// kernels/copy_op.cpp on one tile: copy_tile, then OP (a typecast or
// nothing), then pack_tile in the output's format.
TileRun copy_run(const std::string& op = "(void)0") {
  TileRun r;
  r.compute = shared_kernel("copy_op");
  r.defines = {{"INIT", "copy_tile_init(0)"}, {"OP", op}};
  r.compute_args = {0, 0, 0, 0};
  return r;
}

void test_formats(DeviceLayer& layer) {
  // Identity copies through DST in every format.
  struct Case {
    std::string fmt;
    double lo, hi;
    bool integer;
  };
  Case cases[] = {{"Float32", -1e6, 1e6, false}, {"Float16_b", -100, 100, false}, {"Float16", -100, 100, false},
                  {"Int32", -2e9, 2e9, true},   {"UInt32", 0, 4e9, true},       {"UInt16", 0, 65535, true},
                  {"UInt8", 0, 255, true}};
  for (auto& c : cases) {
    TileRun r = copy_run();
    r.in_formats = {c.fmt};
    auto v = randoms(1024, c.lo, c.hi, 31);
    if (c.integer)
      for (auto& x : v) x = std::floor(x);
    r.inputs = {quantize(c.fmt, v)};
    r.out_format = c.fmt;
    r.fp32 = c.fmt == "Float32" || c.integer;
    auto got = run_tiles(layer, r);
    check_close(got, r.inputs[0], 0, 0, "copy_tile/pack_tile " + c.fmt);
  }
  // Pack from fp32 DST to bf16 rounds to nearest even.
  {
    TileRun r = copy_run();
    r.in_formats = {"Float32"};
    std::vector<double> v(1024, 0.0);
    v[0] = 1.0 + std::ldexp(1.0, -8);             // tie: rounds down to 1.0 (even)
    v[1] = 1.0 + 3 * std::ldexp(1.0, -8);         // tie: rounds up to 1 + 2^-6
    v[2] = 1.0 + std::ldexp(1.0, -8) + 1e-6;      // above the tie: rounds up
    v[3] = -(1.0 + 3 * std::ldexp(1.0, -8));
    r.inputs = {v};
    r.out_format = "Float16_b";
    auto got = run_tiles(layer, r);
    CHECK_EQ(got[0], 1.0);
    CHECK_EQ(got[1], 1.0 + std::ldexp(1.0, -6));
    CHECK_EQ(got[2], 1.0 + std::ldexp(1.0, -7));
    CHECK_EQ(got[3], -(1.0 + std::ldexp(1.0, -6)));
  }
  // Typecasts.
  struct Cast {
    std::string in, out;
    double lo, hi;
  };
  Cast casts[] = {{"Float32", "Int32", -1e5, 1e5},   {"Int32", "Float32", -1e6, 1e6},
                  {"Float16_b", "UInt16", 0, 60000}, {"UInt16", "Float16_b", 0, 65535},
                  {"Float32", "UInt8", -10, 300},     {"Float32", "Float16_b", -10, 10}};
  for (auto& c : casts) {
    TileRun r = copy_run("typecast_tile_init(); typecast_tile<(uint32_t)DataFormat::" + c.in +
                         ", (uint32_t)DataFormat::" + c.out + ">(0)");
    r.in_formats = {c.in};
    auto v = randoms(1024, c.lo, c.hi, 41);
    if (c.in == "Int32" || c.in == "UInt16")
      for (auto& x : v) x = std::floor(x);
    r.inputs = {quantize(c.in, v)};
    r.out_format = c.out;
    r.fp32 = true;
    auto got = run_tiles(layer, r);
    std::vector<double> want(1024);
    for (size_t i = 0; i < 1024; i++) {
      double x = r.inputs[0][i];
      if (c.out == "Int32") want[i] = std::nearbyint(x);
      else if (c.out == "UInt8") want[i] = std::min(255.0, std::max(0.0, std::nearbyint(x)));
      else if (c.out == "UInt16") want[i] = std::min(65535.0, std::max(0.0, std::nearbyint(x)));
      else want[i] = decode(c.out, encode(c.out, {x}))[0];
    }
    check_close(got, want, 0, 0, "typecast " + c.in + " -> " + c.out);
  }
}
ZYX_TEST(kernels, test_formats);

// Core (0, 0) sends a tile of data to every other core of its row through
// their L1 and a semaphore; each receiver writes it, plus its column, to DRAM.
const char* kSemSender = R"(
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  const uint32_t out = get_arg_val<uint32_t>(0);
  const uint32_t col = get_arg_val<uint32_t>(1);
  const uint32_t cols = get_arg_val<uint32_t>(2);
  const uint32_t buf = get_write_ptr(0);
  volatile tt_l1_ptr uint32_t* sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(0));
  volatile tt_l1_ptr uint32_t* data = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(buf);
  if (col == 0) {
    for (uint32_t i = 0; i < 256; i++) data[i] = 1000 + i;
    for (uint32_t c = 1; c < cols; c++) {
      // Wait until the receiver says it is ready (it increments our semaphore).
      noc_async_write(buf, get_noc_addr(my_x[0] + c, my_y[0], buf), 1024);
      noc_async_write_barrier();
      noc_semaphore_inc(get_noc_addr(my_x[0] + c, my_y[0], get_semaphore(0)), 1);
    }
    noc_semaphore_wait(sem, cols - 1);
  } else {
    noc_semaphore_wait(sem, 1);
    for (uint32_t i = 0; i < 256; i++) data[i] += col;
    const InterleavedAddrGen<true> o = {.bank_base_address = out, .page_size = 1024};
    noc_async_write(buf, o.get_noc_addr(col - 1), 1024);
    noc_async_write_barrier();
    noc_semaphore_inc(get_noc_addr(my_x[0] - col, my_y[0], get_semaphore(0)), 1);
  }
}
)";

void test_semaphores(DeviceLayer& layer) {
  const uint32_t cols = 8;
  GroupProgram p;
  p.name = "semaphores";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kSemSender;
  p.reader.runtime_args = {L("buffer_addr", 0), L("core_col"), L("num_cores")};
  p.compute.source = "void kernel_main() {}";
  p.writer.source = "void kernel_main() {}";
  p.cbs = {CB(0, "UInt32", 1024, 1)};
  uint64_t out = layer.alloc((cols - 1) * 1024, dram_spec(1024), nullptr);
  uint64_t prog = layer.compile(one_group_program(p, 1, cols));
  // Run it several times: semaphores start at zero every run.
  for (int rep = 0; rep < 3; rep++) {
    layer.run(prog, {Buf(out)}, false);
    auto got = download<uint32_t>(layer, out, (cols - 1) * 256);
    for (uint32_t c = 1; c < cols; c++)
      for (uint32_t i = 0; i < 256; i++) CHECK_EQ(got[(c - 1) * 256 + i], 1000 + i + c);
  }
  layer.release(prog);
  layer.free(out);
}
ZYX_TEST(kernels, test_semaphores);

// Copies common args 0 and 1 to page SLOT of the buffer named by runtime arg 0.
const char* kCommonArgsEcho = R"(
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  const uint32_t out = get_arg_val<uint32_t>(0);
  const uint32_t buf = get_write_ptr(SLOT);
  volatile tt_l1_ptr uint32_t* data = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(buf);
  data[0] = get_common_arg_val<uint32_t>(0);
  data[1] = get_common_arg_val<uint32_t>(1);
  const InterleavedAddrGen<true> o = {.bank_base_address = out, .page_size = 64};
  noc_async_write(buf, o.get_noc_addr(SLOT), 64);
  noc_async_write_barrier();
}
)";

// Each section reads its own common args, as each kernel does on a card.
void test_common_args(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "common_args";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kCommonArgsEcho;
  p.reader.defines = {{"SLOT", "0"}};
  p.reader.runtime_args = {L("buffer_addr", 0)};
  p.reader.common_args = {C(11), C(12)};
  p.compute.source = "void kernel_main() {}";
  p.writer.source = kCommonArgsEcho;
  p.writer.defines = {{"SLOT", "1"}};
  p.writer.runtime_args = {L("buffer_addr", 0)};
  p.writer.common_args = {C(21), C(22)};
  p.cbs = {CB(0, "UInt32", 64, 1), CB(1, "UInt32", 64, 1)};
  uint64_t out = layer.alloc(2 * 64, dram_spec(64), nullptr);
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  layer.run(prog, {Buf(out)}, false);
  auto got = download<uint32_t>(layer, out, 2 * 16);
  CHECK_EQ(got[0], 11u);
  CHECK_EQ(got[1], 12u);
  CHECK_EQ(got[16], 21u);
  CHECK_EQ(got[17], 22u);
  layer.release(prog);
  layer.free(out);
}
ZYX_TEST(kernels, test_common_args);

// A program's name is free text: a trailing backslash or a newline in it must
// not reach the generated kernel source.
void test_program_name(DeviceLayer& layer) {
  for (std::string name : {"ends in a backslash \\", "two\n#error lines"}) {
    GroupProgram p;
    p.name = name;
    // A source of this run only, so that the kernels are built, not cached.
    std::string body = "void kernel_main() {} // " + std::to_string(getpid()) + " " + name.substr(0, 3) + "\n";
    p.reader.source = p.compute.source = p.writer.source = body;
    uint64_t prog = layer.compile(one_group_program(p, 1, 1));
    layer.run(prog, {}, false);
    layer.release(prog);
  }
}
ZYX_TEST(kernels, test_program_name);

void test_cache(const std::string& parent) {
  std::string cache = parent + "/cache-test-" + std::to_string(getpid());
  auto layer = make_emu_layer("n150", 0, cache);
  GroupProgram p;
  p.name = "cache";
  p.reader.source = "void kernel_main() { (void)get_compile_time_arg_val(0); }";
  p.reader.compile_args = {C(7)};
  p.compute.source = "void kernel_main() {}";
  p.writer.source = "void kernel_main() {}";
  layer->compile(one_group_program(p, 1, 1));
  CHECK_EQ(count_objects(cache), size_t(3));
  // Same program again, in a fresh layer: served from disk.
  auto layer2 = make_emu_layer("n150", 0, cache);
  auto t0 = std::chrono::steady_clock::now();
  uint64_t id = layer2->compile(one_group_program(p, 1, 1));
  auto warm = std::chrono::steady_clock::now() - t0;
  CHECK_EQ(count_objects(cache), size_t(3));
  CHECK(warm < std::chrono::milliseconds(500));
  layer2->run(id, {}, false);
  // A different compile arg or define is a different object.
  p.reader.compile_args = {C(8)};
  layer2->compile(one_group_program(p, 1, 1));
  CHECK_EQ(count_objects(cache), size_t(4));
  p.reader.defines["X"] = "1";
  layer2->compile(one_group_program(p, 1, 1));
  CHECK_EQ(count_objects(cache), size_t(5));
  remove_tree(cache);
}
ZYX_TEST(kernels, test_cache);

}  // namespace

static void test_deadlock(const std::string& cache) {
  setenv("ZYX_EMU_TIMEOUT_MS", "300", 1);
  auto layer = make_emu_layer("n150", 0, cache);
  GroupProgram p;
  p.name = "deadlock";
  p.reader.source = "void kernel_main() {}";
  p.compute.source = R"(
#include "api/compute/common.h"
void kernel_main() { cb_wait_front(tt::CBIndex::c_0, 1); }
)";
  p.writer.source = R"(
void kernel_main() { cb_wait_front(16, 1); }
)";
  p.cbs = {CB(0, "Float16_b", 2048, 2), CB(16, "Float16_b", 2048, 2)};
  uint64_t prog = layer->compile(one_group_program(p, 2, 3));
  auto t0 = std::chrono::steady_clock::now();
  std::string msg = expect_error("deadlock", [&] { layer->run(prog, {}, false); });
  auto took = std::chrono::steady_clock::now() - t0;
  // Every blocked kernel of every core is named.
  for (uint32_t r = 0; r < 2; r++)
    for (uint32_t c = 0; c < 3; c++) {
      std::string core = "core (" + std::to_string(r) + "," + std::to_string(c) + ") ";
      CHECK(msg.find(core + "compute (compute) waiting on cb 0") != std::string::npos);
      CHECK(msg.find(core + "writer (riscv_1) waiting on cb 16") != std::string::npos);
    }
  CHECK(took < std::chrono::seconds(5));
  // A semaphore nobody sets is a deadlock too.
  GroupProgram s = p;
  s.compute.source = "void kernel_main() {}";
  s.writer.source = "void kernel_main() {}";
  s.reader.source = R"(
void kernel_main() { noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(2)), 5); }
)";
  uint64_t sp = layer->compile(one_group_program(s, 1, 1));
  msg = expect_error("deadlock", [&] { layer->run(sp, {}, false); });
  CHECK(msg.find("core (0,0) reader (riscv_0) waiting on the L1 word") != std::string::npos);
  // The layer still works after a deadlock.
  GroupProgram ok = p;
  ok.compute.source = "void kernel_main() {}";
  ok.writer.source = "void kernel_main() {}";
  layer->run(layer->compile(one_group_program(ok, 8, 8)), {}, false);
  unsetenv("ZYX_EMU_TIMEOUT_MS");
}
ZYX_TEST(deadlock, test_deadlock);

namespace {

// Core 0 waits on a semaphore that core 1 sets, so both cores hold stacks at once.
const char* kWaitForNeighbour = R"(
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  if (get_arg_val<uint32_t>(0) == 0)
    noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), 1);
  else
    noc_semaphore_inc(get_noc_addr(my_x[0] - 1, my_y[0], get_semaphore(0)), 1);
}
)";

// A run that cannot map kernel stacks or start worker threads fails with an
// error and leaves the layer usable; it must not end the process. Runs in a
// child process whose address space is capped just above what it uses.
void test_out_of_address_space(const std::string& cache) {
  in_child("address-space", [&] {
    setenv("ZYX_EMU_THREADS", "2", 1);
    auto layer = make_emu_layer("n150", 0, cache);
    GroupProgram p;
    p.name = "address_space";
    p.reader.source = kWaitForNeighbour;
    p.reader.runtime_args = {L("core_col")};
    p.compute.source = "void kernel_main() {}";
    p.writer.source = "void kernel_main() {}";
    uint64_t prog = layer->compile(one_group_program(p, 1, 2));
    GroupProgram idle = p;
    idle.reader.source = "void kernel_main() {}";
    layer->run(layer->compile(one_group_program(idle, 1, 1)), {}, false);  // maps L1 and one core's stacks
    rlimit old{};
    getrlimit(RLIMIT_AS, &old);
    long pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    CHECK(pages > 0);
    rlimit cap = old;
    cap.rlim_cur = static_cast<rlim_t>(pages) * sysconf(_SC_PAGESIZE) + (512 << 10);
    CHECK(setrlimit(RLIMIT_AS, &cap) == 0);
    bool failed = false;
    try {
      layer->run(prog, {}, false);
    } catch (const Error&) {
      failed = true;
    }
    CHECK(setrlimit(RLIMIT_AS, &old) == 0);
    CHECK(failed);
    layer->run(prog, {}, false);  // room again: the same run works
  });
}

}  // namespace

static void test_errors(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  GroupProgram p;
  p.name = "errors";
  p.params = {P("x", "global"), P("n", "variable", "u32")};
  p.reader.source = "void kernel_main() { (void)get_arg_val<uint32_t>(0); }";
  p.reader.runtime_args = {L("buffer_addr", 0)};
  p.compute.source = "void kernel_main() {}";
  p.writer.source = "void kernel_main() {}";
  p.cbs = {CB(0, "Float32", 4096, 2)};
  uint64_t prog = layer->compile(one_group_program(p, 8, 8));
  uint64_t x = layer->alloc(4096, dram_spec(4096), nullptr);
  // Grid and args.
  expect_error("invalid_argument", [&] { checked_compile(*layer, one_group_program(p, 9, 1)); });
  expect_error("invalid_argument", [&] { checked_compile(*layer, one_group_program(p, 0, 1)); });
  expect_error("invalid_argument", [&] { layer->run(prog, {Buf(x)}, false); });
  expect_error("invalid_argument", [&] { layer->run(prog, {Val(1), Val(1)}, false); });
  expect_error("unknown_buffer", [&] { layer->run(prog, {Buf(999), Val(1)}, false); });
  expect_error("unknown_program", [&] { layer->run(12345, {}, false); });
  uint64_t ns = layer->run(prog, {Buf(x), Val(1)}, true);
  CHECK(ns > 0);
  // Layouts that name the wrong kind of param.
  GroupProgram bad = p;
  bad.reader.runtime_args = {L("buffer_addr", 1)};
  expect_error("invalid_argument", [&] { checked_compile(*layer, one_group_program(bad, 1, 1)); });
  bad.reader.runtime_args = {L("param", 0)};
  expect_error("invalid_argument", [&] { checked_compile(*layer, one_group_program(bad, 1, 1)); });
  // (An unknown arg kind or data format never reaches a layer: the request
  // parser refuses the name: cpp/tests/server_test.cpp, "arg kind unknown".)
  // Circular buffers that do not fit in L1, or repeat an index.
  bad = p;
  bad.cbs = {CB(0, "Float32", 4096, 400)};
  expect_error("invalid_argument", [&] { checked_compile(*layer, one_group_program(bad, 1, 1)); });
  bad.cbs = {CB(0, "Float32", 4096, 2), CB(0, "Float32", 4096, 2)};
  expect_error("invalid_argument", [&] { checked_compile(*layer, one_group_program(bad, 1, 1)); });
  // A compile error carries the compiler's diagnostics.
  bad = p;
  bad.compute.source = "void kernel_main() { this_is_not_declared(); }";
  std::string msg = expect_error("compile_error", [&] { layer->compile(one_group_program(bad, 1, 1)); });
  CHECK(msg.find("this_is_not_declared") != std::string::npos);
  CHECK(msg.find("compute") != std::string::npos);
  // Kernel misuse is a run_error naming the core and section.
  bad = p;
  bad.writer.source = "void kernel_main() { cb_pop_front(0, 1); }";
  msg = expect_error("run_error", [&] { layer->run(layer->compile(one_group_program(bad, 1, 2)), {Buf(x), Val(1)}, false); });
  CHECK(msg.find("writer (riscv_1)") != std::string::npos);
  CHECK(msg.find("cb_pop_front") != std::string::npos);
  bad.writer.source = "void kernel_main() { cb_wait_front(5, 1); }";
  msg = expect_error("run_error", [&] { layer->run(layer->compile(one_group_program(bad, 1, 1)), {Buf(x), Val(1)}, false); });
  CHECK(msg.find("not configured") != std::string::npos);
  bad.writer.source = "void kernel_main() { noc_async_read(get_noc_addr_from_bank_id<true>(0, 0), 0x7fffff, 64); }";
  msg = expect_error("run_error", [&] { layer->run(layer->compile(one_group_program(bad, 1, 1)), {Buf(x), Val(1)}, false); });
  CHECK(msg.find("outside") != std::string::npos);
  // A negative arg index (an index past the args the host set reads 0 with
  // a warning: emu_dataflow_compat).
  bad.writer.source = "void kernel_main() { (void)get_arg_val<uint32_t>(-3); }";
  msg = expect_error("run_error", [&] { layer->run(layer->compile(one_group_program(bad, 1, 1)), {Buf(x), Val(1)}, false); });
  CHECK(msg.find("get_arg_val(-3)") != std::string::npos);
  // Compute misuse: a DST index past the register file.
  bad = p;
  bad.fp32_dest_acc = true;
  bad.compute.source = R"(
#include "compute_kernel_api/tile_move_copy.h"
namespace NAMESPACE { void MAIN { tile_regs_acquire(); cb_wait_front(0, 1); copy_tile(0, 0, 8); } }
)";
  bad.reader.source = "void kernel_main() { cb_reserve_back(0, 1); cb_push_back(0, 1); }";
  bad.dst_full_sync = true;
  msg = expect_error("run_error", [&] { layer->run(layer->compile(one_group_program(bad, 1, 1)), {Buf(x), Val(1)}, false); });
  CHECK(msg.find("DST holds 8 fp32 tiles in full-sync mode") != std::string::npos);
  // In the default half-sync mode math has half of DST: 4 fp32 or 8
  // 16-bit tiles; full sync doubles it.
  for (auto [fp32, full, index, ok] : {std::tuple{true, false, 4, false}, std::tuple{true, false, 3, true},
                                       std::tuple{false, false, 8, false}, std::tuple{false, false, 7, true},
                                       std::tuple{false, true, 15, true}, std::tuple{false, true, 16, false}}) {
    bad.fp32_dest_acc = fp32;
    bad.dst_full_sync = full;
    bad.compute.source = "#include \"compute_kernel_api/tile_move_copy.h\"\nnamespace NAMESPACE { void MAIN { "
                         "tile_regs_acquire(); cb_wait_front(0, 1); copy_tile(0, 0, " +
                         std::to_string(index) + "); cb_pop_front(0, 1); tile_regs_commit(); tile_regs_wait(); tile_regs_release(); } }";
    uint64_t prog2 = layer->compile(one_group_program(bad, 1, 1));
    if (ok) {
      layer->run(prog2, {Buf(x), Val(1)}, false);
    } else {
      msg = expect_error("run_error", [&] { layer->run(prog2, {Buf(x), Val(1)}, false); });
      CHECK(msg.find("DST index " + std::to_string(index) + " is out of range") != std::string::npos);
      CHECK(msg.find(full ? "full-sync" : "half-sync") != std::string::npos);
    }
    layer->release(prog2);
  }
  layer->release(prog);
  expect_error("unknown_program", [&] { layer->release(prog); });
  test_out_of_address_space(cache);
}
ZYX_TEST(errors, test_errors);
