// Host-to-device copy bandwidth from page-locked and from pageable memory, the
// reference of issue 21's mark for graphs over the device's memory (edge bytes per
// second end to end against half the page-locked bandwidth). benches/partitions.sh
// builds it with nvcc where there is one:
//
//   nvcc -O2 -o pinned_bandwidth benches/pinned_bandwidth.cu && ./pinned_bandwidth [MiB]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

static void check(cudaError_t status, const char *what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

// Median GB/s of `rounds` copies of `bytes` from `host` to `device`.
static double rate(void *device, const void *host, size_t bytes, int rounds) {
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    double rates[64];
    for (int r = 0; r < rounds; ++r) {
        check(cudaEventRecord(start), "cudaEventRecord");
        check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
        check(cudaEventRecord(stop), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        rates[r] = bytes / (ms * 1e-3) / 1e9;
    }
    for (int i = 1; i < rounds; ++i)
        for (int k = i; k > 0 && rates[k - 1] > rates[k]; --k) {
            double t = rates[k];
            rates[k] = rates[k - 1];
            rates[k - 1] = t;
        }
    return rates[rounds / 2];
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
    size_t bytes = mib << 20;
    void *device = nullptr, *pinned = nullptr;
    check(cudaMalloc(&device, bytes), "cudaMalloc");
    check(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
    void *pageable = std::malloc(bytes);
    if (!pageable) {
        std::fprintf(stderr, "malloc of %zu bytes failed\n", bytes);
        return 1;
    }
    std::memset(pinned, 1, bytes);
    std::memset(pageable, 1, bytes);
    rate(device, pinned, bytes, 2); // warm-up
    std::printf("host-to-device, %zu MiB: page-locked %.1f GB/s, pageable %.1f GB/s\n", mib,
                rate(device, pinned, bytes, 11), rate(device, pageable, bytes, 5));
    return 0;
}
