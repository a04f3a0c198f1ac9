// What the generated protocol tables are made of. protocol/protocol.json
// describes the protocol once; `go generate ./ttruntime` writes from it
// protocol_enums_gen.hpp (the enums and their name tables) and
// protocol_fields_gen.hpp (one field table per request message, and a typed
// handle per field), which the request parser (request.cpp) reads requests
// with. docs/protocol.md, "Add a protocol field", says how to change them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

namespace zyx {

// A name table maps the protocol names of an enum to its values, in the
// schema's order.
template <typename E, size_t N>
using NameTable = std::array<std::pair<std::string_view, E>, N>;

// The name of e in a table (the names are string literals, so NUL-terminated),
// or fallback where the table has none.
template <typename E, size_t N>
constexpr const char* name_in(const NameTable<E, N>& table, E e, const char* fallback) {
  for (const auto& [name, value] : table)
    if (value == e) return name.data();
  return fallback;
}

namespace proto {

// The JSON shape of a field's value.
enum class Type : uint8_t {
  U32,           // an unsigned integer that fits 32 bits
  U64,           // an unsigned integer that fits 64 bits
  Bool,          // true or false
  String,        // a string
  Enum,          // a string that is one of its enum's names
  Core,          // [row, col]
  CoreRangeSet,  // an array of [r0, c0, r1, c1]
  U32Pair,       // an array of 2 unsigned 32-bit integers
  List,          // an array
  Map,           // an object whose keys the schema does not name
  Object,        // an object of a message
};

// kAllVariants: a field that every variant of its message takes.
inline constexpr uint64_t kAllVariants = ~uint64_t{0};

// variants is the set of a message's variants that take a field: bit i
// stands for the i-th value of the message's tag enum.
template <typename... E>
constexpr uint64_t variants(E... e) {
  return ((uint64_t{1} << static_cast<unsigned>(e)) | ...);
}

// FieldSpec is one field of a message.
struct FieldSpec {
  std::string_view name;
  Type type;
  // required: a request without it is bad_request ("missing field"), in
  // the variants that take it.
  bool required;
  // The variants that take the field (kAllVariants for a message without a
  // tag).
  uint64_t variants;
  // refused: the message for the field given in a variant that does not
  // take it; empty: it is an unknown field there.
  std::string_view refused;
  // missing: a note on a missing required field ("missing field (note)").
  std::string_view missing;
};

// MessageSpec is an object's fields in the schema's order, embedded
// messages' fields in their place. tag is the index of the field whose
// enum value selects the variant, or -1.
struct MessageSpec {
  std::string_view name;
  std::span<const FieldSpec* const> fields;
  int tag;
};

// Field<T> is a field read as T: required, or with a default (fallback).
template <typename T>
struct Field {
  const FieldSpec* spec;
  T fallback;
};

// OptField<T> is an optional field without a default: it reads as an
// std::optional<T>.
template <typename T>
struct OptField {
  const FieldSpec* spec;
};

// RawField is a field of a structured type (core, core range set, pair,
// list, map, object): the reader gets its JSON value. element is the
// message of an object field or of a list's or map's objects.
struct RawField {
  const FieldSpec* spec;
  const MessageSpec* element;
};

}  // namespace proto
}  // namespace zyx
