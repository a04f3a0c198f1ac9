// Host-side facts of tt-metal programs, restated for the emulator's
// compatibility tests (ttmetal_tests.cpp): the compile-time words that
// TensorAccessorArgs(buffer).append_to(args) appends, split_work_to_cores'
// division of work over the compute grid, and the hosts' PCC check.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "harness.hpp"

namespace zyx_test::ttmetal {

// The programming_examples directory under test (ZYX_TTMETAL_EXAMPLES).
inline std::string g_examples_dir;
inline std::string src(const std::string& rel) { return read_text(g_examples_dir + "/" + rel); }

// The kernels of tt-metal's 2025 revisions and later address their buffers
// through TensorAccessorArgs in their compile-time args; older revisions
// take other compile args there (or none), so a case passes the accessor
// words only to a kernel that reads them.
inline bool takes_accessor(const std::string& source) {
  return source.find("TensorAccessorArgs") != std::string::npos;
}

inline std::vector<uint16_t> bf16_random(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = to_bf16(d(rng));
  return v;
}

inline std::vector<double> widen(const std::vector<uint16_t>& v) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); i++) out[i] = from_bf16(v[i]);
  return out;
}

// A float64 reference of an elementwise op over bf16 inputs, rounded to
// bf16 as the hosts' goldens are.
template <typename F>
std::vector<double> bf16_golden(size_t n, F f) {
  std::vector<double> out(n);
  for (size_t i = 0; i < n; i++) out[i] = from_bf16(to_bf16(static_cast<float>(f(i))));
  return out;
}

// tensor_accessor::ArgConfig bits (hostdevcommon): a host's compile-time
// args carry no Runtime* bit (append_to without common runtime args refuses
// them).
constexpr uint32_t kArgSharded = 1u << 0;
constexpr uint32_t kArgIsDram = 1u << 1;

// The words TensorAccessorArgs(buffer).append_to(compile_args) appends for
// a buffer of `spec` on the device `d`:
//   interleaved: [config, aligned page size]
//   sharded:     [config, aligned page size, rank, number of banks,
//                 tensor shape in pages..., shard shape in pages...,
//                 bank coordinates, two to a word]
// The page size is aligned to the buffer type's alignment. The shapes are
// the buffer distribution spec's (rank 2: rows, cols of pages; a
// height-sharded shard narrower than the tensor is the block sharding of
// rows of shard width). A bank coordinate packs (x << 8) | y, the first of a
// pair in the low half: a worker's virtual NOC coordinates for L1, and for
// DRAM the logical DRAM core (x = bank id, y = 0), which the device maps
// through its DRAM bank table.
inline std::vector<uint32_t> tensor_accessor_args(const zyx::DeviceDesc& d, const zyx::BufferSpec& spec) {
  bool dram = spec.placement == zyx::Placement::Dram;
  uint64_t align = dram ? d.dram_alignment : d.l1_alignment;
  bool sharded = spec.layout != zyx::BufferLayout::Interleaved;
  std::vector<uint32_t> out = {(sharded ? kArgSharded : 0u) | (dram ? kArgIsDram : 0u),
                               static_cast<uint32_t>((spec.page_size + align - 1) / align * align)};
  if (!sharded) return out;
  zyx::ShardSpec v = zyx::page_order_view(spec);
  std::vector<uint32_t> banks;  // packed (x << 8) | y per shard holder, in shard order
  bool col_major = v.orientation == zyx::ShardOrientation::ColMajor;
  for (const zyx::CoreRange& r : v.cores.ranges) {
    uint32_t outer0 = col_major ? r.start.col : r.start.row, outer1 = col_major ? r.end.col : r.end.row;
    uint32_t inner0 = col_major ? r.start.row : r.start.col, inner1 = col_major ? r.end.row : r.end.col;
    for (uint32_t o = outer0; o <= outer1; o++)
      for (uint32_t i = inner0; i <= inner1; i++) {
        uint32_t row = col_major ? i : o, col = col_major ? o : i;
        uint32_t x = dram ? col : d.noc.worker_x.at(col), y = dram ? 0 : d.noc.worker_y.at(row);
        banks.push_back(((x & 0xff) << 8) | (y & 0xff));
      }
  }
  uint32_t shards_r = (v.tensor[0] + v.shape[0] - 1) / v.shape[0], shards_c = (v.tensor[1] + v.shape[1] - 1) / v.shape[1];
  if (banks.size() > uint64_t{shards_r} * shards_c) banks.resize(uint64_t{shards_r} * shards_c);
  out.insert(out.end(), {2u, static_cast<uint32_t>(banks.size()), v.tensor[0], v.tensor[1], v.shape[0], v.shape[1]});
  for (size_t k = 0; k < banks.size(); k += 2) out.push_back(banks[k] | (k + 1 < banks.size() ? banks[k + 1] << 16 : 0));
  return out;
}

// A host's compile-args vector: literal words and appended accessor args.
inline std::vector<Arg> consts(const std::vector<uint32_t>& words) {
  std::vector<Arg> out;
  for (uint32_t w : words) out.push_back(C(w));
  return out;
}
inline std::vector<Arg> accessor(zyx::DeviceLayer& layer, const zyx::BufferSpec& spec) {
  return consts(tensor_accessor_args(layer.describe(), spec));
}
inline std::vector<Arg> cat(std::initializer_list<std::vector<Arg>> parts) {
  std::vector<Arg> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
inline std::vector<zyx::ArgEntry> to_entries(const std::vector<Arg>& v) {
  std::vector<zyx::ArgEntry> out;
  for (const Arg& a : v) out.push_back(a.entry);
  return out;
}

// One core's share of split_work_to_cores(grid, units, row_wise): the
// first units % cores cores (in row-major order of the grid when row_wise,
// else column by column) take one unit more; start is the running offset
// the example hosts hand out in that order.
struct Work {
  uint32_t row = 0, col = 0, units = 0, start = 0;
};
inline std::vector<Work> split_work(uint32_t grid_rows, uint32_t grid_cols, uint32_t units, bool row_wise) {
  uint32_t cores = std::min(grid_rows * grid_cols, units);
  std::vector<Work> out;
  uint32_t start = 0;
  for (uint32_t k = 0; k < cores; k++) {
    Work w;
    w.row = row_wise ? k / grid_cols : k % grid_rows;
    w.col = row_wise ? k % grid_cols : k / grid_rows;
    w.units = units / cores + (k < units % cores ? 1 : 0);
    w.start = start;
    start += w.units;
    out.push_back(w);
  }
  return out;
}

// The per-core output block of the matmul reuse examples (their host's
// bmm_op_utils::get_large_matmul_params): per_core_m x per_core_n tiles in
// subblocks of sub_h x sub_w; all zero where none fits.
struct MatmulBlocks {
  uint32_t m = 0, n = 0, sub_h = 0, sub_w = 0;
};

namespace detail {
inline std::vector<uint32_t> prime_factors(uint32_t n) {
  std::vector<uint32_t> f;
  for (uint32_t p = 2; p * p <= n; p++)
    while (n % p == 0) f.push_back(p), n /= p;
  if (n > 1) f.push_back(n);
  return f;
}
// The distinct products of non-empty sub-multisets of f, ascending ({1} for none).
inline std::vector<uint32_t> sub_products(const std::vector<uint32_t>& f) {
  if (f.empty()) return {1};
  std::vector<uint32_t> out;
  for (uint32_t x : f) {
    std::vector<uint32_t> more = {x};
    for (uint32_t p : out) more.push_back(p * x);
    for (uint32_t m : more)
      if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  std::sort(out.begin(), out.end());
  return out;
}
// The largest other block dimension whose double-buffered in0/in1 blocks
// and output block fit the host's 400-tile budget.
inline uint32_t max_block_dim(uint32_t dim, uint32_t w) {
  int32_t other = (400 - 2 * int32_t(w) * int32_t(dim)) / (2 * int32_t(w) + int32_t(dim));
  return other > 0 ? uint32_t(other) : 0;
}
// Factors larger than the core count must stay in one block: their product.
inline uint32_t take_large(std::vector<uint32_t>& f, uint32_t cores) {
  uint32_t prod = 1;
  for (uint32_t x : f) prod *= x > cores ? x : 1;
  f.erase(std::remove_if(f.begin(), f.end(), [&](uint32_t x) { return x > cores; }), f.end());
  return prod;
}
inline MatmulBlocks with_subblock(uint32_t m, uint32_t n) {
  static constexpr uint32_t kChoices[20][2] = {{4, 2}, {2, 4}, {8, 1}, {1, 8}, {7, 1}, {1, 7}, {3, 2},
                                               {2, 3}, {6, 1}, {1, 6}, {5, 1}, {1, 5}, {2, 2}, {4, 1},
                                               {1, 4}, {3, 1}, {1, 3}, {2, 1}, {1, 2}, {1, 1}};
  for (const auto& c : kChoices)
    if (m % c[0] == 0 && n % c[1] == 0) return {m, n, c[0], c[1]};
  return {};
}
}  // namespace detail

inline MatmulBlocks large_matmul_blocks(uint32_t mt, uint32_t nt, uint32_t cores_y, uint32_t cores_x, uint32_t w) {
  using namespace detail;
  auto mf = prime_factors(mt), nf = prime_factors(nt);
  uint32_t m_min = take_large(mf, cores_y), n_min = take_large(nf, cores_x);
  if (n_min > max_block_dim(m_min, w)) return {};
  auto fits = [&](uint32_t m, uint32_t n) { return mt / m <= cores_y && nt / n <= cores_x; };
  if (m_min > 1 || n_min > 1) {
    // Grow the other dimension from its forced minimum as far as the budget allows.
    bool grow_n = m_min > 1;
    uint32_t fixed = grow_n ? m_min : n_min, grown = grow_n ? n_min : m_min;
    for (uint32_t x : sub_products(grow_n ? nf : mf)) {
      if (x * (grow_n ? n_min : m_min) > max_block_dim(fixed, w)) break;
      grown = x * (grow_n ? n_min : m_min);
    }
    uint32_t m = grow_n ? m_min : grown, n = grow_n ? grown : n_min;
    return fits(m, n) ? with_subblock(m, n) : MatmulBlocks{};
  }
  uint32_t m = m_min;
  for (uint32_t n : sub_products(nf)) {
    for (uint32_t x : sub_products(mf))
      if (x <= max_block_dim(n, w)) m = x;
    if (!fits(m, n)) continue;
    if (MatmulBlocks b = with_subblock(m, n); b.m) return b;
  }
  return {};
}

// The Pearson correlation of two vectors (the hosts' check_bfloat16_vector_pcc,
// in double).
inline double pcc(const std::vector<double>& a, const std::vector<double>& b) {
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); i++) ma += a[i], mb += b[i];
  ma /= a.size(), mb /= b.size();
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < a.size(); i++) {
    cov += (a[i] - ma) * (b[i] - mb);
    va += (a[i] - ma) * (a[i] - ma);
    vb += (b[i] - mb) * (b[i] - mb);
  }
  return cov / std::sqrt(va * vb);
}

inline void check_pcc(const std::vector<double>& got, const std::vector<double>& want, double min,
                      const std::string& what) {
  if (got.size() != want.size()) throw Failure(what + ": size mismatch");
  double r = pcc(got, want);
  if (!(r > min)) throw Failure(what + ": PCC " + std::to_string(r) + ", the host wants > " + std::to_string(min));
}

// C = A * B over tiled bf16 matrices of mt x kt and kt x nt tiles, in
// float64: the hosts' golden_matmul, with the output in the tiled layout.
inline std::vector<double> matmul_golden(const std::vector<double>& a, const std::vector<double>& b, uint32_t mt,
                                  uint32_t kt, uint32_t nt) {
  auto A = [&](uint32_t r, uint32_t c) { return a[((r / 32) * kt + c / 32) * 1024 + face_index(r % 32, c % 32)]; };
  auto B = [&](uint32_t r, uint32_t c) { return b[((r / 32) * nt + c / 32) * 1024 + face_index(r % 32, c % 32)]; };
  std::vector<double> want(size_t{mt} * nt * 1024);
  for (uint32_t r = 0; r < mt * 32; r++)
    for (uint32_t c = 0; c < nt * 32; c++) {
      double s = 0;
      for (uint32_t k = 0; k < kt * 32; k++) s += A(r, k) * B(k, c);
      want[((r / 32) * nt + c / 32) * 1024 + face_index(r % 32, c % 32)] = s;
    }
  return want;
}

// Sets an environment variable of the runtime for a scope (nullptr: leaves
// it as it is), restoring it after.
struct EnvVar {
  std::string name;
  bool set = false, had = false;
  std::string old;
  EnvVar(const char* n, const char* value) : name(n) {
    if (!value) return;
    if (const char* o = std::getenv(n)) had = true, old = o;
    setenv(n, value, 1);
    set = true;
  }
  ~EnvVar() {
    if (set && had) setenv(name.c_str(), old.c_str(), 1);
    if (set && !had) unsetenv(name.c_str());
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;
};

// The message of the error a run must end with ("" if it ran).
inline std::string run_error(zyx::DeviceLayer& layer, uint64_t program, const std::vector<zyx::RunArg>& args) {
  try {
    layer.run(program, args, false);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// What the watcher reports of an example's kernel that a card lets pass:
// the check ("cb", "noc") and a part of its report. Some examples push a CB
// page they never reserved (harmless while the CB has room), or write past
// their CB into L1 nothing else uses.
struct Finding {
  std::string check, report;
};

// Runs `program` under the watcher; when it stops the run, checks that it
// reported `f` and runs the example again with that check off, as its host
// would run it on a card.
inline void run_past_finding(zyx::DeviceLayer& layer, uint64_t program, const std::vector<zyx::RunArg>& args,
                             const Finding& f) {
  std::string what = run_error(layer, program, args);
  if (what.empty()) return;
  if (what.find(f.report) == std::string::npos || what.find("watcher check " + f.check) == std::string::npos)
    throw Failure("want the watcher's " + f.check + " report \"" + f.report + "\", got \"" + what + "\"");
  EnvVar off("ZYX_EMU_WATCHER", ("no-" + f.check).c_str());
  layer.run(program, args, false);
}

// The watcher's report of an unreserved push ("cb_push_back(16, 1)").
inline Finding unreserved_push(const std::string& push) {
  return Finding{"cb", push + " pushes more than the 0 page(s) reserved"};
}

// A case: an example's name and its restated host program.
using Example = std::pair<std::string, std::function<void(zyx::DeviceLayer&)>>;
// The multi-core and printing examples (ttmetal_multi_tests.cpp).
std::vector<Example> multi_core_examples();

}  // namespace zyx_test::ttmetal
