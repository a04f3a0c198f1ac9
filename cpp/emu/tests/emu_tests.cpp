// Tests of zyx-tt's Tensix emulator. Usage: emu_tests <group> <cache_dir>.
// Groups: boards, buffers, kernels, examples, deadlock, errors, ttmetal, model, stalls.
// Exit 0: pass, 1: fail, 77: skipped (the reason is printed).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "device_layer.hpp"
#include "harness.hpp"

using namespace zyx;
using namespace zyx_test;

// ---- boards -------------------------------------------------------------------

static void test_boards(const std::string& cache) {
  struct Want {
    const char* board;
    const char* arch;
    uint32_t rows, cols, banks;
    uint64_t bank_size, l1;
    int chips;
  };
  const uint64_t GiB = 1ull << 30;
  Want wants[] = {
      {"n150", "wormhole_b0", 8, 8, 12, 1 * GiB, 1464 * 1024, 1},
      {"n300", "wormhole_b0", 7, 8, 12, 1 * GiB, 1464 * 1024, 2},
      {"p100a", "blackhole", 10, 11, 7, 4 * GiB, 1536 * 1024, 1},
      {"p150a", "blackhole", 10, 13, 8, 4 * GiB, 1536 * 1024, 1},
      {"p300c", "blackhole", 10, 11, 8, 4 * GiB, 1536 * 1024, 2},
  };
  for (auto& w : wants) {
    for (int chip = 0; chip < w.chips; chip++) {
      auto layer = make_emu_layer(w.board, chip, cache);
      DeviceDesc d = layer->describe();
      CHECK_EQ(d.runtime, std::string("emu"));
      CHECK_EQ(d.arch, std::string(w.arch));
      CHECK_EQ(d.board, std::string(w.board));
      CHECK_EQ(d.chip, chip);
      CHECK_EQ(d.grid.rows, w.rows);
      CHECK_EQ(d.grid.cols, w.cols);
      CHECK_EQ(d.dram_banks, w.banks);
      CHECK_EQ(d.dram_bank_size, w.bank_size);
      CHECK_EQ(d.l1_size, w.l1);
      CHECK(d.l1_unreserved_base > 0 && d.l1_unreserved_base < d.l1_size);
      CHECK(d.grid.harvest_mask != 0 || std::string(w.board) == "p150a");
    }
    expect_error("invalid_argument", [&] { make_emu_layer(w.board, w.chips, cache); });
  }
  expect_error("invalid_argument", [&] { make_emu_layer("n999", 0, cache); });
}
ZYX_TEST(boards, test_boards);

// ---- buffers ------------------------------------------------------------------

static void test_buffers(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  // Interleaving: page i lives in bank i % 12 at base + (i / 12) * page.
  uint64_t addr = 0;
  uint64_t id = layer->alloc(30 * 2048, dram_spec(2048), &addr);
  BufferInfo info = layer->buffer_info(id);
  CHECK_EQ(info.address, addr);
  CHECK_EQ(info.size, uint64_t(30 * 2048));
  CHECK_EQ(info.pages(), uint64_t(30));
  std::vector<uint8_t> data(30 * 2048);
  std::mt19937 rng(1);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  layer->write(id, 0, data.data(), data.size());
  std::vector<uint8_t> back(data.size());
  layer->read(id, 0, back.data(), back.size());
  CHECK(back == data);
  // Unaligned sub-ranges across page boundaries.
  std::vector<uint8_t> part(5000);
  layer->read(id, 1234, part.data(), part.size());
  CHECK(std::memcmp(part.data(), data.data() + 1234, part.size()) == 0);
  std::vector<uint8_t> patch(3000, 0xAB);
  layer->write(id, 2047, patch.data(), patch.size());
  std::memset(data.data() + 2047, 0xAB, 3000);
  layer->read(id, 0, back.data(), back.size());
  CHECK(back == data);
  // Odd page sizes are padded to the DRAM alignment in each bank.
  uint64_t a2 = 0;
  uint64_t id2 = layer->alloc(1000, dram_spec(100), &a2);
  CHECK(a2 != addr);
  std::vector<uint8_t> d2(1000);
  for (size_t i = 0; i < d2.size(); i++) d2[i] = static_cast<uint8_t>(i * 7);
  layer->write(id2, 0, d2.data(), d2.size());
  std::vector<uint8_t> b2(1000);
  layer->read(id2, 0, b2.data(), b2.size());
  CHECK(b2 == d2);
  // Range errors move nothing.
  expect_error("invalid_argument", [&] { layer->read(id, 30 * 2048 - 10, back.data(), 11); });
  expect_error("invalid_argument", [&] { layer->write(id, 1ull << 40, back.data(), 1); });
  expect_error("invalid_argument", [&] { checked_alloc(*layer, 0, dram_spec(2048)); });
  expect_error("invalid_argument", [&] { checked_alloc(*layer, 16, dram_spec(0)); });
  // Out of memory: more than 12 GiB.
  expect_error("out_of_memory", [&] { layer->alloc(13ull << 30, dram_spec(2048), nullptr); });
  // A large allocation is lazy: 11 GiB allocated, nothing committed.
  uint64_t big = layer->alloc(11ull << 30, dram_spec(1 << 20), nullptr);
  uint8_t one = 42;
  layer->write(big, (11ull << 30) - 1, &one, 1);
  uint8_t got = 0;
  layer->read(big, (11ull << 30) - 1, &got, 1);
  CHECK_EQ(int(got), 42);
  layer->read(big, 5ull << 30, &got, 1);
  CHECK_EQ(int(got), 0);
  layer->free(big);
  layer->free(id);
  layer->free(id2);
  expect_error("unknown_buffer", [&] { layer->free(id); });
  expect_error("unknown_buffer", [&] { layer->buffer_info(id); });
  // Freed space is reused.
  uint64_t a3 = 0;
  layer->alloc(30 * 2048, dram_spec(2048), &a3);
  CHECK_EQ(a3, addr);
}
ZYX_TEST(buffers, test_buffers);

int main(int argc, char** argv) { return group_main(argc, argv); }
