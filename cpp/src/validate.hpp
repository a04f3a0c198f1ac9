// The meaning checks of protocol v2 (docs/protocol.md, "Validation"): what
// relates a request's values to each other and to the device. They run on
// the typed model after parse_request has checked the shape, and fail with
// invalid_argument (out_of_memory for capacity), naming the field path.
// The Go validator and mock runtime implement the same rules in the same
// order; docs/protocol.md is the definition both follow.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "device_layer.hpp"

namespace zyx {

// What `run` must check about a program's buffer params, collected by
// check_program.
struct ParamUse {
  bool addr = false, size = false, pages = false, page_size = false;  // resolved to 32-bit words
  bool bank = false;                                                   // bank_* entries
  uint32_t max_bank_page = 0;
  bool cb = false;  // a CB config sits on this buffer
  uint32_t cb_bytes = 0;
  std::string bank_where, cb_where;  // the first such entry, for messages
};

struct ProgramChecks {
  std::vector<ParamDesc> params;
  std::vector<std::optional<BufferSpec>> decls;  // by param
  std::vector<ParamUse> uses;                    // by param
  // By core (row * grid cols + col): L1 bytes of the CBs not on a buffer,
  // which check_run adds to the L1 buffers of a run.
  std::vector<uint64_t> cb_l1;
};

// check_program checks a compile's program against the device (grid,
// semaphore count, L1 size). `where` names the request ("compile").
ProgramChecks check_program(const ProgramDesc& p, const DeviceDesc& d, const std::string& where = "compile");

// check_alloc checks an alloc's size and spec, then its capacity
// (out_of_memory).
void check_alloc(uint64_t size, const BufferSpec& spec, const DeviceDesc& d, const std::string& where = "alloc");

// The bytes one core holds of an L1 buffer of `size` bytes (the share a CB
// config on it may use).
uint64_t l1_share_per_core(uint64_t size, const BufferSpec& spec, const DeviceDesc& d);

// check_run checks run args against the program and the live buffers:
// one arg per param of the matching kind (invalid_argument), buffers that
// exist (unknown_buffer), buffers that match their declaration, words that
// fit 32 bits, bank pages inside the buffer, CB configs inside the buffer's
// per-core share (invalid_argument), and on each core the program's CBs
// and the run's L1 buffers within the usable L1 (out_of_memory). `lookup`
// returns the buffer or nullptr.
struct RunArgIn {
  bool is_buffer = false;
  uint64_t value = 0;
};
void check_run(const ProgramChecks& c, const std::vector<RunArgIn>& args, const DeviceDesc& d,
               const std::function<const BufferInfo*(uint64_t)>& lookup);

// The rules check_run applies, one function each, so that a device layer
// that checks a run itself (the emulator, which its own tests drive without
// the server) applies the same rule with the same message. Each fails with
// invalid_argument.
// One arg per param; arg i of its param's kind (buffer or variable).
void check_run_arg_count(size_t args, size_t params);
void check_run_arg_kind(size_t i, const ParamDesc& p, bool is_buffer);
// Buffer `buffer`, arg i for param `param`, has the declared spec.
void check_buffer_decl(size_t i, const std::string& param, uint64_t buffer, const BufferSpec& spec,
                       const BufferSpec& decl);
// A value (`what`: "buffer_addr of param x") fits a 32-bit kernel arg.
void check_arg_word(const std::string& where, const std::string& what, uint64_t v);
// A bank entry's page lies inside its buffer of `pages` pages.
void check_bank_page(const std::string& where, uint64_t page, uint64_t pages, const std::string& param);
// A CB on an L1 buffer fits the `share` bytes the buffer holds on a core.
void check_cb_share(const std::string& where, uint64_t cb_bytes, uint64_t share, const std::string& param);

std::string core_str(CoreCoord c);
bool is_c_identifier(const std::string& s);

}  // namespace zyx
