// zyx-emu-kernel-check: compiles one kernel source file syntax-only with the
// emulator's kernel builder (its generated wrapper, flags and include tree),
// as the kernel sweep (make kernel-sweep, cpp/emu/tests/sweep) needs.
//
//   zyx-emu-kernel-check [options] FILE
//     --compute | --brisc | --ncrisc   the processor (default --brisc)
//     --args N --arg-value V           N positional compile-time args, each V
//     --arg INDEX=V                    arg INDEX is V instead (repeatable)
//     --named NAME=V                   a named compile-time arg (repeatable)
//     --metal2                         build with the Metal 2.0 bindings
//                                      block (docs/emulator.md, "Metal 2.0
//                                      bindings"): each --named arg also as
//                                      args::NAME, each --dfb as dfb::NAME
//     --dfb NAME=INDEX                 a dataflow-buffer binding (repeatable;
//                                      implies --metal2)
//     --cb-page BYTES                  every CB index's page size
//     --cb-format N                    every CB index's data format (tt-metal's
//                                      numbering; 5 is Float16_b) with 32 x 32
//                                      tiles (default: none, as no CB)
//     --define NAME=VALUE              a program-factory define (repeatable)
//     --flag F                         an extra compiler flag (repeatable),
//                                      e.g. -iquote DIR or -idirafter DIR
//     --board NAME                     board preset (default n150)
//     --tree ROOT                      the tree FILE lies in (default: FILE's
//                                      directory): a compute kernel that, or
//                                      whose quoted includes in ROOT, refer
//                                      to the TRISC builds is checked as its
//                                      three builds, as the runtime builds it;
//                                      FILE is built at its path in ROOT, with
//                                      the files of ROOT its quoted includes
//                                      reach from their own directories as
//                                      the program's include files
//
// Exit status: 0 builds, 1 does not (the compiler's diagnostics on stdout),
// 2 bad usage or an environment problem (message on stderr).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "emu.hpp"
#include "trisc_builds.hpp"

namespace {

int usage(const std::string& why) {
  std::fprintf(stderr, "zyx-emu-kernel-check: %s\n(see the comment at the top of cpp/emu/tools/kernel_check.cpp)\n",
               why.c_str());
  return 2;
}

bool parse_u32(const std::string& text, uint32_t* out) {
  if (text.empty() || text.size() > 10) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > 0xffffffffull) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// What the command line asks for.
struct Options {
  zyx::emu::BuildSpec spec;
  std::map<std::string, std::string> defines;
  std::vector<std::string> extra;
  std::string board = "n150", file, tree;
  uint32_t nargs = 0, arg_value = 1, cb_page = 0, cb_format = 0xff;
  std::map<uint32_t, uint32_t> arg_overrides;
  zyx::KernelDesc metal2;  // its bindings, when a Metal 2.0 block is asked for
};

// NAME=VALUE (or INDEX=VALUE): the parts, or false.
bool split_eq(const std::string& v, std::string* name, std::string* val) {
  size_t eq = v.find('=');
  if (eq == 0 || eq == std::string::npos) return false;
  *name = v.substr(0, eq);
  *val = v.substr(eq + 1);
  return true;
}

// Parses the options into o; an empty string, or what is wrong.
std::string parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i], name, val;
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs " + what);
      return argv[++i];
    };
    if (a == "--compute") {
      o.spec.processor = 2;
    } else if (a == "--brisc") {
      o.spec.processor = 0, o.spec.noc = 0;
    } else if (a == "--ncrisc") {
      o.spec.processor = 1, o.spec.noc = 1;
    } else if (a == "--args" || a == "--arg-value" || a == "--cb-page" || a == "--cb-format") {
      uint32_t* dst = a == "--args" ? &o.nargs : a == "--arg-value" ? &o.arg_value : a == "--cb-page" ? &o.cb_page : &o.cb_format;
      std::string v = value("a number");
      if (!parse_u32(v, dst)) return a + ": \"" + v + "\" is not a 32-bit unsigned number";
    } else if (a == "--arg") {
      // One compile-time arg the placeholder value would not fit (a program
      // factory's distinct CB indices, say).
      std::string v = value("INDEX=VALUE");
      uint32_t index = 0, n = 0;
      if (!split_eq(v, &name, &val) || !parse_u32(name, &index) || !parse_u32(val, &n))
        return a + ": \"" + v + "\" is not INDEX=VALUE";
      o.arg_overrides[index] = n;
    } else if (a == "--named" || a == "--define") {
      std::string v = value("NAME=VALUE");
      // A named arg's name is any string (the empty one, one with '=': its
      // value, a number, follows the last '='); a define's is an identifier.
      if (a == "--named" && v.rfind('=') != std::string::npos) {
        name = v.substr(0, v.rfind('='));
        val = v.substr(v.rfind('=') + 1);
      } else if (!split_eq(v, &name, &val)) {
        return a + ": \"" + v + "\" is not NAME=VALUE";
      }
      uint32_t n = 0;
      if (a == "--define") {
        o.defines[name] = val;
      } else if (!parse_u32(val, &n)) {
        return a + ": \"" + v + "\": the value is not a number";
      } else {
        o.spec.named_args.emplace_back(name, n);
      }
    } else if (a == "--metal2") {
      o.metal2.bindings.metal2 = true;
    } else if (a == "--dfb") {
      std::string v = value("NAME=INDEX");
      uint32_t index = 0;
      if (!split_eq(v, &name, &val) || !parse_u32(val, &index)) return a + ": \"" + v + "\" is not NAME=INDEX";
      o.metal2.bindings.metal2 = true;
      o.metal2.bindings.dfb_ids.emplace_back(name, index);
    } else if (a == "--flag") {
      o.extra.push_back(value("a compiler flag"));
    } else if (a == "--board") {
      o.board = value("a board name");
    } else if (a == "--tree") {
      o.tree = value("a directory");
    } else if (!a.empty() && a[0] == '-') {
      return "unknown option " + a;
    } else if (o.file.empty()) {
      o.file = a;
    } else {
      return "more than one FILE";
    }
  }
  if (o.file.empty()) return "no FILE";
  if (o.nargs > 4096) return "--args: at most 4096";
  for (auto [index, v] : o.arg_overrides)
    if (index >= o.nargs) return "--arg " + std::to_string(index) + ": beyond the " + std::to_string(o.nargs) + " args";
  if (o.tree.empty()) o.tree = o.file.find('/') == std::string::npos ? "." : o.file.substr(0, o.file.rfind('/'));
  while (o.tree.size() > 1 && o.tree.back() == '/') o.tree.pop_back();
  if (o.file.compare(0, o.tree.size() + 1, o.tree + "/") != 0 && o.tree != ".")
    return "--tree " + o.tree + ": FILE is not under it";
  return "";
}

// The files of the tree, read from disk as a program would ship them, each
// once, by their paths in the tree.
class TreeFiles {
 public:
  explicit TreeFiles(std::string root) : root_(std::move(root)) {}
  const std::string* find(const std::string& path) {
    auto it = read_.find(path);
    if (it == read_.end()) {
      std::ifstream f(root_ + "/" + path, std::ios::binary);
      std::stringstream text;
      if (f) text << f.rdbuf();
      it = read_.emplace(path, f ? text.str() : std::string()).first;
    }
    return it->second.empty() ? nullptr : &it->second;
  }
  zyx::emu::TreeLookup lookup() {
    return [this](const std::string& path) { return find(path); };
  }

 private:
  std::string root_;
  std::map<std::string, std::string> read_;  // node-based: the texts stay put
};

// Whether the runtime would build this compute kernel three times (its
// TRISC builds): ZYX_EMU_TRISC, else whether the kernel or a file of its
// tree that it includes refers to the TRISC builds (trisc_builds.cpp).
bool builds_three_times(const std::string& source, const std::string& rel, TreeFiles& tree) {
  using namespace zyx::emu;
  TriscMode mode = trisc_mode_from_env();
  if (mode != TriscMode::Auto) return mode == TriscMode::Three;
  return refers_to_triscs(source, rel, tree.lookup());
}

// Whether one of the emulator's include directories has a header at this
// tree path (from the tree's root or its ttnn/cpp, the roots a build
// searches): the emulator's header must win there, as it does over the tree.
bool emulator_provides(const std::vector<std::string>& include_dirs, const std::string& path) {
  static const std::string ttnn_cpp = "ttnn/cpp/";
  for (const std::string& d : include_dirs) {
    if (access((d + "/" + path).c_str(), F_OK) == 0) return true;
    if (path.compare(0, ttnn_cpp.size(), ttnn_cpp) == 0 &&
        access((d + "/" + path.substr(ttnn_cpp.size())).c_str(), F_OK) == 0)
      return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace zyx::emu;
  Options o;
  try {
    std::string why = parse_options(argc, argv, o);
    if (!why.empty()) return usage(why);
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  std::ifstream in(o.file, std::ios::binary);
  if (!in) return usage("cannot read " + o.file);
  std::stringstream text;
  text << in.rdbuf();
  std::string source = text.str();
  BuildSpec& spec = o.spec;
  spec.source = &source;
  spec.defines = &o.defines;
  spec.compile_args.assign(o.nargs, o.arg_value);
  for (auto [index, v] : o.arg_overrides) spec.compile_args[index] = v;
  spec.cb_tile_sizes.fill(o.cb_page);
  spec.cb_formats.fill(o.cb_format);
  spec.cb_tile_rows.fill(o.cb_format == 0xff ? 0 : 32);
  spec.cb_tile_cols.fill(o.cb_format == 0xff ? 0 : 32);
  std::string base = o.file.substr(o.file.rfind('/') + 1);
  spec.name = base.substr(0, base.rfind('.'));
  try {
    // The block a Metal 2.0 host's build generates, by the runtime's own
    // generator: named compile args as args::NAME, the dataflow buffers.
    o.metal2.name = spec.name;
    spec.bindings = kernel_bindings_source(o.metal2, spec.compile_args, spec.named_args);
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  spec.program_name = "kernel sweep";
  try {
    // The user's kernel cache root, as the runtime's: a syntax-only check
    // writes only its own build directory there and removes it.
    KernelBuilder builder("", board_preset(o.board));
    // The kernel at its path in the tree, with the files its quoted includes
    // reach from their own directories, as a program ships them: the builder
    // writes (and prepares) them as it does a program's include files.
    TreeFiles tree(o.tree);
    std::string rel = o.tree == "." ? o.file : o.file.substr(o.tree.size() + 1);
    std::vector<std::pair<std::string, const std::string*>> shipped;
    if (kernel_path_problem(rel).empty()) {
      spec.path = &rel;
      for (auto& [path, text] : directory_includes(source, rel, tree.lookup()))
        if (!emulator_provides(builder.include_dirs(), path)) shipped.emplace_back(path, text);
      for (auto& [path, text] : shipped) spec.include_files.emplace_back(&path, text);
    }
    bool ok = false;
    std::string diag;
    if (spec.processor == 2 && builds_three_times(source, rel, tree)) {
      // Each TRISC build as the runtime compiles it; the first that fails
      // is the kernel's failure.
      static const char* roles[] = {"TRISC_UNPACK", "TRISC_MATH", "TRISC_PACK"};
      for (int r = 1; r <= 3; r++) {
        spec.trisc = r;
        diag = builder.check_syntax(spec, o.extra, &ok);
        if (!ok) {
          diag = std::string("zyx-emu-kernel-check: the ") + roles[r - 1] + " build fails\n" + diag;
          break;
        }
      }
    } else {
      diag = builder.check_syntax(spec, o.extra, &ok);
    }
    std::fwrite(diag.data(), 1, diag.size(), stdout);
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zyx-emu-kernel-check: %s\n", e.what());
    return 2;
  }
}
