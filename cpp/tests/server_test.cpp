// Server tests against FakeLayer: the tables, range and shm checks, one reply
// per request under randomized garbage, and the line reader's limit.
// Usage: zyx_server_test [seed] [iterations]
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fake_layer.hpp"
#include "line_reader.hpp"
#include "server.hpp"

using namespace zyx;
using json = nlohmann::json;

namespace {

int failures = 0;

#define CHECK(cond, what)                                                                    \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      failures++;                                                                            \
      std::cerr << __FILE__ << ":" << __LINE__ << ": FAILED: " << #cond << " — " << what << "\n"; \
    }                                                                                        \
  } while (0)

const std::set<std::string> kCodes = {"bad_request",  "unknown_command", "line_too_long", "version_mismatch",
                                      "not_initialized", "unsupported", "unknown_buffer", "unknown_program",
                                      "out_of_memory", "invalid_argument", "shm_error", "compile_error",
                                      "run_error", "deadlock", "device_error", "internal"};

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
    CHECK(r.value("ok", false), "expected ok for " << body.dump() << ", got " << r.dump());
    return r;
  }

  void fails(json body, const std::string& code) {
    json r = req(body);
    std::string got = r.value("ok", true) ? "ok" : r["error"].value("code", "");
    CHECK(got == code, "expected " << code << " for " << body.dump().substr(0, 300) << ", got " << r.dump().substr(0, 300));
  }

  void init() { ok({{"cmd", "init"}, {"protocol", 1}, {"layer", "emu"}, {"board", "n150"}}); }

  std::string segment(const std::string& name, const std::vector<uint8_t>& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return name;
  }
  std::vector<uint8_t> segment_bytes(const std::string& name) {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
  }
};

json section(const std::string& src, json runtime_args = json::array()) {
  return {{"source", src}, {"runtime_args", runtime_args}};
}

json program(json params, json reader, json compute, json writer, json cbs = json::array()) {
  return {{"cmd", "compile"}, {"name", "t"},   {"params", params}, {"reader", reader},
          {"compute", compute}, {"writer", writer}, {"cbs", cbs}};
}

void test_handshake() {
  Harness h;
  h.ok({{"cmd", "ping"}});
  h.fails({{"cmd", "alloc"}, {"size", 16}}, "not_initialized");
  h.fails({{"cmd", "map"}, {"segment", "x"}}, "not_initialized");
  h.fails({{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}}, "version_mismatch");
  h.fails({{"cmd", "init"}}, "bad_request");
  h.fails({{"cmd", "init"}, {"protocol", 1}, {"layer", "cuda"}}, "invalid_argument");
  h.fails({{"cmd", "init"}, {"protocol", 1}, {"layer", "metal"}}, "unsupported");
  h.fails({{"cmd", "init"}, {"protocol", "1"}}, "bad_request");
  json r = h.ok({{"cmd", "init"}, {"protocol", 1}, {"layer", "emu"}, {"board", "n150"}, {"chip", 0}});
  CHECK(r["protocol"] == 1 && r["runtime"] == "emu" && r["grid"]["rows"] == 8 && r["grid"]["cols"] == 8 &&
            r["grid"]["harvested_rows"] == json::array({9}) && r["dram"]["banks"] == 12 &&
            r["l1"]["unreserved_base"] == 100 * 1024 && r["version"].is_string(),
        r.dump());
  h.fails({{"cmd", "init"}, {"protocol", 1}, {"layer", "emu"}}, "invalid_argument");
  h.fails({{"cmd", "frobnicate"}}, "unknown_command");
  h.fails({{"cmd", 7}}, "bad_request");
  h.fails(json::object(), "bad_request");
}

void test_ids() {
  Harness h;
  auto code_and_id = [&](const std::string& line) {
    json r = h.send_line(line);
    return std::make_pair(r.value("id", uint64_t{99}), r.value("ok", true) ? std::string("ok") : r["error"].value("code", ""));
  };
  using P = std::pair<uint64_t, std::string>;
  CHECK((code_and_id("not json") == P{0, "bad_request"}), "garbage");
  CHECK((code_and_id("") == P{0, "bad_request"}), "empty line");
  CHECK((code_and_id("[1,2]") == P{0, "bad_request"}), "array");
  CHECK((code_and_id(R"({"cmd":"ping"})") == P{0, "bad_request"}), "no id");
  CHECK((code_and_id(R"({"id":0,"cmd":"ping"})") == P{0, "bad_request"}), "id 0");
  CHECK((code_and_id(R"({"id":-4,"cmd":"ping"})") == P{0, "bad_request"}), "negative id");
  CHECK((code_and_id(R"({"id":"4","cmd":"ping"})") == P{0, "bad_request"}), "string id");
  CHECK((code_and_id(R"({"id":4.5,"cmd":"ping"})") == P{0, "bad_request"}), "float id");
  CHECK((code_and_id(R"({"id":18446744073709551615,"cmd":"ping"})") == P{UINT64_MAX, "ok"}), "max id");
  CHECK((code_and_id(R"({"id":5})") == P{5, "bad_request"}), "no cmd");
  CHECK((code_and_id(R"({"id":6,"cmd":"ping"} trailing)") == P{0, "bad_request"}), "trailing bytes");
  CHECK((code_and_id("{\"id\":7,\"cmd\":\"\xff\xfe\"}") == P{0, "bad_request"}), "invalid UTF-8");
  CHECK((code_and_id(std::string(100000, '[') + std::string(100000, ']')) == P{0, "bad_request"}), "deep nesting");
  CHECK((code_and_id(R"({"id":8,"cmd":"ping","x":[[[[[[]]]]]]})") == P{8, "ok"}), "unknown fields are ignored");
  size_t before = h.replies.size();
  h.server->line_too_long(kMaxLineBytes + 1);
  CHECK(h.replies.size() == before + 1 && json::parse(h.replies.back())["error"]["code"] == "line_too_long" &&
            json::parse(h.replies.back())["id"] == 0,
        "line_too_long reply");
}

void test_buffers() {
  Harness h;
  h.init();
  h.fails({{"cmd", "alloc"}, {"size", 0}}, "invalid_argument");
  h.fails({{"cmd", "alloc"}, {"size", 64}, {"page_size", 0}}, "invalid_argument");
  h.fails({{"cmd", "alloc"}, {"size", 64}, {"page_size", uint64_t{1} << 32}}, "invalid_argument");
  h.fails({{"cmd", "alloc"}, {"size", uint64_t{1} << 33}, {"page_size", 1}}, "invalid_argument");
  h.fails({{"cmd", "alloc"}, {"size", uint64_t{13} << 30}}, "out_of_memory");
  h.fails({{"cmd", "alloc"}, {"size", -5}}, "bad_request");
  h.fails({{"cmd", "alloc"}, {"size", 1e3}}, "bad_request");
  h.fails({{"cmd", "alloc"}}, "bad_request");
  json a = h.ok({{"cmd", "alloc"}, {"size", 1000}, {"page_size", 64}});
  uint64_t buf = a["buffer"];
  CHECK(a["address"].is_number_unsigned(), a.dump());
  h.fails({{"cmd", "free"}, {"buffer", buf + 100}}, "unknown_buffer");
  h.fails({{"cmd", "free"}, {"buffer", "1"}}, "bad_request");

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
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"offset", 4}, {"segment", seg}, {"length", 997}}, "invalid_argument");
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"offset", UINT64_MAX}, {"segment", seg}, {"length", 2}}, "invalid_argument");
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", seg}, {"segment_offset", 4000}, {"length", 100}}, "shm_error");
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", seg}, {"segment_offset", UINT64_MAX}, {"length", 2}}, "shm_error");
  h.fails({{"cmd", "read"}, {"buffer", buf + 9}, {"segment", seg}, {"length", 2}}, "unknown_buffer");
  for (const char* bad : {"../etc/passwd", "a/b", "", ".", "..", "zyx-does-not-exist", "/etc/passwd"})
    h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", bad}, {"length", 1}}, "shm_error");
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", std::string(300, 'a')}, {"length", 1}}, "shm_error");
  h.fails({{"cmd", "write"}, {"buffer", buf}, {"segment", std::string("a\0b", 3)}, {"length", 1}}, "shm_error");
  symlink("/etc/passwd", (h.dir + "/link").c_str());
  h.fails({{"cmd", "map"}, {"segment", "link"}}, "shm_error");
  mkdir((h.dir + "/subdir").c_str(), 0700);
  h.fails({{"cmd", "map"}, {"segment", "subdir"}}, "shm_error");
  CHECK(h.state->writes == writes, "a failed write moved bytes");
  h.ok({{"cmd", "write"}, {"buffer", buf}, {"segment", seg}, {"segment_offset", 4099}, {"length", 0}});

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

void test_programs() {
  Harness h;
  h.init();
  json params = {{{"name", "a"}, {"kind", "global"}, {"dtype", "f32"}},
                 {{"name", "n"}, {"kind", "variable"}, {"dtype", "u32"}},
                 {{"name", "out"}, {"kind", "global_mut"}, {"dtype", "f32"}}};
  json rt = {{{"kind", "buffer_addr"}, {"param", 0}}, {{"kind", "param"}, {"param", 1}},
             {{"kind", "core_index"}},               {{"kind", "num_cores"}},
             {{"kind", "const"}, {"value", 77}},     {{"kind", "accessor"}, {"param", 2}},
             {{"kind", "buffer_pages"}, {"param", 2}}};
  json cbs = {{{"index", 0}, {"format", "Float32"}, {"page_bytes", 4096}, {"pages", 2}}};
  json good = program(params, section("reader", rt), section("compute"), section("writer"), cbs);
  good["compute_config"] = {{"math_fidelity", "HiFi2"}, {"fp32_dest_acc", true}};
  json c = h.ok(good);
  uint64_t prog = c["program"];
  CHECK(h.state->last_program.math_fidelity == "HiFi2" && h.state->last_program.fp32_dest_acc &&
            !h.state->last_program.math_approx_mode && h.state->last_program.cbs.size() == 1 &&
            h.state->last_program.cbs[0].pages == 2 && h.state->last_program.reader.runtime_args.size() == 7,
        "program reached the layer changed");

  // Compile checks.
  auto variant = [&](auto edit) {
    json p = good;
    edit(p);
    return p;
  };
  h.fails(variant([](json& p) { p.erase("reader"); }), "bad_request");
  h.fails(variant([](json& p) { p["reader"]["source_b64"] = "AAAA"; }), "bad_request");
  h.fails(variant([](json& p) { p["reader"].erase("source"); }), "bad_request");
  h.fails(variant([](json& p) { p["writer"] = {{"source_b64", "!!!"}}; }), "bad_request");
  h.fails(variant([](json& p) { p["params"][0]["kind"] = "texture"; }), "bad_request");
  h.fails(variant([](json& p) { p["reader"]["runtime_args"][0]["param"] = 1; }), "bad_request");
  h.fails(variant([](json& p) { p["reader"]["runtime_args"][1]["param"] = 0; }), "bad_request");
  h.fails(variant([](json& p) { p["reader"]["runtime_args"][1]["param"] = 9; }), "bad_request");
  h.fails(variant([](json& p) { p["reader"]["runtime_args"][4]["value"] = uint64_t{1} << 32; }), "bad_request");
  h.fails(variant([](json& p) { p["reader"]["runtime_args"][2]["kind"] = "core_z"; }), "bad_request");
  h.fails(variant([](json& p) { p["cbs"][0]["index"] = 32; }), "bad_request");
  h.fails(variant([](json& p) { p["cbs"][0]["format"] = "Bfp8"; }), "bad_request");
  h.fails(variant([](json& p) { p["cbs"][0]["pages"] = 0; }), "bad_request");
  h.fails(variant([](json& p) { p["cbs"].push_back(p["cbs"][0]); }), "bad_request");
  h.fails(variant([](json& p) { p["cbs"][0]["pages"] = 1000; }), "invalid_argument");
  h.fails(variant([](json& p) {
            p["cbs"] = json::array();
            for (int i = 0; i < 33; i++) p["cbs"].push_back({{"index", i % 32}, {"format", "UInt8"}, {"page_bytes", 32}, {"pages", 1}});
          }),
          "bad_request");
  h.fails(variant([](json& p) { p["compute_config"]["math_fidelity"] = "HiFi5"; }), "bad_request");
  h.fails(variant([](json& p) { p["compute_config"]["fp32_dest_acc"] = 1; }), "bad_request");
  h.fails(variant([](json& p) { p["compute"]["defines"] = {{"X", 1}}; }), "bad_request");

  // Compiler diagnostics come back intact, however they are quoted.
  json bad = variant([](json& p) { p["compute"]["source"] = "#error \"stop\"\n"; p["name"] = "q\"uo\\te\n"; });
  json r = h.req(bad);
  CHECK(!r.value("ok", true) && r["error"]["code"] == "compile_error" &&
            r["error"]["message"] == "kernel.cpp:1:2: error: #error \"stop\"\n\tin \"q\"uo\\te\n\"",
        r.dump());

  // base64 sources carry any byte.
  std::string raw("\x00\x01\xff\n\"\\", 6);
  h.ok(variant([](json& p) { p["reader"] = {{"source_b64", "AAH/CiJc"}}; }));
  CHECK(h.state->last_program.reader.source == raw, "base64 source decoded wrong");

  // Run checks.
  uint64_t a = h.ok({{"cmd", "alloc"}, {"size", 4096}})["buffer"];
  uint64_t o = h.ok({{"cmd", "alloc"}, {"size", 5000}, {"page_size", 1024}})["buffer"];
  json args = {{{"buffer", a}}, {{"value", 123}}, {{"buffer", o}}};
  json run = {{"cmd", "run"}, {"program", prog}, {"grid", {2, 3}}, {"args", args}, {"timed", true}};
  r = h.ok(run);
  CHECK(r["elapsed_ns"] == 1000, r.dump());
  json oinfo = h.state->last_runtime_words.size() == 8 ? json(h.state->last_runtime_words) : json();
  CHECK(h.state->last_runtime_words.size() == 8 && h.state->last_runtime_words[1] == 123 &&
            h.state->last_runtime_words[2] == 5 && h.state->last_runtime_words[3] == 6 &&
            h.state->last_runtime_words[4] == 77 && h.state->last_runtime_words[6] == 1024 &&
            h.state->last_runtime_words[7] == 5,
        "resolved words " << oinfo.dump());
  auto run_with = [&](auto edit) {
    json q = run;
    edit(q);
    return q;
  };
  for (json grid : {json{0, 1}, json{1, 0}, json{9, 1}, json{1, 9}})
    h.fails(run_with([&](json& q) { q["grid"] = grid; }), "invalid_argument");
  h.ok(run_with([&](json& q) { q["grid"] = {8, 8}; }));
  h.fails(run_with([&](json& q) { q["grid"] = {1}; }), "bad_request");
  h.fails(run_with([&](json& q) { q["grid"] = {1, -1}; }), "bad_request");
  h.fails(run_with([&](json& q) { q["grid"] = "1x1"; }), "bad_request");
  h.fails(run_with([&](json& q) { q["program"] = prog + 50; }), "unknown_program");
  h.fails(run_with([&](json& q) { q["args"].erase(2); }), "invalid_argument");
  h.fails(run_with([&](json& q) { q["args"][0] = {{"buffer", 999}}; }), "unknown_buffer");
  h.fails(run_with([&](json& q) { q["args"][0] = {{"value", 1}}; }), "bad_request");
  h.fails(run_with([&](json& q) { q["args"][1] = {{"buffer", a}}; }), "bad_request");
  h.fails(run_with([&](json& q) { q["args"][1] = {{"value", -1}}; }), "bad_request");

  // Values past 32 bits are refused, not truncated.
  uint64_t big = h.ok({{"cmd", "alloc"}, {"size", uint64_t{5} << 30}, {"page_size", 1 << 20}})["buffer"];
  json p2 = good;
  p2["reader"]["runtime_args"] = {{{"kind", "buffer_size"}, {"param", 0}}};
  uint64_t prog2 = h.ok(p2)["program"];
  h.fails({{"cmd", "run"}, {"program", prog2}, {"grid", {1, 1}}, {"args", {{{"buffer", big}}, {{"value", 1}}, {{"buffer", o}}}}},
          "invalid_argument");
  h.ok({{"cmd", "run"}, {"program", prog2}, {"grid", {1, 1}}, {"args", {{{"buffer", a}}, {{"value", 1}}, {{"buffer", o}}}}});

  json hang = variant([](json& p) { p["compute"]["source"] = "HANG"; });
  uint64_t prog3 = h.ok(hang)["program"];
  h.fails({{"cmd", "run"}, {"program", prog3}, {"grid", {1, 1}}, {"args", args}}, "deadlock");

  h.ok({{"cmd", "release"}, {"program", prog}});
  h.fails({{"cmd", "release"}, {"program", prog}}, "unknown_program");
  h.fails(run, "unknown_program");
  // EOF (no exit) releases the rest.
  h.server->shutdown();
  CHECK(h.state->live_programs == 0 && h.state->live_buffers == 0, "shutdown left programs/buffers");
}

// mutate returns a random damaged version of a valid request.
std::string mutate(const json& valid, std::mt19937_64& rng) {
  static const json odd_values[] = {nullptr, -1, 1.5, 1e300, "x", "", json::array(), json::object(), true,
                                    UINT64_MAX, 0, json::array({0, 0}), "../etc/passwd", std::string(40, 'z')};
  json v = valid;
  switch (rng() % 9) {
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
    default:
      break;  // unchanged: a valid request
  }
  return v.dump();
}

void test_random(uint64_t seed, int iterations) {
  Harness h;
  std::mt19937_64 rng(seed);
  h.segment("zyx-fuzz", std::vector<uint8_t>(8192, 1));
  json params = {{{"name", "a"}, {"kind", "global"}, {"dtype", "f32"}}, {{"name", "n"}, {"kind", "variable"}, {"dtype", "u32"}}};
  std::vector<json> valid = {
      {{"cmd", "init"}, {"protocol", 1}, {"layer", "emu"}},
      {{"cmd", "ping"}},
      {{"cmd", "alloc"}, {"size", 4096}, {"page_size", 1024}},
      {{"cmd", "free"}, {"buffer", 1}},
      {{"cmd", "write"}, {"buffer", 2}, {"offset", 1}, {"segment", "zyx-fuzz"}, {"segment_offset", 3}, {"length", 1000}},
      {{"cmd", "read"}, {"buffer", 3}, {"offset", 0}, {"segment", "zyx-fuzz"}, {"segment_offset", 0}, {"length", 4096}},
      {{"cmd", "map"}, {"segment", "zyx-fuzz"}},
      {{"cmd", "unmap"}, {"segment", "zyx-fuzz"}},
      program(params, section("r", {{{"kind", "buffer_addr"}, {"param", 0}}, {{"kind", "param"}, {"param", 1}}}),
              section("c"), section("w"), {{{"index", 3}, {"format", "UInt8"}, {"page_bytes", 64}, {"pages", 2}}}),
      {{"cmd", "run"}, {"program", 1}, {"grid", {2, 2}}, {"args", {{{"buffer", 2}}, {{"value", 5}}}}},
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
    codes[reply.value("ok", false) ? std::string("ok") : reply["error"].value("code", "?")]++;
    // A reply names the request's id whenever the line parsed with that id.
    try {
      json parsed = json::parse(line);
      if (parsed.is_object() && parsed.contains("id") && parsed["id"].is_number_unsigned() && parsed["id"] != 0)
        CHECK(reply.value("id", uint64_t{0}) == parsed["id"].get<uint64_t>(), "id not echoed for " << line);
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

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : static_cast<uint64_t>(std::time(nullptr));
  int iterations = argc > 2 ? std::atoi(argv[2]) : 20000;
  test_line_reader();
  test_handshake();
  test_ids();
  test_buffers();
  test_programs();
  test_random(seed, iterations);
  if (failures) {
    std::cerr << failures << " checks FAILED (seed " << seed << ")\n";
    return 1;
  }
  std::cerr << "all checks passed (seed " << seed << ")\n";
  return 0;
}
