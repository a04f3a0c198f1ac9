// Typed access to request fields. Every getter checks presence and type and
// throws zyx::Error("bad_request", ...) naming the field, so the server never
// reads a value it has not checked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "device_layer.hpp"

namespace zyx {

using json = nlohmann::json;

// Parses one request line. Nesting deeper than kMaxJsonDepth is refused so a
// hostile line cannot exhaust memory or stack. Throws bad_request.
inline constexpr int kMaxJsonDepth = 32;
json parse_request(std::string_view line);

// Fields reads the members of one JSON object; `where` names it in messages
// ("request", "cbs[3]", "reader.runtime_args[0]").
class Fields {
 public:
  Fields(const json& obj, std::string where);

  bool has(const char* key) const;
  uint64_t u64(const char* key) const;
  uint64_t u64_or(const char* key, uint64_t def) const;
  uint32_t u32(const char* key) const;  // an unsigned integer that fits 32 bits
  int64_t i64_or(const char* key, int64_t def) const;
  std::string str(const char* key) const;
  std::string str_or(const char* key, std::string def) const;
  bool boolean_or(const char* key, bool def) const;
  const json& object(const char* key) const;
  const json& array(const char* key) const;
  const json* array_or_null(const char* key) const;

  std::string name(const char* key) const { return where_ + "." + key; }

 private:
  const json& get(const char* key) const;
  const json& obj_;
  std::string where_;
};

[[noreturn]] void bad_request(const std::string& msg);

// Decodes standard base64 (RFC 4648, padding optional, no whitespace).
std::vector<uint8_t> decode_base64(std::string_view in);

// Parses and checks the body of a `compile` request.
ProgramDesc parse_program(const json& req);

// The layout entries of every section that read a buffer's size, address,
// page size or page count: the server checks at run time that their values fit
// the 32-bit kernel arguments.
std::vector<LayoutEntry> buffer_word_entries(const ProgramDesc& p);

}  // namespace zyx
