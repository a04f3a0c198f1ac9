// libFuzzer target: program validation, differentially. From the input it
// builds a device (grid, banks, semaphores) and a typed program of every
// part (kernels on core range sets, arg entries, CB configs, semaphores,
// buffer declarations, include files) and an alloc spec, then:
//  1. writes the program as a compile request by hand and parses it with
//     parse_request: the parsed model must equal the one built;
//  2. runs check_program and check_alloc, and compares their verdict with
//     an independent brute-force statement of the rules of docs/protocol.md
//     ("Validation"): accepted exactly when no rule is broken, and rejected
//     only with invalid_argument (out_of_memory for alloc capacity) and a
//     message that starts with a field path.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "request.hpp"
#include "validate.hpp"

using namespace zyx;

namespace {

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz_program: %s\n", what.c_str());
  std::abort();
}

// ---- generation ----------------------------------------------------------------

struct Gen {
  FuzzedDataProvider& f;
  DeviceDesc d;
  uint32_t nparams = 0;

  template <typename T>
  T pick(std::initializer_list<T> v) {
    return *(v.begin() + f.ConsumeIntegralInRange<size_t>(0, v.size() - 1));
  }
  uint32_t upto(uint32_t n) { return f.ConsumeIntegralInRange<uint32_t>(0, n); }

  CoreRange range(uint32_t rows, uint32_t cols) {
    uint32_t r0 = upto(rows), c0 = upto(cols);
    uint32_t r1 = r0 + upto(2), c1 = c0 + upto(3);
    if (f.ConsumeIntegralInRange(0, 15) == 0) std::swap(r0, r1);
    return CoreRange{{r0, c0}, {r1, c1}};
  }
  CoreRangeSet set(uint32_t rows, uint32_t cols) {
    CoreRangeSet s;
    for (uint32_t i = 0, n = pick<uint32_t>({1, 1, 1, 2, 3, 0}); i < n; i++) s.ranges.push_back(range(rows, cols));
    return s;
  }
  CoreRangeSet grid_set() { return set(d.grid.rows - 1, d.grid.cols - 1); }

  ArgEntry arg() {
    ArgEntry e;
    e.kind = static_cast<ArgKind>(upto(11));
    e.value = f.ConsumeIntegral<uint32_t>();
    e.param = upto(nparams);
    e.page = upto(40);
    e.core = {upto(d.grid.rows), upto(d.grid.cols)};
    // The parser fills only the fields of the kind; keep the rest 0.
    if (e.kind != ArgKind::Const) e.value = 0;
    bool has_param = e.kind != ArgKind::Const && e.kind != ArgKind::CoreNocX && e.kind != ArgKind::CoreNocY;
    if (!has_param) e.param = 0;
    if (e.kind != ArgKind::BankId && e.kind != ArgKind::BankNocX && e.kind != ArgKind::BankNocY) e.page = 0;
    if (e.kind != ArgKind::CoreNocX && e.kind != ArgKind::CoreNocY) e.core = {};
    return e;
  }
  std::vector<ArgEntry> args(uint32_t n) {
    std::vector<ArgEntry> out;
    for (uint32_t i = 0, k = upto(n); i < k; i++) out.push_back(arg());
    return out;
  }

  BufferSpec spec() {
    BufferSpec s;
    s.page_size = pick<uint64_t>({2048, 2048, 64, 32, 1, 0, uint64_t{1} << 32});
    s.placement = f.ConsumeBool() ? Placement::Dram : Placement::L1;
    s.layout = static_cast<BufferLayout>(upto(3));
    if (s.layout != BufferLayout::Interleaved) {
      ShardSpec sh;
      sh.cores = s.placement == Placement::L1 ? grid_set() : set(0, d.dram_banks);
      sh.shape[0] = upto(4);
      sh.shape[1] = upto(4);
      sh.tensor[0] = upto(8);
      sh.tensor[1] = upto(8);
      if (f.ConsumeBool()) sh.shape[1] = sh.tensor[1];
      if (f.ConsumeBool()) sh.shape[0] = sh.tensor[0];
      sh.orientation = f.ConsumeBool() ? ShardOrientation::RowMajor : ShardOrientation::ColMajor;
      s.shard = sh;
    }
    return s;
  }

  ProgramDesc program() {
    ProgramDesc p;
    p.name = "fuzz";
    nparams = upto(5);
    for (uint32_t i = 0; i < nparams; i++)
      p.params.push_back(ParamDesc{"p" + std::to_string(i), static_cast<ParamKind>(upto(2)), "f32"});
    for (uint32_t i = 0, n = upto(3); i < n; i++) p.buffers.push_back(BufferDecl{upto(nparams), spec()});
    for (uint32_t i = 0, n = upto(2); i < n; i++)
      p.include_files.push_back(IncludeFile{
          pick<const char*>({"a.h", "inc/b.h", "a.h", "/abs.h", "a/../b.h", "a//b.h", "./c.h", "", "d/"}), "//"});
    for (uint32_t i = 0, n = pick<uint32_t>({1, 2, 3, 4, 5, 0}); i < n; i++) {
      KernelDesc k;
      k.name = "k" + std::to_string(i);
      k.processor = static_cast<Processor>(upto(2));
      k.noc = k.processor == Processor::Compute ? 0 : pick<uint32_t>({0, 1, 0, 1, 2});
      k.cores = grid_set();
      k.source = "src";
      for (uint32_t j = 0, m = upto(2); j < m; j++)
        k.defines[pick<const char*>({"X", "Y", "1Y", "_Z", ""})] = pick<const char*>({"1", "", "a\nb"});
      k.compile_args = args(3);
      std::map<std::string, ArgEntry> named;
      for (uint32_t j = 0, m = upto(2); j < m; j++) named[pick<const char*>({"n", "m2", "bad name", "_k", "9"})] = arg();
      for (auto& kv : named) k.named_compile_args.push_back(kv);
      k.common_args = args(2);
      for (uint32_t j = 0, m = upto(3); j < m; j++) k.runtime_args.push_back(CoreArgs{grid_set(), args(3)});
      if (k.processor == Processor::Compute) {
        k.compute.math_fidelity = static_cast<MathFidelity>(upto(3));
        k.compute.fp32_dest_acc = f.ConsumeBool();
        k.compute.math_approx_mode = f.ConsumeBool();
        k.compute.bfp8_pack_precise = f.ConsumeBool();
      }
      p.kernels.push_back(std::move(k));
    }
    for (uint32_t i = 0, n = upto(3); i < n; i++) {
      CBConfig cb;
      cb.cores = grid_set();
      cb.total_bytes = pick<uint32_t>({8192, 2048, 64, 0, 1400 * 1024, 700 * 1024});
      for (uint32_t j = 0, m = pick<uint32_t>({1, 2, 3, 0}); j < m; j++) {
        CBIndexDesc x;
        x.index = pick<uint32_t>({0, 1, 2, 16, 31, 32, 0, 1});
        x.format = pick<DataFormat>({DataFormat::Float16_b, DataFormat::Float32, DataFormat::Bfp8_b, DataFormat::UInt8});
        x.page_bytes = pick<uint32_t>({64, 1024, 2048, 3000, 0});
        x.tile_rows = pick<uint32_t>({32, 32, 16, 1, 2, 3});
        x.tile_cols = pick<uint32_t>({32, 32, 16, 8});
        cb.indices.push_back(x);
      }
      if (f.ConsumeIntegralInRange(0, 3) == 0) cb.buffer_param = upto(nparams);
      p.cbs.push_back(std::move(cb));
    }
    for (uint32_t i = 0, n = upto(3); i < n; i++)
      p.semaphores.push_back(SemaphoreDesc{grid_set(), pick<uint32_t>({0, 1, 0, 2, 17}), f.ConsumeIntegral<uint32_t>()});
    return p;
  }
};

// ---- the request, written by hand ----------------------------------------------

json set_json(const CoreRangeSet& s) {
  json a = json::array();
  for (const auto& r : s.ranges) a.push_back({r.start.row, r.start.col, r.end.row, r.end.col});
  return a;
}

json arg_json(const ArgEntry& e) {
  json j = {{"kind", name_in(kArgKindNames, e.kind, "?")}};
  switch (e.kind) {
    case ArgKind::Const:
      j["value"] = e.value;
      break;
    case ArgKind::CoreNocX:
    case ArgKind::CoreNocY:
      j["core"] = {e.core.row, e.core.col};
      break;
    case ArgKind::BankId:
    case ArgKind::BankNocX:
    case ArgKind::BankNocY:
      j["param"] = e.param;
      j["page"] = e.page;
      break;
    default:
      j["param"] = e.param;
  }
  return j;
}

json args_json(const std::vector<ArgEntry>& v) {
  json a = json::array();
  for (const auto& e : v) a.push_back(arg_json(e));
  return a;
}

json spec_json(const BufferSpec& s) {
  const char* layouts[] = {"interleaved", "height_sharded", "width_sharded", "block_sharded"};
  json j = {{"page_size", s.page_size},
            {"placement", s.placement == Placement::Dram ? "dram" : "l1"},
            {"layout", layouts[static_cast<int>(s.layout)]}};
  if (s.shard)
    j["shard"] = {{"cores", set_json(s.shard->cores)},
                  {"shape", {s.shard->shape[0], s.shard->shape[1]}},
                  {"tensor", {s.shard->tensor[0], s.shard->tensor[1]}},
                  {"orientation", s.shard->orientation == ShardOrientation::RowMajor ? "row_major" : "col_major"}};
  return j;
}

std::string request_line(const ProgramDesc& p) {
  const char* kinds[] = {"global", "global_mut", "variable"};
  const char* procs[] = {"riscv_0", "riscv_1", "compute"};
  const char* fids[] = {"LoFi", "HiFi2", "HiFi3", "HiFi4"};
  json j = {{"id", 5}, {"cmd", "compile"}, {"name", p.name}};
  j["params"] = json::array();
  for (const auto& x : p.params) j["params"].push_back({{"name", x.name}, {"kind", kinds[static_cast<int>(x.kind)]}, {"dtype", x.dtype}});
  j["buffers"] = json::array();
  for (const auto& b : p.buffers) {
    json s = spec_json(b.spec);
    s["param"] = b.param;
    j["buffers"].push_back(s);
  }
  j["include_files"] = json::array();
  for (const auto& i : p.include_files) j["include_files"].push_back({{"path", i.path}, {"source", i.source}});
  j["kernels"] = json::array();
  for (const auto& k : p.kernels) {
    json kj = {{"name", k.name}, {"processor", procs[static_cast<int>(k.processor)]}, {"cores", set_json(k.cores)}, {"source", k.source}};
    if (k.processor != Processor::Compute) kj["noc"] = k.noc;
    kj["defines"] = json::object();
    for (const auto& [n, v] : k.defines) kj["defines"][n] = v;
    kj["compile_args"] = args_json(k.compile_args);
    kj["named_compile_args"] = json::object();
    for (const auto& [n, e] : k.named_compile_args) kj["named_compile_args"][n] = arg_json(e);
    kj["common_args"] = args_json(k.common_args);
    kj["runtime_args"] = json::array();
    for (const auto& ca : k.runtime_args) kj["runtime_args"].push_back({{"cores", set_json(ca.cores)}, {"args", args_json(ca.args)}});
    if (k.processor == Processor::Compute)
      kj["compute_config"] = {{"math_fidelity", fids[static_cast<int>(k.compute.math_fidelity)]},
                              {"fp32_dest_acc", k.compute.fp32_dest_acc},
                              {"math_approx_mode", k.compute.math_approx_mode},
                              {"bfp8_pack_precise", k.compute.bfp8_pack_precise}};
    j["kernels"].push_back(kj);
  }
  j["cbs"] = json::array();
  for (const auto& cb : p.cbs) {
    json c = {{"cores", set_json(cb.cores)}, {"total_bytes", cb.total_bytes}, {"indices", json::array()}};
    for (const auto& x : cb.indices)
      c["indices"].push_back({{"index", x.index}, {"format", data_format_name(x.format)}, {"page_bytes", x.page_bytes},
                              {"tile", {x.tile_rows, x.tile_cols}}});
    c["buffer"] = cb.buffer_param ? json(*cb.buffer_param) : json(nullptr);
    j["cbs"].push_back(c);
  }
  j["semaphores"] = json::array();
  for (const auto& s : p.semaphores) j["semaphores"].push_back({{"cores", set_json(s.cores)}, {"id", s.id}, {"initial", s.initial}});
  return j.dump();
}

bool same_set(const CoreRangeSet& a, const CoreRangeSet& b) {
  if (a.ranges.size() != b.ranges.size()) return false;
  for (size_t i = 0; i < a.ranges.size(); i++)
    if (!(a.ranges[i].start == b.ranges[i].start) || !(a.ranges[i].end == b.ranges[i].end)) return false;
  return true;
}
bool same_arg(const ArgEntry& a, const ArgEntry& b) {
  return a.kind == b.kind && a.value == b.value && a.param == b.param && a.page == b.page && a.core == b.core;
}
bool same_args(const std::vector<ArgEntry>& a, const std::vector<ArgEntry>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (!same_arg(a[i], b[i])) return false;
  return true;
}

void compare(const ProgramDesc& a, const ProgramDesc& b) {
  auto need = [](bool ok, const char* what) {
    if (!ok) broken(std::string("the parsed program differs from the one written: ") + what);
  };
  need(a.name == b.name && a.params.size() == b.params.size(), "params");
  for (size_t i = 0; i < a.params.size(); i++)
    need(a.params[i].name == b.params[i].name && a.params[i].kind == b.params[i].kind && a.params[i].dtype == b.params[i].dtype, "param");
  need(a.buffers.size() == b.buffers.size(), "buffers");
  for (size_t i = 0; i < a.buffers.size(); i++) need(a.buffers[i].param == b.buffers[i].param && a.buffers[i].spec == b.buffers[i].spec, "buffer");
  need(a.include_files.size() == b.include_files.size(), "include_files");
  for (size_t i = 0; i < a.include_files.size(); i++)
    need(a.include_files[i].path == b.include_files[i].path && a.include_files[i].source == b.include_files[i].source, "include");
  need(a.kernels.size() == b.kernels.size(), "kernels");
  for (size_t i = 0; i < a.kernels.size(); i++) {
    const KernelDesc &x = a.kernels[i], &y = b.kernels[i];
    need(x.name == y.name && x.processor == y.processor && x.noc == y.noc, "kernel name, processor or noc");
    need(same_set(x.cores, y.cores) && x.source == y.source && x.defines == y.defines, "kernel cores, source or defines");
    need(same_args(x.compile_args, y.compile_args) && same_args(x.common_args, y.common_args), "kernel compile or common args");
    need(x.named_compile_args.size() == y.named_compile_args.size(), "named args");
    for (size_t j = 0; j < x.named_compile_args.size(); j++)
      need(x.named_compile_args[j].first == y.named_compile_args[j].first &&
               same_arg(x.named_compile_args[j].second, y.named_compile_args[j].second),
           "named arg");
    need(x.runtime_args.size() == y.runtime_args.size(), "runtime args");
    for (size_t j = 0; j < x.runtime_args.size(); j++)
      need(same_set(x.runtime_args[j].cores, y.runtime_args[j].cores) && same_args(x.runtime_args[j].args, y.runtime_args[j].args),
           "runtime args entry");
    need(x.compute.math_fidelity == y.compute.math_fidelity && x.compute.fp32_dest_acc == y.compute.fp32_dest_acc &&
             x.compute.math_approx_mode == y.compute.math_approx_mode &&
             x.compute.bfp8_pack_precise == y.compute.bfp8_pack_precise,
         "compute config");
  }
  need(a.cbs.size() == b.cbs.size(), "cbs");
  for (size_t i = 0; i < a.cbs.size(); i++) {
    const CBConfig &x = a.cbs[i], &y = b.cbs[i];
    need(same_set(x.cores, y.cores) && x.total_bytes == y.total_bytes && x.buffer_param == y.buffer_param &&
             x.indices.size() == y.indices.size(),
         "cb");
    for (size_t j = 0; j < x.indices.size(); j++)
      need(x.indices[j].index == y.indices[j].index && x.indices[j].format == y.indices[j].format &&
               x.indices[j].page_bytes == y.indices[j].page_bytes && x.indices[j].tile_rows == y.indices[j].tile_rows &&
               x.indices[j].tile_cols == y.indices[j].tile_cols,
           "cb index");
  }
  need(a.semaphores.size() == b.semaphores.size(), "semaphores");
  for (size_t i = 0; i < a.semaphores.size(); i++)
    need(same_set(a.semaphores[i].cores, b.semaphores[i].cores) && a.semaphores[i].id == b.semaphores[i].id &&
             a.semaphores[i].initial == b.semaphores[i].initial,
         "semaphore");
}

// ---- the rules, by brute force ---------------------------------------------------

bool meets(const CoreRange& a, const CoreRange& b) {
  return a.start.row <= b.end.row && b.start.row <= a.end.row && a.start.col <= b.end.col && b.start.col <= a.end.col;
}
bool sets_meet(const CoreRangeSet& a, const CoreRangeSet& b) {
  for (const auto& x : a.ranges)
    for (const auto& y : b.ranges)
      if (meets(x, y)) return true;
  return false;
}
// A set is well-formed in a rows x cols grid.
bool set_ok(const CoreRangeSet& s, uint32_t rows, uint32_t cols) {
  if (s.ranges.empty()) return false;
  for (size_t i = 0; i < s.ranges.size(); i++) {
    const CoreRange& r = s.ranges[i];
    if (r.start.row > r.end.row || r.start.col > r.end.col || r.end.row >= rows || r.end.col >= cols) return false;
    for (size_t j = 0; j < i; j++)
      if (meets(r, s.ranges[j])) return false;
  }
  return true;
}
bool ident(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

bool spec_ok(const BufferSpec& s, const DeviceDesc& d) {
  if (s.page_size == 0 || s.page_size > UINT32_MAX) return false;
  if (!s.shard) return true;
  const ShardSpec& sh = *s.shard;
  bool l1 = s.placement == Placement::L1;
  if (!set_ok(sh.cores, l1 ? d.grid.rows : 1, l1 ? d.grid.cols : d.dram_banks)) return false;
  if (!sh.shape[0] || !sh.shape[1] || !sh.tensor[0] || !sh.tensor[1]) return false;
  if (s.layout == BufferLayout::HeightSharded && sh.shape[1] != sh.tensor[1]) return false;
  if (s.layout == BufferLayout::WidthSharded && sh.shape[0] != sh.tensor[0]) return false;
  return ceil_div(sh.tensor[0], sh.shape[0]) * ceil_div(sh.tensor[1], sh.shape[1]) <= sh.cores.size();
}

bool path_ok(const std::string& p) {
  if (p.empty() || p[0] == '/') return false;
  std::string comp;
  for (size_t i = 0; i <= p.size(); i++) {
    if (i == p.size() || p[i] == '/') {
      if (comp.empty() || comp == "." || comp == "..") return false;
      comp.clear();
    } else {
      comp += p[i];
    }
  }
  return true;
}

// valid says whether the program breaks no rule.
bool valid(const ProgramDesc& p, const DeviceDesc& d) {
  const uint32_t R = d.grid.rows, C = d.grid.cols;
  std::vector<const BufferSpec*> decl(p.params.size(), nullptr);
  for (const auto& b : p.buffers) {
    if (b.param >= p.params.size() || !p.params[b.param].is_buffer() || decl[b.param] || !spec_ok(b.spec, d)) return false;
    decl[b.param] = &b.spec;
  }
  std::set<std::string> paths;
  for (const auto& f : p.include_files)
    if (!path_ok(f.path) || !paths.insert(f.path).second) return false;
  if (p.kernels.empty() || p.kernels.size() > 64) return false;
  auto arg_ok = [&](const ArgEntry& e, bool compile_list) {
    bool has_param = e.kind != ArgKind::Const && e.kind != ArgKind::CoreNocX && e.kind != ArgKind::CoreNocY;
    if (has_param) {
      if (e.param >= p.params.size()) return false;
      if (p.params[e.param].is_buffer() != (e.kind != ArgKind::Param)) return false;
    }
    if (e.kind == ArgKind::Accessor && !compile_list) return false;
    bool layout = e.kind == ArgKind::Accessor || e.kind == ArgKind::BankId || e.kind == ArgKind::BankNocX || e.kind == ArgKind::BankNocY;
    if (layout && !decl[e.param]) return false;
    if ((e.kind == ArgKind::CoreNocX || e.kind == ArgKind::CoreNocY) && (e.core.row >= R || e.core.col >= C)) return false;
    return true;
  };
  for (const auto& k : p.kernels) {
    if (!set_ok(k.cores, R, C)) return false;
    if (k.processor != Processor::Compute && k.noc > 1) return false;
    for (const auto& [n, v] : k.defines)
      if (!ident(n) || v.find_first_of(std::string("\0\n\r", 3)) != std::string::npos) return false;
    for (const auto& e : k.compile_args)
      if (!arg_ok(e, true)) return false;
    for (const auto& [n, e] : k.named_compile_args)
      if (!ident(n) || !arg_ok(e, true)) return false;
    for (const auto& e : k.common_args)
      if (!arg_ok(e, false)) return false;
    for (size_t j = 0; j < k.runtime_args.size(); j++) {
      const auto& ca = k.runtime_args[j];
      if (!set_ok(ca.cores, R, C)) return false;
      for (CoreCoord c : ca.cores.cores())
        if (!k.cores.contains(c)) return false;
      for (size_t i = 0; i < j; i++)
        if (sets_meet(ca.cores, k.runtime_args[i].cores)) return false;
      for (const auto& e : ca.args)
        if (!arg_ok(e, false)) return false;
    }
  }
  for (size_t i = 0; i < p.kernels.size(); i++)
    for (size_t j = 0; j < i; j++)
      if (p.kernels[i].processor == p.kernels[j].processor && sets_meet(p.kernels[i].cores, p.kernels[j].cores)) return false;
  auto tile_ok = [](uint32_t r, uint32_t c) {
    std::set<std::pair<uint32_t, uint32_t>> ok = {{1, 32}, {2, 32}, {4, 32}, {8, 32}, {16, 32}, {32, 32}, {16, 16}, {32, 16}};
    return ok.count({r, c}) > 0;
  };
  for (size_t i = 0; i < p.cbs.size(); i++) {
    const auto& cb = p.cbs[i];
    if (!set_ok(cb.cores, R, C) || cb.total_bytes == 0 || cb.indices.empty()) return false;
    std::set<uint32_t> idx;
    for (const auto& x : cb.indices)
      if (x.index > 31 || x.page_bytes == 0 || cb.total_bytes % x.page_bytes || !tile_ok(x.tile_rows, x.tile_cols) ||
          !idx.insert(x.index).second)
        return false;
    if (cb.buffer_param) {
      uint32_t b = *cb.buffer_param;
      if (b >= p.params.size() || !p.params[b].is_buffer() || !decl[b] || decl[b]->placement != Placement::L1) return false;
      if (decl[b]->shard) {
        const ShardSpec& sh = *decl[b]->shard;
        auto holders = sh.cores.cores(sh.orientation == ShardOrientation::ColMajor);
        holders.resize(std::min<uint64_t>(holders.size(), ceil_div(sh.tensor[0], sh.shape[0]) * ceil_div(sh.tensor[1], sh.shape[1])));
        for (CoreCoord c : cb.cores.cores()) {
          bool held = false;
          for (CoreCoord h : holders) held = held || h == c;
          if (!held) return false;
        }
      }
    }
    for (size_t j = 0; j < i; j++) {
      if (!sets_meet(cb.cores, p.cbs[j].cores)) continue;
      for (const auto& x : cb.indices)
        for (const auto& y : p.cbs[j].indices)
          if (x.index == y.index) return false;
    }
  }
  uint64_t have = d.l1_size - d.l1_unreserved_base;
  for (uint32_t r = 0; r < R; r++)
    for (uint32_t c = 0; c < C; c++) {
      uint64_t used = 0;
      for (const auto& cb : p.cbs)
        if (!cb.buffer_param && cb.cores.contains({r, c})) used += ceil_div(cb.total_bytes, d.l1_alignment) * d.l1_alignment;
      if (used > have) return false;
    }
  for (size_t i = 0; i < p.semaphores.size(); i++) {
    const auto& s = p.semaphores[i];
    if (!set_ok(s.cores, R, C) || s.id >= d.semaphores) return false;
    // CreateSemaphore: the smallest id used by no earlier semaphore that
    // shares a core with this set.
    std::set<uint32_t> used;
    for (size_t j = 0; j < i; j++)
      if (sets_meet(s.cores, p.semaphores[j].cores)) used.insert(p.semaphores[j].id);
    uint32_t expect = 0;
    while (used.count(expect)) expect++;
    if (s.id != expect) return false;
  }
  return true;
}

bool alloc_ok(uint64_t size, const BufferSpec& s, const DeviceDesc& d) {
  if (size == 0 || !spec_ok(s, d)) return false;
  uint64_t pages = ceil_div(size, s.page_size);
  if (pages > UINT32_MAX) return false;
  if (s.shard && uint64_t{s.shard->tensor[0]} * s.shard->tensor[1] < pages) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider f(data, size);
  Gen g{f, {}};
  DeviceDesc& d = g.d;
  d.grid.rows = f.ConsumeIntegralInRange<uint32_t>(1, 8);
  d.grid.cols = f.ConsumeIntegralInRange<uint32_t>(1, 8);
  d.dram_banks = f.ConsumeIntegralInRange<uint32_t>(1, 12);
  d.dram_bank_size = uint64_t{1} << 20;
  d.semaphores = f.ConsumeIntegralInRange<uint32_t>(1, 16);
  d.l1_size = 1464 * 1024;
  d.l1_unreserved_base = 100 * 1024;
  d.l1_alignment = 16;
  for (uint32_t r = 0; r < d.grid.rows; r++)
    for (uint32_t c = 0; c < d.grid.cols; c++) d.l1_bank_cores.push_back({r, c});

  ProgramDesc p = g.program();
  uint64_t id = 0;
  Request req;
  try {
    req = parse_request(request_line(p), &id);
  } catch (const Error& e) {
    broken(std::string("a program written by the rules does not parse: ") + e.what());
  }
  compare(p, std::get<ProgramDesc>(req.body));

  bool want = valid(p, d);
  bool accepted = true;
  try {
    check_program(p, d);
  } catch (const Error& e) {
    accepted = false;
    std::string m = e.what();
    if (e.code != "invalid_argument" || m.rfind("compile.", 0) != 0) broken("rejected with " + e.code + ": " + m);
    if (want) broken("a valid program was rejected: " + m);
  }
  if (accepted && !want) broken("an invalid program was accepted");

  uint64_t asize = f.ConsumeIntegralInRange<uint64_t>(0, 1 << 16);
  BufferSpec s = g.spec();
  bool alloc_want = alloc_ok(asize, s, d);
  try {
    check_alloc(asize, s, d);
    if (!alloc_want) broken("an invalid alloc was accepted");
  } catch (const Error& e) {
    std::string m = e.what();
    if (e.code == "out_of_memory") {
      if (!alloc_want) broken("an invalid alloc was out_of_memory before invalid_argument: " + m);
    } else if (e.code != "invalid_argument" || m.rfind("alloc", 0) != 0) {
      broken("alloc rejected with " + e.code + ": " + m);
    } else if (alloc_want) {
      broken("a valid alloc was rejected: " + m);
    }
  }
  return 0;
}
