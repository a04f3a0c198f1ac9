#include "fake_layer.hpp"

#include <cstring>

namespace zyx::test {

DeviceDesc FakeLayer::describe() {
  DeviceDesc d;
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
  return d;
}

FakeLayer::Buf& FakeLayer::buf(uint64_t id) {
  auto it = bufs_.find(id);
  if (it == bufs_.end()) throw Error("unknown_buffer", "fake: no buffer " + std::to_string(id));
  return it->second;
}

uint64_t FakeLayer::alloc(uint64_t size, uint64_t page_size, uint64_t* address) {
  Buf b;
  b.info = BufferInfo{next_addr_, size, page_size};
  if (size <= kBacked) b.bytes.assign(size, 0);
  next_addr_ += (size + 31) / 32 * 32;
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
  for (const Section* s : {&p.reader, &p.compute, &p.writer})
    if (s->source.find("#error") != std::string::npos)
      throw Error("compile_error", "kernel.cpp:1:2: error: #error \"stop\"\n\tin \"" + p.name + "\"");
  st_->last_program = p;
  progs_[next_prog_] = p;
  st_->live_programs++;
  return next_prog_++;
}

uint64_t FakeLayer::run(uint64_t program, uint32_t rows, uint32_t cols, const std::vector<RunArg>& args, bool timed) {
  auto it = progs_.find(program);
  if (it == progs_.end()) throw Error("unknown_program", "fake: no program");
  const ProgramDesc& p = it->second;
  if (p.compute.source.find("HANG") != std::string::npos)
    throw Error("deadlock", "core (0,0) compute waits on cb 0");
  auto accessor = [](const BufferInfo& b, std::vector<uint32_t>& out) {
    out.push_back(static_cast<uint32_t>(b.address));
    out.push_back(static_cast<uint32_t>(b.page_size));
  };
  for (uint32_t r = 0; r < rows; r++)
    for (uint32_t c = 0; c < cols; c++)
      st_->last_runtime_words =
          resolve_layout(p.reader.runtime_args, p.params, args, *this, CoreCtx{r, c, rows, cols}, accessor);
  st_->runs++;
  return timed ? 1000 : 0;
}

void FakeLayer::release(uint64_t program) {
  if (!progs_.erase(program)) throw Error("unknown_program", "fake: no program");
  st_->live_programs--;
}

}  // namespace zyx::test
