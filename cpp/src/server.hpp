// Server is the protocol v2 dispatcher (docs/protocol.md): one reply line
// per request line, whatever the line holds. It owns the checked buffer and
// program tables and the shm mappings, and calls one DeviceLayer for the
// device work.
//
// A request goes through two steps: prepare() parses it (the line alone:
// framing, syntax, shapes; stateless, so any thread may call it) and
// execute() checks it against the server's state and runs it. Calls of
// execute() must not overlap; Pipeline (pipeline.hpp) orders them.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device_layer.hpp"
#include "line_reader.hpp"
#include "request.hpp"
#include "segments.hpp"
#include "validate.hpp"

namespace zyx {

namespace mock {
class Faults;
}

// What `init` asked for.
struct LayerRequest {
  std::string layer;  // emu, metal or auto
  std::string board;
  int chip = 0;
  std::string cache_dir;
  bool dprint = false;
};

// Opens the device layer an init asked for; throws zyx::Error.
using LayerFactory = std::function<std::unique_ptr<DeviceLayer>(const LayerRequest&)>;

// The factory the binary uses (layers.cpp): metal, emu, or auto.
std::unique_ptr<DeviceLayer> open_layer(const LayerRequest& req);

// A parsed request, or the error its line earned.
struct Prepared {
  uint64_t id = 0;
  std::optional<Error> error;
  Request req;
  // Cheap requests may run on the reading thread when nothing is queued:
  // error replies, ping, exit, map, unmap, alloc, free, release.
  bool cheap() const;
  bool is_exit() const { return !error && req.cmd == Cmd::Exit; }
  // A run without `after` may launch while earlier runs are in flight;
  // every other request executes only once they have ended.
  bool overlaps_runs() const { return !error && req.cmd == Cmd::Run && req.after.empty(); }
};

class Server {
 public:
  // Sink receives each reply as one line without its '\n'.
  using Sink = std::function<void(std::string_view)>;

  Server(Sink sink, LayerFactory factory = open_layer, std::string shm_dir = "/dev/shm");
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // prepare parses one request line; it never throws.
  static Prepared prepare(std::string_view line) noexcept;
  // too_long is the request of a skipped oversized line (id 0).
  static Prepared too_long(uint64_t bytes);

  // execute answers one prepared request with exactly one reply. It returns
  // false after `exit`, when the caller should stop (shutdown has run).
  bool execute(Prepared& p);

  // handle is prepare + execute.
  bool handle(std::string_view line) {
    Prepared p = prepare(line);
    return execute(p);
  }
  // line_too_long answers a skipped oversized line (id 0).
  void line_too_long(uint64_t bytes) {
    Prepared p = too_long(bytes);
    execute(p);
  }

  // shutdown finishes the runs in flight (answering them), frees every
  // buffer and program, drops the layer and unmaps every segment. Safe to
  // call more than once.
  void shutdown();

  // Runs the layer has launched and not finished (DeviceLayer::launch): a
  // run's reply waits until it has ended, and every later reply waits for
  // it. The caller of execute finishes them when it has nothing else to do
  // (Pipeline: once its waiter thread has seen the oldest end).
  size_t runs_in_flight() const { return pending_.size(); }
  // oldest_run is the oldest run in flight (null when none), for a thread
  // that waits for it (PendingRun::wait) while execute goes on; the server
  // may finish and drop its own reference meanwhile.
  std::shared_ptr<PendingRun> oldest_run() const { return pending_.empty() ? nullptr : pending_.front().run; }
  // finish_oldest_run waits for the oldest run in flight and answers it.
  void finish_oldest_run();
  // At most this many runs are in flight; launching one more finishes the
  // oldest first.
  static constexpr size_t kMaxRunsInFlight = 16;

  // set_mock makes the faults of mock mode (mock.hpp) part of the request
  // and output paths; faults must outlive the server.
  void set_mock(mock::Faults* faults) { mock_ = faults; }

  // For tests.
  size_t live_buffers() const { return buffers_.size(); }
  size_t live_programs() const { return programs_.size(); }
  size_t mapped_segments() const { return segments_.mapped(); }
  const DeviceDesc& desc() const { return desc_; }

 private:
  json run_cmd(Request& r);
  std::unique_ptr<PendingRun> start_run(Request& r);
  void check_after(const Request& r) const;
  void finish_runs();
  json cmd_init(const InitRequest& r);
  json cmd_alloc(const AllocRequest& r);
  json cmd_free(const IdRequest& r);
  json cmd_transfer(const TransferRequest& r, bool write);
  json cmd_compile(const ProgramDesc& p);
  std::unique_ptr<PendingRun> cmd_run(const RunRequest& r);
  json cmd_release(const IdRequest& r);

  DeviceLayer& layer();
  // send and send_error answer runs in flight first, so replies stay in
  // request order, and remember the outcome (send: a success reply, which
  // carries its id); emit writes the reply to request n (its number, for
  // mock mode's faults) as it is.
  void send(const json& reply);
  void send_error(uint64_t id, const std::string& code, const std::string& message);
  void emit(const json& reply, uint64_t n);
  void emit_error(uint64_t id, uint64_t n, const std::string& code, const std::string& message);

  struct RunInFlight {
    uint64_t id;
    uint64_t n;  // the request number
    std::shared_ptr<PendingRun> run;
  };
  // requests_ counts the requests executed: the one executing is request
  // requests_ (1 for the first line read; execute runs them in read order).
  uint64_t requests_ = 0;
  mock::Faults* mock_ = nullptr;
  std::deque<RunInFlight> pending_;
  // The outcomes of the answered requests, for `after`: slot id % window
  // holds the id of the last request answered with that slot and its error
  // code ("" for success). With increasing ids (as the driver sends them)
  // every request of the window before a request is there.
  struct Outcome {
    uint64_t id = 0;
    std::string code;
  };
  std::array<Outcome, kAfterWindow> outcomes_{};
  void remember(uint64_t id, const std::string& code);

  Sink sink_;
  LayerFactory factory_;
  SegmentCache segments_;
  std::unique_ptr<DeviceLayer> layer_;
  DeviceDesc desc_;
  std::map<uint64_t, BufferInfo> buffers_;
  std::map<uint64_t, ProgramChecks> programs_;
};

}  // namespace zyx
