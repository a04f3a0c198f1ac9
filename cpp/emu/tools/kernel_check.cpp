// zyx-emu-kernel-check: compiles one kernel source file syntax-only with the
// emulator's kernel builder (its generated wrapper, flags and include tree),
// as the kernel sweep (make kernel-sweep, cpp/emu/tests/sweep) needs.
//
//   zyx-emu-kernel-check [options] FILE
//     --compute | --brisc | --ncrisc   the processor (default --brisc)
//     --args N --arg-value V           N positional compile-time args, each V
//     --named NAME=V                   a named compile-time arg (repeatable)
//     --cb-page BYTES                  every CB index's page size
//     --cb-format N                    every CB index's data format (tt-metal's
//                                      numbering; 5 is Float16_b) with 32 x 32
//                                      tiles (default: none, as no CB)
//     --define NAME=VALUE              a program-factory define (repeatable)
//     --flag F                         an extra compiler flag (repeatable),
//                                      e.g. -iquote DIR or -idirafter DIR
//     --board NAME                     board preset (default n150)
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

#include "emu.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  using namespace zyx::emu;
  BuildSpec spec;
  std::map<std::string, std::string> defines;
  std::vector<std::string> extra;
  std::string board = "n150", file;
  uint32_t nargs = 0, arg_value = 1, cb_page = 0, cb_format = 0xff;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs " + what);
      return argv[++i];
    };
    try {
      if (a == "--compute") {
        spec.processor = 2;
      } else if (a == "--brisc") {
        spec.processor = 0, spec.noc = 0;
      } else if (a == "--ncrisc") {
        spec.processor = 1, spec.noc = 1;
      } else if (a == "--args" || a == "--arg-value" || a == "--cb-page" || a == "--cb-format") {
        uint32_t* dst = a == "--args" ? &nargs : a == "--arg-value" ? &arg_value : a == "--cb-page" ? &cb_page : &cb_format;
        std::string v = value("a number");
        if (!parse_u32(v, dst)) return usage(a + ": \"" + v + "\" is not a 32-bit unsigned number");
      } else if (a == "--named" || a == "--define") {
        std::string v = value("NAME=VALUE");
        size_t eq = v.find('=');
        if (eq == 0 || eq == std::string::npos) return usage(a + ": \"" + v + "\" is not NAME=VALUE");
        if (a == "--define") {
          defines[v.substr(0, eq)] = v.substr(eq + 1);
        } else {
          uint32_t n = 0;
          if (!parse_u32(v.substr(eq + 1), &n)) return usage(a + ": \"" + v + "\": the value is not a number");
          spec.named_args.emplace_back(v.substr(0, eq), n);
        }
      } else if (a == "--flag") {
        extra.push_back(value("a compiler flag"));
      } else if (a == "--board") {
        board = value("a board name");
      } else if (!a.empty() && a[0] == '-') {
        return usage("unknown option " + a);
      } else if (file.empty()) {
        file = a;
      } else {
        return usage("more than one FILE");
      }
    } catch (const std::exception& e) {
      return usage(e.what());
    }
  }
  if (file.empty()) return usage("no FILE");
  if (nargs > 4096) return usage("--args: at most 4096");
  std::ifstream in(file, std::ios::binary);
  if (!in) return usage("cannot read " + file);
  std::stringstream text;
  text << in.rdbuf();
  std::string source = text.str();
  spec.source = &source;
  spec.defines = &defines;
  spec.compile_args.assign(nargs, arg_value);
  spec.cb_tile_sizes.fill(cb_page);
  spec.cb_formats.fill(cb_format);
  spec.cb_tile_rows.fill(cb_format == 0xff ? 0 : 32);
  spec.cb_tile_cols.fill(cb_format == 0xff ? 0 : 32);
  std::string base = file.substr(file.rfind('/') + 1);
  spec.name = base.substr(0, base.rfind('.'));
  spec.program_name = "kernel sweep";
  try {
    // The user's kernel cache root, as the runtime's: a syntax-only check
    // writes only its own build directory there and removes it.
    KernelBuilder builder("", board_preset(board));
    bool ok = false;
    std::string diag = builder.check_syntax(spec, extra, &ok);
    std::fwrite(diag.data(), 1, diag.size(), stdout);
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zyx-emu-kernel-check: %s\n", e.what());
    return 2;
  }
}
