// Helpers shared by the benches of host-to-device copies (host_register.cu,
// multi_gpu_upload.cu, staging_copy.cu): a CUDA call's check, a millisecond clock,
// a copy with non-temporal stores, and huge-page host memory.
#pragma once
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <emmintrin.h>

static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

static double now_ms() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Copies `bytes` with non-temporal stores (`to` 16-byte aligned).
static void copy_stream(char* to, const char* from, size_t bytes) {
    size_t body = bytes / 64 * 64;
    for (size_t k = 0; k < body; k += 64)
        for (int j = 0; j < 4; ++j)
            _mm_stream_si128(reinterpret_cast<__m128i*>(to + k + 16 * j),
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + k + 16 * j)));
    _mm_sfence();
    std::memcpy(to + body, from + body, bytes - body);
}

// `bytes` of 2 MiB-aligned memory asked to be backed by transparent huge pages (as
// gpumst's loaders ask), touched.
static char* huge_alloc(size_t bytes) {
    char* p = static_cast<char*>(std::aligned_alloc(size_t(2) << 20, bytes));
    if (!p) {
        std::fprintf(stderr, "aligned_alloc of %zu bytes failed\n", bytes);
        std::exit(1);
    }
    madvise(p, bytes, MADV_HUGEPAGE);
    std::memset(p, 1, bytes);
    return p;
}
