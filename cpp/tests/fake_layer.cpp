#include "fake_layer.hpp"

#include <cstring>
#include <mutex>

namespace zyx::test {

FakeState::FakeState() {
  DeviceDesc& d = desc;
  d.runtime = "emu";
  d.arch = "wormhole_b0";
  d.board = "fake";
  d.chip = 0;
  d.grid.rows = 8;
  d.grid.cols = 8;
  d.grid.harvested_rows = {9};
  d.grid.harvest_mask = 1u << 9;
  d.dram_banks = 12;
  d.dram_bank_size = uint64_t{1} << 30;
  d.dram_alignment = 32;
  d.l1_size = 1464 * 1024;
  d.l1_unreserved_base = 100 * 1024;
  d.l1_alignment = 16;
  d.semaphores = 16;
  // Wormhole-like NOC coordinates: worker columns skip x 5, rows skip y 6.
  for (uint32_t c = 0; c < 8; c++) d.noc.worker_x.push_back(c < 4 ? c + 1 : c + 2);
  for (uint32_t r = 0; r < 8; r++) d.noc.worker_y.push_back(r < 5 ? r + 1 : r + 2);
  for (uint32_t b = 0; b < 12; b++) d.noc.dram_banks.push_back({b < 6 ? 0u : 5u, 1 + (b % 6) * 2});
  for (uint32_t r = 0; r < 8; r++)
    for (uint32_t c = 0; c < 8; c++) d.l1_bank_cores.push_back({r, c});
}

FakeLayer::Buf& FakeLayer::buf(uint64_t id) {
  auto it = bufs_.find(id);
  if (it == bufs_.end()) throw Error("unknown_buffer", "fake: no buffer " + std::to_string(id));
  return it->second;
}

uint64_t FakeLayer::alloc(uint64_t size, const BufferSpec& spec, uint64_t* address) {
  Buf b;
  if (spec.placement == Placement::L1) {
    next_l1_ -= 64 * 1024;
    b.info = BufferInfo{next_l1_, size, spec};
  } else {
    b.info = BufferInfo{next_addr_, size, spec};
    next_addr_ += (size + 31) / 32 * 32;
  }
  if (size <= st_->backed_limit) b.bytes.assign(size, 0);
  *address = b.info.address;
  uint64_t id = next_buf_++;
  bufs_.emplace(id, std::move(b));
  st_->live_buffers++;
  return id;
}

void FakeLayer::free(uint64_t id) {
  buf(id);
  bufs_.erase(id);
  st_->live_buffers--;
}

BufferInfo FakeLayer::buffer_info(uint64_t id) { return buf(id).info; }

void FakeLayer::write(uint64_t id, uint64_t offset, const uint8_t* src, uint64_t length) {
  Buf& b = buf(id);
  if (b.bytes.empty()) throw Error("unsupported", "fake: buffer is not backed");
  std::memcpy(b.bytes.data() + offset, src, length);
  st_->writes++;
}

void FakeLayer::read(uint64_t id, uint64_t offset, uint8_t* dst, uint64_t length) {
  Buf& b = buf(id);
  if (b.bytes.empty()) throw Error("unsupported", "fake: buffer is not backed");
  std::memcpy(dst, b.bytes.data() + offset, length);
  st_->reads++;
}

uint64_t FakeLayer::compile(const ProgramDesc& p) {
  for (const auto& k : p.kernels)
    if (k.source.find("#error") != std::string::npos)
      throw Error("compile_error", "kernel.cpp:1:2: error: #error \"stop\"\n\tin \"" + p.name + "\"");
  st_->last_program = p;
  progs_[next_prog_] = p;
  st_->live_programs++;
  return next_prog_++;
}

// resolve computes one word by the protocol's formulas, interleaved buffers
// only (what the server tests use).
uint32_t FakeLayer::resolve(const ArgEntry& e, const ProgramDesc&, const std::vector<RunArg>& args) {
  const DeviceDesc& d = st_->desc;
  auto info = [&]() -> const BufferInfo& { return buf(args.at(e.param).buffer).info; };
  switch (e.kind) {
    case ArgKind::Const:
      return e.value;
    case ArgKind::Param:
      return static_cast<uint32_t>(args.at(e.param).value);
    case ArgKind::BufferAddr:
      return static_cast<uint32_t>(info().address);
    case ArgKind::BufferSize:
      return static_cast<uint32_t>(info().size);
    case ArgKind::BufferPages:
      return static_cast<uint32_t>(info().pages());
    case ArgKind::PageSize:
      return static_cast<uint32_t>(info().page_size());
    case ArgKind::BankId:
    case ArgKind::BankNocX:
    case ArgKind::BankNocY: {
      const BufferInfo& b = info();
      bool l1 = b.spec.placement == Placement::L1;
      uint32_t banks = l1 ? static_cast<uint32_t>(d.l1_bank_cores.size()) : d.dram_banks;
      uint32_t bank = e.page % banks;
      if (e.kind == ArgKind::BankId) return bank;
      if (l1) {
        CoreCoord c = d.l1_bank_cores[bank];
        return e.kind == ArgKind::BankNocX ? d.noc.worker_x[c.col] : d.noc.worker_y[c.row];
      }
      return e.kind == ArgKind::BankNocX ? d.noc.dram_banks[bank].first : d.noc.dram_banks[bank].second;
    }
    case ArgKind::CoreNocX:
      return d.noc.worker_x[e.core.col];
    case ArgKind::CoreNocY:
      return d.noc.worker_y[e.core.row];
    case ArgKind::Accessor:
      return 0;
    case ArgKind::SemaphoreAddr:
      // A stand-in address: the fake layer has no L1; tests read the word
      // back to see the id.
      return 0x1000u + e.value * 16u;
  }
  return 0;
}

uint64_t FakeLayer::run(uint64_t program, const std::vector<RunArg>& args, bool timed) {
  auto it = progs_.find(program);
  if (it == progs_.end()) throw Error("unknown_program", "fake: no program");
  const ProgramDesc& p = it->second;
  if (st_->on_run) st_->on_run();
  for (const auto& k : p.kernels)
    if (k.source.find("HANG") != std::string::npos) throw Error("deadlock", "core (0,0) compute waits on cb 0");
  st_->runtime_words.clear();
  st_->common_words.clear();
  for (size_t k = 0; k < p.kernels.size(); k++) {
    const KernelDesc& kd = p.kernels[k];
    for (const auto& e : kd.common_args) st_->common_words[k].push_back(resolve(e, p, args));
    for (const auto& ca : kd.runtime_args)
      for (CoreCoord c : ca.cores.cores()) {
        auto& words = st_->runtime_words[k][{c.row, c.col}];
        for (const auto& e : ca.args) words.push_back(resolve(e, p, args));
      }
  }
  st_->runs++;
  return timed ? 1000 : 0;
}

namespace {

class FakePending : public PendingRun {
 public:
  FakePending(std::shared_ptr<FakeState> st, uint64_t n, uint64_t ns, bool fail)
      : st_(std::move(st)), n_(n), ns_(ns), fail_(fail) {}
  // The run ends when on_finish returns, once, whichever thread waits
  // first; a second waiter blocks until then.
  void wait() noexcept override {
    std::call_once(ended_, [&] {
      if (st_->on_finish) st_->on_finish(n_);
      st_->note("end " + std::to_string(n_));
    });
  }
  uint64_t finish() override {
    wait();
    st_->note("finish " + std::to_string(n_));
    if (fail_) throw Error("run_error", "fake: run " + std::to_string(n_) + " failed at its end");
    return ns_;
  }

 private:
  std::shared_ptr<FakeState> st_;
  uint64_t n_, ns_;
  bool fail_;
  std::once_flag ended_;
};

}  // namespace

std::unique_ptr<PendingRun> FakeLayer::launch(uint64_t program, const std::vector<RunArg>& args, bool timed) {
  if (!st_->async_runs) return DeviceLayer::launch(program, args, timed);
  uint64_t ns = run(program, args, timed);
  bool fail = false;
  for (const auto& k : progs_.at(program).kernels) fail = fail || k.source.find("FAILLATE") != std::string::npos;
  uint64_t n = ++st_->launched;
  st_->note("launch " + std::to_string(n));
  return std::make_unique<FakePending>(st_, n, ns, fail);
}

void FakeLayer::release(uint64_t program) {
  if (!progs_.erase(program)) throw Error("unknown_program", "fake: no program");
  st_->live_programs--;
}

}  // namespace zyx::test
