// Producer of a sharded eltwise add: the shards of a and b are already in
// cbs 0 and 1 (buffer-backed), so it only reserves and pushes n pages of each.
// Shared by cpp/emu/tests/model_tests.cpp and tt/v2_emulator_test.go.
void kernel_main() {
  constexpr uint32_t n = get_compile_time_arg_val(0);
  cb_reserve_back(0, n);
  cb_push_back(0, n);
  cb_reserve_back(1, n);
  cb_push_back(1, n);
}
