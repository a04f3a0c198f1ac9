// EmuLayer: the DeviceLayer of the host emulator. Buffers live in sparse,
// bank-interleaved DRAM; programs are three kernel objects per core run by
// the core scheduler (core.cpp).
#include <chrono>
#include <cstring>
#include <unordered_map>

#include "emu.hpp"
#include "runner.hpp"

namespace zyx::emu {

namespace {

constexpr uint64_t kDramBase = 64 * 1024;  // first bank address handed out

struct Buffer {
  uint64_t address = 0, size = 0, page_size = 0, aligned_page = 0, span = 0;
};

class EmuLayer final : public DeviceLayer {
 public:
  EmuLayer(Board board, int chip, std::string cache_dir)
      : board_(std::move(board)),
        chip_(chip),
        dram_(board_.dram_banks, board_.dram_bank_size),
        dram_alloc_(kDramBase, board_.dram_bank_size, board_.dram_alignment),
        builder_(std::move(cache_dir), board_),
        runner_(board_, dram_, builder_) {}

  DeviceDesc describe() override { return describe_board(board_, chip_); }

  uint64_t alloc(uint64_t size, uint64_t page_size, uint64_t* address) override {
    if (size == 0) throw Error("invalid_argument", "alloc: size must be > 0");
    if (page_size == 0) throw Error("invalid_argument", "alloc: page_size must be > 0");
    if (page_size > board_.dram_bank_size)
      throw Error("invalid_argument", "alloc: page_size " + std::to_string(page_size) + " exceeds the DRAM bank size");
    Buffer b;
    b.size = size;
    b.page_size = page_size;
    b.aligned_page = (page_size + board_.dram_alignment - 1) / board_.dram_alignment * board_.dram_alignment;
    uint64_t pages = (size + page_size - 1) / page_size;
    uint64_t per_bank = (pages + board_.dram_banks - 1) / board_.dram_banks;
    if (per_bank > board_.dram_bank_size / b.aligned_page)
      throw Error("out_of_memory", "alloc: " + std::to_string(size) + " bytes do not fit in " +
                                       std::to_string(board_.dram_banks) + " DRAM banks of " +
                                       std::to_string(board_.dram_bank_size) + " bytes");
    b.span = per_bank * b.aligned_page;
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t addr = dram_alloc_.alloc(b.span);
    if (addr == UINT64_MAX)
      throw Error("out_of_memory", "alloc: no room for " + std::to_string(size) + " bytes (" + std::to_string(b.span) +
                                       " per bank; largest free range " + std::to_string(dram_alloc_.largest_free()) +
                                       ")");
    b.address = addr;
    uint64_t id = next_id_++;
    buffers_[id] = b;
    if (address) *address = addr;
    return id;
  }

  void free(uint64_t id) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = buffers_.find(id);
    if (it == buffers_.end()) throw Error("unknown_buffer", "buffer " + std::to_string(id) + " does not exist");
    dram_alloc_.free(it->second.address, it->second.span);
    buffers_.erase(it);
  }

  BufferInfo buffer_info(uint64_t id) override {
    Buffer b = get(id);
    return BufferInfo{b.address, b.size, b.page_size};
  }

  void write(uint64_t id, uint64_t offset, const uint8_t* src, uint64_t length) override {
    Buffer b = get(id);
    check_range("write", id, b, offset, length);
    for_pages(b, offset, length, [&](uint32_t bank, uint64_t addr, uint64_t pos, uint64_t n) {
      dram_.write(bank, addr, src + pos, n);
    });
  }

  void read(uint64_t id, uint64_t offset, uint8_t* dst, uint64_t length) override {
    Buffer b = get(id);
    check_range("read", id, b, offset, length);
    for_pages(b, offset, length,
              [&](uint32_t bank, uint64_t addr, uint64_t pos, uint64_t n) { dram_.read(bank, addr, dst + pos, n); });
  }

  uint64_t compile(const ProgramDesc& program) override { return runner_.compile(program); }

  uint64_t run(uint64_t program, uint32_t rows, uint32_t cols, const std::vector<RunArg>& args, bool timed) override {
    // Resolve buffer args now so that layouts see a consistent view.
    return runner_.run(program, rows, cols, args, timed, *this);
  }

  void release(uint64_t program) override { runner_.release(program); }

 private:
  Buffer get(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = buffers_.find(id);
    if (it == buffers_.end()) throw Error("unknown_buffer", "buffer " + std::to_string(id) + " does not exist");
    return it->second;
  }

  static void check_range(const char* op, uint64_t id, const Buffer& b, uint64_t offset, uint64_t length) {
    if (offset > b.size || length > b.size - offset)
      throw Error("invalid_argument", std::string(op) + ": range [" + std::to_string(offset) + ", +" +
                                          std::to_string(length) + ") is outside buffer " + std::to_string(id) +
                                          " of " + std::to_string(b.size) + " bytes");
  }

  // Visits the bank pieces of [offset, offset+length): fn(bank, bank address,
  // position in the caller's span, bytes).
  template <typename Fn>
  void for_pages(const Buffer& b, uint64_t offset, uint64_t length, Fn&& fn) {
    uint64_t pos = 0;
    while (pos < length) {
      uint64_t o = offset + pos, page = o / b.page_size, within = o % b.page_size;
      uint64_t n = std::min(length - pos, b.page_size - within);
      uint32_t bank = static_cast<uint32_t>(page % board_.dram_banks);
      uint64_t addr = b.address + (page / board_.dram_banks) * b.aligned_page + within;
      fn(bank, addr, pos, n);
      pos += n;
    }
  }

  Board board_;
  int chip_;
  Dram dram_;
  RangeAllocator dram_alloc_;
  KernelBuilder builder_;
  Runner runner_;
  std::mutex mu_;
  std::unordered_map<uint64_t, Buffer> buffers_;
  uint64_t next_id_ = 1;
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
