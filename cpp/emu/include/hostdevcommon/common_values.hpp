// tt-metal include path mirrored by zyx-tt's emulator: the values host and
// device code share. Kernels use VALID and INVALID as semaphore states (a
// receiver waits for VALID, a sender resets to INVALID); tt-metal's
// dataflow_api.h makes them visible to every data-movement kernel, and so
// does the emulator's.
#pragma once
#include <cstdint>

constexpr static std::uint32_t INVALID = 0;
constexpr static std::uint32_t VALID = 1;
