// Compatibility tests against tt-metal's programming examples (filled in below).
#include <cstdlib>

#include "harness.hpp"

void test_ttmetal(const std::string&) {
  const char* dir = std::getenv("ZYX_TTMETAL_EXAMPLES");
  if (!dir || !*dir) throw zyx_test::Skip("ZYX_TTMETAL_EXAMPLES is not set");
}
