// Tests of the emulator's data movement, debug and kernel-build API.
// Usage: emu_dataflow_tests <group> <cache_dir>; exit 0 pass, 1 fail, 77 skip.
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "test_util.hpp"

void test_dataflow_builder(const std::string& cache);
void test_dataflow_l1(const std::string& cache);
void test_dataflow_noc(const std::string& cache);
void test_dataflow_debug(const std::string& cache);
void test_dataflow_includes(const std::string& cache);
void test_dataflow_compat(const std::string& cache);

int main(int argc, char** argv) {
  return zyx_test::group_main(argc, argv, {
      {"builder", test_dataflow_builder},
      {"l1", test_dataflow_l1},
      {"noc", test_dataflow_noc},
      {"debug", test_dataflow_debug},
      {"includes", test_dataflow_includes},
      {"compat", test_dataflow_compat},
  });
}
