// The protocol names of the program model's enums (docs/protocol.md), one
// table per enum: the request parser reads names to values from them (and
// lists them when a name is unknown), processor_name and the other *_name
// functions read values to names.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <utility>

#include "device_layer.hpp"

namespace zyx {

template <typename E, size_t N>
using NameTable = std::array<std::pair<std::string_view, E>, N>;

inline constexpr NameTable<ParamKind, 3> kParamKindNames = {{
    {"global", ParamKind::Global},
    {"global_mut", ParamKind::GlobalMut},
    {"variable", ParamKind::Variable},
}};
inline constexpr NameTable<Processor, 3> kProcessorNames = {{
    {"riscv_0", Processor::Riscv0},
    {"riscv_1", Processor::Riscv1},
    {"compute", Processor::Compute},
}};
inline constexpr NameTable<ArgKind, 13> kArgKindNames = {{
    {"const", ArgKind::Const},
    {"param", ArgKind::Param},
    {"buffer_addr", ArgKind::BufferAddr},
    {"buffer_size", ArgKind::BufferSize},
    {"buffer_pages", ArgKind::BufferPages},
    {"page_size", ArgKind::PageSize},
    {"bank_id", ArgKind::BankId},
    {"bank_noc_x", ArgKind::BankNocX},
    {"bank_noc_y", ArgKind::BankNocY},
    {"core_noc_x", ArgKind::CoreNocX},
    {"core_noc_y", ArgKind::CoreNocY},
    {"accessor", ArgKind::Accessor},
    {"semaphore_addr", ArgKind::SemaphoreAddr},
}};
// Every kind has a name (the tables replace switches that the compiler
// checked for completeness).
static_assert(kParamKindNames.size() == size_t(ParamKind::Variable) + 1);
static_assert(kProcessorNames.size() == size_t(Processor::Compute) + 1);
static_assert(kArgKindNames.size() == size_t(ArgKind::SemaphoreAddr) + 1);
inline constexpr NameTable<DataFormat, 10> kDataFormatNames = {{
    {"Float32", DataFormat::Float32},
    {"Float16_b", DataFormat::Float16_b},
    {"Float16", DataFormat::Float16},
    {"Bfp8_b", DataFormat::Bfp8_b},
    {"Bfp4_b", DataFormat::Bfp4_b},
    {"Int32", DataFormat::Int32},
    {"UInt32", DataFormat::UInt32},
    {"UInt16", DataFormat::UInt16},
    {"UInt8", DataFormat::UInt8},
    {"Int8", DataFormat::Int8},
}};

// The name of e in a table (the names are string literals, so NUL-terminated),
// or fallback where the table has none.
template <typename E, size_t N>
constexpr const char* name_in(const NameTable<E, N>& table, E e, const char* fallback) {
  for (const auto& [name, value] : table)
    if (value == e) return name.data();
  return fallback;
}

}  // namespace zyx
