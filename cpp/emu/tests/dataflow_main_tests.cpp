// Tests of the emulator's data movement, debug and kernel-build API.
// Usage: emu_dataflow_tests <group> <cache_dir>; exit 0 pass, 1 fail, 77 skip.
#include "test_util.hpp"

// The groups (builder, l1, exits, noc, debug, includes, compat) are the tests the
// dataflow_*_tests.cpp files register.
int main(int argc, char** argv) { return zyx_test::group_main(argc, argv); }
