// Internal declarations of the Tensix emulator (zyx_emu). The public entry
// point is zyx::make_emu_layer (device_layer.hpp); everything here is the
// library's own.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device_layer.hpp"
#include "zyx_emu/abi.h"

namespace zyx::emu {

// ---- board presets ---------------------------------------------------------

struct Board {
  std::string name;  // n150, n300, p100a, p150a, p300c
  std::string arch;  // wormhole_b0, blackhole
  int chips = 1;
  uint32_t rows = 0, cols = 0;             // logical worker grid
  std::vector<uint32_t> harvested_rows;    // physical rows (Wormhole)
  std::vector<uint32_t> harvested_cols;    // physical columns (Blackhole)
  uint32_t dram_banks = 0;
  uint64_t dram_bank_size = 0;
  uint64_t dram_alignment = 32;
  uint64_t l1_size = 0;
  uint64_t l1_unreserved_base = 0;
};

// Returns the preset for a board name, or throws invalid_argument naming the
// known boards.
Board board_preset(const std::string& name);
std::vector<std::string> board_names();
DeviceDesc describe_board(const Board& b, int chip);

// ---- device memory ---------------------------------------------------------

// Sparse DRAM: banks of bank_size bytes, backed by 1 MiB chunks allocated on
// first write. Reads of untouched memory return zeros. Safe for concurrent
// use from many threads (chunks are installed with compare-and-swap).
class Dram {
 public:
  Dram(uint32_t banks, uint64_t bank_size);
  ~Dram();
  Dram(const Dram&) = delete;
  Dram& operator=(const Dram&) = delete;
  void write(uint32_t bank, uint64_t addr, const uint8_t* src, uint64_t len);
  void read(uint32_t bank, uint64_t addr, uint8_t* dst, uint64_t len) const;
  uint64_t committed_bytes() const { return committed_.load() * kChunk; }
  static constexpr uint64_t kChunk = 1u << 20;

 private:
  uint8_t* chunk_for_write(uint64_t index);
  uint32_t banks_;
  uint64_t bank_size_;
  uint64_t chunks_per_bank_;
  std::unique_ptr<std::atomic<uint8_t*>[]> table_;
  std::atomic<uint64_t> committed_{0};
};

// Address-space allocator for one DRAM bank range [base, limit): first fit,
// coalescing on free. Addresses are the same in every bank.
class RangeAllocator {
 public:
  RangeAllocator(uint64_t base, uint64_t limit, uint64_t align) : base_(base), limit_(limit), align_(align) {
    free_[base] = limit - base;
  }
  // Returns the address, or UINT64_MAX when nothing fits.
  uint64_t alloc(uint64_t size);
  void free(uint64_t addr, uint64_t size);
  uint64_t largest_free() const;

 private:
  uint64_t base_, limit_, align_;
  std::map<uint64_t, uint64_t> free_;  // addr -> size
};

// Per-core L1 memory, mapped below 4 GiB so that a 32-bit L1 address handed
// to a kernel is also a valid host pointer (kernels cast get_write_ptr() to
// pointers). Core k's L1 is the 2 MiB-aligned window base + k * kWindow; an
// L1 address means window-relative offset addr & (kWindow - 1), which is what
// the NOC functions use, so raw offsets from the host work too.
class L1Arena {
 public:
  static constexpr uint64_t kWindow = 2u << 20;
  L1Arena(uint32_t cores, uint64_t l1_size);
  ~L1Arena();
  L1Arena(const L1Arena&) = delete;
  L1Arena& operator=(const L1Arena&) = delete;
  uint8_t* core_base(uint32_t core) const { return base_ + uint64_t(core) * kWindow; }
  uint32_t core_addr(uint32_t core, uint64_t offset) const {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(core_base(core)) + offset);
  }
  uint32_t cores() const { return cores_; }
  uint64_t l1_size() const { return l1_size_; }
  void clear(uint32_t core, uint64_t from, uint64_t to);

 private:
  uint8_t* base_ = nullptr;
  uint64_t bytes_ = 0;
  uint32_t cores_;
  uint64_t l1_size_;
};

// ---- formats ---------------------------------------------------------------

// tt-metal DataFormat numbering (the values kernels see).
enum class Format : uint32_t {
  Float32 = 0,
  Float16 = 1,
  Float16_b = 5,
  Bfp8_b = 6,
  Bfp4_b = 7,
  Int32 = 8,
  UInt16 = 9,
  Int8 = 14,
  UInt32 = 24,
  UInt8 = 30,
  Invalid = 0xff,
};
Format parse_format(const std::string& s);  // throws invalid_argument
const char* format_name(Format f);
uint32_t format_bytes(Format f);  // bytes per element; 0 for block-float formats
bool format_is_int(Format f);
bool format_is_block(Format f);       // Bfp8_b, Bfp4_b: shared exponent per 16 values
uint32_t format_tile_bytes(Format f);  // bytes of a 32x32 tile

// ---- kernels ---------------------------------------------------------------

enum class SectionKind { Reader = 0, Compute = 1, Writer = 2 };
const char* section_name(SectionKind k);

// A loaded kernel object.
struct KernelObject {
  void* handle = nullptr;
  void (*run)() = nullptr;
  std::string path;
  ~KernelObject();
};

// Builds kernel objects with the host compiler and caches them on disk and in
// memory, keyed by a hash of everything that goes into the build.
class KernelBuilder {
 public:
  KernelBuilder(std::string cache_dir, const Board& board);
  std::shared_ptr<KernelObject> get(SectionKind kind, const Section& section, const std::vector<uint32_t>& compile_args,
                                    const ProgramDesc& program);
  std::string include_dir() const { return include_dir_; }
  // Statistics for benchmarks and tests.
  uint64_t compiles() const { return compiles_.load(); }
  uint64_t disk_hits() const { return disk_hits_.load(); }

 private:
  std::string build(const std::string& key, SectionKind kind, const Section& section,
                    const std::vector<uint32_t>& compile_args, const ProgramDesc& program);
  std::string cache_dir_, include_dir_, cxx_, cxxflags_, header_hash_;
  Board board_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<KernelObject>> loaded_;
  std::map<std::string, std::shared_ptr<std::mutex>> building_;
  std::atomic<uint64_t> compiles_{0}, disk_hits_{0};
};

// ---- hashing ---------------------------------------------------------------

// A 128-bit FNV-1a style digest as 32 hex characters (cache keys, not security).
class Hasher {
 public:
  void add(const void* p, size_t n);
  void add(const std::string& s) {
    uint64_t n = s.size();
    add(&n, sizeof n);
    add(s.data(), s.size());
  }
  void add_u64(uint64_t v) { add(&v, sizeof v); }
  std::string hex() const;

 private:
  uint64_t a_ = 0xcbf29ce484222325ull, b_ = 0x84222325cbf29ce4ull;
};

}  // namespace zyx::emu
