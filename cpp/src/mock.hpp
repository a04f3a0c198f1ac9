// Mock mode (docs/runtime.md, "Mock mode"): `zyx-tt-runtime --mock SPEC`,
// or ZYX_TT_MOCK=SPEC in its environment, serves the protocol exactly as
// always, through a device layer that wraps the emulator, and injects the
// faults SPEC names. There is one protocol implementation: the faults of the
// protocol stream (a wrong reply id, a garbage or oversized line, noise and
// floods on the stream, a closed stdout) are made in the server's output
// path, the faults of a process (a crash, a hang, an orphaned grandchild)
// in its request path, and the device's shape in the layer (MockLayer).
//
// Faults are counted by request number: request N is the Nth request line
// the runtime read, 1 for the first (the driver's init), whatever the line
// holds. hold-at makes a fault wait for the test instead of the clock: the
// runtime stops reading once it has read request N, says so on stderr, and
// goes on when it gets SIGUSR1.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "server.hpp"

namespace zyx::mock {

// The environment variable that turns mock mode on (its value is a SPEC).
inline constexpr const char* kEnvVar = "ZYX_TT_MOCK";

// Spec is a parsed SPEC. Request numbers are 0 when unset.
struct Spec {
  // The device (MockLayer).
  std::string layer = "emu";  // emu: the emulator serves every init; init: the layer init asks for
  std::string board;          // the emulated board, instead of the one init names
  std::optional<uint32_t> rows, cols, banks;
  std::optional<uint64_t> bank_size, l1, l1_base;
  std::optional<uint32_t> semaphores;
  std::vector<uint32_t> harvest_rows;
  std::string dprint;  // printed as a DPRINT line by every core of every kernel at every run

  // Request faults (Faults::after_read, Faults::before_request).
  std::set<uint64_t> hold_at;
  uint64_t crash_at = 0, hang_at = 0, orphan_at = 0, close_stdout_at = 0, error_at = 0;
  std::string error_code = "internal";
  int protocol = kProtocolVersion;

  // Stream faults (Faults::on_reply, Faults::before_read).
  uint64_t wrong_id_at = 0, garbage_at = 0, oversize_at = 0;
  bool noise = false;
  std::chrono::nanoseconds slow{0};
  uint64_t flood = 0;  // bytes of log lines on the stream before each request is read

  // The process (Faults::at_start).
  bool ignore_term = false;
  std::string stderr_line;
};

// parse_into adds the items of spec to *out: items separated by commas,
// each `key=value` or a bare key (`noise`, `ignore-term`, `on` for no fault
// at all); `hold-at` may be given more than once. It throws
// std::invalid_argument naming the item, with the key meant for a near
// miss.
void parse_into(std::string_view spec, Spec* out);

// help lists the keys for the usage text.
std::string help();

// Faults injects the request and stream faults of a Spec. It is created
// once, in main, before any thread starts.
class Faults {
 public:
  // write_line writes one line (without its '\n') to the protocol stream,
  // serialised with the replies; proto_fd is that stream's descriptor.
  Faults(Spec spec, int proto_fd, Server::Sink write_line);

  const Spec& spec() const { return spec_; }

  // at_start applies the process faults: blocks SIGUSR1 (for hold-at; it
  // must run before the first thread starts, so that every thread inherits
  // the mask), ignores SIGTERM for ignore-term (after the runtime's own
  // handlers are installed), and writes the stderr line.
  void at_start();

  // before_read writes the flood before the reader takes the next request.
  void before_read();

  // after_read runs on the reading thread once request n has been read:
  // it holds the reading until SIGUSR1 (hold-at), or stops it for good
  // (hang-at: from request N on nothing is read or answered; the requests
  // before it are answered as always).
  void after_read(uint64_t n);

  // ends_at says whether request n ends the answering (crash-at, orphan-at,
  // close-stdout-at): the server answers the requests before it first.
  bool ends_at(uint64_t n) const {
    return n == spec_.crash_at || n == spec_.orphan_at || n == spec_.close_stdout_at;
  }

  // before_request runs before request n executes: it crashes, leaves an
  // orphan or closes stdout and hangs as asked (none of them returns), and
  // returns the error reply that replaces the request's (error-at;
  // version_mismatch for protocol), or nullopt.
  std::optional<Error> before_request(uint64_t n, const Prepared& p);

  // passes_reply says whether on_reply leaves the reply to request n as it
  // is (no fault of the stream touches it).
  bool passes_reply(uint64_t n) const {
    return !spec_.noise && spec_.slow.count() == 0 && n != spec_.wrong_id_at && n != spec_.garbage_at &&
           n != spec_.oversize_at;
  }

  // on_reply writes the reply to request n as the stream faults say (with
  // slow and noise first). It returns false when the reply is to be
  // written as it is.
  bool on_reply(uint64_t n, const json& reply, const Server::Sink& sink);

 private:
  [[noreturn]] void hang(uint64_t n, const char* what);
  void orphan();
  void close_stdout();

  Spec spec_;
  int proto_fd_;
  Server::Sink write_line_;
};

// layer_factory opens the layers of mock mode: what `emu` opens (the
// emulator, normally) for every init unless spec.layer is `init`, with the
// board spec.board names, reporting the runtime init asked for (`metal` for
// a metal init, so that a driver's card path runs without a card), wrapped
// in a MockLayer.
LayerFactory layer_factory(const Spec& spec, LayerFactory open);

// MockLayer reports the wrapped layer's device reshaped by the Spec (fewer
// rows, columns or DRAM banks, smaller banks: a part of the wrapped device,
// so that whatever fits the device reported runs on the real one), keeps
// DRAM allocations within the DRAM it reports, and prints the Spec's
// DPRINT line from every core of every kernel at every run.
class MockLayer : public DeviceLayer {
 public:
  // runtime is the name describe reports ("" for the wrapped layer's);
  // dprint whether DPRINT is on (init's dprint or ZYX_EMU_DPRINT).
  MockLayer(std::unique_ptr<DeviceLayer> inner, const Spec& spec, std::string runtime, bool dprint);

  DeviceDesc describe() override { return desc_; }
  uint64_t alloc(uint64_t size, const BufferSpec& spec, uint64_t* address) override;
  void free(uint64_t buffer) override;
  BufferInfo buffer_info(uint64_t buffer) override { return inner_->buffer_info(buffer); }
  void write(uint64_t buffer, uint64_t offset, const uint8_t* src, uint64_t length) override {
    inner_->write(buffer, offset, src, length);
  }
  void read(uint64_t buffer, uint64_t offset, uint8_t* dst, uint64_t length) override {
    inner_->read(buffer, offset, dst, length);
  }
  uint64_t compile(const ProgramDesc& program) override;
  uint64_t run(uint64_t program, const std::vector<RunArg>& args, bool timed) override;
  std::unique_ptr<PendingRun> launch(uint64_t program, const std::vector<RunArg>& args, bool timed) override;
  void release(uint64_t program) override;

 private:
  // print_dprint writes the DPRINT lines of one run of program.
  void print_dprint(uint64_t program) const;

  std::unique_ptr<DeviceLayer> inner_;
  DeviceDesc desc_;
  std::string dprint_text_;
  uint64_t dram_used_ = 0;
  std::map<uint64_t, uint64_t> dram_sizes_;  // live DRAM buffers: id -> bytes
  // The DPRINT lines of each program's run, when DPRINT is on.
  std::map<uint64_t, std::string> dprint_lines_;
};

// reshape applies the Spec's device keys to d; it throws invalid_argument
// for a shape the wrapped device cannot hold.
void reshape(const Spec& spec, DeviceDesc* d);

}  // namespace zyx::mock
