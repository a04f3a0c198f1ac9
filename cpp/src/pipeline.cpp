#include "pipeline.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>
#include <thread>

namespace zyx {

bool Pipeline::may_execute_front() const {
  if (watch_ == Watch::idle) return true;
  // While the waiter waits for the oldest run, only a run that may overlap
  // the runs in flight, and has room among them, goes ahead of it: anything
  // else waits for every earlier run anyway, and waiting here first keeps
  // the waiter off the layer while execute frees, releases or shuts down.
  return queue_.front().overlaps_runs() && server_.runs_in_flight() < Server::kMaxRunsInFlight;
}

void Pipeline::waiter() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    watch_cv_.wait(lk, [&] { return watch_ == Watch::given || waiter_quit_; });
    if (watch_ != Watch::given) return;
    // watched_ keeps the run alive until the executor takes the report, and
    // the executor leaves it alone while the state is given.
    PendingRun* run = watched_.get();
    lk.unlock();
    run->wait();
    lk.lock();
    watch_ = Watch::ended;
    cv_.notify_one();
  }
}

void Pipeline::executor() {
  std::thread waiting([this] { waiter(); });
  for (;;) {
    Prepared p;
    bool after_exit = false;
    {
      std::unique_lock<std::mutex> lk(mu_);
      bool quit = false;
      for (;;) {
        if (watch_ == Watch::ended) {
          // The watched run has ended: answer it unless execute has
          // finished it meanwhile (a request that waited for every run).
          std::shared_ptr<PendingRun> run = std::move(watched_);
          watch_ = Watch::idle;
          lk.unlock();
          if (run == server_.oldest_run()) server_.finish_oldest_run();
          run.reset();
          lk.lock();
          continue;
        }
        if (!queue_.empty()) {
          if (may_execute_front()) break;
        } else if (watch_ == Watch::idle) {
          if (auto run = server_.oldest_run()) {
            if (run->done()) {
              lk.unlock();
              server_.finish_oldest_run();
              lk.lock();
              continue;
            }
            // Nothing to execute: let the waiter wait for the oldest run
            // while this thread waits for it or for the next request. The
            // reader keeps queuing meanwhile (busy_ stays set).
            watched_ = std::move(run);
            watch_ = Watch::given;
            watch_cv_.notify_one();
          } else {
            busy_ = false;
            if (closing_) {
              quit = true;
              break;
            }
          }
        }
        cv_.wait(lk);
      }
      if (quit) {
        waiter_quit_ = true;
        lk.unlock();
        watch_cv_.notify_one();
        waiting.join();
        return;
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
  for (uint64_t n = 1;; n++) {
    if (hooks_.before_read) hooks_.before_read();
    std::string_view line;
    uint64_t skipped = 0;
    auto st = in.next(&line, &skipped);
    if (hooks_.after_read && (st == LineReader::Status::line || st == LineReader::Status::too_long)) hooks_.after_read(n);
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
