package gpumst

/*
#cgo pkg-config: gpumst
#include <stdlib.h>
#include "gpumst.h"
*/
import "C"

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Version returns the library's version, "MAJOR.MINOR.PATCH".
func Version() string {
	return C.GoString(C.gpumst_version())
}

// ProbeReport returns the library's run-time probe report as JSON: which CUDA
// and OpenCL drivers were found and why each tier is or is not usable.
func ProbeReport() (string, error) {
	var n C.size_t
	if s := C.gpumst_probe_report(nil, 0, &n); s != C.GPUMST_OK {
		return "", &Error{Status: Status(s), Op: "probe report"}
	}
	// The report could grow between the two calls (a driver appearing); retry.
	for {
		buf := make([]byte, int(n)+1)
		var got C.size_t
		s := C.gpumst_probe_report((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &got)
		if s != C.GPUMST_OK {
			return "", &Error{Status: Status(s), Op: "probe report"}
		}
		if got < C.size_t(len(buf)) {
			return string(buf[:got]), nil
		}
		n = got
	}
}

// Tier is a compute tier.
type Tier int32

// The tiers. TierAuto picks CUDA, then an OpenCL GPU, then the CPU (and honours
// the GPUMST_BACKEND environment variable).
const (
	TierAuto   Tier = C.GPUMST_TIER_AUTO
	TierCPU    Tier = C.GPUMST_TIER_CPU
	TierOpenCL Tier = C.GPUMST_TIER_OPENCL
	TierCUDA   Tier = C.GPUMST_TIER_CUDA
)

// String returns the library's name of the tier ("auto", "cpu", "opencl",
// "cuda", or "unknown").
func (t Tier) String() string {
	return C.GoString(C.gpumst_tier_name(C.gpumst_tier(t)))
}

// Options configures [NewContext]. The zero value asks for the defaults: the
// auto tier, device 0 and all CPU cores.
type Options struct {
	// Tier forces a tier; a forced tier that cannot be used is an error
	// (ErrBackendUnavailable), never a silent fallback.
	Tier Tier
	// Device is the index of the GPU to use (ignored by the CPU tier).
	Device int
	// Threads is the number of CPU worker threads; 0 means all cores.
	Threads int
	// DeviceMemoryLimit is the most device memory (bytes) a GPU tier may use for
	// one call; 0 means the device's. A minimum spanning forest larger than it
	// is computed a partition of the edges at a time (the same forest). On the
	// CPU tier it caps the memory a forest's working arrays take (0: no cap).
	DeviceMemoryLimit uint64
	// Devices lists several GPUs of the tier (the first replaces Device).
	// Everything runs on the first; a minimum spanning forest is split across
	// them (the same forest) where GPUMST_SPLIT_MIN_EDGES asks for it. Empty
	// means Device alone. The CPU tier ignores it.
	Devices []int
	// AllDevices uses every usable GPU of the tier like Device's (overrides Devices).
	AllDevices bool
}

// Context is an open library context. It is safe for concurrent use by many
// goroutines. Close it when done; an unreachable Context is also released by a
// cleanup.
type Context struct {
	// mu is held shared by every call that uses ptr and exclusively by Close,
	// so Close waits for calls in flight and no call sees a destroyed context.
	mu      sync.RWMutex
	ptr     *C.gpumst_context
	cleanup runtime.Cleanup
}

// NewContext opens a context with the given options.
func NewContext(opts Options) (*Context, error) {
	const op = "new context"
	if opts.Device < 0 || uint64(opts.Device) > math.MaxUint32 {
		return nil, errorf(op, StatusInvalidArgument, "device index %d is out of range", opts.Device)
	}
	if opts.Threads < 0 || uint64(opts.Threads) > math.MaxUint32 {
		return nil, errorf(op, StatusInvalidArgument, "thread count %d is out of range", opts.Threads)
	}
	var copts C.gpumst_options
	if s := C.gpumst_options_init(&copts); s != C.GPUMST_OK {
		return nil, &Error{Status: Status(s), Op: op, Message: "gpumst_options_init failed"}
	}
	copts.tier = C.gpumst_tier(opts.Tier)
	copts.device_index = C.uint32_t(opts.Device)
	copts.cpu_threads = C.uint32_t(opts.Threads)
	copts.device_memory_limit = C.uint64_t(opts.DeviceMemoryLimit)
	switch {
	case opts.AllDevices:
		copts.device_count = C.GPUMST_ALL_DEVICES
	case len(opts.Devices) > 0:
		// C memory: the options struct, itself passed to C, may not point to Go memory.
		list := (*[1 << 28]C.uint32_t)(C.calloc(C.size_t(len(opts.Devices)), 4))[:len(opts.Devices):len(opts.Devices)]
		defer C.free(unsafe.Pointer(&list[0]))
		for i, d := range opts.Devices {
			if d < 0 || uint64(d) > math.MaxUint32 {
				return nil, errorf(op, StatusInvalidArgument, "device index %d is out of range", d)
			}
			list[i] = C.uint32_t(d)
		}
		copts.devices = &list[0]
		copts.device_count = C.uint32_t(len(opts.Devices))
	}

	// The reason is written into C memory: simpler than reasoning about C
	// writing into a Go buffer, and it is freed right here.
	const capacity = 4096
	why := (*C.char)(C.calloc(capacity, 1))
	defer C.free(unsafe.Pointer(why))
	var ptr *C.gpumst_context
	if s := C.gpumst_context_create(&copts, &ptr, why, capacity); s != C.GPUMST_OK {
		return nil, &Error{Status: Status(s), Op: op, Message: C.GoString(why)}
	}
	c := &Context{ptr: ptr}
	// The cleanup gets the C pointer, not c, so it does not keep c alive; Close
	// stops it so that the context is destroyed exactly once.
	c.cleanup = runtime.AddCleanup(c, destroyUnclosed, ptr)
	return c, nil
}

// unclosedDestroyed counts the contexts released by the cleanup rather than by
// Close (the tests watch it).
var unclosedDestroyed atomic.Int64

func destroyUnclosed(ptr *C.gpumst_context) {
	C.gpumst_context_destroy(ptr)
	unclosedDestroyed.Add(1)
}

// Close destroys the context after the calls in flight on it have returned.
// Calling Close again is harmless; any other use after Close returns an error
// matching [ErrClosed].
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ptr == nil {
		return nil
	}
	c.cleanup.Stop()
	C.gpumst_context_destroy(c.ptr)
	c.ptr = nil
	return nil
}

// acquire returns the C context with the shared lock held; release it with
// c.mu.RUnlock. It fails once the context is closed.
func (c *Context) acquire(op string) (*C.gpumst_context, error) {
	if c == nil {
		return nil, errorf(op, StatusInvalidArgument, "nil *Context")
	}
	c.mu.RLock()
	if c.ptr == nil {
		c.mu.RUnlock()
		return nil, closedError(op)
	}
	return c.ptr, nil
}

// fail turns a failed status into an *Error with the context's last message.
// The caller holds the shared lock, so ptr is still valid.
func fail(ptr *C.gpumst_context, op string, s C.gpumst_status) error {
	return &Error{Status: Status(s), Op: op, Message: lastError(ptr)}
}

func lastError(ptr *C.gpumst_context) string {
	var small [512]C.char
	n := C.gpumst_context_last_error(ptr, &small[0], C.size_t(len(small)))
	if int(n) < len(small) {
		return C.GoString(&small[0])
	}
	// Longer than the stack buffer: ask again with room for all of it (a
	// concurrent failure may have changed it meanwhile; take what is there).
	buf := (*C.char)(C.calloc(n+1, 1))
	defer C.free(unsafe.Pointer(buf))
	C.gpumst_context_last_error(ptr, buf, n+1)
	return C.GoString(buf)
}

// Tier returns the tier the context runs on (never TierAuto).
func (c *Context) Tier() (Tier, error) {
	const op = "tier"
	ptr, err := c.acquire(op)
	if err != nil {
		return 0, err
	}
	defer c.mu.RUnlock()
	var t C.gpumst_tier
	if s := C.gpumst_context_tier(ptr, &t); s != C.GPUMST_OK {
		return 0, fail(ptr, op, s)
	}
	return Tier(t), nil
}

// DeviceName returns the name of the context's device.
func (c *Context) DeviceName() (string, error) {
	const op = "device name"
	ptr, err := c.acquire(op)
	if err != nil {
		return "", err
	}
	defer c.mu.RUnlock()
	var n C.size_t
	if s := C.gpumst_context_device_name(ptr, nil, 0, &n); s != C.GPUMST_OK {
		return "", fail(ptr, op, s)
	}
	buf := (*C.char)(C.calloc(n+1, 1))
	defer C.free(unsafe.Pointer(buf))
	if s := C.gpumst_context_device_name(ptr, buf, n+1, nil); s != C.GPUMST_OK {
		return "", fail(ptr, op, s)
	}
	return C.GoString(buf), nil
}

// DeviceMemory returns the memory of the context's device in bytes (system
// memory for the CPU tier).
func (c *Context) DeviceMemory() (uint64, error) {
	const op = "device memory"
	ptr, err := c.acquire(op)
	if err != nil {
		return 0, err
	}
	defer c.mu.RUnlock()
	var bytes C.uint64_t
	if s := C.gpumst_context_device_memory(ptr, &bytes); s != C.GPUMST_OK {
		return 0, fail(ptr, op, s)
	}
	return uint64(bytes), nil
}

// DeviceCount returns how many devices of its GPU tier the context uses (1 on
// the CPU tier).
func (c *Context) DeviceCount() (int, error) {
	const op = "device count"
	ptr, err := c.acquire(op)
	if err != nil {
		return 0, err
	}
	defer c.mu.RUnlock()
	var count C.uint32_t
	if s := C.gpumst_context_device_count(ptr, &count); s != C.GPUMST_OK {
		return 0, fail(ptr, op, s)
	}
	return int(count), nil
}

// sliceArg is the address of a slice's first element for a C call, or nil for
// an empty slice (the C API accepts NULL when the length is 0).
func sliceArg[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}
