#include "server.hpp"

#include <climits>
#include <cstdlib>
#include <iostream>

namespace zyx {

namespace {

[[noreturn]] void invalid(const std::string& msg) { throw Error("invalid_argument", msg); }

std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/zyx/tt-kernels";
  if (const char* h = std::getenv("HOME"); h && *h == '/') return std::string(h) + "/.cache/zyx/tt-kernels";
  return "/tmp/zyx-tt-kernels";
}

json describe_json(const DeviceDesc& d) {
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
      {"l1", {{"size", d.l1_size}, {"unreserved_base", d.l1_unreserved_base}}},
  };
}

}  // namespace

Server::Server(Sink sink, LayerFactory factory, std::string shm_dir)
    : sink_(std::move(sink)), factory_(std::move(factory)), segments_(std::move(shm_dir)) {}

Server::~Server() { shutdown(); }

void Server::send(const json& reply) {
  // Messages may quote input bytes that are not UTF-8: replace, never throw.
  sink_(reply.dump(-1, ' ', false, json::error_handler_t::replace));
}

void Server::send_error(uint64_t id, const std::string& code, const std::string& message) {
  send({{"id", id}, {"ok", false}, {"error", {{"code", code}, {"message", message}}}});
}

void Server::line_too_long(uint64_t bytes) {
  send_error(0, "line_too_long",
             "request line of " + std::to_string(bytes) + " bytes is over the " + std::to_string(kMaxLineBytes) +
                 "-byte limit; it was skipped");
}

bool Server::handle(std::string_view line) {
  uint64_t id = 0;
  json reply;
  std::string code, message;
  bool keep_going = true;
  try {
    json req = parse_request(line);
    if (!req.is_object()) bad_request("a request must be a JSON object");
    auto it = req.find("id");
    if (it == req.end() || it->is_null()) bad_request("missing field id");
    if (!it->is_number_unsigned() || it->get<uint64_t>() == 0)
      bad_request("id must be an unsigned integer other than 0");
    id = it->get<uint64_t>();
    std::string cmd = Fields(req, "request").str("cmd");
    if (cmd == "exit") {
      keep_going = false;
      reply = json::object();
    } else {
      reply = dispatch(cmd, req);
    }
  } catch (const Error& e) {
    code = e.code;
    message = e.what();
  } catch (const json::exception& e) {
    code = "bad_request";
    message = e.what();
  } catch (const std::bad_alloc&) {
    code = "out_of_memory";
    message = "the runtime ran out of host memory";
  } catch (const std::exception& e) {
    code = "internal";
    message = e.what();
  } catch (...) {
    code = "internal";
    message = "unknown exception";
  }
  if (!code.empty()) {
    send_error(id, code, message);
    return true;
  }
  reply["id"] = id;
  reply["ok"] = true;
  send(reply);
  if (!keep_going) shutdown();
  return keep_going;
}

DeviceLayer& Server::layer() {
  if (!layer_) throw Error("not_initialized", "send init first");
  return *layer_;
}

BufferInfo& Server::buffer(uint64_t id) {
  auto it = buffers_.find(id);
  if (it == buffers_.end())
    throw Error("unknown_buffer", "buffer " + std::to_string(id) + " does not exist (never allocated, or freed)");
  return it->second;
}

json Server::dispatch(const std::string& cmd, const json& req) {
  Fields f(req, "request");
  if (cmd == "ping") return json::object();
  if (cmd == "init") return cmd_init(f);
  static const char* known[] = {"map", "unmap", "alloc", "free", "write", "read", "compile", "run", "release"};
  bool is_known = false;
  for (const char* k : known) is_known = is_known || cmd == k;
  if (!is_known) throw Error("unknown_command", "unknown command \"" + cmd + "\"");
  layer();  // every other command needs init
  if (cmd == "map") {
    segments_.map(f.str("segment"));
    return json::object();
  }
  if (cmd == "unmap") {
    segments_.unmap(f.str("segment"));
    return json::object();
  }
  if (cmd == "alloc") return cmd_alloc(f);
  if (cmd == "free") return cmd_free(f);
  if (cmd == "write") return cmd_transfer(f, true);
  if (cmd == "read") return cmd_transfer(f, false);
  if (cmd == "compile") return cmd_compile(req);
  if (cmd == "run") return cmd_run(f);
  return cmd_release(f);
}

json Server::cmd_init(const Fields& f) {
  uint64_t protocol = f.u64("protocol");
  if (protocol != kProtocolVersion)
    throw Error("version_mismatch", "this runtime speaks protocol " + std::to_string(kProtocolVersion) +
                                        "; the driver asked for protocol " + std::to_string(protocol));
  if (layer_)
    invalid("already initialized (" + desc_.runtime + ", chip " + std::to_string(desc_.chip) +
            "); one runtime process drives one chip");
  LayerRequest lr;
  lr.layer = f.str_or("layer", "auto");
  if (lr.layer != "emu" && lr.layer != "metal" && lr.layer != "auto")
    invalid("layer \"" + lr.layer + "\" is not emu, metal or auto");
  uint64_t chip = f.u64_or("chip", 0);
  if (chip > INT_MAX) invalid("chip " + std::to_string(chip) + " is out of range");
  lr.chip = static_cast<int>(chip);
  lr.board = f.str_or("board", "n150");
  lr.cache_dir = f.str_or("cache_dir", "");
  if (lr.cache_dir.empty()) lr.cache_dir = default_cache_dir();

  std::unique_ptr<DeviceLayer> l = factory_(lr);
  if (!l) throw Error("internal", "the " + lr.layer + " layer factory returned nothing");
  DeviceDesc d = l->describe();
  if (d.grid.rows == 0 || d.grid.cols == 0) throw Error("internal", "the device layer reports an empty worker grid");
  layer_ = std::move(l);
  desc_ = d;
  std::cerr << "zyx-tt-runtime: " << d.runtime << " layer, " << d.arch << " " << d.board << " chip " << d.chip
            << ", grid " << d.grid.rows << "x" << d.grid.cols << "\n";
  return describe_json(desc_);
}

json Server::cmd_alloc(const Fields& f) {
  uint64_t size = f.u64("size");
  uint64_t page = f.u64_or("page_size", 2048);
  if (size == 0) invalid("size must be > 0");
  if (page == 0) invalid("page_size must be > 0");
  if (page > UINT32_MAX) invalid("page_size " + std::to_string(page) + " is past 32 bits");
  uint64_t pages = size / page + (size % page != 0);
  if (pages > UINT32_MAX) invalid(std::to_string(pages) + " pages of " + std::to_string(page) + " bytes are past 32 bits");
  if (desc_.dram_banks && desc_.dram_bank_size) {
    uint64_t capacity = desc_.dram_bank_size > UINT64_MAX / desc_.dram_banks ? UINT64_MAX
                                                                             : desc_.dram_bank_size * desc_.dram_banks;
    if (size > capacity)
      throw Error("out_of_memory", "buffer of " + std::to_string(size) + " bytes is larger than the device DRAM (" +
                                       std::to_string(capacity) + " bytes)");
  }
  uint64_t address = 0;
  uint64_t id = layer().alloc(size, page, &address);
  if (buffers_.count(id)) {
    try {
      layer().free(id);
    } catch (...) {
    }
    throw Error("internal", "the device layer returned buffer id " + std::to_string(id) + ", which is still live");
  }
  buffers_[id] = BufferInfo{address, size, page};
  return {{"buffer", id}, {"address", address}};
}

json Server::cmd_free(const Fields& f) {
  uint64_t id = f.u64("buffer");
  buffer(id);
  layer().free(id);
  buffers_.erase(id);
  return json::object();
}

json Server::cmd_transfer(const Fields& f, bool write) {
  uint64_t id = f.u64("buffer");
  uint64_t offset = f.u64_or("offset", 0);
  std::string segment = f.str("segment");
  uint64_t seg_offset = f.u64_or("segment_offset", 0);
  uint64_t length = f.u64("length");
  const BufferInfo& b = buffer(id);
  if (offset > b.size || length > b.size - offset)
    invalid("range [" + std::to_string(offset) + ", +" + std::to_string(length) + ") is past the end of buffer " +
            std::to_string(id) + " (" + std::to_string(b.size) + " bytes)");
  uint8_t* host = segments_.range(segment, seg_offset, length);
  if (length == 0) return json::object();
  if (write)
    layer().write(id, offset, host, length);
  else
    layer().read(id, offset, host, length);
  return json::object();
}

json Server::cmd_compile(const json& req) {
  ProgramDesc p = parse_program(req);
  if (desc_.l1_size > desc_.l1_unreserved_base) {
    uint64_t need = 0;
    for (const auto& cb : p.cbs) need += uint64_t{cb.page_bytes} * cb.pages;
    uint64_t have = desc_.l1_size - desc_.l1_unreserved_base;
    if (need > have)
      invalid("the circular buffers need " + std::to_string(need) + " bytes of L1; a core has " + std::to_string(have));
  }
  Program entry{p.params, buffer_word_entries(p)};
  uint64_t id = layer().compile(p);
  if (programs_.count(id)) {
    try {
      layer().release(id);
    } catch (...) {
    }
    throw Error("internal", "the device layer returned program id " + std::to_string(id) + ", which is still live");
  }
  programs_[id] = std::move(entry);
  return {{"program", id}};
}

json Server::cmd_run(const Fields& f) {
  uint64_t id = f.u64("program");
  auto pit = programs_.find(id);
  if (pit == programs_.end())
    throw Error("unknown_program", "program " + std::to_string(id) + " does not exist (never compiled, or released)");
  const Program& prog = pit->second;

  const json& grid = f.array("grid");
  if (grid.size() != 2 || !grid[0].is_number_unsigned() || !grid[1].is_number_unsigned())
    bad_request("run.grid must be [rows, cols] of unsigned integers");
  uint64_t rows = grid[0].get<uint64_t>(), cols = grid[1].get<uint64_t>();
  if (rows == 0 || cols == 0 || rows > desc_.grid.rows || cols > desc_.grid.cols)
    invalid("grid [" + std::to_string(rows) + ", " + std::to_string(cols) + "] is outside the chip's worker grid [" +
            std::to_string(desc_.grid.rows) + ", " + std::to_string(desc_.grid.cols) + "] (neither may be 0)");

  const json& args = f.array("args");
  if (args.size() != prog.params.size())
    invalid("run has " + std::to_string(args.size()) + " args; the program has " + std::to_string(prog.params.size()) +
            " params");
  std::vector<RunArg> run_args(args.size());
  for (size_t i = 0; i < args.size(); i++) {
    const ParamDesc& p = prog.params[i];
    Fields af(args[i], "run.args[" + std::to_string(i) + "]");
    RunArg& a = run_args[i];
    a.is_buffer = p.is_buffer();
    if (a.is_buffer) {
      if (af.has("value")) bad_request(af.name("value") + ": param " + p.name + " is a buffer; give {\"buffer\": id}");
      a.buffer = af.u64("buffer");
      if (!buffers_.count(a.buffer))
        throw Error("unknown_buffer", "run arg " + std::to_string(i) + " (" + p.name + "): buffer " +
                                          std::to_string(a.buffer) + " does not exist (never allocated, or freed)");
    } else {
      if (af.has("buffer")) bad_request(af.name("buffer") + ": param " + p.name + " is a variable; give {\"value\": bits}");
      a.value = af.u64("value");
    }
  }
  for (const LayoutEntry& e : prog.buffer_words) {
    const BufferInfo& b = buffers_.at(run_args[e.param].buffer);
    uint64_t v = e.kind == "buffer_addr"    ? b.address
                 : e.kind == "buffer_size"  ? b.size
                 : e.kind == "buffer_pages" ? b.pages()
                                            : b.page_size;
    if (v > UINT32_MAX)
      invalid(e.kind + " of param " + std::to_string(e.param) + " (" + prog.params[e.param].name + ") is " +
              std::to_string(v) + ", past the 32-bit kernel argument");
  }
  bool timed = f.boolean_or("timed", false);
  uint64_t elapsed = layer().run(id, static_cast<uint32_t>(rows), static_cast<uint32_t>(cols), run_args, timed);
  return {{"elapsed_ns", elapsed}};
}

json Server::cmd_release(const Fields& f) {
  uint64_t id = f.u64("program");
  if (!programs_.count(id))
    throw Error("unknown_program", "program " + std::to_string(id) + " does not exist (never compiled, or released)");
  layer().release(id);
  programs_.erase(id);
  return json::object();
}

void Server::shutdown() {
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
