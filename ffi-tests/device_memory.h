/*
 * Device memory for the tests of gpumst's device functions (C and C++), made the way an
 * application makes it: OpenCL buffers in the cl_context gpumst_context_native
 * returns, CUDA allocations in the device's primary context. The driver libraries are
 * opened with dlopen, so no OpenCL or CUDA headers are needed.
 *
 * Define DEVICE_CHECK(cond, what) before including: it is called with every driver
 * call's outcome.
 */
#ifndef GPUMST_FFI_TESTS_DEVICE_MEMORY_H
#define GPUMST_FFI_TESTS_DEVICE_MEMORY_H

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "gpumst.h"

typedef void *(*cl_create_buffer_fn)(void *ctx, uint64_t flags, size_t size, void *host, int32_t *err);
typedef int32_t (*cl_enqueue_rw_fn)(void *queue, void *mem, uint32_t blocking, size_t offset, size_t size,
                                    void *ptr, uint32_t num_events, const void *events, void *event);
typedef int32_t (*cl_release_fn)(void *mem);
typedef int (*cu_ctx_set_current_fn)(void *ctx);
typedef int (*cu_mem_alloc_fn)(unsigned long long *dptr, size_t bytes);
typedef int (*cu_memcpy_htod_fn)(unsigned long long dst, const void *src, size_t bytes);
typedef int (*cu_memcpy_dtoh_fn)(void *dst, unsigned long long src, size_t bytes);
typedef int (*cu_mem_free_fn)(unsigned long long dptr);
typedef int (*cu_ctx_create_fn)(void **ctx, unsigned int flags, int device);
typedef int (*cu_ctx_destroy_fn)(void *ctx);

/* One tier's memory: allocate, copy in and out, free. */
struct device {
    gpumst_native native;
    void *library;
    cl_create_buffer_fn cl_create;
    cl_enqueue_rw_fn cl_write, cl_read;
    cl_release_fn cl_release;
    cu_ctx_set_current_fn cu_set_current;
    cu_mem_alloc_fn cu_alloc;
    cu_memcpy_htod_fn cu_htod;
    cu_memcpy_dtoh_fn cu_dtoh;
    cu_mem_free_fn cu_free;
    cu_ctx_create_fn cu_ctx_create;
    cu_ctx_destroy_fn cu_ctx_destroy;
};

/* A symbol as a function pointer (memcpy: C++ forbids casting object pointers to
 * function pointers directly under -Wpedantic). */
static void device_symbol(void *library, const char *name, void *function_pointer, size_t size)
{
    void *symbol = dlsym(library, name);
    memcpy(function_pointer, &symbol, size);
}
#define DEVICE_SYMBOL(d, field, name) device_symbol((d)->library, name, &(d)->field, sizeof((d)->field))

/* Opens the driver library of the tier `native` describes: 1 on success. */
static int open_device_native(struct device *d, const gpumst_native *native)
{
    memset(d, 0, sizeof *d);
    d->native = *native;
    if (d->native.tier == GPUMST_TIER_OPENCL) {
        d->library = dlopen("libOpenCL.so.1", RTLD_NOW);
        if (!d->library)
            return 0;
        DEVICE_SYMBOL(d, cl_create, "clCreateBuffer");
        DEVICE_SYMBOL(d, cl_write, "clEnqueueWriteBuffer");
        DEVICE_SYMBOL(d, cl_read, "clEnqueueReadBuffer");
        DEVICE_SYMBOL(d, cl_release, "clReleaseMemObject");
        return d->cl_create && d->cl_write && d->cl_read && d->cl_release;
    }
    d->library = dlopen("libcuda.so.1", RTLD_NOW);
    if (!d->library)
        return 0;
    DEVICE_SYMBOL(d, cu_set_current, "cuCtxSetCurrent");
    DEVICE_SYMBOL(d, cu_alloc, "cuMemAlloc_v2");
    DEVICE_SYMBOL(d, cu_htod, "cuMemcpyHtoD_v2");
    DEVICE_SYMBOL(d, cu_dtoh, "cuMemcpyDtoH_v2");
    DEVICE_SYMBOL(d, cu_free, "cuMemFree_v2");
    DEVICE_SYMBOL(d, cu_ctx_create, "cuCtxCreate_v2");
    DEVICE_SYMBOL(d, cu_ctx_destroy, "cuCtxDestroy_v2");
    if (!(d->cu_set_current && d->cu_alloc && d->cu_htod && d->cu_dtoh && d->cu_free))
        return 0;
    /* The primary context gpumst uses, as the CUDA runtime would make it current. */
    return d->cu_set_current(d->native.context) == 0;
}

/* Opens the driver library of the context's GPU tier: 1 on success. */
static int open_device(struct device *d, gpumst_context *ctx)
{
    gpumst_native native;
    memset(&native, 0, sizeof native);
    DEVICE_CHECK(gpumst_context_native(ctx, &native) == GPUMST_OK, "gpumst_context_native");
    return open_device_native(d, &native);
}

/* Device memory holding `bytes` bytes of `host` (or uninitialised when host is NULL). */
static void *device_copy(struct device *d, const void *host, size_t bytes)
{
    if (d->native.tier == GPUMST_TIER_OPENCL) {
        int32_t err = 0;
        void *mem = d->cl_create(d->native.context, 1 /* CL_MEM_READ_WRITE */, bytes, NULL, &err);
        DEVICE_CHECK(mem != NULL && err == 0, "clCreateBuffer");
        if (mem && host) {
            DEVICE_CHECK(d->cl_write(d->native.queue, mem, 1, 0, bytes, (void *)host, 0, NULL, NULL) == 0,
                         "clEnqueueWriteBuffer");
        }
        return mem;
    }
    unsigned long long dptr = 0;
    DEVICE_CHECK(d->cu_alloc(&dptr, bytes) == 0, "cuMemAlloc");
    if (dptr && host) {
        DEVICE_CHECK(d->cu_htod(dptr, host, bytes) == 0, "cuMemcpyHtoD");
    }
    return (void *)(uintptr_t)dptr;
}

static void device_read(struct device *d, void *mem, void *host, size_t bytes)
{
    if (d->native.tier == GPUMST_TIER_OPENCL) {
        DEVICE_CHECK(d->cl_read(d->native.queue, mem, 1, 0, bytes, host, 0, NULL, NULL) == 0,
                     "clEnqueueReadBuffer");
    } else {
        DEVICE_CHECK(d->cu_dtoh(host, (unsigned long long)(uintptr_t)mem, bytes) == 0, "cuMemcpyDtoH");
    }
}

static void device_free(struct device *d, void *mem)
{
    if (!mem)
        return;
    if (d->native.tier == GPUMST_TIER_OPENCL)
        d->cl_release(mem);
    else
        d->cu_free((unsigned long long)(uintptr_t)mem);
}

static void device_close(struct device *d)
{
    if (d->library)
        dlclose(d->library);
    d->library = NULL;
}

#endif
