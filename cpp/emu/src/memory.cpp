// Device memory of the emulator: sparse DRAM banks, the address allocators,
// per-core L1 windows below 4 GiB, buffer geometry (interleaved and sharded
// page placement) and host transfers, data formats and the cache-key hash.
#include <sys/mman.h>

#if defined(__x86_64__) || defined(__SSE2__)
#include <emmintrin.h>
#define ZYX_EMU_STREAM_STORES 1
#endif

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "emu.hpp"
#include "watcher.hpp"

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

uint64_t RangeAllocator::alloc_top(uint64_t size) {
  size = (size + align_ - 1) / align_ * align_;
  for (auto it = free_.rbegin(); it != free_.rend(); ++it) {
    uint64_t start = it->first, len = it->second;
    if (len < size) continue;
    uint64_t addr = (start + len - size) / align_ * align_;
    if (addr < start) continue;
    free_.erase(std::next(it).base());
    if (addr > start) free_[start] = addr - start;
    if (addr + size < start + len) free_[addr + size] = start + len - (addr + size);
    return addr;
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
      // The rest of each window is not L1: a kernel touching it faults, and
      // the kernel API's fault guard reports it (kernel_state.hpp).
      if (l1_size < kWindow)
        for (uint32_t c = 0; c < cores; c++) mprotect(core_base(c) + l1_size, kWindow - l1_size, PROT_NONE);
      l1_arena_register(base_, bytes_, l1_size_, true);  // strict NOC mode's read guard (watcher.hpp)
      return;
    }
    munmap(p, bytes_);
  }
  throw Error("internal", "emulator: cannot map " + std::to_string(cores) +
                              " L1 windows below 4 GiB (kernels need 32-bit L1 addresses)");
}

L1Arena::~L1Arena() {
  if (base_) l1_arena_register(base_, bytes_, l1_size_, false);
  if (base_) munmap(base_, bytes_);
}

void L1Arena::clear(uint32_t core, uint64_t from, uint64_t to) { std::memset(core_base(core) + from, 0, to - from); }

// ---- bulk copies -------------------------------------------------------------

namespace {
// dst[0, n) = src[0, n), or zeros (Zero, src unused): the one loop behind
// bulk_copy and bulk_zero, its source chosen at compile time so that the
// streaming loop has no branch. With stream (and 256 bytes or more) the
// bytes after dst's 16-byte alignment go 64 a step through non-temporal
// stores; the rest is a plain memcpy or memset.
template <bool Zero>
void bulk_store(uint8_t* dst, const uint8_t* src, uint64_t n, bool stream) {
  auto plain = [&](uint64_t len) {
    if constexpr (Zero) {
      std::memset(dst, 0, len);
    } else {
      std::memcpy(dst, src, len);
      src += len;
    }
    dst += len, n -= len;
  };
#ifdef ZYX_EMU_STREAM_STORES
  if (stream && n >= 256) {
    plain((16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15);
    for (; n >= 64; n -= 64, dst += 64) {
      for (int q = 0; q < 64; q += 16) {
        __m128i v;
        if constexpr (Zero)
          v = _mm_setzero_si128();
        else
          v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + q));
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + q), v);
      }
      if constexpr (!Zero) src += 64;
    }
  }
#else
  (void)stream;
#endif
  plain(n);
}
}  // namespace

void bulk_copy(uint8_t* dst, const uint8_t* src, uint64_t n, bool stream) { bulk_store<false>(dst, src, n, stream); }

void bulk_zero(uint8_t* dst, uint64_t n, bool stream) { bulk_store<true>(dst, nullptr, n, stream); }

void bulk_fence() {
#ifdef ZYX_EMU_STREAM_STORES
  _mm_sfence();
#endif
}

// ---- buffer geometry ---------------------------------------------------------

PageLoc Geometry::locate(uint64_t address, uint64_t page, const Board& b) const {
  PageLoc l;
  l.dram = spec.placement == Placement::Dram;
  if (!sharded()) {
    l.unit = static_cast<uint32_t>(page % units);
    l.addr = address + (page / units) * aligned_page;
    return l;
  }
  const ShardSpec& s = view;
  uint64_t pr = page / s.tensor[1], pc = page % s.tensor[1];
  uint64_t k = (pr / s.shape[0]) * shards_per_row + pc / s.shape[1];
  uint64_t local = (pr % s.shape[0]) * s.shape[1] + pc % s.shape[1];
  l.unit = shard_unit(static_cast<uint32_t>(k), b);
  l.addr = address + local * aligned_page;
  return l;
}

uint64_t Geometry::span(uint64_t pages) const {
  if (sharded()) return shard_pages() * aligned_page;
  return (pages + units - 1) / units * aligned_page;
}

std::string core_text(CoreCoord c) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "(%u,%u)", c.row, c.col);
  return buf;
}

std::string range_text(const CoreRange& r) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%u, %u, %u, %u]", r.start.row, r.start.col, r.end.row, r.end.col);
  return buf;
}

// The layout of a buffer spec on the board. check_alloc and check_program
// (cpp/src/validate.cpp) have checked the spec; what is left here is what
// only this board decides: a page or a shard larger than a DRAM bank or the
// free L1.
Geometry make_geometry(const BufferSpec& spec, const Board& b, const std::string& what) {
  auto bad = [&](const std::string& m) { return Error("invalid_argument", what + ": " + m); };
  Geometry g;
  g.spec = spec;
  bool dram = spec.placement == Placement::Dram;
  uint64_t room = dram ? b.dram_bank_size : b.l1_size - b.l1_unreserved_base;
  if (spec.page_size > room)
    throw bad("page_size " + std::to_string(spec.page_size) + " exceeds the " + (dram ? "DRAM bank" : "free L1") +
              " size (" + std::to_string(room) + " bytes)");
  g.aligned_page = align_up(spec.page_size, dram ? b.dram_alignment : b.l1_alignment);
  if (!spec.shard) {
    g.units = dram ? b.dram_banks : b.cores();
    return g;
  }
  // Height sharding with a shard narrower than the tensor is block sharding
  // of its page-order view (page_order_view): locate and the accessor args
  // read the view.
  g.view = page_order_view(spec);
  const ShardSpec& s = g.view;
  uint64_t sh_rows = (uint64_t(s.tensor[0]) + s.shape[0] - 1) / s.shape[0];
  uint64_t sh_cols = (uint64_t(s.tensor[1]) + s.shape[1] - 1) / s.shape[1];
  g.shards = static_cast<uint32_t>(sh_rows * sh_cols);
  g.shards_per_row = static_cast<uint32_t>(sh_cols);
  g.shard_cores = s.cores.cores(s.orientation == ShardOrientation::ColMajor);
  g.shard_cores.resize(g.shards);
  uint64_t shard_pages = uint64_t(s.shape[0]) * s.shape[1];
  if (shard_pages > room / g.aligned_page)
    throw bad("a shard of " + std::to_string(shard_pages) + " pages of " + std::to_string(g.aligned_page) +
              " bytes exceeds the " + (dram ? "DRAM bank" : "free L1") + " size (" + std::to_string(room) + " bytes)");
  return g;
}

// ---- DeviceMemory ------------------------------------------------------------

constexpr uint64_t kDramBase = 64 * 1024;        // first bank address handed out
constexpr uint64_t kStreamThreshold = 1u << 20;  // host transfers that stream

DeviceMemory::DeviceMemory(const Board& board)
    : board_(board),
      dram_(board.dram_banks, board.dram_bank_size),
      dram_alloc_(kDramBase, board.dram_bank_size, board.dram_alignment),
      // L1 buffers start and end on the DRAM alignment, as tt-metal's L1
      // allocator rounds them (its minimum allocation is the DRAM
      // alignment), so that a DRAM read into one is NOC-aligned.
      l1_alloc_(board.l1_unreserved_base, board.l1_size, std::max(board.l1_alignment, board.dram_alignment)) {}

L1Arena& DeviceMemory::l1() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!l1_) l1_ = std::make_unique<L1Arena>(board_.cores(), board_.l1_size);
  return *l1_;
}

uint64_t DeviceMemory::alloc(uint64_t size, const BufferSpec& spec, uint64_t* address) {
  if (size == 0) throw Error("invalid_argument", "alloc: size must be > 0");
  auto b = std::make_shared<Buffer>();
  b->geo = make_geometry(spec, board_, "alloc");
  b->size = size;
  b->pages = size / spec.page_size + (size % spec.page_size != 0);
  bool dram = spec.placement == Placement::Dram;
  uint64_t room = dram ? board_.dram_bank_size : board_.l1_size - board_.l1_unreserved_base;
  uint64_t units = b->geo.sharded() ? b->geo.shards : b->geo.units;
  uint64_t per_unit = b->geo.sharded() ? b->geo.shard_pages() : (b->pages + units - 1) / units;
  if (per_unit > room / b->geo.aligned_page)
    throw Error("out_of_memory", "alloc: " + std::to_string(size) + " bytes do not fit in " + std::to_string(units) +
                                     (dram ? " DRAM banks of " : " L1 banks with ") + std::to_string(room) + " bytes" +
                                     (dram ? "" : " free"));
  b->span = b->geo.span(b->pages);
  if (!dram) {
    b->holds.assign(board_.cores(), b->geo.sharded() ? 0 : 1);
    for (uint32_t k = 0; k < b->geo.shards; k++) b->holds[b->geo.shard_unit(k, board_)] = 1;
    l1();  // host writes go to the arena
  }
  std::lock_guard<std::mutex> lock(mu_);
  RangeAllocator& a = dram ? dram_alloc_ : l1_alloc_;
  uint64_t addr = dram ? a.alloc(b->span) : a.alloc_top(b->span);
  if (addr == UINT64_MAX)
    throw Error("out_of_memory", "alloc: no room for " + std::to_string(size) + " bytes in " + (dram ? "DRAM" : "L1") +
                                     " (" + std::to_string(b->span) + " per " + (dram ? "bank" : "core") +
                                     "; largest free range " + std::to_string(a.largest_free()) + ")");
  b->address = addr;
  b->id = next_id_++;
  buffers_[b->id] = b;
  if (address) *address = addr;
  return b->id;
}

void DeviceMemory::free(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buffers_.find(id);
  if (it == buffers_.end()) throw Error("unknown_buffer", "buffer " + std::to_string(id) + " does not exist");
  const Buffer& b = *it->second;
  (b.l1() ? l1_alloc_ : dram_alloc_).free(b.address, b.span);
  buffers_.erase(it);
}

std::shared_ptr<const Buffer> DeviceMemory::get(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buffers_.find(id);
  if (it == buffers_.end()) throw Error("unknown_buffer", "buffer " + std::to_string(id) + " does not exist");
  return it->second;
}

std::vector<std::shared_ptr<const Buffer>> DeviceMemory::live_l1() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<const Buffer>> out;
  for (auto& [id, b] : buffers_)
    if (b->l1()) out.push_back(b);
  return out;
}

static void check_range(const char* op, const Buffer& b, uint64_t offset, uint64_t length) {
  if (offset > b.size || length > b.size - offset)
    throw Error("invalid_argument", std::string(op) + ": range [" + std::to_string(offset) + ", +" +
                                        std::to_string(length) + ") is outside buffer " + std::to_string(b.id) +
                                        " of " + std::to_string(b.size) + " bytes");
}

// Visits [offset, offset + length) of the buffer as pieces that are contiguous
// both on the host and in one bank or core: fn(loc, position in the span,
// bytes). Consecutive pages that sit back to back in one place (a shard row,
// a single bank) merge into one piece.
template <typename Fn>
void DeviceMemory::transfer(const Buffer& b, uint64_t offset, uint64_t length, Fn&& fn) {
  const Geometry& g = b.geo;
  const uint64_t ps = g.spec.page_size;
  uint64_t pos = 0, page = offset / ps, within = offset % ps;
  PageLoc run{};
  uint64_t run_pos = 0, run_n = 0;
  if (!g.sharded()) {
    // Interleaved: walk banks and rows incrementally (no division per page).
    uint64_t unit = page % g.units, row = page / g.units;
    while (pos < length) {
      uint64_t n = std::min(length - pos, ps - within);
      PageLoc l{g.spec.placement == Placement::Dram, static_cast<uint32_t>(unit),
                b.address + row * g.aligned_page + within};
      if (run_n && l.unit == run.unit && l.addr == run.addr + run_n && within == 0) {
        run_n += n;
      } else {
        if (run_n) fn(run, run_pos, run_n);
        run = l, run_pos = pos, run_n = n;
      }
      pos += n, within = 0;
      if (++unit == g.units) unit = 0, row++;
    }
  } else {
    while (pos < length) {
      uint64_t n = std::min(length - pos, ps - within);
      PageLoc l = g.locate(b.address, page, board_);
      l.addr += within;
      if (run_n && l.unit == run.unit && l.addr == run.addr + run_n && within == 0) {
        run_n += n;
      } else {
        if (run_n) fn(run, run_pos, run_n);
        run = l, run_pos = pos, run_n = n;
      }
      pos += n, within = 0, page++;
    }
  }
  if (run_n) fn(run, run_pos, run_n);
}

void DeviceMemory::write(uint64_t id, uint64_t offset, const uint8_t* src, uint64_t length) {
  auto b = get(id);
  check_range("write", *b, offset, length);
  bool stream = length >= kStreamThreshold;
  if (b->l1()) {
    L1Arena& a = l1();
    transfer(*b, offset, length, [&](const PageLoc& l, uint64_t pos, uint64_t n) {
      bulk_copy(a.core_base(l.unit) + l.addr, src + pos, n, stream);
    });
  } else {
    transfer(*b, offset, length, [&](const PageLoc& l, uint64_t pos, uint64_t n) {
      // Within one 1 MiB chunk per step; pieces never leave the bank.
      for (uint64_t done = 0; done < n;) {
        uint64_t addr = l.addr + done, k = std::min(n - done, Dram::kChunk - addr % Dram::kChunk);
        bulk_copy(dram_.chunk_for_write(l.unit, addr), src + pos + done, k, stream);
        done += k;
      }
    });
  }
  if (stream) bulk_fence();
}

void DeviceMemory::read(uint64_t id, uint64_t offset, uint8_t* dst, uint64_t length) {
  auto b = get(id);
  check_range("read", *b, offset, length);
  bool stream = length >= kStreamThreshold;
  if (b->l1()) {
    L1Arena& a = l1();
    transfer(*b, offset, length, [&](const PageLoc& l, uint64_t pos, uint64_t n) {
      bulk_copy(dst + pos, a.core_base(l.unit) + l.addr, n, stream);
    });
  } else {
    auto piece = [&](const PageLoc& l, uint64_t pos, uint64_t n) {
      for (uint64_t done = 0; done < n;) {
        uint64_t addr = l.addr + done, k = std::min(n - done, Dram::kChunk - addr % Dram::kChunk);
        if (const uint8_t* p = dram_.chunk_for_read(l.unit, addr))
          bulk_copy(dst + pos + done, p, k, stream);
        else
          bulk_zero(dst + pos + done, k, stream);
        done += k;
      }
    };
    const Geometry& g = b->geo;
    const uint64_t ps = g.spec.page_size;
    uint64_t p0 = (offset + ps - 1) / ps, p1 = (offset + length) / ps;
    if (stream && !g.sharded() && g.units > 1 && p1 > p0 + g.units) {
      // Whole pages bank by bank, so that each bank is read front to back
      // (the destination takes streaming stores in any order); the partial
      // pages at either end as usual.
      transfer(*b, offset, p0 * ps - offset, piece);
      for (uint32_t u = 0; u < g.units; u++) {
        uint64_t p = p0 + (u + g.units - p0 % g.units) % g.units;
        for (uint64_t row = p / g.units; p < p1; p += g.units, row++)
          piece(PageLoc{true, u, b->address + row * g.aligned_page}, p * ps - offset, ps);
      }
      transfer(*b, p1 * ps, offset + length - p1 * ps, [&](const PageLoc& l, uint64_t pos, uint64_t n) {
        piece(l, pos + p1 * ps - offset, n);
      });
    } else {
      transfer(*b, offset, length, piece);
    }
  }
  if (stream) bulk_fence();
}

// ---- formats ---------------------------------------------------------------

const char* format_name(Format f) { return data_format_name(f); }

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

bool format_known(Format f) { return parse_data_format(data_format_name(f)).has_value(); }

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
