// The metal layer: one Tenstorrent chip driven through tt-metal's host API,
// protocol v2's program model mapped onto it (docs/runtime.md, "The metal
// layer"): a unit MeshDevice; MeshBuffers in DRAM or L1, interleaved or
// sharded (ShardSpecBuffer); per program, kernels created on CoreRangeSets
// with DataMovementConfig / ComputeConfig (positional and named compile
// args, defines), multi-index CircularBufferConfigs (page size and tile per
// index, globally allocated on an L1 buffer), semaphores by CreateSemaphore,
// runtime args per core range set and common args. Built only with
// -DZYX_TT_METAL=ON; `make metal-check` compiles it against the pinned
// tt-metal tree without a card, and its request refusals live in
// metal_checks.cpp, which every build compiles and tests (docs/runtime.md).
//
// Every tt-metal call that can throw runs inside guard(), which turns the
// exception into a zyx::Error with a protocol code, so a failing call becomes
// an error reply and never ends the process.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <tt-metalium/allocator.hpp>
#include <tt-metalium/buffer.hpp>
#include <tt-metalium/circular_buffer_config.hpp>
#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/distributed.hpp>
#include <tt-metalium/host_api.hpp>
#include <tt-metalium/kernel_types.hpp>
#include <tt-metalium/mesh_buffer.hpp>
#include <tt-metalium/mesh_command_queue.hpp>
#include <tt-metalium/mesh_device.hpp>
#include <tt-metalium/mesh_event.hpp>
#include <tt-metalium/mesh_workload.hpp>
#include <tt-metalium/tensor_accessor_args.hpp>
#include <tt-metalium/tile.hpp>

#include "device_layer.hpp"
#include "metal_checks.hpp"

namespace zyx {

namespace {

namespace tm = tt::tt_metal;
namespace dist = tt::tt_metal::distributed;

// tt-metal's coordinate and fidelity types carry the same names as the
// program model's; T* names them apart.
using TCoord = tm::CoreCoord;
using TRange = tm::CoreRange;
using TRangeSet = tm::CoreRangeSet;
using TFidelity = tm::MathFidelity;

// tt-metal's semaphores per core (NUM_SEMAPHORES in its
// impl/buffers/semaphore.hpp, which is not part of its API).
constexpr uint32_t kSemaphoresPerCore = 16;

bool contains_ci(std::string hay, std::string needle) {
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  return lower(std::move(hay)).find(lower(std::move(needle))) != std::string::npos;
}

// guard runs f; an exception from tt-metal becomes Error(code, what: message).
template <typename F>
auto guard(const std::string& what, const char* code, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error("out_of_memory", what + ": host memory exhausted");
  } catch (const std::exception& e) {
    std::string msg = e.what();
    if (contains_ci(msg, "out of memory") || contains_ci(msg, "clash")) throw Error("out_of_memory", what + ": " + msg);
    throw Error(code, what + ": " + msg);
  } catch (...) {
    throw Error(code, what + ": unknown exception");
  }
}

// The protocol's [row, col] is tt-metal's CoreCoord{x = col, y = row}.
TCoord coord(zyx::CoreCoord c) { return TCoord(c.col, c.row); }

TRangeSet range_set(const zyx::CoreRangeSet& s) {
  std::vector<TRange> ranges;
  ranges.reserve(s.ranges.size());
  for (const auto& r : s.ranges) ranges.emplace_back(coord(r.start), coord(r.end));
  return TRangeSet(std::move(ranges));
}

tt::DataFormat data_format(DataFormat f) {
  switch (f) {
    case DataFormat::Float32:
      return tt::DataFormat::Float32;
    case DataFormat::Float16:
      return tt::DataFormat::Float16;
    case DataFormat::Float16_b:
      return tt::DataFormat::Float16_b;
    case DataFormat::Bfp8_b:
      return tt::DataFormat::Bfp8_b;
    case DataFormat::Bfp4_b:
      return tt::DataFormat::Bfp4_b;
    case DataFormat::Int32:
      return tt::DataFormat::Int32;
    case DataFormat::UInt32:
      return tt::DataFormat::UInt32;
    case DataFormat::UInt16:
      return tt::DataFormat::UInt16;
    case DataFormat::UInt8:
      return tt::DataFormat::UInt8;
    case DataFormat::Int8:
      return tt::DataFormat::Int8;
    case DataFormat::Invalid:
      break;
  }
  throw Error("invalid_argument", std::string("data format ") + data_format_name(f) + " has no tt-metal equivalent");
}

TFidelity fidelity(zyx::MathFidelity f) {
  switch (f) {
    case zyx::MathFidelity::LoFi:
      return TFidelity::LoFi;
    case zyx::MathFidelity::HiFi2:
      return TFidelity::HiFi2;
    case zyx::MathFidelity::HiFi3:
      return TFidelity::HiFi3;
    case zyx::MathFidelity::HiFi4:
      return TFidelity::HiFi4;
  }
  return TFidelity::HiFi4;
}

tm::TensorMemoryLayout memory_layout(BufferLayout l) {
  switch (l) {
    case BufferLayout::Interleaved:
      return tm::TensorMemoryLayout::INTERLEAVED;
    case BufferLayout::HeightSharded:
      return tm::TensorMemoryLayout::HEIGHT_SHARDED;
    case BufferLayout::WidthSharded:
      return tm::TensorMemoryLayout::WIDTH_SHARDED;
    case BufferLayout::BlockSharded:
      return tm::TensorMemoryLayout::BLOCK_SHARDED;
  }
  return tm::TensorMemoryLayout::INTERLEAVED;
}

// PrivateDir is a directory only this user can enter (mkdtemp, 0700) that
// holds one program's kernel sources and include files; removed with it.
class PrivateDir {
 public:
  PrivateDir() {
    const char* t = std::getenv("TMPDIR");
    std::string base = (t && *t == '/') ? t : "/tmp";
    std::string tmpl = base + "/zyx-tt-metal-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data()))
      throw Error("internal", "cannot make a private kernel directory under " + base + ": " + std::strerror(errno));
    path_ = buf.data();
  }
  ~PrivateDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;

  const std::string& path() const { return path_; }

  // write creates rel (a path the server checked: relative, no "..") with
  // its parent directories, exclusively and without following links.
  std::string write(const std::string& rel, const std::string& text) {
    std::string full = path_;
    size_t start = 0;
    for (size_t slash; (slash = rel.find('/', start)) != std::string::npos; start = slash + 1) {
      full += "/" + rel.substr(start, slash - start);
      if (::mkdir(full.c_str(), 0700) != 0 && errno != EEXIST)
        throw Error("internal", "cannot make " + full + ": " + std::strerror(errno));
      struct stat st {};
      if (::lstat(full.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw Error("internal", full + " is not a directory");
    }
    full = path_ + "/" + rel;
    int fd = ::open(full.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw Error("internal", "cannot create " + full + ": " + std::strerror(errno));
    size_t off = 0;
    while (off < text.size()) {
      ssize_t n = ::write(fd, text.data() + off, text.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd);
        throw Error("internal", "cannot write " + full + ": " + std::strerror(errno));
      }
      off += static_cast<size_t>(n);
    }
    ::close(fd);
    return full;
  }

 private:
  std::string path_;
};

class MetalLayer final : public DeviceLayer {
 public:
  MetalLayer(int chip, const std::string& cache_dir) : chip_(chip) {
    // tt-metal keeps built kernels under TT_METAL_CACHE; point it at the
    // metal/ part of the driver's cache (the emulator's objects are in emu/)
    // unless the user chose one.
    if (!cache_dir.empty()) ::setenv("TT_METAL_CACHE", (cache_dir + "/metal").c_str(), 0);
    size_t n = guard("counting devices", "unsupported", [] { return tm::GetNumAvailableDevices(); });
    if (n == 0) throw Error("unsupported", "tt-metal finds no Tenstorrent device");
    if (chip < 0 || static_cast<size_t>(chip) >= n)
      throw Error("invalid_argument", "chip " + std::to_string(chip) + " does not exist; tt-metal sees " +
                                          std::to_string(n) + " device(s)");
    mesh_ = guard("opening chip " + std::to_string(chip), "device_error",
                  [&] { return dist::MeshDevice::create_unit_mesh(chip); });
    desc_ = guard("describing the device", "device_error", [&] { return make_desc(); });
  }

  ~MetalLayer() override {
    progs_.clear();
    bufs_.clear();
    if (mesh_) {
      try {
        mesh_->close();
      } catch (const std::exception& e) {
        std::cerr << "zyx-tt-runtime: closing chip " << chip_ << ": " << e.what() << "\n";
      }
    }
  }

  DeviceDesc describe() override { return desc_; }

  uint64_t alloc(uint64_t size, const BufferSpec& spec, uint64_t* address) override {
    // Whole pages on the device; the protocol size is what the driver sees.
    uint64_t pages = (size + spec.page_size - 1) / spec.page_size;
    dist::DeviceLocalBufferConfig local;
    local.page_size = spec.page_size;
    local.buffer_type = spec.placement == Placement::L1 ? tm::BufferType::L1 : tm::BufferType::DRAM;
    if (spec.shard) {
      // The protocol's shard spec is in pages; a page shape of 1 x 1 makes
      // tt-metal's element shapes the page shapes.
      const ShardSpec& sh = *spec.shard;
      TRangeSet grid = range_set(sh.cores);
      tm::ShardSpecBuffer shard(grid, {sh.shape[0], sh.shape[1]},
                                sh.orientation == ShardOrientation::ColMajor ? tm::ShardOrientation::COL_MAJOR
                                                                             : tm::ShardOrientation::ROW_MAJOR,
                                {1, 1}, {sh.tensor[0], sh.tensor[1]});
      local.sharding_args = tm::BufferShardingArgs(shard, memory_layout(spec.layout));
    }
    dist::ReplicatedBufferConfig global;
    global.size = pages * spec.page_size;
    auto mb = guard("allocating " + std::to_string(size) + " bytes", "device_error",
                    [&] { return dist::MeshBuffer::create(global, local, mesh_.get()); });
    uint64_t id = next_buffer_++;
    bufs_[id] = Buf{mb, BufferInfo{mb->address(), size, spec}};
    *address = mb->address();
    return id;
  }

  void free(uint64_t buffer) override {
    auto it = bufs_.find(buffer);
    if (it == bufs_.end()) throw Error("unknown_buffer", "buffer " + std::to_string(buffer) + " does not exist");
    guard("freeing buffer " + std::to_string(buffer), "device_error", [&] { it->second.mesh->deallocate(); });
    bufs_.erase(it);
  }

  BufferInfo buffer_info(uint64_t buffer) override { return buf(buffer).info; }

  void write(uint64_t buffer, uint64_t offset, const uint8_t* src, uint64_t length) override {
    transfer(buf(buffer), offset, const_cast<uint8_t*>(src), length, true);
  }

  void read(uint64_t buffer, uint64_t offset, uint8_t* dst, uint64_t length) override {
    transfer(buf(buffer), offset, dst, length, false);
  }

  uint64_t compile(const ProgramDesc& program) override {
    // Refuse now what tt-metal could not take at the first run.
    metal::check_program(program);
    uint64_t id = next_program_++;
    auto& p = progs_[id];
    p.desc = program;
    // The sources and include files, once, in a private directory: a
    // kernel's #include "x.h" finds the file beside it.
    p.dir = std::make_unique<PrivateDir>();
    for (const auto& f : program.include_files) p.dir->write(f.path, f.source);
    // A kernel with a path in the include tree is that file of the tree (the
    // validator checked that an include file or kernel there has its text),
    // so tt-metal resolves its relative includes from its own directory.
    std::set<std::string> written;
    for (const auto& f : program.include_files) written.insert(f.path);
    for (size_t k = 0; k < program.kernels.size(); k++) {
      const KernelDesc& kd = program.kernels[k];
      if (kd.path.empty()) {
        p.sources.push_back(p.dir->write("zyx_kernel_" + std::to_string(k) + ".cpp", kd.source));
        continue;
      }
      if (written.insert(kd.path).second) p.dir->write(kd.path, kd.source);
      p.sources.push_back(p.dir->path() + "/" + kd.path);
    }
    return id;
  }

  uint64_t run(uint64_t program, const std::vector<RunArg>& args, bool timed) override {
    return launch(program, args, timed)->finish();
  }

  // launch enqueues the program without blocking (EnqueueMeshWorkload with
  // blocking false) and an event after it that the host is told of; the
  // run's finish waits for that event (EventSynchronize), so the server can
  // set up and enqueue the next run while the device runs this one.
  std::unique_ptr<PendingRun> launch(uint64_t program, const std::vector<RunArg>& args, bool timed) override {
    (void)timed;  // the elapsed time is always measured; it is cheap
    auto pit = progs_.find(program);
    if (pit == progs_.end()) throw Error("unknown_program", "program " + std::to_string(program) + " does not exist");
    Prog& prog = pit->second;
    const ProgramDesc& d = prog.desc;

    // One build per set of resolved compile-time args, cached with the program.
    BuildKey key;
    for (const auto& k : d.kernels) {
      key.compile_args.push_back(resolve_list(k.compile_args, args));
      std::vector<uint32_t> named;
      for (const auto& [name, e] : k.named_compile_args) {
        auto w = resolve(e, args);
        if (w.size() != 1) throw Error("invalid_argument", "named compile arg " + name + " resolves to several words");
        named.push_back(w[0]);
      }
      key.named_args.push_back(std::move(named));
    }
    auto bit = prog.builds.find(key);
    if (bit == prog.builds.end()) bit = prog.builds.emplace(key, build(prog, key, args)).first;
    Built& built = *bit->second;
    tm::Program& p = built.workload.get_programs().begin()->second;

    // The arguments of a run are copied into the command stream when it is
    // enqueued, so setting them for this run while an earlier run of the
    // same program is still on the device does not touch that run.
    guard("setting kernel arguments and CB addresses", "invalid_argument", [&] {
      for (size_t k = 0; k < d.kernels.size(); k++) {
        const KernelDesc& kd = d.kernels[k];
        if (!kd.common_args.empty()) tm::SetCommonRuntimeArgs(p, built.kernels[k], resolve_list(kd.common_args, args));
        // The words of an entry do not depend on the core: the driver
        // resolved everything per-core; what is left is buffers and NOC
        // coordinates named in the entry.
        for (const auto& ca : kd.runtime_args)
          tm::SetRuntimeArgs(p, built.kernels[k], range_set(ca.cores), resolve_list(ca.args, args));
      }
      for (size_t i = 0; i < d.cbs.size(); i++) {
        if (!d.cbs[i].buffer_param) continue;
        const Buf& b = buf(args.at(*d.cbs[i].buffer_param).buffer);
        tm::UpdateDynamicCircularBufferAddress(p, built.cbs[i], *b.mesh->get_reference_buffer());
      }
    });

    auto t0 = std::chrono::steady_clock::now();
    try {
      auto& cq = mesh_->mesh_command_queue();
      dist::EnqueueMeshWorkload(cq, built.workload, /*blocking=*/false);
      auto event = std::make_unique<dist::MeshEvent>(cq.enqueue_record_event_to_host());
      built.ran = true;
      return std::make_unique<MetalRun>(*this, std::move(event), t0, d.name);
    } catch (const std::exception& e) {
      // Kernels build on first enqueue: a failed build is a compile error,
      // and the build is dropped so the next run tries again.
      std::string msg = e.what();
      bool build_failed = !built.ran && (contains_ci(msg, "build") || contains_ci(msg, "compil"));
      if (!built.ran) prog.builds.erase(bit);
      if (build_failed) throw Error("compile_error", msg);
      if (contains_ci(msg, "clash") || contains_ci(msg, "out of memory")) throw Error("out_of_memory", msg);
      throw Error("run_error", "program " + d.name + ": " + msg);
    }
  }

  void release(uint64_t program) override {
    if (!progs_.erase(program)) throw Error("unknown_program", "program " + std::to_string(program) + " does not exist");
  }

 private:
  struct Buf {
    std::shared_ptr<dist::MeshBuffer> mesh;
    BufferInfo info;
  };
  struct BuildKey {
    std::vector<std::vector<uint32_t>> compile_args, named_args;
    bool operator<(const BuildKey& o) const {
      return std::tie(compile_args, named_args) < std::tie(o.compile_args, o.named_args);
    }
  };
  struct Built {
    dist::MeshWorkload workload;
    std::vector<tm::KernelHandle> kernels;
    std::vector<tm::CBHandle> cbs;
    bool ran = false;
  };
  struct Prog {
    ProgramDesc desc;
    std::unique_ptr<PrivateDir> dir;
    std::vector<std::string> sources;  // kernel k's file
    std::map<BuildKey, std::unique_ptr<Built>> builds;
  };

  Buf& buf(uint64_t id) {
    auto it = bufs_.find(id);
    if (it == bufs_.end()) throw Error("unknown_buffer", "buffer " + std::to_string(id) + " does not exist");
    return it->second;
  }

  DeviceDesc make_desc() {
    DeviceDesc d;
    d.runtime = "metal";
    auto arch = mesh_->arch();
    d.arch = arch == tt::ARCH::BLACKHOLE ? "blackhole" : arch == tt::ARCH::WORMHOLE_B0 ? "wormhole_b0" : "unknown";
    // tt-metal does not name the board; the driver knows it from sysfs.
    d.board = "unknown";
    d.chip = chip_;
    // Harvest-aware: the worker grid tt-metal can place kernels on; it
    // exposes only that grid, so the harvested lists stay empty.
    TCoord g = mesh_->compute_with_storage_grid_size();
    d.grid.rows = static_cast<uint32_t>(g.y);
    d.grid.cols = static_cast<uint32_t>(g.x);
    const auto& alloc = mesh_->allocator();
    d.dram_banks = alloc->get_num_banks(tm::BufferType::DRAM);
    d.dram_bank_size = alloc->get_bank_size(tm::BufferType::DRAM);
    d.dram_alignment = alloc->get_alignment(tm::BufferType::DRAM);
    d.l1_size = mesh_->l1_size_per_core();
    d.l1_unreserved_base = alloc->get_base_allocator_addr(tm::HalMemType::L1);
    d.l1_alignment = alloc->get_alignment(tm::BufferType::L1);
    d.semaphores = kSemaphoresPerCore;
    // NOC coordinates as kernels use them (tt-metal's virtual coordinates,
    // worker_core_from_logical_core): x depends on the column only, y on the
    // row only.
    for (uint32_t c = 0; c < d.grid.cols; c++)
      d.noc.worker_x.push_back(static_cast<uint32_t>(mesh_->worker_core_from_logical_core(TCoord(c, 0)).x));
    for (uint32_t r = 0; r < d.grid.rows; r++)
      d.noc.worker_y.push_back(static_cast<uint32_t>(mesh_->worker_core_from_logical_core(TCoord(0, r)).y));
    d.noc.dram_banks = dram_bank_nocs(d.dram_banks);
    uint32_t l1_banks = alloc->get_num_banks(tm::BufferType::L1);
    for (uint32_t b = 0; b < l1_banks; b++) {
      TCoord c = alloc->get_logical_core_from_bank_id(b);
      d.l1_bank_cores.push_back({static_cast<uint32_t>(c.y), static_cast<uint32_t>(c.x)});
    }
    return d;
  }

  // dram_bank_nocs returns the NOC (x, y) of each DRAM bank. tt-metal's API
  // names no bank's channel; it names the banks on a channel's logical core
  // (get_bank_ids_from_logical_core), so the table is built channel by
  // channel, and a bank on no channel is an error rather than a guess.
  std::vector<std::pair<uint32_t, uint32_t>> dram_bank_nocs(uint32_t banks) {
    const auto& alloc = mesh_->allocator();
    std::vector<std::pair<uint32_t, uint32_t>> nocs(banks);
    std::vector<bool> placed(banks, false);
    int channels = mesh_->num_dram_channels();
    for (int ch = 0; ch < channels; ch++) {
      TCoord logical = mesh_->logical_core_from_dram_channel(static_cast<uint32_t>(ch));
      TCoord v = mesh_->virtual_core_from_logical_core(logical, tt::CoreType::DRAM);
      for (uint32_t b : alloc->get_bank_ids_from_logical_core(tm::BufferType::DRAM, logical)) {
        if (b >= banks)
          throw Error("device_error", "DRAM channel " + std::to_string(ch) + " holds bank " + std::to_string(b) +
                                          " of " + std::to_string(banks));
        nocs[b] = {static_cast<uint32_t>(v.x), static_cast<uint32_t>(v.y)};
        placed[b] = true;
      }
    }
    for (uint32_t b = 0; b < banks; b++)
      if (!placed[b]) throw Error("device_error", "DRAM bank " + std::to_string(b) + " lies on none of the " +
                                                     std::to_string(channels) + " DRAM channels");
    return nocs;
  }

  // The L1 bank id of a worker core (one bank per worker core).
  uint32_t l1_bank_of(zyx::CoreCoord c) {
    const auto& ids = mesh_->allocator()->get_bank_ids_from_logical_core(tm::BufferType::L1, coord(c));
    if (ids.empty()) throw Error("device_error", "core " + std::to_string(c.row) + "," + std::to_string(c.col) + " has no L1 bank");
    return ids.front();
  }

  // bank_of returns (is_dram, bank) of page `page` of a buffer.
  std::pair<bool, uint32_t> bank_of(const Buf& b, uint32_t page) {
    const BufferSpec& s = b.info.spec;
    bool dram = s.placement == Placement::Dram;
    if (!s.shard) return {dram, page % (dram ? desc_.dram_banks : static_cast<uint32_t>(desc_.l1_bank_cores.size()))};
    // Sharded: page (row-major in the tensor of pages) lies in shard
    // (sr, sc), held by the k-th core of the shard grid in its orientation.
    // tt-metal's page order: height sharding as its row view.
    const ShardSpec sh = page_order_view(s);
    uint32_t row = page / sh.tensor[1], col = page % sh.tensor[1];
    uint32_t shards_per_row = (sh.tensor[1] + sh.shape[1] - 1) / sh.shape[1];
    uint32_t k = (row / sh.shape[0]) * shards_per_row + col / sh.shape[1];
    auto cores = sh.cores.cores(sh.orientation == ShardOrientation::ColMajor);
    if (k >= cores.size()) throw Error("invalid_argument", "page " + std::to_string(page) + " is past the shard grid");
    if (dram) return {true, cores[k].col};  // a DRAM shard grid names banks: [0, b]
    return {false, l1_bank_of(cores[k])};
  }

  std::vector<uint32_t> resolve(const ArgEntry& e, const std::vector<RunArg>& args) {
    auto buffer = [&]() -> Buf& { return buf(args.at(e.param).buffer); };
    switch (e.kind) {
      case ArgKind::Const:
        return {e.value};
      case ArgKind::Param:
        return {static_cast<uint32_t>(args.at(e.param).value)};
      case ArgKind::BufferAddr:
        return {static_cast<uint32_t>(buffer().mesh->address())};
      case ArgKind::BufferSize:
        return {static_cast<uint32_t>(buffer().info.size)};
      case ArgKind::BufferPages:
        return {static_cast<uint32_t>(buffer().info.pages())};
      case ArgKind::PageSize:
        return {static_cast<uint32_t>(buffer().info.page_size())};
      case ArgKind::BankId:
        return {bank_of(buffer(), e.page).second};
      case ArgKind::BankNocX:
      case ArgKind::BankNocY: {
        auto [dram, bank] = bank_of(buffer(), e.page);
        bool x = e.kind == ArgKind::BankNocX;
        if (dram) return {x ? desc_.noc.dram_banks.at(bank).first : desc_.noc.dram_banks.at(bank).second};
        TCoord v = mesh_->worker_core_from_logical_core(coord(desc_.l1_bank_cores.at(bank)));
        return {static_cast<uint32_t>(x ? v.x : v.y)};
      }
      case ArgKind::CoreNocX:
      case ArgKind::CoreNocY: {
        TCoord v = mesh_->worker_core_from_logical_core(coord(e.core));
        return {static_cast<uint32_t>(e.kind == ArgKind::CoreNocX ? v.x : v.y)};
      }
      case ArgKind::Accessor:
        return guard("tensor accessor args", "device_error", [&] {
          return tm::TensorAccessorArgs(*buffer().mesh->get_reference_buffer()).get_compile_time_args();
        });
      case ArgKind::SemaphoreAddr:
        break;  // refused at compile
    }
    return {};
  }

  std::vector<uint32_t> resolve_list(const std::vector<ArgEntry>& list, const std::vector<RunArg>& args) {
    std::vector<uint32_t> out;
    out.reserve(list.size());
    for (const auto& e : list) {
      auto w = resolve(e, args);
      out.insert(out.end(), w.begin(), w.end());
    }
    return out;
  }

  std::unique_ptr<Built> build(Prog& prog, const BuildKey& key, const std::vector<RunArg>& args) {
    const ProgramDesc& d = prog.desc;
    return guard("building program " + d.name, "compile_error", [&] {
      auto built = std::make_unique<Built>();
      tm::Program program = tm::CreateProgram();
      for (const auto& cb : d.cbs) {
        std::map<uint8_t, tt::DataFormat> formats;
        for (const auto& x : cb.indices) formats[static_cast<uint8_t>(x.index)] = data_format(x.format);
        tm::CircularBufferConfig config(cb.total_bytes, formats);
        for (const auto& x : cb.indices) {
          config.set_page_size(static_cast<uint8_t>(x.index), x.page_bytes);
          config.set_tile_dims(static_cast<uint8_t>(x.index), tm::Tile({x.tile_rows, x.tile_cols}));
        }
        // A CB on an L1 buffer is tt-metal's globally allocated CB, built on
        // this run's buffer; later runs point it at theirs
        // (UpdateDynamicCircularBufferAddress).
        if (cb.buffer_param)
          config.set_globally_allocated_address(*buf(args.at(*cb.buffer_param).buffer).mesh->get_reference_buffer());
        built->cbs.push_back(tm::CreateCircularBuffer(program, range_set(cb.cores), config));
      }
      for (const auto& s : d.semaphores) {
        uint32_t id = tm::CreateSemaphore(program, range_set(s.cores), s.initial);
        if (id != s.id)
          throw Error("device_error", "CreateSemaphore gave id " + std::to_string(id) + " where the program declared " +
                                          std::to_string(s.id));
      }
      for (size_t k = 0; k < d.kernels.size(); k++) {
        const KernelDesc& kd = d.kernels[k];
        std::unordered_map<std::string, uint32_t> named;
        for (size_t i = 0; i < kd.named_compile_args.size(); i++) named[kd.named_compile_args[i].first] = key.named_args[k][i];
        std::map<std::string, std::string> defines(kd.defines.begin(), kd.defines.end());
        tm::KernelHandle h{};
        if (kd.processor == Processor::Compute) {
          tm::ComputeConfig c;
          c.math_fidelity = fidelity(kd.compute.math_fidelity);
          c.fp32_dest_acc_en = kd.compute.fp32_dest_acc;
          c.math_approx_mode = kd.compute.math_approx_mode;
          c.bfp8_pack_precise = kd.compute.bfp8_pack_precise;
          c.dst_full_sync_en = kd.compute.dst_full_sync;
          if (!kd.compute.unpack_to_dest_fp32.empty()) {
            // The enum's namespace differs between tt-metal versions.
            using Mode = decltype(c.unpack_to_dest_mode)::value_type;
            c.unpack_to_dest_mode.assign(kCircularBuffersPerCore, Mode::Default);
            for (uint32_t cb : kd.compute.unpack_to_dest_fp32) c.unpack_to_dest_mode[cb] = Mode::UnpackToDestFp32;
          }
          c.compile_args = key.compile_args[k];
          c.defines = defines;
          c.named_compile_args = named;
          h = tm::CreateKernel(program, prog.sources[k], range_set(kd.cores), c);
        } else {
          tm::DataMovementConfig c;
          c.processor = kd.processor == Processor::Riscv0 ? tm::DataMovementProcessor::RISCV_0 : tm::DataMovementProcessor::RISCV_1;
          c.noc = kd.noc == 0 ? tm::NOC::NOC_0 : tm::NOC::NOC_1;
          c.compile_args = key.compile_args[k];
          c.defines = defines;
          c.named_compile_args = named;
          h = tm::CreateKernel(program, prog.sources[k], range_set(kd.cores), c);
        }
        built->kernels.push_back(h);
      }
      built->workload.add_program(dist::MeshCoordinateRange(mesh_->shape()), std::move(program));
      return built;
    });
  }

  // move_region moves [off, off+len) of an interleaved buffer between host
  // memory and the device through a shard transfer of a region.
  void move_region(Buf& b, uint64_t off, uint8_t* data, uint64_t len, bool to_device) {
    auto& cq = mesh_->mesh_command_queue();
    dist::ShardDataTransfer t{dist::MeshCoordinate(0, 0)};
    t.host_data(data).region(tm::BufferRegion(off, len));
    std::vector<dist::ShardDataTransfer> ts{t};
    if (to_device)
      cq.enqueue_write_shards(b.mesh, ts, /*blocking=*/true);
    else
      cq.enqueue_read_shards(ts, b.mesh, /*blocking=*/true);
  }

  // transfer moves bytes between host memory and [offset, offset+length) of
  // the buffer. Whole buffers go straight from or to host memory; for an
  // interleaved buffer a page-aligned range goes as a region, and a range
  // with a partial page at either end goes through a bounce copy of those
  // pages (read, patch, write back). Sharded buffers move whole (tt-metal
  // scatters the pages) and partial ranges through a whole-buffer bounce.
  void transfer(Buf& b, uint64_t offset, uint8_t* host, uint64_t length, bool write) {
    const uint64_t page = b.info.page_size();
    const uint64_t device_size = b.info.pages() * page;
    guard(std::string(write ? "writing " : "reading ") + std::to_string(length) + " bytes", "device_error", [&] {
      auto& cq = mesh_->mesh_command_queue();
      auto whole = [&](uint8_t* data, bool to_device) {
        if (to_device)
          cq.enqueue_write_mesh_buffer(b.mesh, data, /*blocking=*/true);
        else
          cq.enqueue_read_mesh_buffer(data, b.mesh, /*blocking=*/true);
      };
      if (offset == 0 && length == device_size) return whole(host, write);
      if (b.info.spec.shard) {
        std::vector<uint8_t> bounce(device_size);
        whole(bounce.data(), false);
        if (write) {
          std::memcpy(bounce.data() + offset, host, length);
          whole(bounce.data(), true);
        } else {
          std::memcpy(host, bounce.data() + offset, length);
        }
        return;
      }
      uint64_t first = offset / page * page;
      uint64_t end = std::min(device_size, (offset + length + page - 1) / page * page);
      if (first == offset && end == offset + length) return move_region(b, offset, host, length, write);
      std::vector<uint8_t> bounce(end - first);
      move_region(b, first, bounce.data(), bounce.size(), false);
      if (write) {
        std::memcpy(bounce.data() + (offset - first), host, length);
        move_region(b, first, bounce.data(), bounce.size(), true);
      } else {
        std::memcpy(host, bounce.data() + (offset - first), length);
      }
    });
  }

  // MetalRun is a run on the device: its wait and its finish wait for the
  // event enqueued after it. Its elapsed time runs from when the device
  // could start it (its enqueue, or the end of the run before it, whichever
  // is later) to its event (as the first of them saw it).
  //
  // wait runs on the server's waiter thread while the executor thread
  // enqueues further runs: EventSynchronize only reads the queue's last
  // completed event, which tt-metal's completion reader thread updates
  // under a lock, and wait touches nothing of the layer.
  class MetalRun : public PendingRun {
   public:
    MetalRun(MetalLayer& layer, std::unique_ptr<dist::MeshEvent> event, std::chrono::steady_clock::time_point enqueued,
             std::string name)
        : layer_(layer), event_(std::move(event)), enqueued_(enqueued), name_(std::move(name)) {}
    void wait() noexcept override {
      try {
        dist::EventSynchronize(*event_);
        seen_end_.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_release);
      } catch (...) {
        // finish waits again and reports the error.
      }
    }
    uint64_t finish() override {
      guard("program " + name_ + ": waiting for the run to end", "run_error", [&] { dist::EventSynchronize(*event_); });
      auto end = std::chrono::steady_clock::now();
      if (auto seen = seen_end_.load(std::memory_order_acquire); seen != 0)
        end = std::min(end, std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(seen)));
      auto from = std::max(enqueued_, layer_.last_end_);
      layer_.last_end_ = end;
      return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(end - from).count());
    }

   private:
    MetalLayer& layer_;
    std::unique_ptr<dist::MeshEvent> event_;
    std::chrono::steady_clock::time_point enqueued_;
    std::string name_;
    std::atomic<std::chrono::steady_clock::rep> seen_end_{0};  // when wait saw the end; 0: not yet
  };

  std::chrono::steady_clock::time_point last_end_{};
  int chip_;
  std::shared_ptr<dist::MeshDevice> mesh_;
  DeviceDesc desc_;
  std::map<uint64_t, Buf> bufs_;
  std::map<uint64_t, Prog> progs_;
  uint64_t next_buffer_ = 1, next_program_ = 1;
};

}  // namespace

std::unique_ptr<DeviceLayer> make_metal_layer(int chip, const std::string& cache_dir) {
  return std::make_unique<MetalLayer>(chip, cache_dir);
}

}  // namespace zyx
