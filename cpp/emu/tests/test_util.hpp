// Minimal test support for the emulator tests: checks that report the
// file and line, expected-error checks, skips, and number helpers.
#pragma once

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_layer.hpp"

namespace zyx_test {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct Skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

#define CHECK(cond)                                                                                       \
  do {                                                                                                    \
    if (!(cond)) throw ::zyx_test::Failure(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #cond); \
  } while (0)

#define CHECK_EQ(a, b)                                                                                 \
  do {                                                                                                 \
    auto va_ = (a);                                                                                    \
    auto vb_ = (b);                                                                                    \
    if (!(va_ == vb_)) {                                                                               \
      std::ostringstream os_;                                                                          \
      os_ << __FILE__ << ":" << __LINE__ << ": " #a " == " #b ": " << va_ << " != " << vb_;            \
      throw ::zyx_test::Failure(os_.str());                                                            \
    }                                                                                                  \
  } while (0)

// Runs fn, which must throw zyx::Error with the given code; returns its message.
inline std::string expect_error_at(const char* file, int line, const std::string& code, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const zyx::Error& e) {
    if (e.code != code)
      throw Failure(std::string(file) + ":" + std::to_string(line) + ": want error " + code + ", got " + e.code +
                    ": " + e.what());
    return e.what();
  }
  throw Failure(std::string(file) + ":" + std::to_string(line) + ": want error " + code + ", got success");
}
#define expect_error(code, fn) ::zyx_test::expect_error_at(__FILE__, __LINE__, code, fn)

inline int run_group(const std::string& name, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Skip& s) {
    std::printf("SKIP %s: %s\n", name.c_str(), s.what());
    return 77;
  } catch (const Failure& f) {
    std::printf("FAIL %s: %s\n", name.c_str(), f.what());
    return 1;
  } catch (const zyx::Error& e) {
    std::printf("FAIL %s: unexpected error %s: %s\n", name.c_str(), e.code.c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::printf("FAIL %s: exception: %s\n", name.c_str(), e.what());
    return 1;
  }
  std::printf("PASS %s\n", name.c_str());
  return 0;
}

// Test registration. Each test files itself under its group next to its
// definition:
//   ZYX_TEST(group, fn)            fn(DeviceLayer&) on the group's n150 layer,
//                                  or fn(const std::string& cache) with the cache dir
//   ZYX_TEST_ON(group, fn, board)  fn(DeviceLayer&) on the group's layer of that board
//   ZYX_TEST_CACHE_DIR(group, fn)  fn(cache) -> the cache dir the group's tests get
// The group's layers (one a board, over the cache dir) are made at their first
// use. A group's tests run in registration order: file order, as a group's
// tests live in one file. ZYX_TEST_VERBOSE=1 names each test as it starts.
struct Registered {
  std::string group, name;
  std::string board;  // empty: a test of the cache dir
  std::function<void(zyx::DeviceLayer&)> on_layer;
  std::function<void(const std::string& cache)> on_cache;
};
inline std::vector<Registered>& registry() {
  static std::vector<Registered> tests;
  return tests;
}
inline std::map<std::string, std::function<std::string(const std::string&)>>& cache_dir_setups() {
  static std::map<std::string, std::function<std::string(const std::string&)>> setups;
  return setups;
}
struct Registrar {
  Registrar(const char* group, const char* name, void (*fn)(zyx::DeviceLayer&), const char* board = "n150") {
    registry().push_back({group, name, board, fn, nullptr});
  }
  Registrar(const char* group, const char* name, void (*fn)(const std::string&)) {
    registry().push_back({group, name, "", nullptr, fn});
  }
  Registrar(const char* group, const char*, std::string (*setup)(const std::string&)) {
    cache_dir_setups()[group] = setup;
  }
};
#define ZYX_TEST_CAT2(a, b) a##b
#define ZYX_TEST_CAT(a, b) ZYX_TEST_CAT2(a, b)
#define ZYX_TEST_ON(group, fn, board) \
  [[maybe_unused]] static const ::zyx_test::Registrar ZYX_TEST_CAT(zyx_test_reg_, __LINE__)(#group, #fn, fn, board)
#define ZYX_TEST(group, fn) \
  [[maybe_unused]] static const ::zyx_test::Registrar ZYX_TEST_CAT(zyx_test_reg_, __LINE__)(#group, #fn, fn)
#define ZYX_TEST_CACHE_DIR(group, fn) ZYX_TEST(group, fn)

// Runs the registered tests of one group over the cache dir.
inline void run_registered(const std::string& group, std::string cache) {
  if (auto it = cache_dir_setups().find(group); it != cache_dir_setups().end()) cache = it->second(cache);
  std::map<std::string, std::unique_ptr<zyx::DeviceLayer>> layers;
  const char* verbose_env = std::getenv("ZYX_TEST_VERBOSE");
  const bool verbose = verbose_env && std::string(verbose_env) == "1";
  for (const auto& t : registry()) {
    if (t.group != group) continue;
    if (verbose)
      std::fprintf(stderr, "%s: %s%s%s\n", group.c_str(), t.name.c_str(), t.board.empty() ? "" : " on ", t.board.c_str());
    if (t.on_cache) {
      t.on_cache(cache);
      continue;
    }
    auto& layer = layers[t.board];
    if (!layer) layer = zyx::make_emu_layer(t.board, 0, cache);
    t.on_layer(*layer);
  }
}

// The main of a test program run as `<program> <group> <cache_dir>`: runs
// the group's registered tests through run_group, named prefix + group.
// Exit 0 pass, 1 fail, 77 skip, 2 for a usage error or an unknown group.
inline int group_main(int argc, char** argv, const std::string& prefix = "") {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <group> <cache_dir>\n", argv[0]);
    return 2;
  }
  std::string group = argv[1], cache = argv[2];
  bool known = false;
  for (const auto& t : registry()) known = known || t.group == group;
  if (!known) {
    std::fprintf(stderr, "unknown group %s\n", group.c_str());
    return 2;
  }
  return run_group(prefix + group, [&] { run_registered(group, cache); });
}

// A float's bits, and the float of bits.
inline uint32_t float_bits(float f) { return std::bit_cast<uint32_t>(f); }
inline float bits_float(uint32_t u) { return std::bit_cast<float>(u); }

// A vector's bytes, and bytes read as a vector of T (as a run's buffers
// come back).
template <class T>
std::vector<uint8_t> to_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
template <class T>
std::vector<T> from_bytes(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

inline uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
inline float from_bf16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Tiled layout: element (r, c) of a 32x32 tile at its four-face position.
inline int face_index(int r, int c) { return ((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15); }

// Checks |got - want| <= atol + rtol * |want| for every element.
inline void check_close(const std::vector<double>& got, const std::vector<double>& want, double atol, double rtol,
                        const std::string& what) {
  if (got.size() != want.size()) throw Failure(what + ": size mismatch");
  for (size_t i = 0; i < got.size(); i++) {
    double err = std::fabs(got[i] - want[i]);
    if (!(err <= atol + rtol * std::fabs(want[i]))) {
      std::ostringstream os;
      os << what << ": element " << i << " = " << got[i] << ", want " << want[i] << " (atol " << atol << ", rtol "
         << rtol << ")";
      throw Failure(os.str());
    }
  }
}

}  // namespace zyx_test
