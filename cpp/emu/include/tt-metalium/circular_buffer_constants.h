// tt-metal include path mirrored by zyx-tt's emulator: the circular-buffer
// constants host and kernel share, with tt-metal's types and values (ttnn's
// kernel_lib helpers include this header).
//
// NUM_CIRCULAR_BUFFERS is the architecture's count of CB indices, as a
// kernel compiled for that card sees it; the emulator's own CB configs take
// indices 0..31 (kCircularBuffersPerCore) on every board, and refuses a
// config with a larger index (the program check).
#pragma once
#include <cstdint>

#if defined(ARCH_WORMHOLE)
constexpr static std::uint32_t NUM_CIRCULAR_BUFFERS = 32;
#else
constexpr static std::uint32_t NUM_CIRCULAR_BUFFERS = 64;
#endif
// 32-bit words of one CB's entry in a core's CB config table: a local CB
// (address, size, pages, page size) and a remote CB.
constexpr static std::uint32_t UINT32_WORDS_PER_LOCAL_CIRCULAR_BUFFER_CONFIG = 4;
constexpr static std::uint32_t UINT32_WORDS_PER_REMOTE_CIRCULAR_BUFFER_CONFIG = 2;
// The compute engine addresses CBs in 16-byte words.
constexpr static std::uint32_t CIRCULAR_BUFFER_COMPUTE_WORD_SIZE = 16;
constexpr static std::uint32_t CIRCULAR_BUFFER_COMPUTE_ADDR_SHIFT = 4;
