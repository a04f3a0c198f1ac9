// Calls that would end the process: a kernel that calls abort, exit, _exit,
// _Exit or quick_exit, fails a C assert, ends in std::terminate or has the
// C library raise SIGABRT for it stops with a run_error naming the core,
// the kernel, its processor and the call, and the same layer then runs a
// good program. Outside a kernel, abort and std::terminate still end the
// process.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>

#include "harness.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

// A tile pipeline on each core of a row: the reader brings the core's tile
// from DRAM into cb 0, the compute kernel copies it through DST into cb 16,
// the writer puts it back. "@TOP@" and "@STOP@" mark where a case adds
// file-scope code and the statement that core (0,1) runs.
const char* kReader = R"(#include <cassert>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <signal.h>
#include <unistd.h>
@TOP@
void kernel_main() {
  uint32_t src = get_arg_val<uint32_t>(0), col = get_arg_val<uint32_t>(1);
  if (col == 1) {
@STOP@
  }
  cb_reserve_back(0, 1);
  noc_async_read(get_noc_addr_from_bank_id<true>(0, src + 4096 * col), get_write_ptr(0), 4096);
  noc_async_read_barrier();
  cb_push_back(0, 1);
}
)";

const char* kCompute = R"(#include <cassert>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <signal.h>
#include <unistd.h>
#include "api/compute/common_globals.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/pack.h"
@TOP@
void kernel_main() {
  uint32_t col = get_arg_val<uint32_t>(0);
  if (col == 1) {
@STOP@
  }
  init_sfpu(0, 16);
  cb_wait_front(0, 1);
  tile_regs_acquire();
  copy_tile(0, 0, 0);
  tile_regs_commit();
  tile_regs_wait();
  cb_reserve_back(16, 1);
  pack_tile(0, 16);
  cb_push_back(16, 1);
  tile_regs_release();
  cb_pop_front(0, 1);
}
)";

const char* kWriter = R"(
void kernel_main() {
  uint32_t dst = get_arg_val<uint32_t>(0), col = get_arg_val<uint32_t>(1);
  cb_wait_front(16, 1);
  noc_async_write(get_read_ptr(16), get_noc_addr_from_bank_id<true>(0, dst + 4096 * col), 4096);
  noc_async_write_barrier();
  cb_pop_front(16, 1);
}
)";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
  return s;
}

// The kernel source with a case's code; *stop_line (if given) becomes the
// line its statement is on.
std::string with_case(const char* base, const std::string& top, const std::string& stop,
                      uint32_t* stop_line = nullptr) {
  std::string s = replace_all(base, "@TOP@", top);
  size_t at = s.find("@STOP@");
  if (stop_line)
    *stop_line = 1 + static_cast<uint32_t>(std::count(s.begin(), s.begin() + static_cast<long>(at), '\n'));
  return replace_all(s, "@STOP@", stop);
}

GroupProgram pipeline() {
  GroupProgram p;
  p.name = "exits";
  p.params = {P("src", "global", "f32"), P("dst", "global_mut", "f32")};
  p.reader.source = with_case(kReader, "", "");
  p.reader.runtime_args = {L("buffer_addr", 0), L("core_col")};
  p.compute.source = with_case(kCompute, "", "");
  p.compute.runtime_args = {L("core_col")};
  p.writer.source = kWriter;
  p.writer.runtime_args = {L("buffer_addr", 1), L("core_col")};
  p.cbs = {CB(0, "Float32", 4096, 2), CB(16, "Float32", 4096, 2)};
  p.fp32_dest_acc = true;  // DST keeps f32: the copy is exact
  return p;
}

// The pipeline on a 1x2 row moves each core's tile; checks the output.
void expect_good_run(DeviceLayer& layer, uint32_t seed) {
  std::vector<float> in(2048);
  for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<float>(i % 509) * 0.5f - static_cast<float>(seed);
  // One 8 KiB page in bank 0: core c's tile is at offset 4096 * c.
  uint64_t src = upload(layer, in, 8192);
  uint64_t dst = layer.alloc(8192, dram_spec(8192), nullptr);
  uint64_t prog = layer.compile(one_group_program(pipeline(), 1, 2));
  layer.run(prog, {Buf(src), Buf(dst)}, false);
  auto got = download<float>(layer, dst, in.size());
  for (size_t i = 0; i < in.size(); i++)
    if (got[i] != in[i])
      throw Failure("after a stopped kernel, the good run's element " + std::to_string(i) + " is " +
                    std::to_string(got[i]) + ", want " + std::to_string(in[i]));
  layer.release(prog);
  layer.free(src);
  layer.free(dst);
}

struct ExitCase {
  const char* name;
  std::string top;   // file-scope code
  std::string stop;  // the statement core (0,1) runs
  // In the message ("@FILE@:@LINE@" is the statement's place).
  std::vector<std::string> want;
  std::string want_stderr = "";  // what the C library says on the runtime's stderr
  std::string not_want = "";     // not in the message (when set)
};

std::vector<ExitCase> exit_cases() {
  return {
      {"abort", "", "std::abort();", {"the kernel called abort()"}},
      {"assert", "", "uint32_t x = col + 1; assert(x == 1);",
       {"assertion \"x == 1\" failed at @FILE@:@LINE@", "in void kernel_main()"}},
      {"exit(0)", "", "std::exit(0);", {"the kernel called exit(0)"}},
      {"exit(3)", "", "std::exit(3);", {"the kernel called exit(3)"}},
      {"_exit", "", "_exit(5);", {"the kernel called _exit(5)"}},
      {"_Exit", "", "std::_Exit(6);", {"the kernel called _Exit(6)"}},
      {"quick_exit", "", "std::quick_exit(7);", {"the kernel called quick_exit(7)"}},
      {"throw from noexcept",
       "__attribute__((noinline)) void boom(volatile uint32_t v) noexcept {\n"
       "  if (v) throw std::runtime_error(\"boom\");\n"
       "}",
       "boom(col);",
       {"std::terminate was called while an exception of type std::runtime_error was active (what(): boom)"}},
      // No exception is active: none of an earlier stopped kernel's is left.
      {"std::terminate", "", "std::terminate();", {"std::terminate was called"}, "", "exception"},
      // Raised inside the C library, which the kernel's own wrappers do not see.
      {"raise(SIGABRT)", "", "raise(SIGABRT);", {"abort: SIGABRT raised inside the C or C++ library"}},
      {"fortified memcpy",
       "", "char small[4]; volatile size_t n = 64; static const char big[64] = {};\n"
       "    __builtin___memcpy_chk(small, big, n, sizeof small); asm volatile(\"\" : : \"r\"(small) : \"memory\");",
       {"abort: SIGABRT raised inside the C or C++ library"}, "buffer overflow detected"},
  };
}

// Runs the pipeline with core (0,1)'s reader (or compute) kernel running
// the case's statement: a run_error naming the core, kernel, processor and
// call, and this thread's signal mask unchanged.
void expect_stop(DeviceLayer& layer, const ExitCase& c, bool compute) {
  GroupProgram p = pipeline();
  uint32_t line = 0;
  (compute ? p.compute : p.reader).source = with_case(compute ? kCompute : kReader, c.top, c.stop, &line);
  uint64_t src = layer.alloc(8192, dram_spec(8192), nullptr);
  uint64_t dst = layer.alloc(8192, dram_spec(8192), nullptr);
  uint64_t prog = layer.compile(one_group_program(p, 1, 2));
  sigset_t before, after;
  pthread_sigmask(SIG_SETMASK, nullptr, &before);
  std::string msg;
  std::string err = capture_stderr([&] {
    msg = expect_error("run_error", [&] { layer.run(prog, {Buf(src), Buf(dst)}, false); });
  });
  if (err.find(c.want_stderr) == std::string::npos)
    throw Failure(std::string(c.name) + ": stderr lacks \"" + c.want_stderr + "\": " + err);
  pthread_sigmask(SIG_SETMASK, nullptr, &after);
  for (int sig = 1; sig < NSIG; sig++)
    if (sigismember(&before, sig) != sigismember(&after, sig))
      throw Failure(std::string(c.name) + ": signal " + std::to_string(sig) + " is " +
                    (sigismember(&after, sig) ? "blocked" : "unblocked") + " after the kernel stopped");
  if (std::getenv("ZYX_TEST_VERBOSE")) std::fprintf(stderr, "%s: %s\n", c.name, msg.c_str());
  // The kernel is named with the line of the call (the watcher's site).
  std::vector<std::string> want = {compute ? "core (0,1) compute (compute) at compute.cpp:"
                                           : "core (0,1) reader (riscv_0) at reader.cpp:"};
  for (const std::string& w : c.want)
    want.push_back(replace_all(replace_all(w, "@LINE@", std::to_string(line)), "@FILE@",
                               compute ? "compute.cpp" : "reader.cpp"));
  for (const std::string& w : want)
    if (msg.find(w) == std::string::npos)
      throw Failure(std::string(c.name) + " in the " + (compute ? "compute" : "reader") +
                    " kernel: the message lacks \"" + w + "\": " + msg);
  if (!c.not_want.empty() && msg.find(c.not_want) != std::string::npos)
    throw Failure(std::string(c.name) + ": the message has \"" + c.not_want + "\": " + msg);
  layer.release(prog);
  layer.free(src);
  layer.free(dst);
}

// A kernel's exit(0) that reached the C library would end this test
// process with status 0, which reads as a pass: while the cases run, an
// exit fails it instead.
std::atomic<bool> g_exit_is_failure{false};

void fail_on_exit() {
  if (!g_exit_is_failure.load()) return;
  static const char msg[] = "FAIL exits: a kernel's exit ended the test process\n";
  ssize_t n = write(1, msg, sizeof msg - 1);
  (void)n;
  _exit(1);
}

void run_cases(DeviceLayer& layer, bool compute, uint32_t seed) {
  static const bool registered = std::atexit(fail_on_exit) == 0 && std::at_quick_exit(fail_on_exit) == 0;
  CHECK(registered);
  struct Armed {
    Armed() { g_exit_is_failure.store(true); }
    ~Armed() { g_exit_is_failure.store(false); }
  } armed;
  expect_good_run(layer, seed);
  for (const ExitCase& c : exit_cases()) {
    if (std::getenv("ONLY") && std::string(std::getenv("ONLY")) != c.name) continue;
    expect_stop(layer, c, compute);
    expect_good_run(layer, ++seed);
  }
}

void test_exits_dataflow(DeviceLayer& layer) { run_cases(layer, false, 0); }
ZYX_TEST(exits, test_exits_dataflow);

void test_exits_compute(DeviceLayer& layer) { run_cases(layer, true, 100); }
ZYX_TEST(exits, test_exits_compute);

// Each kernel has its own C++ exception state: the reader blocks inside a
// catch block, and the compute kernel of its core (run by the same worker
// thread meanwhile) sees no exception being handled; the reader then still
// has its own. (std::terminate runs as a handler of the exception that
// reached it, so a kernel stopped there is one stopped inside a catch block.)
void test_exception_state_per_kernel(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "eh_state";
  p.reader.source = R"(#include <cstring>
#include <exception>
#include <stdexcept>
void kernel_main() {
  try {
    throw std::runtime_error("reader's");
  } catch (const std::exception&) {
    cb_wait_front(1, 1);
    cb_pop_front(1, 1);
    try {
      throw;
    } catch (const std::runtime_error& e) {
      ASSERT(std::strcmp(e.what(), "reader's") == 0);
    }
  }
}
)";
  p.compute.source = R"(#include <exception>
void kernel_main() {
  ASSERT(!std::current_exception() && std::uncaught_exceptions() == 0);
  cb_reserve_back(1, 1);
  cb_push_back(1, 1);
}
)";
  p.cbs = {CB(1, "Float32", 4096, 1)};
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  layer.run(prog, {}, false);
  layer.release(prog);
}
ZYX_TEST(exits, test_exception_state_per_kernel);

// Outside a kernel (here the test's own thread, after the runs above have
// installed the emulator's handlers) abort, an external SIGABRT and
// std::terminate keep their default: the process dies of SIGABRT.
void test_default_outside_kernels(DeviceLayer& layer) {
  expect_good_run(layer, 7);  // the handlers are in place
  struct Case {
    const char* name;
    void (*fn)();
  } cases[] = {
      {"abort", [] { std::abort(); }},
      {"kill -ABRT", [] { kill(getpid(), SIGABRT); }},
      {"std::terminate", [] { std::terminate(); }},
  };
  for (const Case& c : cases) {
    std::fflush(nullptr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      int null = open("/dev/null", O_WRONLY);  // no "terminate called…" noise
      if (null >= 0) dup2(null, 2);
      c.fn();
      _exit(0);  // survived: the parent reports it
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
      throw Failure(std::string(c.name) + " outside a kernel: the process " +
                    (WIFSIGNALED(status) ? "died of signal " + std::to_string(WTERMSIG(status))
                                         : "exited with " + std::to_string(WEXITSTATUS(status))) +
                    ", want death by SIGABRT");
  }
}
ZYX_TEST(exits, test_default_outside_kernels);

}  // namespace
