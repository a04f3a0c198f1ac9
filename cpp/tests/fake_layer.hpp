// FakeLayer is an in-memory DeviceLayer for testing the server alone: buffers
// are host byte arrays, compile records the program, run resolves the layouts
// on every core and records the words. Sources containing "#error" fail to
// compile, sources containing "HANG" report a deadlock at run.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "device_layer.hpp"

namespace zyx::test {

struct FakeState {
  int live_buffers = 0, live_programs = 0, writes = 0, reads = 0, runs = 0;
  bool destroyed = false;
  ProgramDesc last_program;
  std::vector<uint32_t> last_runtime_words;  // reader runtime args of the last core run
};

class FakeLayer : public DeviceLayer {
 public:
  explicit FakeLayer(std::shared_ptr<FakeState> st) : st_(std::move(st)) {}
  ~FakeLayer() override { st_->destroyed = true; }

  DeviceDesc describe() override;
  uint64_t alloc(uint64_t size, uint64_t page_size, uint64_t* address) override;
  void free(uint64_t buffer) override;
  BufferInfo buffer_info(uint64_t buffer) override;
  void write(uint64_t buffer, uint64_t offset, const uint8_t* src, uint64_t length) override;
  void read(uint64_t buffer, uint64_t offset, uint8_t* dst, uint64_t length) override;
  uint64_t compile(const ProgramDesc& program) override;
  uint64_t run(uint64_t program, uint32_t rows, uint32_t cols, const std::vector<RunArg>& args, bool timed) override;
  void release(uint64_t program) override;

  // Buffers larger than this are accepted but hold no bytes.
  static constexpr uint64_t kBacked = uint64_t{64} << 20;

 private:
  struct Buf {
    BufferInfo info;
    std::vector<uint8_t> bytes;
  };
  Buf& buf(uint64_t id);
  std::shared_ptr<FakeState> st_;
  std::map<uint64_t, Buf> bufs_;
  std::map<uint64_t, ProgramDesc> progs_;
  uint64_t next_buf_ = 1, next_prog_ = 1, next_addr_ = 0x10000;
};

}  // namespace zyx::test
