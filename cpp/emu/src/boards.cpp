// Board presets: the harvest-aware logical worker grid, DRAM banks and L1 of
// each supported board, per chip. Grid sizes follow tt-metal's core
// descriptors (compute_with_storage_grid, one row or column kept for
// dispatch): Wormhole n150 8x8, n300 8x7 per chip; Blackhole p150a 13x10,
// p100a 11x10 (two columns harvested), p300c 11x10 per chip.
#include <sstream>

#include "emu.hpp"

namespace zyx::emu {

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

Board wormhole(std::string name, int chips, uint32_t rows, std::vector<uint32_t> harvested) {
  Board b;
  b.name = std::move(name);
  b.arch = "wormhole_b0";
  b.chips = chips;
  b.rows = rows;
  b.cols = 8;
  b.harvested_rows = std::move(harvested);
  b.dram_banks = 12;
  b.dram_bank_size = 1 * GiB;
  b.dram_alignment = 32;
  b.l1_size = 1464 * KiB;
  b.l1_unreserved_base = 100 * KiB;
  b.l1_alignment = 16;
  return b;
}

Board blackhole(std::string name, int chips, uint32_t cols, std::vector<uint32_t> harvested, uint32_t banks) {
  Board b;
  b.name = std::move(name);
  b.arch = "blackhole";
  b.chips = chips;
  b.rows = 10;
  b.cols = cols;
  b.harvested_cols = std::move(harvested);
  b.dram_banks = banks;
  b.dram_bank_size = 4 * GiB;
  b.dram_alignment = 64;
  b.l1_size = 1536 * KiB;
  b.l1_unreserved_base = 100 * KiB;
  b.l1_alignment = 16;
  return b;
}

}  // namespace

std::vector<std::string> board_names() { return {"n150", "n300", "p100a", "p150a", "p300c"}; }

Board board_preset(const std::string& name) {
  if (name == "n150") return wormhole(name, 1, 8, {9});
  if (name == "n300") return wormhole(name, 2, 7, {8, 9});
  if (name == "p150a" || name == "p150") return blackhole("p150a", 1, 13, {}, 8);
  if (name == "p100a" || name == "p100") return blackhole("p100a", 1, 11, {1, 12}, 7);
  if (name == "p300c" || name == "p300") return blackhole("p300c", 2, 11, {1, 12}, 8);
  std::ostringstream msg;
  msg << "unknown emulator board \"" << name << "\" (known:";
  for (auto& n : board_names()) msg << ' ' << n;
  msg << ')';
  throw Error("invalid_argument", msg.str());
}

DeviceDesc describe_board(const Board& b, int chip) {
  DeviceDesc d;
  d.runtime = "emu";
  d.arch = b.arch;
  d.board = b.name;
  d.chip = chip;
  d.grid.rows = b.rows;
  d.grid.cols = b.cols;
  d.grid.harvested_rows = b.harvested_rows;
  d.grid.harvested_cols = b.harvested_cols;
  for (auto r : b.harvested_rows) d.grid.harvest_mask |= uint64_t(1) << r;
  for (auto c : b.harvested_cols) d.grid.harvest_mask |= uint64_t(1) << c;
  static_cast<MemoryDesc&>(d) = b;
  // NOC coordinates (emu.hpp): worker (r, c) is (c + 1, r + 1), DRAM bank k is (0, k).
  for (uint32_t c = 0; c < b.cols; c++) d.noc.worker_x.push_back(worker_noc_x(c));
  for (uint32_t r = 0; r < b.rows; r++) d.noc.worker_y.push_back(worker_noc_y(r));
  for (uint32_t k = 0; k < b.dram_banks; k++) d.noc.dram_banks.emplace_back(dram_noc_x(k), dram_noc_y(k));
  // One L1 bank per worker core, row-major over the grid.
  for (uint32_t r = 0; r < b.rows; r++)
    for (uint32_t c = 0; c < b.cols; c++) d.l1_bank_cores.push_back(CoreCoord{r, c});
  d.semaphores = kSemaphoresPerCore;
  return d;
}

}  // namespace zyx::emu
