package gpumst

// #include "gpumst.h"
import "C"

import (
	"math"
	"reflect"
	"unsafe"
)

// Number is the set of element types the library computes on: int32, uint32,
// int64, uint64, float32 and float64 (and types defined on them).
type Number interface {
	~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Weight is the set of edge weight types; it is [Number].
type Weight interface {
	Number
}

// dtypeOf maps T to the library's element type. The Kind switch (rather than a
// type switch) also covers types defined on the six, such as `type Cost int64`.
func dtypeOf[T Number]() C.gpumst_dtype {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Int32:
		return C.GPUMST_I32
	case reflect.Uint32:
		return C.GPUMST_U32
	case reflect.Int64:
		return C.GPUMST_I64
	case reflect.Uint64:
		return C.GPUMST_U64
	case reflect.Float32:
		return C.GPUMST_F32
	case reflect.Float64:
		return C.GPUMST_F64
	}
	panic("gpumst: unreachable: Number admits only the six element types")
}

// firstNaN returns the index of the first NaN in w, or -1 (never for integers).
func firstNaN[T Number](w []T) int {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Float32, reflect.Float64:
		for i, x := range w {
			if x != x {
				return i
			}
		}
	}
	return -1
}

// overlapping reports whether two slices of T share memory without being the
// same slice start (the library allows exact in-place use only).
func overlapping[T any](a, b []T) (partial bool) {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa := uintptr(unsafe.Pointer(&a[0]))
	pb := uintptr(unsafe.Pointer(&b[0]))
	if pa == pb {
		return false
	}
	size := unsafe.Sizeof(a[0])
	return pa < pb+uintptr(len(b))*size && pb < pa+uintptr(len(a))*size
}

// checkOffsets checks segment offsets over n elements as the library would:
// at least one entry, offsets[0] == 0, non-decreasing, last == n.
func checkOffsets(op string, offsets []uint64, n int) error {
	if len(offsets) == 0 {
		return errorf(op, StatusInvalidArgument, "offsets is empty: segment offsets need num_segments + 1 entries (at least [0])")
	}
	if offsets[0] != 0 {
		return errorf(op, StatusInvalidArgument, "offsets[0] = %d, expected 0", offsets[0])
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] {
			return errorf(op, StatusInvalidArgument, "offsets are not monotone: offsets[%d] = %d is less than offsets[%d] = %d", i, offsets[i], i-1, offsets[i-1])
		}
	}
	if last := offsets[len(offsets)-1]; last != uint64(n) {
		return errorf(op, StatusInvalidArgument, "offsets[%d] = %d must equal the number of elements, %d", len(offsets)-1, last, n)
	}
	return nil
}

// maxVertices is the most vertices a graph may have: vertex ids are uint32.
const maxVertices = math.MaxUint32 + 1
