// Helpers shared by the kernel tests: building programs, moving typed data
// in and out of emulated buffers.
#pragma once

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "device_layer.hpp"
#include "test_util.hpp"

namespace zyx_test {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline zyx::LayoutEntry L(const std::string& kind, uint32_t param = 0, uint32_t value = 0) {
  zyx::LayoutEntry e;
  e.kind = kind;
  e.param = param;
  e.value = value;
  return e;
}
inline zyx::LayoutEntry C(uint32_t value) { return L("const", 0, value); }

inline zyx::CBConfig CB(uint32_t index, const std::string& format, uint32_t page_bytes, uint32_t pages) {
  zyx::CBConfig c;
  c.index = index;
  c.format = format;
  c.page_bytes = page_bytes;
  c.pages = pages;
  return c;
}

inline zyx::ParamDesc P(const std::string& name, const std::string& kind, const std::string& dtype = "f32") {
  zyx::ParamDesc p;
  p.name = name;
  p.kind = kind;
  p.dtype = dtype;
  return p;
}

inline zyx::RunArg Buf(uint64_t id) {
  zyx::RunArg a;
  a.is_buffer = true;
  a.buffer = id;
  return a;
}
inline zyx::RunArg Val(uint64_t v) {
  zyx::RunArg a;
  a.value = v;
  return a;
}

template <typename T>
uint64_t upload(zyx::DeviceLayer& layer, const std::vector<T>& v, uint64_t page_size) {
  uint64_t id = layer.alloc(v.size() * sizeof(T), page_size, nullptr);
  layer.write(id, 0, reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(T));
  return id;
}

template <typename T>
std::vector<T> download(zyx::DeviceLayer& layer, uint64_t id, size_t count) {
  std::vector<T> v(count);
  layer.read(id, 0, reinterpret_cast<uint8_t*>(v.data()), count * sizeof(T));
  return v;
}

}  // namespace zyx_test
