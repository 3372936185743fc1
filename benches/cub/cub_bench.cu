// CUB on the same inputs as benches/device.rs: the peer the CUDA tier's primitives are
// measured against. Built and run on the device machine by scripts/device.sh (nvcc is
// there; nothing here is part of the library):
//
//   nvcc -O3 -std=c++17 -o cub_bench benches/cub/cub_bench.cu && ./cub_bench 20 28 21
//
// For each size 2^k u32 it prints one line per operation with the median time over the
// repeats after a warm-up, timed with CUDA events, beside a device-to-device copy of
// the same bytes:
//   cub <op> 2^k <ms> ms copy <ms> ms ratio <copy/op>
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        cudaError_t e = (call);                                                           \
        if (e != cudaSuccess) {                                                           \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
                         cudaGetErrorString(e));                                          \
            std::exit(1);                                                                 \
        }                                                                                 \
    } while (0)

template <typename F>
static float median_ms(int repeat, F run) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    run(); // warm-up
    std::vector<float> times;
    for (int r = 0; r < repeat; r++) {
        CHECK(cudaEventRecord(start));
        run();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

struct Strided {
    int step;
    __host__ __device__ int operator()(int i) const { return i * step; }
};

int main(int argc, char** argv) {
    int lo = argc > 1 ? std::atoi(argv[1]) : 20;
    int hi = argc > 2 ? std::atoi(argv[2]) : 28;
    int repeat = argc > 3 ? std::atoi(argv[3]) : 21;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("cub: %s, CCCL %d.%d.%d\n", prop.name, CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION,
                CCCL_PATCH_VERSION);
    size_t max_n = size_t(1) << hi;
    std::vector<unsigned> host(max_n);
    unsigned x = 12345;
    for (auto& h : host) {
        x = x * 1664525u + 1013904223u;
        h = x >> 8;
    }
    unsigned *in, *out;
    CHECK(cudaMalloc(&in, max_n * sizeof(unsigned)));
    CHECK(cudaMalloc(&out, max_n * sizeof(unsigned)));
    CHECK(cudaMemcpy(in, host.data(), max_n * sizeof(unsigned), cudaMemcpyHostToDevice));
    cub::KeyValuePair<int, unsigned>* kvp;
    CHECK(cudaMalloc(&kvp, max_n * sizeof(*kvp)));
    void* temp = nullptr;
    size_t temp_bytes = 0;
    auto reserve = [&](size_t bytes) {
        if (bytes > temp_bytes) {
            CHECK(cudaFree(temp));
            CHECK(cudaMalloc(&temp, bytes));
            temp_bytes = bytes;
        }
    };
    for (int k = lo; k <= hi; k++) {
        int n = 1 << k;
        float copy = median_ms(repeat, [&] {
            CHECK(cudaMemcpyAsync(out, in, size_t(n) * sizeof(unsigned), cudaMemcpyDeviceToDevice));
        });
        auto report = [&](const char* op, float ms) {
            std::printf("cub %s 2^%d %.4f ms copy %.4f ms ratio %.2f\n", op, k, ms, copy, copy / ms);
        };
        size_t bytes = 0;
        CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n));
        reserve(bytes);
        report("scan", median_ms(repeat, [&] {
                   size_t b = temp_bytes;
                   CHECK(cub::DeviceScan::ExclusiveSum(temp, b, in, out, n));
               }));
        bytes = 0;
        CHECK(cub::DeviceReduce::ArgMin(nullptr, bytes, in, kvp, n));
        reserve(bytes);
        report("argmin", median_ms(repeat, [&] {
                   size_t b = temp_bytes;
                   CHECK(cub::DeviceReduce::ArgMin(temp, b, in, kvp, n));
               }));
        for (int len : {1, 16, 256, 4096}) {
            if (len > n)
                continue;
            int segments = n / len;
            auto begin = thrust::make_transform_iterator(thrust::make_counting_iterator(0), Strided{len});
            auto end = begin + 1;
            bytes = 0;
            CHECK(cub::DeviceSegmentedReduce::ArgMin(nullptr, bytes, in, kvp, segments, begin, end));
            reserve(bytes);
            char name[64];
            std::snprintf(name, sizeof name, "segmented_argmin_%d", len);
            report(name, median_ms(repeat, [&] {
                       size_t b = temp_bytes;
                       CHECK(cub::DeviceSegmentedReduce::ArgMin(temp, b, in, kvp, segments, begin, end));
                   }));
        }
    }
    CHECK(cudaFree(temp));
    CHECK(cudaFree(kvp));
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    return 0;
}
