// The reference for the CBLAS backend's sgemm benchmark: cblas_sgemm called
// directly from C, from the same library the device loaded (dlopen of the
// path it reports), with the same thread count. Prints the best time of
// REPS runs in nanoseconds.
//
//   usage: sgemm_native LIBRARY N REPS [THREADS]
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
                         const float *, int, float, float *, int);

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s LIBRARY N REPS [THREADS]\n", argv[0]);
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	sgemm_fn sgemm = (sgemm_fn)dlsym(lib, "cblas_sgemm");
	if (!sgemm) {
		fprintf(stderr, "%s: no cblas_sgemm\n", argv[1]);
		return 1;
	}
	if (argc > 4) {
		void (*set_threads)(int) = (void (*)(int))dlsym(lib, "openblas_set_num_threads");
		if (set_threads)
			set_threads(atoi(argv[4]));
	}
	const int n = atoi(argv[2]), reps = atoi(argv[3]);
	const size_t elems = (size_t)n * (size_t)n;
	float *a = malloc(elems * sizeof *a), *b = malloc(elems * sizeof *b), *c = malloc(elems * sizeof *c);
	if (!a || !b || !c || n < 1 || reps < 1) {
		fprintf(stderr, "bad size or out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < elems; i++) {
		a[i] = (float)(i % 13) * 0.25f;
		b[i] = (float)(i % 11) * 0.5f;
		c[i] = 0;
	}
	sgemm(101, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n); /* warm-up: threads, buffers */
	double best = 1e300;
	for (int r = 0; r < reps; r++) {
		const double t0 = now_ns();
		sgemm(101, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
		const double dt = now_ns() - t0;
		if (dt < best)
			best = dt;
	}
	printf("%.0f\n", best);
	return 0;
}
