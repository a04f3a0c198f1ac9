// When a compute kernel is built three times (TRISC_UNPACK, TRISC_MATH,
// TRISC_PACK) rather than once (docs/emulator.md, "Compute model"): when
// ZYX_EMU_TRISC says so, else when the kernel's source or a local file it
// includes names a TRISC_* macro or UNPACK(, MATH( or PACK(, the only code
// whose meaning differs between the builds. Other kernels keep the single
// build, which costs one compile instead of three.
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "emu.hpp"
#include "trisc_builds.hpp"

namespace zyx::emu {

namespace {

// Quoted includes of a file.
std::vector<std::string> quoted_includes(const std::string& text) {
  static const std::regex re(R"re(#\s*include\s*"([^"]+)")re");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1].str());
  return out;
}

// "a/b/../c" -> "a/c"; "" when it climbs above the root.
std::string normalize(const std::string& path) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at <= path.size()) {
    size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    std::string p = path.substr(at, slash - at);
    if (p == "..") {
      if (parts.empty()) return "";
      parts.pop_back();
    } else if (!p.empty() && p != ".") {
      parts.push_back(p);
    }
    at = slash + 1;
  }
  std::string out;
  for (auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

bool names_trisc_code(const std::string& text) {
  static const std::regex re(R"(\bTRISC_(UNPACK|MATH|PACK)\b|\b(UNPACK|MATH|PACK)\s*\()");
  return std::regex_search(text, re);
}

}  // namespace

TriscMode trisc_mode_from_env() {
  const char* v = std::getenv("ZYX_EMU_TRISC");
  if (!v || !*v || std::string(v) == "auto") return TriscMode::Auto;
  if (std::string(v) == "3") return TriscMode::Three;
  if (std::string(v) == "1") return TriscMode::Single;
  throw Error("invalid_argument", "ZYX_EMU_TRISC is \"" + std::string(v) + "\": use 3, 1 or auto");
}

// Follows the kernel's quoted includes through the program's include files
// (resolved as the build does: from the including file's directory, then
// the tree's root and its ttnn/cpp), and says whether any file reached
// names TRISC-specific code.
bool refers_to_triscs(const std::string& source, const std::string& path,
                      const std::vector<std::pair<const std::string*, const std::string*>>& include_files) {
  std::map<std::string, const std::string*> files;
  for (auto& [p, text] : include_files) files[*p] = text;
  return refers_to_triscs(source, path, [&](const std::string& p) -> const std::string* {
    auto it = files.find(p);
    return it == files.end() ? nullptr : it->second;
  });
}

bool refers_to_triscs(const std::string& source, const std::string& path, const TreeLookup& lookup) {
  std::vector<std::pair<std::string, const std::string*>> todo{{path, &source}};
  std::set<std::string> seen{path};
  while (!todo.empty()) {
    auto [at, text] = todo.back();
    todo.pop_back();
    if (names_trisc_code(*text)) return true;
    std::string dir = at.find('/') == std::string::npos ? "" : at.substr(0, at.rfind('/') + 1);
    for (const std::string& inc : quoted_includes(*text))
      for (const std::string& cand : {normalize(dir + inc), normalize(inc), normalize("ttnn/cpp/" + inc)}) {
        const std::string* found = cand.empty() ? nullptr : lookup(cand);
        if (!found) continue;
        if (seen.insert(cand).second) todo.emplace_back(cand, found);
        break;
      }
  }
  return false;
}

std::vector<std::pair<std::string, const std::string*>> directory_includes(const std::string& source,
                                                                           const std::string& path,
                                                                           const TreeLookup& lookup) {
  std::vector<std::pair<std::string, const std::string*>> reached;
  std::vector<std::pair<std::string, const std::string*>> todo{{path, &source}};
  std::set<std::string> seen{path};
  while (!todo.empty()) {
    auto [at, text] = todo.back();
    todo.pop_back();
    std::string dir = at.find('/') == std::string::npos ? "" : at.substr(0, at.rfind('/') + 1);
    for (const std::string& inc : quoted_includes(*text)) {
      std::string cand = normalize(dir + inc);
      const std::string* found = cand.empty() ? nullptr : lookup(cand);
      if (!found || !seen.insert(cand).second) continue;
      reached.emplace_back(cand, found);
      todo.emplace_back(cand, found);
    }
  }
  return reached;
}

}  // namespace zyx::emu
