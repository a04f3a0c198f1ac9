// Protocol v2 requests (docs/protocol.md), parsed once into the typed model
// of device_layer.hpp.
//
// parse_request does everything that needs only the line itself: framing
// (NUL bytes, trailing bytes, nesting depth, duplicate keys), JSON syntax and
// the shape of every object (known fields only, JSON types, integer widths,
// enum names). Each such failure is bad_request and names the field path
// (`compile.kernels[1].runtime_args[0].cores[0]`). What relates values to
// each other or to the device is checked later (validate.hpp), as
// invalid_argument. Everything here is linear in the line length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "device_layer.hpp"

namespace zyx {

using json = nlohmann::json;

// Arrays and objects nested deeper than this are refused (the request
// object itself is level 1).
inline constexpr int kMaxJsonDepth = 32;

[[noreturn]] void bad_request(const std::string& msg);
[[noreturn]] void invalid_argument(const std::string& msg);

// parse_json_line parses one line strictly: bad_request for a NUL byte
// anywhere, malformed JSON or invalid UTF-8, anything but whitespace after
// the value, nesting deeper than kMaxJsonDepth, or an object with a key given
// twice. Linear in the line length.
json parse_json_line(std::string_view line);

// Decodes standard base64 (RFC 4648, padding optional, no whitespace);
// bad_request naming `field` otherwise.
std::vector<uint8_t> decode_base64(std::string_view in, const std::string& field);

// Cmd and kProtocolVersion come from protocol_enums_gen.hpp.
const char* cmd_name(Cmd c);

struct InitRequest {
  uint64_t protocol = 0;
  std::string layer = "auto";
  uint64_t chip = 0;
  std::string board = "n150";
  std::string cache_dir;
  bool dprint = false;
};

struct SegmentRequest {  // map, unmap
  std::string segment;
};

struct AllocRequest {
  uint64_t size = 0;
  BufferSpec spec;
};

struct IdRequest {  // free (a buffer), release (a program)
  uint64_t id = 0;
};

struct TransferRequest {  // write, read
  uint64_t buffer = 0, offset = 0;
  std::string segment;
  uint64_t segment_offset = 0, length = 0;
};

struct RunArgRequest {
  bool is_buffer = false;  // {"buffer": id} rather than {"value": bits}
  uint64_t value = 0;      // the buffer id or the bits
};

struct RunRequest {
  uint64_t program = 0;
  std::vector<RunArgRequest> args;
  bool timed = false;
};

// A request's `after` names at most this many earlier requests, each at most
// kAfterWindow ids before its own (docs/protocol.md, "Pipelining and
// order").
inline constexpr size_t kMaxAfter = 64;
inline constexpr uint64_t kAfterWindow = 1024;

struct Request {
  uint64_t id = 0;
  Cmd cmd = Cmd::Ping;
  // Earlier requests whose failure means this one is not executed.
  std::vector<uint64_t> after;
  std::variant<std::monostate, InitRequest, SegmentRequest, AllocRequest, IdRequest, TransferRequest, ProgramDesc,
               RunRequest>
      body;
};

// parse_request parses one request line. It throws zyx::Error: bad_request
// for the cases above, unknown_command, or version_mismatch (an init whose
// protocol is not kProtocolVersion; checked before init's other fields so an
// older or newer peer gets the version message). *id is set as soon as the
// request's id has been read, so an error reply can carry it (0 before).
Request parse_request(std::string_view line, uint64_t* id);

// The message a version_mismatch carries for an init of `asked`, from a
// runtime that speaks `speaks`.
std::string version_mismatch_message(uint64_t asked, uint64_t speaks = kProtocolVersion);

}  // namespace zyx
