// Emulator benchmark. Figures are ratios against references measured in the
// same run:
//   - emulated bf16 add of 1M elements on an 8x8 n150 grid (kernel cache
//     warm), against a plain C++ loop computing the same bf16 result;
//   - kernel build time of the three kernels, cold (empty cache) and warm
//     (a new layer over the filled cache);
//   - 64 MiB host upload (layer write) and download (layer read) of a DRAM
//     buffer with 2 KiB interleaved pages, against memcpy of 64 MiB
//     between two host buffers (bandwidth ratios; 1.0 = memcpy speed).
// Usage: emu_bench [repeats]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "device_layer.hpp"
#include "harness.hpp"

using namespace zyx;
using zyx_bench::best_ms;
using zyx_bench::Clock;
using zyx_test::from_bf16;
using zyx_test::to_bf16;

// 64 MiB through layer write and read against memcpy, in the same run;
// returns false when the data did not come back intact.
static bool transfer_bench(DeviceLayer& layer, int repeats) {
  const uint64_t n = 64ull << 20;
  std::vector<uint8_t> host(n), back(n), other(n);
  for (uint64_t i = 0; i < n; i++) host[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
  uint64_t id = layer.alloc(n, zyx_test::dram_spec(2048), nullptr);
  // Fault every page in once (as the Go benchmark does), then measure.
  layer.write(id, 0, host.data(), n);
  layer.read(id, 0, back.data(), n);
  std::memcpy(other.data(), host.data(), n);
  double up = 1e30, down = 1e30, mem = 1e30;
  for (int i = 0; i < repeats; i++) {
    up = std::min(up, best_ms(1, [&] { layer.write(id, 0, host.data(), n); }));
    down = std::min(down, best_ms(1, [&] { layer.read(id, 0, back.data(), n); }));
    mem = std::min(mem, best_ms(1, [&] {
                     std::memcpy(other.data(), back.data(), n);
                     asm volatile("" : : "r"(other.data()) : "memory");
                   }));
  }
  bool ok = back == host && other == host;
  auto gbs = [&](double ms) { return static_cast<double>(n) / (ms * 1e-3) / 1e9; };
  std::printf("64 MiB upload (layer write):   %.2f ms, %.2f GB/s, upload/memcpy %.2f (target >= 0.9)\n", up, gbs(up),
              mem / up);
  std::printf("64 MiB download (layer read):  %.2f ms, %.2f GB/s, download/memcpy %.2f (target >= 0.9)\n", down,
              gbs(down), mem / down);
  std::printf("64 MiB memcpy:                 %.2f ms, %.2f GB/s; data %s\n", mem, gbs(mem),
              ok ? "intact" : "CORRUPTED");
  layer.free(id);
  return ok;
}

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const uint32_t n = 1u << 20;
  char tmpl[] = "/tmp/zyx-emu-bench-XXXXXX";
  std::string cache = mkdtemp(tmpl);
  try {
    ProgramDesc prog = zyx_bench::add_bf16_program();
    // Kernel build: cold (empty cache), then warm (fresh layer, filled cache).
    auto cold_layer = make_emu_layer("n150", 0, cache);
    auto t0 = Clock::now();
    cold_layer->compile(prog);
    double cold = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    double warm = best_ms(repeats, [&] { make_emu_layer("n150", 0, cache)->compile(prog); });

    auto layer = make_emu_layer("n150", 0, cache);
    uint64_t id = layer->compile(prog);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-2, 2);
    std::vector<uint16_t> x(n), y(n), z(n), ref(n);
    for (uint32_t i = 0; i < n; i++) x[i] = to_bf16(d(rng)), y[i] = to_bf16(d(rng));
    uint64_t bx = layer->alloc(n * 2, zyx_test::dram_spec(2048), nullptr),
             by = layer->alloc(n * 2, zyx_test::dram_spec(2048), nullptr),
             bz = layer->alloc(n * 2, zyx_test::dram_spec(2048), nullptr);
    layer->write(bx, 0, reinterpret_cast<uint8_t*>(x.data()), n * 2);
    layer->write(by, 0, reinterpret_cast<uint8_t*>(y.data()), n * 2);
    std::vector<RunArg> args(4);
    args[0].is_buffer = args[1].is_buffer = args[2].is_buffer = true;
    args[0].buffer = bx, args[1].buffer = by, args[2].buffer = bz, args[3].value = n;
    layer->run(id, args, false);  // warm-up
    double emu = best_ms(repeats, [&] { layer->run(id, args, false); });
    if (std::getenv("ZYX_EMU_BENCH_FIXED")) {
      // Fixed cost of a run: the same program over one tile.
      std::vector<RunArg> one = args;
      one[3].value = 1024;
      double fixed = best_ms(repeats, [&] { layer->run(id, one, false); });
      std::printf("one tile on the 8x8 grid (fixed cost of a run): %.2f ms\n", fixed);
    }
    // The reference: the same bf16 result in one plain loop.
    double loop = best_ms(repeats, [&] {
      for (uint32_t i = 0; i < n; i++) ref[i] = to_bf16(from_bf16(x[i]) + from_bf16(y[i]));
      asm volatile("" : : "r"(ref.data()) : "memory");
    });
    layer->read(bz, 0, reinterpret_cast<uint8_t*>(z.data()), n * 2);
    size_t bad = 0;
    for (uint32_t i = 0; i < n; i++) bad += z[i] != ref[i];
    std::printf("emulated bf16 add, 1M elements, 8x8 n150 grid, warm cache: %.2f ms (best of %d)\n", emu, repeats);
    std::printf("plain C++ loop, same result:                               %.2f ms\n", loop);
    std::printf("ratio emulated / loop:                                     %.1fx (target <= 20x)\n", emu / loop);
    std::printf("results differing from the loop:                           %zu of %u\n", bad, n);
    std::printf("kernel build (3 kernels), cold cache: %.0f ms; warm cache: %.2f ms; cold / warm %.0fx\n", cold, warm,
                cold / warm);
    bool intact = transfer_bench(*layer, repeats);
    std::string rm = "rm -rf '" + cache + "'";
    if (std::system(rm.c_str()) != 0) return 1;
    return bad == 0 && intact ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "emu_bench: %s: %s\n", e.code.c_str(), e.what());
    return 1;
  }
}
