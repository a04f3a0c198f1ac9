// zyx-tt-runtime: serves protocol v1 (docs/protocol.md) on stdin/stdout for
// one Tenstorrent chip, through tt-metal (metal layer) or the emulator.
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <string_view>

#include "line_reader.hpp"
#include "server.hpp"

namespace {

// write_line writes data and '\n' to fd; false when the reader is gone.
bool write_line(int fd, std::string_view data) {
  char nl = '\n';
  iovec iov[2] = {{const_cast<char*>(data.data()), data.size()}, {&nl, 1}};
  int n_iov = 2;
  iovec* v = iov;
  while (n_iov > 0) {
    ssize_t n = ::writev(fd, v, n_iov);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    size_t left = static_cast<size_t>(n);
    while (n_iov > 0 && left >= v->iov_len) {
      left -= v->iov_len;
      ++v;
      --n_iov;
    }
    if (n_iov > 0) {
      v->iov_base = static_cast<char*>(v->iov_base) + left;
      v->iov_len -= left;
    }
  }
  return true;
}

int usage(std::ostream& os, int code) {
  os << "usage: zyx-tt-runtime [--version]\n"
        "Serves the zyx tt-runtime protocol v" << zyx::kProtocolVersion
     << " on stdin/stdout (one JSON object per line).\n"
        "It is started by the zyx-tt Go driver; see docs/protocol.md and docs/runtime.md.\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    std::string_view a = argv[i];
    if (a == "--version") {
      std::cout << "zyx-tt-runtime " << ZYX_TT_RUNTIME_VERSION << " (protocol " << zyx::kProtocolVersion << ")\n";
      return 0;
    }
    if (a == "-h" || a == "--help") return usage(std::cout, 0);
    std::cerr << "zyx-tt-runtime: unknown argument " << a << "\n";
    return usage(std::cerr, 2);
  }

  std::signal(SIGPIPE, SIG_IGN);
  // Replies go to a private copy of stdout; fd 1 itself is pointed at stderr
  // so that nothing else in the process (tt-metal, printf in a library) can
  // put a stray line into the protocol stream.
  int proto_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (proto_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::cerr << "zyx-tt-runtime: cannot set up stdout: " << std::strerror(errno) << "\n";
    return 1;
  }

  bool reader_gone = false;
  zyx::Server server([&](std::string_view line) {
    if (!reader_gone && !write_line(proto_fd, line)) {
      reader_gone = true;
      std::cerr << "zyx-tt-runtime: cannot write a reply (" << std::strerror(errno) << "); stopping\n";
    }
  });
  zyx::LineReader reader(STDIN_FILENO);
  try {
    for (;;) {
      std::string_view line;
      uint64_t skipped = 0;
      auto st = reader.next(&line, &skipped);
      if (st == zyx::LineReader::Status::line) {
        if (!server.handle(line)) break;
      } else if (st == zyx::LineReader::Status::too_long) {
        server.line_too_long(skipped);
      } else {
        if (st == zyx::LineReader::Status::error)
          std::cerr << "zyx-tt-runtime: reading stdin: " << std::strerror(errno) << "\n";
        break;
      }
      if (reader_gone) break;
    }
  } catch (const std::exception& e) {
    std::cerr << "zyx-tt-runtime: " << e.what() << "\n";
  }
  server.shutdown();
  return 0;
}
