// Minimal test support for the emulator tests: checks that report the
// file and line, expected-error checks, skips, and number helpers.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
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

// The main of a test program run as `<program> <group> <cache_dir>`: runs
// groups[group](cache_dir) through run_group, named prefix + group. Exit 0
// pass, 1 fail, 77 skip, 2 for a usage error or an unknown group.
using Groups = std::map<std::string, std::function<void(const std::string& cache)>>;
inline int group_main(int argc, char** argv, const Groups& groups, const std::string& prefix = "") {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <group> <cache_dir>\n", argv[0]);
    return 2;
  }
  std::string group = argv[1], cache = argv[2];
  auto it = groups.find(group);
  if (it == groups.end()) {
    std::fprintf(stderr, "unknown group %s\n", group.c_str());
    return 2;
  }
  return run_group(prefix + group, [&] { it->second(cache); });
}

// Groups that each run on a fresh n150 emulator layer over the cache.
inline Groups layer_groups(const std::map<std::string, std::function<void(zyx::DeviceLayer&)>>& groups) {
  Groups out;
  for (const auto& [name, fn] : groups)
    out[name] = [fn](const std::string& cache) {
      auto layer = zyx::make_emu_layer("n150", 0, cache);
      fn(*layer);
    };
  return out;
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

void test_kernels(const std::string& cache);
void test_examples(const std::string& cache);
void test_deadlock(const std::string& cache);
void test_errors(const std::string& cache);
void test_ttmetal(const std::string& cache);
void test_model(const std::string& cache);
void test_stalls_group(const std::string& cache);
