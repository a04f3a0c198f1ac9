// FakeLayer is an in-memory DeviceLayer for testing the server alone: buffers
// are host byte arrays, compile records the program, run resolves every arg
// entry of every kernel on every core (independently of the real layers, by
// the formulas of docs/protocol.md) and records the words. Kernel sources
// containing "#error" fail to compile; a run of a program whose source holds
// "HANG" reports a deadlock; FakeState::on_run runs inside every run. With
// FakeState::async_runs, launch returns before the run ends: the run ends
// when FakeState::on_finish (given the run's number, 1, 2, ... in launch
// order) returns, which the first of the run's wait and finish calls, and a
// program whose source holds "FAILLATE" fails in finish (run_error);
// launches, ends and finishes are logged in order.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device_layer.hpp"

namespace zyx::test {

struct FakeState {
  int live_buffers = 0, live_programs = 0, writes = 0, reads = 0, runs = 0;
  bool destroyed = false;
  ProgramDesc last_program;
  // The resolved runtime args of the last run: kernel index -> core -> words.
  std::map<size_t, std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>>> runtime_words;
  std::map<size_t, std::vector<uint32_t>> common_words;
  std::function<void()> on_run;
  bool async_runs = false;
  std::function<void(uint64_t run)> on_finish;
  std::mutex log_mu;
  std::vector<std::string> log;  // "launch N", "end N", "finish N", in order
  std::atomic<uint64_t> launched{0};
  void note(const std::string& s) {
    std::lock_guard<std::mutex> lk(log_mu);
    log.push_back(s);
  }
  std::vector<std::string> logged() {
    std::lock_guard<std::mutex> lk(log_mu);
    return log;
  }
  DeviceDesc desc;  // what describe() reports (filled by FakeState())
  uint64_t backed_limit = uint64_t{64} << 20;  // larger buffers hold no bytes
  FakeState();
};

class FakeLayer : public DeviceLayer {
 public:
  explicit FakeLayer(std::shared_ptr<FakeState> st) : st_(std::move(st)) {}
  ~FakeLayer() override { st_->destroyed = true; }

  DeviceDesc describe() override { return st_->desc; }
  uint64_t alloc(uint64_t size, const BufferSpec& spec, uint64_t* address) override;
  void free(uint64_t buffer) override;
  BufferInfo buffer_info(uint64_t buffer) override;
  void write(uint64_t buffer, uint64_t offset, const uint8_t* src, uint64_t length) override;
  void read(uint64_t buffer, uint64_t offset, uint8_t* dst, uint64_t length) override;
  uint64_t compile(const ProgramDesc& program) override;
  uint64_t run(uint64_t program, const std::vector<RunArg>& args, bool timed) override;
  std::unique_ptr<PendingRun> launch(uint64_t program, const std::vector<RunArg>& args, bool timed) override;
  void release(uint64_t program) override;

 private:
  struct Buf {
    BufferInfo info;
    std::vector<uint8_t> bytes;
  };
  Buf& buf(uint64_t id);
  uint32_t resolve(const ArgEntry& e, const ProgramDesc& p, const std::vector<RunArg>& args);
  std::shared_ptr<FakeState> st_;
  std::map<uint64_t, Buf> bufs_;
  std::map<uint64_t, ProgramDesc> progs_;
  uint64_t next_buf_ = 1, next_prog_ = 1, next_addr_ = 0x10000, next_l1_ = 1464 * 1024;
};

}  // namespace zyx::test
