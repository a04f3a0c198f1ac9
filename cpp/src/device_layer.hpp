// The seam between the protocol server and the two device layers: `metal`
// (tt-metal, real cards) and `emu` (the host emulator). The server parses and
// checks requests (protocol v2, docs/protocol.md) into the typed program
// model below, then calls one DeviceLayer; a layer reports failure by
// throwing zyx::Error with a protocol error code.
//
// The model is what a tt-metal host builds: kernels on core range sets,
// circular buffer configs and semaphores on core range sets, buffers in DRAM
// or L1, interleaved or sharded. Everything that depends only on the program
// (core coordinates, work splits, semaphore ids) arrives already resolved by
// the driver; what depends on the run (buffer addresses, variable values,
// bank and NOC coordinates) is an ArgEntry the layer resolves per core.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "protocol_enums_gen.hpp"

namespace zyx {

// Error carries a protocol error code ("invalid_argument", "deadlock", …).
struct Error : std::runtime_error {
  std::string code;
  Error(std::string c, const std::string& msg) : std::runtime_error(msg), code(std::move(c)) {}
};

// ---- coordinates -------------------------------------------------------------

// A logical worker core: row < grid rows, col < grid cols.
struct CoreCoord {
  uint32_t row = 0, col = 0;
  bool operator==(const CoreCoord&) const = default;
};

// An inclusive rectangle of logical cores.
struct CoreRange {
  CoreCoord start, end;  // start.row <= end.row, start.col <= end.col
  bool contains(CoreCoord c) const {
    return c.row >= start.row && c.row <= end.row && c.col >= start.col && c.col <= end.col;
  }
  uint32_t size() const { return (end.row - start.row + 1) * (end.col - start.col + 1); }
};

// Non-overlapping core ranges, in the order given.
struct CoreRangeSet {
  std::vector<CoreRange> ranges;
  bool contains(CoreCoord c) const {
    for (const auto& r : ranges)
      if (r.contains(c)) return true;
    return false;
  }
  uint32_t size() const {
    uint32_t n = 0;
    for (const auto& r : ranges) n += r.size();
    return n;
  }
  // The cores in order: range by range, row-major within a range
  // (col_major: column-major within a range).
  std::vector<CoreCoord> cores(bool col_major = false) const {
    std::vector<CoreCoord> out;
    for (const auto& r : ranges) {
      if (col_major) {
        for (uint32_t c = r.start.col; c <= r.end.col; c++)
          for (uint32_t w = r.start.row; w <= r.end.row; w++) out.push_back({w, c});
      } else {
        for (uint32_t w = r.start.row; w <= r.end.row; w++)
          for (uint32_t c = r.start.col; c <= r.end.col; c++) out.push_back({w, c});
      }
    }
    return out;
  }
};

struct GridInfo {
  uint32_t rows = 0, cols = 0;
  std::vector<uint32_t> harvested_rows, harvested_cols;
  uint64_t harvest_mask = 0;
};

// NOC coordinates a host needs (init reply `noc`, `l1`).
struct NocTables {
  std::vector<uint32_t> worker_x;                          // by logical column
  std::vector<uint32_t> worker_y;                          // by logical row
  std::vector<std::pair<uint32_t, uint32_t>> dram_banks;   // (x, y) by DRAM bank
};

// A device's DRAM banks and per-core L1: sizes and alignments (the emulator's
// board presets hold the same).
struct MemoryDesc {
  uint32_t dram_banks = 0;
  uint64_t dram_bank_size = 0;
  uint64_t dram_alignment = 32;
  uint64_t l1_size = 0;
  uint64_t l1_unreserved_base = 0;
  uint64_t l1_alignment = 16;
};

// What `init` reports.
struct DeviceDesc : MemoryDesc {
  std::string runtime;  // "emu" or "metal"
  std::string arch;     // "wormhole_b0" or "blackhole"
  std::string board;
  int chip = 0;
  GridInfo grid;
  NocTables noc;
  std::vector<CoreCoord> l1_bank_cores;  // the worker core of each L1 bank
  uint32_t semaphores = 16;              // per core
};

// ---- enums ---------------------------------------------------------------------

// DataFormat (tt-metal numbering), ParamKind, Processor, MathFidelity,
// Placement, BufferLayout, ShardOrientation and ArgKind, with their protocol
// names, are generated from protocol/protocol.json (protocol_enums_gen.hpp).

// Parses a protocol format name; nullopt for an unknown one.
std::optional<DataFormat> parse_data_format(const std::string& name);
const char* data_format_name(DataFormat f);

const char* processor_name(Processor p);

// ---- buffers -------------------------------------------------------------------

// A shard spec in pages (docs/protocol.md, alloc).
struct ShardSpec {
  CoreRangeSet cores;
  uint32_t shape[2] = {0, 0};   // pages per shard: rows, cols
  uint32_t tensor[2] = {0, 0};  // the whole tensor in pages: rows, cols
  ShardOrientation orientation = ShardOrientation::RowMajor;
  bool operator==(const ShardSpec& o) const {
    if (shape[0] != o.shape[0] || shape[1] != o.shape[1] || tensor[0] != o.tensor[0] || tensor[1] != o.tensor[1] ||
        orientation != o.orientation || cores.ranges.size() != o.cores.ranges.size())
      return false;
    for (size_t i = 0; i < cores.ranges.size(); i++)
      if (!(cores.ranges[i].start == o.cores.ranges[i].start) || !(cores.ranges[i].end == o.cores.ranges[i].end))
        return false;
    return true;
  }
};

// How a buffer is laid out (alloc; a program's buffer declarations).
struct BufferSpec {
  uint64_t page_size = 2048;
  Placement placement = Placement::Dram;
  BufferLayout layout = BufferLayout::Interleaved;
  std::optional<ShardSpec> shard;  // set exactly when layout is sharded
  bool operator==(const BufferSpec&) const = default;
};

// The shard spec as tt-metal lays its pages out (a ShardSpecBuffer's page
// mapping, buffer.cpp's core_to_host_pages): width and block sharding cut the
// tensor of pages into blocks of the shard's shape, row by row of blocks, the
// blocks at the right and bottom edges partial; height sharding deals the
// pages out in row-major order, shape[0] * shape[1] to a shard, whatever the
// tensor's width. Dealing out is block cutting of the tensor seen as rows of
// shape[1] pages, so this returns that view for height sharding (the spec
// itself otherwise): every user of a layout (the validator's shard count,
// the emulator's placement and accessor args, the metal layer's bank ids)
// then follows the one block rule. The view needs the tensor's pages to be
// whole rows of shape[1] (the validator's S4).
inline ShardSpec page_order_view(const BufferSpec& s) {
  ShardSpec v = *s.shard;
  if (s.layout == BufferLayout::HeightSharded && v.shape[1] != 0 && v.shape[1] != v.tensor[1]) {
    uint64_t pages = uint64_t{v.tensor[0]} * v.tensor[1];
    v.tensor[0] = static_cast<uint32_t>(pages / v.shape[1]);
    v.tensor[1] = v.shape[1];
  }
  return v;
}

struct BufferInfo {
  uint64_t address = 0, size = 0;
  BufferSpec spec;
  uint64_t page_size() const { return spec.page_size; }
  uint64_t pages() const { return spec.page_size ? (size + spec.page_size - 1) / spec.page_size : 0; }
};

// ---- programs ------------------------------------------------------------------

// One kernel argument word (or, for Accessor, several), as the layer
// resolves it for one core (docs/protocol.md, "arg entry": the fields each
// kind takes).
struct ArgEntry {
  ArgKind kind = ArgKind::Const;
  uint32_t value = 0;  // Const; SemaphoreAddr: the semaphore id
  uint32_t param = 0;  // Param and the buffer kinds
  uint32_t page = 0;   // BankId, BankNocX, BankNocY
  CoreCoord core;      // CoreNocX, CoreNocY
};

struct ComputeConfig {
  MathFidelity math_fidelity = MathFidelity::HiFi4;
  bool fp32_dest_acc = false;
  bool math_approx_mode = false;
  bool bfp8_pack_precise = false;  // Bfp8_b/Bfp4_b packed from the DST format
  bool dst_full_sync = false;      // DST whole for math (else halves, double-buffered with pack)
  // CB indices whose 32-bit tiles unpack straight into a 32-bit DST
  // (tt-metal's UnpackToDestMode::UnpackToDestFp32).
  std::vector<uint32_t> unpack_to_dest_fp32;
};

// Runtime args for the cores of `cores` (every core of a kernel has at most
// one such entry).
struct CoreArgs {
  CoreRangeSet cores;
  std::vector<ArgEntry> args;
};

// A kernel's Metal 2.0 named resources (docs/programs.md "Metal 2.0
// bindings"), as the program states them and, once lower_bindings has run,
// resolved to what the generated bindings header names.
struct KernelBindings {
  bool metal2 = false;  // build with the generated bindings header
  std::vector<std::string> runtime_arg_names;  // the first words of each core's runtime args
  std::vector<std::string> common_arg_names;   // the first words of the common args
  std::map<std::string, std::string> dfbs;        // accessor name -> CB index name
  std::map<std::string, std::string> semaphores;  // accessor name -> semaphore name
  std::map<std::string, std::string> tensors;     // accessor name -> buffer param name
  // Resolved by lower_bindings: the CB index and semaphore id of each
  // binding, and per tensor binding its buffer param, the compile_args entry
  // that holds its accessor words and the common-arg word of its address.
  struct Tensor {
    std::string name;
    uint32_t param = 0;
    uint32_t compile_entry = 0;
    uint32_t common_word = 0;
  };
  std::vector<std::pair<std::string, uint32_t>> dfb_ids, semaphore_ids;
  std::vector<Tensor> tensor_slots;
  bool any() const {
    return metal2 || !runtime_arg_names.empty() || !common_arg_names.empty() || !dfbs.empty() ||
           !semaphores.empty() || !tensors.empty();
  }
};

struct KernelDesc {
  std::string name;  // for messages ("reader", "sender", …)
  Processor processor = Processor::Riscv0;
  uint32_t noc = 0;  // data movement: the NOC it uses (riscv_0 defaults to 0, riscv_1 to 1)
  CoreRangeSet cores;
  std::string source;
  // Where the kernel file lives in the program's include tree ("" for its
  // root): it is compiled there, so that its relative includes resolve from
  // its own directory, as where tt-metal's JIT build compiles a kernel.
  std::string path;
  std::map<std::string, std::string> defines;
  std::vector<ArgEntry> compile_args;
  std::vector<std::pair<std::string, ArgEntry>> named_compile_args;  // in the order given
  std::vector<ArgEntry> common_args;
  std::vector<CoreArgs> runtime_args;
  ComputeConfig compute;  // compute kernels only
  KernelBindings bindings;
};

// One index of a circular-buffer config.
struct CBIndexDesc {
  uint32_t index = 0;  // below kCircularBuffersPerCore
  DataFormat format = DataFormat::Float16_b;
  uint32_t page_bytes = 0;
  uint32_t tile_rows = 32, tile_cols = 32;  // the tile shape of its pages (tiny tiles: 1, 2, 4, 8, 16 rows)
  std::string name;                         // the dataflow buffer name kernels bind ("" for none)
};

// One allocation of `total_bytes` in the L1 of every core of `cores`, shared
// by its indices; each index holds total_bytes / page_bytes pages.
struct CBConfig {
  CoreRangeSet cores;
  uint32_t total_bytes = 0;
  std::vector<CBIndexDesc> indices;
  std::optional<uint32_t> buffer_param;  // placed at this L1 buffer param's address
};

struct SemaphoreDesc {
  CoreRangeSet cores;
  uint32_t id = 0;
  uint32_t initial = 0;
  std::string name;  // the name kernels bind ("" for none)
};

struct ParamDesc {
  std::string name;
  ParamKind kind = ParamKind::Global;
  std::string dtype;  // Go DType name: f32, bf16, i32, …
  bool is_buffer() const { return kind != ParamKind::Variable; }
};

// A program's declared layout for one buffer param (compile `buffers`).
struct BufferDecl {
  uint32_t param = 0;
  BufferSpec spec;
};

struct IncludeFile {
  std::string path;  // relative, no "..", no leading '/'
  std::string source;
};

struct ProgramDesc {
  std::string name;
  std::vector<ParamDesc> params;
  std::vector<BufferDecl> buffers;
  std::vector<IncludeFile> include_files;
  std::vector<KernelDesc> kernels;
  std::vector<CBConfig> cbs;
  std::vector<SemaphoreDesc> semaphores;
  // The declaration for a buffer param, or nullptr when it has none.
  const BufferDecl* decl(uint32_t param) const {
    for (const auto& d : buffers)
      if (d.param == param) return &d;
    return nullptr;
  }
};

// The program with its kernels' Metal 2.0 bindings resolved (program_model.cpp):
// each dfb and semaphore binding to its CB index or id, and each tensor
// binding to its accessor words, appended to the compile args, and its
// buffer's address, placed after the named common args (tt-metal's layout:
// named common args, tensor addresses, varargs). The server lowers a program
// after checking its names (check_program) and hands the layer the result.
ProgramDesc lower_bindings(const ProgramDesc& p);


// A run argument, in param order.
struct RunArg {
  bool is_buffer = false;
  uint64_t buffer = 0;  // buffer id when is_buffer
  uint64_t value = 0;   // little-endian bits of a variable
};

// A run the layer has started and not waited for (DeviceLayer::launch).
class PendingRun {
 public:
  virtual ~PendingRun() = default;
  // done reports, without waiting, that the run has already ended (a layer
  // that runs programs to their end in launch).
  virtual bool done() const { return false; }
  // wait blocks until the run has ended, whatever its outcome, and reports
  // nothing (finish does). The server calls it from a thread of its own
  // while its executor thread goes on making other calls on the layer
  // (launch, and finish of this run among them), so it must be safe against
  // them; it never throws. It may be called before finish, or not at all.
  virtual void wait() noexcept = 0;
  // finish waits until the run has ended and returns its elapsed device time
  // in nanoseconds, or throws its error (zyx::Error). Called once, on the
  // executor thread.
  virtual uint64_t finish() = 0;
  // What the layer noticed during the run and did not stop for (the
  // emulator's watcher warnings), valid after finish returned.
  virtual std::vector<std::string> warnings() { return {}; }
};

// FinishedRun is the PendingRun of a run that has ended.
class FinishedRun : public PendingRun {
 public:
  explicit FinishedRun(uint64_t ns, std::vector<std::string> warnings = {})
      : ns_(ns), warnings_(std::move(warnings)) {}
  bool done() const override { return true; }
  void wait() noexcept override {}
  uint64_t finish() override { return ns_; }
  std::vector<std::string> warnings() override { return warnings_; }

 private:
  uint64_t ns_;
  std::vector<std::string> warnings_;
};

class DeviceLayer {
 public:
  virtual ~DeviceLayer() = default;
  virtual DeviceDesc describe() = 0;
  // Returns the buffer id; sets *address to the buffer's device address.
  virtual uint64_t alloc(uint64_t size, const BufferSpec& spec, uint64_t* address) = 0;
  virtual void free(uint64_t buffer) = 0;
  virtual BufferInfo buffer_info(uint64_t buffer) = 0;
  virtual void write(uint64_t buffer, uint64_t offset, const uint8_t* src, uint64_t length) = 0;
  virtual void read(uint64_t buffer, uint64_t offset, uint8_t* dst, uint64_t length) = 0;
  // Returns the program id. The server has checked the program's structure
  // against the DeviceDesc (cores inside the grid, one kernel per processor
  // per core, unique CB indices and semaphore ids per core, param kinds of
  // every entry); the layer checks what only it knows (L1 budget, builds).
  virtual uint64_t compile(const ProgramDesc& program) = 0;
  // Runs every kernel of the program on its cores. Returns the elapsed
  // device time in nanoseconds (measured when timed, else may be 0).
  virtual uint64_t run(uint64_t program, const std::vector<RunArg>& args, bool timed) = 0;
  // launch starts a run without waiting for it to end, so that the server
  // can take the next request while the device runs; errors it can tell at
  // once (a build that fails, bad arguments) it throws. The server calls
  // finish before it executes any request other than a run, and before it
  // answers the run, in order. Between launch and finish it calls only
  // launch again (runs queued on the device behind each other) and, from
  // another thread, PendingRun::wait of the oldest run. The default
  // runs the program to its end (run).
  virtual std::unique_ptr<PendingRun> launch(uint64_t program, const std::vector<RunArg>& args, bool timed) {
    uint64_t ns = run(program, args, timed);
    return std::make_unique<FinishedRun>(ns, take_warnings());
  }
  // The warnings of the last run that ended (see PendingRun::warnings),
  // handed over once.
  virtual std::vector<std::string> take_warnings() { return {}; }
  virtual void release(uint64_t program) = 0;
};

// Defined in cpp/emu: the host emulator for a board preset.
std::unique_ptr<DeviceLayer> make_emu_layer(const std::string& board, int chip, const std::string& cache_dir);

// Defined in cpp/src/metal_layer.cpp when built with -DZYX_TT_METAL=ON.
std::unique_ptr<DeviceLayer> make_metal_layer(int chip, const std::string& cache_dir);

}  // namespace zyx
