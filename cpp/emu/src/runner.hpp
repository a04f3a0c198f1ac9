// The program runner: per-core state, circular buffers, the destination
// register file and the scheduler that runs every core's reader, compute and
// writer.
#pragma once

#include <ucontext.h>

#include <array>
#include <cmath>
#include <cstring>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "compute_state.hpp"
#include "emu.hpp"

namespace zyx::emu {

struct CoreState;
struct RunState;
struct Worker;

// One circular buffer of one core: a bounded queue of pages in L1.
struct CircularBuffer {
  bool configured = false;
  Format format = Format::Invalid;
  uint32_t page_size = 0, num_pages = 0;
  uint64_t offset = 0;  // L1 offset of the first page
  uint32_t pushed = 0, popped = 0;  // pages ever pushed and popped
  uint32_t wr_page = 0, rd_page = 0;
  uint32_t reserved = 0;   // pages reserved by the producer
  uint32_t pack_next = 0;  // next sequential pack_tile position
  uint32_t available() const { return pushed - popped; }
};

// What a blocked section waits for.
struct Wait {
  enum Kind { None, CBFront, CBBack, Word } kind = None;
  uint32_t cb = 0, pages = 0;
  volatile uint32_t* word = nullptr;
  uint32_t value = 0, cmp = 0;
};

// One section of one core, run as a fiber on a worker thread.
struct Fiber {
  CoreState* core = nullptr;
  SectionKind kind = SectionKind::Reader;
  std::shared_ptr<KernelObject> kernel;
  std::vector<uint32_t> args;  // runtime args
  ucontext_t ctx{};
  void* stack = nullptr;
  bool started = false, done = false, blocked = false;
  Wait wait;
  std::chrono::steady_clock::time_point blocked_since;
  Worker* worker = nullptr;
};

enum class DstKind : uint8_t { F32, BF16, F16, Int };

struct CoreState {
  uint32_t row = 0, col = 0, index = 0;
  uint8_t* l1 = nullptr;  // host base of this core's L1 window
  RunState* run = nullptr;
  std::array<CircularBuffer, 32> cbs{};
  std::array<Fiber, 3> fibers{};
  // Destination register file: 16 tiles of 1024 words (f32 or i32 bits).
  alignas(64) std::array<std::array<uint32_t, 1024>, 16> dst{};
  std::array<DstKind, 16> dst_kind{};
  uint32_t dst_written = 0;  // bit per tile written since acquire
  bool dst_acquired = false;
  ComputeState cstate;  // compute configuration (compute_state.hpp)
};

// Shared by every core of one run.
struct RunState {
  const Board* board = nullptr;
  Dram* dram = nullptr;
  L1Arena* l1 = nullptr;
  uint32_t rows = 0, cols = 0;
  bool fp32_dest_acc = false;
  std::array<std::vector<uint32_t>, 3> common_args;  // by SectionKind
  std::unordered_map<uint32_t, uint32_t> page_sizes;  // buffer address -> page size
  std::chrono::milliseconds timeout{10000};
  std::atomic<bool> cancel{false};
  std::mutex err_mu;
  std::string err_code, err_msg;
  std::vector<CoreState*> cores;  // owned by the Runner, reused across runs
  std::atomic<uint32_t> next_core{0};
  void fail(const std::string& code, const std::string& msg);
};

// A compiled program.
struct Program {
  ProgramDesc desc;
  // Kernel objects built at compile time (compile args were constants).
  std::array<std::shared_ptr<KernelObject>, 3> prebuilt;
  // Every core's circular buffers as a run starts them, laid out in L1.
  std::array<CircularBuffer, 32> cbs{};
};

class Runner {
 public:
  Runner(const Board& board, Dram& dram, KernelBuilder& builder);
  ~Runner();
  uint64_t compile(const ProgramDesc& program);
  uint64_t run(uint64_t program, uint32_t rows, uint32_t cols, const std::vector<RunArg>& args, bool timed,
               DeviceLayer& layer);
  void release(uint64_t program);

  // Semaphores: kSemaphores words of 16 bytes each just below the unreserved base.
  static constexpr uint32_t kSemaphores = 16;
  static constexpr uint32_t kSemaphoreStride = 16;
  static uint64_t semaphore_offset(const Board& board, uint32_t id) {
    return board.l1_unreserved_base - uint64_t(kSemaphores - id) * kSemaphoreStride;
  }

 private:
  void execute(RunState& rs);
  void* take_stack();
  void give_stack(void* s);

  const Board& board_;
  Dram& dram_;
  KernelBuilder& builder_;
  std::unique_ptr<L1Arena> l1_;
  std::mutex mu_;
  std::unordered_map<uint64_t, std::shared_ptr<Program>> programs_;
  uint64_t next_id_ = 1;
  std::mutex stack_mu_;
  std::vector<void*> stacks_;
  std::mutex run_mu_;
  std::vector<std::unique_ptr<CoreState>> core_pool_;  // by launch position
};

// The API table handed to kernel objects.
const zyx_emu_api* kernel_api();

// Noc address helpers shared by the runtime and (mirrored) the headers.
// A NOC address is (y << 42) | (x << 36) | local address. DRAM bank b is
// node (0, b); worker core (row r, col c) is node (c + 1, r + 1).
constexpr uint32_t kNocLocalBits = 36;
inline uint64_t noc_addr(uint32_t x, uint32_t y, uint64_t local) {
  return (uint64_t(y) << (kNocLocalBits + 6)) | (uint64_t(x) << kNocLocalBits) | (local & ((1ull << 36) - 1));
}

// Tile math (tile_math.cpp).
void tile_unpack(const uint8_t* src, Format f, uint32_t* out, DstKind kind);
void tile_pack(const uint32_t* src, DstKind kind, uint8_t* dst, Format f);
DstKind dst_kind_for(Format f, bool fp32_dest_acc);
void dst_round(uint32_t* v, DstKind kind);
// Scalar conversions, inline because the tile loops live on them.
inline uint32_t f2u(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float u2f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float bf16_to_f32(uint16_t h) { return u2f(uint32_t(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
  uint32_t u = f2u(f);
  if ((u & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest, ties to even
  return static_cast<uint16_t>(u >> 16);
}

inline float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0) {
    if (man == 0) return u2f(sign);
    float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return u2f(sign | 0x7f800000 | (man << 13));
  return u2f(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t f32_to_f16(float f) {
  uint32_t u = f2u(f), sign = (u >> 16) & 0x8000;
  uint32_t a = u & 0x7fffffff;
  if (a > 0x7f800000) return static_cast<uint16_t>(sign | 0x7e00);
  if (a >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // rounds to inf
  if (a < 0x38800000) {  // subnormal half (or zero)
    float v = std::fabs(f) * 16777216.0f;  // 2^24: units of the smallest subnormal
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(v)));
  }
  uint32_t r = a + 0xfff + ((a >> 13) & 1);
  return static_cast<uint16_t>(sign | ((r - 0x38000000) >> 13));
}



}  // namespace zyx::emu
