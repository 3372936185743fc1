package gpumst_test

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"gpumst.dev/gpumst"
)

// tiers are the tiers every conformance test runs on; one that does not open
// on this machine is skipped with the library's reason.
var tiers = []gpumst.Tier{gpumst.TierCPU, gpumst.TierOpenCL, gpumst.TierCUDA}

// forEachTier runs body on a context of each tier that opens here.
func forEachTier(t *testing.T, body func(t *testing.T, ctx *gpumst.Context)) {
	t.Helper()
	for _, tier := range tiers {
		t.Run(tier.String(), func(t *testing.T) {
			ctx := openTier(t, tier)
			body(t, ctx)
		})
	}
}

// openTier opens a context on tier, closed when the test ends, or skips the
// test when the tier is not available on this machine. GPUMST_TEST_REQUIRE
// (a comma-separated list of tier names) turns such a skip into a failure, for
// runs on a machine that is known to have the tier.
func openTier(t *testing.T, tier gpumst.Tier) *gpumst.Context {
	t.Helper()
	ctx, err := gpumst.NewContext(gpumst.Options{Tier: tier})
	if errors.Is(err, gpumst.ErrBackendUnavailable) {
		for _, name := range strings.Split(os.Getenv("GPUMST_TEST_REQUIRE"), ",") {
			if name == tier.String() {
				t.Fatalf("tier %s is required (GPUMST_TEST_REQUIRE) but does not open: %v", tier, err)
			}
		}
		t.Skipf("tier %s does not open on this machine: %v", tier, err)
	}
	if err != nil {
		t.Fatalf("opening tier %s: %v", tier, err)
	}
	t.Cleanup(func() { _ = ctx.Close() })
	return ctx
}

// edgeList is a test graph: edge i joins u[i] and v[i] with weight w[i].
type edgeList[W gpumst.Number] struct {
	n    int
	u, v []uint32
	w    []W
}

// randomGraph draws m edges over n vertices (self-loops and parallel edges
// included, as the library accepts them) with weights from draw.
func randomGraph[W gpumst.Number](rng *rand.Rand, n, m int, draw func() W) edgeList[W] {
	g := edgeList[W]{n: n, u: make([]uint32, m), v: make([]uint32, m), w: make([]W, m)}
	for i := range m {
		g.u[i] = uint32(rng.IntN(n))
		g.v[i] = uint32(rng.IntN(n))
		g.w[i] = draw()
	}
	return g
}

// referenceForest is Kruskal under the library's order: (weight, edge id)
// ascending, or (weight descending, edge id ascending) with maximum. It
// returns the forest's edge ids in ascending order.
func referenceForest[W gpumst.Number](g edgeList[W], maximum bool) []int {
	order := make([]int, len(g.u))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if maximum {
			return cmp.Compare(g.w[b], g.w[a])
		}
		return cmp.Compare(g.w[a], g.w[b])
	})
	parent := make([]int, g.n)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	var forest []int
	for _, e := range order {
		a, b := find(int(g.u[e])), find(int(g.v[e]))
		if a != b {
			parent[a] = b
			forest = append(forest, e)
		}
	}
	slices.Sort(forest)
	return forest
}

// referenceLabels gives each vertex the smallest vertex id of its component.
func referenceLabels[W gpumst.Number](g edgeList[W]) []uint32 {
	parent := make([]int, g.n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		if parent[x] != x {
			parent[x] = find(parent[x])
		}
		return parent[x]
	}
	for i := range g.u {
		a, b := find(int(g.u[i])), find(int(g.v[i]))
		// Keep the smaller id as the root, so the root is the label.
		if a < b {
			parent[b] = a
		} else if b < a {
			parent[a] = b
		}
	}
	labels := make([]uint32, g.n)
	for i := range labels {
		labels[i] = uint32(find(i))
	}
	return labels
}

// components counts the connected components of g, isolated vertices included.
func components[W gpumst.Number](g edgeList[W]) int {
	count := 0
	for i, l := range referenceLabels(g) {
		if int(l) == i {
			count++
		}
	}
	return count
}

// drawers give random weights of each type with many ties (small ranges) and
// extremes (so sums wrap the types and totals exceed 2^53).
func drawInt32(rng *rand.Rand) func() int32 {
	return func() int32 { return int32(rng.IntN(20)) - 10 }
}
func drawUint32(rng *rand.Rand) func() uint32 {
	return func() uint32 { return uint32(rng.IntN(8)) + math.MaxUint32 - 8 }
}
func drawInt64(rng *rand.Rand) func() int64 {
	return func() int64 { return int64(rng.IntN(16)) - 8 + math.MaxInt64/1024 }
}
func drawUint64(rng *rand.Rand) func() uint64 {
	return func() uint64 { return uint64(rng.IntN(16)) + math.MaxUint64 - 16 }
}
func drawFloat32(rng *rand.Rand) func() float32 {
	return func() float32 { return float32(rng.IntN(50)) / 4 }
}
func drawFloat64(rng *rand.Rand) func() float64 {
	return func() float64 { return rng.Float64() }
}
