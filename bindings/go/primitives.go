package gpumst

// #include "gpumst.h"
import "C"

import (
	"math"
	"unsafe"
)

// ScanOp is a scan operator.
type ScanOp int32

// The scan operators. Integer sums wrap; float sums are IEEE (summed in a fixed
// tree order, so they may differ from a sequential sum by rounding). Min and
// Max treat NaN as the extreme (it propagates) and keep the earlier of equal
// values.
const (
	Sum ScanOp = C.GPUMST_SUM
	Min ScanOp = C.GPUMST_MIN
	Max ScanOp = C.GPUMST_MAX
)

// ScanKind says whether a scan includes the element at each position.
type ScanKind int32

// Inclusive: out[i] covers in[0..i]. Exclusive: out[i] covers in[0..i-1], and
// each segment starts with the identity (0 for Sum, the type's maximum or +Inf
// for Min, the type's minimum or -Inf for Max).
const (
	Inclusive ScanKind = C.GPUMST_INCLUSIVE
	Exclusive ScanKind = C.GPUMST_EXCLUSIVE
)

// EmptyIndex is the index reported for an empty input or an empty segment.
const EmptyIndex = -1

func checkScan[T Number](op string, in, out []T) error {
	if len(out) != len(in) {
		return errorf(op, StatusInvalidArgument, "out has %d elements but in has %d", len(out), len(in))
	}
	if overlapping(in, out) {
		return errorf(op, StatusInvalidArgument, "in and out overlap without being the same slice (only exact in-place scans are allowed)")
	}
	return nil
}

// Scan writes the scan of in under op into out (len(out) must equal len(in)).
// out may be in itself (an in-place scan) but must not otherwise overlap it.
func Scan[T Number](ctx *Context, op ScanOp, kind ScanKind, in, out []T) error {
	const name = "scan"
	if err := checkScan(name, in, out); err != nil {
		return err
	}
	ptr, err := ctx.acquire(name)
	if err != nil {
		return err
	}
	defer ctx.mu.RUnlock()
	s := C.gpumst_scan(ptr, dtypeOf[T](), C.gpumst_scan_op(op), C.gpumst_scan_kind(kind),
		sliceArg(in), sliceArg(out), C.uint64_t(len(in)))
	if s != C.GPUMST_OK {
		return fail(ptr, name, s)
	}
	return nil
}

// SegmentedScanFlags scans each segment of in separately: flags[i] starts a
// new segment at i (index 0 always starts one). len(flags) and len(out) must
// equal len(in); in-place use as for [Scan].
func SegmentedScanFlags[T Number](ctx *Context, op ScanOp, kind ScanKind, in, out []T, flags []bool) error {
	const name = "segmented scan (flags)"
	if err := checkScan(name, in, out); err != nil {
		return err
	}
	if len(flags) != len(in) {
		return errorf(name, StatusInvalidArgument, "flags has %d entries but in has %d", len(flags), len(in))
	}
	ptr, err := ctx.acquire(name)
	if err != nil {
		return err
	}
	defer ctx.mu.RUnlock()
	// A Go bool is one byte holding 0 or 1, which is what the C API reads.
	s := C.gpumst_segmented_scan_flags(ptr, dtypeOf[T](), C.gpumst_scan_op(op), C.gpumst_scan_kind(kind),
		sliceArg(in), sliceArg(out), (*C.uint8_t)(sliceArg(flags)), C.uint64_t(len(in)))
	if s != C.GPUMST_OK {
		return fail(ptr, name, s)
	}
	return nil
}

// SegmentedScanOffsets scans each segment [offsets[s], offsets[s+1]) of in
// separately. offsets has one entry more than there are segments, starts at
// 0, never decreases and ends at len(in); empty segments are allowed.
// In-place use as for [Scan].
func SegmentedScanOffsets[T Number](ctx *Context, op ScanOp, kind ScanKind, in, out []T, offsets []uint64) error {
	const name = "segmented scan (offsets)"
	if err := checkScan(name, in, out); err != nil {
		return err
	}
	if err := checkOffsets(name, offsets, len(in)); err != nil {
		return err
	}
	ptr, err := ctx.acquire(name)
	if err != nil {
		return err
	}
	defer ctx.mu.RUnlock()
	s := C.gpumst_segmented_scan_offsets(ptr, dtypeOf[T](), C.gpumst_scan_op(op), C.gpumst_scan_kind(kind),
		sliceArg(in), sliceArg(out), C.uint64_t(len(in)), (*C.uint64_t)(sliceArg(offsets)), C.uint64_t(len(offsets)-1))
	if s != C.GPUMST_OK {
		return fail(ptr, name, s)
	}
	return nil
}

// ArgMin returns the minimum of in and the first index holding it (NaN counts
// as the minimum, so the first NaN wins). For an empty in it returns the
// type's maximum (+Inf for floats) and [EmptyIndex].
func ArgMin[T Number](ctx *Context, in []T) (value T, index int, err error) {
	return argReduce(ctx, "argmin", in, false)
}

// ArgMax returns the maximum of in and the first index holding it (NaN counts
// as the maximum). For an empty in it returns the type's minimum (-Inf for
// floats) and [EmptyIndex].
func ArgMax[T Number](ctx *Context, in []T) (value T, index int, err error) {
	return argReduce(ctx, "argmax", in, true)
}

func argReduce[T Number](ctx *Context, name string, in []T, max bool) (value T, index int, err error) {
	ptr, err := ctx.acquire(name)
	if err != nil {
		return value, EmptyIndex, err
	}
	defer ctx.mu.RUnlock()
	var at C.uint64_t
	var s C.gpumst_status
	if max {
		s = C.gpumst_argmax(ptr, dtypeOf[T](), sliceArg(in), C.uint64_t(len(in)), unsafe.Pointer(&value), &at)
	} else {
		s = C.gpumst_argmin(ptr, dtypeOf[T](), sliceArg(in), C.uint64_t(len(in)), unsafe.Pointer(&value), &at)
	}
	if s != C.GPUMST_OK {
		return value, EmptyIndex, fail(ptr, name, s)
	}
	return value, toIndex(uint64(at)), nil
}

// SegmentedArgMin returns, per segment [offsets[s], offsets[s+1]) of in
// (offsets as for [SegmentedScanOffsets]), the minimum and the first index
// into in holding it. Empty segments get the type's maximum and [EmptyIndex].
func SegmentedArgMin[T Number](ctx *Context, in []T, offsets []uint64) (values []T, indices []int, err error) {
	return segmentedArgReduce(ctx, "segmented argmin", in, offsets, false)
}

// SegmentedArgMax is [SegmentedArgMin] for the maximum; empty segments get the
// type's minimum and [EmptyIndex].
func SegmentedArgMax[T Number](ctx *Context, in []T, offsets []uint64) (values []T, indices []int, err error) {
	return segmentedArgReduce(ctx, "segmented argmax", in, offsets, true)
}

func segmentedArgReduce[T Number](ctx *Context, name string, in []T, offsets []uint64, max bool) ([]T, []int, error) {
	if err := checkOffsets(name, offsets, len(in)); err != nil {
		return nil, nil, err
	}
	k := len(offsets) - 1
	values := make([]T, k)
	raw := make([]uint64, k)
	ptr, err := ctx.acquire(name)
	if err != nil {
		return nil, nil, err
	}
	defer ctx.mu.RUnlock()
	var s C.gpumst_status
	if max {
		s = C.gpumst_segmented_argmax(ptr, dtypeOf[T](), sliceArg(in), C.uint64_t(len(in)),
			(*C.uint64_t)(sliceArg(offsets)), C.uint64_t(k), sliceArg(values), (*C.uint64_t)(sliceArg(raw)))
	} else {
		s = C.gpumst_segmented_argmin(ptr, dtypeOf[T](), sliceArg(in), C.uint64_t(len(in)),
			(*C.uint64_t)(sliceArg(offsets)), C.uint64_t(k), sliceArg(values), (*C.uint64_t)(sliceArg(raw)))
	}
	if s != C.GPUMST_OK {
		return nil, nil, fail(ptr, name, s)
	}
	indices := make([]int, k)
	for i, at := range raw {
		indices[i] = toIndex(at)
	}
	return values, indices, nil
}

// toIndex maps the library's index to a Go int, GPUMST_EMPTY_SEGMENT to
// EmptyIndex.
func toIndex(at uint64) int {
	if at == math.MaxUint64 {
		return EmptyIndex
	}
	return int(at)
}
