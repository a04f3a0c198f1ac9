// Shared bits of the runtime's C++ tests: a CHECK macro that counts
// failures, and the protocol's error codes.
#pragma once

#include <iostream>
#include <set>
#include <string>

namespace zyx::test {

inline int failures = 0;

#define CHECK(cond, what)                                                                         \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      ::zyx::test::failures++;                                                                    \
      std::cerr << __FILE__ << ":" << __LINE__ << ": FAILED: " << #cond << " — " << what << "\n"; \
    }                                                                                             \
  } while (0)

inline const std::set<std::string> kCodes = {
    "bad_request",   "unknown_command",  "line_too_long", "version_mismatch", "not_initialized", "unsupported",
    "unknown_buffer", "unknown_program", "out_of_memory", "invalid_argument", "shm_error",       "compile_error",
    "run_error",     "deadlock",         "device_error",  "dependency_failed", "internal"};

}  // namespace zyx::test
