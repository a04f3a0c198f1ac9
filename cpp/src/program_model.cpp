// Names of the program model's enums (device_layer.hpp), shared by the
// server and both device layers.
#include "device_layer.hpp"

namespace zyx {

namespace {

struct FormatName {
  DataFormat format;
  const char* name;
};

constexpr FormatName kFormats[] = {
    {DataFormat::Float32, "Float32"}, {DataFormat::Float16_b, "Float16_b"}, {DataFormat::Float16, "Float16"},
    {DataFormat::Bfp8_b, "Bfp8_b"},   {DataFormat::Bfp4_b, "Bfp4_b"},       {DataFormat::Int32, "Int32"},
    {DataFormat::UInt32, "UInt32"},   {DataFormat::UInt16, "UInt16"},       {DataFormat::UInt8, "UInt8"},
    {DataFormat::Int8, "Int8"},
};

}  // namespace

std::optional<DataFormat> parse_data_format(const std::string& name) {
  for (const auto& f : kFormats)
    if (name == f.name) return f.format;
  return std::nullopt;
}

const char* data_format_name(DataFormat f) {
  for (const auto& k : kFormats)
    if (k.format == f) return k.name;
  return "Invalid";
}

const char* processor_name(Processor p) {
  switch (p) {
    case Processor::Riscv0:
      return "riscv_0";
    case Processor::Riscv1:
      return "riscv_1";
    case Processor::Compute:
      return "compute";
  }
  return "unknown";
}

}  // namespace zyx
