#version 450
// An empty compute shader: BenchmarkQueuedLaunches times its launches, so
// that the figures are the cost of a launch. It declares the one buffer
// the benchmark's program passes and does not touch it.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer X { float x[]; };
void main() {}
