// Consumer of a sharded eltwise add: waits for the n result pages in cb 16
// (buffer-backed on the output shard).
// Shared by cpp/emu/tests/model_tests.cpp and tt/v2_emulator_test.go.
void kernel_main() {
  constexpr uint32_t n = get_compile_time_arg_val(0);
  cb_wait_front(16, n);
}
