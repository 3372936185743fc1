// The OpenCL C dialect of kernels/opencl/*.cl, spelled in CUDA C++, so that the CUDA
// tier compiles the same kernel sources as the OpenCL tier (DESIGN.md: one kernel source
// per algorithm step). tools/build_cuda_kernels.py compiles with NVRTC's -default-device,
// which makes the sources' unannotated helper functions __device__.
//
// Only what the sources use is here. Where CUDA differs in meaning it is noted.
#pragma once

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
// OpenCL's long and ulong are 64-bit, as long is on the LP64 Linux targets CUDA builds for.
typedef unsigned long ulong;

#define INT_MAX 2147483647
#define INT_MIN (-INT_MAX - 1)
#define UINT_MAX 0xFFFFFFFFu
#define LONG_MAX 0x7FFFFFFFFFFFFFFFl
#define LONG_MIN (-LONG_MAX - 1l)
#define ULONG_MAX 0xFFFFFFFFFFFFFFFFul
#define INFINITY __int_as_float(0x7f800000)

// Address spaces: global memory needs no qualifier; local memory is __shared__ where it
// is declared, and pointers into it are generic (LOCAL is empty).
#define __kernel extern "C" __global__
#define __global
#define __local __shared__
#define LOCAL

// One-dimensional launches only.
__device__ inline size_t get_global_id(uint) { return (size_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ inline size_t get_local_id(uint) { return threadIdx.x; }
__device__ inline size_t get_group_id(uint) { return blockIdx.x; }
__device__ inline size_t get_local_size(uint) { return blockDim.x; }
__device__ inline size_t get_num_groups(uint) { return gridDim.x; }

#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
// __syncthreads orders shared and global memory for the block, as barrier() with both
// fences does.
__device__ inline void barrier(int) { __syncthreads(); }
// OpenCL 1.2's mem_fence orders one work-item's accesses only; here it is CUDA's
// device-wide fence, which kernels that hand results between blocks rely on (and say so).
__device__ inline void mem_fence(int) { __threadfence(); }

// Atomics. OpenCL's take volatile pointers too; CUDA's do not, hence the casts.
__device__ inline uint atomic_inc(volatile uint* p) { return atomicAdd((uint*)p, 1u); }
__device__ inline uint atomic_add(volatile uint* p, uint v) { return atomicAdd((uint*)p, v); }
__device__ inline uint atomic_min(volatile uint* p, uint v) { return atomicMin((uint*)p, v); }
__device__ inline uint atomic_xchg(volatile uint* p, uint v) { return atomicExch((uint*)p, v); }
__device__ inline uint atomic_cmpxchg(volatile uint* p, uint expected, uint v) {
    return atomicCAS((uint*)p, expected, v);
}
__device__ inline ulong atom_min(volatile ulong* p, ulong v) {
    return atomicMin((unsigned long long*)p, (unsigned long long)v);
}
__device__ inline ulong atom_xchg(volatile ulong* p, ulong v) {
    return atomicExch((unsigned long long*)p, (unsigned long long)v);
}

// as_type reinterpretations between types of one size.
template <typename To, typename From>
__device__ inline To opencl_as(From x) {
    static_assert(sizeof(To) == sizeof(From), "as_type needs types of one size");
    union {
        From from;
        To to;
    } u;
    u.from = x;
    return u.to;
}
#define as_int(x) opencl_as<int>(x)
#define as_uint(x) opencl_as<uint>(x)
#define as_float(x) opencl_as<float>(x)
#define as_long(x) opencl_as<long>(x)
#define as_ulong(x) opencl_as<ulong>(x)
#define as_double(x) opencl_as<double>(x)
#define as_uint2(x) opencl_as<uint2>(x)
