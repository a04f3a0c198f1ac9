// The runtime's life as a process (docs/runtime.md, "Processes"): it dies
// with its parent, holds the chip lock it inherits, and kills the process
// groups of its helpers on every way out it controls.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace zyx::process {

// arm_parent_death sets PR_SET_PDEATHSIG(SIGKILL), so the kernel kills the
// runtime when the thread that started it ends. `before` is getppid() as
// the process read it before the prctl; `expected` is the parent the driver
// named (--parent-pid) or 0. Returns the parent to watch, or -1 with *err
// set when the parent is gone already (it died before the prctl could
// arm).
pid_t arm_parent_death(pid_t before, pid_t expected, std::string* err);

// claim_lock_fd checks that fd is an open regular file whose lock this
// process holds: flock(LOCK_EX|LOCK_NB) succeeds, as it does when the
// inherited open file description already holds it. It marks the fd
// close-on-exec, so helpers never inherit the lock. False with *err set
// otherwise.
bool claim_lock_fd(int fd, std::string* err);

// install_signal_handlers makes SIGTERM, SIGINT and SIGHUP kill the
// registered child groups (child_groups.hpp) before the default action, and
// ignores SIGPIPE.
void install_signal_handlers();

// die ends the process now: it kills the registered child groups, writes
// why to stderr and _exits with status 1. For when an orderly shutdown
// cannot finish (a kernel that spins).
[[noreturn]] void die(const char* why) noexcept;

// Watchdog checks every period that the parent is still `parent`, and,
// once stdin has reached its end, that somebody still reads the replies
// (reply_fd is not a pipe or socket whose reader has gone). Either failing
// calls die(): with no parent, or with no input and no reader, nobody can
// ever see the result of the work still running.
class Watchdog {
 public:
  Watchdog(pid_t parent, int reply_fd, std::chrono::milliseconds period = std::chrono::milliseconds(100));
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  // input_closed tells the watchdog that stdin reached its end; from the
  // next period on it also checks for a reader of the replies.
  void input_closed();

 private:
  void loop();
  pid_t parent_;
  int reply_fd_;
  std::chrono::milliseconds period_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, input_closed_ = false;
  std::thread thread_;
};

// reader_gone says whether fd is a pipe or socket whose reading end has
// closed.
bool reader_gone(int fd);

}  // namespace zyx::process
