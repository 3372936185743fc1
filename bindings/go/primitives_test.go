package gpumst_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gpumst.dev/gpumst"
)

// extremes returns the identities of Min (the type's maximum, +Inf) and Max
// (the type's minimum, -Inf).
func extremes[T gpumst.Number]() (hi, lo T) {
	var zero T
	switch any(zero).(type) {
	case int32:
		return any(int32(math.MaxInt32)).(T), any(int32(math.MinInt32)).(T)
	case uint32:
		return any(uint32(math.MaxUint32)).(T), 0
	case int64:
		return any(int64(math.MaxInt64)).(T), any(int64(math.MinInt64)).(T)
	case uint64:
		return any(uint64(math.MaxUint64)).(T), 0
	case float32:
		return any(float32(math.Inf(1))).(T), any(float32(math.Inf(-1))).(T)
	case float64:
		return any(math.Inf(1)).(T), any(math.Inf(-1)).(T)
	}
	panic("unreachable")
}

func isNaN[T gpumst.Number](x T) bool { return x != x }

// combine applies op; NaN wins Min and Max (it propagates), and of equal values
// the earlier is kept (which only matters for the sign of zeros).
func combine[T gpumst.Number](op gpumst.ScanOp, acc, x T) T {
	switch op {
	case gpumst.Sum:
		return acc + x
	case gpumst.Min:
		if isNaN(acc) || (!isNaN(x) && acc <= x) {
			return acc
		}
		return x
	default:
		if isNaN(acc) || (!isNaN(x) && acc >= x) {
			return acc
		}
		return x
	}
}

func identity[T gpumst.Number](op gpumst.ScanOp) T {
	hi, lo := extremes[T]()
	switch op {
	case gpumst.Min:
		return hi
	case gpumst.Max:
		return lo
	}
	return 0
}

// referenceSegmentedScan scans each segment (starts[i] marks a start).
func referenceSegmentedScan[T gpumst.Number](in []T, starts []bool, op gpumst.ScanOp, kind gpumst.ScanKind) []T {
	out := make([]T, len(in))
	var acc T
	for i, x := range in {
		if i == 0 || starts[i] {
			acc = identity[T](op)
			if kind == gpumst.Inclusive {
				acc = x
				out[i] = acc
				continue
			}
		}
		if kind == gpumst.Exclusive {
			out[i] = acc
			acc = combine(op, acc, x)
		} else {
			acc = combine(op, acc, x)
			out[i] = acc
		}
	}
	return out
}

func referenceScan[T gpumst.Number](in []T, op gpumst.ScanOp, kind gpumst.ScanKind) []T {
	return referenceSegmentedScan(in, make([]bool, len(in)), op, kind)
}

// sameValues is slices.Equal with NaN equal to NaN.
func sameValues[T gpumst.Number](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] && !(isNaN(a[i]) && isNaN(b[i])) {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// randomValues draws n values with ties; float sums stay exact (small
// integers), integer sums wrap (values near the type's limits).
func randomValues[T gpumst.Number](rng *rand.Rand, n int, withNaN bool) []T {
	hi, lo := extremes[T]()
	out := make([]T, n)
	for i := range out {
		switch r := rng.IntN(20); {
		case r == 0 && !isFloat[T]():
			out[i] = hi - T(rng.IntN(3))
		case r == 1 && !isFloat[T]():
			out[i] = lo + T(rng.IntN(3))
		default:
			out[i] = T(rng.IntN(100))
		}
	}
	if withNaN && isFloat[T]() && n > 0 {
		nan := math.NaN()
		out[rng.IntN(n)] = T(nan)
	}
	return out
}

func isFloat[T gpumst.Number]() bool {
	var zero T
	switch any(zero).(type) {
	case float32, float64:
		return true
	}
	return false
}

func randomOffsets(rng *rand.Rand, n int) []uint64 {
	offsets := []uint64{0}
	for at := 0; at < n; {
		// Empty segments are allowed and common here.
		at = min(n, at+rng.IntN(40))
		offsets = append(offsets, uint64(at))
	}
	return offsets
}

func startsOf(offsets []uint64, n int) []bool {
	starts := make([]bool, n)
	for _, o := range offsets {
		if int(o) < n {
			starts[o] = true
		}
	}
	return starts
}

func primitivesConformance[T gpumst.Number](t *testing.T, ctx *gpumst.Context) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 1000, 100_003} {
		for _, withNaN := range []bool{false, true} {
			in := randomValues[T](rng, n, withNaN)
			offsets := randomOffsets(rng, n)
			starts := startsOf(offsets, n)
			flags := make([]bool, n)
			for i := range flags {
				flags[i] = rng.IntN(30) == 0
			}
			for _, op := range []gpumst.ScanOp{gpumst.Sum, gpumst.Min, gpumst.Max} {
				if op == gpumst.Sum && withNaN {
					continue // a NaN sum is NaN from there on; nothing new to learn
				}
				for _, kind := range []gpumst.ScanKind{gpumst.Inclusive, gpumst.Exclusive} {
					what := fmt.Sprintf("n=%d op=%d kind=%d nan=%v", n, op, kind, withNaN)
					out := make([]T, n)
					if err := gpumst.Scan(ctx, op, kind, in, out); err != nil {
						t.Fatalf("scan %s: %v", what, err)
					}
					if i := sameValues(out, referenceScan(in, op, kind)); i >= 0 {
						t.Fatalf("scan %s differs at %d", what, i)
					}
					inPlace := slices.Clone(in)
					if err := gpumst.Scan(ctx, op, kind, inPlace, inPlace); err != nil {
						t.Fatalf("in-place scan %s: %v", what, err)
					}
					if i := sameValues(inPlace, out); i >= 0 {
						t.Fatalf("in-place scan %s differs at %d", what, i)
					}
					if err := gpumst.SegmentedScanFlags(ctx, op, kind, in, out, flags); err != nil {
						t.Fatalf("flag-segmented scan %s: %v", what, err)
					}
					if i := sameValues(out, referenceSegmentedScan(in, flags, op, kind)); i >= 0 {
						t.Fatalf("flag-segmented scan %s differs at %d", what, i)
					}
					if err := gpumst.SegmentedScanOffsets(ctx, op, kind, in, out, offsets); err != nil {
						t.Fatalf("offset-segmented scan %s: %v", what, err)
					}
					if i := sameValues(out, referenceSegmentedScan(in, starts, op, kind)); i >= 0 {
						t.Fatalf("offset-segmented scan %s differs at %d", what, i)
					}
				}
			}
			checkArgReductions(t, ctx, in, offsets)
		}
	}
}

// referenceArg is the first index of the extreme (NaN counting as the
// extreme), or EmptyIndex.
func referenceArg[T gpumst.Number](in []T, max bool) (T, int) {
	hi, lo := extremes[T]()
	best, at := hi, gpumst.EmptyIndex
	if max {
		best = lo
	}
	for i, x := range in {
		if at >= 0 && isNaN(best) {
			break
		}
		better := isNaN(x) || (max && x > best) || (!max && x < best)
		if at < 0 || better {
			best, at = x, i
		}
	}
	return best, at
}

func checkArgReductions[T gpumst.Number](t *testing.T, ctx *gpumst.Context, in []T, offsets []uint64) {
	t.Helper()
	for _, max := range []bool{false, true} {
		name, reduce, segmented := "ArgMin", gpumst.ArgMin[T], gpumst.SegmentedArgMin[T]
		if max {
			name, reduce, segmented = "ArgMax", gpumst.ArgMax[T], gpumst.SegmentedArgMax[T]
		}
		value, index, err := reduce(ctx, in)
		if err != nil {
			t.Fatalf("%s over %d: %v", name, len(in), err)
		}
		wantValue, wantIndex := referenceArg(in, max)
		if index != wantIndex || sameValues([]T{value}, []T{wantValue}) >= 0 {
			t.Fatalf("%s over %d = (%v, %d), want (%v, %d)", name, len(in), value, index, wantValue, wantIndex)
		}
		values, indices, err := segmented(ctx, in, offsets)
		if err != nil {
			t.Fatalf("segmented %s: %v", name, err)
		}
		for s := range len(offsets) - 1 {
			seg := in[offsets[s]:offsets[s+1]]
			v, i := referenceArg(seg, max)
			if i >= 0 {
				i += int(offsets[s])
			}
			if indices[s] != i || sameValues([]T{values[s]}, []T{v}) >= 0 {
				t.Fatalf("segmented %s, segment %d = (%v, %d), want (%v, %d)", name, s, values[s], indices[s], v, i)
			}
		}
	}
}

func TestPrimitivesInt32(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { primitivesConformance[int32](t, ctx) })
}
func TestPrimitivesUint32(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { primitivesConformance[uint32](t, ctx) })
}
func TestPrimitivesInt64(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { primitivesConformance[int64](t, ctx) })
}
func TestPrimitivesUint64(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { primitivesConformance[uint64](t, ctx) })
}
func TestPrimitivesFloat32(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { primitivesConformance[float32](t, ctx) })
}
func TestPrimitivesFloat64(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { primitivesConformance[float64](t, ctx) })
}

func TestPrimitiveErrors(t *testing.T) {
	ctx := openTier(t, gpumst.TierCPU)
	buf := []int32{1, 2, 3, 4, 5}
	cases := []struct {
		name    string
		err     error
		message string
	}{
		{"short out", gpumst.Scan(ctx, gpumst.Sum, gpumst.Inclusive, buf, make([]int32, 4)), "out has 4 elements but in has 5"},
		{"partial overlap", gpumst.Scan(ctx, gpumst.Sum, gpumst.Inclusive, buf[:4], buf[1:]), "overlap"},
		{"short flags", gpumst.SegmentedScanFlags(ctx, gpumst.Min, gpumst.Exclusive, buf, make([]int32, 5), []bool{true}), "flags has 1 entries"},
		{"offsets not ending at n", gpumst.SegmentedScanOffsets(ctx, gpumst.Max, gpumst.Inclusive, buf, make([]int32, 5), []uint64{0, 2, 4}), "offsets[2] = 4"},
		{"offsets not starting at 0", gpumst.SegmentedScanOffsets(ctx, gpumst.Max, gpumst.Inclusive, buf, make([]int32, 5), []uint64{1, 5}), "offsets[0] = 1"},
		{"decreasing offsets", second(gpumst.SegmentedArgMin(ctx, buf, []uint64{0, 3, 2, 5})), "offsets[2] = 2"},
		{"no offsets", second(gpumst.SegmentedArgMax(ctx, buf, nil)), "offsets is empty"},
		{"unknown operator (checked by the library)", gpumst.Scan(ctx, 7, gpumst.Inclusive, buf, make([]int32, 5)), "7"},
		{"unknown kind (checked by the library)", gpumst.Scan(ctx, gpumst.Sum, 9, buf, make([]int32, 5)), "9"},
	}
	for _, c := range cases {
		if !errors.Is(c.err, gpumst.ErrInvalidArgument) || !strings.Contains(errString(c.err), c.message) {
			t.Errorf("%s: %v, want ErrInvalidArgument with %q", c.name, c.err, c.message)
		}
	}
	if !slices.Equal(buf, []int32{1, 2, 3, 4, 5}) {
		t.Errorf("a rejected call wrote into its input: %v", buf)
	}
}

func second[A, B any](_ A, _ B, err error) error { return err }
