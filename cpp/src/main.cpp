// zyx-tt-runtime: serves protocol v2 (docs/protocol.md) on stdin/stdout for
// one Tenstorrent chip, through tt-metal (metal layer) or the emulator.
// Process behaviour (parent death, chip lock, signals): docs/runtime.md.
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "child_groups.hpp"
#include "line_reader.hpp"
#include "mock.hpp"
#include "pipeline.hpp"
#include "process.hpp"
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
  os << "usage: zyx-tt-runtime [--lock-fd N] [--parent-pid PID] [--mock SPEC]... [--version]\n"
        "Serves the zyx tt-runtime protocol v"
     << zyx::kProtocolVersion
     << " on stdin/stdout (one JSON object per line).\n"
        "  --lock-fd N       an inherited, flock-ed chip lock file to hold for the process lifetime\n"
        "  --parent-pid PID  the process that started the runtime; exit at once if it is gone\n"
        "  --mock SPEC       mock mode: serve through the emulator and inject the faults SPEC names\n"
     << zyx::mock::help()
     << "It is started by the zyx-tt Go driver; see docs/protocol.md and docs/runtime.md.\n";
  return code;
}

std::optional<long> number(std::string_view s) {
  long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  // The parent as seen before anything else: if it differs after the
  // parent-death signal is armed, the parent died in between.
  pid_t parent_before = ::getppid();
  long lock_fd = -1, parent_pid = 0;
  // Mock mode: ZYX_TT_MOCK, then every --mock, in order.
  std::optional<zyx::mock::Spec> mock;
  try {
    if (const char* env = std::getenv(zyx::mock::kEnvVar); env && *env) zyx::mock::parse_into(env, &mock.emplace());
  } catch (const std::invalid_argument& e) {
    std::cerr << "zyx-tt-runtime: " << zyx::mock::kEnvVar << ": " << e.what() << "\n";
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    std::string_view a = argv[i];
    if (a == "--version") {
      std::cout << "zyx-tt-runtime " << ZYX_TT_RUNTIME_VERSION << " (protocol " << zyx::kProtocolVersion << ")\n";
      return 0;
    }
    if (a == "-h" || a == "--help") return usage(std::cout, 0);
    if ((a == "--lock-fd" || a == "--parent-pid") && i + 1 < argc) {
      auto v = number(argv[++i]);
      if (!v || *v > INT32_MAX) {
        std::cerr << "zyx-tt-runtime: " << a << " needs a non-negative integer, got \"" << argv[i] << "\"\n";
        return usage(std::cerr, 2);
      }
      (a == "--lock-fd" ? lock_fd : parent_pid) = *v;
      continue;
    }
    if (a == "--mock" && i + 1 < argc) {
      try {
        zyx::mock::parse_into(argv[++i], mock ? &*mock : &mock.emplace());
      } catch (const std::invalid_argument& e) {
        std::cerr << "zyx-tt-runtime: --mock: " << e.what() << "\n";
        return 2;
      }
      continue;
    }
    std::cerr << "zyx-tt-runtime: unknown argument " << a << "\n";
    return usage(std::cerr, 2);
  }

  std::string err;
  pid_t parent = zyx::process::arm_parent_death(parent_before, static_cast<pid_t>(parent_pid), &err);
  if (parent < 0) {
    std::cerr << "zyx-tt-runtime: " << err << "; exiting\n";
    return 1;
  }
  if (lock_fd >= 0 && !zyx::process::claim_lock_fd(static_cast<int>(lock_fd), &err)) {
    std::cerr << "zyx-tt-runtime: " << err << "\n";
    return 3;
  }
  zyx::process::install_signal_handlers();

  // Replies go to a private copy of stdout; fd 1 itself is pointed at stderr
  // so that nothing else in the process (tt-metal, printf in a library) can
  // put a stray line into the protocol stream.
  int proto_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (proto_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::cerr << "zyx-tt-runtime: cannot set up stdout: " << std::strerror(errno) << "\n";
    return 1;
  }

  zyx::Pipeline* pipeline = nullptr;
  std::atomic<bool> reader_gone{false};
  // Replies are written by one thread at a time; mock mode's floods come
  // from the reading thread as well.
  std::mutex out_mu;
  zyx::Server::Sink sink = [&](std::string_view line) {
    std::lock_guard<std::mutex> lk(out_mu);
    if (reader_gone) return;
    if (!write_line(proto_fd, line)) {
      reader_gone = true;
      std::cerr << "zyx-tt-runtime: cannot write a reply (" << std::strerror(errno) << "); stopping\n";
      if (pipeline) pipeline->stop();
    }
  };
  std::unique_ptr<zyx::mock::Faults> faults;
  zyx::LayerFactory factory = zyx::open_layer;
  if (mock) {
    faults = std::make_unique<zyx::mock::Faults>(*mock, proto_fd, sink);
    faults->at_start();  // before the first thread
    factory = zyx::mock::layer_factory(*mock, zyx::open_layer);
  }

  zyx::process::Watchdog watchdog(parent, proto_fd);
  zyx::Server server(sink, factory);
  if (faults) server.set_mock(faults.get());
  zyx::LineReader reader(STDIN_FILENO);
  zyx::Pipeline pipe(server);
  pipeline = &pipe;
  if (faults)
    pipe.set_reader_hooks({[&] { faults->before_read(); }, [&](uint64_t n) { faults->after_read(n); }});
  try {
    pipe.serve(reader, [&] { watchdog.input_closed(); });
  } catch (const std::exception& e) {
    std::cerr << "zyx-tt-runtime: " << e.what() << "\n";
    server.shutdown();
  }
  zyx::child_groups::kill_all(SIGKILL);
  return 0;
}
