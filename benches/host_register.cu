// Registering pageable host memory with the CUDA driver (cudaHostRegister) as a way
// to copy a caller's arrays to the device without a staging copy: the cost of
// registering and unregistering pieces of 32 MiB, 128 MiB and 1 GiB, beside the copy
// from the registered memory, on ordinary pages and on transparent huge pages
// (madvise), with the default and the read-only flags, and registered by 1 or 8
// threads at once (docs/performance-log.md, twenty-ninth and thirty-second sessions).
//
//   nvcc -O2 -o host_register benches/host_register.cu -lpthread && ./host_register
#include <thread>
#include <vector>

#include "host_copies.h"

// Registers [host, host + total) in pieces by `threads` threads at once (each a
// contiguous share of the pieces), then unregisters them the same way; returns the
// two times in ms.
static void register_all(char* host, size_t total, size_t piece, unsigned flags, int threads,
                         double* reg, double* unreg) {
    size_t pieces = total / piece;
    auto run = [&](bool registering) {
        std::vector<std::thread> team;
        for (int t = 0; t < threads; t++) {
            team.emplace_back([&, t] {
                for (size_t p = t; p < pieces; p += threads) {
                    if (registering)
                        check(cudaHostRegister(host + p * piece, piece, flags), "register");
                    else
                        check(cudaHostUnregister(host + p * piece), "unregister");
                }
            });
        }
        for (auto& member : team) member.join();
    };
    double t0 = now_ms();
    run(true);
    double t1 = now_ms();
    run(false);
    double t2 = now_ms();
    *reg = t1 - t0;
    *unreg = t2 - t1;
}

int main() {
    std::system("cat /sys/kernel/mm/transparent_hugepage/enabled; uname -r");
    const size_t total = size_t(1) << 30;
    char* device = nullptr;
    check(cudaMalloc(&device, total), "cudaMalloc");
    check(cudaFree(0), "init");
    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    for (int huge = 0; huge < 2; huge++) {
        char* host = static_cast<char*>(std::aligned_alloc(size_t(2) << 20, total));
        if (!host) return 1;
        if (huge) madvise(host, total, MADV_HUGEPAGE);
        std::memset(host, 1, total);  // touched, as a caller's array would be
        for (unsigned flags : {unsigned(cudaHostRegisterDefault), unsigned(cudaHostRegisterReadOnly)}) {
            for (int threads : {1, 8}) {
                for (size_t piece : {size_t(32) << 20, size_t(128) << 20, total}) {
                    if (threads > 1 && piece == total) continue;
                    for (int round = 0; round < 2; round++) {
                        double reg, unreg;
                        register_all(host, total, piece, flags, threads, &reg, &unreg);
                        std::printf("%s pages, %s, %d thread(s), pieces of %zu MiB: register %.1f GB/s, unregister %.1f GB/s\n",
                                    huge ? "huge" : "4 KB", flags ? "read-only" : "default", threads,
                                    piece >> 20, total / reg / 1e6, total / unreg / 1e6);
                    }
                }
            }
        }
        // The copy from registered memory, whole.
        check(cudaHostRegister(host, total, cudaHostRegisterReadOnly), "register");
        for (int round = 0; round < 3; round++) {
            double t0 = now_ms();
            check(cudaMemcpyAsync(device, host, total, cudaMemcpyHostToDevice, stream), "copy");
            check(cudaStreamSynchronize(stream), "sync");
            std::printf("%s pages: copy from registered memory %.1f GB/s\n", huge ? "huge" : "4 KB",
                        total / (now_ms() - t0) / 1e6);
        }
        check(cudaHostUnregister(host), "unregister");
        std::free(host);
    }
    return 0;
}
