// tt-metal include path mirrored by zyx-tt's emulator: the buffer layout
// enums kernels compare compile-time args against (a program factory passes
// a TensorMemoryLayout or BufferType as a number), with tt-metal's names and
// values.
#pragma once
#include <cstdint>

namespace tt::tt_metal {

// 1 is not used.
enum class TensorMemoryLayout {
  INTERLEAVED = 0,
  HEIGHT_SHARDED = 2,
  WIDTH_SHARDED = 3,
  BLOCK_SHARDED = 4,
  ND_SHARDED = 5,
};

enum class ShardOrientation { ROW_MAJOR = 0, COL_MAJOR = 1 };

enum class ShardDistributionStrategy { ROUND_ROBIN_1D = 0, GRID_2D = 1 };

enum class BufferType { DRAM = 0, L1 = 1, SYSTEM_MEMORY = 2, L1_SMALL = 3, TRACE = 4 };

}  // namespace tt::tt_metal
