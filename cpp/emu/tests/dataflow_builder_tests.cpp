// Tests of the kernel builder (compiler.cpp): the cache is private and
// checked (objects and directories others own or can write are refused, a
// planted symlink is not followed, no shared fallback without HOME), the
// compiler runs in its own process group and dies with the runtime, an
// object exports only its entry points and is unloaded with its layer,
// compile-time args are constant expressions in every form tt-metal has, and
// every slot of the API table an object binds is set.
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <functional>
#include <map>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "emu.hpp"
#include "harness.hpp"
#include "runner.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

std::string make_temp_dir(const std::string& parent, const char* tag) {
  std::string t = parent + "/" + tag + "-XXXXXX";
  std::vector<char> b(t.begin(), t.end());
  b.push_back(0);
  if (!mkdtemp(b.data())) throw Failure("mkdtemp " + t + ": " + std::strerror(errno));
  return b.data();
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string s = e->d_name;
      if (s != "." && s != "..") out.push_back(s);
    }
    closedir(d);
  }
  return out;
}

bool exists(const std::string& p) {
  struct stat st{};
  return lstat(p.c_str(), &st) == 0;
}

// A one-core program whose reader writes a word (compile arg 0 plus the
// named arg "bias") to DRAM: the result shows which object ran.
GroupProgram word_program(const std::string& reader) {
  GroupProgram p;
  p.name = "builder";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = reader;
  p.reader.runtime_args = {L("buffer_addr", 0)};
  p.compute.source = "void kernel_main() {}";
  p.writer.source = "void kernel_main() {}";
  p.cbs = {CB(0, "UInt32", 64, 1)};
  return p;
}

const char* kWriteWord = R"(
#include "dataflow_api.h"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  uint32_t l1 = get_write_ptr(0);
  *reinterpret_cast<volatile uint32_t*>(l1) = get_compile_time_arg_val(0);
  noc_async_write(l1, get_noc_addr_from_bank_id<true>(0, out), 4);
  noc_async_write_barrier();
}
)";

uint32_t run_word(DeviceLayer& layer, const GroupProgram& p) {
  uint64_t buf = layer.alloc(64, dram_spec(64), nullptr);
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  layer.run(prog, {Buf(buf)}, false);
  layer.release(prog);
  auto v = download<uint32_t>(layer, buf, 1);
  layer.free(buf);
  return v[0];
}

// Objects the builder loads: the *.so in <root>/emu.
std::vector<std::string> objects(const std::string& root) {
  std::vector<std::string> out;
  for (auto& n : list_dir(root + "/emu"))
    if (n.size() > 3 && n.compare(n.size() - 3, 3, ".so") == 0 && n[0] != '.') out.push_back(root + "/emu/" + n);
  return out;
}

// A shared object whose constructor writes `marker`: if the builder loads
// it, the marker appears.
std::string build_planted(const std::string& dir, const std::string& marker) {
  std::string src = dir + "/planted.cpp", so = dir + "/planted.so";
  std::ofstream(src) << "#include <cstdio>\n__attribute__((constructor)) static void planted() {"
                        " if (FILE* f = std::fopen(\""
                     << marker << "\", \"w\")) std::fclose(f); }\n";
  std::string cmd = "c++ -shared -fPIC -o '" + so + "' '" + src + "'";
  CHECK(std::system(cmd.c_str()) == 0);
  return so;
}

void copy_file(const std::string& from, const std::string& to) {
  std::string cmd = "cp '" + from + "' '" + to + "'";
  CHECK(std::system(cmd.c_str()) == 0);
}

// ---- compile-time args ----------------------------------------------------

// Positional args as constant expressions (template args, array sizes,
// if constexpr), in #if through KERNEL_COMPILE_TIME_ARG_<i>, and the named
// map. The kernel stores results a host can check.
const char* kCompileArgs = R"(
#include "dataflow_api.h"
template <uint32_t N> struct Fixed { static constexpr uint32_t value = N * 2; };
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  constexpr uint32_t a = get_compile_time_arg_val(0);
  uint32_t sized[get_compile_time_arg_val(1)];
  w[0] = Fixed<a>::value;                       // template argument
  w[1] = sizeof(sized) / sizeof(sized[0]);      // array size
  if constexpr (get_compile_time_arg_val(2) == 5) w[2] = 55; else w[2] = 66;
#if KERNEL_COMPILE_TIME_ARG_2 == 5
  w[3] = 1;
#else
  w[3] = 2;
#endif
  constexpr uint32_t tiles = get_named_compile_time_arg_val("num_tiles");
  static_assert(tiles == 12, "named arg as a constant expression");
  w[4] = tiles + get_named_compile_time_arg_val("bias");
  w[5] = get_ct_arg<1>() + kernel_compile_time_args.size();
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 24);
}
)";

void test_compile_args(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  GroupProgram g = word_program(kCompileArgs);
  g.reader.compile_args = {C(21), C(3), C(5)};
  g.reader.named_compile_args = {{"num_tiles", C(12)}, {"bias", C(100)}};
  uint64_t buf = layer->alloc(64, dram_spec(64), nullptr);
  auto run = [&](const GroupProgram& q) {
    uint64_t prog = layer->compile(one_group_program(q, 1, 1));
    layer->run(prog, {Buf(buf)}, false);
    layer->release(prog);
    return download<uint32_t>(*layer, buf, 6);
  };
  auto v = run(g);
  CHECK_EQ(v[0], 42u);   // Fixed<21>::value
  CHECK_EQ(v[1], 3u);    // array size
  CHECK_EQ(v[2], 55u);   // if constexpr
  CHECK_EQ(v[3], 1u);    // #if KERNEL_COMPILE_TIME_ARG_2 == 5
  CHECK_EQ(v[4], 112u);  // named args
  CHECK_EQ(v[5], 6u);    // get_ct_arg<1>() + kernel_compile_time_args.size()
  // Other values take the other branches; a named arg may come from a param.
  GroupProgram q = g;
  q.params.push_back(P("bias", "variable", "u32"));
  q.reader.compile_args = {C(21), C(3), C(4)};
  q.reader.named_compile_args = {{"num_tiles", C(12)}, {"bias", L("param", 1)}};
  uint64_t prog = layer->compile(one_group_program(q, 1, 1));
  layer->run(prog, {Buf(buf), Val(7)}, false);
  v = download<uint32_t>(*layer, buf, 6);
  CHECK_EQ(v[2], 66u);
  CHECK_EQ(v[3], 2u);
  CHECK_EQ(v[4], 19u);
  layer->release(prog);
  // A name the kernel was not given is a compile error naming the call.
  q = g;
  q.reader.named_compile_args = {{"num_tile", C(12)}, {"bias", C(1)}};
  std::string msg = expect_error("compile_error", [&] { layer->compile(one_group_program(q, 1, 1)); });
  CHECK(msg.find("get_named_compile_time_arg_val") != std::string::npos);
  // Any string names a named arg, as on tt-metal (its named-args test
  // kernel asks for "!@#$%^&*()" and ""): each is its own constant, and a
  // quote, a backslash or a NUL byte in a name stays in that name.
  q = g;
  q.reader.source = R"K(
#include "dataflow_api.h"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  constexpr uint32_t special = get_named_compile_time_arg_val("!@#$%^&*()");
  constexpr uint32_t empty = get_named_compile_time_arg_val("");
  w[0] = special;
  w[1] = empty;
  w[2] = get_named_compile_time_arg_val("a \"quoted\" \\ name");
  w[3] = get_named_compile_time_arg_val(std::string_view("nul\0byte", 8));
  w[4] = get_named_compile_time_arg_val("nul");
  w[5] = 0;
  noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, out), 24);
}
)K";
  q.reader.compile_args = {};
  q.reader.named_compile_args = {{"!@#$%^&*()", C(7)},
                                 {"", C(9)},
                                 {"a \"quoted\" \\ name", C(11)},
                                 {std::string("nul\0byte", 8), C(13)},
                                 {"nul", C(15)}};
  v = run(q);
  CHECK_EQ(v[0], 7u);
  CHECK_EQ(v[1], 9u);
  CHECK_EQ(v[2], 11u);
  CHECK_EQ(v[3], 13u);
  CHECK_EQ(v[4], 15u);
  // An index past the args is a compile error.
  q = g;
  q.reader.source = "void kernel_main() { constexpr uint32_t x = get_compile_time_arg_val(3); (void)x; }";
  expect_error("compile_error", [&] { layer->compile(one_group_program(q, 1, 1)); });
  layer->free(buf);
}
ZYX_TEST(builder, test_compile_args);

// ---- the cache key ---------------------------------------------------------

// Every input of a build changes its key: a property over one mutation per
// BuildSpec field (and per character class a name may hold).
void test_key_covers_inputs(const std::string& cache) {
  emu::KernelBuilder builder(cache, emu::board_preset("n150"));
  std::string source = "void kernel_main() {}", other_source = "void kernel_main() { }";
  std::map<std::string, std::string> defines{{"A", "1"}}, other_defines{{"A", "2"}}, more_defines{{"A", "1"}, {"B", ""}};
  std::string inc_path = "x.h", inc_text = "int x;", other_text = "int y;";
  std::string kpath = "ops/reader.cpp", other_kpath = "ops/kernels/reader.cpp", no_path;
  auto base = [&] {
    emu::BuildSpec s;
    s.name = "reader";
    s.processor = 0;
    s.source = &source;
    s.defines = &defines;
    s.compile_args = {1, 2};
    s.named_args = {{"bias", 3}};
    s.include_files = {{&inc_path, &inc_text}};
    return s;
  };
  std::vector<std::pair<const char*, std::function<void(emu::BuildSpec&)>>> mutations = {
      {"name", [](emu::BuildSpec& s) { s.name = "writer"; }},
      {"name with a line break", [](emu::BuildSpec& s) { s.name = "reader\n#define get_tile_size(cb) 2048u"; }},
      {"name with a quote", [](emu::BuildSpec& s) { s.name = "reader\""; }},
      {"processor", [](emu::BuildSpec& s) { s.processor = 1; }},
      {"noc", [](emu::BuildSpec& s) { s.noc = 1; }},
      {"source", [&](emu::BuildSpec& s) { s.source = &other_source; }},
      {"define value", [&](emu::BuildSpec& s) { s.defines = &other_defines; }},
      {"another define", [&](emu::BuildSpec& s) { s.defines = &more_defines; }},
      {"compile arg", [](emu::BuildSpec& s) { s.compile_args = {1, 3}; }},
      {"compile arg count", [](emu::BuildSpec& s) { s.compile_args = {1, 2, 0}; }},
      {"named arg value", [](emu::BuildSpec& s) { s.named_args = {{"bias", 4}}; }},
      {"named arg name", [](emu::BuildSpec& s) { s.named_args = {{"bias2", 3}}; }},
      {"include text", [&](emu::BuildSpec& s) { s.include_files = {{&inc_path, &other_text}}; }},
      {"include files", [](emu::BuildSpec& s) { s.include_files.clear(); }},
      {"fp32 dest acc", [](emu::BuildSpec& s) { s.fp32_dest_acc = true; }},
      {"math approx", [](emu::BuildSpec& s) { s.math_approx = true; }},
      {"math fidelity", [](emu::BuildSpec& s) { s.math_fidelity = "LoFi"; }},
      {"cb tile size", [](emu::BuildSpec& s) { s.cb_tile_sizes[3] = 2048; }},
      // The kernel's path in the include tree reaches the compiler (the
      // file's place decides what its relative includes find): every path,
      // and the source at a path, is in the key.
      {"path", [&](emu::BuildSpec& s) { s.path = &kpath; }},
      {"another path", [&](emu::BuildSpec& s) { s.path = &other_kpath; }},
      {"source at a path", [&](emu::BuildSpec& s) { s.path = &kpath, s.source = &other_source; }},
      {"path of an include file", [&](emu::BuildSpec& s) { s.path = &inc_path, s.source = &inc_text; }},
      {"include text beside a path", [&](emu::BuildSpec& s) {
         s.path = &kpath;
         s.include_files = {{&inc_path, &other_text}};
       }},
  };
  std::map<std::string, std::string> seen;
  seen[builder.key(base())] = "base";
  for (auto& [what, mutate] : mutations) {
    emu::BuildSpec s = base();
    mutate(s);
    std::string k = builder.key(s);
    if (seen.count(k)) throw Failure(std::string("changing the ") + what + " gives the key of " + seen[k]);
    seen[k] = what;
  }
  // The same spec gives the same key; an empty path is no path.
  CHECK_EQ(builder.key(base()), builder.key(base()));
  emu::BuildSpec empty = base();
  empty.path = &no_path;
  CHECK_EQ(builder.key(empty), builder.key(base()));
  // A path that would change the quoted name it reaches the compiler in, or
  // an include file at the path with other text, is refused, not keyed.
  for (std::string bad : {"ops/\"x.cpp", "ops\\x.cpp", "../x.cpp", "/x.cpp", "a b.cpp", "a\nb.cpp"}) {
    emu::BuildSpec s = base();
    s.path = &bad;
    std::string msg = expect_error("invalid_argument", [&] { builder.key(s); });
    CHECK(msg.find("path") != std::string::npos);
  }
  emu::BuildSpec clash = base();
  clash.path = &inc_path;  // x.h holds inc_text, the kernel source is other
  std::string msg = expect_error("invalid_argument", [&] { builder.key(clash); });
  CHECK(msg.find("also an include file") != std::string::npos);
  // The board is an input too.
  emu::KernelBuilder blackhole(cache, emu::board_preset("p150"));
  CHECK(blackhole.key(base()) != builder.key(base()));
}
ZYX_TEST_CACHE_DIR(builder, test_key_covers_inputs);

// A kernel with a path in the program's include tree is compiled there, as
// tt-metal builds a ttnn kernel inside its source tree: its relative
// includes resolve from its own directory first (a header beside it wins
// over one of that name at the tree's root), then from the tree's root and
// its ttnn/cpp (tt-metal's two roots of a ttnn kernel's includes).
// Without the path the same kernel does not find its "../" include.
void test_kernel_path(const std::string& cache) {
  GroupProgram g = word_program(R"(
#include "dataflow_api.h"
#include "../../kernel_helper_functions/pad_value.hpp"
#include "common.hpp"
#include "ops/shared.hpp"
#include "ttnn/operations/helper.hpp"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  uint32_t l1 = get_write_ptr(0);
  *reinterpret_cast<volatile uint32_t*>(l1) = kPadValue * 1000 + kCommon * 100 + kShared * 10 + kTtnn;
  noc_async_write(l1, get_noc_addr_from_bank_id<true>(0, out), 4);
  noc_async_write_barrier();
}
)");
  const std::string path = "ops/pad/device/kernels/reader.cpp";
  g.include_files = {
      {"ops/pad/kernel_helper_functions/pad_value.hpp", "constexpr uint32_t kPadValue = 7;"},
      {"ops/pad/device/kernels/common.hpp", "constexpr uint32_t kCommon = 4;"},
      {"common.hpp", "constexpr uint32_t kCommon = 9;"},
      {"ops/shared.hpp", "constexpr uint32_t kShared = 2;"},
      {"ttnn/cpp/ttnn/operations/helper.hpp", "constexpr uint32_t kTtnn = 1;"},
  };
  auto layer = make_emu_layer("n150", 0, cache);
  std::string msg = expect_error("compile_error", [&] { layer->compile(one_group_program(g, 1, 1)); });
  CHECK(msg.find("pad_value.hpp") != std::string::npos);
  g.reader.path = path;
  CHECK_EQ(run_word(*layer, g), 7421u);
  // The kernel may also be one of the include files (a bundle whose include
  // directory holds its kernels): the same file, once.
  g.include_files.push_back({path, g.reader.source});
  CHECK_EQ(run_word(*layer, g), 7421u);
  // A compile error names the kernel's file by its path in the tree.
  g.reader.source += "\n#error stop here\n";
  g.include_files.pop_back();
  msg = expect_error("compile_error", [&] { layer->compile(one_group_program(g, 1, 1)); });
  CHECK(msg.find(path + ":") != std::string::npos);
}
ZYX_TEST_CACHE_DIR(builder, test_kernel_path);

// Sets an environment variable for a scope, restoring it after.
struct ScopedEnv {
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) had_ = true, old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }
  const char* name_;
  bool had_ = false;
  std::string old_;
};

void append_line(const std::string& path, const std::string& line) {
  std::ofstream out(path, std::ios::app);
  out << line << "\n";
  CHECK(out.good());
}

// The kernel headers come from two directories, searched in this order: the
// hand-written ones (cpp/emu/include) and the forwarding headers the build
// generates from cpp/emu/forwarding_headers.tsv (tt-metal's include paths).
// Both reach the compiler and every file of both is in the cache key;
// ZYX_EMU_INCLUDE names the pair (':'-separated).
void test_header_dirs(const std::string& cache) {
  std::vector<std::string> dirs = emu::KernelBuilder(cache, emu::board_preset("n150")).include_dirs();
  CHECK_EQ(dirs.size(), size_t(2));
  CHECK(exists(dirs[0] + "/zyx_emu/dataflow.h"));
  CHECK(!exists(dirs[0] + "/dataflow_api.h"));
  CHECK(exists(dirs[1] + "/dataflow_api.h"));
  CHECK(exists(dirs[1] + "/api/compute/eltwise_binary.h"));

  std::string tmp = make_temp_dir(cache, "headers");
  std::string own = tmp + "/own", generated = tmp + "/generated";
  CHECK(std::system(("cp -R '" + dirs[0] + "' '" + own + "' && cp -R '" + dirs[1] + "' '" + generated + "'").c_str()) == 0);
  std::string source = "void kernel_main() {}";
  std::map<std::string, std::string> defines;
  emu::BuildSpec spec;
  spec.name = "reader";
  spec.source = &source;
  spec.defines = &defines;
  auto key_with = [&](const std::string& include) {
    ScopedEnv env("ZYX_EMU_INCLUDE", include);
    return emu::KernelBuilder(cache, emu::board_preset("n150")).key(spec);
  };
  std::string both = own + ":" + generated;
  std::string k0 = key_with(both);
  CHECK_EQ(key_with(both), k0);
  CHECK(key_with(own) != k0);
  append_line(generated + "/dataflow_api.h", "// changed");
  std::string k1 = key_with(both);
  CHECK(k1 != k0);
  append_line(own + "/zyx_emu/common.h", "// changed");
  CHECK(key_with(both) != k1);

  // A kernel that includes "dataflow_api.h" builds through the generated
  // directory, and not without it.
  GroupProgram g = word_program(kWriteWord);
  g.reader.compile_args = {C(7)};
  {
    ScopedEnv env("ZYX_EMU_INCLUDE", both);
    auto layer = make_emu_layer("n150", 0, tmp + "/cache");
    CHECK_EQ(run_word(*layer, g), 7u);
  }
  {
    ScopedEnv env("ZYX_EMU_INCLUDE", own);
    auto layer = make_emu_layer("n150", 0, tmp + "/cache");
    std::string msg = expect_error("compile_error", [&] { layer->compile(one_group_program(g, 1, 1)); });
    CHECK(msg.find("dataflow_api.h") != std::string::npos);
  }
  remove_tree(tmp);
}
ZYX_TEST_CACHE_DIR(builder, test_header_dirs);

// Every slot of the function table handed to kernel objects is set
// (abi_table.cpp): a slot left null would crash the kernel that calls it.
void test_abi_table_complete(const std::string& /*cache*/) {
  const zyx_emu_api* api = emu::kernel_api();
  CHECK_EQ(api->abi_version, uint32_t(ZYX_EMU_ABI_VERSION));
  constexpr size_t first = offsetof(zyx_emu_api, args);
  static_assert((sizeof(zyx_emu_api) - first) % sizeof(void*) == 0, "the table after args holds only pointers");
  const char* slots = reinterpret_cast<const char*>(api) + first;
  for (size_t i = 0; i < (sizeof(zyx_emu_api) - first) / sizeof(void*); i++) {
    void* fn = nullptr;
    std::memcpy(&fn, slots + i * sizeof(void*), sizeof fn);
    if (!fn) throw Failure("zyx_emu_api slot " + std::to_string(i) + " after args is not set");
  }
}
ZYX_TEST(builder, test_abi_table_complete);

// A kernel's name is free text: a line break in it adds no code to the
// kernel, and the object built under it is not served for another name.
void test_name_is_not_code(const std::string& cache) {
  GroupProgram g = word_program(kWriteWord);
  g.reader.compile_args = {C(5)};
  auto run_named = [&](DeviceLayer& layer, const std::string& name) {
    uint64_t buf = layer.alloc(64, dram_spec(64), nullptr);
    ProgramDesc d = one_group_program(g, 1, 1);
    d.kernels[0].name = name;
    uint64_t prog = layer.compile(d);
    layer.run(prog, {Buf(buf)}, false);
    layer.release(prog);
    auto v = download<uint32_t>(layer, buf, 1);
    layer.free(buf);
    return v[0];
  };
  auto layer = make_emu_layer("n150", 0, cache);
  CHECK_EQ(run_named(*layer, "reader\n#define get_compile_time_arg_val(i) 7u\n\\"), 5u);
  CHECK_EQ(run_named(*layer, "reader"), 5u);
  // A new layer on the same cache agrees.
  auto again = make_emu_layer("n150", 0, cache);
  CHECK_EQ(run_named(*again, "reader"), 5u);
  CHECK_EQ(emu::c_string_literal("a\"b\\c\n\x7f"), "\"a\\\"b\\\\c\\012\\177\"");
}
ZYX_TEST_CACHE_DIR(builder, test_name_is_not_code);

// ---- untrusted directories ------------------------------------------------

void test_untrusted_dirs(const std::string& parent) {
  std::string base = make_temp_dir(parent, "dirs");
  // The cache root owned by another user.
  std::string other = base + "/other";
  CHECK(mkdir(other.c_str(), 0700) == 0);
  CHECK(chown(other.c_str(), 65534, 65534) == 0);
  std::string msg = expect_error("invalid_argument", [&] { make_emu_layer("n150", 0, other); });
  CHECK(msg.find("owned by uid 65534") != std::string::npos);
  // Writable by others.
  std::string open_dir = base + "/open";
  CHECK(mkdir(open_dir.c_str(), 0700) == 0);
  CHECK(chmod(open_dir.c_str(), 0777) == 0);
  msg = expect_error("invalid_argument", [&] { make_emu_layer("n150", 0, open_dir); });
  CHECK(msg.find("writable") != std::string::npos);
  // An ancestor writable by others without the sticky bit.
  std::string shared = base + "/shared";
  CHECK(mkdir(shared.c_str(), 0700) == 0);
  CHECK(chmod(shared.c_str(), 0777) == 0);
  msg = expect_error("invalid_argument", [&] { make_emu_layer("n150", 0, shared + "/mine"); });
  CHECK(msg.find("not sticky") != std::string::npos);
  // With the sticky bit (as /tmp) the ancestor is fine.
  CHECK(chmod(shared.c_str(), 01777) == 0);
  make_emu_layer("n150", 0, shared + "/mine");
  // A symlink planted where the emulator's object directory goes.
  std::string root = base + "/root";
  CHECK(mkdir(root.c_str(), 0700) == 0);
  std::string elsewhere = base + "/elsewhere";
  CHECK(mkdir(elsewhere.c_str(), 0700) == 0);
  CHECK(symlink(elsewhere.c_str(), (root + "/emu").c_str()) == 0);
  msg = expect_error("invalid_argument", [&] { make_emu_layer("n150", 0, root); });
  CHECK(msg.find("symbolic link") != std::string::npos);
  remove_tree(base);
}
ZYX_TEST(builder, test_untrusted_dirs);

// ---- planted objects --------------------------------------------------------

// A build's sources are written with write_new_file: a symbolic link
// planted at the name is refused, not followed (its target keeps its
// bytes), and so is a file already there; a free name gets a new file of
// mode 0600.
void test_new_files_refuse_planted_names(const std::string& parent) {
  std::string dir = make_temp_dir(parent, "newfile");
  std::string victim = dir + "/victim", link = dir + "/kernel.cpp", there = dir + "/there.cpp";
  {
    std::ofstream(victim) << "keep";
    std::ofstream(there) << "old";
  }
  CHECK(symlink(victim.c_str(), link.c_str()) == 0);
  for (const std::string& path : {link, there}) {
    bool refused = false;
    try {
      emu::write_new_file(path, "planted over");
    } catch (const Error& e) {
      refused = true;
      CHECK_EQ(e.code, std::string("compile_error"));
      CHECK(std::string(e.what()).find("cannot create " + path) != std::string::npos);
    }
    CHECK(refused);
  }
  CHECK_EQ(read_text(victim), std::string("keep"));
  CHECK_EQ(read_text(there), std::string("old"));
  std::string fresh = dir + "/fresh.cpp";
  emu::write_new_file(fresh, "int x;");
  CHECK_EQ(read_text(fresh), std::string("int x;"));
  struct stat st{};
  CHECK(lstat(fresh.c_str(), &st) == 0);
  CHECK_EQ(st.st_mode & 07777, mode_t(0600));
  CHECK(S_ISREG(st.st_mode));
  remove_tree(dir);
}
ZYX_TEST(builder, test_new_files_refuse_planted_names);

void test_planted_objects(const std::string& parent) {
  std::string root = make_temp_dir(parent, "planted");
  std::string marker = root + "/planted-code-ran";
  std::string planted = build_planted(root, marker);
  GroupProgram p = word_program(kWriteWord);
  p.reader.compile_args = {C(41)};
  {
    auto layer = make_emu_layer("n150", 0, root);
    CHECK_EQ(run_word(*layer, p), 41u);
  }
  auto objs = objects(root);
  CHECK_EQ(objs.size(), size_t(3));
  // 1. Owned by someone else (nobody), mode 0644.
  for (auto& o : objs) {
    copy_file(planted, o);
    CHECK(chown(o.c_str(), 65534, 65534) == 0);
    CHECK(chmod(o.c_str(), 0644) == 0);
  }
  {
    auto layer = make_emu_layer("n150", 0, root);
    CHECK_EQ(run_word(*layer, p), 41u);
  }
  CHECK(!exists(marker));
  for (auto& o : objects(root)) {  // rebuilt in place, ours again
    struct stat st{};
    CHECK(lstat(o.c_str(), &st) == 0);
    CHECK_EQ(st.st_uid, geteuid());
  }
  // 2. Ours but writable by group and others.
  for (auto& o : objects(root)) {
    copy_file(planted, o);
    CHECK(chmod(o.c_str(), 0666) == 0);
  }
  {
    auto layer = make_emu_layer("n150", 0, root);
    CHECK_EQ(run_word(*layer, p), 41u);
  }
  CHECK(!exists(marker));
  // 3. A symlink at the object path, to a planted file of ours.
  std::string target = root + "/target.so";
  copy_file(planted, target);
  CHECK(chmod(target.c_str(), 0644) == 0);
  for (auto& o : objects(root)) {
    CHECK(unlink(o.c_str()) == 0);
    CHECK(symlink(target.c_str(), o.c_str()) == 0);
  }
  {
    auto layer = make_emu_layer("n150", 0, root);
    CHECK_EQ(run_word(*layer, p), 41u);
  }
  CHECK(!exists(marker));
  for (auto& o : objects(root)) {
    struct stat st{};
    CHECK(lstat(o.c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));  // the link was replaced, not followed
  }
  // Nothing temporary is left behind.
  for (auto& n : list_dir(root + "/emu")) CHECK(n[0] != '.');
  remove_tree(root);
}
ZYX_TEST(builder, test_planted_objects);

// ---- objects unload with their layer ----------------------------------------

// How many of this process's mappings are files below dir.
size_t mappings_below(const std::string& dir) {
  std::ifstream maps("/proc/self/maps");
  size_t n = 0;
  for (std::string line; std::getline(maps, line);)
    if (line.find(dir + "/") != std::string::npos) n++;
  return n;
}

// A kernel object exports only its entry points, and is unloaded when its
// layer goes. An exported symbol of vague linkage (the API table pointer is
// an inline variable) gets GNU unique binding from GCC: every later object
// binds to the first one's, and the loader never unloads that first object,
// which then stays mapped for the process's life, bound to a cache file that
// a rebuild or a planted object may later replace in place. The second
// reader exports an inline variable of its own on purpose (as libstdc++'s
// templates are exported whatever the visibility flag says): it too must
// unload, which takes -fno-gnu-unique on GCC.
void test_objects_unload(const std::string& parent) {
  std::string root = make_temp_dir(parent, "unload");
  GroupProgram p = word_program(kWriteWord);
  p.reader.compile_args = {C(43)};
  GroupProgram exported = word_program(std::string(kWriteWord) + R"(
__attribute__((visibility("default"))) inline int zyx_test_exported_inline = 44;
extern "C" __attribute__((visibility("default"))) int* zyx_test_exported_inline_addr() { return &zyx_test_exported_inline; }
)");
  exported.reader.compile_args = {C(44)};
  {
    auto layer = make_emu_layer("n150", 0, root);
    CHECK_EQ(run_word(*layer, p), 43u);
    CHECK_EQ(run_word(*layer, exported), 44u);
    CHECK(mappings_below(root) > 0);
  }
  CHECK_EQ(mappings_below(root), size_t(0));
  auto objs = objects(root);
  CHECK_EQ(objs.size(), size_t(4));  // two readers, one compute, one writer
  for (auto& o : objs) {
    void* h = dlopen(o.c_str(), RTLD_NOW | RTLD_LOCAL);
    CHECK(h != nullptr);
    CHECK(dlsym(h, "zyx_emu_kernel_run") != nullptr);
    bool api_exported = dlsym(h, "zyx_emu_api_ptr") != nullptr;
    dlclose(h);
    if (api_exported) throw Failure(o + " exports zyx_emu_api_ptr: only the entry points may be exported");
  }
  remove_tree(root);
}
ZYX_TEST(builder, test_objects_unload);

// ---- no HOME, no XDG_CACHE_HOME -------------------------------------------

void test_no_home(const std::string& parent) {
  std::string tmp = make_temp_dir(parent, "tmpdir");
  bool shared_before = exists("/tmp/zyx-emu-cache") || exists("/tmp/zyx-tt-kernels");
  in_child("no-home", [&] {
    unsetenv("HOME");
    unsetenv("XDG_CACHE_HOME");
    setenv("TMPDIR", tmp.c_str(), 1);
    std::string priv;
    {
      auto layer = make_emu_layer("n150", 0, "");
      GroupProgram p = word_program(kWriteWord);
      p.reader.compile_args = {C(7)};
      CHECK_EQ(run_word(*layer, p), 7u);
      auto entries = list_dir(tmp);
      CHECK_EQ(entries.size(), size_t(1));
      priv = tmp + "/" + entries[0];
      CHECK(entries[0].rfind("zyx-tt-kernels-", 0) == 0);
      struct stat st{};
      CHECK(lstat(priv.c_str(), &st) == 0);
      CHECK(S_ISDIR(st.st_mode));
      CHECK_EQ(st.st_mode & 0777, 0700u);
      CHECK_EQ(st.st_uid, geteuid());
      CHECK_EQ(objects(priv).size(), size_t(3));
    }
    CHECK(!exists(priv));  // removed with the layer
  });
  if (!shared_before) {
    CHECK(!exists("/tmp/zyx-emu-cache"));
    CHECK(!exists("/tmp/zyx-tt-kernels"));
  }
  remove_tree(tmp);
}
ZYX_TEST(builder, test_no_home);

// ---- the compiler's process group -----------------------------------------

// Constant evaluation that keeps cc1plus busy for many seconds.
const char* kSlowKernel = R"(
constexpr unsigned long slow() {
  unsigned long s = 0;
  for (unsigned long i = 0; i < 60000; i++)
    for (unsigned long j = 0; j < 60000; j++) s += (i ^ j) + (s >> 7);
  return s;
}
static_assert(slow() != 1, "slow");
void kernel_main() {}
)";

// Pids of processes whose command line mentions `needle`.
std::vector<pid_t> processes_mentioning(const std::string& needle) {
  std::vector<pid_t> out;
  for (auto& n : list_dir("/proc")) {
    if (n.empty() || !std::isdigit(static_cast<unsigned char>(n[0]))) continue;
    std::ifstream in("/proc/" + n + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find(needle) != std::string::npos) out.push_back(static_cast<pid_t>(std::stol(n)));
  }
  return out;
}

bool wait_until(const std::function<bool()>& ok, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ok();
}

bool has_compiler(const std::string& root) {
  for (pid_t p : processes_mentioning(root + "/emu/.build-")) {
    std::ifstream in("/proc/" + std::to_string(p) + "/comm");
    std::string comm;
    in >> comm;
    // GCC's compiler proper, or clang (which compiles in a clang process).
    if (comm.find("cc1plus") != std::string::npos || comm.rfind("clang", 0) == 0) return true;
  }
  return false;
}

bool no_leftovers(const std::string& root) {
  if (!processes_mentioning(root + "/emu/.build-").empty()) return false;
  for (auto& n : list_dir(root + "/emu"))
    if (n[0] == '.') return false;
  return true;
}

void test_compile_timeout(const std::string& parent) {
  std::string root = make_temp_dir(parent, "timeout");
  setenv("ZYX_EMU_COMPILE_TIMEOUT_S", "1", 1);
  auto t0 = std::chrono::steady_clock::now();
  {
    auto layer = make_emu_layer("n150", 0, root);
    std::string msg =
        expect_error("compile_error", [&] { layer->compile(one_group_program(word_program(kSlowKernel), 1, 1)); });
    CHECK(msg.find("ZYX_EMU_COMPILE_TIMEOUT_S") != std::string::npos);
  }
  unsetenv("ZYX_EMU_COMPILE_TIMEOUT_S");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(15));
  CHECK(wait_until([&] { return no_leftovers(root); }, std::chrono::seconds(5)));
  remove_tree(root);
}
ZYX_TEST(builder, test_compile_timeout);

void test_runtime_death(const std::string& parent) {
  std::string root = make_temp_dir(parent, "death");
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    try {
      auto layer = make_emu_layer("n150", 0, root);
      layer->compile(one_group_program(word_program(kSlowKernel), 1, 1));
    } catch (...) {
    }
    _exit(3);  // the parent kills us long before
  }
  bool started = wait_until([&] { return has_compiler(root); }, std::chrono::seconds(30));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(started);
  CHECK(WIFSIGNALED(status));
  CHECK(wait_until([&] { return no_leftovers(root); }, std::chrono::seconds(10)));
  remove_tree(root);
}
ZYX_TEST(builder, test_runtime_death);

}  // namespace

// The builder tests compare paths with the cache dir: they get it made and
// resolved to its real path.
static std::string real_cache_dir(const std::string& cache_arg) {
  std::string cache = cache_arg;
  if (mkdir(cache.c_str(), 0700) != 0 && errno != EEXIST) throw Failure("cannot create " + cache);
  if (char* real = realpath(cache.c_str(), nullptr)) {
    cache = real;
    std::free(real);
  }
  return cache;
}
ZYX_TEST_CACHE_DIR(builder, real_cache_dir);
