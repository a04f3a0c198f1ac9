// zyx-tt example: the loopback's reader does all the data movement.
void kernel_main() {}
