// Diagnostic for the zyx-tt host-pool copy path: H2D and D2H bandwidth of
// 1 GiB from host memory obtained in different ways, all pinned, plus the
// CPU's parallel memcpy bandwidth (what a staged copy could reach).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <vector>
#include <cuda_runtime.h>

static const size_t kBytes = size_t(1) << 30;
static void *dev;

static double secs(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

static void measure(const char *name, void *host, int chunks = 1) {
    if (!host) { printf("%-40s unavailable\n", name); return; }
    memset(host, 1, kBytes);
    cudaError_t e = cudaHostRegister(host, kBytes, cudaHostRegisterPortable);
    bool registered = e == cudaSuccess;
    if (e != cudaSuccess && e != cudaErrorHostMemoryAlreadyRegistered) { printf("%-40s register: %s\n", name, cudaGetErrorString(e)); cudaGetLastError(); }
    cudaStream_t s[2];
    cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking);
    auto copy = [&](bool h2d) {
        size_t c = kBytes / chunks;
        for (int i = 0; i < chunks; i++) {
            char *hp = (char *)host + i * c, *dp = (char *)dev + i * c;
            if (h2d) cudaMemcpyAsync(dp, hp, c, cudaMemcpyHostToDevice, s[i % 2]);
            else cudaMemcpyAsync(hp, dp, c, cudaMemcpyDeviceToHost, s[i % 2]);
        }
        cudaStreamSynchronize(s[0]);
        cudaStreamSynchronize(s[1]);
    };
    copy(true); copy(false);
    const int it = 5;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < it; i++) copy(true);
    auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < it; i++) copy(false);
    auto t2 = std::chrono::steady_clock::now();
    printf("%-40s h2d %6.2f GiB/s  d2h %6.2f GiB/s  (%d chunks)\n", name, it / secs(t0, t1), it / secs(t1, t2), chunks);
    if (registered) cudaHostUnregister(host);
    cudaStreamDestroy(s[0]); cudaStreamDestroy(s[1]);
}

static void *shm(bool huge) {
    char name[64];
    snprintf(name, sizeof name, "/zyx-probe-%d-%d", getpid(), int(huge));
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return nullptr;
    shm_unlink(name);
    if (ftruncate(fd, kBytes) != 0) return nullptr;
    void *p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return nullptr;
    if (huge && madvise(p, kBytes, MADV_HUGEPAGE) != 0) perror("madvise shm");
    return p;
}

static void *anon(bool huge) {
    void *p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    if (huge && madvise(p, kBytes, MADV_HUGEPAGE) != 0) perror("madvise anon");
    return p;
}

int main() {
    for (const char *f : {"/sys/kernel/mm/transparent_hugepage/enabled", "/sys/kernel/mm/transparent_hugepage/shmem_enabled"}) {
        FILE *fp = fopen(f, "r");
        char buf[256] = "?";
        if (fp) { if (!fgets(buf, sizeof buf, fp)) buf[0] = 0; fclose(fp); }
        printf("%s: %s", f, buf);
    }
    cudaMalloc(&dev, kBytes);
    void *mh = nullptr;
    cudaMallocHost(&mh, kBytes);
    measure("cudaMallocHost", mh);
    measure("cudaMallocHost, 16 chunks 2 streams", mh, 16);
    void *al = aligned_alloc(4096, kBytes);
    measure("aligned_alloc + register", al);
    measure("anon mmap + register", anon(false));
    measure("anon mmap MADV_HUGEPAGE + register", anon(true));
    void *s4 = shm(false);
    measure("shm + register", s4);
    measure("shm + register, 16 chunks 2 streams", s4, 16);
    measure("shm MADV_HUGEPAGE + register", shm(true));
    // NUMA: fill a fresh shm segment from a thread pinned to one CPU, then
    // register and copy; a slow CPU's node is not the GPU's.
    for (int cpu : {0, int(sysconf(_SC_NPROCESSORS_ONLN)) / 2, int(sysconf(_SC_NPROCESSORS_ONLN)) - 1}) {
        void *p = shm(false);
        std::thread t([=] {
            cpu_set_t set; CPU_ZERO(&set); CPU_SET(cpu, &set);
            sched_setaffinity(0, sizeof set, &set);
            memset(p, 2, kBytes);
        });
        t.join();
        char label[64];
        snprintf(label, sizeof label, "shm filled on cpu %d + register", cpu);
        measure(label, p);
        munmap(p, kBytes);
    }
    // CPU copy bandwidth, shm -> pinned, 1..16 threads
    for (int th : {1, 4, 8, 16}) {
        auto t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < 3; r++) {
            std::vector<std::thread> ts;
            size_t step = kBytes / th;
            for (int i = 0; i < th; i++) ts.emplace_back([=] { memcpy((char *)mh + i * step, (char *)s4 + i * step, step); });
            for (auto &t : ts) t.join();
        }
        auto t1 = std::chrono::steady_clock::now();
        printf("memcpy shm->pinned %2d threads: %6.2f GiB/s\n", th, 3 / secs(t0, t1));
    }
    return 0;
}
