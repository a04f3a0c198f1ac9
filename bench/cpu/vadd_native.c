// The reference for the C backend's vadd benchmark: the same loop as
// examples/vadd/vadd.c, written directly in a native program built with the
// C device's flags. After one untimed warm-up run, prints the best time of
// REPS runs in nanoseconds.
//
//   usage: vadd_native N REPS
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s N REPS\n", argv[0]);
		return 2;
	}
	const uint64_t n = strtoull(argv[1], 0, 10);
	const int reps = atoi(argv[2]);
	float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
	if (!x || !y || !z || reps < 1) {
		fprintf(stderr, "cannot allocate %llu elements\n", (unsigned long long)n);
		return 1;
	}
	for (uint64_t i = 0; i < n; i++) {
		x[i] = (float)(i % 1000) * 0.5f;
		y[i] = (float)(i % 7);
		z[i] = 0;
	}
	/* One untimed run first, as the runtime side has: it starts the OpenMP
	 * team and faults in z (the compiler may turn malloc + zero fill into
	 * calloc, leaving z unmapped until first written). */
#pragma omp parallel for schedule(static)
	for (uint64_t i = 0; i < n; i++)
		z[i] = x[i] + y[i];
	double best = 1e300;
	for (int r = 0; r < reps; r++) {
		const double t0 = now_ns();
#pragma omp parallel for schedule(static)
		for (uint64_t i = 0; i < n; i++)
			z[i] = x[i] + y[i];
		const double dt = now_ns() - t0;
		if (dt < best)
			best = dt;
	}
	for (uint64_t i = 0; i < n; i += n / 17 + 1) {
		if (z[i] != x[i] + y[i]) {
			fprintf(stderr, "wrong result at %llu\n", (unsigned long long)i);
			return 1;
		}
	}
	printf("%.0f\n", best);
	return 0;
}
