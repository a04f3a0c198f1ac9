// Harness of the compute tests: one core, a reader that loads every tile of
// each input into its own circular buffer (cb i), the compute kernel under
// test, and a writer that stores the tiles of cb 16. Inputs and outputs are
// raw tile bytes in the CB's format.
#pragma once

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "harness.hpp"

namespace zyx_ctest {

using zyx_test::Buf;
using zyx_test::C;
using zyx_test::CB;
using zyx_test::L;
using zyx_test::P;

inline uint32_t tile_bytes(const std::string& f) {
  if (f == "Float32" || f == "Int32" || f == "UInt32") return 4096;
  if (f == "UInt8" || f == "Int8") return 1024;
  if (f == "Bfp8_b") return 1088;
  if (f == "Bfp4_b") return 576;
  return 2048;
}

inline const char* kReader = R"(
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  constexpr uint32_t inputs = get_compile_time_arg_val(0);
  for (uint32_t i = 0; i < inputs; i++) {
    const uint32_t addr = get_arg_val<uint32_t>(3 * i), n = get_arg_val<uint32_t>(3 * i + 1);
    const uint32_t page = get_arg_val<uint32_t>(3 * i + 2);
    const InterleavedAddrGen<true> src = {.bank_base_address = addr, .page_size = page};
    for (uint32_t t = 0; t < n; t++) {
      cb_reserve_back(i, 1);
      noc_async_read(get_noc_addr(t, src), get_write_ptr(i), page);
      noc_async_read_barrier();
      cb_push_back(i, 1);
    }
  }
}
)";

inline const char* kWriter = R"(
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  const uint32_t addr = get_arg_val<uint32_t>(0), n = get_arg_val<uint32_t>(1), page = get_arg_val<uint32_t>(2);
  const InterleavedAddrGen<true> dst = {.bank_base_address = addr, .page_size = page};
  for (uint32_t t = 0; t < n; t++) {
    cb_wait_front(16, 1);
    noc_async_write(get_read_ptr(16), get_noc_addr(t, dst), page);
    noc_async_write_barrier();
    cb_pop_front(16, 1);
  }
}
)";

// A compute kernel on the two tiles of cb 0: BODY (a define) leaves its
// results in DST tiles OUT0 and OUT1, packed to cb 16 in that order.
inline const char* kTwoTileKernel = R"(
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/mask.h"
#include "api/compute/welford.h"
#include "api/compute/reduce_custom.h"
#include "api/compute/transpose.h"
#include "api/compute/transpose_wh_dest.h"
#include "api/compute/copy_dest_values.h"
#include "api/compute/cb_api.h"
void kernel_main() {
  init_sfpu(0, 16);
  cb_wait_front(0, 2);
  tile_regs_acquire();
  BODY;
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 2);
  pack_tile(OUT0, 16);
  pack_tile(OUT1, 16);
  cb_push_back(16, 2);
  tile_regs_release();
}
)";

// kernels/copy_op.cpp: OP on the tiles of cbs 0 .. NIN-1 copied to DST,
// DST 0 packed to cb 16 (runtime args op, p0, p1, p2).
inline const std::string& copy_op_kernel() {
  static const std::string source = zyx_test::shared_kernel("copy_op");
  return source;
}
// The OP of copy_op that runs the case of `cases` ("case 0: ...; break; case
// 1: ...") its runtime arg op names: one build serves a whole table of ops.
inline std::string op_switch(const std::string& cases) { return "switch (op) { " + cases + " default: break; }"; }

struct Run {
  std::vector<std::string> formats;          // per input
  std::vector<std::vector<uint8_t>> inputs;  // raw bytes, whole tiles
  std::string out_format = "Float32";
  uint32_t out_tiles = 1;
  std::string compute;
  std::map<std::string, std::string> defines;
  std::vector<uint32_t> args;  // compute runtime args
  bool fp32 = true;
  std::string fidelity = "HiFi4";
  bool bfp8_precise = false;
  std::vector<uint32_t> unpack_to_dest_fp32;  // CB indices
  bool dst_full_sync = false;                 // all of DST for math (else half)
  bool math_approx = false;                   // the compute config's math_approx_mode
};

// copy_op on one input tile in `format` (the output's format too): `op`,
// statements on DST 0, runs after the copy with runtime args {0, p0, p1, 0}.
inline Run one_tile_op(const std::string& format, std::vector<uint8_t> in, const std::string& op, uint32_t p0 = 0,
                       uint32_t p1 = 0) {
  Run r;
  r.formats = {format};
  r.inputs = {std::move(in)};
  r.out_format = format;
  r.compute = copy_op_kernel();
  r.defines = {{"NIN", "1"}, {"OP", op}};
  r.args = {0, p0, p1, 0};
  return r;
}

inline std::vector<uint8_t> run(zyx::DeviceLayer& layer, const Run& r) {
  zyx_test::GroupProgram p;
  p.name = "compute_test";
  std::vector<zyx::RunArg> args;
  std::vector<uint64_t> ids;
  uint32_t nin = static_cast<uint32_t>(r.inputs.size());
  for (uint32_t i = 0; i < nin; i++) {
    uint32_t tb = tile_bytes(r.formats[i]);
    uint32_t n = static_cast<uint32_t>(r.inputs[i].size() / tb);
    p.params.push_back(P("in" + std::to_string(i), "global"));
    uint64_t id = layer.alloc(r.inputs[i].size(), zyx_test::dram_spec(tb), nullptr);
    layer.write(id, 0, r.inputs[i].data(), r.inputs[i].size());
    ids.push_back(id);
    args.push_back(Buf(id));
    p.reader.runtime_args.push_back(L("buffer_addr", i));
    p.reader.runtime_args.push_back(C(n));
    p.reader.runtime_args.push_back(C(tb));
    p.cbs.push_back(CB(i, r.formats[i], tb, n ? n : 1));
  }
  uint32_t ob = tile_bytes(r.out_format);
  p.params.push_back(P("out", "global_mut"));
  uint64_t out = layer.alloc(uint64_t(ob) * r.out_tiles, zyx_test::dram_spec(ob), nullptr);
  args.push_back(Buf(out));
  p.reader.source = kReader;
  p.reader.compile_args = {C(nin)};
  p.compute.source = r.compute;
  p.compute.defines = r.defines;
  for (uint32_t a : r.args) p.compute.runtime_args.push_back(C(a));
  p.writer.source = kWriter;
  p.writer.runtime_args = {L("buffer_addr", nin), C(r.out_tiles), C(ob)};
  p.cbs.push_back(CB(16, r.out_format, ob, r.out_tiles));
  p.fp32_dest_acc = r.fp32;
  p.math_fidelity = r.fidelity;
  p.bfp8_pack_precise = r.bfp8_precise;
  p.unpack_to_dest_fp32 = r.unpack_to_dest_fp32;
  p.dst_full_sync = r.dst_full_sync;
  p.math_approx_mode = r.math_approx;
  uint64_t prog = layer.compile(zyx_test::one_group_program(p, 1, 1));
  layer.run(prog, args, false);
  layer.release(prog);
  std::vector<uint8_t> b(uint64_t(ob) * r.out_tiles);
  layer.read(out, 0, b.data(), b.size());
  for (auto id : ids) layer.free(id);
  layer.free(out);
  return b;
}

// Runs `kernel` (kTwoTileKernel unless given) on the two tiles `in` (raw
// bytes in `format`, the output's format too) with BODY defined as `body`:
// kTwoTileKernel's body leaves its results in DST tiles out0 and out1
// (OUT0, OUT1), which come back in that order; another kernel packs its two
// output tiles as it says. full_sync gives math all of DST (a body that uses
// more than half of it needs it, as on the card).
inline std::vector<uint8_t> run_two_tiles(zyx::DeviceLayer& layer, const std::string& format, std::vector<uint8_t> in,
                                          const std::string& body, int out0 = 0, int out1 = 1, bool full_sync = false,
                                          const std::string& kernel = kTwoTileKernel) {
  Run r;
  r.formats = {format};
  r.inputs = {std::move(in)};
  r.out_format = format;
  r.out_tiles = 2;
  r.compute = kernel;
  r.defines = {{"BODY", body}, {"OUT0", std::to_string(out0)}, {"OUT1", std::to_string(out1)}};
  r.dst_full_sync = full_sync;
  return run(layer, r);
}

inline std::vector<float> randf(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(d(rng));
  return v;
}

inline std::vector<uint8_t> f32_bytes(const std::vector<float>& v) { return zyx_test::to_bytes(v); }
inline std::vector<float> bytes_f32(const std::vector<uint8_t>& b) { return zyx_test::from_bytes<float>(b); }
inline std::vector<uint8_t> bf16_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 2);
  for (size_t i = 0; i < v.size(); i++) {
    uint16_t h = zyx_test::to_bf16(v[i]);
    std::memcpy(&b[2 * i], &h, 2);
  }
  return b;
}
inline std::vector<float> bytes_bf16(const std::vector<uint8_t>& b) {
  std::vector<float> v(b.size() / 2);
  for (size_t i = 0; i < v.size(); i++) {
    uint16_t h;
    std::memcpy(&h, &b[2 * i], 2);
    v[i] = zyx_test::from_bf16(h);
  }
  return v;
}
inline std::vector<float> round_bf16(std::vector<float> v) {
  for (auto& x : v) x = zyx_test::from_bf16(zyx_test::to_bf16(x));
  return v;
}
inline int fi(int r, int c) { return zyx_test::face_index(r, c); }

}  // namespace zyx_ctest
