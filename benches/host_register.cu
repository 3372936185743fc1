// Registering pageable host memory with the CUDA driver (cudaHostRegister) as a way
// to copy a caller's arrays to the device without a staging copy: the cost of
// registering and unregistering pieces of 32 MiB, 128 MiB and 1 GiB, beside the copy
// from the registered memory (docs/performance-log.md, twenty-ninth session).
//
//   nvcc -O2 -o host_register benches/host_register.cu && ./host_register
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

static double now_ms() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

int main() {
    const size_t total = size_t(1) << 30;
    char* host = static_cast<char*>(std::aligned_alloc(4096, total));
    if (!host) return 1;
    std::memset(host, 1, total);  // touched, as a caller's array would be
    char* device = nullptr;
    check(cudaMalloc(&device, total), "cudaMalloc");
    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    for (size_t piece : {size_t(32) << 20, size_t(128) << 20, total}) {
        for (int round = 0; round < 3; round++) {
            double reg = 0, copy = 0, unreg = 0;
            for (size_t at = 0; at < total; at += piece) {
                double t0 = now_ms();
                check(cudaHostRegister(host + at, piece, cudaHostRegisterDefault), "register");
                double t1 = now_ms();
                check(cudaMemcpyAsync(device + at, host + at, piece, cudaMemcpyHostToDevice, stream), "copy");
                check(cudaStreamSynchronize(stream), "sync");
                double t2 = now_ms();
                check(cudaHostUnregister(host + at), "unregister");
                double t3 = now_ms();
                reg += t1 - t0;
                copy += t2 - t1;
                unreg += t3 - t2;
            }
            std::printf("pieces of %zu MiB: register %.1f GB/s, copy %.1f GB/s, unregister %.1f GB/s\n",
                        piece >> 20, total / reg / 1e6, total / copy / 1e6, total / unreg / 1e6);
        }
    }
    return 0;
}
