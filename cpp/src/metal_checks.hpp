// What the metal layer refuses in a program before it calls tt-metal
// (docs/runtime.md, "The two layers"). These checks need nothing of
// tt-metal, so every build compiles them and cpp/tests/metal_checks_test.cpp
// tests each refusal without a card; metal_layer.cpp's compile calls them.
#pragma once

#include "device_layer.hpp"

namespace zyx::metal {

// check_program throws zyx::Error for the first part of `p` the metal layer
// cannot hand to tt-metal, naming its field path under "compile.":
//   - a `semaphore_addr` arg entry anywhere (unsupported: tt-metal's host API
//     gives kernels semaphore ids, not addresses);
//   - an `accessor` entry among a kernel's named compile args
//     (invalid_argument: an accessor is several words, a named arg one);
//   - a CB index whose data format has no tt-metal equivalent
//     (invalid_argument).
void check_program(const ProgramDesc& p);

// has_tt_metal_format reports whether tt-metal has a DataFormat for f.
bool has_tt_metal_format(DataFormat f);

}  // namespace zyx::metal
