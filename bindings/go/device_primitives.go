package gpumst

/*
#include <stdint.h>
#include "gpumst.h"

// Device addresses travel as integers and become pointers on the C side (as in
// device.go): they are GPU memory or OpenCL handles, never Go memory.
// segments: 0 none, 1 CSR offsets (num_segments + 1 at `heads`), 2 head flags (n bytes
// at `heads`).
static gpumst_status gpumstgo_scan_device(gpumst_context *ctx, gpumst_dtype dtype,
		gpumst_scan_op op, gpumst_scan_kind kind, uintptr_t in, uintptr_t out, uint64_t n,
		int segments, uintptr_t heads, uint64_t num_segments, uintptr_t stream) {
	switch (segments) {
	case 1:
		return gpumst_segmented_scan_offsets_device(ctx, dtype, op, kind, (const void *)in,
			(void *)out, n, (const void *)heads, num_segments, (void *)stream);
	case 2:
		return gpumst_segmented_scan_flags_device(ctx, dtype, op, kind, (const void *)in,
			(void *)out, (const void *)heads, n, (void *)stream);
	default:
		return gpumst_scan_device(ctx, dtype, op, kind, (const void *)in, (void *)out, n,
			(void *)stream);
	}
}

static gpumst_status gpumstgo_arg_device(gpumst_context *ctx, gpumst_dtype dtype, int max,
		uintptr_t in, uint64_t n, uintptr_t stream, void *value, uint64_t *index) {
	if (max)
		return gpumst_argmax_device(ctx, dtype, (const void *)in, n, (void *)stream, value, index);
	return gpumst_argmin_device(ctx, dtype, (const void *)in, n, (void *)stream, value, index);
}

static gpumst_status gpumstgo_segmented_arg_device(gpumst_context *ctx, gpumst_dtype dtype,
		int max, uintptr_t in, uint64_t n, uintptr_t offsets, uint64_t num_segments,
		uintptr_t values, uintptr_t indices, uintptr_t stream) {
	if (max)
		return gpumst_segmented_argmax_device(ctx, dtype, (const void *)in, n,
			(const void *)offsets, num_segments, (void *)values, (void *)indices, (void *)stream);
	return gpumst_segmented_argmin_device(ctx, dtype, (const void *)in, n,
		(const void *)offsets, num_segments, (void *)values, (void *)indices, (void *)stream);
}
*/
import "C"

import "unsafe"

// ScanDevice writes the scan of the n elements of type T at in into out, both
// device memory (out may be in: an in-place scan), after the work issued to
// stream (a CUstream or cl_command_queue; 0: none). It is complete when it
// returns.
func ScanDevice[T Number](ctx *Context, op ScanOp, kind ScanKind, in, out DevicePtr, n uint64, stream uintptr) error {
	return scanDevice[T](ctx, "scan (device)", op, kind, in, out, n, unsegmented, 0, 0, stream)
}

// SegmentedScanOffsetsDevice is [ScanDevice] restarted at each segment
// [offsets[s], offsets[s+1]): offsets is numSegments+1 uint64 in device memory,
// validated on the device with [SegmentedScanOffsets]'s messages.
func SegmentedScanOffsetsDevice[T Number](ctx *Context, op ScanOp, kind ScanKind, in, out DevicePtr, n uint64, offsets DevicePtr, numSegments uint64, stream uintptr) error {
	return scanDevice[T](ctx, "segmented scan (device)", op, kind, in, out, n, byOffsets, offsets, numSegments, stream)
}

// SegmentedScanFlagsDevice is [ScanDevice] restarted wherever flags (n bytes in
// device memory) is nonzero; index 0 always starts a segment, as in
// [SegmentedScanFlags].
func SegmentedScanFlagsDevice[T Number](ctx *Context, op ScanOp, kind ScanKind, in, out, flags DevicePtr, n uint64, stream uintptr) error {
	return scanDevice[T](ctx, "segmented scan by flags (device)", op, kind, in, out, n, byFlags, flags, 0, stream)
}

// How a device scan is segmented (gpumstgo_scan_device's `segments`).
const (
	unsegmented = 0
	byOffsets   = 1
	byFlags     = 2
)

func scanDevice[T Number](ctx *Context, name string, op ScanOp, kind ScanKind, in, out DevicePtr, n uint64, segments int, heads DevicePtr, numSegments uint64, stream uintptr) error {
	ptr, err := ctx.acquire(name)
	if err != nil {
		return err
	}
	defer ctx.mu.RUnlock()
	s := C.gpumstgo_scan_device(ptr, dtypeOf[T](), C.gpumst_scan_op(op), C.gpumst_scan_kind(kind),
		C.uintptr_t(in), C.uintptr_t(out), C.uint64_t(n), C.int(segments), C.uintptr_t(heads),
		C.uint64_t(numSegments), C.uintptr_t(stream))
	if s != C.GPUMST_OK {
		return fail(ptr, name, s)
	}
	return nil
}

// ArgMinDevice returns the minimum of the n elements of type T at in (device
// memory) and the first index holding it, as [ArgMin] (n == 0: the type's
// maximum and [EmptyIndex]), after the work issued to stream (0: none).
func ArgMinDevice[T Number](ctx *Context, in DevicePtr, n uint64, stream uintptr) (value T, index int, err error) {
	return argDevice[T](ctx, "argmin (device)", in, n, false, stream)
}

// ArgMaxDevice is [ArgMinDevice] for the maximum, as [ArgMax].
func ArgMaxDevice[T Number](ctx *Context, in DevicePtr, n uint64, stream uintptr) (value T, index int, err error) {
	return argDevice[T](ctx, "argmax (device)", in, n, true, stream)
}

func argDevice[T Number](ctx *Context, name string, in DevicePtr, n uint64, max bool, stream uintptr) (value T, index int, err error) {
	ptr, err := ctx.acquire(name)
	if err != nil {
		return value, EmptyIndex, err
	}
	defer ctx.mu.RUnlock()
	var at C.uint64_t
	// value is plain Go memory without pointers, written once during the call.
	s := C.gpumstgo_arg_device(ptr, dtypeOf[T](), cBool(max), C.uintptr_t(in), C.uint64_t(n),
		C.uintptr_t(stream), unsafe.Pointer(&value), &at)
	if s != C.GPUMST_OK {
		return value, EmptyIndex, fail(ptr, name, s)
	}
	return value, toIndex(uint64(at)), nil
}

// SegmentedArgMinDevice writes, per segment [offsets[s], offsets[s+1]) of the n
// elements of type T at in, the minimum to values[s] and the first index into in
// holding it to indices[s] (uint64; an empty segment's is the type's maximum and
// 2^64-1), all device memory (numSegments+1 offsets, numSegments values and
// indices), as [SegmentedArgMin], after the work issued to stream (0: none).
func SegmentedArgMinDevice[T Number](ctx *Context, in DevicePtr, n uint64, offsets DevicePtr, numSegments uint64, values, indices DevicePtr, stream uintptr) error {
	return segmentedArgDevice[T](ctx, "segmented argmin (device)", false, in, n, offsets, numSegments, values, indices, stream)
}

// SegmentedArgMaxDevice is [SegmentedArgMinDevice] for the maximum; empty
// segments get the type's minimum.
func SegmentedArgMaxDevice[T Number](ctx *Context, in DevicePtr, n uint64, offsets DevicePtr, numSegments uint64, values, indices DevicePtr, stream uintptr) error {
	return segmentedArgDevice[T](ctx, "segmented argmax (device)", true, in, n, offsets, numSegments, values, indices, stream)
}

func segmentedArgDevice[T Number](ctx *Context, name string, max bool, in DevicePtr, n uint64, offsets DevicePtr, numSegments uint64, values, indices DevicePtr, stream uintptr) error {
	ptr, err := ctx.acquire(name)
	if err != nil {
		return err
	}
	defer ctx.mu.RUnlock()
	s := C.gpumstgo_segmented_arg_device(ptr, dtypeOf[T](), cBool(max), C.uintptr_t(in),
		C.uint64_t(n), C.uintptr_t(offsets), C.uint64_t(numSegments), C.uintptr_t(values),
		C.uintptr_t(indices), C.uintptr_t(stream))
	if s != C.GPUMST_OK {
		return fail(ptr, name, s)
	}
	return nil
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
