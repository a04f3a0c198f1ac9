#include "validate.hpp"

#include <algorithm>
#include <bitset>
#include <map>
#include <cctype>
#include <set>


namespace zyx {

std::string core_str(CoreCoord c) { return "(" + std::to_string(c.row) + ", " + std::to_string(c.col) + ")"; }

bool is_c_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); i++) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

uint64_t l1_share_per_core(uint64_t size, const BufferSpec& spec, const DeviceDesc& d) {
  uint64_t align = d.l1_alignment ? d.l1_alignment : 1;
  uint64_t page = (spec.page_size + align - 1) / align * align;
  if (spec.shard) return uint64_t{spec.shard->shape[0]} * spec.shard->shape[1] * page;
  uint64_t banks = d.l1_bank_cores.empty() ? 1 : d.l1_bank_cores.size();
  uint64_t pages = spec.page_size ? (size + spec.page_size - 1) / spec.page_size : 0;
  return (pages + banks - 1) / banks * page;
}

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& msg) {
  throw Error("invalid_argument", where + ": " + msg);
}

std::string idx(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

std::string range_str(const CoreRange& r) {
  return "[" + std::to_string(r.start.row) + ", " + std::to_string(r.start.col) + ", " + std::to_string(r.end.row) +
         ", " + std::to_string(r.end.col) + "]";
}

// Grid is a rows x cols array of per-core scratch state. Stamps tell apart
// the sets being checked without clearing between them.
struct Grid {
  uint32_t rows = 0, cols = 0;
  const char* what = "the worker grid";  // for messages
  size_t cell(CoreCoord c) const { return size_t{c.row} * cols + c.col; }
  size_t cells() const { return size_t{rows} * cols; }
};

class SetChecker {
 public:
  explicit SetChecker(const Grid& g) : g_(g), stamp_(g.cells(), 0), owner_(g.cells(), 0) {}

  // check applies C1-C4 to one core range set: not empty; each range
  // ordered, inside the grid, overlapping no earlier range of the set.
  template <typename Where>
  void check(const CoreRangeSet& s, Where where) {
    if (s.ranges.empty()) fail(where(), "an empty core range set (give at least one range [r0, c0, r1, c1])");
    gen_++;
    for (size_t i = 0; i < s.ranges.size(); i++) {
      const CoreRange& r = s.ranges[i];
      if (r.start.row > r.end.row || r.start.col > r.end.col)
        fail(idx(where(), i), "core range " + range_str(r) + " is not ordered (r0 <= r1 and c0 <= c1)");
      if (r.end.row >= g_.rows || r.end.col >= g_.cols)
        fail(idx(where(), i), "core range " + range_str(r) + " is outside " + g_.what + " of " + std::to_string(g_.rows) +
                                  " x " + std::to_string(g_.cols));
      for (uint32_t row = r.start.row; row <= r.end.row; row++)
        for (uint32_t col = r.start.col; col <= r.end.col; col++) {
          size_t c = g_.cell({row, col});
          if (stamp_[c] == gen_)
            fail(idx(where(), i), "core " + core_str({row, col}) + " is also in range [" + std::to_string(owner_[c]) +
                                      "] of the same set (ranges of a set must not overlap)");
          stamp_[c] = gen_;
          owner_[c] = static_cast<uint32_t>(i);
        }
    }
  }

 private:
  const Grid& g_;
  std::vector<uint64_t> stamp_;
  std::vector<uint32_t> owner_;
  uint64_t gen_ = 0;
};

// Marks records, per core, which entry (1-based) of a list claims it.
template <typename F>
void for_each_core(const CoreRangeSet& s, F f) {
  for (const auto& r : s.ranges)
    for (uint32_t row = r.start.row; row <= r.end.row; row++)
      for (uint32_t col = r.start.col; col <= r.end.col; col++) f(CoreCoord{row, col});
}

const char* param_kind_name(ParamKind k) { return name_in(kParamKindNames, k, "?"); }

const char* arg_kind_name(ArgKind k) { return name_in(kArgKindNames, k, "?"); }

// The spec checks S1-S5 shared by alloc and compile.buffers.
void check_spec(const BufferSpec& s, const DeviceDesc& d, const std::string& where) {
  if (s.page_size == 0) fail(where + ".page_size", "must be > 0");
  if (s.page_size > UINT32_MAX) fail(where + ".page_size", std::to_string(s.page_size) + " is past 32 bits");
  if (!s.shard) return;
  const ShardSpec& sh = *s.shard;
  std::string sp = where + ".shard";
  Grid g;
  if (s.placement == Placement::L1) {
    g.rows = d.grid.rows;
    g.cols = d.grid.cols;
  } else {
    g.rows = 1;
    g.cols = d.dram_banks;
    g.what = "the DRAM banks (a DRAM shard grid is [0, b] for bank b)";
  }
  SetChecker(g).check(sh.cores, [&] { return sp + ".cores"; });
  if (sh.shape[0] == 0 || sh.shape[1] == 0) fail(sp + ".shape", "both dimensions must be > 0");
  if (sh.tensor[0] == 0 || sh.tensor[1] == 0) fail(sp + ".tensor", "both dimensions must be > 0");
  // Shards as tt-metal's ShardSpecBuffer takes them: any shape, the last
  // shards partial (page_order_view). Height sharding deals pages out in
  // shard rows of shape[1] pages; where the tensor's pages are not whole
  // such rows, tt-metal's mapping of the partial last shard loses pages, so
  // that one spec is refused.
  uint64_t tensor_pages = uint64_t{sh.tensor[0]} * sh.tensor[1];
  if (s.layout == BufferLayout::HeightSharded && sh.shape[1] != sh.tensor[1] && tensor_pages % sh.shape[1] != 0)
    fail(sp + ".shape", "a height-sharded buffer deals its " + std::to_string(tensor_pages) +
                            " pages out in shard rows of shape[1] = " + std::to_string(sh.shape[1]) +
                            " pages, which do not divide them (the last shard would lose pages)");
  ShardSpec view = page_order_view(s);
  uint64_t shards = (uint64_t{view.tensor[0]} + view.shape[0] - 1) / view.shape[0] *
                    ((uint64_t{view.tensor[1]} + view.shape[1] - 1) / view.shape[1]);
  if (shards > sh.cores.size())
    fail(sp + ".cores", "the tensor makes " + std::to_string(shards) + " shards but the shard grid has " +
                            std::to_string(sh.cores.size()) + " cores");
}

// The cores that hold shards of a sharded spec, in shard order.
std::vector<CoreCoord> shard_cores(const BufferSpec& spec) {
  ShardSpec sh = page_order_view(spec);
  auto cores = sh.cores.cores(sh.orientation == ShardOrientation::ColMajor);
  uint64_t shards = (uint64_t{sh.tensor[0]} + sh.shape[0] - 1) / sh.shape[0] *
                    ((uint64_t{sh.tensor[1]} + sh.shape[1] - 1) / sh.shape[1]);
  if (shards < cores.size()) cores.resize(shards);
  return cores;
}

enum class ArgList { Compile, Common, Runtime };

struct ProgramCtx {
  const ProgramDesc& p;
  const DeviceDesc& d;
  ProgramChecks& out;
};

// The arg entry checks A1-A6.
template <typename Where>
void check_arg(const ArgEntry& e, ArgList list, ProgramCtx& ctx, Where where) {
  const char* kind = arg_kind_name(e.kind);
  bool needs_param = e.kind != ArgKind::Const && e.kind != ArgKind::CoreNocX && e.kind != ArgKind::CoreNocY &&
                     e.kind != ArgKind::SemaphoreAddr;
  if (needs_param) {
    if (e.param >= ctx.p.params.size())
      fail(where() + ".param", "is " + std::to_string(e.param) + ", but the program has " +
                                   std::to_string(ctx.p.params.size()) + " params");
    const ParamDesc& pd = ctx.p.params[e.param];
    bool want_buffer = e.kind != ArgKind::Param;
    if (pd.is_buffer() != want_buffer)
      fail(where() + ".param", "names param " + std::to_string(e.param) + " (" + pd.name + ", " +
                                   param_kind_name(pd.kind) + "), but kind " + kind + " needs a " +
                                   (want_buffer ? "buffer (global or global_mut)" : "variable") + " param");
    // An arg word is 32 bits: a wider variable would be cut.
    if (e.kind == ArgKind::Param && (pd.dtype == "u64" || pd.dtype == "i64" || pd.dtype == "f64"))
      fail(where() + ".param", "names param " + std::to_string(e.param) + " (" + pd.name + ", " + pd.dtype +
                                   "): an arg word is 32 bits; pass a 32-bit variable");
  }
  if (e.kind == ArgKind::Accessor && list != ArgList::Compile)
    fail(where() + ".kind", "accessor entries expand to compile-time words: they belong in compile_args or named_compile_args");
  bool needs_decl = e.kind == ArgKind::Accessor || e.kind == ArgKind::BankId || e.kind == ArgKind::BankNocX ||
                    e.kind == ArgKind::BankNocY;
  if (needs_decl && !ctx.out.decls[e.param])
    fail(where() + ".param", std::string("kind ") + kind + " depends on the buffer's layout: declare param " +
                                 std::to_string(e.param) + " (" + ctx.p.params[e.param].name + ") in compile.buffers");
  if ((e.kind == ArgKind::CoreNocX || e.kind == ArgKind::CoreNocY) &&
      (e.core.row >= ctx.d.grid.rows || e.core.col >= ctx.d.grid.cols))
    fail(where() + ".core", "core " + core_str(e.core) + " is outside the worker grid of " +
                                std::to_string(ctx.d.grid.rows) + " x " + std::to_string(ctx.d.grid.cols));
  if (e.kind == ArgKind::SemaphoreAddr && e.value >= ctx.d.semaphores)
    fail(where() + ".semaphore",
         "is " + std::to_string(e.value) + "; a core has " + std::to_string(ctx.d.semaphores) + " semaphores");
  if (!needs_param) return;
  ParamUse& u = ctx.out.uses[e.param];
  switch (e.kind) {
    case ArgKind::BufferAddr:
      u.addr = true;
      break;
    case ArgKind::BufferSize:
      u.size = true;
      break;
    case ArgKind::BufferPages:
      u.pages = true;
      break;
    case ArgKind::PageSize:
      u.page_size = true;
      break;
    case ArgKind::BankId:
    case ArgKind::BankNocX:
    case ArgKind::BankNocY:
      if (!u.bank || e.page > u.max_bank_page) {
        u.max_bank_page = e.page;
        u.bank_where = where() + ".page";
      }
      u.bank = true;
      break;
    default:
      break;
  }
}

template <typename Where>
void check_args(const std::vector<ArgEntry>& args, ArgList list, ProgramCtx& ctx, Where where) {
  for (size_t i = 0; i < args.size(); i++) check_arg(args[i], list, ctx, [&] { return idx(where(), i); });
}

bool tile_ok(uint32_t rows, uint32_t cols) {
  bool rows_ok = rows == 1 || rows == 2 || rows == 4 || rows == 8 || rows == 16 || rows == 32;
  if (cols == 32) return rows_ok;
  if (cols == 16) return rows == 16 || rows == 32;
  return false;
}

void check_include_path(const std::string& path, const std::string& where) {
  if (path.empty()) fail(where, "an include file needs a path");
  if (path.find('\0') != std::string::npos) fail(where, "the path holds a NUL byte");
  if (path.size() > 1024) fail(where, "the path is longer than 1024 bytes");
  if (path.front() == '/') fail(where, "\"" + path + "\" is absolute; include paths are relative to the kernel directory");
  size_t start = 0;
  for (;;) {
    size_t slash = path.find('/', start);
    std::string comp = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (comp.empty() || comp == "." || comp == "..")
      fail(where, "\"" + path + "\" has an empty, \".\" or \"..\" component; give a plain relative path");
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
}

}  // namespace

namespace {

// V2: buffer declarations.
void check_buffer_decls(ProgramCtx& ctx, const std::string& w) {
  const ProgramDesc& p = ctx.p;
  for (size_t i = 0; i < p.buffers.size(); i++) {
    const BufferDecl& b = p.buffers[i];
    std::string at = idx(w + ".buffers", i);
    if (b.param >= p.params.size())
      fail(at + ".param", "is " + std::to_string(b.param) + ", but the program has " + std::to_string(p.params.size()) +
                              " params");
    if (!p.params[b.param].is_buffer())
      fail(at + ".param", "names param " + std::to_string(b.param) + " (" + p.params[b.param].name +
                              "), a variable; only buffer params have a layout");
    if (ctx.out.decls[b.param])
      fail(at + ".param", "param " + std::to_string(b.param) + " (" + p.params[b.param].name + ") is declared twice");
    check_spec(b.spec, ctx.d, at);
    ctx.out.decls[b.param] = b.spec;
  }
}

// V3: include files.
void check_include_files(const ProgramDesc& p, const std::string& w) {
  std::set<std::string> paths;
  for (size_t i = 0; i < p.include_files.size(); i++) {
    std::string at = idx(w + ".include_files", i) + ".path";
    check_include_path(p.include_files[i].path, at);
    if (!paths.insert(p.include_files[i].path).second)
      fail(at, "\"" + p.include_files[i].path + "\" is given twice");
  }
}

// A kernel's path in the include tree: a plain relative path of the
// characters a file name in a kernel tree uses, since the builder names it
// to the compiler in an #include (a quote or a backslash there would end or
// change the name). A file of the include tree at the same path must be the
// kernel itself, as must another kernel at that path: one path, one file.
void check_kernel_path(const KernelDesc& kd, const ProgramDesc& p, const std::string& at) {
  check_include_path(kd.path, at);
  for (char c : kd.path)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string("._+-/").find(c) == std::string::npos)
      fail(at, "\"" + kd.path + "\" holds a character other than letters, digits and ._+-/");
  for (const IncludeFile& f : p.include_files)
    if (f.path == kd.path && f.source != kd.source)
      fail(at, "\"" + kd.path + "\" is also an include file with other text; a path is one file");
  for (const KernelDesc& o : p.kernels)
    if (&o != &kd && o.path == kd.path && o.source != kd.source)
      fail(at, "\"" + kd.path + "\" is also the path of the " + o.name + " kernel, with other text");
}

// Per core, stamped by kernel index + 1: whether the core is one of the
// kernel's, and which runtime_args entry (+ 1) has claimed it.
struct RuntimeArgCores {
  explicit RuntimeArgCores(size_t cells) : in_kernel(cells, 0), owner(cells, 0), stamp(cells, 0) {}
  std::vector<uint64_t> in_kernel;
  std::vector<uint32_t> owner;
  std::vector<uint64_t> stamp;
};

// V5: the runtime args of kernel k: each entry's cores are the kernel's,
// each core in one entry at most; then the entries' args.
void check_runtime_args(const KernelDesc& kd, size_t k, ProgramCtx& ctx, const Grid& grid, SetChecker& sets,
                        RuntimeArgCores& rt, const std::string& kw) {
  for (size_t j = 0; j < kd.runtime_args.size(); j++) {
    const CoreArgs& ca = kd.runtime_args[j];
    std::string rw = idx(kw + ".runtime_args", j);
    sets.check(ca.cores, [&] { return rw + ".cores"; });
    for (size_t r = 0; r < ca.cores.ranges.size(); r++) {
      const CoreRange& cr = ca.cores.ranges[r];
      for (uint32_t row = cr.start.row; row <= cr.end.row; row++)
        for (uint32_t col = cr.start.col; col <= cr.end.col; col++) {
          size_t c = grid.cell({row, col});
          if (rt.in_kernel[c] != k + 1)
            fail(idx(rw + ".cores", r), "core " + core_str({row, col}) + " is not one of the kernel's cores");
          if (rt.stamp[c] == k + 1)
            fail(idx(rw + ".cores", r), "core " + core_str({row, col}) + " already has runtime args from runtime_args[" +
                                            std::to_string(rt.owner[c] - 1) + "]");
          rt.stamp[c] = k + 1;
          rt.owner[c] = static_cast<uint32_t>(j + 1);
        }
    }
    check_args(ca.args, ArgList::Runtime, ctx, [&] { return rw + ".args"; });
  }
}

// The one bound of a CB index, wherever a program names a CB.
void check_cb_index(uint32_t index, const std::string& w) {
  if (index >= kCircularBuffersPerCore)
    fail(w, "is " + std::to_string(index) + "; CB indices are 0-" + std::to_string(kCircularBuffersPerCore - 1));
}

// V10: the names of the program's dataflow buffers (CB indices) and
// semaphores: C identifiers, each naming one index (id) across the program.
void check_resource_name(std::map<std::string, uint32_t>& seen, const std::string& n, uint32_t value,
                         const std::string& what, const std::string& at) {
  if (n.empty()) return;
  if (!is_c_identifier(n)) fail(at, "\"" + n + "\" is not a C identifier");
  auto [it, fresh] = seen.emplace(n, value);
  if (!fresh && it->second != value)
    fail(at, what + " \"" + n + "\" already names " + std::to_string(it->second) + "; one name names one " + what);
}

void check_program_names(const ProgramDesc& p, const std::string& w) {
  std::map<std::string, uint32_t> cbs, sems;
  for (size_t i = 0; i < p.cbs.size(); i++)
    for (size_t j = 0; j < p.cbs[i].indices.size(); j++)
      check_resource_name(cbs, p.cbs[i].indices[j].name, p.cbs[i].indices[j].index, "dataflow buffer",
                          idx(idx(w + ".cbs", i) + ".indices", j) + ".name");
  for (size_t i = 0; i < p.semaphores.size(); i++)
    check_resource_name(sems, p.semaphores[i].name, p.semaphores[i].id, "semaphore", idx(w + ".semaphores", i) + ".name");
}

bool has_cb_named(const ProgramDesc& p, const std::string& n) {
  for (const auto& cb : p.cbs)
    for (const auto& x : cb.indices)
      if (x.name == n) return true;
  return false;
}

bool has_semaphore_named(const ProgramDesc& p, const std::string& n) {
  return std::any_of(p.semaphores.begin(), p.semaphores.end(), [&](const SemaphoreDesc& s) { return s.name == n; });
}

// V10: a kernel's Metal 2.0 names share one namespace, args::; each binding
// names a resource the program has; the named args come first in the
// lists they name.
void check_kernel_args_names(const KernelDesc& kd, const std::string& kw) {
  const KernelBindings& b = kd.bindings;
  std::set<std::string> names;
  auto name = [&](const std::string& n, const std::string& at) {
    if (!is_c_identifier(n)) fail(at, "\"" + n + "\" is not a C identifier");
    if (!names.insert(n).second)
      fail(at, "args::" + n + " is named twice in this kernel (its named runtime, common and compile args share args::)");
  };
  for (size_t i = 0; i < b.runtime_arg_names.size(); i++) name(b.runtime_arg_names[i], idx(kw + ".named_runtime_args", i));
  for (size_t i = 0; i < b.common_arg_names.size(); i++) name(b.common_arg_names[i], idx(kw + ".named_common_args", i));
  if (b.any())
    for (const auto& [n, e] : kd.named_compile_args) name(n, kw + ".named_compile_args." + n);
  // Less the tensor addresses lower_bindings placed there.
  size_t given = kd.common_args.size() - std::min(kd.common_args.size(), b.tensor_slots.size());
  if (given < b.common_arg_names.size())
    fail(kw + ".common_args", "has " + std::to_string(given) + " words; the kernel names " +
                                  std::to_string(b.common_arg_names.size()) + " (named_common_args), which come first");
  for (size_t j = 0; j < kd.runtime_args.size(); j++)
    if (kd.runtime_args[j].args.size() < b.runtime_arg_names.size())
      fail(idx(kw + ".runtime_args", j) + ".args",
           "has " + std::to_string(kd.runtime_args[j].args.size()) + " words; the kernel names " +
               std::to_string(b.runtime_arg_names.size()) + " (named_runtime_args), which come first");
}

void check_kernel_bindings(const ProgramDesc& p, const KernelDesc& kd, const std::string& kw) {
  const KernelBindings& b = kd.bindings;
  check_kernel_args_names(kd, kw);
  auto accessor = [](const std::string& n, const std::string& at) {
    if (!is_c_identifier(n)) fail(at, "accessor name \"" + n + "\" is not a C identifier");
  };
  for (const auto& [acc, target] : b.dfbs) {
    accessor(acc, kw + ".dfbs." + acc);
    if (!has_cb_named(p, target))
      fail(kw + ".dfbs." + acc, "binds dataflow buffer \"" + target + "\", but no CB index of cbs has that name");
  }
  for (const auto& [acc, target] : b.semaphores) {
    accessor(acc, kw + ".semaphore_bindings." + acc);
    if (!has_semaphore_named(p, target))
      fail(kw + ".semaphore_bindings." + acc, "binds semaphore \"" + target + "\", but no semaphore has that name");
  }
  for (const auto& binding : b.tensors) {
    // Named members, not a structured binding: clang 15 (the fuzz build's
    // compiler) cannot capture a binding in the lambda.
    const std::string& acc = binding.first;
    const std::string& target = binding.second;
    std::string at = kw + ".tensors." + acc;
    accessor(acc, at);
    auto it = std::find_if(p.params.begin(), p.params.end(), [&](const ParamDesc& q) { return q.name == target; });
    if (it == p.params.end()) fail(at, "binds buffer \"" + target + "\", but the program has no param of that name");
    if (!it->is_buffer()) fail(at, "binds param \"" + target + "\", a variable; a tensor accessor binds a buffer param");
  }
}

// V4-V5: kernels, one by one.
void check_kernels(ProgramCtx& ctx, const Grid& grid, SetChecker& sets, const std::string& w) {
  const ProgramDesc& p = ctx.p;
  if (p.kernels.empty() || p.kernels.size() > 64)
    fail(w + ".kernels", "a program has 1 to 64 kernels, got " + std::to_string(p.kernels.size()));
  RuntimeArgCores rt(grid.cells());
  for (size_t k = 0; k < p.kernels.size(); k++) {
    const KernelDesc& kd = p.kernels[k];
    std::string kw = idx(w + ".kernels", k);
    sets.check(kd.cores, [&] { return kw + ".cores"; });
    if (kd.processor != Processor::Compute && kd.noc > 1) fail(kw + ".noc", "is " + std::to_string(kd.noc) + "; NOCs are 0 and 1");
    for (const auto& [name, value] : kd.defines) {
      if (!is_c_identifier(name)) fail(kw + ".defines." + name, "a define name must be a C identifier");
      if (value.find_first_of(std::string("\0\n\r", 3)) != std::string::npos)
        fail(kw + ".defines." + name, "a define value must not hold a NUL byte or a line break");
    }
    if (!kd.path.empty()) check_kernel_path(kd, p, kw + ".path");
    check_args(kd.compile_args, ArgList::Compile, ctx, [&] { return kw + ".compile_args"; });
    for (const auto& [name, e] : kd.named_compile_args) {
      std::string nw = kw + ".named_compile_args." + name;
      // Any string names a named compile arg, as on tt-metal ("",
      // "!@#$%^&*()"); a Metal 2.0 kernel's, which are args::NAME too, are
      // identifiers (V10).
      if (e.kind == ArgKind::Accessor)
        fail(nw + ".kind", "an accessor expands to several compile-time words; a named compile arg holds one");
      check_arg(e, ArgList::Compile, ctx, [&] { return nw; });
    }
    check_args(kd.common_args, ArgList::Common, ctx, [&] { return kw + ".common_args"; });
    for (size_t j = 0; j < kd.compute.unpack_to_dest_fp32.size(); j++)
      check_cb_index(kd.compute.unpack_to_dest_fp32[j], idx(kw + ".compute_config.unpack_to_dest_fp32", j));
    for_each_core(kd.cores, [&](CoreCoord c) { rt.in_kernel[grid.cell(c)] = k + 1; });
    check_runtime_args(kd, k, ctx, grid, sets, rt, kw);
    check_kernel_bindings(p, kd, kw);
  }
}

// V6: at most one kernel per processor on a core.
void check_one_kernel_per_processor(const ProgramDesc& p, const Grid& grid, const std::string& w) {
  std::vector<uint32_t> proc_owner(grid.cells() * 3, 0);  // kernel index + 1
  for (size_t k = 0; k < p.kernels.size(); k++) {
    const KernelDesc& kd = p.kernels[k];
    size_t slot = static_cast<size_t>(kd.processor);
    for_each_core(kd.cores, [&](CoreCoord c) {
      uint32_t& o = proc_owner[grid.cell(c) * 3 + slot];
      if (o)
        fail(idx(w + ".kernels", k) + ".cores", "core " + core_str(c) + " already runs kernels[" + std::to_string(o - 1) +
                                                    "] (" + p.kernels[o - 1].name + ") on " + processor_name(kd.processor) +
                                                    "; a core runs at most one kernel per processor");
      o = static_cast<uint32_t>(k + 1);
    });
  }
}

// V7: the indices of one CB config.
void check_cb_indices(const CBConfig& cb, const std::string& cw) {
  std::bitset<kCircularBuffersPerCore> seen;
  for (size_t j = 0; j < cb.indices.size(); j++) {
    const CBIndexDesc& x = cb.indices[j];
    std::string xw = idx(cw + ".indices", j);
    check_cb_index(x.index, xw + ".index");
    if (x.page_bytes == 0) fail(xw + ".page_bytes", "must be > 0");
    if (cb.total_bytes % x.page_bytes != 0)
      fail(xw + ".page_bytes", std::to_string(x.page_bytes) + " does not divide total_bytes " +
                                   std::to_string(cb.total_bytes));
    if (!tile_ok(x.tile_rows, x.tile_cols))
      fail(xw + ".tile", "[" + std::to_string(x.tile_rows) + ", " + std::to_string(x.tile_cols) +
                             "] is not a tile shape (rows 1, 2, 4, 8, 16 or 32 with 32 cols; 16 or 32 rows with 16 cols)");
    if (seen[x.index]) fail(xw + ".index", "CB " + std::to_string(x.index) + " is given twice in this config");
    seen[x.index] = true;
  }
}

// V7: a CB config on a buffer param: a declared L1 buffer holding a shard
// on every core of the CB; records the largest CB on the param.
void check_cb_buffer(const CBConfig& cb, ProgramCtx& ctx, const Grid& grid, const std::string& cw) {
  const ProgramDesc& p = ctx.p;
  uint32_t bp = *cb.buffer_param;
  std::string bw = cw + ".buffer";
  if (bp >= p.params.size())
    fail(bw, "is " + std::to_string(bp) + ", but the program has " + std::to_string(p.params.size()) + " params");
  if (!p.params[bp].is_buffer()) fail(bw, "names param " + std::to_string(bp) + " (" + p.params[bp].name + "), a variable");
  const auto& decl = ctx.out.decls[bp];
  if (!decl)
    fail(bw, "a CB on a buffer depends on its layout: declare param " + std::to_string(bp) + " (" + p.params[bp].name +
                 ") in compile.buffers");
  if (decl->placement != Placement::L1)
    fail(bw, "param " + std::to_string(bp) + " (" + p.params[bp].name + ") is declared in DRAM; a CB sits on an l1 buffer");
  if (decl->shard) {
    std::vector<uint8_t> holds(grid.cells(), 0);
    for (CoreCoord c : shard_cores(*decl)) holds[grid.cell(c)] = 1;
    for_each_core(cb.cores, [&](CoreCoord c) {
      if (!holds[grid.cell(c)])
        fail(bw, "core " + core_str(c) + " of the CB holds no shard of param " + std::to_string(bp) + " (" +
                     p.params[bp].name + ")");
    });
  }
  ParamUse& u = ctx.out.uses[bp];
  if (!u.cb || cb.total_bytes > u.cb_bytes) {
    u.cb_bytes = cb.total_bytes;
    u.cb_where = cw + ".total_bytes";
  }
  u.cb = true;
}

// V7: circular buffers; returns, by core, the L1 above the unreserved base
// that the CBs not on a buffer reach.
std::vector<uint64_t> check_cbs(ProgramCtx& ctx, const Grid& grid, SetChecker& sets, const std::string& w) {
  const ProgramDesc& p = ctx.p;
  std::vector<uint32_t> cb_owner(grid.cells() * kCircularBuffersPerCore, 0);  // config index + 1
  std::vector<uint64_t> l1_used(grid.cells(), 0);
  uint64_t align = ctx.d.l1_alignment ? ctx.d.l1_alignment : 1;
  for (size_t i = 0; i < p.cbs.size(); i++) {
    const CBConfig& cb = p.cbs[i];
    std::string cw = idx(w + ".cbs", i);
    sets.check(cb.cores, [&] { return cw + ".cores"; });
    if (cb.total_bytes == 0) fail(cw + ".total_bytes", "must be > 0");
    if (cb.indices.empty()) fail(cw + ".indices", "a CB config needs at least one index");
    check_cb_indices(cb, cw);
    if (cb.buffer_param) check_cb_buffer(cb, ctx, grid, cw);
    for_each_core(cb.cores, [&](CoreCoord c) {
      for (const CBIndexDesc& x : cb.indices) {
        uint32_t& o = cb_owner[grid.cell(c) * kCircularBuffersPerCore + x.index];
        if (o)
          fail(cw + ".indices", "CB " + std::to_string(x.index) + " on core " + core_str(c) + " is already configured by cbs[" +
                                    std::to_string(o - 1) + "]");
        o = static_cast<uint32_t>(i + 1);
      }
    });
    // Laid out as tt-metal places CBs: a config at one address on all its
    // cores, above the CBs already on any of them.
    if (cb.buffer_param) continue;
    uint64_t top = 0;
    for_each_core(cb.cores, [&](CoreCoord c) { top = std::max(top, l1_used[grid.cell(c)]); });
    uint64_t end = (top + align - 1) / align * align + cb.total_bytes;
    for_each_core(cb.cores, [&](CoreCoord c) { l1_used[grid.cell(c)] = end; });
  }
  return l1_used;
}

// V8: the CBs that are not on a buffer fit the usable L1 of each core.
void check_cb_l1(const DeviceDesc& d, const Grid& grid, const std::vector<uint64_t>& l1_used, const std::string& w) {
  if (d.l1_size <= d.l1_unreserved_base) return;
  uint64_t have = d.l1_size - d.l1_unreserved_base;
  for (uint32_t r = 0; r < grid.rows; r++)
    for (uint32_t c = 0; c < grid.cols; c++)
      if (l1_used[grid.cell({r, c})] > have)
        fail(w + ".cbs", "the CBs of core " + core_str({r, c}) + " need " + std::to_string(l1_used[grid.cell({r, c})]) +
                             " bytes of L1; a core has " + std::to_string(have) + " above the reserved base");
}

// V9: semaphores, with ids as tt-metal's CreateSemaphore assigns them.
void check_semaphores(const ProgramDesc& p, const DeviceDesc& d, const Grid& grid, SetChecker& sets,
                      const std::string& w) {
  if (d.semaphores > 64) throw Error("internal", "the device layer reports more than 64 semaphores per core");
  std::vector<uint64_t> sem_used(grid.cells(), 0);
  for (size_t i = 0; i < p.semaphores.size(); i++) {
    const SemaphoreDesc& s = p.semaphores[i];
    std::string sw = idx(w + ".semaphores", i);
    sets.check(s.cores, [&] { return sw + ".cores"; });
    if (s.id >= d.semaphores)
      fail(sw + ".id", "is " + std::to_string(s.id) + "; a core has " + std::to_string(d.semaphores) + " semaphores");
    uint64_t taken = 0;
    for_each_core(s.cores, [&](CoreCoord c) {
      if (sem_used[grid.cell(c)] & (uint64_t{1} << s.id))
        fail(sw + ".id", "semaphore " + std::to_string(s.id) + " is already used on core " + core_str(c));
      taken |= sem_used[grid.cell(c)];
    });
    uint32_t expect = 0;
    while (expect < d.semaphores && (taken & (uint64_t{1} << expect))) expect++;
    if (s.id != expect)
      fail(sw + ".id", "is " + std::to_string(s.id) + ", but CreateSemaphore gives these cores id " + std::to_string(expect) +
                           " (the smallest id free on all of them, in declaration order)");
    for_each_core(s.cores, [&](CoreCoord c) { sem_used[grid.cell(c)] |= uint64_t{1} << s.id; });
  }
}

}  // namespace

ProgramChecks check_program(const ProgramDesc& p, const DeviceDesc& d, const std::string& w) {
  ProgramChecks out;
  out.params = p.params;
  out.decls.resize(p.params.size());
  out.uses.resize(p.params.size());
  ProgramCtx ctx{p, d, out};
  Grid grid{d.grid.rows, d.grid.cols};
  SetChecker sets(grid);
  check_buffer_decls(ctx, w);
  check_include_files(p, w);
  check_program_names(p, w);
  check_kernels(ctx, grid, sets, w);
  check_one_kernel_per_processor(p, grid, w);
  std::vector<uint64_t> l1_used = check_cbs(ctx, grid, sets, w);
  check_cb_l1(d, grid, l1_used, w);
  out.cb_l1 = std::move(l1_used);
  check_semaphores(p, d, grid, sets, w);
  return out;
}

void check_alloc(uint64_t size, const BufferSpec& spec, const DeviceDesc& d, const std::string& w) {
  if (size == 0) fail(w + ".size", "must be > 0");
  check_spec(spec, d, w);
  uint64_t pages = size / spec.page_size + (size % spec.page_size != 0);
  if (pages > UINT32_MAX)
    fail(w + ".size", std::to_string(pages) + " pages of " + std::to_string(spec.page_size) + " bytes are past 32 bits");
  if (spec.shard) {
    const ShardSpec& sh = *spec.shard;
    uint64_t tensor_pages = uint64_t{sh.tensor[0]} * sh.tensor[1];
    if (tensor_pages < pages)
      fail(w + ".shard.tensor", "the tensor holds " + std::to_string(tensor_pages) + " pages; the buffer has " +
                                    std::to_string(pages));
  }
  auto oom = [&](const std::string& msg) { throw Error("out_of_memory", w + ": " + msg); };
  if (spec.placement == Placement::Dram) {
    if (d.dram_banks && d.dram_bank_size) {
      uint64_t capacity = d.dram_bank_size > UINT64_MAX / d.dram_banks ? UINT64_MAX : d.dram_bank_size * d.dram_banks;
      if (size > capacity)
        oom("a buffer of " + std::to_string(size) + " bytes is larger than the device DRAM (" + std::to_string(capacity) +
            " bytes)");
    }
  } else if (d.l1_size > d.l1_unreserved_base) {
    uint64_t have = d.l1_size - d.l1_unreserved_base;
    uint64_t share = l1_share_per_core(size, spec, d);
    if (share > have)
      oom("the buffer needs " + std::to_string(share) + " bytes of L1 per core; a core has " + std::to_string(have) +
          " above the reserved base");
  }
}

namespace {

// On each core, the program's CBs not on a buffer and the shares of the
// run's L1 buffers (each buffer once) fit the usable L1.
void check_run_l1(const ProgramChecks& c, const std::vector<RunArgIn>& args, const std::vector<const BufferInfo*>& bufs,
                  const DeviceDesc& d) {
  if (d.l1_size <= d.l1_unreserved_base || c.cb_l1.empty()) return;
  uint64_t have = d.l1_size - d.l1_unreserved_base;
  std::vector<uint64_t> used = c.cb_l1;
  std::vector<uint64_t> seen;
  auto add = [&](CoreCoord core, uint64_t bytes) {
    if (core.row < d.grid.rows && core.col < d.grid.cols) used[size_t{core.row} * d.grid.cols + core.col] += bytes;
  };
  for (size_t i = 0; i < args.size(); i++) {
    const BufferInfo* b = bufs[i];
    if (!b || b->spec.placement != Placement::L1) continue;
    if (std::find(seen.begin(), seen.end(), args[i].value) != seen.end()) continue;
    seen.push_back(args[i].value);
    uint64_t share = l1_share_per_core(b->size, b->spec, d);
    if (b->spec.shard)
      for (CoreCoord core : shard_cores(b->spec)) add(core, share);
    else
      for (CoreCoord core : d.l1_bank_cores) add(core, share);
  }
  for (uint32_t r = 0; r < d.grid.rows; r++)
    for (uint32_t col = 0; col < d.grid.cols; col++)
      if (uint64_t n = used[size_t{r} * d.grid.cols + col]; n > have)
        throw Error("out_of_memory", "run: core " + core_str({r, col}) + " needs " + std::to_string(n) +
                                         " bytes of L1 for the program's circular buffers and the run's L1 buffers; " +
                                         std::to_string(have) + " are usable");
}

}  // namespace

namespace {

// A buffer spec in words, for messages: "l1 height_sharded with 64-byte
// pages, shard 1x1 of 4x1 pages on [0, 0, 3, 0] row_major".
std::string spec_str(const BufferSpec& s) {
  std::string o = std::string(name_in(kPlacementNames, s.placement, "?")) + " " +
                  name_in(kBufferLayoutNames, s.layout, "?") + " with " + std::to_string(s.page_size) + "-byte pages";
  if (s.shard) {
    const ShardSpec& sh = *s.shard;
    o += ", shard " + std::to_string(sh.shape[0]) + "x" + std::to_string(sh.shape[1]) + " of " +
         std::to_string(sh.tensor[0]) + "x" + std::to_string(sh.tensor[1]) + " pages on";
    for (const CoreRange& r : sh.cores.ranges) o += " " + range_str(r);
    o += std::string(" ") + name_in(kShardOrientationNames, sh.orientation, "?");
  }
  return o;
}

}  // namespace

void check_run_arg_count(size_t args, size_t params) {
  if (args != params)
    fail("run.args", std::to_string(args) + " args for a program of " + std::to_string(params) + " params");
}

void check_run_arg_kind(size_t i, const ParamDesc& p, bool is_buffer) {
  if (p.is_buffer() != is_buffer)
    fail(idx("run.args", i), "param " + p.name + " is " +
                                 (p.is_buffer() ? "a buffer; give {\"buffer\": id}" : "a variable; give {\"value\": bits}"));
}

void check_buffer_decl(size_t i, const std::string& param, uint64_t buffer, const BufferSpec& spec,
                       const BufferSpec& decl) {
  if (!(spec == decl))
    fail(idx("run.args", i), "buffer " + std::to_string(buffer) + " is " + spec_str(spec) + ", but param " + param +
                                 "'s declaration in compile.buffers is " + spec_str(decl) +
                                 " (placement, layout, page size and shard spec must be equal)");
}

void check_arg_word(const std::string& where, const std::string& what, uint64_t v) {
  if (v > UINT32_MAX) fail(where, what + " is " + std::to_string(v) + ", past the 32-bit kernel argument");
}

void check_bank_page(const std::string& where, uint64_t page, uint64_t pages, const std::string& param) {
  if (page >= pages)
    fail(where, "page " + std::to_string(page) + " is past the end of param " + param + "'s buffer (" +
                    std::to_string(pages) + " pages)");
}

void check_cb_share(const std::string& where, uint64_t cb_bytes, uint64_t share, const std::string& param) {
  if (cb_bytes > share)
    fail(where, std::to_string(cb_bytes) + " is more than the " + std::to_string(share) + " bytes per core of param " +
                    param + "'s L1 buffer");
}

void check_run(const ProgramChecks& c, const std::vector<RunArgIn>& args, const DeviceDesc& d,
               const std::function<const BufferInfo*(uint64_t)>& lookup) {
  check_run_arg_count(args.size(), c.params.size());
  std::vector<const BufferInfo*> bufs(args.size(), nullptr);
  for (size_t i = 0; i < args.size(); i++) {
    check_run_arg_kind(i, c.params[i], args[i].is_buffer);
    if (!args[i].is_buffer) continue;
    bufs[i] = lookup(args[i].value);
    if (!bufs[i])
      throw Error("unknown_buffer", idx("run.args", i) + ": buffer " + std::to_string(args[i].value) +
                                        " does not exist (never allocated, or freed)");
  }
  for (size_t i = 0; i < args.size(); i++)
    if (bufs[i] && c.decls[i]) check_buffer_decl(i, c.params[i].name, args[i].value, bufs[i]->spec, *c.decls[i]);
  for (size_t i = 0; i < args.size(); i++) {
    if (!bufs[i]) continue;
    const ParamUse& u = c.uses[i];
    const BufferInfo& b = *bufs[i];
    const std::string& name = c.params[i].name;
    auto word = [&](bool used, const char* kind, uint64_t v) {
      if (used) check_arg_word(idx("run.args", i), std::string(kind) + " of param " + name, v);
    };
    word(u.addr, "buffer_addr", b.address);
    word(u.size, "buffer_size", b.size);
    word(u.pages, "buffer_pages", b.pages());
    word(u.page_size, "page_size", b.page_size());
    if (u.bank) check_bank_page(u.bank_where, u.max_bank_page, b.pages(), name);
    if (u.cb) check_cb_share(u.cb_where, u.cb_bytes, l1_share_per_core(b.size, b.spec, d), name);
  }
  check_run_l1(c, args, bufs, d);
}

}  // namespace zyx
