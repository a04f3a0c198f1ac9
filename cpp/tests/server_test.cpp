// Server tests against FakeLayer: framing and JSON strictness, the init
// handshake, buffers and shm (including a segment shrunk after map), the
// table of bad programs (one row per validation rule, with the code and the
// field path each must get), run checks, pipelining and ordering, parse
// speed, and one reply per request under randomized garbage.
// Usage: zyx_server_test [seed] [iterations]
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fake_layer.hpp"
#include "line_reader.hpp"
#include "pipeline.hpp"
#include "server.hpp"
#include "test_util.hpp"

using namespace zyx;
using zyx::test::failures;
using zyx::test::kCodes;
using zyx::test::code_of;
using zyx::test::message_of;
using json = nlohmann::json;

namespace {

// Harness owns a server on a FakeLayer and a private segment directory.
struct Harness {
  std::shared_ptr<test::FakeState> state = std::make_shared<test::FakeState>();
  std::vector<std::string> replies;
  std::string dir;
  std::unique_ptr<Server> server;
  uint64_t next_id = 1;

  Harness() {
    char tmpl[] = "/tmp/zyx-server-test-XXXXXX";
    dir = mkdtemp(tmpl);
    server = std::make_unique<Server>([this](std::string_view l) { replies.emplace_back(l); },
                                      [this](const LayerRequest& r) -> std::unique_ptr<DeviceLayer> {
                                        if (r.layer == "metal") throw Error("unsupported", "built without tt-metal");
                                        return std::make_unique<test::FakeLayer>(state);
                                      },
                                      dir);
  }
  ~Harness() {
    server.reset();
    std::filesystem::remove_all(dir);
  }

  // send answers one line and checks that exactly one well-formed reply came.
  json send_line(const std::string& line) {
    size_t before = replies.size();
    server->handle(line);
    CHECK(replies.size() == before + 1, "line got " << replies.size() - before << " replies: " << line.substr(0, 200));
    if (replies.size() != before + 1) return json::object();
    json r;
    try {
      r = json::parse(replies.back());
    } catch (const std::exception& e) {
      CHECK(false, "reply is not JSON: " << replies.back());
      return json::object();
    }
    CHECK(r.is_object() && r.contains("id") && r["id"].is_number_unsigned() && r.contains("ok") && r["ok"].is_boolean(),
          "reply shape: " << replies.back());
    if (r.value("ok", true) == false) {
      CHECK(r.contains("error") && r["error"].is_object() && r["error"].contains("code") &&
                r["error"]["code"].is_string() && kCodes.count(r["error"]["code"].get<std::string>()) &&
                r["error"]["message"].is_string(),
            "error shape: " << replies.back());
    }
    return r;
  }

  json req(json body) {
    uint64_t id = next_id++;
    body["id"] = id;
    json r = send_line(body.dump());
    CHECK(r.value("id", uint64_t{0}) == id, "reply id " << r.value("id", uint64_t{0}) << " for request " << id);
    return r;
  }

  json ok(json body) {
    json r = req(body);
    CHECK(r.value("ok", false), "expected ok for " << body.dump().substr(0, 300) << ", got " << r.dump().substr(0, 400));
    return r;
  }

  // fails checks the code and, when given, that the message starts with the
  // field path and ": ".
  void fails(json body, const std::string& code, const std::string& path = "") {
    json r = req(body);
    std::string got = code_of(r);
    CHECK(got == code, "expected " << code << " for " << body.dump().substr(0, 300) << ", got " << r.dump().substr(0, 400));
    if (!path.empty())
      CHECK(message_of(r).rfind(path + ": ", 0) == 0, "expected the path " << path << ", got: " << message_of(r));
  }

  void init() { ok({{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"board", "n150"}, {"cache_dir", "/tmp/x"}}); }

  std::string segment(const std::string& name, const std::vector<uint8_t>& bytes) {
    std::string path = dir + "/" + name;
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    CHECK(fd >= 0, "create " << path);
    CHECK(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()), "write " << path);
    ::close(fd);
    return name;
  }
  std::vector<uint8_t> segment_bytes(const std::string& name) {
    std::vector<uint8_t> out;
    int fd = ::open((dir + "/" + name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;
    uint8_t buf[65536];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.insert(out.end(), buf, buf + n);
    ::close(fd);
    return out;
  }
};

// ---- framing -------------------------------------------------------------------

void test_framing() {
  Harness h;
  auto code_and_id = [&](const std::string& line) {
    json r = h.send_line(line);
    return std::make_pair(r.value("id", uint64_t{99}), code_of(r));
  };
  using P = std::pair<uint64_t, std::string>;
  CHECK((code_and_id("not json") == P{0, "bad_request"}), "garbage");
  CHECK((code_and_id("") == P{0, "bad_request"}), "empty line");
  CHECK((code_and_id("   ") == P{0, "bad_request"}), "blank line");
  CHECK((code_and_id("[1,2]") == P{0, "bad_request"}), "array");
  CHECK((code_and_id(R"({"cmd":"ping"})") == P{0, "bad_request"}), "no id");
  CHECK((code_and_id(R"({"id":0,"cmd":"ping"})") == P{0, "bad_request"}), "id 0");
  CHECK((code_and_id(R"({"id":-4,"cmd":"ping"})") == P{0, "bad_request"}), "negative id");
  CHECK((code_and_id(R"({"id":"4","cmd":"ping"})") == P{0, "bad_request"}), "string id");
  CHECK((code_and_id(R"({"id":4.5,"cmd":"ping"})") == P{0, "bad_request"}), "float id");
  CHECK((code_and_id(R"({"id":4e0,"cmd":"ping"})") == P{0, "bad_request"}), "exponent id");
  CHECK((code_and_id(R"({"id":18446744073709551616,"cmd":"ping"})") == P{0, "bad_request"}), "id past 64 bits");
  CHECK((code_and_id(R"({"id":18446744073709551615,"cmd":"ping"})") == P{UINT64_MAX, "ok"}), "max id");
  CHECK((code_and_id(R"({"id":5})") == P{5, "bad_request"}), "no cmd");
  CHECK((code_and_id(R"({"id":5,"cmd":4})") == P{5, "bad_request"}), "cmd not a string");
  CHECK((code_and_id(R"({"id":5,"cmd":"frobnicate"})") == P{5, "unknown_command"}), "unknown command");
  CHECK((code_and_id(R"({"id":6,"cmd":"ping"} trailing)") == P{0, "bad_request"}), "trailing bytes");
  CHECK((code_and_id(R"({"id":6,"cmd":"ping"}{"id":7,"cmd":"ping"})") == P{0, "bad_request"}), "two objects");
  CHECK((code_and_id(R"({"id":6,"cmd":"ping"}   )") == P{6, "ok"}), "trailing spaces");
  CHECK((code_and_id("{\"id\":6,\"cmd\":\"ping\"}\r") == P{6, "ok"}), "CRLF");
  // A NUL byte and garbage after the request (nlohmann's lexer ends input at NUL).
  CHECK((code_and_id(std::string("{\"id\":9,\"cmd\":\"ping\"}\0garbage", 29)) == P{0, "bad_request"}), "NUL + garbage");
  CHECK((code_and_id(std::string("{\"id\":9,\"cmd\":\"ping\"}\0", 22)) == P{0, "bad_request"}), "NUL at the end");
  CHECK((code_and_id(std::string("{\"id\":9,\0\"cmd\":\"ping\"}", 22)) == P{0, "bad_request"}), "NUL inside");
  CHECK((code_and_id(R"({"id":10,"cmd":"ping","x":"\u0000"})") == P{10, "bad_request"}), "escaped NUL in an unknown field");
  CHECK((code_and_id("{\"id\":7,\"cmd\":\"\xff\xfe\"}") == P{0, "bad_request"}), "invalid UTF-8");
  CHECK((code_and_id(R"({"id":8,"cmd":"ping","id":9})") == P{0, "bad_request"}), "duplicate key");
  CHECK((code_and_id(R"({"id":8,"cmd":"ping","x":1})") == P{8, "bad_request"}), "unknown field");
  CHECK((code_and_id(R"({"id":8,"cmd":"ping","x":null})") == P{8, "bad_request"}), "unknown field, null");
  // Depth: the request is level 1; 32 levels pass the framing (and then fail
  // as an unknown field), 33 do not.
  std::string deep31 = std::string(31, '[') + std::string(31, ']');
  std::string deep32 = std::string(32, '[') + std::string(32, ']');
  CHECK((code_and_id("{\"id\":11,\"cmd\":\"ping\",\"x\":" + deep31 + "}") == P{11, "bad_request"}), "depth 32");
  {
    json r = h.send_line("{\"id\":11,\"cmd\":\"ping\",\"x\":" + deep31 + "}");
    CHECK(message_of(r).find("unknown field") != std::string::npos, "depth 32 is framed: " << message_of(r));
    r = h.send_line("{\"id\":12,\"cmd\":\"ping\",\"x\":" + deep32 + "}");
    CHECK(r["id"] == 0 && message_of(r).find("deeper than 32") != std::string::npos, "depth 33: " << r.dump());
  }
  CHECK((code_and_id(std::string(100000, '[') + std::string(100000, ']')) == P{0, "bad_request"}), "deep nesting");
  size_t before = h.replies.size();
  h.server->line_too_long(kMaxLineBytes + 1);
  CHECK(h.replies.size() == before + 1 && json::parse(h.replies.back())["error"]["code"] == "line_too_long" &&
            json::parse(h.replies.back())["id"] == 0,
        "line_too_long reply");
}

// ---- init --------------------------------------------------------------------

// A plain ping ({"id":N,"cmd":"ping"} exactly) is read and answered
// without the JSON parser: the reply is the one the parser's path gives,
// its outcome is remembered for `after`, and any other spelling of a ping
// takes the parser's path.
void test_plain_ping() {
  Harness h;
  h.init();
  auto line = [&](const std::string& l) {
    size_t before = h.replies.size();
    h.server->handle(l);
    CHECK(h.replies.size() == before + 1, "one reply to " << l);
    return h.replies.empty() ? std::string() : h.replies.back();
  };
  CHECK(line("{\"id\":5,\"cmd\":\"ping\"}") == "{\"id\":5,\"ok\":true}", h.replies.back());
  CHECK(line("{\"id\": 6, \"cmd\": \"ping\"}") == "{\"id\":6,\"ok\":true}", "the parser's path gives the same reply");
  CHECK(line("{\"id\":7,\"cmd\":\"ping\",\"after\":[5,6]}") == "{\"id\":7,\"ok\":true}", h.replies.back());
  CHECK(line("{\"id\":18446744073709551615,\"cmd\":\"ping\"}") == "{\"id\":18446744073709551615,\"ok\":true}",
        h.replies.back());
  for (const char* other : {"{\"id\":007,\"cmd\":\"ping\"}", "{\"id\":18446744073709551616,\"cmd\":\"ping\"}",
                            "{\"id\":-8,\"cmd\":\"ping\"}", "{\"id\":8x,\"cmd\":\"ping\"}", "{\"id\":0,\"cmd\":\"ping\"}"}) {
    json r = json::parse(line(other));
    CHECK(code_of(r) == "bad_request" && r.value("id", 1) == 0, other << ": " << r.dump());
  }
}

void test_handshake() {
  Harness h;
  h.ok({{"cmd", "ping"}});
  h.fails({{"cmd", "alloc"}, {"size", 16}}, "not_initialized");
  h.fails({{"cmd", "map"}, {"segment", "x"}}, "not_initialized");
  // Shape errors come before not_initialized.
  h.fails({{"cmd", "alloc"}, {"size", "16"}}, "bad_request", "alloc.size");
  json r = h.req({{"cmd", "init"}, {"protocol", 1}, {"layer", "emu"}, {"whatever_v1_had", 1}});
  CHECK(code_of(r) == "version_mismatch" && message_of(r).find("rebuild zyx-tt") != std::string::npos, r.dump());
  r = h.req({{"cmd", "init"}, {"protocol", 3}});
  CHECK(code_of(r) == "version_mismatch" && message_of(r).find("rebuild the runtime") != std::string::npos, r.dump());
  h.fails({{"cmd", "init"}}, "bad_request", "init.protocol");
  h.fails({{"cmd", "init"}, {"protocol", "2"}}, "bad_request", "init.protocol");
  h.fails({{"cmd", "init"}, {"protocol", 2}, {"layer", "cuda"}}, "bad_request", "init.layer");
  h.fails({{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"dprint", 1}}, "bad_request", "init.dprint");
  h.fails({{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"grid", 1}}, "bad_request", "init.grid");
  h.fails({{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"chip", uint64_t{1} << 40}}, "invalid_argument", "init.chip");
  h.fails({{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"cache_dir", "relative/dir"}}, "invalid_argument",
          "init.cache_dir");
  h.fails({{"cmd", "init"}, {"protocol", 2}, {"layer", "metal"}, {"cache_dir", "/tmp/x"}}, "unsupported");
  r = h.ok({{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"board", "n150"}, {"chip", 0}, {"cache_dir", "/tmp/x"}});
  CHECK(r["protocol"] == 2 && r["runtime"] == "emu" && r["grid"]["rows"] == 8 && r["grid"]["cols"] == 8 &&
            r["grid"]["harvested_rows"] == json::array({9}) && r["dram"]["banks"] == 12 &&
            r["l1"]["unreserved_base"] == 100 * 1024 && r["version"].is_string(),
        r.dump());
  // The v2 fields, against the fake's hand-written tables.
  CHECK(r["noc"]["worker_x"] == json({1, 2, 3, 4, 6, 7, 8, 9}) && r["noc"]["worker_y"] == json({1, 2, 3, 4, 5, 7, 8, 9}),
        r["noc"].dump());
  CHECK(r["noc"]["dram_banks"].size() == 12 && r["noc"]["dram_banks"][0] == json({0, 1}) &&
            r["noc"]["dram_banks"][7] == json({5, 3}),
        r["noc"].dump());
  CHECK(r["l1"]["alignment"] == 16 && r["l1"]["banks"] == 64 && r["l1"]["bank_cores"].size() == 64 &&
            r["l1"]["bank_cores"][9] == json({1, 1}) && r["semaphores"] == 16,
        r["l1"].dump());
  h.fails({{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}}, "invalid_argument", "init");
  h.fails({{"cmd", 7}}, "bad_request", "request.cmd");
  h.fails(json::object(), "bad_request", "request.cmd");
}

void test_bad_desc() {
  // A layer whose tables do not match its grid is refused at init.
  Harness h;
  h.state->desc.noc.worker_x.pop_back();
  h.fails({{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"cache_dir", "/tmp/x"}}, "internal");
  h.state->desc.noc.worker_x.push_back(9);
  h.state->desc.l1_bank_cores.clear();  // derived row-major
  json r = h.ok({{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"cache_dir", "/tmp/x"}});
  CHECK(r["l1"]["banks"] == 64 && r["l1"]["bank_cores"][63] == json({7, 7}), r["l1"].dump());
}

// ---- buffers and shm ---------------------------------------------------------

void test_buffers() {
  Harness h;
  h.init();
  h.fails({{"cmd", "alloc"}, {"size", 0}}, "invalid_argument", "alloc.size");
  h.fails({{"cmd", "alloc"}, {"size", 64}, {"page_size", 0}}, "invalid_argument", "alloc.page_size");
  h.fails({{"cmd", "alloc"}, {"size", 64}, {"page_size", uint64_t{1} << 32}}, "invalid_argument", "alloc.page_size");
  h.fails({{"cmd", "alloc"}, {"size", uint64_t{1} << 33}, {"page_size", 1}}, "invalid_argument", "alloc.size");
  h.fails({{"cmd", "alloc"}, {"size", uint64_t{13} << 30}}, "out_of_memory", "alloc");
  h.fails({{"cmd", "alloc"}, {"size", -5}}, "bad_request", "alloc.size");
  h.fails({{"cmd", "alloc"}, {"size", 1e3}}, "bad_request", "alloc.size");
  h.fails({{"cmd", "alloc"}}, "bad_request", "alloc.size");
  h.fails({{"cmd", "alloc"}, {"size", 64}, {"placement", "hbm"}}, "bad_request", "alloc.placement");
  h.fails({{"cmd", "alloc"}, {"size", 64}, {"layout", "sharded"}}, "bad_request", "alloc.layout");
  h.fails({{"cmd", "alloc"}, {"size", 64}, {"layout", "height_sharded"}}, "bad_request", "alloc.shard");
  json shard = {{"cores", {{0, 0, 0, 3}}}, {"shape", {2, 4}}, {"tensor", {8, 4}}};
  h.fails({{"cmd", "alloc"}, {"size", 64}, {"shard", shard}}, "bad_request", "alloc.shard");
  h.fails({{"cmd", "alloc"}, {"size", 64}, {"layout", "height_sharded"}, {"shard", {{"cores", {{0, 0, 0, 3}}}}}},
          "bad_request", "alloc.shard.shape");
  // L1 capacity: 1364 KiB above the base per core, 64 banks.
  h.fails({{"cmd", "alloc"}, {"size", uint64_t{100} << 20}, {"placement", "l1"}}, "out_of_memory", "alloc");
  uint64_t l1 = h.ok({{"cmd", "alloc"}, {"size", uint64_t{64} << 20}, {"placement", "l1"}})["buffer"];
  h.ok({{"cmd", "free"}, {"buffer", l1}});
  h.fails({{"cmd", "alloc"}, {"size", 2048}, {"page_size", 64}, {"placement", "l1"}, {"layout", "height_sharded"},
           {"shard", {{"cores", {{0, 0, 0, 3}}}, {"shape", {2, 4}}, {"tensor", {1, 4}}}}},
          "invalid_argument", "alloc.shard.tensor");
  h.fails({{"cmd", "alloc"}, {"size", uint64_t{4} << 20}, {"page_size", 1 << 20}, {"placement", "l1"},
           {"layout", "height_sharded"}, {"shard", {{"cores", {{0, 0, 0, 3}}}, {"shape", {2, 1}}, {"tensor", {4, 1}}}}},
          "out_of_memory", "alloc");
  json sh = h.ok({{"cmd", "alloc"}, {"size", 2048}, {"page_size", 64}, {"placement", "l1"}, {"layout", "height_sharded"},
                  {"shard", {{"cores", {{0, 0, 0, 3}}}, {"shape", {2, 4}}, {"tensor", {8, 4}}, {"orientation", "col_major"}}}});
  CHECK(sh["address"].is_number_unsigned(), sh.dump());
  h.ok({{"cmd", "free"}, {"buffer", sh["buffer"]}});

  json a = h.ok({{"cmd", "alloc"}, {"size", 1000}, {"page_size", 64}});
  uint64_t buf = a["buffer"];
  CHECK(a["address"].is_number_unsigned(), a.dump());
  h.fails({{"cmd", "free"}, {"buffer", buf + 100}}, "unknown_buffer", "free.buffer");
  h.fails({{"cmd", "free"}, {"buffer", "1"}}, "bad_request", "free.buffer");

  // Round trip through a segment at odd offsets and sizes.
  std::mt19937_64 rng(7);
  std::vector<uint8_t> bytes(4099);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  std::string seg = h.segment("zyx-seg", bytes);
  h.ok({{"cmd", "write"}, {"buffer", buf}, {"offset", 3}, {"segment", seg}, {"segment_offset", 5}, {"length", 997}});
  h.ok({{"cmd", "read"}, {"buffer", buf}, {"offset", 3}, {"segment", seg}, {"segment_offset", 3001}, {"length", 997}});
  auto back = h.segment_bytes(seg);
  CHECK(std::equal(bytes.begin() + 5, bytes.begin() + 5 + 997, back.begin() + 3001), "round trip bytes differ");
  CHECK(h.server->mapped_segments() == 1, "segment mapped " << h.server->mapped_segments() << " times");

  // Ranges: nothing moves when either is out of bounds.
  int writes = h.state->writes;
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"offset", 4}, {"segment", seg}, {"length", 997}}, "invalid_argument", "write");
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"offset", UINT64_MAX}, {"segment", seg}, {"length", 2}}, "invalid_argument");
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", seg}, {"segment_offset", 4000}, {"length", 100}}, "shm_error");
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", seg}, {"segment_offset", UINT64_MAX}, {"length", 2}}, "shm_error");
  h.fails({{"cmd", "read"}, {"buffer", buf + 9}, {"segment", seg}, {"length", 2}}, "unknown_buffer", "read.buffer");
  for (const char* bad : {"../etc/passwd", "a/b", "", ".", "..", "zyx-does-not-exist", "/etc/passwd"})
    h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", bad}, {"length", 1}}, "shm_error");
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", std::string(300, 'a')}, {"length", 1}}, "shm_error");
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", std::string("a\0b", 3)}, {"length", 1}}, "shm_error");
  CHECK(symlink("/etc/passwd", (h.dir + "/link").c_str()) == 0, "symlink");
  h.fails({{"cmd", "map"}, {"segment", "link"}}, "shm_error");
  mkdir((h.dir + "/subdir").c_str(), 0700);
  h.fails({{"cmd", "map"}, {"segment", "subdir"}}, "shm_error");
  CHECK(h.state->writes == writes, "a failed write moved bytes");
  h.ok({{"cmd", "write"}, {"buffer", buf}, {"segment", seg}, {"segment_offset", 4099}, {"length", 0}});
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", seg}, {"length", 1}, {"segmnt_offset", 1}}, "bad_request",
          "write.segmnt_offset");

  // The mapping is reused: it survives the file's unlink until unmap.
  std::filesystem::remove(h.dir + "/" + seg);
  h.ok({{"cmd", "read"}, {"buffer", buf}, {"segment", seg}, {"length", 1000}});
  h.ok({{"cmd", "unmap"}, {"segment", seg}});
  CHECK(h.server->mapped_segments() == 0, "unmap left a mapping");
  h.ok({{"cmd", "unmap"}, {"segment", seg}});
  h.fails({{"cmd", "read"}, {"buffer", buf}, {"segment", seg}, {"length", 1000}}, "shm_error");
  h.fails({{"cmd", "unmap"}, {"segment", "../x"}}, "shm_error");
  std::string seg2 = h.segment("zyx-seg2", bytes);
  h.ok({{"cmd", "map"}, {"segment", seg2}});
  h.ok({{"cmd", "map"}, {"segment", seg2}});
  CHECK(h.server->mapped_segments() == 1, "map twice mapped twice");

  h.ok({{"cmd", "free"}, {"buffer", buf}});
  h.fails({{"cmd", "free"}, {"buffer", buf}}, "unknown_buffer");
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", seg2}, {"length", 1}}, "unknown_buffer");
  CHECK(h.state->live_buffers == 0, "live buffers " << h.state->live_buffers);

  h.ok({{"cmd", "alloc"}, {"size", 100}});
  h.ok({{"cmd", "alloc"}, {"size", 100}});
  h.ok({{"cmd", "exit"}});
  CHECK(h.state->live_buffers == 0 && h.state->destroyed && h.server->mapped_segments() == 0,
        "exit left buffers " << h.state->live_buffers << ", segments " << h.server->mapped_segments());
}

// A segment truncated after map: before the fstat check, the next transfer
// touched pages past the end of the file and the process died of SIGBUS.
void test_shrunk_segment() {
  Harness h;
  h.init();
  uint64_t buf = h.ok({{"cmd", "alloc"}, {"size", 16384}})["buffer"];
  std::vector<uint8_t> bytes(16384);
  for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<uint8_t>(i * 7);
  std::string seg = h.segment("zyx-shrink", bytes);
  h.ok({{"cmd", "map"}, {"segment", seg}});
  h.ok({{"cmd", "write"}, {"buffer", buf}, {"segment", seg}, {"length", 16384}});
  CHECK(::truncate((h.dir + "/" + seg).c_str(), 100) == 0, "truncate");
  json r = h.req({{"cmd", "write"}, {"buffer", buf}, {"segment", seg}, {"length", 16384}});
  CHECK(code_of(r) == "shm_error" && message_of(r).find("shrank") != std::string::npos, r.dump());
  r = h.req({{"cmd", "read"}, {"buffer", buf}, {"segment", seg}, {"segment_offset", 8192}, {"length", 4096}});
  CHECK(code_of(r) == "shm_error", r.dump());
  // Still serving, and the bytes that remain are usable.
  h.ok({{"cmd", "ping"}});
  h.ok({{"cmd", "read"}, {"buffer", buf}, {"segment", seg}, {"segment_offset", 0}, {"length", 100}});
  auto back = h.segment_bytes(seg);
  CHECK(back.size() == 100 && std::equal(back.begin(), back.end(), bytes.begin()), "the first 100 bytes came back");
  // Grown again past the mapping: mapped anew.
  CHECK(::truncate((h.dir + "/" + seg).c_str(), 1 << 16) == 0, "grow");
  h.ok({{"cmd", "read"}, {"buffer", buf}, {"segment", seg}, {"segment_offset", 40000}, {"length", 16384}});
  back = h.segment_bytes(seg);
  CHECK(back.size() == (1 << 16) && std::equal(bytes.begin(), bytes.end(), back.begin() + 40000), "read into the grown part");
  CHECK(h.server->mapped_segments() == 1, "one mapping");
}

// ---- programs ----------------------------------------------------------------

json arg(const char* kind, json fields = json::object()) {
  fields["kind"] = kind;
  return fields;
}

// (A one-element list of json values is written json::array({...}): clang
// takes {x} for a copy of x where gcc builds an array.)
// The reference program: two core groups, per-core args, every arg kind,
// an L1-sharded buffer under a CB, two semaphores. On the fake's 8 x 8 grid.
json good_program() {
  json params = {{{"name", "a"}, {"kind", "global"}, {"dtype", "f32"}},
                 {{"name", "b"}, {"kind", "global_mut"}, {"dtype", "f32"}},
                 {{"name", "n"}, {"kind", "variable"}, {"dtype", "u32"}},
                 {{"name", "l1buf"}, {"kind", "global"}, {"dtype", "u8"}}};
  json buffers = {{{"param", 0}, {"placement", "dram"}, {"layout", "interleaved"}, {"page_size", 2048}},
                  {{"param", 3},
                   {"placement", "l1"},
                   {"layout", "height_sharded"},
                   {"page_size", 64},
                   {"shard", {{"cores", {{0, 0, 0, 3}}}, {"shape", {2, 4}}, {"tensor", {8, 4}}, {"orientation", "row_major"}}}}};
  json reader_rt0 = {arg("buffer_addr", {{"param", 0}}),
                     arg("param", {{"param", 2}}),
                     arg("const", {{"value", 7}}),
                     arg("bank_id", {{"param", 0}, {"page", 9}}),
                     arg("bank_noc_x", {{"param", 0}, {"page", 9}}),
                     arg("bank_noc_y", {{"param", 0}, {"page", 9}}),
                     arg("core_noc_x", {{"core", {1, 5}}}),
                     arg("core_noc_y", {{"core", {1, 5}}}),
                     arg("buffer_pages", {{"param", 1}}),
                     arg("page_size", {{"param", 1}})};
  json reader = {{"name", "reader"},
                 {"processor", "riscv_0"},
                 {"cores", {{0, 0, 1, 7}}},
                 {"source", "void kernel_main() {}"},
                 {"defines", {{"BLOCK", "4"}}},
                 {"compile_args", {arg("accessor", {{"param", 0}}), arg("const", {{"value", 2}})}},
                 {"named_compile_args", {{"num_tiles", arg("const", {{"value", 64}})}}},
                 {"common_args", json::array({arg("buffer_addr", {{"param", 0}})})},
                 {"runtime_args",
                  {{{"cores", {{0, 0, 0, 7}}}, {"args", reader_rt0}}, {{"cores", {{1, 0, 1, 7}}}, {"args", json::array({arg("const", {{"value", 9}})})}}}}};
  json compute = {{"name", "compute"},
                  {"processor", "compute"},
                  {"cores", {{0, 0, 1, 7}}},
                  {"source", "void MAIN {}"},
                  {"compute_config", {{"math_fidelity", "HiFi2"}, {"fp32_dest_acc", true}}}};
  json writer = {{"name", "writer"},
                 {"processor", "riscv_1"},
                 {"noc", 1},
                 {"cores", {{0, 0, 1, 3}}},
                 {"source", "void kernel_main() {}"},
                 {"runtime_args", {{{"cores", {{0, 0, 1, 3}}}, {"args", json::array({arg("buffer_addr", {{"param", 1}})})}}}}};
  json writer2 = {{"name", "writer2"}, {"processor", "riscv_1"}, {"cores", {{0, 4, 1, 7}}}, {"source_b64", "AAH/CiJc"}};
  json cbs = {{{"cores", {{0, 0, 1, 7}}},
               {"total_bytes", 8192},
               {"indices", {{{"index", 0}, {"format", "Float16_b"}, {"page_bytes", 2048}},
                            {{"index", 16}, {"format", "Bfp8_b"}, {"page_bytes", 1024}, {"tile", {32, 32}}}}}},
              {{"cores", {{0, 0, 0, 3}}},
               {"total_bytes", 512},
               {"indices", {{{"index", 2}, {"format", "UInt8"}, {"page_bytes", 64}, {"tile", {1, 32}}}}},
               {"buffer", 3}}};
  json sems = {{{"cores", {{0, 0, 1, 7}}}, {"id", 0}, {"initial", 0}}, {{"cores", {{0, 0, 0, 7}}}, {"id", 1}, {"initial", 5}}};
  return {{"cmd", "compile"},
          {"name", "t"},
          {"params", params},
          {"buffers", buffers},
          {"include_files", {{{"path", "inc/common.h"}, {"source", "#define X 1"}}}},
          {"kernels", {reader, compute, writer, writer2}},
          {"cbs", cbs},
          {"semaphores", sems}};
}

struct BadCase {
  const char* what;
  std::function<void(json&)> edit;
  const char* code;
  const char* path;
};

// kBadPrograms: one row per rule of docs/protocol.md ("Validation"), in the
// order the rules are checked. Each edit of the good program must get exactly
// this code and name exactly this field path.
std::vector<BadCase> bad_programs() {
  auto K = [](json& p, int k) -> json& { return p["kernels"][k]; };
  auto RT = [K](json& p, int a) -> json& { return K(p, 0)["runtime_args"][0]["args"][a]; };
  return {
      // -- shape: bad_request --
      {"unknown top-level field", [](json& p) { p["kernelz"] = 1; }, "bad_request", "compile.kernelz"},
      {"kernels missing", [](json& p) { p.erase("kernels"); }, "bad_request", "compile.kernels"},
      {"params not an array", [](json& p) { p["params"] = 1; }, "bad_request", "compile.params"},
      {"param field typo", [](json& p) { p["params"][0]["shap"] = 1; }, "bad_request", "compile.params[0].shap"},
      {"param kind unknown", [](json& p) { p["params"][0]["kind"] = "texture"; }, "bad_request", "compile.params[0].kind"},
      {"param dtype unknown", [](json& p) { p["params"][0]["dtype"] = "f128"; }, "bad_request", "compile.params[0].dtype"},
      {"param dtype an alias", [](json& p) { p["params"][2]["dtype"] = "uint32"; }, "bad_request", "compile.params[2].dtype"},
      {"param dtype missing", [](json& p) { p["params"][1].erase("dtype"); }, "bad_request", "compile.params[1].dtype"},
      {"buffer layout unknown", [](json& p) { p["buffers"][0]["layout"] = "sharded"; }, "bad_request", "compile.buffers[0].layout"},
      {"interleaved with a shard", [](json& p) { p["buffers"][0]["shard"] = p["buffers"][1]["shard"]; }, "bad_request",
       "compile.buffers[0].shard"},
      {"sharded without a shard", [](json& p) { p["buffers"][1].erase("shard"); }, "bad_request", "compile.buffers[1].shard"},
      {"orientation unknown", [](json& p) { p["buffers"][1]["shard"]["orientation"] = "diagonal"; }, "bad_request",
       "compile.buffers[1].shard.orientation"},
      {"shard shape arity", [](json& p) { p["buffers"][1]["shard"]["shape"] = {2}; }, "bad_request",
       "compile.buffers[1].shard.shape"},
      {"include without path", [](json& p) { p["include_files"][0].erase("path"); }, "bad_request",
       "compile.include_files[0].path"},
      {"processor unknown", [K](json& p) { K(p, 0)["processor"] = "riscv_2"; }, "bad_request", "compile.kernels[0].processor"},
      {"noc on compute", [K](json& p) { K(p, 1)["noc"] = 0; }, "bad_request", "compile.kernels[1].noc"},
      {"compute_config on data movement", [K](json& p) { K(p, 0)["compute_config"] = json::object(); }, "bad_request",
       "compile.kernels[0].compute_config"},
      {"core range arity", [K](json& p) { K(p, 0)["cores"][0] = {0, 0, 1}; }, "bad_request", "compile.kernels[0].cores[0]"},
      {"core range negative", [K](json& p) { K(p, 0)["cores"][0][2] = -1; }, "bad_request", "compile.kernels[0].cores[0][2]"},
      {"core range past 32 bits", [K](json& p) { K(p, 0)["cores"][0][2] = uint64_t{1} << 32; }, "bad_request",
       "compile.kernels[0].cores[0][2]"},
      {"both sources", [K](json& p) { K(p, 0)["source_b64"] = "AAAA"; }, "bad_request", "compile.kernels[0].source"},
      {"no source", [K](json& p) { K(p, 0).erase("source"); }, "bad_request", "compile.kernels[0].source"},
      {"bad base64", [K](json& p) { K(p, 3)["source_b64"] = "!!!"; }, "bad_request", "compile.kernels[3].source_b64"},
      {"define not a string", [K](json& p) { K(p, 0)["defines"]["X"] = 1; }, "bad_request", "compile.kernels[0].defines.X"},
      {"named args not an object", [K](json& p) { K(p, 0)["named_compile_args"] = json::array(); }, "bad_request",
       "compile.kernels[0].named_compile_args"},
      {"arg kind unknown", [RT](json& p) { RT(p, 0)["kind"] = "core_row"; }, "bad_request",
       "compile.kernels[0].runtime_args[0].args[0].kind"},
      {"field a kind does not take", [RT](json& p) { RT(p, 0)["value"] = 1; }, "bad_request",
       "compile.kernels[0].runtime_args[0].args[0].value"},
      {"const past 32 bits", [RT](json& p) { RT(p, 2)["value"] = uint64_t{1} << 32; }, "bad_request",
       "compile.kernels[0].runtime_args[0].args[2].value"},
      {"bank entry without page", [RT](json& p) { RT(p, 3).erase("page"); }, "bad_request",
       "compile.kernels[0].runtime_args[0].args[3].page"},
      {"runtime_args entry typo", [K](json& p) { K(p, 0)["runtime_args"][0]["core"] = 1; }, "bad_request",
       "compile.kernels[0].runtime_args[0].core"},
      {"fidelity unknown", [K](json& p) { K(p, 1)["compute_config"]["math_fidelity"] = "HiFi5"; }, "bad_request",
       "compile.kernels[1].compute_config.math_fidelity"},
      {"fp32_dest_acc not a bool", [K](json& p) { K(p, 1)["compute_config"]["fp32_dest_acc"] = 1; }, "bad_request",
       "compile.kernels[1].compute_config.fp32_dest_acc"},
      {"format unknown", [](json& p) { p["cbs"][0]["indices"][0]["format"] = "Bfp8"; }, "bad_request",
       "compile.cbs[0].indices[0].format"},
      {"tile arity", [](json& p) { p["cbs"][0]["indices"][0]["tile"] = {32}; }, "bad_request", "compile.cbs[0].indices[0].tile"},
      {"cb index typo", [](json& p) { p["cbs"][0]["indices"][0]["idx"] = 1; }, "bad_request", "compile.cbs[0].indices[0].idx"},
      {"semaphore id a string", [](json& p) { p["semaphores"][0]["id"] = "0"; }, "bad_request", "compile.semaphores[0].id"},
      // -- meaning: invalid_argument, in check order --
      {"V2 decl param out of range", [](json& p) { p["buffers"][0]["param"] = 9; }, "invalid_argument", "compile.buffers[0].param"},
      {"V2 decl of a variable", [](json& p) { p["buffers"][0]["param"] = 2; }, "invalid_argument", "compile.buffers[0].param"},
      {"V2 decl twice", [](json& p) { p["buffers"].push_back(p["buffers"][0]); }, "invalid_argument", "compile.buffers[2].param"},
      {"S1 page_size 0", [](json& p) { p["buffers"][0]["page_size"] = 0; }, "invalid_argument", "compile.buffers[0].page_size"},
      {"S1 page_size past 32 bits", [](json& p) { p["buffers"][0]["page_size"] = uint64_t{1} << 32; }, "invalid_argument",
       "compile.buffers[0].page_size"},
      {"S2 empty shard grid", [](json& p) { p["buffers"][1]["shard"]["cores"] = json::array(); }, "invalid_argument",
       "compile.buffers[1].shard.cores"},
      {"S2 shard grid outside", [](json& p) { p["buffers"][1]["shard"]["cores"] = {{0, 0, 0, 9}}; }, "invalid_argument",
       "compile.buffers[1].shard.cores[0]"},
      {"S2 shard ranges overlap", [](json& p) { p["buffers"][1]["shard"]["cores"] = {{0, 0, 0, 3}, {0, 3, 0, 4}}; },
       "invalid_argument", "compile.buffers[1].shard.cores[1]"},
      {"S2 DRAM shard grid is 1 x banks",
       [](json& p) {
         p["buffers"][1]["placement"] = "dram";
         p["buffers"][1]["shard"]["cores"] = {{1, 0, 1, 3}};
       },
       "invalid_argument", "compile.buffers[1].shard.cores[0]"},
      {"S3 shape 0", [](json& p) { p["buffers"][1]["shard"]["shape"] = {0, 4}; }, "invalid_argument",
       "compile.buffers[1].shard.shape"},
      {"S3 tensor 0", [](json& p) { p["buffers"][1]["shard"]["tensor"] = {8, 0}; }, "invalid_argument",
       "compile.buffers[1].shard.tensor"},
      // 32 pages dealt out in shard rows of 3: the last shard would lose pages.
      {"S4 height shard rows that do not divide the pages", [](json& p) { p["buffers"][1]["shard"]["shape"] = {2, 3}; },
       "invalid_argument", "compile.buffers[1].shard.shape"},
      // Height sharding deals 32 pages out 2 to a shard: 16 shards.
      {"S5 height deal past the cores", [](json& p) { p["buffers"][1]["shard"]["shape"] = {1, 2}; }, "invalid_argument",
       "compile.buffers[1].shard.cores"},
      {"S5 width shards past the cores",
       [](json& p) {
         p["buffers"][1]["layout"] = "width_sharded";
         p["buffers"][1]["shard"]["shape"] = {4, 1};
       },
       "invalid_argument", "compile.buffers[1].shard.cores"},
      {"S5 more shards than cores", [](json& p) { p["buffers"][1]["shard"]["shape"] = {1, 4}; }, "invalid_argument",
       "compile.buffers[1].shard.cores"},
      {"V3 absolute include", [](json& p) { p["include_files"][0]["path"] = "/etc/x.h"; }, "invalid_argument",
       "compile.include_files[0].path"},
      {"V3 include with ..", [](json& p) { p["include_files"][0]["path"] = "inc/../../x.h"; }, "invalid_argument",
       "compile.include_files[0].path"},
      {"V3 include with an empty component", [](json& p) { p["include_files"][0]["path"] = "inc//x.h"; }, "invalid_argument",
       "compile.include_files[0].path"},
      {"V3 include ./", [](json& p) { p["include_files"][0]["path"] = "./x.h"; }, "invalid_argument",
       "compile.include_files[0].path"},
      {"V3 empty include path", [](json& p) { p["include_files"][0]["path"] = ""; }, "invalid_argument",
       "compile.include_files[0].path"},
      {"V3 include with NUL", [](json& p) { p["include_files"][0]["path"] = std::string("a\0b.h", 5); }, "invalid_argument",
       "compile.include_files[0].path"},
      {"V3 include twice", [](json& p) { p["include_files"].push_back(p["include_files"][0]); }, "invalid_argument",
       "compile.include_files[1].path"},
      {"V5 kernel path with ..", [](json& p) { p["kernels"][0]["path"] = "inc/../../r.cpp"; }, "invalid_argument",
       "compile.kernels[0].path"},
      {"V5 absolute kernel path", [](json& p) { p["kernels"][0]["path"] = "/r.cpp"; }, "invalid_argument",
       "compile.kernels[0].path"},
      {"V5 kernel path with a quote", [](json& p) { p["kernels"][0]["path"] = "inc/r\".cpp"; }, "invalid_argument",
       "compile.kernels[0].path"},
      {"V5 kernel path on an include file of other text", [](json& p) { p["kernels"][0]["path"] = "inc/common.h"; },
       "invalid_argument", "compile.kernels[0].path"},
      {"V5 two kernels of other text at one path",
       [](json& p) {
         p["kernels"][0]["path"] = "k/r.cpp";
         p["kernels"][3]["path"] = "k/r.cpp";
       },
       "invalid_argument", "compile.kernels[0].path"},
      {"V4 no kernels", [](json& p) { p["kernels"] = json::array(); }, "invalid_argument", "compile.kernels"},
      {"V4 65 kernels",
       [](json& p) {
         json k = p["kernels"][3];
         p["kernels"] = json::array();
         for (int i = 0; i < 65; i++) p["kernels"].push_back(k);
       },
       "invalid_argument", "compile.kernels"},
      {"C1 empty kernel cores", [K](json& p) { K(p, 0)["cores"] = json::array(); }, "invalid_argument", "compile.kernels[0].cores"},
      {"C2 unordered range", [K](json& p) { K(p, 0)["cores"] = {{1, 0, 0, 7}}; }, "invalid_argument", "compile.kernels[0].cores[0]"},
      {"C3 range outside the grid", [K](json& p) { K(p, 0)["cores"] = {{0, 0, 8, 7}}; }, "invalid_argument",
       "compile.kernels[0].cores[0]"},
      {"C4 ranges overlap", [K](json& p) { K(p, 0)["cores"] = {{0, 0, 1, 3}, {1, 3, 1, 7}}; }, "invalid_argument",
       "compile.kernels[0].cores[1]"},
      {"V5 noc 2", [K](json& p) { K(p, 2)["noc"] = 2; }, "invalid_argument", "compile.kernels[2].noc"},
      {"V5 define name", [K](json& p) { K(p, 0)["defines"]["1X"] = "1"; }, "invalid_argument", "compile.kernels[0].defines.1X"},
      {"V5 define value with a line break", [K](json& p) { K(p, 0)["defines"]["X"] = "1\n#include <x>"; }, "invalid_argument",
       "compile.kernels[0].defines.X"},
      {"V5 unpack_to_dest past the CBs", [K](json& p) { K(p, 1)["compute_config"]["unpack_to_dest_fp32"] = {3, 32}; },
       "invalid_argument", "compile.kernels[1].compute_config.unpack_to_dest_fp32[1]"},
      {"A1 param out of range", [K](json& p) { K(p, 0)["compile_args"][0]["param"] = 9; }, "invalid_argument",
       "compile.kernels[0].compile_args[0].param"},
      {"V10 named runtime args not strings", [K](json& p) { K(p, 0)["named_runtime_args"] = {1}; }, "bad_request",
       "compile.kernels[0].named_runtime_args[0]"},
      {"V10 dfbs not an object", [K](json& p) { K(p, 0)["dfbs"] = json::array(); }, "bad_request", "compile.kernels[0].dfbs"},
      {"V10 named runtime arg name", [K](json& p) { K(p, 0)["named_runtime_args"] = {"a-b"}; }, "invalid_argument",
       "compile.kernels[0].named_runtime_args[0]"},
      {"V10 dfb binding to no CB", [K](json& p) { K(p, 0)["dfbs"]["in0"] = "a_tiles"; }, "invalid_argument",
       "compile.kernels[0].dfbs.in0"},
      {"V10 semaphore binding to no semaphore", [K](json& p) { K(p, 0)["semaphore_bindings"]["go"] = "go"; },
       "invalid_argument", "compile.kernels[0].semaphore_bindings.go"},
      {"V10 tensor binding to no param", [K](json& p) { K(p, 0)["tensors"]["src"] = "zz"; }, "invalid_argument",
       "compile.kernels[0].tensors.src"},
      {"A2 param kind on a buffer", [RT](json& p) { RT(p, 1)["param"] = 0; }, "invalid_argument",
       "compile.kernels[0].runtime_args[0].args[1].param"},
      {"A2 buffer kind on a variable", [RT](json& p) { RT(p, 0)["param"] = 2; }, "invalid_argument",
       "compile.kernels[0].runtime_args[0].args[0].param"},
      {"A3 accessor in common_args", [K](json& p) { K(p, 0)["common_args"][0]["kind"] = "accessor"; }, "invalid_argument",
       "compile.kernels[0].common_args[0].kind"},
      {"A3 accessor in runtime_args", [RT](json& p) { RT(p, 0)["kind"] = "accessor"; }, "invalid_argument",
       "compile.kernels[0].runtime_args[0].args[0].kind"},
      {"A4 accessor of an undeclared buffer", [K](json& p) { K(p, 0)["compile_args"][0]["param"] = 1; }, "invalid_argument",
       "compile.kernels[0].compile_args[0].param"},
      {"A4 bank_id of an undeclared buffer", [RT](json& p) { RT(p, 3)["param"] = 1; }, "invalid_argument",
       "compile.kernels[0].runtime_args[0].args[3].param"},
      {"A5 core outside the grid", [RT](json& p) { RT(p, 6)["core"] = {8, 0}; }, "invalid_argument",
       "compile.kernels[0].runtime_args[0].args[6].core"},
      {"C1 empty runtime_args cores", [K](json& p) { K(p, 0)["runtime_args"][0]["cores"] = json::array(); }, "invalid_argument",
       "compile.kernels[0].runtime_args[0].cores"},
      {"C5 runtime args outside the kernel", [K](json& p) { K(p, 2)["runtime_args"][0]["cores"] = {{0, 0, 1, 4}}; },
       "invalid_argument", "compile.kernels[2].runtime_args[0].cores[0]"},
      {"C6 runtime args entries overlap", [K](json& p) { K(p, 0)["runtime_args"][1]["cores"] = {{0, 7, 1, 7}}; },
       "invalid_argument", "compile.kernels[0].runtime_args[1].cores[0]"},
      {"V6 two kernels on one processor", [K](json& p) { K(p, 3)["cores"] = {{0, 3, 1, 7}}; }, "invalid_argument",
       "compile.kernels[3].cores"},
      {"C3 CB cores outside", [](json& p) { p["cbs"][0]["cores"] = {{0, 0, 1, 8}}; }, "invalid_argument", "compile.cbs[0].cores[0]"},
      {"V7 total_bytes 0", [](json& p) { p["cbs"][0]["total_bytes"] = 0; }, "invalid_argument", "compile.cbs[0].total_bytes"},
      {"V7 no indices", [](json& p) { p["cbs"][0]["indices"] = json::array(); }, "invalid_argument", "compile.cbs[0].indices"},
      {"V7 index 32", [](json& p) { p["cbs"][0]["indices"][0]["index"] = 32; }, "invalid_argument",
       "compile.cbs[0].indices[0].index"},
      {"V7 page_bytes 0", [](json& p) { p["cbs"][0]["indices"][0]["page_bytes"] = 0; }, "invalid_argument",
       "compile.cbs[0].indices[0].page_bytes"},
      {"V7 page_bytes not dividing", [](json& p) { p["cbs"][0]["indices"][0]["page_bytes"] = 3000; }, "invalid_argument",
       "compile.cbs[0].indices[0].page_bytes"},
      {"V7 tile shape", [](json& p) { p["cbs"][0]["indices"][0]["tile"] = {3, 32}; }, "invalid_argument",
       "compile.cbs[0].indices[0].tile"},
      {"V7 index twice in a config", [](json& p) { p["cbs"][0]["indices"][1]["index"] = 0; }, "invalid_argument",
       "compile.cbs[0].indices[1].index"},
      {"V7 CB buffer out of range", [](json& p) { p["cbs"][1]["buffer"] = 9; }, "invalid_argument", "compile.cbs[1].buffer"},
      {"V7 CB buffer a variable", [](json& p) { p["cbs"][1]["buffer"] = 2; }, "invalid_argument", "compile.cbs[1].buffer"},
      {"V7 CB buffer undeclared", [](json& p) { p["cbs"][1]["buffer"] = 1; }, "invalid_argument", "compile.cbs[1].buffer"},
      {"V7 CB buffer in DRAM", [](json& p) { p["cbs"][1]["buffer"] = 0; }, "invalid_argument", "compile.cbs[1].buffer"},
      {"V7 CB core without a shard", [](json& p) { p["cbs"][1]["cores"] = {{0, 0, 0, 4}}; }, "invalid_argument",
       "compile.cbs[1].buffer"},
      {"V7 CB index twice on a core", [](json& p) { p["cbs"][1]["indices"][0]["index"] = 0; }, "invalid_argument",
       "compile.cbs[1].indices"},
      {"V8 CBs over the L1 budget",
       [](json& p) {
         p["cbs"][0]["total_bytes"] = 1400 * 1024;
       },
       "invalid_argument", "compile.cbs"},
      {"C3 semaphore cores outside", [](json& p) { p["semaphores"][0]["cores"] = {{9, 0, 9, 0}}; }, "invalid_argument",
       "compile.semaphores[0].cores[0]"},
      {"V9 semaphore id past the count", [](json& p) { p["semaphores"][0]["id"] = 16; }, "invalid_argument",
       "compile.semaphores[0].id"},
      {"V9 semaphore id used twice on a core", [](json& p) { p["semaphores"][1]["id"] = 0; }, "invalid_argument",
       "compile.semaphores[1].id"},
      {"V9 semaphore id not as CreateSemaphore gives", [](json& p) { p["semaphores"][1]["id"] = 2; }, "invalid_argument",
       "compile.semaphores[1].id"},
  };
}

void test_programs() {
  Harness h;
  h.init();
  json good = good_program();
  uint64_t prog = h.ok(good)["program"];
  const ProgramDesc& lp = h.state->last_program;
  CHECK(lp.kernels.size() == 4 && lp.kernels[0].name == "reader" && lp.kernels[0].processor == Processor::Riscv0 &&
            lp.kernels[0].noc == 0 && lp.kernels[2].noc == 1 && lp.kernels[3].noc == 1 &&
            lp.kernels[0].named_compile_args.size() == 1 && lp.kernels[0].named_compile_args[0].first == "num_tiles" &&
            lp.kernels[0].named_compile_args[0].second.value == 64 && lp.kernels[0].runtime_args.size() == 2 &&
            lp.kernels[0].runtime_args[0].args.size() == 10 && lp.kernels[0].defines.at("BLOCK") == "4" &&
            lp.kernels[1].compute.math_fidelity == MathFidelity::HiFi2 && lp.kernels[1].compute.fp32_dest_acc &&
            !lp.kernels[1].compute.math_approx_mode,
        "kernels reached the layer changed");
  CHECK(lp.kernels[3].source == std::string("\x00\x01\xff\n\"\\", 6), "base64 source decoded wrong");
  CHECK(lp.cbs.size() == 2 && lp.cbs[0].indices[1].index == 16 && lp.cbs[0].indices[1].format == DataFormat::Bfp8_b &&
            lp.cbs[1].buffer_param == 3u && lp.cbs[1].indices[0].tile_rows == 1 && lp.cbs[0].indices[0].tile_rows == 32,
        "cbs reached the layer changed");
  CHECK(lp.semaphores.size() == 2 && lp.semaphores[1].initial == 5 && lp.buffers.size() == 2 &&
            lp.buffers[1].spec.shard && lp.buffers[1].spec.shard->tensor[0] == 8 && lp.include_files.size() == 1 &&
            lp.include_files[0].path == "inc/common.h",
        "buffers/semaphores reached the layer changed");

  // The table: every rule, with its code and path.
  int n = 0;
  for (const BadCase& c : bad_programs()) {
    json p = good;
    c.edit(p);
    json r = h.req(p);
    std::string got = code_of(r);
    CHECK(got == c.code && message_of(r).rfind(std::string(c.path) + ": ", 0) == 0,
          c.what << ": expected " << c.code << " at " << c.path << ", got " << got << ": " << message_of(r));
    n++;
  }
  std::cerr << "bad programs: " << n << " cases\n";

  // A named compile arg's name is any string, as on tt-metal (its tests
  // name one "" and one "!@#$%^&*()"): the check passes it to the layer.
  {
    json p = good;
    p["kernels"][0]["named_compile_args"]["num tiles"] = arg("const", {{"value", 7}});
    p["kernels"][0]["named_compile_args"]["!@#$%^&*()"] = arg("const", {{"value", 8}});
    h.ok(p);
    size_t found = 0;
    for (const auto& [name, e] : h.state->last_program.kernels[0].named_compile_args)
      if ((name == "num tiles" && e.value == 7) || (name == "!@#$%^&*()" && e.value == 8)) found++;
    CHECK(found == 2, "non-identifier named compile args did not reach the layer with their values");
  }

  // Shard shapes tt-metal's ShardSpecBuffer takes, making the 4 shards of
  // the 4 cores of buffers[1] (8 x 4 pages; a CB sits on every core):
  // height shards narrower (and the last one partial: 32 pages dealt 10 to
  // a shard) and wider than the tensor, width shards shorter than it,
  // partial block shards.
  for (auto [layout, r, c] : std::vector<std::tuple<const char*, int, int>>{{"height_sharded", 4, 2},
                                                                            {"height_sharded", 5, 2},
                                                                            {"height_sharded", 1, 8},
                                                                            {"width_sharded", 4, 2},
                                                                            {"width_sharded", 8, 1},
                                                                            {"block_sharded", 5, 3}}) {
    json p = good;
    p["buffers"][1]["layout"] = layout;
    p["buffers"][1]["shard"]["shape"] = {r, c};
    json reply = h.req(p);
    CHECK(code_of(reply) == "ok", layout << " shard " << r << "x" << c << ": " << message_of(reply));
  }

  // A second semaphore set on disjoint cores may reuse id 0.
  {
    json p = good;
    p["semaphores"].push_back({{"cores", {{2, 0, 2, 7}}}, {"id", 0}});
    h.ok(p);
  }
  // Compiler diagnostics come back intact, however they are quoted.
  {
    json bad = good;
    bad["kernels"][1]["source"] = "#error \"stop\"\n";
    bad["name"] = "q\"uo\\te\n";
    json r = h.req(bad);
    CHECK(code_of(r) == "compile_error" && message_of(r) == "kernel.cpp:1:2: error: #error \"stop\"\n\tin \"q\"uo\\te\n\"",
          r.dump());
  }

  // Run.
  uint64_t a = h.ok({{"cmd", "alloc"}, {"size", 10 * 2048}})["buffer"];
  uint64_t b = h.ok({{"cmd", "alloc"}, {"size", 4096}})["buffer"];
  json l1spec = good["buffers"][1];
  l1spec.erase("param");
  json l1req = l1spec;
  l1req["cmd"] = "alloc";
  l1req["size"] = 2048;
  uint64_t l = h.ok(l1req)["buffer"];
  json args = {{{"buffer", a}}, {{"buffer", b}}, {{"value", 123}}, {{"buffer", l}}};
  json run = {{"cmd", "run"}, {"program", prog}, {"args", args}, {"timed", true}};
  json r = h.ok(run);
  CHECK(r["elapsed_ns"] == 1000, r.dump());
  // Core (0, 3) of the reader: hand-computed from the fake's tables: page 9
  // is in DRAM bank 9 at NOC (5, 7); core (1, 5) is at NOC (7, 2).
  auto& w = h.state->runtime_words[0][{0, 3}];
  CHECK((w == std::vector<uint32_t>{0x10000, 123, 7, 9, 5, 7, 7, 2, 2, 2048}), "reader words on (0, 3): " << json(w).dump());
  CHECK((h.state->runtime_words[0][{1, 6}] == std::vector<uint32_t>{9}), "reader words on (1, 6)");
  CHECK(h.state->runtime_words[0].size() == 16 && h.state->runtime_words[2].size() == 8 && !h.state->runtime_words.count(3),
        "cores with runtime args");
  auto run_with = [&](auto edit) {
    json q = run;
    edit(q);
    return q;
  };
  h.fails(run_with([&](json& q) { q["grid"] = {1, 1}; }), "bad_request", "run.grid");
  h.fails(run_with([&](json& q) { q["args"][0] = json::object(); }), "bad_request", "run.args[0]");
  h.fails(run_with([&](json& q) { q["args"][0] = {{"buffer", a}, {"value", 1}}; }), "bad_request", "run.args[0]");
  h.fails(run_with([&](json& q) { q["args"][2] = {{"value", -1}}; }), "bad_request", "run.args[2].value");
  h.fails(run_with([&](json& q) { q["program"] = prog + 50; }), "unknown_program", "run.program");
  h.fails(run_with([&](json& q) { q["args"].erase(3); }), "invalid_argument", "run.args");
  h.fails(run_with([&](json& q) { q["args"][0] = {{"value", 1}}; }), "invalid_argument", "run.args[0]");
  h.fails(run_with([&](json& q) { q["args"][2] = {{"buffer", a}}; }), "invalid_argument", "run.args[2]");
  h.fails(run_with([&](json& q) { q["args"][0] = {{"buffer", 999}}; }), "unknown_buffer", "run.args[0]");
  // A buffer that does not match its declaration: another page size, another shard spec.
  uint64_t a1k = h.ok({{"cmd", "alloc"}, {"size", 10 * 2048}, {"page_size", 1024}})["buffer"];
  h.fails(run_with([&](json& q) { q["args"][0] = {{"buffer", a1k}}; }), "invalid_argument", "run.args[0]");
  json l1other = l1req;
  l1other["shard"]["orientation"] = "col_major";
  uint64_t lc = h.ok(l1other)["buffer"];
  h.fails(run_with([&](json& q) { q["args"][3] = {{"buffer", lc}}; }), "invalid_argument", "run.args[3]");
  // An undeclared param takes any buffer.
  h.ok(run_with([&](json& q) { q["args"][1] = {{"buffer", a1k}}; }));
  // A bank page past the buffer: page 9 of a 9-page buffer.
  uint64_t a9 = h.ok({{"cmd", "alloc"}, {"size", 9 * 2048}})["buffer"];
  h.fails(run_with([&](json& q) { q["args"][0] = {{"buffer", a9}}; }), "invalid_argument",
          "compile.kernels[0].runtime_args[0].args[3].page");
  // Values past 32 bits are refused, not truncated.
  uint64_t big = h.ok({{"cmd", "alloc"}, {"size", uint64_t{5} << 30}, {"page_size", 1 << 20}})["buffer"];
  {
    json p2 = good;
    p2["kernels"][2]["runtime_args"][0]["args"] = json::array({arg("buffer_size", {{"param", 1}})});
    uint64_t prog2 = h.ok(p2)["program"];
    h.fails({{"cmd", "run"}, {"program", prog2}, {"args", {{{"buffer", a}}, {{"buffer", big}}, {{"value", 1}}, {{"buffer", l}}}}},
            "invalid_argument", "run.args[1]");
    h.ok({{"cmd", "run"}, {"program", prog2}, {"args", args}});
  }
  // A CB on an interleaved L1 buffer must fit the buffer's share per core.
  {
    json p3 = good;
    p3["buffers"][1] = {{"param", 3}, {"placement", "l1"}, {"page_size", 64}};
    uint64_t prog3 = h.ok(p3)["program"];
    uint64_t small = h.ok({{"cmd", "alloc"}, {"size", 64 * 64 * 4}, {"page_size", 64}, {"placement", "l1"}})["buffer"];
    uint64_t tiny = h.ok({{"cmd", "alloc"}, {"size", 64 * 64}, {"page_size", 64}, {"placement", "l1"}})["buffer"];
    json a3 = args;
    a3[3] = {{"buffer", small}};  // 4 pages of 64 bytes per core: 256 < 512
    h.fails({{"cmd", "run"}, {"program", prog3}, {"args", a3}}, "invalid_argument", "compile.cbs[1].total_bytes");
    uint64_t enough = h.ok({{"cmd", "alloc"}, {"size", 64 * 64 * 8}, {"page_size", 64}, {"placement", "l1"}})["buffer"];
    a3[3] = {{"buffer", enough}};
    h.ok({{"cmd", "run"}, {"program", prog3}, {"args", a3}});
    (void)tiny;
  }
  {
    json hang = good;
    hang["kernels"][1]["source"] = "HANG";
    uint64_t prog3 = h.ok(hang)["program"];
    h.fails({{"cmd", "run"}, {"program", prog3}, {"args", args}}, "deadlock");
  }
  h.ok({{"cmd", "release"}, {"program", prog}});
  h.fails({{"cmd", "release"}, {"program", prog}}, "unknown_program", "release.program");
  h.fails(run, "unknown_program");
  // EOF (no exit) releases the rest.
  h.server->shutdown();
  CHECK(h.state->live_programs == 0 && h.state->live_buffers == 0, "shutdown left programs/buffers");
}

// ---- parse speed ---------------------------------------------------------------

double seconds_to_answer(Harness& h, const std::string& line, json* reply) {
  auto t0 = std::chrono::steady_clock::now();
  *reply = h.send_line(line);
  auto t1 = std::chrono::steady_clock::now();
  if (code_of(*reply) != "ok") std::cerr << message_of(*reply).substr(0, 300) << "\n";
  return std::chrono::duration<double>(t1 - t0).count();
}

// Before: nlohmann's callback parser rescanned the enclosing array at the end
// of every object, so 600 KB of arg objects took seconds and 400k runtime
// args 41 s. Now parse + validation are linear. The bounds are far above the
// measured times (printed), so this never flakes; a quadratic parse misses
// them by orders of magnitude.
void test_parse_speed() {
  Harness h;
  h.init();
  auto compile_with = [](size_t compile_args, size_t runtime_args) {
    json p = good_program();
    json& k = p["kernels"][2];
    k["compile_args"] = json::array();
    for (size_t i = 0; i < compile_args; i++) k["compile_args"].push_back(arg("const", {{"value", i}}));
    json rt = json::array();
    for (size_t i = 0; i < runtime_args; i++) rt.push_back(arg("buffer_addr", {{"param", 1}}));
    k["runtime_args"][0]["args"] = rt;
    p["id"] = 77;
    return p.dump();
  };
  std::string a = compile_with(21000, 0);
  std::string b = compile_with(0, 400000);
  json ra, rb;
  double ta = seconds_to_answer(h, a, &ra);
  CHECK(code_of(ra) == "ok", "600 KB compile: " << code_of(ra));
  double tb = seconds_to_answer(h, b, &rb);
  CHECK(code_of(rb) == "ok", "400k-arg compile: " << code_of(rb));
  std::cerr << "parse speed: " << a.size() / 1024 << " KiB with 21000 arg objects: " << ta * 1e3 << " ms; "
            << b.size() / 1024 << " KiB with 400000 runtime args: " << tb * 1e3 << " ms\n";
  CHECK(ta < 1.0, "600 KB compile took " << ta << " s");
  CHECK(tb < 6.0, "400k-arg compile took " << tb << " s");
  // The run that resolves 400k buffer words checks each param once.
  uint64_t prog = rb.value("program", uint64_t{0});
  uint64_t ba = h.ok({{"cmd", "alloc"}, {"size", 10 * 2048}})["buffer"];
  uint64_t bb = h.ok({{"cmd", "alloc"}, {"size", 4096}})["buffer"];
  json l1 = good_program()["buffers"][1];
  l1.erase("param");
  l1["cmd"] = "alloc";
  l1["size"] = 2048;
  uint64_t bl = h.ok(l1)["buffer"];
  h.ok({{"cmd", "run"}, {"program", prog}, {"args", {{{"buffer", ba}}, {{"buffer", bb}}, {{"value", 1}}, {{"buffer", bl}}}}});
}

// ---- pipelining ----------------------------------------------------------------

// PipeHarness runs a Pipeline over a pipe in a thread, as main does.
struct PipeHarness {
  std::shared_ptr<test::FakeState> state = std::make_shared<test::FakeState>();
  std::mutex mu;
  std::condition_variable cv;
  std::vector<json> replies;
  std::unique_ptr<Server> server;
  std::unique_ptr<Pipeline> pipeline;
  std::unique_ptr<LineReader> reader;
  std::thread thread;
  int in[2] = {-1, -1};
  std::atomic<bool> eof_seen{false}, served{false};

  PipeHarness() {
    CHECK(pipe(in) == 0, "pipe");
    server = std::make_unique<Server>(
        [this](std::string_view l) {
          std::lock_guard<std::mutex> lk(mu);
          replies.push_back(json::parse(l));
          cv.notify_all();
        },
        [this](const LayerRequest&) -> std::unique_ptr<DeviceLayer> { return std::make_unique<test::FakeLayer>(state); });
    pipeline = std::make_unique<Pipeline>(*server);
    reader = std::make_unique<LineReader>(in[0]);
    thread = std::thread([this] {
      pipeline->serve(*reader, [this] { eof_seen = true; });
      served = true;
    });
  }
  ~PipeHarness() {
    close_input();
    thread.join();
    ::close(in[0]);
  }
  void close_input() {
    if (in[1] >= 0) ::close(in[1]);
    in[1] = -1;
  }
  void send(const json& j) {
    std::string s = j.dump() + "\n";
    CHECK(::write(in[1], s.data(), s.size()) == static_cast<ssize_t>(s.size()), "write");
  }
  bool wait_replies(size_t n, int ms = 5000) {
    std::unique_lock<std::mutex> lk(mu);
    return cv.wait_for(lk, std::chrono::milliseconds(ms), [&] { return replies.size() >= n; });
  }
  size_t count() {
    std::lock_guard<std::mutex> lk(mu);
    return replies.size();
  }
  template <typename F>
  bool wait_until(F f, int ms = 5000) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!f()) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }
};

// Latch blocks the fake's runs until released.
struct Latch {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> waiting{0};
  void wait() {
    std::unique_lock<std::mutex> lk(mu);
    waiting++;
    cv.wait(lk, [&] { return open; });
    waiting--;
  }
  void release() {
    std::lock_guard<std::mutex> lk(mu);
    open = true;
    cv.notify_all();
  }
  void reset() {
    std::lock_guard<std::mutex> lk(mu);
    open = false;
  }
};

void test_pipeline() {
  Latch latch;
  {
    PipeHarness ph;
    ph.state->on_run = [&] { latch.wait(); };
    ph.send({{"id", 1}, {"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"cache_dir", "/tmp/x"}});
    json p = good_program();
    p["id"] = 2;
    ph.send(p);
    ph.send({{"id", 3}, {"cmd", "alloc"}, {"size", 10 * 2048}});
    ph.send({{"id", 4}, {"cmd", "alloc"}, {"size", 4096}});
    json l1 = good_program()["buffers"][1];
    l1.erase("param");
    l1["cmd"] = "alloc";
    l1["size"] = 2048;
    l1["id"] = 5;
    ph.send(l1);
    CHECK(ph.wait_replies(5), "five replies");
    json run;
    {
      std::lock_guard<std::mutex> lk(ph.mu);
      for (size_t i = 0; i < 5; i++) CHECK(code_of(ph.replies[i]) == "ok", ph.replies[i].dump());
      run = {{"cmd", "run"},
             {"program", ph.replies[1].value("program", 0)},
             {"args",
              {{{"buffer", ph.replies[2].value("buffer", 0)}},
               {{"buffer", ph.replies[3].value("buffer", 0)}},
               {{"value", 1}},
               {{"buffer", ph.replies[4].value("buffer", 0)}}}}};
    }
    // A run that blocks, then pings behind it: the reader keeps reading
    // (all lines are parsed while the run is stuck), and the pings are
    // answered only after the run, in request order.
    run["id"] = 6;
    ph.send(run);
    CHECK(ph.wait_until([&] { return latch.waiting.load() == 1; }), "the run started");
    for (int i = 7; i <= 9; i++) ph.send({{"id", i}, {"cmd", "ping"}});
    CHECK(ph.wait_until([&] { return ph.pipeline->prepared() == 9; }),
          "the reader read on during the run: prepared " << ph.pipeline->prepared());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(ph.count() == 5, "a ping was answered before the run: " << ph.count());
    latch.release();
    CHECK(ph.wait_replies(9), "nine replies");
    {
      std::lock_guard<std::mutex> lk(ph.mu);
      for (size_t i = 0; i < ph.replies.size(); i++)
        CHECK(ph.replies[i]["id"] == i + 1, "reply " << i << " is " << ph.replies[i].dump());
      CHECK(code_of(ph.replies[5]) == "ok", ph.replies[5].dump());
    }
    // Idle: a ping runs on the reading thread. The executor writes run 9's
    // reply before it marks itself idle, so wait for that first.
    CHECK(ph.wait_until([&] { return ph.pipeline->idle(); }), "the executor went idle");
    uint64_t before = ph.pipeline->inlined();
    ph.send({{"id", 10}, {"cmd", "ping"}});
    CHECK(ph.wait_replies(10), "ping 10");
    CHECK(ph.pipeline->inlined() == before + 1, "an idle ping ran inline");
    // exit drains what is queued, then stops reading: the line after it gets no reply.
    latch.reset();
    run["id"] = 11;
    ph.send(run);
    CHECK(ph.wait_until([&] { return latch.waiting.load() == 1; }), "the second run started");
    ph.send({{"id", 12}, {"cmd", "exit"}});
    ph.send({{"id", 13}, {"cmd", "ping"}});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(!ph.served, "serve returned while a run was still going");
    latch.release();
    CHECK(ph.wait_until([&] { return ph.served.load(); }), "serve returned after exit");
    CHECK(ph.count() == 12, "replies after exit: " << ph.count());
    {
      std::lock_guard<std::mutex> lk(ph.mu);
      CHECK(code_of(ph.replies[10]) == "ok" && ph.replies[10]["id"] == 11, ph.replies[10].dump());
      CHECK(code_of(ph.replies[11]) == "ok" && ph.replies[11]["id"] == 12, ph.replies[11].dump());
    }
    CHECK(ph.state->destroyed && ph.state->live_buffers == 0, "exit released everything");
  }
  {
    // End of input drains too: the queued run still gets its reply.
    latch.reset();
    PipeHarness ph;
    ph.state->on_run = [&] { latch.wait(); };
    ph.send({{"id", 1}, {"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"cache_dir", "/tmp/x"}});
    json p = good_program();
    p["id"] = 2;
    p["buffers"] = json::array();
    p["cbs"].erase(1);
    p["kernels"][0]["compile_args"].erase(0);
    for (int i = 3; i <= 5; i++) p["kernels"][0]["runtime_args"][0]["args"].erase(3);
    ph.send(p);
    ph.send({{"id", 3}, {"cmd", "alloc"}, {"size", 10 * 2048}});
    CHECK(ph.wait_replies(3), "three replies");
    ph.send({{"id", 4}, {"cmd", "run"}, {"program", 1}, {"args", {{{"buffer", 1}}, {{"buffer", 1}}, {{"value", 1}}, {{"buffer", 1}}}}});
    ph.send({{"id", 5}, {"cmd", "ping"}});
    ph.close_input();
    CHECK(ph.wait_until([&] { return ph.eof_seen.load(); }), "on_eof ran while the run was going");
    CHECK(ph.count() == 3, "nothing answered yet");
    latch.release();
    CHECK(ph.wait_until([&] { return ph.served.load(); }), "serve returned at EOF");
    std::lock_guard<std::mutex> lk(ph.mu);
    CHECK(ph.replies.size() == 5 && code_of(ph.replies[3]) == "ok" && ph.replies[4]["id"] == 5,
          "EOF drained: " << ph.replies.size() << " replies, run " << (ph.replies.size() > 3 ? ph.replies[3].dump() : ""));
  }
}

// A driver that pipelines without reading meets back-pressure: while a run
// blocks, the reader queues at most Pipeline's limit (256) and waits.
void test_backpressure() {
  Latch latch;
  PipeHarness ph;
  ph.state->on_run = [&] { latch.wait(); };
  ph.send({{"id", 1}, {"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"cache_dir", "/tmp/x"}});
  ph.send({{"id", 2}, {"cmd", "compile"}, {"kernels", {{{"processor", "riscv_0"}, {"cores", {{0, 0, 0, 0}}}, {"source", "k"}}}}});
  CHECK(ph.wait_replies(2), "init and compile");
  ph.send({{"id", 3}, {"cmd", "run"}, {"program", 1}});
  CHECK(ph.wait_until([&] { return latch.waiting.load() == 1; }), "the run started");
  std::string pings;
  for (int i = 0; i < 400; i++) pings += json{{"id", 4 + i}, {"cmd", "ping"}}.dump() + "\n";
  CHECK(::write(ph.in[1], pings.data(), pings.size()) == static_cast<ssize_t>(pings.size()), "write pings");
  CHECK(ph.wait_until([&] { return ph.pipeline->prepared() >= 3 + 257; }), "the reader queued up to the limit");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  uint64_t held = ph.pipeline->prepared();
  CHECK(held == 3 + 257, "lines parsed while 256 wait: " << held);
  latch.release();
  CHECK(ph.wait_replies(403), "every ping answered after the run");
  std::lock_guard<std::mutex> lk(ph.mu);
  bool in_order = true;
  for (size_t i = 0; i < ph.replies.size(); i++) in_order = in_order && ph.replies[i]["id"] == i + 1;
  CHECK(in_order && code_of(ph.replies[2]) == "ok", "replies in order, the run ok");
}

// init_good_and_failing initializes ph's server (requests 1-3) with
// program 1, whose runs succeed, and program 2, whose runs fail at their end
// (the fake layer's FAILLATE).
void init_good_and_failing(PipeHarness& ph) {
  auto kernel = [](const char* src) {
    return json{{"kernels", {{{"processor", "riscv_0"}, {"cores", {{0, 0, 0, 0}}}, {"source", src}}}}};
  };
  ph.send({{"id", 1}, {"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"cache_dir", "/tmp/x"}});
  json good = kernel("k"), bad = kernel("FAILLATE");
  good["id"] = 2, good["cmd"] = "compile";
  bad["id"] = 3, bad["cmd"] = "compile";
  ph.send(good);
  ph.send(bad);
  CHECK(ph.wait_replies(3), "init and compiles");
}

// run_request is a run request of program prog.
json run_request(uint64_t id, uint64_t prog) { return json{{"id", id}, {"cmd", "run"}, {"program", prog}}; }

// A layer whose launch returns before the run ends: runs queue on the device
// behind each other while the server reads on, their replies wait for their
// ends and go out in order; anything but a run, and a run with `after`,
// waits until the runs in flight have ended; a run that fails at its end
// answers with its error, a request after it answers dependency_failed, and
// later independent requests succeed.
void test_runs_in_flight() {
  Latch latch, gate;
  PipeHarness ph;
  ph.state->async_runs = true;
  ph.state->on_finish = [&](uint64_t) { latch.wait(); };
  // The gate holds the first launch until the reader has queued every
  // request sent, so the executor meets them all in its queue and the order
  // of launches, ends and finishes below is fixed however loaded the host
  // is (test_launch_while_waiting covers runs that arrive while the
  // executor waits for a run).
  ph.state->on_run = [&] { gate.wait(); };
  init_good_and_failing(ph);
  ph.send(run_request(4, 1));  // launch 1
  ph.send(run_request(5, 2));  // launch 2, fails at its end
  ph.send(run_request(6, 1));  // launch 3
  json dep = run_request(7, 1);
  dep["after"] = {4, 5};
  ph.send(dep);        // waits for the runs in flight, then is not executed
  ph.send(run_request(8, 1));  // launch 4
  ph.send({{"id", 9}, {"cmd", "ping"}});
  CHECK(ph.wait_until([&] { return ph.pipeline->prepared() == 9; }), "nine requests queued");
  gate.release();
  CHECK(ph.wait_until([&] { return latch.waiting.load() == 1; }), "a finish is waited for");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto log = ph.state->logged();
  CHECK((log == std::vector<std::string>{"launch 1", "launch 2", "launch 3"}),
        "three runs launched before the first ended: " << json(log).dump());
  CHECK(ph.count() == 3, "no run answered before its end: " << ph.count());
  latch.release();
  CHECK(ph.wait_replies(9), "every request answered");
  {
    std::lock_guard<std::mutex> lk(ph.mu);
    for (size_t i = 0; i < ph.replies.size(); i++) CHECK(ph.replies[i]["id"] == i + 1, "reply " << i << ": " << ph.replies[i].dump());
    CHECK(code_of(ph.replies[3]) == "ok", ph.replies[3].dump());
    CHECK(code_of(ph.replies[4]) == "run_error", ph.replies[4].dump());
    CHECK(code_of(ph.replies[5]) == "ok", ph.replies[5].dump());
    CHECK(code_of(ph.replies[6]) == "dependency_failed", ph.replies[6].dump());
    CHECK(message_of(ph.replies[6]) == "run.after[1]: request 5 failed (run_error); this request was not executed",
          message_of(ph.replies[6]));
    CHECK(code_of(ph.replies[7]) == "ok" && code_of(ph.replies[8]) == "ok", "later independent requests succeed");
  }
  log = ph.state->logged();
  CHECK((log == std::vector<std::string>{"launch 1", "launch 2", "launch 3", "end 1", "finish 1", "end 2", "finish 2", "end 3",
                                         "finish 3", "launch 4", "end 4", "finish 4"}),
        "the dependent run did not launch; the rest in order: " << json(log).dump());

  // `after` that succeeded runs; ids outside the window or not before the
  // request are invalid_argument; the shape is bad_request.
  json ok_dep = run_request(10, 1);
  ok_dep["after"] = {4, 6, 8};
  ph.send(ok_dep);
  json late = run_request(11, 1);
  late["after"] = {11};
  ph.send(late);
  json far = {{"id", 2000}, {"cmd", "ping"}, {"after", {900}}};
  ph.send(far);
  json shape = {{"id", 2001}, {"cmd", "ping"}, {"after", {"x"}}};
  ph.send(shape);
  json many = {{"id", 2002}, {"cmd", "ping"}, {"after", json::array()}};
  for (int i = 0; i < 65; i++) many["after"].push_back(1000 + i);
  ph.send(many);
  CHECK(ph.wait_replies(14), "five more replies");
  {
    std::lock_guard<std::mutex> lk(ph.mu);
    CHECK(code_of(ph.replies[9]) == "ok", ph.replies[9].dump());
    CHECK(code_of(ph.replies[10]) == "invalid_argument" && message_of(ph.replies[10]).rfind("run.after[0]: ", 0) == 0,
          ph.replies[10].dump());
    CHECK(code_of(ph.replies[11]) == "invalid_argument" && message_of(ph.replies[11]).rfind("ping.after[0]: ", 0) == 0,
          ph.replies[11].dump());
    CHECK(code_of(ph.replies[12]) == "bad_request" && message_of(ph.replies[12]).rfind("ping.after[0]: ", 0) == 0,
          ph.replies[12].dump());
    CHECK(code_of(ph.replies[13]) == "bad_request" && message_of(ph.replies[13]).rfind("ping.after: ", 0) == 0,
          ph.replies[13].dump());
  }

  // At most kMaxRunsInFlight runs are in flight: the next launch waits for
  // the oldest to end.
  latch.reset();
  gate.reset();
  uint64_t before = ph.state->launched;
  for (int i = 0; i < 20; i++) ph.send(run_request(3000 + i, 1));
  CHECK(ph.wait_until([&] { return ph.pipeline->prepared() == 34; }), "the twenty runs queued");
  gate.release();
  CHECK(ph.wait_until([&] { return latch.waiting.load() == 1; }), "a finish is waited for");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  uint64_t launched = ph.state->launched - before;
  CHECK(launched == Server::kMaxRunsInFlight + 1, "launched while the oldest has not ended: " << launched);
  latch.release();
  CHECK(ph.wait_replies(34), "the twenty runs answered");
}

// `after` may name only requests answered before it: an id never sent (or
// sent later), id 0, an id named twice, or one whose slot a later id took
// are invalid_argument, with the path after[i] and the id. Every request of
// the window before a request is remembered, however long ago its reply went
// out.
void test_after_names_known_requests() {
  Harness h;
  h.init();  // id 1
  auto send = [&](uint64_t id, json after, json extra = json::object()) {
    json r = extra;
    r["id"] = id;
    r["cmd"] = "ping";
    if (!after.is_null()) r["after"] = after;
    return h.send_line(r.dump());
  };
  CHECK(code_of(send(2, nullptr)) == "ok", "ping 2");
  CHECK(code_of(send(3, nullptr, {{"junk", 1}})) == "bad_request", "ping 3 fails");
  CHECK(code_of(send(50, nullptr)) == "ok", "ping 50");
  CHECK(code_of(send(1074, nullptr)) == "ok", "ping 1074 takes the slot of 50");
  CHECK(code_of(send(35, nullptr)) == "ok", "ping 35, an id lower than the last");
  struct Case {
    const char* what;
    uint64_t id;
    json after;
    const char* code;
    std::string message;  // "" for success
  };
  const Case cases[] = {
      {"a request that succeeded", 10, {2}, "ok", ""},
      {"a request that failed", 11, {2, 3}, "dependency_failed",
       "ping.after[1]: request 3 failed (bad_request); this request was not executed"},
      {"never sent", 12, {2, 7}, "invalid_argument", "ping.after[1]: request 7 is unknown: no request 7 came before request 12"},
      {"id 0", 13, {0}, "invalid_argument", "ping.after[0]: request 0 is unknown: no request 0 came before request 13"},
      {"named twice", 14, {2, 10, 2}, "invalid_argument", "ping.after[2]: request 2 is named twice (also after[0])"},
      {"a failed one named twice", 15, {3, 3}, "invalid_argument", "ping.after[1]: request 3 is named twice (also after[0])"},
      {"a lower id sent before", 40, {35}, "ok", ""},
      {"an id between those sent", 41, {39}, "invalid_argument", "ping.after[0]: request 39 is unknown: no request 39 came before request 41"},
      {"its slot taken", 1060, {50}, "invalid_argument",
       "ping.after[0]: request 50 is unknown: it did not come before request 1060, or request 1074, sent since, took its "
       "place (the runtime remembers 1024 requests of increasing ids)"},
      {"not before the request", 42, {42}, "invalid_argument",
       "ping.after[0]: request 42 is not one of the 1024 requests before request 42"},
  };
  for (const Case& c : cases) {
    json r = send(c.id, c.after);
    CHECK(code_of(r) == c.code && message_of(r) == c.message, c.what << ": " << r.dump());
  }
  // A window of successes: the oldest, the middle and the newest are known.
  for (uint64_t id = 2000; id < 2000 + kAfterWindow; id++) send(id, nullptr);
  json r = send(2000 + kAfterWindow, {2000, 2500, 2000 + kAfterWindow - 1});
  CHECK(code_of(r) == "ok", "the whole window is remembered: " << r.dump());
}

// RunHolds holds each of the fake's runs on the device until the test
// releases it by number (FakeState::on_finish).
struct RunHolds {
  std::mutex mu;
  std::condition_variable cv;
  std::set<uint64_t> released, waiting;
  void wait(uint64_t n) {
    std::unique_lock<std::mutex> lk(mu);
    waiting.insert(n);
    cv.wait(lk, [&] { return released.count(n) > 0; });
    waiting.erase(n);
  }
  void release(uint64_t n) {
    std::lock_guard<std::mutex> lk(mu);
    released.insert(n);
    cv.notify_all();
  }
  bool is_waiting(uint64_t n) {
    std::lock_guard<std::mutex> lk(mu);
    return waiting.count(n) > 0;
  }
};

// A run that arrives while the executor waits for the end of the run in
// flight (nothing else queued) is launched at once, before that run ends;
// the replies still come in request order, each once its run has ended; a
// request other than a run waits for both; a run whose `after` names a run
// still on the device that then fails is not launched and is answered
// dependency_failed; exit waits for the run in flight and answers it.
void test_launch_while_waiting() {
  RunHolds holds;
  PipeHarness ph;
  ph.state->async_runs = true;
  ph.state->on_finish = [&](uint64_t n) { holds.wait(n); };
  init_good_and_failing(ph);
  using Log = std::vector<std::string>;

  // Run A (launch 1) is on the device and its end is waited for.
  ph.send(run_request(4, 1));
  CHECK(ph.wait_until([&] { return holds.is_waiting(1); }), "the end of run A is waited for");
  // Run B arrives now, with nothing else queued: it launches while A is held.
  ph.send(run_request(5, 1));
  CHECK(ph.wait_until([&] { return ph.state->launched.load() == 2; }),
        "run B launched while run A is on the device: " << json(ph.state->logged()).dump());
  CHECK((ph.state->logged() == Log{"launch 1", "launch 2"}), "B launched before A ended: " << json(ph.state->logged()).dump());
  // A request other than a run waits for both.
  ph.send({{"id", 6}, {"cmd", "alloc"}, {"size", 4096}});
  CHECK(ph.wait_until([&] { return ph.pipeline->prepared() == 6; }), "the alloc was read");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(ph.count() == 3, "no run answered before its end: " << ph.count());
  CHECK(ph.state->live_buffers == 0, "the alloc did not execute while runs are on the device");
  holds.release(1);
  CHECK(ph.wait_replies(4), "run A answered once it ended");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(ph.count() == 4, "run B not answered before its end: " << ph.count());
  CHECK(ph.state->live_buffers == 0, "the alloc waits for run B too");
  holds.release(2);
  CHECK(ph.wait_replies(6), "run B and the alloc answered");
  {
    std::lock_guard<std::mutex> lk(ph.mu);
    for (size_t i = 3; i < 6; i++)
      CHECK(ph.replies[i]["id"] == i + 1 && code_of(ph.replies[i]) == "ok", "reply " << i << ": " << ph.replies[i].dump());
  }
  CHECK(ph.state->live_buffers == 1, "the alloc executed after both runs");
  CHECK((ph.state->logged() == Log{"launch 1", "launch 2", "end 1", "finish 1", "end 2", "finish 2"}),
        "launches and ends: " << json(ph.state->logged()).dump());

  // `after` naming a run still on the device that fails at its end.
  ph.send(run_request(7, 2));  // launch 3, fails at its end
  CHECK(ph.wait_until([&] { return holds.is_waiting(3); }), "the end of the failing run is waited for");
  ph.send(run_request(8, 1));  // launch 4, while 3 is held
  json dep = run_request(9, 1);
  dep["after"] = {7};
  ph.send(dep);         // waits for 3 and 4, then is not executed
  ph.send(run_request(10, 1));  // launch 5, after the dependent run
  CHECK(ph.wait_until([&] { return ph.state->launched.load() == 4; }), "run 8 launched while run 7 is on the device");
  CHECK(ph.wait_until([&] { return ph.pipeline->prepared() == 10; }), "all read");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(ph.state->launched.load() == 4, "the run with after waits: " << json(ph.state->logged()).dump());
  CHECK(ph.count() == 6, "nothing answered before run 7 ended: " << ph.count());
  holds.release(3);
  holds.release(4);
  holds.release(5);
  CHECK(ph.wait_replies(10), "four more replies");
  {
    std::lock_guard<std::mutex> lk(ph.mu);
    for (size_t i = 6; i < 10; i++) CHECK(ph.replies[i]["id"] == i + 1, "reply " << i << ": " << ph.replies[i].dump());
    CHECK(code_of(ph.replies[6]) == "run_error", ph.replies[6].dump());
    CHECK(code_of(ph.replies[7]) == "ok", ph.replies[7].dump());
    CHECK(code_of(ph.replies[8]) == "dependency_failed", ph.replies[8].dump());
    CHECK(message_of(ph.replies[8]) == "run.after[0]: request 7 failed (run_error); this request was not executed",
          message_of(ph.replies[8]));
    CHECK(code_of(ph.replies[9]) == "ok", ph.replies[9].dump());
  }
  Log log = ph.state->logged();
  CHECK((Log(log.begin() + 6, log.end()) ==
         Log{"launch 3", "launch 4", "end 3", "finish 3", "end 4", "finish 4", "launch 5", "end 5", "finish 5"}),
        "the dependent run never launched: " << json(log).dump());

  // exit waits for the run in flight, answers it, then itself.
  ph.send(run_request(11, 1));  // launch 6
  CHECK(ph.wait_until([&] { return holds.is_waiting(6); }), "the end of run 11 is waited for");
  ph.send({{"id", 12}, {"cmd", "exit"}});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(!ph.served && ph.count() == 10, "exit waits for the run in flight");
  holds.release(6);
  CHECK(ph.wait_until([&] { return ph.served.load(); }), "serve returned after exit");
  std::lock_guard<std::mutex> lk(ph.mu);
  CHECK(ph.replies.size() == 12 && ph.replies[10]["id"] == 11 && code_of(ph.replies[10]) == "ok" &&
            ph.replies[11]["id"] == 12 && code_of(ph.replies[11]) == "ok",
        "run and exit answered in order: " << ph.replies.size());
  CHECK(ph.state->destroyed, "exit released the layer");
}

// ---- randomized lines --------------------------------------------------------

// mutate returns a random damaged version of a valid request.
std::string mutate(const json& valid, std::mt19937_64& rng) {
  static const json odd_values[] = {nullptr, -1, 1.5, 1e300, "x", "", json::array(), json::object(), true,
                                    UINT64_MAX, 0, json::array({0, 0}), "../etc/passwd", std::string(40, 'z')};
  json v = valid;
  // Damage a nested value now and then: pick a path into the object.
  auto pick = [&](json& root) -> json* {
    json* cur = &root;
    for (int depth = 0; depth < 6; depth++) {
      if (cur->is_object() && !cur->empty() && rng() % 3) {
        auto it = cur->begin();
        std::advance(it, static_cast<long>(rng() % cur->size()));
        cur = &*it;
      } else if (cur->is_array() && !cur->empty() && rng() % 3) {
        cur = &(*cur)[rng() % cur->size()];
      } else {
        break;
      }
    }
    return cur;
  };
  switch (rng() % 10) {
    case 0: {  // drop a field
      if (v.size() > 1) {
        auto it = v.begin();
        std::advance(it, static_cast<long>(rng() % v.size()));
        v.erase(it.key());
      }
      break;
    }
    case 1: {  // retype a field
      auto it = v.begin();
      std::advance(it, static_cast<long>(rng() % v.size()));
      *it = odd_values[rng() % std::size(odd_values)];
      break;
    }
    case 2:
      v["cmd"] = std::string(1, static_cast<char>('a' + rng() % 26)) + "x";
      break;
    case 3: {  // damage the text
      std::string s = v.dump();
      for (int i = 0, n = 1 + static_cast<int>(rng() % 4); i < n; i++) s[rng() % s.size()] = static_cast<char>(rng() % 256);
      for (auto& ch : s)
        if (ch == '\n') ch = ' ';
      return s;
    }
    case 4: {  // cut it short
      std::string s = v.dump();
      return s.substr(0, rng() % s.size());
    }
    case 5:
    case 6: {  // retype a nested value
      json* t = pick(v);
      if (t != &v) *t = odd_values[rng() % std::size(odd_values)];
      break;
    }
    default:
      break;  // unchanged: a valid request
  }
  return v.dump();
}

void test_random(uint64_t seed, int iterations) {
  Harness h;
  std::mt19937_64 rng(seed);
  h.segment("zyx-fuzz", std::vector<uint8_t>(8192, 1));
  json prog = good_program();
  std::vector<json> valid = {
      {{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"cache_dir", "/tmp/x"}},
      {{"cmd", "ping"}},
      {{"cmd", "alloc"}, {"size", 4096}, {"page_size", 1024}},
      {{"cmd", "alloc"}, {"size", 20480}},
      {{"cmd", "free"}, {"buffer", 1}},
      {{"cmd", "write"}, {"buffer", 2}, {"offset", 1}, {"segment", "zyx-fuzz"}, {"segment_offset", 3}, {"length", 1000}},
      {{"cmd", "read"}, {"buffer", 3}, {"offset", 0}, {"segment", "zyx-fuzz"}, {"segment_offset", 0}, {"length", 4096}},
      {{"cmd", "map"}, {"segment", "zyx-fuzz"}},
      {{"cmd", "unmap"}, {"segment", "zyx-fuzz"}},
      prog,
      {{"cmd", "run"}, {"program", 1}, {"args", {{{"buffer", 2}}, {{"buffer", 3}}, {{"value", 5}}, {{"buffer", 4}}}}},
      {{"cmd", "release"}, {"program", 2}},
  };
  std::map<std::string, int> codes;
  for (int i = 0; i < iterations; i++) {
    std::string line;
    uint64_t id = h.next_id++;
    uint64_t r = rng() % 10;
    if (r == 0) {  // raw garbage, no newline
      line.resize(rng() % 200);
      for (auto& ch : line) ch = static_cast<char>(rng() % 256);
      for (auto& ch : line)
        if (ch == '\n') ch = '?';
    } else {
      json v = valid[rng() % valid.size()];
      v["id"] = id;
      if (v["cmd"] != "init" || rng() % 4 == 0) {
        // Point ids at buffers and programs that may or may not exist.
        if (v.contains("buffer")) v["buffer"] = rng() % 8;
        if (v.contains("program")) v["program"] = rng() % 5;
      }
      line = mutate(v, rng);
    }
    json reply = h.send_line(line);
    codes[code_of(reply)]++;
    // A reply names the request's id whenever the line parsed with that id.
    try {
      json parsed = json::parse(line);
      if (parsed.is_object() && parsed.contains("id") && parsed["id"].is_number_unsigned() && parsed["id"] != 0 &&
          line.find('\0') == std::string::npos)
        CHECK(reply.value("id", uint64_t{0}) == parsed["id"].get<uint64_t>(), "id not echoed for " << line.substr(0, 200));
      else
        CHECK(reply.value("id", uint64_t{1}) == 0, "unreadable id answered with " << reply.dump());
    } catch (const std::exception&) {
      CHECK(reply.value("id", uint64_t{1}) == 0, "malformed line answered with id " << reply.dump());
    }
    if (failures > 20) break;
  }
  // Still serving, tables consistent.
  h.ok({{"cmd", "ping"}});
  CHECK(static_cast<int>(h.server->live_buffers()) == h.state->live_buffers, "buffer table and layer disagree");
  CHECK(static_cast<int>(h.server->live_programs()) == h.state->live_programs, "program table and layer disagree");
  std::cerr << "random: " << iterations << " lines, seed " << seed << ", " << h.server->live_buffers()
            << " buffers live at the end; replies:";
  for (auto& [code, n] : codes) std::cerr << " " << code << "=" << n;
  std::cerr << "\n";
  // The generator must reach the device layer, not only the parser.
  CHECK(iterations < 2000 || (codes["ok"] > iterations / 20 && codes["unknown_buffer"] > 0 && codes["shm_error"] > 0 &&
                               codes["invalid_argument"] > 0 && codes["bad_request"] > 0 && codes["unknown_command"] > 0),
        "random requests did not cover the server");
}

void test_line_reader() {
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe");
  std::string input = "short\n" + std::string(40, 'x') + "\nok\n" + std::string(17, 'y') + "\n" + std::string(16, 'z') + "\nlast";
  std::thread writer([&] {
    (void)!write(fds[1], input.data(), input.size());
    close(fds[1]);
  });
  LineReader r(fds[0], 16, 3);
  std::string_view line;
  uint64_t skipped = 0;
  using S = LineReader::Status;
  CHECK(r.next(&line, &skipped) == S::line && line == "short", line);
  CHECK(r.next(&line, &skipped) == S::too_long && skipped == 40, skipped);
  CHECK(r.next(&line, &skipped) == S::line && line == "ok", line);
  CHECK(r.next(&line, &skipped) == S::too_long && skipped == 17, skipped);
  CHECK(r.next(&line, &skipped) == S::line && line == std::string(16, 'z'), line);
  CHECK(r.next(&line, &skipped) == S::line && line == "last", line);
  CHECK(r.next(&line, &skipped) == S::eof, "eof");
  writer.join();
  close(fds[0]);
}

// write_corpus writes the fuzz_request seeds (cpp/tests/fuzz/corpus/request):
// a session of valid requests, and each bad program of the table, one file
// each.
int write_corpus(const std::string& dir) {
  std::filesystem::create_directories(dir);
  auto put = [&](const std::string& name, const std::vector<json>& lines) {
    std::string text;
    uint64_t id = 2;
    for (json l : lines) {
      l["id"] = id++;
      text += l.dump() + "\n";
    }
    FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
    if (!f) return false;
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    return true;
  };
  json l1 = good_program()["buffers"][1];
  l1.erase("param");
  l1["cmd"] = "alloc";
  l1["size"] = 2048;
  std::vector<json> session = {
      good_program(),
      {{"cmd", "alloc"}, {"size", 10 * 2048}},
      {{"cmd", "alloc"}, {"size", 4096}},
      l1,
      {{"cmd", "map"}, {"segment", "seg"}},
      {{"cmd", "write"}, {"buffer", 1}, {"offset", 5}, {"segment", "seg"}, {"segment_offset", 3}, {"length", 1000}},
      {{"cmd", "run"}, {"program", 1}, {"args", {{{"buffer", 1}}, {{"buffer", 2}}, {{"value", 5}}, {{"buffer", 3}}}}, {"timed", true}},
      {{"cmd", "read"}, {"buffer", 2}, {"segment", "seg"}, {"length", 4096}},
      {{"cmd", "release"}, {"program", 1}},
      {{"cmd", "free"}, {"buffer", 1}},
      {{"cmd", "unmap"}, {"segment", "seg"}},
      {{"cmd", "ping"}},
      {{"cmd", "exit"}},
  };
  if (!put("session", session)) return 1;
  int n = 0;
  for (const BadCase& c : bad_programs()) {
    json p = good_program();
    c.edit(p);
    if (!put("bad-" + std::to_string(n++), {p})) return 1;
  }
  std::cerr << "wrote " << n + 1 << " seeds to " << dir << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--write-corpus") return write_corpus(argv[2]);
  uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : static_cast<uint64_t>(std::time(nullptr));
  int iterations = argc > 2 ? std::atoi(argv[2]) : 20000;
  test_line_reader();
  test_framing();
  test_plain_ping();
  test_handshake();
  test_bad_desc();
  test_buffers();
  test_shrunk_segment();
  test_programs();
  test_parse_speed();
  test_pipeline();
  test_runs_in_flight();
  test_after_names_known_requests();
  test_launch_while_waiting();
  test_backpressure();
  test_random(seed, iterations);
  if (failures) {
    std::cerr << failures << " checks FAILED (seed " << seed << ")\n";
    return 1;
  }
  std::cerr << "all checks passed (seed " << seed << ")\n";
  return 0;
}
