#include "pipeline.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>
#include <thread>

namespace zyx {

void Pipeline::executor() {
  for (;;) {
    Prepared p;
    bool after_exit = false;
    {
      std::unique_lock<std::mutex> lk(mu_);
      for (;;) {
        if (!queue_.empty()) break;
        if (server_.runs_in_flight() > 0) {
          // Nothing else to do: wait for the oldest run and answer it. The
          // reader keeps queuing meanwhile (busy_ stays set).
          lk.unlock();
          server_.finish_oldest_run();
          lk.lock();
          continue;
        }
        busy_ = false;
        if (closing_) return;
        cv_.wait(lk);
      }
      p = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      after_exit = exited_;
    }
    space_.notify_one();
    // Nothing follows exit (the reader stops there); this is belt and braces.
    bool more = after_exit ? false : server_.execute(p);
    if (!more) {
      std::lock_guard<std::mutex> lk(mu_);
      exited_ = true;
    }
  }
}

void Pipeline::serve(LineReader& in, const std::function<void()>& on_eof) {
  std::thread exec([this] { executor(); });
  for (;;) {
    std::string_view line;
    uint64_t skipped = 0;
    auto st = in.next(&line, &skipped);
    Prepared p;
    if (st == LineReader::Status::line) {
      p = Server::prepare(line);
    } else if (st == LineReader::Status::too_long) {
      p = Server::too_long(skipped);
    } else {
      if (st == LineReader::Status::error)
        std::cerr << "zyx-tt-runtime: reading stdin: " << std::strerror(errno) << "\n";
      if (on_eof) on_eof();
      break;
    }
    prepared_++;
    bool is_exit = p.is_exit();
    bool here = false;
    {
      std::unique_lock<std::mutex> lk(mu_);
      space_.wait(lk, [&] { return queue_.size() < kMaxQueued; });
      if (queue_.empty() && !busy_ && p.cheap()) {
        here = true;
        busy_ = true;
      } else {
        queue_.push_back(std::move(p));
      }
    }
    // Only a queued request wakes the executor: waking it for nothing costs a
    // context switch per line when both threads share a core.
    if (!here) cv_.notify_one();
    if (here) {
      inlined_++;
      bool more = server_.execute(p);
      {
        std::lock_guard<std::mutex> lk(mu_);
        busy_ = false;
        if (!more) exited_ = true;
      }
    }
    if (is_exit || stop_) break;
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  exec.join();
  server_.shutdown();
}

}  // namespace zyx
