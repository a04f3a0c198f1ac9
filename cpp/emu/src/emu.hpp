// Internal declarations of the Tensix emulator (zyx_emu). The public entry
// point is zyx::make_emu_layer (device_layer.hpp); everything here is the
// library's own.
#pragma once

#include <array>
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

struct Board : MemoryDesc {
  std::string name;  // n150, n300, p100a, p150a, p300c
  std::string arch;  // wormhole_b0, blackhole
  int chips = 1;
  uint32_t rows = 0, cols = 0;             // logical worker grid
  std::vector<uint32_t> harvested_rows;    // physical rows (Wormhole)
  std::vector<uint32_t> harvested_cols;    // physical columns (Blackhole)
  uint32_t cores() const { return rows * cols; }  // = L1 banks
};

// Returns the preset for a board name, or throws invalid_argument naming the
// known boards.
Board board_preset(const std::string& name);
std::vector<std::string> board_names();
DeviceDesc describe_board(const Board& b, int chip);

// ---- NOC coordinates ---------------------------------------------------------
//
// A NOC address is (y << 42) | (x << 36) | local address (36 bits). DRAM bank
// b is the node (0, b); the worker at logical (row r, col c) is the node
// (c + 1, r + 1). The kernel headers (zyx_emu/dataflow.h) follow the same
// scheme; describe() reports it in DeviceDesc::noc.
constexpr uint32_t kNocLocalBits = 36;
inline uint64_t noc_addr(uint32_t x, uint32_t y, uint64_t local) {
  return (uint64_t(y) << (kNocLocalBits + 6)) | (uint64_t(x) << kNocLocalBits) | (local & ((1ull << 36) - 1));
}
inline uint32_t worker_noc_x(uint32_t col) { return col + 1; }
inline uint32_t worker_noc_y(uint32_t row) { return row + 1; }
inline uint32_t dram_noc_x(uint32_t /*bank*/) { return 0; }
inline uint32_t dram_noc_y(uint32_t bank) { return bank; }

inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// "(row,col)" and "[r0, c0, r1, c1]" for messages.
std::string core_text(CoreCoord c);
std::string range_text(const CoreRange& r);

// Semaphores: kSemaphoresPerCore words, kSemaphoreStride bytes apart, just
// below the unreserved base of every core's L1.
constexpr uint32_t kSemaphoresPerCore = 16;
constexpr uint32_t kSemaphoreStride = 16;
inline uint64_t semaphore_offset(const Board& board, uint32_t id) {
  return board.l1_unreserved_base - uint64_t(kSemaphoresPerCore - id) * kSemaphoreStride;
}

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
  // The chunk holding bank address addr: its memory for writing (allocated
  // on demand), or for reading (nullptr while untouched). The caller keeps to
  // [addr, the chunk's end) and has checked addr < bank_size.
  uint8_t* chunk_for_write(uint32_t bank, uint64_t addr) {
    return chunk_for_write(uint64_t(bank) * chunks_per_bank_ + addr / kChunk) + addr % kChunk;
  }
  const uint8_t* chunk_for_read(uint32_t bank, uint64_t addr) const {
    const uint8_t* p = table_[uint64_t(bank) * chunks_per_bank_ + addr / kChunk].load(std::memory_order_acquire);
    return p ? p + addr % kChunk : nullptr;
  }
  uint32_t banks() const { return banks_; }
  uint64_t bank_size() const { return bank_size_; }
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

// Copies n bytes; large host transfers stream (non-temporal stores on x86),
// so that they do not pay for reading the destination into the cache.
void bulk_copy(uint8_t* dst, const uint8_t* src, uint64_t n, bool stream);
void bulk_zero(uint8_t* dst, uint64_t n, bool stream);
void bulk_fence();

// Address-space allocator for one range [base, limit): first fit from the
// bottom (alloc) or last fit from the top (alloc_top), coalescing on free.
// The same addresses are used in every bank (DRAM) or core (L1).
class RangeAllocator {
 public:
  RangeAllocator(uint64_t base, uint64_t limit, uint64_t align) : base_(base), limit_(limit), align_(align) {
    free_[base] = limit - base;
  }
  // Returns the address, or UINT64_MAX when nothing fits.
  uint64_t alloc(uint64_t size);
  uint64_t alloc_top(uint64_t size);
  void free(uint64_t addr, uint64_t size);
  uint64_t largest_free() const;

 private:
  uint64_t base_, limit_, align_;
  std::map<uint64_t, uint64_t> free_;  // addr -> size
};

// Per-core L1 memory, mapped below 4 GiB so that a 32-bit L1 address handed
// to a kernel is also a valid host pointer (kernels cast get_write_ptr() to
// pointers). Core k (k = row * cols + col, also its L1 bank) has the 2
// MiB-aligned window base + k * kWindow; an L1 address means the
// window-relative offset addr & (kWindow - 1), which is what the NOC functions
// use, so both a core's pointers and plain offsets from the host work.
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
  // Whether a 32-bit value is a pointer into some core's window.
  bool contains(uint64_t addr) const {
    uint64_t b = reinterpret_cast<uintptr_t>(base_);
    return addr >= b && addr < b + bytes_;
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

// ---- buffers -----------------------------------------------------------------

// Where one page of a buffer lives: a DRAM bank or a core's L1 (`unit` is the
// bank, or the core index row * cols + col), at local address `addr`.
struct PageLoc {
  bool dram = true;
  uint32_t unit = 0;
  uint64_t addr = 0;
};

// The placement of a buffer's pages, from its BufferSpec alone (the same for
// every buffer of that spec, so a program's declared layout has one too).
struct Geometry {
  BufferSpec spec;
  uint64_t aligned_page = 0;  // page stride in a bank or shard
  uint32_t units = 0;         // interleaved: DRAM banks or L1 banks
  // Sharded: the holder of shard k (a worker core for L1; for DRAM the bank
  // shard_cores[k].col, row 0), the number of shards and shards per row.
  std::vector<CoreCoord> shard_cores;
  uint32_t shards = 0, shards_per_row = 0;
  // Sharded: the spec's shards in tt-metal's page order (page_order_view),
  // which placement and the accessor args follow; spec keeps what was given.
  ShardSpec view;
  uint64_t shard_pages() const { return spec.shard ? uint64_t(spec.shard->shape[0]) * spec.shard->shape[1] : 0; }
  bool sharded() const { return spec.layout != BufferLayout::Interleaved; }
  // The unit of shard k (DRAM bank or core index).
  uint32_t shard_unit(uint32_t k, const Board& b) const {
    const CoreCoord& c = shard_cores[k];
    return spec.placement == Placement::Dram ? c.col : c.row * b.cols + c.col;
  }
  // Where page `page` of a buffer at `address` lives (page < tensor pages
  // when sharded).
  PageLoc locate(uint64_t address, uint64_t page, const Board& b) const;
  // Bytes per bank (interleaved) or per shard holder (sharded) for a buffer
  // of `pages` pages.
  uint64_t span(uint64_t pages) const;
};

// Checks a spec for a buffer of `size` bytes (size 0: a declaration, no size
// check) and returns its geometry; invalid_argument names `what`.
Geometry make_geometry(const BufferSpec& spec, const Board& b, const std::string& what);

struct Buffer {
  uint64_t id = 0, address = 0, size = 0, pages = 0;
  uint64_t span = 0;  // reserved bytes per bank / core
  Geometry geo;
  std::vector<uint8_t> holds;  // L1: by core index, whether the core holds part of it
  BufferInfo info() const { return BufferInfo{address, size, geo.spec}; }
  bool l1() const { return geo.spec.placement == Placement::L1; }
  // L1: whether core `core` (row * cols + col) holds part of the buffer
  // (every core for interleaved, the shard holders for sharded); it holds
  // `span` bytes at `address` there.
  bool on_core(uint32_t core) const { return l1() && core < holds.size() && holds[core]; }
};

// Every buffer of a layer: DRAM and L1 address allocation, host writes and
// reads scattered over banks, cores and shards. Thread-safe.
class DeviceMemory {
 public:
  explicit DeviceMemory(const Board& board);
  uint64_t alloc(uint64_t size, const BufferSpec& spec, uint64_t* address);
  void free(uint64_t id);
  // The buffer, or unknown_buffer.
  std::shared_ptr<const Buffer> get(uint64_t id) const;
  // Every live L1 buffer.
  std::vector<std::shared_ptr<const Buffer>> live_l1() const;
  void write(uint64_t id, uint64_t offset, const uint8_t* src, uint64_t length);
  void read(uint64_t id, uint64_t offset, uint8_t* dst, uint64_t length);
  Dram& dram() { return dram_; }
  L1Arena& l1();  // mapped on first use

 private:
  template <typename Fn>
  void transfer(const Buffer& b, uint64_t offset, uint64_t length, Fn&& fn);
  const Board& board_;
  Dram dram_;
  mutable std::mutex mu_;
  RangeAllocator dram_alloc_, l1_alloc_;
  std::unique_ptr<L1Arena> l1_;
  std::map<uint64_t, std::shared_ptr<const Buffer>> buffers_;
  uint64_t next_id_ = 1;
};

// ---- formats ---------------------------------------------------------------

// The emulator uses tt-metal's DataFormat numbering (device_layer.hpp).
using Format = DataFormat;
const char* format_name(Format f);
uint32_t format_bytes(Format f);  // element bytes; 0 for block floats
bool format_is_int(Format f);
// Whether f is one of the formats a CB may hold (parse_data_format's set).
bool format_known(Format f);
bool format_is_block(Format f);        // Bfp8_b, Bfp4_b: shared exponent per 16 values
uint32_t format_tile_bytes(Format f);  // bytes of a 32x32 tile

// ---- kernels ---------------------------------------------------------------

// The processor a kernel runs on names its section in messages
// (processor_name in device_layer.hpp).

// A loaded kernel object.
struct KernelObject {
  void* handle = nullptr;
  void (*run)() = nullptr;
  std::string path;
  // The bytes of the kernel's own mutable globals (the stack check: on a
  // card they share the processor's local data memory with the stack).
  uint32_t globals_bytes = 0;
  // A compute kernel built three times (unpack, math, pack): the three
  // objects; this one then has no object of its own.
  std::array<std::shared_ptr<KernelObject>, 3> triscs;
  ~KernelObject();
};

// Everything that goes into one kernel object (and into its cache key).
struct BuildSpec {
  std::string name;          // the kernel's name in messages: reader, compute, writer, …
  std::string program_name;  // for messages only; not part of the key
  int processor = 0;         // 0 riscv_0 (BRISC), 1 riscv_1 (NCRISC), 2 compute (the TRISCs)
  // A compute kernel's build: 0 the single build (unpack, math and pack in
  // one), 1-3 TRISC_UNPACK, TRISC_MATH, TRISC_PACK.
  int trisc = 0;
  uint32_t noc = 0;          // data movement: its default NOC (noc_index)
  const std::string* source = nullptr;
  // The kernel file's path in the program's include tree; null or "": the
  // kernel is compiled at the tree's root, under its name.
  const std::string* path = nullptr;
  const std::map<std::string, std::string>* defines = nullptr;
  std::vector<uint32_t> compile_args;
  std::vector<std::pair<std::string, uint32_t>> named_args;
  // The Metal 2.0 bindings (kernel_bindings.cpp), "" for a kernel without.
  std::string bindings;
  // Files the kernel may #include "path": (path, text), written into the
  // build's private include directory.
  std::vector<std::pair<const std::string*, const std::string*>> include_files;
  bool fp32_dest_acc = false, math_approx = false, dst_full_sync = false;
  std::string math_fidelity = "HiFi4";
  // The watcher's check of the kernel's own loads and stores through CB
  // pointers: built with the address-check instrumentation (compile_flags).
  bool check_cb_access = false;
  // Page size of each CB index on the kernel's cores, for the constant
  // expression get_tile_size (0: not configured there, or configured with
  // different page sizes on different cores).
  std::array<uint32_t, kCircularBuffersPerCore> cb_tile_sizes{};
  // Likewise each CB index's data format (tt-metal's numbering; 0xff: none
  // single) and tile rows and columns (0: none single), for the constant
  // expressions get_dataformat and get_tile_hw and the compute kernel's
  // unpack_*/pack_* arrays.
  std::array<uint32_t, kCircularBuffersPerCore> cb_formats = filled(0xffu);
  std::array<uint32_t, kCircularBuffersPerCore> cb_tile_rows{}, cb_tile_cols{};
  static constexpr std::array<uint32_t, kCircularBuffersPerCore> filled(uint32_t v) {
    std::array<uint32_t, kCircularBuffersPerCore> a{};
    a.fill(v);
    return a;
  }
};

// The generated Metal 2.0 bindings of kernel kd built with these resolved
// compile args (kernel_bindings.cpp): "" for a kernel that has none.
std::string kernel_bindings_source(const KernelDesc& kd, const std::vector<uint32_t>& compile_args,
                                   const std::vector<std::pair<std::string, uint32_t>>& named);
// When compute kernels are built three times (trisc_builds.cpp): ZYX_EMU_TRISC
// "3" (Three: every compute kernel), "1" (Single: none), unset or "auto"
// (Auto: those whose code refers to the TRISC builds).
enum class TriscMode { Auto, Three, Single };
TriscMode trisc_mode_from_env();
// Whether a kernel's source, or a file of the program's include tree it
// includes (transitively), names TRISC_UNPACK/MATH/PACK or UNPACK(, MATH(,
// PACK(. `path` is the kernel's path in the tree ("" at its root).
bool refers_to_triscs(const std::string& source, const std::string& path,
                      const std::vector<std::pair<const std::string*, const std::string*>>& include_files);

// write_new_file writes text to a new file of its own at path, mode 0600:
// O_EXCL|O_NOFOLLOW, so that a file or a symbolic link planted at the
// path (a build's sources and include files) is an Error
// ("compile_error"), not written through.
void write_new_file(const std::string& path, const std::string& text);

// text as a C string literal (quotes included): quotes and backslashes
// escaped, control and non-ASCII bytes as octal escapes, so that free text
// (a kernel's name) can never end the literal or the line it stands on.
std::string c_string_literal(const std::string& text);

// Builds kernel objects with the host compiler and caches them on disk and in
// memory, keyed by a hash of everything that goes into the build. The cache
// directory and every object are checked before use (compiler.cpp).
class KernelBuilder {
 public:
  // cache_dir: the runtime's cache root ("" for the default); objects live
  // in its emu/ subdirectory. Throws invalid_argument for an unsafe root.
  KernelBuilder(std::string cache_dir, const Board& board);
  ~KernelBuilder();
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;
  // The kernel object for one kernel of a program with its compile-time args
  // resolved (positional and named), built or taken from the caches;
  // check_cb_access: built for the watcher's check of the kernel's own loads
  // and stores (BuildSpec::check_cb_access).
  std::shared_ptr<KernelObject> get(const KernelDesc& kernel, const std::vector<uint32_t>& compile_args,
                                    const std::vector<std::pair<std::string, uint32_t>>& named_args,
                                    const ProgramDesc& program, bool check_cb_access = false);
  std::shared_ptr<KernelObject> get(const BuildSpec& spec);
  // Compiles spec syntax-only (-fsyntax-only) with exactly the wrapper and
  // flags a real build gets, plus extra_flags (placed before the emulator's
  // include directories, e.g. -iquote or -idirafter roots of a kernel's own
  // tree): nothing is cached or loaded. Returns the compiler's diagnostics
  // with the build directory's paths removed; *ok says whether it compiled.
  // Used by the kernel sweep (tools/kernel_check.cpp).
  std::string check_syntax(const BuildSpec& spec, const std::vector<std::string>& extra_flags, bool* ok);
  // The cache key of a build: a hash of everything that reaches the compiler.
  std::string key(const BuildSpec& spec) { return key_of(compile_inputs(spec)); }
  // Kills every compiler in flight (their builds fail) and refuses new ones.
  void cancel();
  // The kernel header directories, in search order (compiler.cpp).
  const std::vector<std::string>& include_dirs() const { return include_dirs_; }
  std::string cache_dir() const { return cache_dir_; }
  // Statistics for benchmarks and tests.
  uint64_t compiles() const { return compiles_.load(); }
  uint64_t disk_hits() const { return disk_hits_.load(); }

 private:
  // Everything that reaches the compiler for one build, less the paths of
  // its build directory: the key is a hash of exactly this.
  struct CompileInputs {
    std::string source;
    std::vector<std::string> flags;  // the compiler's command words and flags
    std::vector<std::pair<const std::string*, const std::string*>> include_files;
  };
  CompileInputs compile_inputs(const BuildSpec& spec);
  std::shared_ptr<KernelObject> get_triscs(const BuildSpec& spec);
  std::string key_of(const CompileInputs& in) const;
  std::string generated_source(const BuildSpec& spec) const;
  std::vector<std::string> compile_flags(const BuildSpec& spec);
  // Builds into a private directory and renames the object into the cache;
  // returns an open descriptor of the checked object.
  int build(const std::string& key, const BuildSpec& spec, const CompileInputs& in);
  std::shared_ptr<KernelObject> load(int fd, const std::string& path);
  std::string run_compiler(const std::vector<std::string>& args, const std::string& build_dir, int* status);
  // Whether the compiler takes -fno-gnu-unique (GCC; clang does not know the
  // flag and never makes such symbols), asked once, at the first build.
  bool takes_no_gnu_unique();
  std::mutex probe_mu_;
  int takes_no_gnu_unique_ = -1;  // -1: not asked yet
  std::string cache_dir_, private_root_, cxx_, cxxflags_, header_hash_;
  std::vector<std::string> include_dirs_;
  Board board_;
  std::mutex mu_;
  bool cancelled_ = false;
  std::vector<int> supervisors_;  // pids of the compiler supervisors in flight
  std::map<std::string, std::shared_ptr<KernelObject>> loaded_;
  std::map<std::string, std::shared_ptr<std::mutex>> building_;
  std::atomic<uint64_t> compiles_{0}, disk_hits_{0};
};

// Why a program's include-file path is unusable ("" when it is fine): it must
// be relative, without "." or ".." components, empty components or NUL bytes.
std::string include_path_problem(const std::string& path);

// Why a kernel's path in the include tree is unusable ("" when it is fine):
// an include path (above) of letters, digits and ._+-/ only, for the path
// reaches the compiler inside a quoted #include name.
std::string kernel_path_problem(const std::string& path);

// A kernel source or include file as the builder writes it for the compiler:
// each `#pragma GCC unroll` whose count is not an integer literal (a template
// parameter or constant, `#pragma GCC unroll(window_height)`) becomes an
// empty line. The card's compiler takes such a count; the host's GCC 12
// rejects a count it cannot evaluate where the template is defined. Unroll
// is only a hint to the optimizer, so dropping it changes no result, and the
// line stays (empty) so that diagnostics keep their line numbers.
std::string without_unevaluable_unroll_pragmas(const std::string& text);

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
