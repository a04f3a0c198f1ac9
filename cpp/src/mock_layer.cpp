// The device layer of mock mode (mock.hpp): the wrapped layer's device,
// reshaped, with a DRAM budget and DPRINT lines of its own.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "mock.hpp"

namespace zyx::mock {

namespace {

[[noreturn]] void cannot(const std::string& what) {
  throw Error("invalid_argument", "mock: " + what + " (the mock reports a part of the device it wraps, never more)");
}

// drop_rows shrinks the grid to rows logical rows.
void drop_rows(DeviceDesc* d, uint32_t rows) {
  d->grid.rows = rows;
  d->noc.worker_y.resize(rows);
}

}  // namespace

void reshape(const Spec& s, DeviceDesc* d) {
  const std::string dev = d->runtime + " " + d->board;
  if (s.rows) {
    if (*s.rows == 0 || *s.rows > d->grid.rows)
      cannot("rows=" + std::to_string(*s.rows) + ": the " + dev + " has " + std::to_string(d->grid.rows) + " rows");
    drop_rows(d, *s.rows);
  }
  if (s.cols) {
    if (*s.cols == 0 || *s.cols > d->grid.cols)
      cannot("cols=" + std::to_string(*s.cols) + ": the " + dev + " has " + std::to_string(d->grid.cols) + " columns");
    d->grid.cols = *s.cols;
    d->noc.worker_x.resize(*s.cols);
  }
  for (uint32_t r : s.harvest_rows) {
    // A harvested row costs the grid its last logical row; the rows kept
    // are those of the wrapped device.
    if (r >= 64) cannot("harvest-rows " + std::to_string(r) + ": physical rows are below 64");
    if (d->grid.harvest_mask & (uint64_t{1} << r)) cannot("harvest-rows " + std::to_string(r) + ": already harvested");
    if (d->grid.rows <= 1) cannot("harvest-rows: no row would be left");
    drop_rows(d, d->grid.rows - 1);
    d->grid.harvested_rows.push_back(r);
    d->grid.harvest_mask |= uint64_t{1} << r;
  }
  std::sort(d->grid.harvested_rows.begin(), d->grid.harvested_rows.end());
  if (s.banks) {
    if (*s.banks == 0 || *s.banks > d->dram_banks)
      cannot("banks=" + std::to_string(*s.banks) + ": the " + dev + " has " + std::to_string(d->dram_banks) + " DRAM banks");
    d->dram_banks = *s.banks;
    d->noc.dram_banks.resize(*s.banks);
  }
  if (s.bank_size) {
    if (*s.bank_size == 0 || *s.bank_size > d->dram_bank_size)
      cannot("bank-size=" + std::to_string(*s.bank_size) + ": the " + dev + " has banks of " +
             std::to_string(d->dram_bank_size) + " bytes");
    d->dram_bank_size = *s.bank_size;
  }
  if (s.l1) {
    if (*s.l1 > d->l1_size || *s.l1 <= d->l1_unreserved_base)
      cannot("l1=" + std::to_string(*s.l1) + ": the " + dev + " has " + std::to_string(d->l1_size) +
             " bytes of L1 per core, reserved below " + std::to_string(d->l1_unreserved_base));
    d->l1_size = *s.l1;
  }
  if (s.l1_base) {
    if (*s.l1_base < d->l1_unreserved_base || *s.l1_base >= d->l1_size)
      cannot("l1-base=" + std::to_string(*s.l1_base) + ": the " + dev + "'s L1 is free from " +
             std::to_string(d->l1_unreserved_base) + " to " + std::to_string(d->l1_size));
    d->l1_unreserved_base = *s.l1_base;
  }
  if (s.semaphores) {
    if (*s.semaphores == 0 || *s.semaphores > d->semaphores)
      cannot("semaphores=" + std::to_string(*s.semaphores) + ": the " + dev + " has " + std::to_string(d->semaphores) +
             " per core");
    d->semaphores = *s.semaphores;
  }
  // The L1 banks are those of the cores left.
  std::erase_if(d->l1_bank_cores, [&](const CoreCoord& c) { return c.row >= d->grid.rows || c.col >= d->grid.cols; });
}

MockLayer::MockLayer(std::unique_ptr<DeviceLayer> inner, const Spec& spec, std::string runtime, bool dprint)
    : inner_(std::move(inner)), desc_(inner_->describe()) {
  reshape(spec, &desc_);
  if (!runtime.empty()) desc_.runtime = std::move(runtime);
  if (dprint) dprint_text_ = spec.dprint;
}

uint64_t MockLayer::alloc(uint64_t size, const BufferSpec& spec, uint64_t* address) {
  bool dram = spec.placement == Placement::Dram;
  uint64_t total = uint64_t{desc_.dram_banks} * desc_.dram_bank_size;
  if (dram && size > total - dram_used_)
    throw Error("out_of_memory", "alloc: " + std::to_string(size) + " bytes asked, " + std::to_string(total - dram_used_) +
                                     " free in the DRAM the mock reports");
  uint64_t id = inner_->alloc(size, spec, address);
  if (dram) {
    dram_used_ += size;
    dram_sizes_[id] = size;
  }
  return id;
}

void MockLayer::free(uint64_t buffer) {
  inner_->free(buffer);
  if (auto it = dram_sizes_.find(buffer); it != dram_sizes_.end()) {
    dram_used_ -= it->second;
    dram_sizes_.erase(it);
  }
}

uint64_t MockLayer::compile(const ProgramDesc& program) {
  uint64_t id = inner_->compile(program);
  if (dprint_text_.empty()) return id;
  std::string lines;
  for (const auto& k : program.kernels)
    for (const auto& c : k.cores.cores())
      lines += "dprint: core (" + std::to_string(c.row) + "," + std::to_string(c.col) + ") " +
               processor_name(k.processor) + ": " + dprint_text_ + "\n";
  dprint_lines_[id] = std::move(lines);
  return id;
}

void MockLayer::release(uint64_t program) {
  inner_->release(program);
  dprint_lines_.erase(program);
}

void MockLayer::print_dprint(uint64_t program) const {
  auto it = dprint_lines_.find(program);
  if (it == dprint_lines_.end()) return;
  const std::string& s = it->second;
  for (size_t done = 0; done < s.size();) {
    ssize_t n = ::write(STDERR_FILENO, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

uint64_t MockLayer::run(uint64_t program, const std::vector<RunArg>& args, bool timed) {
  uint64_t ns = inner_->run(program, args, timed);
  print_dprint(program);
  return ns;
}

namespace {

// PrintingRun prints a run's DPRINT lines once it has ended well, before
// the server answers it.
class PrintingRun : public PendingRun {
 public:
  PrintingRun(std::unique_ptr<PendingRun> inner, std::function<void()> print)
      : inner_(std::move(inner)), print_(std::move(print)) {}
  bool done() const override { return inner_->done(); }
  void wait() noexcept override { inner_->wait(); }
  uint64_t finish() override {
    uint64_t ns = inner_->finish();
    print_();
    return ns;
  }

 private:
  std::unique_ptr<PendingRun> inner_;
  std::function<void()> print_;
};

}  // namespace

std::unique_ptr<PendingRun> MockLayer::launch(uint64_t program, const std::vector<RunArg>& args, bool timed) {
  auto run = inner_->launch(program, args, timed);
  if (!dprint_lines_.count(program)) return run;
  return std::make_unique<PrintingRun>(std::move(run), [this, program] { print_dprint(program); });
}

LayerFactory layer_factory(const Spec& spec, LayerFactory open) {
  return [spec, open](const LayerRequest& req) -> std::unique_ptr<DeviceLayer> {
    LayerRequest inner = req;
    if (spec.layer == "emu") inner.layer = "emu";
    if (!spec.board.empty()) inner.board = spec.board;
    std::unique_ptr<DeviceLayer> l = open(inner);
    if (!l) throw Error("internal", "mock: the " + inner.layer + " layer factory returned nothing");
    // A metal init served by the emulator says metal, as a card would.
    std::string runtime = req.layer == "metal" ? "metal" : "";
    const char* env = std::getenv("ZYX_EMU_DPRINT");
    bool dprint = req.dprint || (env && *env);
    return std::make_unique<MockLayer>(std::move(l), spec, std::move(runtime), dprint);
  };
}

}  // namespace zyx::mock
