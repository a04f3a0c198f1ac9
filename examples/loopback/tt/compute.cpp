// zyx-tt example: the loopback has no compute work.
void kernel_main() {}
