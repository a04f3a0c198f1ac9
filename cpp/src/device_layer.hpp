// The seam between the protocol server and the two device layers: `metal`
// (tt-metal, real cards) and `emu` (the host emulator). The server parses and
// checks requests, then calls one DeviceLayer; a layer reports failure by
// throwing zyx::Error with a protocol error code (docs/protocol.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace zyx {

// Error carries a protocol error code ("invalid_argument", "deadlock", …).
struct Error : std::runtime_error {
  std::string code;
  Error(std::string c, const std::string& msg) : std::runtime_error(msg), code(std::move(c)) {}
};

struct GridInfo {
  uint32_t rows = 0, cols = 0;
  std::vector<uint32_t> harvested_rows, harvested_cols;
  uint64_t harvest_mask = 0;
};

// What `init` reports.
struct DeviceDesc {
  std::string runtime;  // "emu" or "metal"
  std::string arch;     // "wormhole_b0" or "blackhole"
  std::string board;
  int chip = 0;
  GridInfo grid;
  uint32_t dram_banks = 0;
  uint64_t dram_bank_size = 0;
  uint64_t dram_alignment = 32;
  uint64_t l1_size = 0;
  uint64_t l1_unreserved_base = 0;
};

// One entry of an argument layout (docs/protocol.md, "compile").
struct LayoutEntry {
  std::string kind;  // param, buffer_addr, buffer_size, buffer_pages, page_size, accessor,
                     // core_row, core_col, core_index, num_cores, const
  uint32_t param = 0;
  uint32_t value = 0;
};

struct Section {
  std::string source;
  std::map<std::string, std::string> defines;
  std::vector<LayoutEntry> compile_args, runtime_args, common_args;
};

struct CBConfig {
  uint32_t index = 0;
  std::string format;  // Float32, Float16_b, Float16, Int32, UInt32, UInt16, UInt8
  uint32_t page_bytes = 0;
  uint32_t pages = 0;
};

struct ParamDesc {
  std::string name, kind, dtype;  // kind: global, global_mut, variable
  bool is_buffer() const { return kind == "global" || kind == "global_mut"; }
};

struct ProgramDesc {
  std::string name;
  std::vector<ParamDesc> params;
  Section reader, compute, writer;
  std::vector<CBConfig> cbs;
  std::string math_fidelity = "HiFi4";
  bool fp32_dest_acc = false;
  bool math_approx_mode = false;
};

// A run argument, in param order.
struct RunArg {
  bool is_buffer = false;
  uint64_t buffer = 0;  // buffer id when is_buffer
  uint64_t value = 0;   // little-endian bits of a variable
};

struct BufferInfo {
  uint64_t address = 0, size = 0, page_size = 0;
  uint64_t pages() const { return page_size ? (size + page_size - 1) / page_size : 0; }
};

class DeviceLayer {
 public:
  virtual ~DeviceLayer() = default;
  virtual DeviceDesc describe() = 0;
  // Returns the buffer id; sets *address to the buffer's device address.
  virtual uint64_t alloc(uint64_t size, uint64_t page_size, uint64_t* address) = 0;
  virtual void free(uint64_t buffer) = 0;
  virtual BufferInfo buffer_info(uint64_t buffer) = 0;
  virtual void write(uint64_t buffer, uint64_t offset, const uint8_t* src, uint64_t length) = 0;
  virtual void read(uint64_t buffer, uint64_t offset, uint8_t* dst, uint64_t length) = 0;
  // Returns the program id.
  virtual uint64_t compile(const ProgramDesc& program) = 0;
  // Runs on cores (r, c), r < rows, c < cols. Returns the elapsed device
  // time in nanoseconds (measured when timed, else may be 0).
  virtual uint64_t run(uint64_t program, uint32_t rows, uint32_t cols, const std::vector<RunArg>& args,
                       bool timed) = 0;
  virtual void release(uint64_t program) = 0;
};

// Defined in cpp/emu: the host emulator for a board preset.
std::unique_ptr<DeviceLayer> make_emu_layer(const std::string& board, int chip, const std::string& cache_dir);

// Defined in cpp/src/metal_layer.cpp when built with -DZYX_TT_METAL=ON.
std::unique_ptr<DeviceLayer> make_metal_layer(int chip, const std::string& cache_dir);

// Core position for layout resolution.
struct CoreCtx {
  uint32_t row = 0, col = 0, rows = 1, cols = 1;
};

// Resolves one layout into words. `accessor` appends a buffer's
// tensor-accessor words; each layer defines what those are.
template <typename AccessorFn>
std::vector<uint32_t> resolve_layout(const std::vector<LayoutEntry>& layout, const std::vector<ParamDesc>& /*params*/,
                                     const std::vector<RunArg>& args, DeviceLayer& layer, const CoreCtx& core,
                                     AccessorFn&& accessor) {
  std::vector<uint32_t> out;
  out.reserve(layout.size());
  auto buffer_of = [&](const LayoutEntry& e) -> BufferInfo {
    if (e.param >= args.size() || !args[e.param].is_buffer)
      throw Error("invalid_argument", "layout entry " + e.kind + " names param " + std::to_string(e.param) +
                                          ", which is not a buffer");
    return layer.buffer_info(args[e.param].buffer);
  };
  for (const auto& e : layout) {
    if (e.kind == "const") {
      out.push_back(e.value);
    } else if (e.kind == "param") {
      if (e.param >= args.size() || args[e.param].is_buffer)
        throw Error("invalid_argument", "layout entry param names param " + std::to_string(e.param) +
                                            ", which is not a variable");
      out.push_back(static_cast<uint32_t>(args[e.param].value));
    } else if (e.kind == "buffer_addr") {
      out.push_back(static_cast<uint32_t>(buffer_of(e).address));
    } else if (e.kind == "buffer_size") {
      out.push_back(static_cast<uint32_t>(buffer_of(e).size));
    } else if (e.kind == "buffer_pages") {
      out.push_back(static_cast<uint32_t>(buffer_of(e).pages()));
    } else if (e.kind == "page_size") {
      out.push_back(static_cast<uint32_t>(buffer_of(e).page_size));
    } else if (e.kind == "accessor") {
      accessor(buffer_of(e), out);
    } else if (e.kind == "core_row") {
      out.push_back(core.row);
    } else if (e.kind == "core_col") {
      out.push_back(core.col);
    } else if (e.kind == "core_index") {
      out.push_back(core.row * core.cols + core.col);
    } else if (e.kind == "num_cores") {
      out.push_back(core.rows * core.cols);
    } else {
      throw Error("invalid_argument", "unknown layout entry kind \"" + e.kind + "\"");
    }
  }
  return out;
}

}  // namespace zyx
