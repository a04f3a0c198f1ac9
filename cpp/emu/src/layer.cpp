// EmuLayer: the DeviceLayer of the host emulator. Buffers live in sparse,
// bank-interleaved DRAM or in the cores' L1 (memory.cpp); programs are
// kernels on core range sets, compiled and run by the Runner (program.cpp,
// program_run.cpp) on the scheduler (scheduler.cpp).
#include "emu.hpp"
#include "runner.hpp"

namespace zyx::emu {

namespace {

class EmuLayer final : public DeviceLayer {
 public:
  EmuLayer(Board board, int chip, std::string cache_dir)
      : board_(std::move(board)),
        chip_(chip),
        memory_(board_),
        builder_(std::move(cache_dir), board_),
        runner_(board_, memory_, builder_) {}

  DeviceDesc describe() override { return describe_board(board_, chip_); }

  uint64_t alloc(uint64_t size, const BufferSpec& spec, uint64_t* address) override {
    return memory_.alloc(size, spec, address);
  }
  void free(uint64_t id) override { memory_.free(id); }
  BufferInfo buffer_info(uint64_t id) override { return memory_.get(id)->info(); }
  void write(uint64_t id, uint64_t offset, const uint8_t* src, uint64_t length) override {
    memory_.write(id, offset, src, length);
  }
  void read(uint64_t id, uint64_t offset, uint8_t* dst, uint64_t length) override {
    memory_.read(id, offset, dst, length);
  }
  uint64_t compile(const ProgramDesc& program) override { return runner_.compile(program); }
  uint64_t run(uint64_t program, const std::vector<RunArg>& args, bool timed) override {
    return runner_.run(program, args, timed);
  }
  std::vector<std::string> take_warnings() override { return runner_.take_warnings(); }
  void release(uint64_t program) override { runner_.release(program); }

 private:
  Board board_;
  int chip_;
  DeviceMemory memory_;
  KernelBuilder builder_;
  Runner runner_;
};

}  // namespace

}  // namespace zyx::emu

namespace zyx {

std::unique_ptr<DeviceLayer> make_emu_layer(const std::string& board, int chip, const std::string& cache_dir) {
  emu::Board b = emu::board_preset(board);
  if (chip < 0 || chip >= b.chips)
    throw Error("invalid_argument", "board " + b.name + " has " + std::to_string(b.chips) + " chip(s); chip " +
                                        std::to_string(chip) + " does not exist");
  return std::make_unique<emu::EmuLayer>(std::move(b), chip, cache_dir);
}

}  // namespace zyx
