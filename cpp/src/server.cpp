#include "server.hpp"

#include <charconv>
#include <climits>
#include <cstring>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <tuple>

#include "mock.hpp"

namespace zyx {

namespace {

// The cache directory when init names none. There is no shared fallback
// (a world-writable cache would let another user plant kernel objects).
std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/zyx/tt";
  if (const char* h = std::getenv("HOME"); h && *h == '/') return std::string(h) + "/.cache/zyx/tt";
  return "";
}

json pair_list(const std::vector<std::pair<uint32_t, uint32_t>>& v) {
  json out = json::array();
  for (const auto& [a, b] : v) out.push_back({a, b});
  return out;
}

json describe_json(const DeviceDesc& d) {
  json bank_cores = json::array();
  for (const auto& c : d.l1_bank_cores) bank_cores.push_back({c.row, c.col});
  return {
      {"protocol", kProtocolVersion},
      {"runtime", d.runtime},
      {"version", ZYX_TT_RUNTIME_VERSION},
      {"arch", d.arch},
      {"board", d.board},
      {"chip", d.chip},
      {"grid",
       {{"rows", d.grid.rows},
        {"cols", d.grid.cols},
        {"harvested_rows", d.grid.harvested_rows},
        {"harvested_cols", d.grid.harvested_cols},
        {"harvest_mask", d.grid.harvest_mask}}},
      {"dram", {{"banks", d.dram_banks}, {"bank_size", d.dram_bank_size}, {"alignment", d.dram_alignment}}},
      {"l1",
       {{"size", d.l1_size},
        {"unreserved_base", d.l1_unreserved_base},
        {"alignment", d.l1_alignment},
        {"banks", d.l1_bank_cores.size()},
        {"bank_cores", bank_cores}}},
      {"noc",
       {{"worker_x", d.noc.worker_x}, {"worker_y", d.noc.worker_y}, {"dram_banks", pair_list(d.noc.dram_banks)}}},
      {"semaphores", d.semaphores},
  };
}

// check_desc checks what a layer reports before the server relies on it.
void check_desc(DeviceDesc& d) {
  auto bad = [](const std::string& m) { throw Error("internal", "the device layer reports " + m); };
  if (d.grid.rows == 0 || d.grid.cols == 0) bad("an empty worker grid");
  if (d.grid.rows > 64 || d.grid.cols > 64) bad("a worker grid over 64 x 64");
  if (d.noc.worker_x.size() != d.grid.cols || d.noc.worker_y.size() != d.grid.rows)
    bad("NOC tables (" + std::to_string(d.noc.worker_x.size()) + " x, " + std::to_string(d.noc.worker_y.size()) +
        " y) that do not match its grid");
  if (d.noc.dram_banks.size() != d.dram_banks)
    bad(std::to_string(d.noc.dram_banks.size()) + " DRAM bank coordinates for " + std::to_string(d.dram_banks) + " banks");
  if (d.l1_bank_cores.empty()) {
    // The protocol's default: one L1 bank per worker core, row-major.
    for (uint32_t r = 0; r < d.grid.rows; r++)
      for (uint32_t c = 0; c < d.grid.cols; c++) d.l1_bank_cores.push_back({r, c});
  }
  for (const auto& c : d.l1_bank_cores)
    if (c.row >= d.grid.rows || c.col >= d.grid.cols) bad("an L1 bank outside the worker grid");
  if (d.semaphores == 0 || d.semaphores > 64) bad(std::to_string(d.semaphores) + " semaphores per core");
  if (d.l1_alignment == 0 || d.dram_alignment == 0) bad("an alignment of 0");
}

}  // namespace

bool Prepared::cheap() const {
  if (error) return true;
  switch (req.cmd) {
    case Cmd::Ping:
    case Cmd::Exit:
    case Cmd::Map:
    case Cmd::Unmap:
    case Cmd::Alloc:
    case Cmd::Free:
    case Cmd::Release:
      return true;
    default:
      return false;
  }
}

Server::Server(Sink sink, LayerFactory factory, std::string shm_dir)
    : sink_(std::move(sink)), factory_(std::move(factory)), segments_(std::move(shm_dir)) {}

Server::~Server() { shutdown(); }

void Server::emit(const json& reply, uint64_t n) {
  if (mock_ && mock_->on_reply(n, reply, sink_)) return;
  // Messages may quote input bytes that are not UTF-8: replace, never throw.
  sink_(reply.dump(-1, ' ', false, json::error_handler_t::replace));
}

void Server::remember(uint64_t id, const std::string& code) {
  if (id != 0) outcomes_[id % kAfterWindow] = Outcome{id, code};
}

void Server::emit_error(uint64_t id, uint64_t n, const std::string& code, const std::string& message) {
  remember(id, code);
  emit({{"id", id}, {"ok", false}, {"error", {{"code", code}, {"message", message}}}}, n);
}

void Server::send(const json& reply) {
  finish_runs();
  remember(reply.at("id").get<uint64_t>(), "");
  emit(reply, requests_);
}

void Server::send_error(uint64_t id, const std::string& code, const std::string& message) {
  finish_runs();
  emit_error(id, requests_, code, message);
}

namespace {

// error_of is the code and message of the exception being handled.
std::pair<std::string, std::string> error_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& e) {
    return {e.code, e.what()};
  } catch (const std::bad_alloc&) {
    return {"out_of_memory", "the runtime ran out of host memory"};
  } catch (const std::exception& e) {
    return {"internal", e.what()};
  } catch (...) {
    return {"internal", "unknown exception"};
  }
}

}  // namespace

void Server::finish_oldest_run() {
  if (pending_.empty()) return;
  RunInFlight r = std::move(pending_.front());
  pending_.pop_front();
  uint64_t ns = 0;
  try {
    ns = r.run->finish();
  } catch (...) {
    auto [code, message] = error_of(std::current_exception());
    emit_error(r.id, r.n, code, message);
    return;
  }
  remember(r.id, "");
  json reply = {{"elapsed_ns", ns}, {"id", r.id}, {"ok", true}};
  if (std::vector<std::string> w = r.run->warnings(); !w.empty()) reply["warnings"] = w;
  emit(reply, r.n);
}

void Server::finish_runs() {
  while (!pending_.empty()) finish_oldest_run();
}

namespace {

// plain_ping_id reads the commonest request, exactly {"id":N,"cmd":"ping"}
// as the driver writes it (N decimal, no leading zero, 1 to 2^64-1),
// without the JSON parser; 0 for any other line, which the parser reads.
uint64_t plain_ping_id(std::string_view line) {
  constexpr std::string_view head = "{\"id\":", tail = ",\"cmd\":\"ping\"}";
  if (line.size() <= head.size() + tail.size() || line.substr(0, head.size()) != head ||
      line.substr(line.size() - tail.size()) != tail)
    return 0;
  std::string_view digits = line.substr(head.size(), line.size() - head.size() - tail.size());
  if (digits.size() > 20 || digits[0] == '0') return 0;
  uint64_t id = 0;
  for (char d : digits) {
    if (d < '0' || d > '9') return 0;
    uint64_t v = static_cast<uint64_t>(d - '0');
    if (id > (UINT64_MAX - v) / 10) return 0;
    id = id * 10 + v;
  }
  return id;
}

}  // namespace

Prepared Server::prepare(std::string_view line) noexcept {
  Prepared p;
  if (uint64_t id = plain_ping_id(line)) {
    p.id = p.req.id = id;
    p.req.cmd = Cmd::Ping;
    return p;
  }
  try {
    p.req = parse_request(line, &p.id);
  } catch (const Error& e) {
    p.error = e;
  } catch (const std::bad_alloc&) {
    p.error = Error("out_of_memory", "the runtime ran out of host memory parsing the request");
  } catch (const std::exception& e) {
    p.error = Error("internal", std::string("parsing the request: ") + e.what());
  } catch (...) {
    p.error = Error("internal", "parsing the request: unknown exception");
  }
  return p;
}

Prepared Server::too_long(uint64_t bytes) {
  Prepared p;
  p.error = Error("line_too_long", "request line of " + std::to_string(bytes) + " bytes is over the " +
                                       std::to_string(kMaxLineBytes) + "-byte limit; it was skipped");
  return p;
}

bool Server::execute(Prepared& p) {
  ++requests_;
  if (mock_) {
    if (mock_->ends_at(requests_)) finish_runs();  // the requests before it are answered
    if (std::optional<Error> e = mock_->before_request(requests_, p)) {
      send_error(p.id, e->code, e->what());
      return true;
    }
  }
  if (p.error) {
    send_error(p.id, p.error->code, p.error->what());
    return true;
  }
  // Only runs overlap runs in flight: anything else (and a run that
  // depends on earlier requests) executes once they have ended.
  if (!p.overlaps_runs()) finish_runs();
  if (p.req.cmd == Cmd::Ping && p.req.after.empty() && (!mock_ || mock_->passes_reply(requests_))) {
    // The commonest request, answered as below would, without building the
    // reply as JSON: {"id":N,"ok":true}.
    char reply[48] = "{\"id\":";
    char* end = std::to_chars(reply + 6, reply + sizeof reply, p.id).ptr;
    std::memcpy(end, ",\"ok\":true}", 11);
    remember(p.id, "");
    sink_(std::string_view(reply, static_cast<size_t>(end - reply) + 11));
    return true;
  }
  json reply;
  std::string code, message;
  std::unique_ptr<PendingRun> run;
  try {
    if (p.req.cmd == Cmd::Run)
      run = start_run(p.req);
    else
      reply = run_cmd(p.req);
  } catch (...) {
    std::tie(code, message) = error_of(std::current_exception());
  }
  if (!code.empty()) {
    send_error(p.id, code, message);
    return true;
  }
  if (run) {
    pending_.push_back({p.id, requests_, std::move(run)});
    // A run that has already ended (a layer that runs programs to their end
    // in launch) is answered now; one more than the limit in flight waits
    // for the oldest.
    while (!pending_.empty() && (pending_.size() > kMaxRunsInFlight || pending_.front().run->done()))
      finish_oldest_run();
    return true;
  }
  reply["id"] = p.id;
  reply["ok"] = true;
  send(reply);
  if (p.req.cmd == Cmd::Exit) {
    shutdown();
    return false;
  }
  return true;
}

DeviceLayer& Server::layer() {
  if (!layer_) throw Error("not_initialized", "send init first");
  return *layer_;
}

// check_after refuses a request whose `after` names a request outside the
// window before it, one it names twice, or one that was not answered before
// it (invalid_argument), then one that failed (dependency_failed). Runs in
// flight have been finished: their outcomes are known.
void Server::check_after(const Request& r) const {
  const std::string cmd = cmd_name(r.cmd);
  auto invalid = [&](size_t i, const std::string& msg) {
    throw Error("invalid_argument", cmd + ".after[" + std::to_string(i) + "]: request " + std::to_string(r.after[i]) + " " + msg);
  };
  for (size_t i = 0; i < r.after.size(); i++) {
    uint64_t dep = r.after[i];
    if (dep >= r.id || r.id - dep > kAfterWindow)
      invalid(i, "is not one of the " + std::to_string(kAfterWindow) + " requests before request " + std::to_string(r.id));
    for (size_t j = 0; j < i; j++)
      if (r.after[j] == dep) invalid(i, "is named twice (also after[" + std::to_string(j) + "])");
    uint64_t held = outcomes_[dep % kAfterWindow].id;
    if (dep == 0 || held == 0 || held < dep)
      invalid(i, "is unknown: no request " + std::to_string(dep) + " came before request " + std::to_string(r.id));
    if (held != dep)
      invalid(i, "is unknown: it did not come before request " + std::to_string(r.id) + ", or request " +
                     std::to_string(held) + ", sent since, took its place (the runtime remembers " +
                     std::to_string(kAfterWindow) + " requests of increasing ids)");
  }
  for (size_t i = 0; i < r.after.size(); i++) {
    const Outcome& o = outcomes_[r.after[i] % kAfterWindow];
    if (!o.code.empty())
      throw Error("dependency_failed", cmd + ".after[" + std::to_string(i) + "]: request " + std::to_string(o.id) +
                                           " failed (" + o.code + "); this request was not executed");
  }
}

json Server::run_cmd(Request& r) {
  switch (r.cmd) {
    case Cmd::Ping:
    case Cmd::Exit:
      check_after(r);
      return json::object();
    case Cmd::Init:
      check_after(r);
      return cmd_init(std::get<InitRequest>(r.body));
    default:
      break;
  }
  layer();  // every other command needs init
  check_after(r);
  switch (r.cmd) {
    case Cmd::Map:
      segments_.map(std::get<SegmentRequest>(r.body).segment);
      return json::object();
    case Cmd::Unmap:
      segments_.unmap(std::get<SegmentRequest>(r.body).segment);
      return json::object();
    case Cmd::Alloc:
      return cmd_alloc(std::get<AllocRequest>(r.body));
    case Cmd::Free:
      return cmd_free(std::get<IdRequest>(r.body));
    case Cmd::Write:
      return cmd_transfer(std::get<TransferRequest>(r.body), true);
    case Cmd::Read:
      return cmd_transfer(std::get<TransferRequest>(r.body), false);
    case Cmd::Compile:
      return cmd_compile(std::get<ProgramDesc>(r.body));
    case Cmd::Release:
      return cmd_release(std::get<IdRequest>(r.body));
    default:
      throw Error("internal", "unhandled command");
  }
}

json Server::cmd_init(const InitRequest& r) {
  if (layer_)
    throw Error("invalid_argument", "init: already initialized (" + desc_.runtime + ", chip " + std::to_string(desc_.chip) +
                                        "); one runtime process drives one chip");
  if (r.chip > INT_MAX) throw Error("invalid_argument", "init.chip: " + std::to_string(r.chip) + " is out of range");
  LayerRequest lr;
  lr.layer = r.layer;
  lr.chip = static_cast<int>(r.chip);
  lr.board = r.board;
  lr.cache_dir = r.cache_dir.empty() ? default_cache_dir() : r.cache_dir;
  lr.dprint = r.dprint;
  // With no cache_dir and no home, the layer makes a private directory of its
  // own for this run (never a shared one).
  if (!lr.cache_dir.empty() && lr.cache_dir.front() != '/')
    throw Error("invalid_argument", "init.cache_dir: \"" + lr.cache_dir + "\" is not an absolute path");

  std::unique_ptr<DeviceLayer> l = factory_(lr);
  if (!l) throw Error("internal", "the " + lr.layer + " layer factory returned nothing");
  DeviceDesc d = l->describe();
  check_desc(d);
  layer_ = std::move(l);
  desc_ = d;
  std::cerr << "zyx-tt-runtime: " << d.runtime << " layer, " << d.arch << " " << d.board << " chip " << d.chip
            << ", grid " << d.grid.rows << "x" << d.grid.cols << "\n";
  return describe_json(desc_);
}

json Server::cmd_alloc(const AllocRequest& r) {
  check_alloc(r.size, r.spec, desc_);
  uint64_t address = 0;
  uint64_t id = layer().alloc(r.size, r.spec, &address);
  if (buffers_.count(id)) {
    try {
      layer().free(id);
    } catch (...) {
    }
    throw Error("internal", "the device layer returned buffer id " + std::to_string(id) + ", which is still live");
  }
  buffers_[id] = BufferInfo{address, r.size, r.spec};
  return {{"buffer", id}, {"address", address}};
}

json Server::cmd_free(const IdRequest& r) {
  if (!buffers_.count(r.id))
    throw Error("unknown_buffer", "free.buffer: buffer " + std::to_string(r.id) + " does not exist (never allocated, or freed)");
  layer().free(r.id);
  buffers_.erase(r.id);
  return json::object();
}

json Server::cmd_transfer(const TransferRequest& r, bool write) {
  const char* cmd = write ? "write" : "read";
  auto it = buffers_.find(r.buffer);
  if (it == buffers_.end())
    throw Error("unknown_buffer", std::string(cmd) + ".buffer: buffer " + std::to_string(r.buffer) +
                                      " does not exist (never allocated, or freed)");
  const BufferInfo& b = it->second;
  if (r.offset > b.size || r.length > b.size - r.offset)
    throw Error("invalid_argument", std::string(cmd) + ": range [" + std::to_string(r.offset) + ", +" +
                                        std::to_string(r.length) + ") is past the end of buffer " +
                                        std::to_string(r.buffer) + " (" + std::to_string(b.size) + " bytes)");
  uint8_t* host = segments_.range(r.segment, r.segment_offset, r.length);
  if (r.length == 0) return json::object();
  if (write)
    layer().write(r.buffer, r.offset, host, r.length);
  else
    layer().read(r.buffer, r.offset, host, r.length);
  return json::object();
}

json Server::cmd_compile(const ProgramDesc& given) {
  // The kernels' Metal 2.0 bindings become the args they stand for; the
  // lowered program keeps their names, which check_program checks first.
  ProgramDesc p = lower_bindings(given);
  ProgramChecks checks = check_program(p, desc_);
  uint64_t id = layer().compile(p);
  if (programs_.count(id)) {
    try {
      layer().release(id);
    } catch (...) {
    }
    throw Error("internal", "the device layer returned program id " + std::to_string(id) + ", which is still live");
  }
  programs_[id] = std::move(checks);
  return {{"program", id}};
}

std::unique_ptr<PendingRun> Server::start_run(Request& req) {
  layer();  // runs need init
  check_after(req);
  return cmd_run(std::get<RunRequest>(req.body));
}

std::unique_ptr<PendingRun> Server::cmd_run(const RunRequest& r) {
  auto pit = programs_.find(r.program);
  if (pit == programs_.end())
    throw Error("unknown_program", "run.program: program " + std::to_string(r.program) +
                                       " does not exist (never compiled, or released)");
  std::vector<RunArgIn> in(r.args.size());
  for (size_t i = 0; i < r.args.size(); i++) in[i] = RunArgIn{r.args[i].is_buffer, r.args[i].value};
  check_run(pit->second, in, desc_, [this](uint64_t id) -> const BufferInfo* {
    auto it = buffers_.find(id);
    return it == buffers_.end() ? nullptr : &it->second;
  });
  std::vector<RunArg> args(r.args.size());
  for (size_t i = 0; i < r.args.size(); i++) {
    args[i].is_buffer = r.args[i].is_buffer;
    if (args[i].is_buffer)
      args[i].buffer = r.args[i].value;
    else
      args[i].value = r.args[i].value;
  }
  return layer().launch(r.program, args, r.timed);
}

json Server::cmd_release(const IdRequest& r) {
  if (!programs_.count(r.id))
    throw Error("unknown_program", "release.program: program " + std::to_string(r.id) +
                                       " does not exist (never compiled, or released)");
  layer().release(r.id);
  programs_.erase(r.id);
  return json::object();
}

void Server::shutdown() {
  finish_runs();
  if (layer_) {
    for (auto& [id, _] : programs_) {
      try {
        layer_->release(id);
      } catch (const std::exception& e) {
        std::cerr << "zyx-tt-runtime: releasing program " << id << " at exit: " << e.what() << "\n";
      }
    }
    for (auto& [id, _] : buffers_) {
      try {
        layer_->free(id);
      } catch (const std::exception& e) {
        std::cerr << "zyx-tt-runtime: freeing buffer " << id << " at exit: " << e.what() << "\n";
      }
    }
    layer_.reset();
  }
  programs_.clear();
  buffers_.clear();
  segments_.clear();
}

}  // namespace zyx
