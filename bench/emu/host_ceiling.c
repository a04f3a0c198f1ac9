// host_ceiling: what the host gives N threads at once, against one thread,
// for the two kinds of work an emulated run does: arithmetic on data that
// stays in a core's L1 (each thread its own 4 KiB), and copies of data far
// larger than the caches (each thread its own 32 MiB). No thread shares
// anything with another, so the speed-ups are the host's ceiling for any
// program's scaling: an emulated run that also moves data between cores
// cannot scale better than the first. bench/run-h200.sh prints both
// beside the emulator's matmul speed-up (bench/ratios.py).
//
//   host_ceiling N       prints "native host_fma_1_tput …", "… _n_tput …",
//                        "native host_copy_1_tput …", "… _n_tput …"
//                        (work units a second) and a readable line each.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kFloats = 1024, kCopyBytes = 32 << 20 };

static long fma_rounds = 2000000, copy_rounds = 24;

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void* fma_work(void* unused) {
  (void)unused;
  float a[kFloats], b[kFloats];
  for (int i = 0; i < kFloats; i++) a[i] = i * 1e-3f, b[i] = 1.0f - i * 1e-4f;
  for (long r = 0; r < fma_rounds; r++)
    for (int i = 0; i < kFloats; i++) a[i] = a[i] * b[i] + 1e-7f;
  volatile float keep = a[7];
  (void)keep;
  return NULL;
}

static void* copy_work(void* unused) {
  (void)unused;
  char* from = malloc(kCopyBytes);
  char* to = malloc(kCopyBytes);
  if (!from || !to) abort();
  memset(from, 1, kCopyBytes);
  memset(to, 2, kCopyBytes);
  for (long r = 0; r < copy_rounds; r++) {
    memcpy(to, from, kCopyBytes);
    from[r]++;  // a different source each round
  }
  volatile char keep = to[5];
  (void)keep;
  free(from);
  free(to);
  return NULL;
}

// throughput runs n threads of work and returns rounds a second, all
// threads together.
static double throughput(void* (*work)(void*), long rounds, int n) {
  pthread_t threads[256];
  double start = seconds();
  for (int i = 0; i < n; i++)
    if (pthread_create(&threads[i], NULL, work, NULL) != 0) abort();
  for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
  return n * rounds / (seconds() - start);
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 0;
  if (n < 1 || n > 256) {
    fprintf(stderr, "usage: host_ceiling THREADS (1-256)\n");
    return 2;
  }
  struct {
    const char* name;
    void* (*work)(void*);
    long rounds;
  } kinds[] = {{"fma", fma_work, fma_rounds}, {"copy", copy_work, copy_rounds}};
  for (int k = 0; k < 2; k++) {
    double one = throughput(kinds[k].work, kinds[k].rounds, 1);
    double many = throughput(kinds[k].work, kinds[k].rounds, n);
    printf("native host_%s_1_tput %.1f\nnative host_%s_n_tput %.1f\n", kinds[k].name, one, kinds[k].name, many);
    printf("host ceiling, %s: %d threads %.2fx one thread\n", kinds[k].name, n, many / one);
  }
  return 0;
}
