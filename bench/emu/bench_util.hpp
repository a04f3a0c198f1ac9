// What the emulator benchmarks (emu_bench.cpp, compute_bench.cpp) share:
// the best-of-N timer and the bf16 add program of examples/add_bf16. The
// bf16 conversions, face_index and read_text come from the emulator tests'
// harness (cpp/emu/tests/test_util.hpp, harness.hpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <string>

#include "harness.hpp"

namespace zyx_bench {

using Clock = std::chrono::steady_clock;

// The fastest of `repeats` runs of fn, in milliseconds.
template <typename Fn>
double best_ms(int repeats, Fn&& fn) {
  double best = 1e30;
  for (int i = 0; i < repeats; i++) {
    auto t0 = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return best;
}

// The bf16 add z = x + y of n elements (params x, y, z, n) with the
// kernels that examples/add_bf16 names (the kernel library's chunk kernels),
// split over an 8x8 grid.
inline zyx::ProgramDesc add_bf16_program() {
  const auto library = [](const char* name) { return zyx_test::bundle_source("", std::string("zyx:") + name); };
  using zyx_test::L;
  zyx_test::GroupProgram p;
  p.name = "bench_add_bf16";
  for (const char* n : {"x", "y"}) p.params.push_back(zyx_test::P(n, "global", "bf16"));
  p.params.push_back(zyx_test::P("z", "global_mut", "bf16"));
  p.params.push_back(zyx_test::P("n", "variable", "u32"));
  p.reader.source = library("tt/dataflow/read_chunks_binary.cpp");
  p.reader.compile_args = {L("accessor", 0), L("accessor", 1)};
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), L("page_size", 0), L("param", 3),
                           L("core_index"), L("num_cores")};
  p.compute.source = library("tt/compute/add_tiles.cpp");
  p.compute.runtime_args = {L("param", 3), L("core_index"), L("num_cores")};
  p.writer.source = library("tt/dataflow/write_chunks.cpp");
  p.writer.runtime_args = {L("buffer_addr", 2), L("page_size", 2), L("param", 3), L("core_index"), L("num_cores")};
  p.include_files = zyx_test::library_includes();
  p.cbs = {zyx_test::CB(0, "Float16_b", 2048, 2), zyx_test::CB(1, "Float16_b", 2048, 2),
           zyx_test::CB(16, "Float16_b", 2048, 2)};
  return zyx_test::one_group_program(p, 8, 8);
}

}  // namespace zyx_bench
