// The TRISC-build decision (trisc_builds.cpp) over a tree that is not a
// program's include files: the kernel sweep's checkout on disk
// (tools/kernel_check.cpp).
#pragma once

#include <functional>
#include <string>

namespace zyx::emu {

// A file's text by its path in the tree, or nullptr where it has none.
using TreeLookup = std::function<const std::string*(const std::string& path)>;
// refers_to_triscs (emu.hpp) with the kernel's includes resolved in lookup's
// tree as a build resolves them in a program's include tree.
bool refers_to_triscs(const std::string& source, const std::string& path, const TreeLookup& lookup);

}  // namespace zyx::emu
