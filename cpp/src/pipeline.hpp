// Pipeline serves one request stream (docs/protocol.md, "Pipelining"): the
// calling thread reads and parses request lines while an executor thread
// runs them, strictly in order, one reply per request, in request order.
// When nothing is queued or running, a cheap request (Prepared::cheap) runs
// on the reading thread itself, which saves two thread hand-offs per ping.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
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

  // The reader waits when this many requests are queued, so a driver that
  // pipelines without reading replies meets back-pressure on the pipe
  // instead of growing the runtime's memory.
  static constexpr size_t kMaxQueued = 256;

  Server& server_;
  std::mutex mu_;
  std::condition_variable cv_, space_;
  std::deque<Prepared> queue_;
  bool busy_ = false, closing_ = false, exited_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> prepared_{0}, inlined_{0};
};

}  // namespace zyx
