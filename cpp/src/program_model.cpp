// Names of the program model's enums (device_layer.hpp), shared by the
// server and both device layers.
#include "device_layer.hpp"

namespace zyx {

std::optional<DataFormat> parse_data_format(const std::string& name) {
  for (const auto& [n, f] : kDataFormatNames)
    if (name == n) return f;
  return std::nullopt;
}

const char* data_format_name(DataFormat f) { return name_in(kDataFormatNames, f, "Invalid"); }

const char* processor_name(Processor p) { return name_in(kProcessorNames, p, "unknown"); }

}  // namespace zyx
