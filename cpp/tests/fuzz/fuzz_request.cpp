// libFuzzer target: the request path of the server. Each input is a batch of
// request lines (split at '\n', at most 32) answered by a fresh Server on a
// FakeLayer after a fixed init: parse, shape checks, meaning checks and the
// table updates of every command, compile included. It aborts when a line
// does not get exactly one reply, a reply is not a well-formed protocol
// object, an error code is not one of the protocol's, or the id rule is
// broken (a line whose id parsed gets that id back).
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fake_layer.hpp"
#include "server.hpp"
#include "test_util.hpp"

using namespace zyx;

namespace {

std::string g_dir;

[[noreturn]] void broken(const std::string& what, std::string_view line, const std::string& reply) {
  std::fprintf(stderr, "fuzz_request: %s\nline: %.*s\nreply: %s\n", what.c_str(), static_cast<int>(std::min<size_t>(line.size(), 400)),
               line.data(), reply.c_str());
  std::abort();
}

// The id a line carries by the protocol's rule, or 0.
uint64_t id_of(std::string_view line) {
  if (line.find('\0') != std::string_view::npos) return 0;
  try {
    json j = json::parse(line);
    if (j.is_object() && j.contains("id") && j["id"].is_number_unsigned()) return j["id"].get<uint64_t>();
  } catch (...) {
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/zyx-fuzz-request-XXXXXX";
  const char* d = mkdtemp(tmpl);
  if (!d) std::abort();
  g_dir = d;
  // Segments the requests can name.
  for (const char* name : {"seg", "zyx-fuzz"}) {
    int fd = ::open((g_dir + "/" + name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || ::ftruncate(fd, 65536) != 0) std::abort();
    ::close(fd);
  }
  std::atexit([] {
    for (const char* name : {"seg", "zyx-fuzz"}) ::unlink((g_dir + "/" + name).c_str());
    ::rmdir(g_dir.c_str());
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto state = std::make_shared<test::FakeState>();
  state->backed_limit = 1 << 20;
  std::vector<std::string> replies;
  Server server([&](std::string_view l) { replies.emplace_back(l); },
                [&](const LayerRequest&) -> std::unique_ptr<DeviceLayer> { return std::make_unique<test::FakeLayer>(state); },
                g_dir);
  server.handle(R"({"id":1,"cmd":"init","protocol":2,"layer":"emu","cache_dir":"/tmp/zyx-fuzz-cache"})");
  if (replies.size() != 1 || replies[0].find("\"ok\":true") == std::string::npos) broken("init failed", "", replies.at(0));
  std::string_view in(reinterpret_cast<const char*>(data), size);
  for (int n = 0; n < 32 && !in.empty(); n++) {
    size_t nl = in.find('\n');
    std::string_view line = in.substr(0, nl);
    in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
    size_t before = replies.size();
    bool more = server.handle(line);
    if (replies.size() != before + 1) broken(std::to_string(replies.size() - before) + " replies", line, "");
    const std::string& r = replies.back();
    json j;
    try {
      j = json::parse(r);
    } catch (...) {
      broken("the reply is not JSON", line, r);
    }
    if (!j.is_object() || !j.contains("id") || !j["id"].is_number_unsigned() || !j.contains("ok") || !j["ok"].is_boolean())
      broken("the reply has no id or ok", line, r);
    if (!j["ok"].get<bool>()) {
      if (!j.contains("error") || !j["error"].is_object() || !j["error"].contains("code") || !j["error"]["code"].is_string() ||
          !test::kCodes.count(j["error"]["code"].get<std::string>()) || !j["error"].contains("message") ||
          !j["error"]["message"].is_string())
        broken("malformed error", line, r);
    }
    // The id comes back whenever the line is JSON with an id. Our framing
    // is stricter than nlohmann's plain parse (duplicate keys, depth): such
    // a line is a bad_request with id 0 and a "request: " message.
    uint64_t want = id_of(line);
    uint64_t got = j["id"].get<uint64_t>();
    bool framing = got == 0 && !j["ok"].get<bool>() && j["error"]["code"] == "bad_request" &&
                   j["error"]["message"].get<std::string>().rfind("request: ", 0) == 0;
    if (got != want && !framing) broken("the reply's id is " + j["id"].dump() + ", not " + std::to_string(want), line, r);
    if (server.live_buffers() != static_cast<size_t>(state->live_buffers) ||
        server.live_programs() != static_cast<size_t>(state->live_programs))
      broken("the server's tables and the layer disagree", line, r);
    if (!more) break;
  }
  return 0;
}
