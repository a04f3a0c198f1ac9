// zyx_ping_bench: the ping round trip through zyx-tt-runtime against a plain
// echo process over the same kind of pipes, one request at a time, as the Go
// driver sends them. Usage: zyx_ping_bench path/to/zyx-tt-runtime [pings] [rounds]
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Child {
  pid_t pid = -1;
  int to = -1, from = -1;
};

// start runs `path` (or, with path null, an echo loop) on fresh pipes.
Child start(const char* path) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) std::exit(1);
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    if (path) {
      execl(path, path, static_cast<char*>(nullptr));
      _exit(127);
    }
    // Echo: each line back as it is. It must not hold the runtime's pipes
    // (inherited from this process), or the runtime never sees its input end.
    for (int fd = 3; fd < 1024; fd++) close(fd);
    std::vector<char> buf(1 << 16);
    for (;;) {
      ssize_t n = read(0, buf.data(), buf.size());
      if (n <= 0) _exit(0);
      for (ssize_t off = 0; off < n;) {
        ssize_t w = write(1, buf.data() + off, static_cast<size_t>(n - off));
        if (w <= 0) _exit(1);
        off += w;
      }
    }
  }
  close(in[0]);
  close(out[1]);
  c.to = in[1];
  c.from = out[0];
  return c;
}

void stop(Child& c) {
  close(c.to);
  close(c.from);
  waitpid(c.pid, nullptr, 0);
}

// round_trips returns the mean seconds per request over n pings.
double round_trips(Child& c, int n) {
  char buf[4096];
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 1; i <= n; i++) {
    std::string line = "{\"id\":" + std::to_string(i) + ",\"cmd\":\"ping\"}\n";
    if (write(c.to, line.data(), line.size()) != static_cast<ssize_t>(line.size())) std::exit(1);
    // One reply line.
    for (;;) {
      ssize_t r = read(c.from, buf, sizeof buf);
      if (r <= 0) std::exit(1);
      if (buf[r - 1] == '\n') break;
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: zyx_ping_bench path/to/zyx-tt-runtime [pings] [rounds]\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  int n = argc > 2 ? std::atoi(argv[2]) : 20000;
  int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  for (int r = 0; r < rounds; r++) {
    Child rt = start(argv[1]);
    Child echo = start(nullptr);
    round_trips(rt, 200);  // warm up
    round_trips(echo, 200);
    double a = round_trips(rt, n);
    double b = round_trips(echo, n);
    std::printf("round %d: runtime %.2f us/ping, echo %.2f us/line, ratio %.2fx\n", r + 1, a * 1e6, b * 1e6, a / b);
    std::fflush(stdout);
    stop(echo);
    stop(rt);
  }
  return 0;
}
