#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "child_groups.hpp"

namespace zyx::process {

pid_t arm_parent_death(pid_t before, pid_t expected, std::string* err) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    *err = std::string("prctl(PR_SET_PDEATHSIG): ") + std::strerror(errno);
    return -1;
  }
  pid_t now = ::getppid();
  pid_t want = expected > 0 ? expected : before;
  if (now != want) {
    *err = "the parent process " + std::to_string(want) + " is gone (the parent is now " + std::to_string(now) + ")";
    return -1;
  }
  return want;
}

bool claim_lock_fd(int fd, std::string* err) {
  std::string at = "--lock-fd " + std::to_string(fd);
  if (fd <= 2) {
    *err = at + ": fds 0-2 are the protocol's stdin, stdout and stderr";
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *err = at + ": not an open file descriptor (" + std::strerror(errno) + ")";
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *err = at + ": not a regular file";
    return false;
  }
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) {
      *err = at + ": the chip lock is held by another process (another runtime drives this chip)";
    } else {
      *err = at + ": flock: " + std::strerror(errno);
    }
    return false;
  }
  int flags = ::fcntl(fd, F_GETFD);
  if (flags < 0 || ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0) {
    *err = at + ": cannot set close-on-exec: " + std::strerror(errno);
    return false;
  }
  return true;
}

namespace {

void on_fatal_signal(int sig) {
  child_groups::kill_all(SIGKILL);
  // SA_RESETHAND restored the default action; the signal is blocked until
  // this handler returns, and then ends the process as it would have.
  ::raise(sig);
}

}  // namespace

void install_signal_handlers() {
  std::signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

void die(const char* why) noexcept {
  child_groups::kill_all(SIGKILL);
  const char prefix[] = "zyx-tt-runtime: ";
  const char suffix[] = "; exiting now\n";
  (void)!::write(STDERR_FILENO, prefix, sizeof prefix - 1);
  (void)!::write(STDERR_FILENO, why, std::strlen(why));
  (void)!::write(STDERR_FILENO, suffix, sizeof suffix - 1);
  ::_exit(1);
}

bool reader_gone(int fd) {
  pollfd p{fd, 0, 0};
  int n = ::poll(&p, 1, 0);
  return n == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

Watchdog::Watchdog(pid_t parent, int reply_fd, std::chrono::milliseconds period)
    : parent_(parent), reply_fd_(reply_fd), period_(period), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::input_closed() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    input_closed_ = true;
  }
  cv_.notify_all();
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_) {
    // Checked once a period, and never at the moment input ends: an idle
    // runtime gets that long to finish its orderly exit first.
    cv_.wait_for(lk, period_, [&] { return stop_; });
    if (stop_) break;
    if (parent_ > 0 && ::getppid() != parent_) die("the parent process is gone");
    if (input_closed_ && reader_gone(reply_fd_)) die("stdin is closed and nobody reads the replies");
  }
}

}  // namespace zyx::process
