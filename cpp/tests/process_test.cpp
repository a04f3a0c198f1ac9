// Drives the built zyx-tt-runtime binary over pipes: one reply per request
// under bad input (including a line over 64 MiB and a NUL byte), pipelined
// requests answered in order, the layer errors of this build, shm checks and
// a buffer round trip when the emulator is in, a clean exit 0 on `exit` and
// on EOF; and the process rules of docs/runtime.md: the runtime dies with its
// parent (PR_SET_PDEATHSIG, --parent-pid) and when its input and its reader
// are gone during a hung kernel (the watchdog), and it holds the chip lock it
// inherits (--lock-fd).
// Usage: zyx_process_test path/to/zyx-tt-runtime
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.hpp"

using json = nlohmann::json;
using zyx::test::failures;
using zyx::test::code_of;
using zyx::test::message_of;

namespace {

const char* g_path = nullptr;

std::string private_dir() {
  char tmpl[] = "/tmp/zyx-process-test-XXXXXX";
  const char* d = mkdtemp(tmpl);
  if (!d) throw std::runtime_error("mkdtemp");
  return d;
}

// exec_runtime execs the runtime with stdin/stdout from the given fds, in a
// child that was just forked.
[[noreturn]] void exec_runtime(int in, int out, const std::vector<std::string>& args) {
  dup2(in, 0);
  dup2(out, 1);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(g_path));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(g_path, argv.data());
  _exit(127);
}

class Runtime {
 public:
  explicit Runtime(std::vector<std::string> args = {}, int keep_fd = -1) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      if (keep_fd >= 0) fcntl(keep_fd, F_SETFD, 0);  // inherited across exec
      exec_runtime(in[0], out[1], args);
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
  pid_t pid() const { return pid_; }

  void write_raw(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = write(to_, s.data() + off, s.size() - off);
      if (n <= 0) throw std::runtime_error("write to runtime failed");
      off += static_cast<size_t>(n);
    }
  }

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

  // finish waits for exit and checks: status `code` and no further stdout lines.
  void finish(int code = 0) {
    std::string line;
    CHECK(!read_line(&line), "extra stdout line after the last reply: " << line);
    int status = 0;
    waitpid(pid_, &status, 0);
    waited_ = true;
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == code, "exit status " << status << ", wanted exit " << code);
  }

  // exit_status waits for the process without reading stdout.
  int exit_status() {
    int status = 0;
    waitpid(pid_, &status, 0);
    waited_ = true;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  bool waited_ = false;
  std::string buf_;
  uint64_t next_id_ = 1;
};

json init_request(const std::string& cache) {
  return {{"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"board", "n150"}, {"chip", 0}, {"cache_dir", cache}};
}

void session_bad_input() {
  std::string cache = private_dir();
  Runtime rt;
  CHECK(code_of(rt.call(json{{"cmd", "ping"}})) == "ok", "ping");
  for (const char* garbage : {"", "}{", "null", "{\"id\":", "{\"id\":1,\"cmd\":\"ping\"}{", "\x01\x02\xff"}) {
    json r = rt.call(std::string(garbage));
    CHECK(code_of(r) == "bad_request" && r["id"] == 0, garbage << " → " << r.dump());
  }
  {
    json r = rt.call(std::string("{\"id\":5,\"cmd\":\"ping\"}\0garbage", 29));
    CHECK(code_of(r) == "bad_request" && r["id"] == 0, "NUL and garbage → " << r.dump());
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

  // Pipelined: many requests in one write, answered in order.
  {
    std::string batch;
    for (int i = 0; i < 200; i++) batch += json{{"id", 1000 + i}, {"cmd", i % 7 ? "ping" : "nope"}}.dump() + "\n";
    rt.write_raw(batch);
    bool in_order = true;
    for (int i = 0; i < 200; i++) {
      json x = rt.reply();
      in_order = in_order && x.value("id", 0) == 1000 + i && code_of(x) == (i % 7 ? "ok" : "unknown_command");
    }
    CHECK(in_order, "200 pipelined requests answered in order");
  }

  r = rt.call(json{{"cmd", "init"}, {"protocol", 1}, {"layer", "emu"}});
  CHECK(code_of(r) == "version_mismatch" && message_of(r).find("rebuild") != std::string::npos, r.dump());
#ifndef ZYX_TEST_HAVE_METAL
  r = rt.call(json{{"cmd", "init"}, {"protocol", 2}, {"layer", "metal"}, {"cache_dir", cache}});
  CHECK(code_of(r) == "unsupported" && message_of(r).find("built without tt-metal") != std::string::npos, r.dump());
#endif
  r = rt.call(init_request(cache));
#ifdef ZYX_TEST_HAVE_EMU
  CHECK(code_of(r) == "ok" && r["runtime"] == "emu" && r["grid"]["rows"].get<uint64_t>() > 0 && r["protocol"] == 2 &&
            r["noc"]["worker_x"].size() == r["grid"]["cols"].get<size_t>() && r["l1"]["banks"].get<uint64_t>() > 0 &&
            r["semaphores"].get<uint64_t>() > 0,
        r.dump());
#else
  CHECK(code_of(r) == "unsupported" && message_of(r).find("built without the emulator") != std::string::npos, r.dump());
#endif
  bool emu = code_of(r) == "ok";
  if (emu) {
    for (const char* bad : {"../etc/passwd", "zyx-no-such-segment-for-the-process-test", "", ".."})
      CHECK(code_of(rt.call(json{{"cmd", "map"}, {"segment", bad}})) == "shm_error", bad);
    // Round trip of random bytes at an odd size and offsets through /dev/shm.
    std::string seg = "zyx-process-test-" + std::to_string(getpid());
    std::string path = "/dev/shm/" + seg;
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    CHECK(fd >= 0, "create " << path);
    std::mt19937_64 rng(getpid());
    std::vector<char> bytes(10007);
    for (auto& b : bytes) b = static_cast<char>(rng());
    CHECK(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()), "write segment");
    json a = rt.call(json{{"cmd", "alloc"}, {"size", 5003}, {"page_size", 1024}});
    CHECK(code_of(a) == "ok", a.dump());
    uint64_t buf = a.value("buffer", uint64_t{0});
    CHECK(code_of(rt.call(json{{"cmd", "write"}, {"buffer", buf}, {"offset", 7}, {"segment", seg}, {"segment_offset", 13}, {"length", 4001}})) == "ok", "write");
    CHECK(code_of(rt.call(json{{"cmd", "read"}, {"buffer", buf}, {"offset", 7}, {"segment", seg}, {"segment_offset", 6000}, {"length", 4001}})) == "ok", "read");
    std::vector<char> back(bytes.size());
    CHECK(pread(fd, back.data(), back.size(), 0) == static_cast<ssize_t>(back.size()) &&
              std::equal(bytes.begin() + 13, bytes.begin() + 13 + 4001, back.begin() + 6000),
          "round trip through the process");
    // Shrunk after map: shm_error, not SIGBUS, and the runtime stays usable.
    CHECK(ftruncate(fd, 512) == 0, "truncate");
    r = rt.call(json{{"cmd", "read"}, {"buffer", buf}, {"segment", seg}, {"segment_offset", 4096}, {"length", 4001}});
    CHECK(code_of(r) == "shm_error" && message_of(r).find("shrank") != std::string::npos, r.dump());
    CHECK(code_of(rt.call(json{{"cmd", "ping"}})) == "ok", "ping after a shrunk segment");
    CHECK(code_of(rt.call(json{{"cmd", "read"}, {"buffer", buf}, {"segment", seg}, {"length", 512}})) == "ok", "read within");
    CHECK(code_of(rt.call(json{{"cmd", "write"}, {"buffer", buf}, {"offset", 1003}, {"segment", seg}, {"length", 4001}})) == "invalid_argument", "past the buffer");
    CHECK(code_of(rt.call(json{{"cmd", "free"}, {"buffer", buf}})) == "ok", "free");
    CHECK(code_of(rt.call(json{{"cmd", "free"}, {"buffer", buf}})) == "unknown_buffer", "double free");
    CHECK(code_of(rt.call(json{{"cmd", "run"}, {"program", 42}, {"args", json::array()}})) == "unknown_program", "run unknown");
    close(fd);
    unlink(path.c_str());
  } else {
    CHECK(code_of(rt.call(json{{"cmd", "map"}, {"segment", "../etc/passwd"}})) == "not_initialized", "map without a layer");
  }
  rt.close_stdin();  // EOF: release everything, exit 0, no reply
  rt.finish();
  std::filesystem::remove_all(cache);
}

void session_exit() {
  Runtime rt;
  json r = rt.call(json{{"cmd", "exit"}});
  CHECK(code_of(r) == "ok", r.dump());
  rt.finish();
}

// ---- parent death ------------------------------------------------------------

bool wait_gone(pid_t pid, int ms, int* status) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid) return true;
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// A program whose reader kernel spins for ever, for the hung-kernel cases.
[[maybe_unused]] json spinning_program() {
  return {{"cmd", "compile"},
          {"name", "spin"},
          {"kernels",
           {{{"name", "spin"},
             {"processor", "riscv_0"},
             {"cores", {{0, 0, 0, 0}}},
             {"source", "void kernel_main() { volatile unsigned x = 0; for (;;) { x = x + 1; } }"}}}}};
}

// hang_a_kernel sends init, compile and run of the spinning program, and
// returns once the compile has answered (the run is then running). False
// without the emulator.
bool hang_a_kernel(int to, int from, const std::string& cache) {
#ifdef ZYX_TEST_HAVE_EMU
  std::string lines = [&] {
    json i = init_request(cache);
    i["id"] = 1;
    json c = spinning_program();
    c["id"] = 2;
    return i.dump() + "\n" + c.dump() + "\n";
  }();
  if (write(to, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size())) return false;
  std::string got;
  char buf[4096];
  int nl = 0;
  while (nl < 2) {
    ssize_t n = read(from, buf, sizeof buf);
    if (n <= 0) return false;
    for (ssize_t i = 0; i < n; i++) nl += buf[i] == '\n';
    got.append(buf, static_cast<size_t>(n));
  }
  CHECK(got.find("\"ok\":false") == std::string::npos, "init/compile of the spinning kernel: " << got);
  std::string run = json{{"id", 3}, {"cmd", "run"}, {"program", 1}, {"args", json::array()}}.dump() + "\n";
  if (write(to, run.data(), run.size()) != static_cast<ssize_t>(run.size())) return false;
  // The run spins: no reply within 300 ms.
  pollfd pfd{from, POLLIN, 0};
  if (poll(&pfd, 1, 300) != 0) {
    CHECK(false, "the spinning kernel's run answered");
    return false;
  }
  return true;
#else
  (void)to;
  (void)from;
  (void)cache;
  return false;
#endif
}

// The parent (a helper process standing in for zyx-tt) is SIGKILLed while
// the runtime runs a kernel that spins: PR_SET_PDEATHSIG kills the runtime.
// Before, the runtime was re-parented to init and spun for ever.
void session_parent_killed() {
  std::string cache = private_dir();
  prctl(PR_SET_CHILD_SUBREAPER, 1);  // orphans come to us, so we can reap and time them
  // The pipes are made here and stay open here, so the helper's death
  // closes neither end: only the parent-death signal can end the runtime.
  int in[2], out[2], report[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(report, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe");
  pid_t helper = fork();
  if (helper == 0) {
    // As the driver does: name the parent, so a runtime that arms its
    // parent-death signal only after the helper died still notices.
    std::string me = std::to_string(getpid());
    pid_t rt = fork();
    if (rt == 0) exec_runtime(in[0], out[1], {"--parent-pid", me});
    // The runtime is up (and armed) once it answers.
    std::string ping = json{{"id", 9}, {"cmd", "ping"}}.dump() + "\n";
    char buf[256];
    if (write(in[1], ping.data(), ping.size()) != static_cast<ssize_t>(ping.size()) || read(out[0], buf, sizeof buf) <= 0)
      _exit(1);
    bool hung = hang_a_kernel(in[1], out[0], cache);
    char msg[32];
    int n = snprintf(msg, sizeof msg, "%d %d\n", static_cast<int>(rt), hung ? 1 : 0);
    (void)!write(report[1], msg, static_cast<size_t>(n));
    for (;;) pause();
  }
  close(report[1]);
  char msg[64] = {0};
  ssize_t n = read(report[0], msg, sizeof msg - 1);
  close(report[0]);
  int rt = 0, hung = 0;
  CHECK(n > 0 && sscanf(msg, "%d %d", &rt, &hung) == 2, "the helper reported the runtime");
  if (rt > 0) {
    if (!hung) std::cerr << "parent death: no emulator in this build, so the runtime is idle, not in a hung kernel\n";
    CHECK(kill(rt, 0) == 0, "the runtime is running before its parent dies");
    auto t0 = std::chrono::steady_clock::now();
    kill(helper, SIGKILL);
    waitpid(helper, nullptr, 0);
    int status = 0;
    bool gone = wait_gone(rt, 2000, &status);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(gone, "the runtime outlived its parent by 2 s");
    if (!gone) {
      kill(rt, SIGKILL);
      waitpid(rt, nullptr, 0);
    } else {
      CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "killed by its parent-death signal, status " << status);
      std::cerr << "parent death: the runtime" << (hung ? " (in a spinning kernel)" : "") << " was gone " << ms
                << " ms after its parent\n";
    }
  } else {
    kill(helper, SIGKILL);
    waitpid(helper, nullptr, 0);
  }
  for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
  std::filesystem::remove_all(cache);
}

// The runtime's parent stays alive, but whoever held its pipes (zyx-tt,
// when something else started the runtime) dies during a hung kernel: stdin
// ends and nobody reads stdout, so the watchdog ends the runtime.
void session_pipes_closed() {
  std::string cache = private_dir();
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  pid_t keeper = fork();
  if (keeper == 0) {
    pid_t rt = fork();
    if (rt == 0) exec_runtime(in[0], out[1], {});
    close(in[0]);
    close(out[1]);
    close(in[1]);
    close(out[0]);
    int status = 0;
    waitpid(rt, &status, 0);
    char msg[32];
    int n = snprintf(msg, sizeof msg, "%d\n", status);
    (void)!write(report[1], msg, static_cast<size_t>(n));
    _exit(0);
  }
  close(in[0]);
  close(out[1]);
  close(report[1]);
  bool hung = hang_a_kernel(in[1], out[0], cache);
  if (!hung) std::cerr << "pipes closed: no emulator in this build, so the runtime is idle, not in a hung kernel\n";
  auto t0 = std::chrono::steady_clock::now();
  close(in[1]);
  close(out[0]);
  // The keeper reports the runtime's status once it is gone.
  pollfd pfd{report[0], POLLIN, 0};
  int ready = poll(&pfd, 1, 3000);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(ready == 1, "the runtime outlived its pipes by 3 s");
  char msg[32] = {0};
  if (ready == 1) {
    CHECK(read(report[0], msg, sizeof msg - 1) > 0, "status");
    int status = atoi(msg);
    if (hung)
      CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "the watchdog exits 1, status " << status);
    else
      CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "an idle runtime exits 0 at EOF, status " << status);
    std::cerr << "pipes closed: the runtime" << (hung ? " (in a spinning kernel)" : "") << " was gone " << ms << " ms later\n";
  } else {
    kill(keeper, SIGKILL);
  }
  close(report[0]);
  waitpid(keeper, nullptr, 0);
  std::filesystem::remove_all(cache);
}

void session_parent_pid() {
  // A --parent-pid that is not the parent: the parent "died" before the
  // runtime could arm its parent-death signal.
  {
    Runtime rt({"--parent-pid", "1"});
    rt.close_stdin();
    int status = rt.exit_status();
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "--parent-pid 1: status " << status);
  }
  {
    Runtime rt({"--parent-pid", std::to_string(getpid())});
    CHECK(code_of(rt.call(json{{"cmd", "ping"}})) == "ok", "--parent-pid of the real parent");
    rt.close_stdin();
    rt.finish();
  }
  for (const char* bad : {"x", "-3", "99999999999"}) {
    Runtime rt({"--parent-pid", bad});
    int status = rt.exit_status();
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 2, "--parent-pid " << bad << ": status " << status);
  }
}

// ---- the chip lock -------------------------------------------------------------

bool fd_is_cloexec_in(pid_t pid, int fd) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(fd));
  std::string key;
  std::string flags;
  while (in >> key) {
    if (key == "flags:") {
      in >> flags;
      return (std::stoul(flags, nullptr, 8) & O_CLOEXEC) != 0;
    }
  }
  return false;
}

void session_lock_fd() {
  std::string dir = private_dir();
  std::string lock = dir + "/chip0.lock";
  int a = open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  CHECK(a >= 0 && flock(a, LOCK_EX | LOCK_NB) == 0, "the driver's lock");
  {
    Runtime rt({"--lock-fd", std::to_string(a)}, a);
    CHECK(code_of(rt.call(json{{"cmd", "ping"}})) == "ok", "a runtime on the inherited lock");
    CHECK(fd_is_cloexec_in(rt.pid(), a), "the lock fd is close-on-exec in the runtime");
    close(a);  // the driver is gone: the runtime's description still holds the lock
    int b = open(lock.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    CHECK(b >= 0 && flock(b, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK, "the chip stays locked by the runtime");
    {
      Runtime second({"--lock-fd", std::to_string(b)}, b);
      std::string line;
      int status = second.exit_status();
      CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3, "a second runtime on the chip: status " << status);
    }
    rt.call(json{{"cmd", "exit"}});
    rt.finish();
    CHECK(flock(b, LOCK_EX | LOCK_NB) == 0, "the lock is free once the runtime exits");
    close(b);
  }
  int p[2];
  CHECK(pipe(p) == 0, "pipe");
  int d = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (auto [fd, why] : {std::pair<int, const char*>{99, "not open"}, {p[0], "a pipe"}, {d, "a directory"}, {1, "stdout"}}) {
    Runtime rt({"--lock-fd", std::to_string(fd)}, fd > 2 ? fd : -1);
    int status = rt.exit_status();
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3, "--lock-fd " << why << ": status " << status);
  }
  close(p[0]);
  close(p[1]);
  close(d);
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: zyx_process_test path/to/zyx-tt-runtime\n";
    return 2;
  }
  g_path = argv[1];
  signal(SIGPIPE, SIG_IGN);
  try {
    session_bad_input();
    session_exit();
    session_parent_pid();
    session_lock_fd();
    session_parent_killed();
    session_pipes_closed();
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
