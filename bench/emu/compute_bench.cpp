// Emulator compute benchmark (make bench-emu runs it after emu_bench). All
// ratios are against references measured in the same run:
//   - bf16 eltwise add of 1M elements on an 8x8 grid (examples/add_bf16),
//     with the card's numerics (the default) and exact (ZYX_EMU_NUMERICS=
//     exact), against a plain C++ loop computing the same bf16 result;
//   - the 512^3 matmul below with the card's numerics at LoFi, HiFi2 and
//     HiFi4 against exact mode's throughput;
//   - single-core bf16 matmul 640^3 (tt-metal's matmul_single_core shape):
//     its time;
//   - multi-core f32 matmul 512^3 on an 8x8 grid against OpenBLAS sgemm of the
//     same product on every host thread (throughput ratio). OpenBLAS is
//     loaded (dlopen libopenblas.so.0, or ZYX_BENCH_OPENBLAS_LIB) only after
//     the emulator's figures are taken: its idle threads spin and would slow
//     the emulator down;
//   - the same 512^3 matmul with ZYX_EMU_THREADS = 1, 2, 4, ... host threads;
//   - section "scaling" (bench/emu/scaling.sh): the 512^3 f32 matmul and the
//     1M bf16 add, both on the 8x8 grid, in exact mode, for each thread count of
//     ZYX_BENCH_THREADS (a comma list; default 1, 2, 4, .. up to the host's),
//     as a speed-up table against one thread.
// The matmuls run the kernels of examples/matmul_bfp8 (tiled buffers, one
// page per tile) with the CB formats set per case. Every result is checked.
//   - section "tile": the hardware-numerics matmul model alone
//     (hw::matmul_tile), one 32x32x32 tile product on one thread, for each
//     fidelity with a 32-bit DST (TF32 operands) and a 16-bit one (bf16
//     operands): the best of 40 x repeats runs of 10 products;
//   - section "watcher": the bf16 add and the 512^3 matmul with the watcher
//     off, on and in strict NOC mode (ZYX_EMU_WATCHER), alternating, and
//     their ratios to off;
// Usage: emu_compute_bench [repeats] [section: add|watcher|mm1|mm|scale|scaling|tile|all]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "numerics.hpp"

#include "bench_util.hpp"
#include "device_layer.hpp"
#include "harness.hpp"
#include <dlfcn.h>

using namespace zyx;
using zyx_bench::best_ms;
using zyx_bench::Clock;
using zyx_test::from_bf16;
using zyx_test::GroupProgram;
using zyx_test::L;
using zyx_test::to_bf16;

namespace {

int fi(int r, int c) { return zyx_test::face_index(r, c); }

// ZYX_EMU_NUMERICS for a scope: exact or (false) the default, the card's.
bool exact_mode() {
  const char* e = std::getenv("ZYX_EMU_NUMERICS");
  return e && std::string(e) == "exact";
}
struct Numerics {
  bool was;
  explicit Numerics(bool exact) : was(exact_mode()) { set(exact); }
  ~Numerics() { set(was); }
  static void set(bool exact) {
    if (exact) setenv("ZYX_EMU_NUMERICS", "exact", 1);
    else unsetenv("ZYX_EMU_NUMERICS");
  }
};

// ZYX_EMU_EXAMPLES overrides the examples directory built in (a copy of the
// tree elsewhere).
std::string dir(const char* ex) {
  const char* e = std::getenv("ZYX_EMU_EXAMPLES");
  return std::string(e && *e ? e : ZYX_EMU_EXAMPLES_DIR) + "/" + ex + "/tt/";
}

struct Add {
  std::unique_ptr<DeviceLayer> layer;
  uint64_t id = 0, bx = 0, by = 0, bz = 0;
  std::vector<uint16_t> x, y;
  std::vector<RunArg> args;
};

Add make_add() {
  const uint32_t n = 1u << 20;
  Add a;
  a.layer = make_emu_layer("n150", 0, "");
  a.id = a.layer->compile(zyx_bench::add_bf16_program());
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-2, 2);
  a.x.resize(n), a.y.resize(n);
  for (uint32_t i = 0; i < n; i++) a.x[i] = to_bf16(d(rng)), a.y[i] = to_bf16(d(rng));
  a.bx = zyx_test::upload(*a.layer, a.x, 2048), a.by = zyx_test::upload(*a.layer, a.y, 2048);
  a.bz = a.layer->alloc(n * 2, zyx_test::dram_spec(2048), nullptr);
  a.args = {zyx_test::Buf(a.bx), zyx_test::Buf(a.by), zyx_test::Buf(a.bz), zyx_test::Val(n)};
  return a;
}

// The best wall time of a run of the add; with exec_ms, also the best time
// of the runs' execute phase alone (as run_mm).
double run_add(Add& a, int repeats, double* exec_ms = nullptr) {
  a.layer->run(a.id, a.args, false);
  double ex = 1e30;
  double wall = best_ms(repeats, [&] {
    uint64_t ns = a.layer->run(a.id, a.args, exec_ms != nullptr);
    ex = std::min(ex, double(ns) / 1e6);
  });
  if (exec_ms) *exec_ms = ex;
  return wall;
}

// Results of the last add run that differ from the bf16 host sum.
size_t check_add(Add& a) {
  const size_t n = a.x.size();
  std::vector<uint16_t> z(n);
  a.layer->read(a.bz, 0, reinterpret_cast<uint8_t*>(z.data()), n * 2);
  size_t bad = 0;
  const bool exact = exact_mode();
  const zyx::emu::hw::Config c{false, true};  // 16-bit DST, Wormhole
  for (size_t i = 0; i < n; i++) {
    uint16_t want = exact ? to_bf16(from_bf16(a.x[i]) + from_bf16(a.y[i]))
                          : zyx::emu::hw::pack_bf16(zyx::emu::hw::elwadd(uint32_t(a.x[i]) << 16,
                                                                         uint32_t(a.y[i]) << 16, false, 0, false, c),
                                                    false);
    bad += z[i] != want;
  }
  return bad;
}

bool bench_add(int repeats) {
  const uint32_t n = 1u << 20;
  Add a = make_add();
  const auto& x = a.x;
  const auto& y = a.y;
  std::vector<uint16_t> ref(n);
  double emu, exact;
  size_t bad;
  {
    Numerics hw(false);
    emu = run_add(a, repeats);
    bad = check_add(a);
  }
  {
    Numerics ex(true);
    exact = run_add(a, repeats);
    bad += check_add(a);
  }
  double loop = best_ms(repeats * 4, [&] {
    for (uint32_t i = 0; i < n; i++) ref[i] = to_bf16(from_bf16(x[i]) + from_bf16(y[i]));
    asm volatile("" : : "r"(ref.data()) : "memory");
  });
  std::printf("bf16 add 1M, 8x8 grid:        hardware numerics %.2f ms, exact %.2f ms, plain loop %.3f ms; "
              "hardware/loop %.2fx, exact/loop %.2fx, hardware/exact %.2fx; %zu results differ\n",
              emu, exact, loop, emu / loop, exact / loop, emu / exact, bad);
  return bad == 0;
}

struct MM {
  std::unique_ptr<DeviceLayer> layer;
  uint64_t prog = 0, a = 0, b = 0, c = 0;
  uint32_t M, N, K;
  std::vector<float> A, B;  // row-major
  bool f32;
};

// c = a . b with tiled buffers; formats Float32 (fp32 DST) or Float16_b.
MM make_mm(uint32_t M, uint32_t N, uint32_t K, bool f32, uint32_t rows, uint32_t cols,
           const std::string& fidelity = "HiFi4") {
  MM m;
  m.M = M, m.N = N, m.K = K, m.f32 = f32;
  m.layer = make_emu_layer("n150", 0, "");
  const uint32_t mt = M / 32, nt = N / 32, kt = K / 32;
  const std::string fmt = f32 ? "Float32" : "Float16_b";
  const uint32_t tb = f32 ? 4096 : 2048;
  GroupProgram p;
  p.name = "bench_matmul";
  p.params = {zyx_test::P("a", "global"), zyx_test::P("b", "global"), zyx_test::P("c", "global_mut")};
  p.reader.source = zyx_test::read_text(dir("matmul_bfp8") + "reader.cpp");
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), zyx_test::C(mt), zyx_test::C(nt),
                           zyx_test::C(kt), L("core_index"), L("num_cores")};
  p.compute.source = zyx_test::bundle_source(dir("matmul_bfp8"), "zyx:tt/matmul/compute.cpp");
  p.compute.runtime_args = {zyx_test::C(M), zyx_test::C(N), zyx_test::C(K), L("core_index"), L("num_cores")};
  p.include_files = zyx_test::library_includes();
  p.writer.source = zyx_test::read_text(dir("matmul_bfp8") + "writer.cpp");
  p.writer.runtime_args = {L("buffer_addr", 2), zyx_test::C(mt * nt), L("core_index"), L("num_cores")};
  p.cbs = {zyx_test::CB(0, fmt, tb, 2), zyx_test::CB(1, fmt, tb, 2), zyx_test::CB(16, fmt, tb, 2)};
  p.fp32_dest_acc = f32;
  p.math_fidelity = fidelity;
  m.prog = m.layer->compile(zyx_test::one_group_program(p, rows, cols));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  m.A.resize(size_t(M) * K), m.B.resize(size_t(K) * N);
  for (auto& v : m.A) v = f32 ? d(rng) : from_bf16(to_bf16(d(rng)));
  for (auto& v : m.B) v = f32 ? d(rng) : from_bf16(to_bf16(d(rng)));
  auto tiled = [&](const std::vector<float>& src, uint32_t R, uint32_t Cc) {
    std::vector<uint8_t> out(size_t(R) * Cc * (f32 ? 4 : 2));
    for (uint32_t tr = 0; tr < R / 32; tr++)
      for (uint32_t tc = 0; tc < Cc / 32; tc++)
        for (int r = 0; r < 32; r++)
          for (int c = 0; c < 32; c++) {
            size_t e = size_t(tr * (Cc / 32) + tc) * 1024 + fi(r, c);
            float v = src[size_t(tr * 32 + r) * Cc + tc * 32 + c];
            if (f32) {
              std::memcpy(&out[e * 4], &v, 4);
            } else {
              uint16_t h = to_bf16(v);
              std::memcpy(&out[e * 2], &h, 2);
            }
          }
    return out;
  };
  auto ab = tiled(m.A, M, K), bb = tiled(m.B, K, N);
  m.a = zyx_test::upload(*m.layer, ab, tb);
  m.b = zyx_test::upload(*m.layer, bb, tb);
  m.c = m.layer->alloc(size_t(M) * N * (f32 ? 4 : 2), zyx_test::dram_spec(tb), nullptr);
  return m;
}

// The best wall time of a run of the matmul; with exec_ms, also the best
// time of the runs' execute phase alone (the cores running, without the
// run's setup before it), to tell a serial setup from poor scaling.
double run_mm(MM& m, int repeats, double* exec_ms = nullptr) {
  std::vector<RunArg> args = {zyx_test::Buf(m.a), zyx_test::Buf(m.b), zyx_test::Buf(m.c)};
  m.layer->run(m.prog, args, false);
  double ex = 1e30;
  double wall = best_ms(repeats, [&] {
    uint64_t ns = m.layer->run(m.prog, args, exec_ms != nullptr);
    ex = std::min(ex, double(ns) / 1e6);
  });
  if (exec_ms) *exec_ms = ex;
  return wall;
}

// Max relative error of the emulated product against a float64 reference.
double check_mm(MM& m) {
  const uint32_t nt = m.N / 32;
  std::vector<uint8_t> cb(size_t(m.M) * m.N * (m.f32 ? 4 : 2));
  m.layer->read(m.c, 0, cb.data(), cb.size());
  // ZYX_BENCH_DUMP=prefix: the product's bytes to prefix.MxNxK.fmt, to
  // compare emulator versions bit for bit.
  if (const char* d = std::getenv("ZYX_BENCH_DUMP"); d && *d) {
    std::string path = std::string(d) + "." + std::to_string(m.M) + "x" + std::to_string(m.N) + "x" +
                       std::to_string(m.K) + (m.f32 ? ".f32" : ".bf16");
    if (FILE* f = std::fopen(path.c_str(), "wb")) {
      std::fwrite(cb.data(), 1, cb.size(), f);
      std::fclose(f);
    }
  }
  double worst = 0;
  for (uint32_t i = 0; i < m.M; i += 7)
    for (uint32_t j = 0; j < m.N; j += 5) {
      double s = 0, mag = 0;
      for (uint32_t k = 0; k < m.K; k++) s += double(m.A[size_t(i) * m.K + k]) * m.B[size_t(k) * m.N + j],
                                        mag += std::fabs(double(m.A[size_t(i) * m.K + k]) * m.B[size_t(k) * m.N + j]);
      size_t e = size_t((i / 32) * nt + j / 32) * 1024 + fi(i % 32, j % 32);
      double g;
      if (m.f32) {
        float f;
        std::memcpy(&f, &cb[e * 4], 4);
        g = f;
      } else {
        uint16_t h;
        std::memcpy(&h, &cb[e * 2], 2);
        g = from_bf16(h);
      }
      worst = std::max(worst, std::fabs(g - s) / std::max(mag, 1e-30));
    }
  return worst;
}

// The thread counts of ZYX_BENCH_THREADS ("1,2,3"), or 1, 2, 4, .. and the
// host's count.
std::vector<unsigned> thread_counts(unsigned hw) {
  std::vector<unsigned> out;
  const char* e = std::getenv("ZYX_BENCH_THREADS");
  if (e && *e) {
    std::string s(e);
    size_t pos = 0;
    while (pos <= s.size()) {
      size_t end = s.find(',', pos);
      if (end == std::string::npos) end = s.size();
      std::string tok = s.substr(pos, end - pos);
      char* stop = nullptr;
      long v = std::strtol(tok.c_str(), &stop, 10);
      if (tok.empty() || *stop || v < 1 || v > 4096) {
        std::fprintf(stderr, "ZYX_BENCH_THREADS: '%s' is not a thread count from 1 to 4096\n", tok.c_str());
        std::exit(2);
      }
      out.push_back(static_cast<unsigned>(v));
      pos = end + 1;
    }
    return out;
  }
  for (unsigned t = 1; t < hw; t *= 2) out.push_back(t);
  out.push_back(hw);
  return out;
}

// The speed-up table: both programs on the 8x8 grid for each thread count.
bool bench_scaling(int repeats, unsigned hw) {
  Numerics exact(true);
  MM m = make_mm(512, 512, 512, true, 8, 8);
  Add a = make_add();
  std::vector<unsigned> ts = thread_counts(hw);
  std::printf("emulator scaling, 8x8 grid (64 emulated cores), exact numerics, best of %d; host threads %u\n", repeats,
              hw);
  std::printf("%8s  %14s %9s  %14s %9s  %14s  %14s\n", "threads", "f32 mm 512^3", "speed-up", "bf16 add 1M",
              "speed-up", "mm execute", "add execute");
  double mm1 = 0, add1 = 0;
  bool ok = true;
  for (size_t i = 0; i < ts.size(); i++) {
    setenv("ZYX_EMU_THREADS", std::to_string(ts[i]).c_str(), 1);
    double ex = 0, add_ex = 0;
    double tm = run_mm(m, repeats, &ex), ta = run_add(a, repeats, &add_ex);
    ok &= check_mm(m) < 1e-5 && check_add(a) == 0;
    if (i == 0) mm1 = tm * ts[0], add1 = ta * ts[0];  // normalised to one thread when the list starts above 1
    std::printf("%8u  %11.2f ms %8.2fx  %11.2f ms %8.2fx  %11.2f ms  %11.2f ms\n", ts[i], tm, mm1 / tm, ta, add1 / ta, ex,
                add_ex);
  }
  unsetenv("ZYX_EMU_THREADS");
  if (!ts.empty() && ts[0] != 1) std::printf("(the first row is not one thread: speed-ups assume it scaled perfectly)\n");
  return ok;
}

// The watcher's cost (docs/emulator.md, "Debugging kernels"): the bf16 add
// and the 512^3 matmul with ZYX_EMU_WATCHER=off, on, on in strict NOC mode
// and on without the check of the kernels' own loads and stores
// (no-cb-access: kernels built without the address-check instrumentation),
// the settings alternating in rounds so that all see the same host
// load; best of each; exact numerics, as the scaling table. Each setting's
// results are checked against the f32 references in the first round.
bool bench_watcher(int repeats) {
  Numerics exact(true);  // the results are checked against f32 references
  MM m = make_mm(512, 512, 512, true, 8, 8);
  Add a = make_add();
  const char* settings[] = {"off", "on", "strict-noc", "no-cb-access"};
  double add_t[4] = {1e30, 1e30, 1e30, 1e30}, mm_t[4] = {1e30, 1e30, 1e30, 1e30};
  bool ok = true;
  for (int round = 0; round < 3; round++)
    for (int s = 0; s < 4; s++) {
      setenv("ZYX_EMU_WATCHER", settings[s], 1);
      add_t[s] = std::min(add_t[s], run_add(a, repeats));
      mm_t[s] = std::min(mm_t[s], run_mm(m, repeats));
      if (round == 0) ok &= check_add(a) == 0 && check_mm(m) < 1e-5;
    }
  unsetenv("ZYX_EMU_WATCHER");
  std::printf("watcher on/off (exact numerics), bf16 add 1M:  on %.2f ms, off %.2f ms, ratio %.2fx (target <= 1.3x)\n",
              add_t[1], add_t[0], add_t[1] / add_t[0]);
  std::printf("watcher on/off (exact numerics), f32 mm 512^3: on %.2f ms, off %.2f ms, ratio %.2fx (target <= 1.3x)\n",
              mm_t[1], mm_t[0], mm_t[1] / mm_t[0]);
  std::printf("strict NOC mode/off (exact numerics), bf16 add 1M:  strict %.2f ms, ratio %.2fx\n", add_t[2],
              add_t[2] / add_t[0]);
  std::printf("strict NOC mode/off (exact numerics), f32 mm 512^3: strict %.2f ms, ratio %.2fx\n", mm_t[2],
              mm_t[2] / mm_t[0]);
  std::printf("watcher without cb-access/off (exact numerics), bf16 add 1M:  %.2f ms, ratio %.2fx\n", add_t[3],
              add_t[3] / add_t[0]);
  std::printf("watcher without cb-access/off (exact numerics), f32 mm 512^3: %.2f ms, ratio %.2fx\n", mm_t[3],
              mm_t[3] / mm_t[0]);
  return ok;
}

// The matmul model's tile product alone (section "tile"). Random operands
// in [-1, 1) as the unpacker delivers them; DST starts at 0 in every run.
void bench_tile(int repeats) {
  namespace hw = zyx::emu::hw;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<uint32_t> a(1024), b(1024), d(1024);
  for (bool fp32 : {true, false}) {
    hw::Config c;
    c.fp32_dest = fp32;
    for (int i = 0; i < 1024; i++) {
      const float x = dist(rng), y = dist(rng);
      uint32_t ux, uy;
      std::memcpy(&ux, &x, 4);
      std::memcpy(&uy, &y, 4);
      a[i] = hw::src_from_f32(ux, fp32), b[i] = hw::src_from_f32(uy, fp32);
    }
    const struct {
      const char* name;
      hw::Fidelity f;
    } fids[] = {{"LoFi", hw::Fidelity::LoFi}, {"HiFi2", hw::Fidelity::HiFi2}, {"HiFi4", hw::Fidelity::HiFi4}};
    for (const auto& f : fids) {
      const double ms = best_ms(40 * repeats, [&] {
        std::fill(d.begin(), d.end(), 0u);
        for (int i = 0; i < 10; i++) hw::matmul_tile(a.data(), b.data(), d.data(), f.f, c);
        asm volatile("" : : "r"(d.data()) : "memory");
      });
      std::printf("matmul model, 32x32x32 tile, %s DST, %-5s %6.2f us\n", fp32 ? "32-bit" : "16-bit", f.name,
                  ms * 1000 / 10);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::string what = argc > 2 ? argv[2] : "all";
  bool ok = true;
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  std::printf("host threads: %u\n", hw);
  try {
    if (what == "scaling") {
      ok &= bench_scaling(repeats, hw);
      std::printf("%s\n", ok ? "results checked: ok" : "FAIL: a result is wrong");
      return ok ? 0 : 1;
    }
    if (what == "all" || what == "add") ok &= bench_add(repeats);
    if (what == "all" || what == "tile") bench_tile(repeats);
    if (what == "all" || what == "watcher") ok &= bench_watcher(repeats);
    if (what == "all" || what == "mm1") {
      MM m = make_mm(640, 640, 640, false, 1, 1);
      double ms = run_mm(m, std::max(1, repeats / 2));
      double err = check_mm(m);
      std::printf("bf16 matmul 640^3, 1 core:    %.1f ms (%.2f GFLOP/s); max error %.2g of sum|a*b| (bf16 DST)\n", ms,
                  2.0 * 640 * 640 * 640 / (ms * 1e6), err);
      ok &= err < 2e-2;
    }
    if (what == "all" || what == "mm" || what == "scale") {
      Numerics exact(true);
      MM m = make_mm(512, 512, 512, true, 8, 8);
      double ms = run_mm(m, repeats);
      double err = check_mm(m);
      ok &= err < 1e-5;
      double gf = 2.0 * 512 * 512 * 512 / (ms * 1e6);
      std::printf("f32 matmul 512^3, 8x8 grid:   %.2f ms (%.1f GFLOP/s); max error %.2g of sum|a*b| (exact numerics)\n",
                  ms, gf, err);
      {
        // The card's numerics: Float32 operands as TF32, fp32 DST, by fidelity.
        Numerics card(false);
        const struct {
          const char* name;
          double max_err;
        } fids[] = {{"LoFi", 0.1}, {"HiFi2", 2e-2}, {"HiFi4", 2e-3}};
        for (const auto& f : fids) {
          MM h = make_mm(512, 512, 512, true, 8, 8, f.name);
          double hms = run_mm(h, repeats), herr = check_mm(h);
          ok &= herr < f.max_err;
          std::printf("  hardware numerics, %-5s      %.2f ms, %.2fx exact mode's throughput; max error %.2g\n", f.name,
                      hms, ms / hms, herr);
        }
      }
      double t1 = 0;
      if (what != "mm") {
        for (unsigned t = 1;; t = std::min(hw, t * 2)) {
          setenv("ZYX_EMU_THREADS", std::to_string(t).c_str(), 1);
          double tm = run_mm(m, repeats);
          if (t == 1) t1 = tm;  // single-thread time, also compared with OpenBLAS on one thread below
          std::printf("  ZYX_EMU_THREADS=%-3u          %.2f ms, speed-up %.2fx\n", t, tm, t1 / tm);
          if (t == hw) break;
        }
        unsetenv("ZYX_EMU_THREADS");
      }
      const char* lib = std::getenv("ZYX_BENCH_OPENBLAS_LIB");
      void* h = dlopen(lib && *lib ? lib : "libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
      using sgemm_fn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                                float*, int);
      auto sgemm = h ? reinterpret_cast<sgemm_fn>(dlsym(h, "cblas_sgemm")) : nullptr;
      if (!sgemm) {
        std::printf("OpenBLAS sgemm 512^3:         not measured (%s)\n", dlerror());
      } else {
        std::vector<float> C(512 * 512);
        constexpr int kRowMajor = 101, kNoTrans = 111;  // CBLAS enum values
        auto once = [&] { sgemm(kRowMajor, kNoTrans, kNoTrans, 512, 512, 512, 1.0f, m.A.data(), 512, m.B.data(), 512, 0.0f, C.data(), 512); };
        once();
        double blas = best_ms(repeats * 4, once);
        double e = 0;
        for (int i = 0; i < 512; i += 31)
          for (int j = 0; j < 512; j += 17) {
            double s2 = 0;
            for (int k = 0; k < 512; k++) s2 += double(m.A[i * 512 + k]) * m.B[k * 512 + j];
            e = std::max(e, std::fabs(s2 - C[i * 512 + j]));
          }
        ok &= e < 1e-3;
        std::printf("OpenBLAS sgemm 512^3:         %.2f ms (%.1f GFLOP/s, all host threads); emulator/OpenBLAS "
                    "throughput %.2fx (target >= 0.25x)\n",
                    blas, 2.0 * 512 * 512 * 512 / (blas * 1e6), blas / ms);
        // One thread each: less exposed to other load on a shared host.
        using nthreads_fn = void (*)(int);
        auto set_threads = reinterpret_cast<nthreads_fn>(dlsym(h, "openblas_set_num_threads"));
        if (set_threads && t1 > 0) {
          set_threads(1);
          once();
          double blas1 = best_ms(repeats * 4, once);
          std::printf("OpenBLAS sgemm 512^3, 1 thread: %.2f ms; emulator (ZYX_EMU_THREADS=1)/OpenBLAS (1 thread) "
                      "throughput %.2fx\n",
                      blas1, blas1 / t1);
        }
      }
    }
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  std::printf("%s\n", ok ? "results checked: ok" : "FAIL: a result is wrong");
  return ok ? 0 : 1;
}
