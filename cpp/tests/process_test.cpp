// Drives the built zyx-tt-runtime binary over pipes: one reply per request
// under bad input (including a line over 64 MiB), the layer errors of this
// build, shm name checks and a buffer round trip when the emulator is in, and
// a clean exit 0 on `exit` and on EOF.
// Usage: zyx_process_test path/to/zyx-tt-runtime
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

using json = nlohmann::json;

namespace {

int failures = 0;

#define CHECK(cond, what)                                                                        \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      failures++;                                                                                \
      std::cerr << __FILE__ << ":" << __LINE__ << ": FAILED: " << #cond << " — " << what << "\n"; \
    }                                                                                            \
  } while (0)

class Runtime {
 public:
  explicit Runtime(const char* path) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      execl(path, path, static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~Runtime() {
    if (to_ >= 0) close(to_);
    if (from_ >= 0) close(from_);
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  void write_raw(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = write(to_, s.data() + off, s.size() - off);
      if (n <= 0) throw std::runtime_error("write to runtime failed");
      off += static_cast<size_t>(n);
    }
  }

  // read_line returns the next stdout line, or nullopt-like "" with eof set.
  bool read_line(std::string* line) {
    for (;;) {
      size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        *line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return true;
      }
      char tmp[65536];
      ssize_t n = read(from_, tmp, sizeof tmp);
      if (n <= 0) return false;
      buf_.append(tmp, static_cast<size_t>(n));
    }
  }

  json reply() {
    std::string line;
    if (!read_line(&line)) {
      CHECK(false, "runtime closed stdout while a reply was due");
      return json::object();
    }
    try {
      json r = json::parse(line);
      CHECK(r.is_object() && r.contains("id") && r.contains("ok"), "reply shape " << line);
      return r;
    } catch (const std::exception&) {
      CHECK(false, "stdout line is not JSON: " << line);
      return json::object();
    }
  }

  json call(const std::string& line) {
    write_raw(line + "\n");
    return reply();
  }

  json call(json req) {
    req["id"] = next_id_;
    json r = call(req.dump());
    CHECK(r.value("id", uint64_t{0}) == next_id_, "id " << r.value("id", uint64_t{0}) << " for " << next_id_);
    next_id_++;
    return r;
  }

  void close_stdin() {
    close(to_);
    to_ = -1;
  }

  // finish waits for exit and checks: status 0 and no further stdout lines.
  void finish() {
    std::string line;
    CHECK(!read_line(&line), "extra stdout line after the last reply: " << line);
    int status = 0;
    waitpid(pid_, &status, 0);
    waited_ = true;
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status " << status);
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  bool waited_ = false;
  std::string buf_;
  uint64_t next_id_ = 1;
};

std::string code_of(const json& r) {
  if (r.value("ok", false)) return "ok";
  if (!r.contains("error") || !r["error"].is_object()) return "?";
  return r["error"].value("code", "?");
}

void session_bad_input(const char* path) {
  Runtime rt(path);
  CHECK(code_of(rt.call(json{{"cmd", "ping"}})) == "ok", "ping");
  for (const char* garbage : {"", "}{", "null", "{\"id\":", "{\"id\":1,\"cmd\":\"ping\"}{", "\x01\x02\xff"}) {
    json r = rt.call(std::string(garbage));
    CHECK(code_of(r) == "bad_request" && r["id"] == 0, garbage << " → " << r.dump());
  }
  CHECK(code_of(rt.call(json{{"cmd", "nope"}})) == "unknown_command", "unknown command");
  CHECK(code_of(rt.call(json{{"cmd", "alloc"}, {"size", 8}})) == "not_initialized", "alloc before init");

  // A line past 64 MiB: one line_too_long reply with id 0, then service resumes.
  std::string huge = "{\"id\":99,\"cmd\":\"ping\",\"pad\":\"" + std::string((size_t{64} << 20), 'a') + "\"}\n";
  std::thread writer([&] { rt.write_raw(huge); });
  json r = rt.reply();
  writer.join();
  CHECK(code_of(r) == "line_too_long" && r["id"] == 0, r.dump());
  CHECK(code_of(rt.call(json{{"cmd", "ping"}})) == "ok", "ping after an oversized line");

  CHECK(code_of(rt.call(json{{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}})) == "version_mismatch", "protocol 2");
#ifndef ZYX_TEST_HAVE_METAL
  r = rt.call(json{{"cmd", "init"}, {"protocol", 1}, {"layer", "metal"}});
  CHECK(code_of(r) == "unsupported" && r["error"]["message"].get<std::string>().find("built without tt-metal") != std::string::npos,
        r.dump());
#endif
  r = rt.call(json{{"cmd", "init"}, {"protocol", 1}, {"layer", "emu"}, {"board", "n150"}, {"chip", 0}});
#ifdef ZYX_TEST_HAVE_EMU
  CHECK(code_of(r) == "ok" && r["runtime"] == "emu" && r["grid"]["rows"].get<uint64_t>() > 0, r.dump());
#else
  CHECK(code_of(r) == "unsupported" &&
            r["error"]["message"].get<std::string>().find("built without the emulator") != std::string::npos,
        r.dump());
#endif
  bool emu = code_of(r) == "ok";
  if (emu) {
    for (const char* bad : {"../etc/passwd", "zyx-no-such-segment-for-the-process-test", "", ".."})
      CHECK(code_of(rt.call(json{{"cmd", "map"}, {"segment", bad}})) == "shm_error", bad);
    // Round trip of random bytes at an odd size and offsets through /dev/shm.
    std::string seg = "zyx-process-test-" + std::to_string(getpid());
    std::mt19937_64 rng(getpid());
    std::vector<char> bytes(10007);
    for (auto& b : bytes) b = static_cast<char>(rng());
    std::ofstream("/dev/shm/" + seg, std::ios::binary).write(bytes.data(), static_cast<long>(bytes.size()));
    json a = rt.call(json{{"cmd", "alloc"}, {"size", 5003}, {"page_size", 1024}});
    CHECK(code_of(a) == "ok", a.dump());
    uint64_t buf = a.value("buffer", uint64_t{0});
    CHECK(code_of(rt.call(json{{"cmd", "write"}, {"buffer", buf}, {"offset", 7}, {"segment", seg}, {"segment_offset", 13}, {"length", 4001}})) == "ok", "write");
    CHECK(code_of(rt.call(json{{"cmd", "read"}, {"buffer", buf}, {"offset", 7}, {"segment", seg}, {"segment_offset", 6000}, {"length", 4001}})) == "ok", "read");
    std::ifstream in("/dev/shm/" + seg, std::ios::binary);
    std::vector<char> back((std::istreambuf_iterator<char>(in)), {});
    CHECK(back.size() == bytes.size() && std::equal(bytes.begin() + 13, bytes.begin() + 13 + 4001, back.begin() + 6000),
          "round trip through the process");
    CHECK(code_of(rt.call(json{{"cmd", "write"}, {"buffer", buf}, {"offset", 1003}, {"segment", seg}, {"length", 4001}})) == "invalid_argument", "past the buffer");
    CHECK(code_of(rt.call(json{{"cmd", "free"}, {"buffer", buf}})) == "ok", "free");
    CHECK(code_of(rt.call(json{{"cmd", "free"}, {"buffer", buf}})) == "unknown_buffer", "double free");
    CHECK(code_of(rt.call(json{{"cmd", "run"}, {"program", 42}, {"grid", {1, 1}}, {"args", json::array()}})) == "unknown_program", "run unknown");
    unlink(("/dev/shm/" + seg).c_str());
  } else {
    CHECK(code_of(rt.call(json{{"cmd", "map"}, {"segment", "../etc/passwd"}})) == "not_initialized", "map without a layer");
  }
  rt.close_stdin();  // EOF: release everything, exit 0, no reply
  rt.finish();
}

void session_exit(const char* path) {
  Runtime rt(path);
  json r = rt.call(json{{"cmd", "exit"}});
  CHECK(code_of(r) == "ok", r.dump());
  rt.finish();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: zyx_process_test path/to/zyx-tt-runtime\n";
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  try {
    session_bad_input(argv[1]);
    session_exit(argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "process test: " << e.what() << "\n";
    failures++;
  }
  if (failures) {
    std::cerr << failures << " checks FAILED\n";
    return 1;
  }
  std::cerr << "all checks passed\n";
  return 0;
}
