// LLK definitions of zyx-tt's Tensix emulator that compute and data-movement
// kernels both see, as tt-metal's llk_defs.h gives them: the reduce pool
// types and dimensions, the packer ReLU modes and config, and the DST sync
// modes.
#pragma once

#include <cstdint>

namespace ckernel {

// Unscoped and in ckernel, as tt-metal declares them: kernels name them
// ckernel::PoolType::MAX, PoolType::MAX or MAX (through the using below).
enum PoolType { SUM = 0, AVG = 1, MAX = 2, MIN = 3 };
enum ReduceDim { REDUCE_ROW = 0, REDUCE_COL = 1, REDUCE_SCALAR = 2 };

enum class DstSync : uint8_t { SyncHalf = 0, SyncFull = 1 };

// Which source register a datacopy to DST reads (the LLK layer's
// llk_math_eltwise_unary_datacopy), unscoped as tt-metal declares it.
enum DataCopyType { A2D, B2D };

// The FPU's fidelity phases, with tt-metal's values (the emulator's
// numerics take the kernel's fidelity from its compute config).
enum class MathFidelity : uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4 };
// Whether the unpacker writes DST directly (a template arg of tt-metal's
// unpack calls).
constexpr bool UnpackToDestEn = true;
constexpr bool UnpackToDestDis = false;

// Packer ReLU: the modes, and a mode with its threshold (bf16 bits), whose
// packed word is pack_relu_config's.
enum class ReluType : uint8_t { NO_RELU = 0, ZERO_RELU = 1, MIN_THRESHOLD_RELU = 2, MAX_THRESHOLD_RELU = 3 };
struct ReluConfig {
  ReluType mode = ReluType::NO_RELU;
  uint32_t threshold = 0;
  static constexpr ReluConfig none() { return {ReluType::NO_RELU, 0}; }
  static constexpr ReluConfig zero() { return {ReluType::ZERO_RELU, 0}; }
  static constexpr ReluConfig min_threshold(uint32_t t) { return {ReluType::MIN_THRESHOLD_RELU, t}; }
  static constexpr ReluConfig max_threshold(uint32_t t) { return {ReluType::MAX_THRESHOLD_RELU, t}; }
  static constexpr ReluConfig from_packed(uint32_t p) { return {static_cast<ReluType>(p & 3), (p >> 16) & 0xFFFF}; }
  constexpr uint32_t packed() const { return static_cast<uint32_t>(mode) | ((threshold & 0xFFFF) << 16); }
};

}  // namespace ckernel

using namespace ckernel;
