// Package devmem makes GPU memory for the tests of gpumst's device calls the way an
// application makes it (ffi-tests/device_memory.h: the driver library through
// dlopen, OpenCL buffers in gpumst's cl_context, CUDA memory in the device's primary
// context). It is for tests only.
package devmem

/*
#cgo CFLAGS: -I${SRCDIR}/../../../../ffi-tests
#cgo pkg-config: gpumst
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include <stdio.h>

static int devmem_failures;
#define DEVICE_CHECK(cond, what) do { if (!(cond)) { devmem_failures++; fprintf(stderr, "devmem: %s failed\n", what); } } while (0)
#include "device_memory.h"

static struct device *devmem_open(gpumst_tier tier, uintptr_t context, uintptr_t queue, uintptr_t device) {
	gpumst_native native = {tier, (void *)context, (void *)queue, (void *)device};
	struct device *d = calloc(1, sizeof *d);
	if (d && !open_device_native(d, &native)) {
		device_close(d);
		free(d);
		return NULL;
	}
	return d;
}
static uintptr_t devmem_copy(struct device *d, const void *host, size_t bytes) {
	return (uintptr_t)device_copy(d, host, bytes);
}
static void devmem_read(struct device *d, uintptr_t mem, void *host, size_t bytes) {
	device_read(d, (void *)mem, host, bytes);
}
static void devmem_free(struct device *d, uintptr_t mem) { device_free(d, (void *)mem); }
static void devmem_close(struct device *d) { device_close(d); free(d); }
static int devmem_failed(void) { return devmem_failures; }
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Device allocates and copies GPU memory of one gpumst context's GPU tier.
type Device struct{ d *C.struct_device }

// Open loads the driver library of a GPU tier, given its native objects (from
// gpumst's Context.Native: tier, context, queue, device). On CUDA it makes the
// context current on the calling thread, and the later calls use it there: call
// them from a goroutine locked to its thread (runtime.LockOSThread).
func Open(tier int32, context, queue, device uintptr) (*Device, error) {
	d := C.devmem_open(C.gpumst_tier(tier), C.uintptr_t(context), C.uintptr_t(queue), C.uintptr_t(device))
	if d == nil {
		return nil, errors.New("devmem: the GPU tier's driver library could not be loaded")
	}
	return &Device{d}, nil
}

// Copy returns device memory holding the bytes of host (uninitialised bytes of
// that size when host is nil and size > 0).
func Copy[T any](dev *Device, host []T, size int) uintptr {
	bytes := size * int(unsafe.Sizeof(*new(T)))
	var p unsafe.Pointer
	if host != nil {
		p = unsafe.Pointer(&host[0])
	}
	return uintptr(C.devmem_copy(dev.d, p, C.size_t(bytes)))
}

// Read copies device memory into out.
func Read[T any](dev *Device, mem uintptr, out []T) {
	if len(out) == 0 {
		return
	}
	C.devmem_read(dev.d, C.uintptr_t(mem), unsafe.Pointer(&out[0]), C.size_t(len(out)*int(unsafe.Sizeof(out[0]))))
}

// Free releases device memory from Copy.
func (dev *Device) Free(mem uintptr) { C.devmem_free(dev.d, C.uintptr_t(mem)) }

// Close unloads the driver library.
func (dev *Device) Close() { C.devmem_close(dev.d) }

// Failures counts driver calls that failed so far.
func Failures() int { return int(C.devmem_failed()) }
