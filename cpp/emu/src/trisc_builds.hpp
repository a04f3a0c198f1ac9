// The TRISC-build decision (trisc_builds.cpp) over a tree that is not a
// program's include files: the kernel sweep's checkout on disk
// (tools/kernel_check.cpp).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace zyx::emu {

// A file's text by its path in the tree, or nullptr where it has none.
using TreeLookup = std::function<const std::string*(const std::string& path)>;
// refers_to_triscs (emu.hpp) with the kernel's includes resolved in lookup's
// tree as a build resolves them in a program's include tree.
bool refers_to_triscs(const std::string& source, const std::string& path, const TreeLookup& lookup);

// The files of lookup's tree that the kernel's quoted includes reach from the
// including file's own directory, followed through each file reached: what a
// program ships beside its kernel, so that the builder writes them (and
// prepares them, as it prepares the kernel) into the build's include tree.
// (path, text) pairs, without the kernel itself.
std::vector<std::pair<std::string, const std::string*>> directory_includes(const std::string& source,
                                                                           const std::string& path,
                                                                           const TreeLookup& lookup);

}  // namespace zyx::emu
