// Pipeline serves one request stream (docs/protocol.md, "Pipelining"): the
// calling thread reads and parses request lines while an executor thread
// runs them, strictly in order, one reply per request, in request order.
// When nothing is queued or running, a cheap request (Prepared::cheap) runs
// on the reading thread itself, which saves two thread hand-offs per ping.
//
// Runs in flight (Server::oldest_run): when the executor has nothing it may
// execute, a waiter thread waits for the oldest run (PendingRun::wait) while
// the executor waits on its condition variable, so a run that arrives
// meanwhile is launched at once, behind the runs on the device; the executor
// answers the oldest run when the waiter reports that it has ended. Any
// other request (and a run with `after`, or one past the limit in flight)
// executes only once the waiter is idle; execute then finishes every run
// before it (Server::execute).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "line_reader.hpp"
#include "server.hpp"

namespace zyx {

class Pipeline {
 public:
  explicit Pipeline(Server& server) : server_(server) {}

  // serve reads lines until `exit`, end of input or a read error, answers
  // every request it read (exit and end of input drain the queue first),
  // and shuts the server down. on_eof runs when the input has ended, while
  // queued work may still be running.
  void serve(LineReader& in, const std::function<void()>& on_eof = {});

  // ReaderHooks run on the reading thread (mock mode's faults): before_read
  // before each line is read, after_read once line n (1 for the first) has
  // been read and before it is parsed or queued. A hook that blocks stops
  // the reading, not the execution of what was read before.
  struct ReaderHooks {
    std::function<void()> before_read;
    std::function<void(uint64_t n)> after_read;
  };
  void set_reader_hooks(ReaderHooks hooks) { hooks_ = std::move(hooks); }

  // stop asks serve to stop reading after the current line (a reply could
  // not be written). Queued requests still run.
  void stop() { stop_ = true; }

  // For tests: lines parsed so far, and how many ran on the reading thread.
  uint64_t prepared() const { return prepared_.load(); }
  uint64_t inlined() const { return inlined_.load(); }
  // Whether nothing is queued or executing (tests wait for it).
  bool idle() {
    std::lock_guard<std::mutex> lk(mu_);
    return queue_.empty() && !busy_;
  }

 private:
  void executor();
  void waiter();
  // Whether the executor may execute the request at the front of the queue
  // now (mu_ held).
  bool may_execute_front() const;

  // The reader waits when this many requests are queued, so a driver that
  // pipelines without reading replies meets back-pressure on the pipe
  // instead of growing the runtime's memory.
  static constexpr size_t kMaxQueued = 256;

  Server& server_;
  ReaderHooks hooks_;
  std::mutex mu_;
  std::condition_variable cv_, space_;
  std::deque<Prepared> queue_;
  bool busy_ = false, closing_ = false, exited_ = false;
  // The waiter: idle; given watched_ to wait for (waiting, or about to);
  // ended (watched_ has ended; the executor takes the report and the
  // reference). Only the executor moves it out of given to idle via ended.
  enum class Watch { idle, given, ended };
  Watch watch_ = Watch::idle;
  std::shared_ptr<PendingRun> watched_;
  std::condition_variable watch_cv_;
  bool waiter_quit_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> prepared_{0}, inlined_{0};
};

}  // namespace zyx
