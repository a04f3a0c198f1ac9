// Device memory of the emulator: sparse DRAM banks, the DRAM address
// allocator, per-core L1 windows below 4 GiB, data formats and the cache-key
// hash.
#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "emu.hpp"

namespace zyx::emu {

// ---- Dram ------------------------------------------------------------------

Dram::Dram(uint32_t banks, uint64_t bank_size)
    : banks_(banks), bank_size_(bank_size), chunks_per_bank_((bank_size + kChunk - 1) / kChunk) {
  uint64_t n = chunks_per_bank_ * banks_;
  table_.reset(new std::atomic<uint8_t*>[n]);
  for (uint64_t i = 0; i < n; i++) table_[i].store(nullptr, std::memory_order_relaxed);
}

Dram::~Dram() {
  uint64_t n = chunks_per_bank_ * banks_;
  for (uint64_t i = 0; i < n; i++) std::free(table_[i].load());
}

uint8_t* Dram::chunk_for_write(uint64_t index) {
  uint8_t* p = table_[index].load(std::memory_order_acquire);
  if (p) return p;
  auto* fresh = static_cast<uint8_t*>(std::calloc(1, kChunk));
  if (!fresh) throw Error("out_of_memory", "emulated DRAM: host memory exhausted");
  if (table_[index].compare_exchange_strong(p, fresh, std::memory_order_acq_rel)) {
    committed_.fetch_add(1);
    return fresh;
  }
  std::free(fresh);
  return p;
}

void Dram::write(uint32_t bank, uint64_t addr, const uint8_t* src, uint64_t len) {
  if (bank >= banks_ || addr > bank_size_ || len > bank_size_ - addr)
    throw Error("run_error", "DRAM write out of range: bank " + std::to_string(bank) + " address " +
                                 std::to_string(addr) + " length " + std::to_string(len));
  while (len) {
    uint64_t ci = addr / kChunk, off = addr % kChunk, n = std::min<uint64_t>(len, kChunk - off);
    std::memcpy(chunk_for_write(uint64_t(bank) * chunks_per_bank_ + ci) + off, src, n);
    src += n, addr += n, len -= n;
  }
}

void Dram::read(uint32_t bank, uint64_t addr, uint8_t* dst, uint64_t len) const {
  if (bank >= banks_ || addr > bank_size_ || len > bank_size_ - addr)
    throw Error("run_error", "DRAM read out of range: bank " + std::to_string(bank) + " address " +
                                 std::to_string(addr) + " length " + std::to_string(len));
  while (len) {
    uint64_t ci = addr / kChunk, off = addr % kChunk, n = std::min<uint64_t>(len, kChunk - off);
    const uint8_t* p = table_[uint64_t(bank) * chunks_per_bank_ + ci].load(std::memory_order_acquire);
    if (p)
      std::memcpy(dst, p + off, n);
    else
      std::memset(dst, 0, n);
    dst += n, addr += n, len -= n;
  }
}

// ---- RangeAllocator --------------------------------------------------------

uint64_t RangeAllocator::alloc(uint64_t size) {
  size = (size + align_ - 1) / align_ * align_;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second >= size) {
      uint64_t addr = it->first, rest = it->second - size;
      free_.erase(it);
      if (rest) free_[addr + size] = rest;
      return addr;
    }
  }
  return UINT64_MAX;
}

void RangeAllocator::free(uint64_t addr, uint64_t size) {
  size = (size + align_ - 1) / align_ * align_;
  auto it = free_.emplace(addr, size).first;
  auto next = std::next(it);
  if (next != free_.end() && it->first + it->second == next->first) {
    it->second += next->second;
    free_.erase(next);
  }
  if (it != free_.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      free_.erase(it);
    }
  }
}

uint64_t RangeAllocator::largest_free() const {
  uint64_t m = 0;
  for (auto& [a, s] : free_) m = std::max(m, s);
  return m;
}

// ---- L1Arena ---------------------------------------------------------------

L1Arena::L1Arena(uint32_t cores, uint64_t l1_size) : cores_(cores), l1_size_(l1_size) {
  if (l1_size > kWindow) throw Error("internal", "L1 larger than its window");
  bytes_ = uint64_t(cores) * kWindow;
  // Walk hint addresses in the low 4 GiB until the kernel gives us the exact
  // range (kernels use 32-bit L1 addresses as pointers).
  for (uint64_t hint = 0x10000000; hint + bytes_ <= 0xFFFFFFFFull; hint += 0x4000000) {
    void* p = mmap(reinterpret_cast<void*>(hint), bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) continue;
    if (reinterpret_cast<uint64_t>(p) == hint) {
      base_ = static_cast<uint8_t*>(p);
      return;
    }
    munmap(p, bytes_);
  }
  throw Error("internal", "emulator: cannot map " + std::to_string(cores) +
                              " L1 windows below 4 GiB (kernels need 32-bit L1 addresses)");
}

L1Arena::~L1Arena() {
  if (base_) munmap(base_, bytes_);
}

void L1Arena::clear(uint32_t core, uint64_t from, uint64_t to) { std::memset(core_base(core) + from, 0, to - from); }

// ---- formats ---------------------------------------------------------------

Format parse_format(const std::string& s) {
  if (s == "Float32") return Format::Float32;
  if (s == "Float16_b") return Format::Float16_b;
  if (s == "Float16") return Format::Float16;
  if (s == "Int32") return Format::Int32;
  if (s == "UInt32") return Format::UInt32;
  if (s == "UInt16") return Format::UInt16;
  if (s == "UInt8") return Format::UInt8;
  if (s == "Bfp8_b") return Format::Bfp8_b;
  if (s == "Bfp4_b") return Format::Bfp4_b;
  if (s == "Int8") return Format::Int8;
  throw Error("invalid_argument", "unknown data format \"" + s +
                                      "\" (want Float32, Float16_b, Float16, Bfp8_b, Bfp4_b, Int32, UInt32, "
                                      "UInt16, Int8 or UInt8)");
}

const char* format_name(Format f) {
  switch (f) {
    case Format::Float32: return "Float32";
    case Format::Float16: return "Float16";
    case Format::Float16_b: return "Float16_b";
    case Format::Int32: return "Int32";
    case Format::UInt16: return "UInt16";
    case Format::UInt32: return "UInt32";
    case Format::UInt8: return "UInt8";
    case Format::Bfp8_b: return "Bfp8_b";
    case Format::Bfp4_b: return "Bfp4_b";
    case Format::Int8: return "Int8";
    default: return "Invalid";
  }
}

uint32_t format_bytes(Format f) {
  switch (f) {
    case Format::Float32:
    case Format::Int32:
    case Format::UInt32: return 4;
    case Format::Float16:
    case Format::Float16_b:
    case Format::UInt16: return 2;
    case Format::UInt8:
    case Format::Int8: return 1;
    default: return 0;
  }
}

bool format_is_block(Format f) { return f == Format::Bfp8_b || f == Format::Bfp4_b; }

uint32_t format_tile_bytes(Format f) {
  if (f == Format::Bfp8_b) return 64 + 1024;  // 64 shared exponents, then 1024 sign-magnitude bytes
  if (f == Format::Bfp4_b) return 64 + 512;   // 64 shared exponents, then 1024 nibbles
  return 1024 * format_bytes(f);
}

bool format_is_int(Format f) {
  return f == Format::Int32 || f == Format::UInt32 || f == Format::UInt16 || f == Format::UInt8 || f == Format::Int8;
}

const char* section_name(SectionKind k) {
  switch (k) {
    case SectionKind::Reader: return "reader";
    case SectionKind::Compute: return "compute";
    case SectionKind::Writer: return "writer";
  }
  return "?";
}

// ---- Hasher ----------------------------------------------------------------

void Hasher::add(const void* p, size_t n) {
  auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < n; i++) {
    a_ = (a_ ^ b[i]) * 0x100000001b3ull;
    b_ = (b_ ^ b[i]) * 0x00000100000001b3ull + 0x9e3779b97f4a7c15ull;
    b_ ^= b_ >> 29;
  }
}

std::string Hasher::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a_),
                static_cast<unsigned long long>(b_));
  return buf;
}

}  // namespace zyx::emu
