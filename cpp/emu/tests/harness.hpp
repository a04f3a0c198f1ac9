// Helpers shared by the kernel tests: building programs, moving typed data
// in and out of emulated buffers.
//
// The one-group shorthand. Most tests describe a program the way protocol v1
// did: one reader, one compute and one writer kernel on a rectangle of cores,
// circular buffers of `pages` pages each, and per-core builtins (core_row,
// core_col, core_index, num_cores) in the arg lists. GroupProgram holds that
// description and one_group_program() turns it into a v2 ProgramDesc:
//
//   GroupProgram p;
//   p.params = {P("in", "global"), P("out", "global_mut")};
//   p.reader.source = ...;  p.reader.runtime_args = {L("buffer_addr", 0), L("core_index")};
//   p.cbs = {CB(0, "Float16_b", 2048, 2)};
//   uint64_t prog = layer.compile(one_group_program(p, rows, cols));
//   layer.run(prog, {Buf(in), Buf(out)}, false);
//
// The reader runs on riscv_0 (NOC 0), the writer on riscv_1 (NOC 1); a
// section with an empty source has no kernel. Builtins become consts per
// core (core_index = row * cols + col within the rectangle, num_cores =
// rows * cols); in compile and common args they take the rectangle's first
// core, as v1 resolved them.
#pragma once

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "device_layer.hpp"
#include "test_util.hpp"
#include "validate.hpp"

namespace zyx_test {

// A device layer sees only requests the server has checked: these run the
// one validator (cpp/src/validate.cpp) first, as the server does, for
// tests of the program's rules.
inline uint64_t checked_compile(zyx::DeviceLayer& layer, const zyx::ProgramDesc& p) {
  zyx::check_program(p, layer.describe());
  return layer.compile(p);
}

inline uint64_t checked_alloc(zyx::DeviceLayer& layer, uint64_t size, const zyx::BufferSpec& spec) {
  zyx::check_alloc(size, spec, layer.describe());
  return layer.alloc(size, spec, nullptr);
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A kernel the C++ and the Go emulator tests share: the source of
// cpp/emu/tests/kernels/<name>.cpp (tt/v2_emulator_test.go reads the same
// files), so that one copy of each kernel serves both. The test targets
// define ZYX_EMU_TEST_KERNELS_DIR (cpp/emu/tests/CMakeLists.txt).
#ifdef ZYX_EMU_TEST_KERNELS_DIR
inline std::string shared_kernel(const std::string& name) {
  return read_text(std::string(ZYX_EMU_TEST_KERNELS_DIR) + "/" + name + ".cpp");
}
#endif

// The text of an example bundle's kernel source: a path inside the bundle,
// or a file of zyx-tt's kernel library (the repository's kernels/) named
// with the "zyx:" prefix, as the bundle loader reads them (docs/programs.md).
#ifdef ZYX_EMU_KERNEL_LIBRARY_DIR
inline std::string bundle_source(const std::string& bundle_dir, const std::string& source) {
  if (source.rfind("zyx:", 0) == 0) return read_text(std::string(ZYX_EMU_KERNEL_LIBRARY_DIR) + "/" + source.substr(4));
  return read_text(bundle_dir + "/" + source);
}

// The include files of the kernel library's include directory, under their
// paths inside it: what a program with a library kernel gets from the bundle
// loader (or a tt.json from "includes": "zyx:tt/include").
inline std::vector<zyx::IncludeFile> library_includes() {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(ZYX_EMU_KERNEL_LIBRARY_DIR) / "tt" / "include";
  std::vector<zyx::IncludeFile> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      out.push_back(zyx::IncludeFile{fs::relative(e.path(), dir).generic_string(), read_text(e.path().string())});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}
#endif

// The number of kernel objects (*.so) in the emulator's cache under root
// (they live in <cache_dir>/emu).
inline size_t count_objects(const std::string& root) {
  std::string dir = root + "/emu";
  size_t n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string s = e->d_name;
      if (s.size() > 3 && s.compare(s.size() - 3, 3, ".so") == 0 && s[0] != '.') n++;
    }
    closedir(d);
  }
  return n;
}

// Removes a directory tree (a test's own cache or scratch directory); a
// failure to remove it fails the test.
inline void remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) throw Failure("cannot remove " + path + ": " + ec.message());
}

// Runs fn in a forked child, for a test that changes what the whole process
// sees (its environment, its limits). A failure in the child is printed as
// "<what> child: <message>" and the child's exit status fails the test.
inline void in_child(const char* what, const std::function<void()>& fn) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int rc = 0;
    try {
      fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s child: %s\n", what, e.what());
      rc = 1;
    }
    _exit(rc);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK_EQ(WEXITSTATUS(status), 0);
}

// Captures what the process writes to fd 2 while fn runs.
inline std::string capture_stderr(const std::function<void()>& fn) {
  char path[] = "/tmp/zyx-emu-stderr-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) throw Failure("mkstemp failed");
  unlink(path);
  std::fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  std::string err;
  try {
    fn();
  } catch (...) {
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    throw;
  }
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  off_t n = lseek(fd, 0, SEEK_END);
  err.resize(static_cast<size_t>(n));
  if (n > 0 && pread(fd, err.data(), err.size(), 0) != n) err.clear();
  close(fd);
  return err;
}

// The DPRINT lines in a run's stderr ("dprint: core (r,c) <processor>: …").
inline std::vector<std::string> dprint_lines(const std::string& err) {
  std::vector<std::string> out;
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("dprint: ", 0) == 0) out.push_back(l);
  return out;
}

// One argument of the shorthand: a v2 entry, or a per-core builtin.
struct Arg {
  enum Builtin { None, CoreRow, CoreCol, CoreIndex, NumCores } builtin = None;
  zyx::ArgEntry entry;
};

// An entry by its protocol kind name ("buffer_addr", "param", "const", …,
// or a builtin: "core_row", "core_col", "core_index", "num_cores"). An
// unknown name gives an entry of no valid kind (for error tests).
inline Arg L(const std::string& kind, uint32_t param = 0, uint32_t value = 0) {
  static const std::map<std::string, zyx::ArgKind> kinds = {
      {"const", zyx::ArgKind::Const},           {"param", zyx::ArgKind::Param},
      {"buffer_addr", zyx::ArgKind::BufferAddr}, {"buffer_size", zyx::ArgKind::BufferSize},
      {"buffer_pages", zyx::ArgKind::BufferPages}, {"page_size", zyx::ArgKind::PageSize},
      {"bank_id", zyx::ArgKind::BankId},         {"bank_noc_x", zyx::ArgKind::BankNocX},
      {"bank_noc_y", zyx::ArgKind::BankNocY},    {"accessor", zyx::ArgKind::Accessor},
  };
  static const std::map<std::string, Arg::Builtin> builtins = {
      {"core_row", Arg::CoreRow}, {"core_col", Arg::CoreCol}, {"core_index", Arg::CoreIndex},
      {"num_cores", Arg::NumCores}};
  Arg a;
  a.entry.param = param;
  a.entry.value = value;
  if (auto b = builtins.find(kind); b != builtins.end()) {
    a.builtin = b->second;
  } else if (auto k = kinds.find(kind); k != kinds.end()) {
    a.entry.kind = k->second;
  } else {
    a.entry.kind = static_cast<zyx::ArgKind>(255);
  }
  return a;
}
inline Arg C(uint32_t value) { return L("const", 0, value); }
inline Arg E(const zyx::ArgEntry& e) {
  Arg a;
  a.entry = e;
  return a;
}
// Bank entries: the bank (id / NOC x / NOC y) holding page `page` of buffer param `param`.
inline Arg Bank(const char* kind, uint32_t param, uint32_t page) {
  Arg a = L(kind, param);
  a.entry.page = page;
  return a;
}
inline Arg CoreNoc(bool x, uint32_t row, uint32_t col) {
  Arg a;
  a.entry.kind = x ? zyx::ArgKind::CoreNocX : zyx::ArgKind::CoreNocY;
  a.entry.core = {row, col};
  return a;
}

struct Section {
  std::string source;
  std::string path;  // the kernel's path in the include tree ("" for none)
  std::map<std::string, std::string> defines;
  std::vector<Arg> compile_args, runtime_args, common_args;
  std::vector<std::pair<std::string, Arg>> named_compile_args;
};

// A circular buffer of the shorthand: one index, `pages` pages.
struct CB1 {
  uint32_t index = 0;
  std::string format;
  uint32_t page_bytes = 0, pages = 0;
};
inline CB1 CB(uint32_t index, const std::string& format, uint32_t page_bytes, uint32_t pages) {
  return CB1{index, format, page_bytes, pages};
}

struct GroupProgram {
  std::string name;
  std::vector<zyx::ParamDesc> params;
  Section reader, compute, writer;
  std::vector<CB1> cbs;
  std::string math_fidelity = "HiFi4";
  bool fp32_dest_acc = false;
  bool bfp8_pack_precise = false;
  bool math_approx_mode = false;
  bool dst_full_sync = false;
  std::vector<uint32_t> unpack_to_dest_fp32;
  std::vector<zyx::BufferDecl> buffers;
  std::vector<zyx::IncludeFile> include_files;
  std::vector<std::pair<uint32_t, uint32_t>> semaphores;  // (id, initial) on every core
};

inline zyx::CoreRangeSet rect(uint32_t r0, uint32_t c0, uint32_t r1, uint32_t c1) {
  zyx::CoreRangeSet s;
  s.ranges.push_back(zyx::CoreRange{{r0, c0}, {r1, c1}});
  return s;
}

inline zyx::ProgramDesc one_group_program(const GroupProgram& p, uint32_t rows, uint32_t cols, uint32_t row0 = 0,
                                          uint32_t col0 = 0) {
  zyx::ProgramDesc d;
  d.name = p.name;
  d.params = p.params;
  d.buffers = p.buffers;
  d.include_files = p.include_files;
  zyx::CoreRangeSet all;
  if (rows > 0 && cols > 0) all = rect(row0, col0, row0 + rows - 1, col0 + cols - 1);
  auto fixed = [&](const Arg& a, uint32_t r, uint32_t c) {
    zyx::ArgEntry e = a.entry;
    if (a.builtin == Arg::None) return e;
    e.kind = zyx::ArgKind::Const;
    e.value = a.builtin == Arg::CoreRow     ? r
              : a.builtin == Arg::CoreCol   ? c
              : a.builtin == Arg::CoreIndex ? r * cols + c
                                            : rows * cols;
    return e;
  };
  auto list = [&](const std::vector<Arg>& v) {
    std::vector<zyx::ArgEntry> out;
    for (const Arg& a : v) out.push_back(fixed(a, 0, 0));
    return out;
  };
  struct Which {
    const Section* s;
    const char* name;
    zyx::Processor proc;
    uint32_t noc;
  };
  for (const Which& w : {Which{&p.reader, "reader", zyx::Processor::Riscv0, 0},
                         Which{&p.compute, "compute", zyx::Processor::Compute, 0},
                         Which{&p.writer, "writer", zyx::Processor::Riscv1, 1}}) {
    if (w.s->source.empty()) continue;
    zyx::KernelDesc k;
    k.name = w.name;
    k.processor = w.proc;
    k.noc = w.noc;
    k.cores = all;
    k.source = w.s->source;
    k.path = w.s->path;
    k.defines = w.s->defines;
    k.compile_args = list(w.s->compile_args);
    for (auto& [n, a] : w.s->named_compile_args) k.named_compile_args.emplace_back(n, fixed(a, 0, 0));
    k.common_args = list(w.s->common_args);
    bool per_core = false;
    for (const Arg& a : w.s->runtime_args) per_core |= a.builtin != Arg::None;
    if (!w.s->runtime_args.empty()) {
      if (!per_core) {
        k.runtime_args.push_back(zyx::CoreArgs{all, list(w.s->runtime_args)});
      } else {
        for (uint32_t r = 0; r < rows; r++)
          for (uint32_t c = 0; c < cols; c++) {
            zyx::CoreArgs ca;
            ca.cores = rect(row0 + r, col0 + c, row0 + r, col0 + c);
            for (const Arg& a : w.s->runtime_args) ca.args.push_back(fixed(a, r, c));
            k.runtime_args.push_back(std::move(ca));
          }
      }
    }
    k.compute.fp32_dest_acc = p.fp32_dest_acc;
    k.compute.bfp8_pack_precise = p.bfp8_pack_precise;
    k.compute.math_approx_mode = p.math_approx_mode;
    k.compute.dst_full_sync = p.dst_full_sync;
    k.compute.unpack_to_dest_fp32 = p.unpack_to_dest_fp32;
    k.compute.math_fidelity = p.math_fidelity == "LoFi"    ? zyx::MathFidelity::LoFi
                              : p.math_fidelity == "HiFi2" ? zyx::MathFidelity::HiFi2
                              : p.math_fidelity == "HiFi3" ? zyx::MathFidelity::HiFi3
                                                           : zyx::MathFidelity::HiFi4;
    d.kernels.push_back(std::move(k));
  }
  for (const CB1& cb : p.cbs) {
    zyx::CBConfig c;
    c.cores = all;
    c.total_bytes = cb.page_bytes * cb.pages;
    zyx::CBIndexDesc x;
    x.index = cb.index;
    x.format = zyx::parse_data_format(cb.format).value_or(zyx::DataFormat::Invalid);
    x.page_bytes = cb.page_bytes;
    c.indices.push_back(x);
    d.cbs.push_back(std::move(c));
  }
  for (auto [id, initial] : p.semaphores) d.semaphores.push_back(zyx::SemaphoreDesc{all, id, initial});
  return d;
}

inline zyx::ParamDesc P(const std::string& name, const std::string& kind, const std::string& dtype = "f32") {
  zyx::ParamDesc p;
  p.name = name;
  p.kind = kind == "variable" ? zyx::ParamKind::Variable
           : kind == "global_mut" ? zyx::ParamKind::GlobalMut
                                  : zyx::ParamKind::Global;
  p.dtype = dtype;
  return p;
}

inline zyx::RunArg Buf(uint64_t id) {
  zyx::RunArg a;
  a.is_buffer = true;
  a.buffer = id;
  return a;
}
inline zyx::RunArg Val(uint64_t v) {
  zyx::RunArg a;
  a.value = v;
  return a;
}

// Buffer specs.
inline zyx::BufferSpec dram_spec(uint64_t page_size) {
  zyx::BufferSpec s;
  s.page_size = page_size;
  return s;
}
inline zyx::BufferSpec l1_spec(uint64_t page_size) {
  zyx::BufferSpec s;
  s.page_size = page_size;
  s.placement = zyx::Placement::L1;
  return s;
}
inline zyx::BufferSpec sharded_spec(zyx::Placement placement, zyx::BufferLayout layout, uint64_t page_size,
                                    const zyx::CoreRangeSet& cores, uint32_t shard_rows, uint32_t shard_cols,
                                    uint32_t tensor_rows, uint32_t tensor_cols,
                                    zyx::ShardOrientation o = zyx::ShardOrientation::RowMajor) {
  zyx::BufferSpec s;
  s.page_size = page_size;
  s.placement = placement;
  s.layout = layout;
  zyx::ShardSpec sh;
  sh.cores = cores;
  sh.shape[0] = shard_rows, sh.shape[1] = shard_cols;
  sh.tensor[0] = tensor_rows, sh.tensor[1] = tensor_cols;
  sh.orientation = o;
  s.shard = sh;
  return s;
}

// ---- building v2 programs directly ----------------------------------------------
// cores_of({{r0, c0, r1, c1}, ...}) is a core range set; kernel() a kernel on
// it (data movement on riscv_1 uses NOC 1); runtime() adds runtime args for
// some of its cores; cb_config() one CB allocation with its indices,
// optionally on a buffer param; decl() a buffer declaration.

inline zyx::CoreRangeSet cores_of(std::initializer_list<std::array<uint32_t, 4>> rs) {
  zyx::CoreRangeSet s;
  for (auto& r : rs) s.ranges.push_back(zyx::CoreRange{{r[0], r[1]}, {r[2], r[3]}});
  return s;
}
inline zyx::CoreRangeSet one_core(uint32_t r, uint32_t c) { return cores_of({{r, c, r, c}}); }

inline std::vector<zyx::ArgEntry> entries(std::initializer_list<Arg> args) {
  std::vector<zyx::ArgEntry> out;
  for (const Arg& a : args) out.push_back(a.entry);
  return out;
}

inline zyx::KernelDesc kernel(const std::string& name, zyx::Processor p, const zyx::CoreRangeSet& cores,
                              const std::string& source) {
  zyx::KernelDesc k;
  k.name = name;
  k.processor = p;
  k.noc = p == zyx::Processor::Riscv1 ? 1 : 0;
  k.cores = cores;
  k.source = source;
  return k;
}

inline void runtime(zyx::KernelDesc& k, const zyx::CoreRangeSet& cores, std::initializer_list<Arg> args) {
  k.runtime_args.push_back(zyx::CoreArgs{cores, entries(args)});
}

inline zyx::CBIndexDesc cb_index(uint32_t index, zyx::DataFormat f, uint32_t page_bytes) {
  zyx::CBIndexDesc x;
  x.index = index;
  x.format = f;
  x.page_bytes = page_bytes;
  return x;
}

inline zyx::CBConfig cb_config(const zyx::CoreRangeSet& cores, uint32_t total, std::vector<zyx::CBIndexDesc> indices,
                               std::optional<uint32_t> buffer = std::nullopt) {
  zyx::CBConfig c;
  c.cores = cores;
  c.total_bytes = total;
  c.indices = std::move(indices);
  c.buffer_param = buffer;
  return c;
}

inline zyx::BufferDecl decl(uint32_t param, const zyx::BufferSpec& spec) { return zyx::BufferDecl{param, spec}; }

template <typename T>
uint64_t upload(zyx::DeviceLayer& layer, const std::vector<T>& v, uint64_t page_size) {
  uint64_t id = layer.alloc(v.size() * sizeof(T), dram_spec(page_size), nullptr);
  layer.write(id, 0, reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(T));
  return id;
}
template <typename T>
uint64_t upload(zyx::DeviceLayer& layer, const std::vector<T>& v, const zyx::BufferSpec& spec) {
  uint64_t id = layer.alloc(v.size() * sizeof(T), spec, nullptr);
  layer.write(id, 0, reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(T));
  return id;
}

template <typename T>
std::vector<T> download(zyx::DeviceLayer& layer, uint64_t id, size_t count) {
  std::vector<T> v(count);
  layer.read(id, 0, reinterpret_cast<uint8_t*>(v.data()), count * sizeof(T));
  return v;
}

// A one-core program whose reader writes `words` 32-bit words to a DRAM
// buffer (its runtime arg 0) and the words it wrote.
inline std::vector<uint32_t> run_reader_words(zyx::DeviceLayer& layer, const std::string& reader, uint32_t words,
                                              std::vector<CB1> cbs = {CB(0, "UInt32", 64, 1)},
                                              std::vector<Arg> compile_args = {}) {
  GroupProgram p;
  p.name = "reader_words";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = reader;
  p.reader.compile_args = std::move(compile_args);
  p.reader.runtime_args = {L("buffer_addr", 0)};
  p.cbs = std::move(cbs);
  uint64_t buf = layer.alloc(4 * words, dram_spec(4 * words), nullptr);
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  layer.run(prog, {Buf(buf)}, false);
  layer.release(prog);
  auto v = download<uint32_t>(layer, buf, words);
  layer.free(buf);
  return v;
}

}  // namespace zyx_test
