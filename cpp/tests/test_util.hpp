// Shared bits of the runtime's C++ tests: a CHECK macro that counts
// failures, the protocol's error codes, and reading a response's code and
// message.
#pragma once

#include <iostream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol_enums_gen.hpp"

namespace zyx::test {

inline int failures = 0;

#define CHECK(cond, what)                                                                         \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      ::zyx::test::failures++;                                                                    \
      std::cerr << __FILE__ << ":" << __LINE__ << ": FAILED: " << #cond << " — " << what << "\n"; \
    }                                                                                             \
  } while (0)

// The protocol's error codes (protocol/protocol.json).
inline const std::set<std::string> kCodes = [] {
  std::set<std::string> codes;
  for (const auto& [name, code] : kErrorCodeNames) codes.emplace(name);
  return codes;
}();

// A response's error code ("ok" for success, "?" when it has none).
inline std::string code_of(const nlohmann::json& r) {
  if (r.value("ok", false)) return "ok";
  if (!r.contains("error") || !r["error"].is_object()) return "?";
  return r["error"].value("code", "?");
}

// A response's error message ("" when it has none).
inline std::string message_of(const nlohmann::json& r) {
  if (!r.contains("error") || !r["error"].is_object()) return "";
  return r["error"].value("message", "");
}

}  // namespace zyx::test
