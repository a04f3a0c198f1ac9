// The scheduler: runs every core of a run on a pool of worker threads.
//
// The kernels of a core (one to three: riscv_0, riscv_1, compute) run as
// fibers (fiber.hpp) that share the core's state; a blocking call (a
// circular buffer that is full or empty, a semaphore wait) switches to the
// next runnable kernel of the core instead of blocking an OS thread. Cores
// run in parallel on a pool of worker threads, one per hardware thread. A
// worker runs one core at a time and takes on further cores only while all
// of its kernels are blocked, so cores that wait on each other (semaphores,
// L1 to L1 traffic) still all get to run. When no worker has made progress
// for the timeout (a worker inside a kernel counts as making progress), the
// workers together report a deadlock naming every blocked kernel of every
// core, the run is cancelled, and each blocked wait then throws out of its
// kernel, so no thread is left behind.
#include <cxxabi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <system_error>
#include <thread>
#include <utility>

#include "kernel_api.hpp"
#include "kernel_state.hpp"
#include "watcher.hpp"

namespace zyx::emu {

constinit thread_local Fiber* t_fiber = nullptr;

Fiber* current_fiber() { return t_fiber; }

CurrentCoreFp32::operator bool() const { return t_fiber && t_fiber->core->fp32_dest_acc; }

void RunState::fail(const std::string& code, const std::string& msg) {
  std::lock_guard<std::mutex> lock(err_mu);
  if (err_code.empty()) {
    err_code = code;
    err_msg = msg;
  }
  cancel.store(true);
}

void RunState::warn(const std::string& msg) {
  {
    std::lock_guard<std::mutex> lock(warn_mu);
    if (warnings.size() < 100) warnings.push_back(msg);
  }
  std::string line = "zyx-emu: warning: " + msg + "\n";
  ssize_t w = write(2, line.data(), line.size());
  (void)w;
}

// ---- fiber stacks ------------------------------------------------------------

StackPool::~StackPool() {
  for (void* s : stacks_) munmap(s, kFiberStackSize);
}

void* StackPool::take() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stacks_.empty()) {
      void* s = stacks_.back();
      stacks_.pop_back();
      return s;
    }
  }
  void* s = mmap(nullptr, kFiberStackSize, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (s == MAP_FAILED) throw Error("internal", "emulator: cannot map a kernel stack");
  mprotect(s, kFiberStackGuard, PROT_NONE);  // overflow faults instead of corrupting
  return s;
}

void StackPool::give(void* s) {
  std::lock_guard<std::mutex> lock(mu_);
  stacks_.push_back(s);
}

// ---- worker threads ----------------------------------------------------------

// Helper threads for Runner::execute. start(n, job) has helpers 1..n run
// job(id) (creating threads as needed; fewer when the system refuses more),
// wait() returns when they all have. One run at a time uses it (run_mu_).
// Each helper sets up its fault stack once, for its lifetime.
//
// A helper that has finished spins for kSpin on the run counter before it
// sleeps on the condition variable, and so does wait() on the helpers that
// are still running: runs that follow each other closely (a program run in
// a loop, a benchmark) then start and end without a futex wake-up of each
// of up to one thread per host CPU, which costs tens of microseconds a
// thread in a virtual machine, on runs of about a millisecond.
struct Runner::WorkerPool {
  static constexpr auto kSpin = std::chrono::microseconds(2000);
  std::mutex mu;
  std::condition_variable wake, done;
  std::vector<std::thread> threads;
  const std::function<void(unsigned)>* job = nullptr;
  std::atomic<uint64_t> generation{0};
  std::atomic<unsigned> running{0};
  unsigned want = 0;
  std::atomic<bool> stop{false};

  // spin polls until ready() or kSpin has passed; it reports ready().
  template <class F>
  static bool spin(F&& ready) {
    auto until = std::chrono::steady_clock::now() + kSpin;
    for (unsigned i = 1;; i++) {
      if (ready()) return true;
      if (i % 64 == 0) {
        if (std::chrono::steady_clock::now() >= until) return ready();
        std::this_thread::yield();  // a host with fewer CPUs than threads still gets on
      }
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }

  void loop(unsigned id) {
    FaultStack fault_stack;  // kernel faults become run errors on this thread
    uint64_t seen = 0;
    while (true) {
      spin([&] { return stop.load(std::memory_order_acquire) || generation.load(std::memory_order_acquire) != seen; });
      const std::function<void(unsigned)>* j;
      {
        std::unique_lock<std::mutex> lock(mu);
        wake.wait(lock, [&] { return stop.load() || generation.load() != seen; });
        if (stop.load()) return;
        seen = generation.load();
        if (id > want) continue;
        j = job;
      }
      (*j)(id);
      if (running.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu);  // wait() checks running under mu before it sleeps
        done.notify_all();
      }
    }
  }
  unsigned start(unsigned n, const std::function<void(unsigned)>* j) {
    {
      std::lock_guard<std::mutex> lock(mu);
      while (threads.size() < n) {
        try {
          threads.emplace_back(&WorkerPool::loop, this, static_cast<unsigned>(threads.size() + 1));
        } catch (const std::system_error&) {
          break;  // fewer helpers: the run still finishes
        }
      }
      n = std::min<unsigned>(n, static_cast<unsigned>(threads.size()));
      job = j, want = n;
      running.store(n, std::memory_order_relaxed);
      generation.fetch_add(1, std::memory_order_release);
    }
    wake.notify_all();
    return n;
  }
  void wait() {
    if (spin([&] { return running.load(std::memory_order_acquire) == 0; })) return;
    std::unique_lock<std::mutex> lock(mu);
    done.wait(lock, [&] { return running.load() == 0; });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop.store(true);
    }
    wake.notify_all();
    for (auto& t : threads) t.join();
  }
};

Runner::Runner(const Board& board, DeviceMemory& memory, KernelBuilder& builder)
    : board_(board), memory_(memory), builder_(builder), pool_(std::make_unique<WorkerPool>()) {}

Runner::~Runner() {
  pool_.reset();
  for (auto& core : core_pool_)
    if (core)
      for (Fiber& f : core->fibers)
        if (f.stack) stacks_.give(std::exchange(f.stack, nullptr));
}

// ---- one run -----------------------------------------------------------------

namespace {

void fiber_main() {
  Fiber* f = t_fiber;
  try {
    run_kernel_guarded(f);
  } catch (const Cancelled&) {
  } catch (const Error& e) {
    f->core->run->fail(e.code, where(f) + site_text(f) + ": " + e.what());
  } catch (const std::exception& e) {
    f->core->run->fail("run_error", where(f) + site_text(f) + ": " + e.what());
  } catch (...) {
    f->core->run->fail("run_error", where(f) + ": unknown exception");
  }
  f->done = true;
}

// A fiber's first and last frame: runs its kernel, then switches back to
// its worker for good (the worker never resumes a finished fiber).
void fiber_entry(void* arg) {
  Fiber* f = static_cast<Fiber*>(arg);
  fiber_main();
  fiber_switch(f->ctx, f->worker->sched);
  std::abort();
}

// What every worker publishes for stall detection: when it last made
// progress, and whether it is inside a kernel now (that counts as progress:
// a long stretch of real work is no deadlock).
struct alignas(64) WorkerClock {
  std::atomic<int64_t> last_progress{0};
  std::atomic<bool> inside{false};
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// This thread's exception-handling state (EhState's layout is the ABI's).
EhState& thread_eh() { return *reinterpret_cast<EhState*>(abi::__cxa_get_globals()); }

// What the workers of one run share: the run, the fiber stacks, every
// worker's clock, and how many workers started and finished.
struct RunWorkers {
  RunWorkers(RunState& run, StackPool& stack_pool, unsigned nworkers)
      : rs(run),
        stacks(stack_pool),
        clocks(new WorkerClock[nworkers]),
        timeout_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(run.timeout).count()) {
    for (unsigned i = 0; i < nworkers; i++) clocks[i].last_progress.store(now_ns());
  }
  // No worker inside a kernel and none has made progress for the timeout.
  bool stalled(int64_t now) const {
    unsigned n = started.load();
    for (unsigned i = 0; i < n; i++)
      if (clocks[i].inside.load(std::memory_order_acquire) ||
          now - clocks[i].last_progress.load(std::memory_order_acquire) <= timeout_ns)
        return false;
    return true;
  }

  RunState& rs;
  StackPool& stacks;
  std::unique_ptr<WorkerClock[]> clocks;
  std::atomic<unsigned> started{0}, exited{0};
  // A stall report found a kernel that can run after all.
  std::atomic<bool> movable{false};
  const int64_t timeout_ns;
};

// One worker thread's part of a run: it resumes the runnable kernels of the
// cores it has taken on, takes the next core when it made no progress, and
// takes part in stall detection until none of its cores is left.
class WorkerLoop {
 public:
  WorkerLoop(RunWorkers& shared, unsigned id)
      : shared_(shared), rs_(shared.rs), me_(shared.clocks[id]), thread_eh_state_(thread_eh()) {}

  void run() {
    while (true) {
      if (run_active_cores() || take_next_core()) {
        me_.last_progress.store(now_ns(), std::memory_order_release);
        continue;
      }
      if (active_.empty()) break;
      if (rs_.cancel.load()) continue;
      if (!watch_for_stall()) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    shared_.exited.fetch_add(1);
  }

 private:
  void resume(Fiber& f) {
    t_fiber = &f;
    me_.inside.store(true, std::memory_order_release);
    std::swap(thread_eh_state_, f.eh);
    fiber_switch(wk_.sched, f.ctx);
    std::swap(thread_eh_state_, f.eh);
    me_.inside.store(false, std::memory_order_release);
    t_fiber = nullptr;
  }

  // Takes core c on, or fails the run when a stack cannot be mapped: an
  // exception must not leave a worker thread. A pooled core keeps its
  // fibers' stacks from run to run (Runner::~Runner gives them back), so
  // workers taking cores on do not all queue for the stack pool's lock.
  void start(CoreState* c) {
    try {
      for (uint32_t i = 0; i < c->nfibers; i++)
        if (!c->fibers[i].stack) c->fibers[i].stack = shared_.stacks.take();
    } catch (const Error& e) {
      rs_.fail(e.code, e.what());
      return;
    }
    for (uint32_t i = 0; i < c->nfibers; i++) {
      Fiber& f = c->fibers[i];
      f.worker = &wk_;
      fiber_make(f.ctx, static_cast<char*>(f.stack) + kFiberStackGuard, kFiberStackSize - kFiberStackGuard,
                 fiber_entry, &f);
    }
    active_.push_back(c);
  }

  // Resumes every kernel of core c that can run (all of them once the run
  // is cancelled, so that each leaves); returns whether all are done.
  bool run_core(CoreState* c, bool cancel, bool& progressed) {
    bool all_done = true;
    for (uint32_t j = 0; j < c->nfibers; j++) {
      Fiber& f = c->fibers[j];
      if (f.done) continue;
      if (cancel && !f.started) {
        f.done = true;
        continue;
      }
      if (cancel || !f.blocked || satisfied(*c, f.wait)) {
        f.started = true;
        resume(f);
        progressed = true;
      }
      if (!f.done) all_done = false;
    }
    return all_done;
  }

  // One pass over the active cores; a core whose kernels are all done leaves
  // the list. Returns whether a kernel ran.
  bool run_active_cores() {
    bool progressed = false;
    bool cancel = rs_.cancel.load(std::memory_order_relaxed);
    for (size_t i = 0; i < active_.size();) {
      CoreState* c = active_[i];
      if (run_core(c, cancel, progressed)) {
        active_.erase(active_.begin() + static_cast<long>(i));
      } else {
        i++;
      }
    }
    return progressed;
  }

  // Takes the run's next core on, unless the run is cancelled or every core
  // is taken.
  bool take_next_core() {
    if (rs_.cancel.load()) return false;
    uint32_t k = rs_.next_core.fetch_add(1);
    if (k >= rs_.cores.size()) return false;
    start(rs_.cores[k]);
    return true;
  }

  // Adds this worker's blocked kernels to the report of stall epoch `epoch`
  // (lines of the deadlock table), and says whether one of them could run
  // after all.
  void answer(uint32_t epoch) {
    std::vector<std::pair<uint64_t, std::string>> lines;
    bool movable = false;
    for (CoreState* c : active_)
      for (uint32_t i = 0; i < c->nfibers; i++) {
        Fiber& f = c->fibers[i];
        if (f.done) continue;
        if (!f.blocked || satisfied(*c, f.wait)) {
          movable = true;
          continue;
        }
        lines.emplace_back(uint64_t(c->index) * 8 + i, describe_wait(&f));
      }
    std::lock_guard<std::mutex> lock(rs_.stall_mu);
    if (rs_.stall_phase.load() != static_cast<int>(epoch)) return;
    for (auto& l : lines) rs_.stall_report.push_back(std::move(l));
    if (movable) shared_.movable.store(true);
    answered_ = epoch;
    rs_.stall_answers.fetch_add(1);
  }

  // Answers a stall report that another worker collects, or starts one
  // when every worker has stalled. Returns whether this worker collected
  // one (and so should not sleep).
  bool watch_for_stall() {
    int phase = rs_.stall_phase.load();
    if ((phase & 1) && answered_ != static_cast<uint32_t>(phase)) answer(static_cast<uint32_t>(phase));
    int64_t now = now_ns();
    if (!(phase & 1) && shared_.stalled(now) && rs_.stall_phase.compare_exchange_strong(phase, phase + 1)) {
      collect_stall_report(phase);
      return true;
    }
    return false;
  }

  // This worker collects the report of stall epoch phase + 1: its own part,
  // then every other worker's (a worker that has finished has nothing
  // blocked). It is a deadlock when every worker answered, none has a
  // kernel that could run, and still none has moved: the run fails with the
  // table of what every blocked kernel waits on. Otherwise the report is
  // forgotten (a worker that did not answer in time, one that the host
  // did not schedule, is asked again at the next stall).
  void collect_stall_report(int phase) {
    uint32_t epoch = static_cast<uint32_t>(phase + 1);
    shared_.movable.store(false);
    answer(epoch);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (rs_.stall_answers.load() + shared_.exited.load() < shared_.started.load() &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    std::lock_guard<std::mutex> lock(rs_.stall_mu);
    unsigned missing = shared_.started.load() - rs_.stall_answers.load() - shared_.exited.load();
    if (!shared_.stalled(now_ns()) || shared_.movable.load() || missing) {
      rs_.stall_report.clear();
      rs_.stall_answers.store(0);
      rs_.stall_phase.store(phase + 2);
      return;
    }
    auto& r = rs_.stall_report;
    std::sort(r.begin(), r.end());
    std::string msg = "every running kernel is blocked and none can go on (no progress on any core for " +
                      std::to_string(shared_.timeout_ns / 1000000) + " ms):";
    for (auto& [key, text] : r) msg += "\n  " + text;
    rs_.fail("deadlock", msg);
  }

  RunWorkers& shared_;
  RunState& rs_;
  WorkerClock& me_;
  EhState& thread_eh_state_;
  Worker wk_;
  std::vector<CoreState*> active_;
  uint32_t answered_ = 0;  // the stall epoch this worker has reported for
};

// This worker's part of setting up the run's cores (RunState::set_up_core):
// it sets up cores until none is left, then waits for the cores that other
// workers are still setting up. Returns whether every set-up succeeded; when one
// failed no kernel runs, and the run fails with the error of the lowest
// core that failed (the same whichever worker set up which core).
bool set_up_cores(RunState& rs) {
  const uint32_t n = static_cast<uint32_t>(rs.cores.size());
  for (uint32_t k; (k = rs.next_set_up.fetch_add(1, std::memory_order_relaxed)) < n;) {
    std::string code, msg;
    try {
      rs.set_up_core(k);
    } catch (const Error& e) {
      code = e.code, msg = e.what();
    } catch (const std::exception& e) {
      code = "internal", msg = std::string("setting up a core: ") + e.what();
    }
    if (!code.empty()) {
      std::lock_guard<std::mutex> lock(rs.err_mu);
      if (k < rs.set_up_failed_at) rs.set_up_failed_at = k, rs.err_code = code, rs.err_msg = msg;
    }
    if (rs.set_up_count.fetch_add(1, std::memory_order_acq_rel) + 1 == n)
      rs.kernels_start = std::chrono::steady_clock::now();
  }
  for (unsigned i = 1; rs.set_up_count.load(std::memory_order_acquire) < n; i++) {
    if (i % 64 == 0) std::this_thread::yield();  // a worker still setting up may share this CPU
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::lock_guard<std::mutex> lock(rs.err_mu);
  return rs.set_up_failed_at == UINT32_MAX;
}

// Worker threads for a run of `cores` cores: one per hardware thread
// (ZYX_EMU_THREADS overrides), at most one per core.
unsigned worker_count(size_t cores) {
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  if (const char* s = std::getenv("ZYX_EMU_THREADS")) {
    int v = std::atoi(s);
    if (v > 0) hw = static_cast<unsigned>(v);
  }
  return std::max(1u, std::min<unsigned>(hw, static_cast<unsigned>(cores)));
}

}  // namespace

void Runner::execute(RunState& rs) {
  unsigned nworkers = worker_count(rs.cores.size());
  RunWorkers shared(rs, stacks_, nworkers);
  std::function<void(unsigned)> work = [&shared](unsigned w) {
    if (set_up_cores(shared.rs)) WorkerLoop(shared, w).run();
  };
  // This thread is worker 0, the pool's helpers the others. Fewer threads
  // than asked for still finish the run (each worker takes cores until none
  // are left), so a thread that cannot be created is no error.
  FaultStack fault_stack;  // kernel faults become run errors on this thread
  shared.started.store(nworkers);
  unsigned helpers = pool_->start(nworkers - 1, &work);
  shared.started.store(1 + helpers);
  work(0);
  pool_->wait();
}

}  // namespace zyx::emu
