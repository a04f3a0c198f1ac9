// The request and stream faults of mock mode (mock.hpp).
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <thread>

#include "child_groups.hpp"
#include "mock.hpp"

extern char** environ;

namespace zyx::mock {

namespace {

// say writes one line of the mock's own to stderr, in one write.
void say(const std::string& what) {
  std::string line = "zyx-tt-runtime: mock: " + what + "\n";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

std::string at(uint64_t n) { return "request " + std::to_string(n); }

}  // namespace

Faults::Faults(Spec spec, int proto_fd, Server::Sink write_line)
    : spec_(std::move(spec)), proto_fd_(proto_fd), write_line_(std::move(write_line)) {}

void Faults::at_start() {
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  if (spec_.ignore_term) std::signal(SIGTERM, SIG_IGN);
  if (!spec_.stderr_line.empty()) {
    std::string line = spec_.stderr_line + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
}

void Faults::before_read() {
  if (spec_.flood == 0) return;
  static const std::string line = "UMD | info | flooding the protocol stream between requests " + std::string(60, '.');
  for (uint64_t n = 0; n < spec_.flood; n += line.size() + 1) write_line_(line);
}

void Faults::after_read(uint64_t n) {
  if (spec_.hold_at.count(n)) {
    say("holding " + at(n) + " until SIGUSR1");
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    int sig = 0;
    while (sigwait(&usr1, &sig) != 0) {
    }
    say("released " + at(n));
  }
  if (spec_.hang_at != 0 && n >= spec_.hang_at) hang(n, "hanging");
}

std::optional<Error> Faults::before_request(uint64_t n, const Prepared& p) {
  if (spec_.crash_at == n) {
    say("crashing on " + at(n) + " as asked");
    child_groups::kill_all(SIGKILL);
    ::_exit(3);
  }
  if (spec_.orphan_at == n) {
    orphan();
    say("exiting on " + at(n) + ", leaving a grandchild that holds stdout, as asked");
    child_groups::kill_all(SIGKILL);
    ::_exit(3);
  }
  if (spec_.close_stdout_at == n) {
    close_stdout();
    hang(n, "closed stdout");
  }
  if (spec_.error_at == n) return Error(spec_.error_code, "injected error on " + at(n));
  if (spec_.protocol != kProtocolVersion && !p.error && p.req.cmd == Cmd::Init) {
    uint64_t asked = std::get<InitRequest>(p.req.body).protocol;
    return Error("version_mismatch", version_mismatch_message(asked, static_cast<uint64_t>(spec_.protocol)));
  }
  return std::nullopt;
}

void Faults::hang(uint64_t n, const char* what) {
  say(std::string(what) + " on " + at(n) + " as asked; answering nothing from it on");
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

void Faults::orphan() {
  // The grandchild gets the protocol stream as its stdout and shares
  // stderr, so both stay open after this process has exited.
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, proto_fd_, STDOUT_FILENO);
  char sleep_cmd[] = "sleep", secs[] = "3";
  char* argv[] = {sleep_cmd, secs, nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "sleep", &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) say(std::string("cannot start the grandchild: ") + std::strerror(rc));
}

void Faults::close_stdout() {
  // The descriptor stays valid (on /dev/null) for the writes that may still
  // come; the pipe's last write end is gone, so the driver reads EOF.
  int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0 || ::dup3(null, proto_fd_, O_CLOEXEC) < 0) say(std::string("cannot close stdout: ") + std::strerror(errno));
  if (null >= 0) ::close(null);
}

bool Faults::on_reply(uint64_t n, const json& reply, const Server::Sink& sink) {
  if (spec_.slow.count() > 0) std::this_thread::sleep_for(spec_.slow);
  if (spec_.noise) sink("UMD | info | noise before the reply to " + at(n));
  uint64_t id = reply.value("id", uint64_t{0});
  if (spec_.wrong_id_at == n) {
    json wrong = reply;
    wrong["id"] = id + 1000;
    sink(wrong.dump(-1, ' ', false, json::error_handler_t::replace));
    return true;
  }
  if (spec_.garbage_at == n) {
    sink("{\"id\": " + std::to_string(id) + ", \"ok\": tru");
    return true;
  }
  if (spec_.oversize_at == n) {
    std::string line = "{\"id\":" + std::to_string(id) + ",\"ok\":true,\"pad\":\"";
    line.append(kMaxLineBytes + 16, 'x');
    line += "\"}";
    sink(line);
    return true;
  }
  return false;
}

}  // namespace zyx::mock
