// The host copy that stages a graph's chunks in page-locked memory (gpumst's 4x-cap
// path, docs/performance-log.md, thirty-second session): how fast can all cores copy
// 3 GiB of a pageable, huge-page source into page-locked blocks, by the kind of
// target memory:
//   alloc     blocks from cudaHostAlloc (what the CUDA tier's staging uses)
//   huge      blocks of huge-page memory (madvise) registered once with cudaHostRegister
//   ringN     the first N cudaHostAlloc blocks reused in turn (N = 2: the transfer
//             buffers), for N of 2, 4, 6, 8 and 12: a ring that fits the host's last-level
//             cache is written and read by the device's copies there
// each with plain and with non-temporal stores, with and without each block's device
// copy issued behind it (a block's copy is waited for before the block is reused).
//
//   nvcc -O2 -std=c++17 -Xcompiler -fopenmp -o staging_copy benches/staging_copy.cu
//   ./staging_copy [GiB=3] [chunk MiB=34]
#include <omp.h>

#include <algorithm>
#include <vector>

#include "host_copies.h"

int main(int argc, char** argv) {
    size_t total = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 3) << 30;
    size_t chunk = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 34) << 20;
    const size_t block = size_t(32) << 20, staged = size_t(512) << 20;
    char* source = huge_alloc(total);
    char* device = nullptr;
    check(cudaMalloc(&device, total), "cudaMalloc");
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    int blocks = staged / block;
    std::vector<char*> alloc_blocks(blocks), huge_blocks(blocks);
    std::vector<cudaEvent_t> events(blocks);
    char* huge_area = huge_alloc(staged);
    check(cudaHostRegister(huge_area, staged, cudaHostRegisterDefault), "cudaHostRegister");
    for (int b = 0; b < blocks; ++b) {
        check(cudaHostAlloc(&alloc_blocks[b], block, cudaHostAllocDefault), "cudaHostAlloc");
        std::memset(alloc_blocks[b], 0, block);
        huge_blocks[b] = huge_area + size_t(b) * block;
        check(cudaEventCreateWithFlags(&events[b], cudaEventDisableTiming), "cudaEventCreate");
    }
    std::printf("%d threads, %zu MiB, chunks of %zu MiB, blocks of 32 MiB\n", omp_get_max_threads(),
                total >> 20, chunk >> 20);
    const char* kinds[] = {"alloc", "huge", "ring2", "ring4", "ring6", "ring8", "ring12"};
    const int ring_blocks[] = {0, 0, 2, 4, 6, 8, 12};
    for (int dma = 0; dma < 2; ++dma)
        for (int kind = 0; kind < 7; ++kind)
            for (int streamed = 0; streamed < 2; ++streamed) {
                std::vector<double> rates;
                for (int round = 0; round < 4; ++round) {
                    auto& pool = kind == 1 ? huge_blocks : alloc_blocks;
                    int count = kind >= 2 ? ring_blocks[kind] : blocks;
                    int next = 0;
                    double t0 = now_ms();
                    for (size_t at = 0; at < total; at += chunk) {
                        size_t bytes = std::min(chunk, total - at);
                        // The chunk's blocks, in turn, each waited for (its last copy).
                        std::vector<std::pair<char*, size_t>> targets;
                        std::vector<int> used;
                        for (size_t done = 0; done < bytes; done += block) {
                            int b = next;
                            next = (next + 1) % count;
                            check(cudaEventSynchronize(events[b]), "cudaEventSynchronize");
                            targets.push_back({pool[b], std::min(block, bytes - done)});
                            used.push_back(b);
                        }
#pragma omp parallel
                        {
                            int t = omp_get_thread_num(), n = omp_get_num_threads();
                            size_t share = (bytes / n + 63) / 64 * 64;
                            size_t from = std::min(bytes, share * t), to = std::min(bytes, from + share);
                            while (from < to) {
                                size_t b = from / block, in = from % block;
                                size_t len = std::min(to - from, block - in);
                                if (streamed)
                                    copy_stream(targets[b].first + in, source + at + from, len);
                                else
                                    std::memcpy(targets[b].first + in, source + at + from, len);
                                from += len;
                            }
                        }
                        if (dma)
                            for (size_t k = 0; k < used.size(); ++k) {
                                check(cudaMemcpyAsync(device + at + k * block, targets[k].first,
                                                      targets[k].second, cudaMemcpyHostToDevice, stream),
                                      "cudaMemcpyAsync");
                                check(cudaEventRecord(events[used[k]], stream), "cudaEventRecord");
                            }
                    }
                    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
                    double ms = now_ms() - t0;
                    if (round > 0) rates.push_back(total / ms / 1e6);
                }
                std::sort(rates.begin(), rates.end());
                std::printf("%-6s %-8s %-7s %.1f GB/s (min %.1f, max %.1f)\n", kinds[kind],
                            streamed ? "streamed" : "plain", dma ? "+dma" : "host", rates[1],
                            rates.front(), rates.back());
            }
    return 0;
}
