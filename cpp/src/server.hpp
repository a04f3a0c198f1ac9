// Server is the protocol v1 dispatcher (docs/protocol.md): one request line
// in, exactly one reply line out, whatever the line holds. It owns the
// checked buffer and program tables and the shm mappings, and calls one
// DeviceLayer for the device work.
#pragma once

#include <cstdint>
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

namespace zyx {

inline constexpr int kProtocolVersion = 1;

// What `init` asked for.
struct LayerRequest {
  std::string layer;  // emu, metal or auto
  std::string board;
  int chip = 0;
  std::string cache_dir;
};

// Opens the device layer an init asked for; throws zyx::Error.
using LayerFactory = std::function<std::unique_ptr<DeviceLayer>(const LayerRequest&)>;

// The factory the binary uses (layers.cpp): metal, emu, or auto.
std::unique_ptr<DeviceLayer> open_layer(const LayerRequest& req);

class Server {
 public:
  // Sink receives each reply as one line without its '\n'.
  using Sink = std::function<void(std::string_view)>;

  Server(Sink sink, LayerFactory factory = open_layer, std::string shm_dir = "/dev/shm");
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // handle answers one request line. It returns false after `exit`, when the
  // caller should stop reading (shutdown has run).
  bool handle(std::string_view line);

  // line_too_long answers a skipped oversized line (id 0).
  void line_too_long(uint64_t bytes);

  // shutdown frees every buffer and program, drops the layer and unmaps every
  // segment. Safe to call more than once.
  void shutdown();

  // For tests.
  size_t live_buffers() const { return buffers_.size(); }
  size_t live_programs() const { return programs_.size(); }
  size_t mapped_segments() const { return segments_.mapped(); }

 private:
  struct Program {
    std::vector<ParamDesc> params;
    std::vector<LayoutEntry> buffer_words;  // entries whose values must fit 32 bits
  };

  json dispatch(const std::string& cmd, const json& req);
  json cmd_init(const Fields& f);
  json cmd_alloc(const Fields& f);
  json cmd_free(const Fields& f);
  json cmd_transfer(const Fields& f, bool write);
  json cmd_compile(const json& req);
  json cmd_run(const Fields& f);
  json cmd_release(const Fields& f);

  DeviceLayer& layer();
  BufferInfo& buffer(uint64_t id);
  void send(const json& reply);
  void send_error(uint64_t id, const std::string& code, const std::string& message);

  Sink sink_;
  LayerFactory factory_;
  SegmentCache segments_;
  std::unique_ptr<DeviceLayer> layer_;
  DeviceDesc desc_;
  std::map<uint64_t, BufferInfo> buffers_;
  std::map<uint64_t, Program> programs_;
};

}  // namespace zyx
