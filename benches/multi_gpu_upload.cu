// How fast can one host feed several GPUs from pageable (ordinary) host memory? The
// ceiling a split of a host edge list across GPUs works under (issue 21: two GPUs >=
// 1.6x one). For 1..D devices, one upload of TOTAL bytes split evenly, each device fed
// by its own team of host threads:
//   dma      page-locked source, no host copy (the buses' own ceiling)
//   plain    pageable source copied into two page-locked chunk buffers per device with
//            plain stores, each chunk sent as soon as it is copied (gpumst's ring)
//   stream   the same with non-temporal stores
//   reg1/2, reg1/3  every 2nd (3rd) chunk registered with the driver (cudaHostRegister,
//            read-only) by one more thread of the team and copied from where it is, on a
//            stream of its own; the other chunks as in `stream`. Two rates: the copies
//            done, and the registered chunks unregistered too.
// The source is on transparent huge pages (madvise), as gpumst's loaders put a graph.
// GB/s of the whole TOTAL bytes, median of the rounds.
//
//   nvcc -O2 -std=c++20 -Xcompiler -fopenmp -o multi_gpu_upload benches/multi_gpu_upload.cu
//   ./multi_gpu_upload [GiB=3] [chunk MiB=32] [rounds=5]
#include <omp.h>

#include <algorithm>
#include <barrier>
#include <vector>

#include "host_copies.h"

struct Device {
    char* memory;
    char* pinned[2];
    cudaStream_t stream;
    cudaStream_t registered_stream;
    cudaEvent_t free[2];
};

enum Mode { DMA, PLAIN, STREAM, REG2, REG3 };

// One upload of `total` bytes of `source` over the first `used` devices; ms (and in
// `*with_unregister`, ms until the registered chunks were unregistered too).
static double upload(std::vector<Device>& devices, int used, char* source,
                     const char* pinned_source, size_t total, size_t chunk, Mode mode,
                     int threads, double* with_unregister) {
    int team = threads / used;
    // In the register modes the team's last thread registers every `every`th chunk.
    int every = mode == REG2 ? 2 : mode == REG3 ? 3 : 0;
    int copiers = every ? team - 1 : team;
    std::vector<double> copied_at(used, 0), unregistered_at(used, 0);
    size_t share = total / used;
    std::vector<std::barrier<>*> barriers;
    for (int d = 0; d < used; ++d) barriers.push_back(new std::barrier<>(copiers));
    double start = now_ms();
#pragma omp parallel num_threads(team* used)
    {
        int id = omp_get_thread_num(), d = id / team, lane = id % team;
        Device& dev = devices[d];
        check(cudaSetDevice(d), "cudaSetDevice");
        size_t begin = share * d, end = d + 1 == used ? total : begin + share;
        size_t k = 0;
        if (every && lane == team - 1) {
            // The registering thread: register, copy from where it is, and unregister
            // each chunk once its copy is done (two behind).
            std::vector<std::pair<char*, cudaEvent_t>> pending;
            auto retire = [&](size_t keep) {
                while (pending.size() > keep) {
                    check(cudaEventSynchronize(pending.front().second), "cudaEventSynchronize");
                    check(cudaHostUnregister(pending.front().first), "cudaHostUnregister");
                    check(cudaEventDestroy(pending.front().second), "cudaEventDestroy");
                    pending.erase(pending.begin());
                }
            };
            for (size_t at = begin; at < end; at += chunk, ++k) {
                if (k % every) continue;
                size_t bytes = std::min(chunk, end - at);
                check(cudaHostRegister(source + at, bytes, cudaHostRegisterReadOnly), "cudaHostRegister");
                check(cudaMemcpyAsync(dev.memory + (at - begin), source + at, bytes,
                                      cudaMemcpyHostToDevice, dev.registered_stream),
                      "cudaMemcpyAsync");
                cudaEvent_t done;
                check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
                check(cudaEventRecord(done, dev.registered_stream), "cudaEventRecord");
                pending.push_back({source + at, done});
                retire(2);
            }
            check(cudaStreamSynchronize(dev.registered_stream), "cudaStreamSynchronize");
            copied_at[d] = std::max(copied_at[d], now_ms());
            retire(0);
            unregistered_at[d] = now_ms();
        } else {
        for (size_t at = begin; at < end; at += chunk, ++k) {
            if (every && k % every == 0) continue;
            size_t bytes = std::min(chunk, end - at);
            if (mode == DMA) {
                if (lane == 0)
                    check(cudaMemcpyAsync(dev.memory + (at - begin), pinned_source + at, bytes,
                                          cudaMemcpyHostToDevice, dev.stream),
                          "cudaMemcpyAsync");
                continue;
            }
            int b = k % 2;
            if (lane == 0) check(cudaEventSynchronize(dev.free[b]), "cudaEventSynchronize");
            barriers[d]->arrive_and_wait();
            // Slices of whole 64-byte lines: the streamed stores need 16-byte alignment.
            size_t slice = ((bytes + copiers - 1) / copiers + 63) / 64 * 64;
            size_t from = std::min(bytes, slice * lane), to = std::min(bytes, from + slice);
            if (mode == PLAIN)
                std::memcpy(dev.pinned[b] + from, source + at + from, to - from);
            else
                copy_stream(dev.pinned[b] + from, source + at + from, to - from);
            barriers[d]->arrive_and_wait();
            if (lane == 0) {
                check(cudaMemcpyAsync(dev.memory + (at - begin), dev.pinned[b], bytes,
                                      cudaMemcpyHostToDevice, dev.stream),
                      "cudaMemcpyAsync");
                check(cudaEventRecord(dev.free[b], dev.stream), "cudaEventRecord");
            }
        }
        if (lane == 0) {
            check(cudaStreamSynchronize(dev.stream), "cudaStreamSynchronize");
            double t = now_ms();
#pragma omp critical
            copied_at[d] = std::max(copied_at[d], t);
        }
        }
    }
    double ms = now_ms() - start;
    if (every) {
        double last_copy = 0, last_unregister = 0;
        for (int d = 0; d < used; ++d) {
            last_copy = std::max(last_copy, copied_at[d]);
            last_unregister = std::max(last_unregister, unregistered_at[d]);
        }
        ms = last_copy - start;
        *with_unregister = std::max(last_copy, last_unregister) - start;
    } else {
        *with_unregister = ms;
    }
    for (auto* b : barriers) delete b;
    return ms;
}

int main(int argc, char** argv) {
    size_t total = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 3) << 30;
    size_t chunk = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 32) << 20;
    int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    int threads = omp_get_num_procs();
    std::printf("%d devices, %d host threads, %zu MiB, chunks of %zu MiB\n", count, threads,
                total >> 20, chunk >> 20);
    std::vector<Device> devices(count);
    for (int d = 0; d < count; ++d) {
        check(cudaSetDevice(d), "cudaSetDevice");
        check(cudaMalloc(&devices[d].memory, total), "cudaMalloc");
        for (int b = 0; b < 2; ++b) {
            check(cudaMallocHost(&devices[d].pinned[b], chunk), "cudaMallocHost");
            std::memset(devices[d].pinned[b], 0, chunk);
            check(cudaEventCreateWithFlags(&devices[d].free[b], cudaEventDisableTiming),
                  "cudaEventCreate");
        }
        check(cudaStreamCreateWithFlags(&devices[d].stream, cudaStreamNonBlocking),
              "cudaStreamCreate");
        check(cudaStreamCreateWithFlags(&devices[d].registered_stream, cudaStreamNonBlocking),
              "cudaStreamCreate");
    }
    char* source = huge_alloc(total);
    char* pinned_source = nullptr;
    check(cudaMallocHost(&pinned_source, total), "cudaMallocHost");
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < total; k += 4096) source[k] = 1, pinned_source[k] = 1;
    const char* names[] = {"dma", "plain", "stream", "reg1/2", "reg1/3"};
    for (int mode = DMA; mode <= REG3; ++mode)
        for (int used = 1; used <= count; ++used) {
            std::vector<double> rates, whole;
            for (int r = 0; r < rounds + 1; ++r) {
                double with_unregister = 0;
                double ms = upload(devices, used, source, pinned_source, total, chunk,
                                   Mode(mode), threads, &with_unregister);
                if (r > 0) {
                    rates.push_back(total / (ms * 1e-3) / 1e9);
                    whole.push_back(total / (with_unregister * 1e-3) / 1e9);
                }
            }
            std::sort(rates.begin(), rates.end());
            std::sort(whole.begin(), whole.end());
            std::printf("%-6s %d device(s): %.1f GB/s (min %.1f, max %.1f); unregistered too %.1f GB/s\n",
                        names[mode], used, rates[rates.size() / 2], rates.front(), rates.back(),
                        whole[whole.size() / 2]);
        }
    return 0;
}
