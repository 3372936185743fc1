package gpumst_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gpumst.dev/gpumst"
)

var algorithms = []gpumst.Algorithm{
	gpumst.AlgorithmAuto, gpumst.AlgorithmBoruvka, gpumst.AlgorithmPrim,
	gpumst.AlgorithmStrut, gpumst.AlgorithmKruskal,
}

// checkForest compares f with the reference forest of g, edge for edge, and
// its counts and exact total.
func checkForest[W gpumst.Number](t *testing.T, what string, g edgeList[W], f *gpumst.Forest, maximum bool, tier gpumst.Tier) {
	t.Helper()
	want := referenceForest(g, maximum)
	if !slices.Equal(f.Edges, want) {
		t.Fatalf("%s: forest has %d edges, the reference %d; first difference at %d", what, len(f.Edges), len(want), firstDifference(f.Edges, want))
	}
	if f.NumVertices != g.n {
		t.Errorf("%s: NumVertices = %d, want %d", what, f.NumVertices, g.n)
	}
	if c := components(g); f.NumComponents != c {
		t.Errorf("%s: NumComponents = %d, want %d", what, f.NumComponents, c)
	}
	if f.Tier != tier {
		t.Errorf("%s: computed on tier %s, the context's is %s", what, f.Tier, tier)
	}
	var isFloat bool
	switch any(g.w).(type) {
	case []float32, []float64:
		isFloat = true
	}
	if f.Total.IsFloat != isFloat {
		t.Fatalf("%s: Total.IsFloat = %v, want %v", what, f.Total.IsFloat, isFloat)
	}
	if isFloat {
		sum := 0.0
		for _, e := range want {
			sum += float64(g.w[e])
		}
		if f.Total.Float != sum || f.Total.Int != nil {
			t.Errorf("%s: total %v (Int %v), want %v summed in edge-id order", what, f.Total.Float, f.Total.Int, sum)
		}
		return
	}
	sum := new(big.Int)
	for _, e := range want {
		sum.Add(sum, exactInt(g.w[e]))
	}
	if f.Total.Int == nil || f.Total.Int.Cmp(sum) != 0 {
		t.Errorf("%s: total %v, want exactly %v", what, f.Total.Int, sum)
	}
	if f.Total.String() != sum.String() {
		t.Errorf("%s: Total.String() = %q, want %q", what, f.Total.String(), sum.String())
	}
	if approx, _ := new(big.Float).SetInt(sum).Float64(); f.Total.Float != approx {
		t.Errorf("%s: Total.Float = %v, want %v (the exact total rounded)", what, f.Total.Float, approx)
	}
}

func exactInt[W gpumst.Number](w W) *big.Int {
	switch x := any(w).(type) {
	case int32:
		return big.NewInt(int64(x))
	case int64:
		return big.NewInt(x)
	case uint32:
		return new(big.Int).SetUint64(uint64(x))
	case uint64:
		return new(big.Int).SetUint64(x)
	}
	panic(fmt.Sprintf("not an integer weight: %T", w))
}

func firstDifference(a, b []int) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// conformance checks every algorithm, the maximum forest, labels and the CSR
// form of random graphs with weights of type W against the reference.
func conformance[W gpumst.Number](t *testing.T, ctx *gpumst.Context, draw func(*rand.Rand) func() W) {
	tier, err := ctx.Tier()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	shapes := []struct{ n, m int }{{1, 0}, {2, 1}, {10, 5}, {50, 200}, {1000, 3000}, {3000, 2500}}
	for _, s := range shapes {
		g := randomGraph(rng, s.n, s.m, draw(rng))
		for _, alg := range algorithms {
			what := fmt.Sprintf("n=%d m=%d %s", s.n, s.m, alg)
			f, err := gpumst.MinimumSpanningForest(ctx, g.n, g.u, g.v, g.w, gpumst.WithAlgorithm(alg))
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			checkForest(t, what, g, f, false, tier)
			if f.Labels != nil {
				t.Errorf("%s: labels without WithLabels", what)
			}
		}
		what := fmt.Sprintf("n=%d m=%d maximum", s.n, s.m)
		f, err := gpumst.MinimumSpanningForest(ctx, g.n, g.u, g.v, g.w, gpumst.Maximum(), gpumst.WithLabels())
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		checkForest(t, what, g, f, true, tier)
		if want := referenceLabels(g); !slices.Equal(f.Labels, want) {
			t.Errorf("%s: labels differ from the reference", what)
		}
		checkCSR(t, ctx, g)
	}
}

func TestMinimumSpanningForestInt32(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { conformance(t, ctx, drawInt32) })
}
func TestMinimumSpanningForestUint32(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { conformance(t, ctx, drawUint32) })
}
func TestMinimumSpanningForestInt64(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { conformance(t, ctx, drawInt64) })
}
func TestMinimumSpanningForestUint64(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { conformance(t, ctx, drawUint64) })
}
func TestMinimumSpanningForestFloat32(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { conformance(t, ctx, drawFloat32) })
}
func TestMinimumSpanningForestFloat64(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) { conformance(t, ctx, drawFloat64) })
}

// A type defined on one of the six is accepted (Number admits ~int64 etc.).
type cost int64

func TestDefinedWeightType(t *testing.T) {
	ctx := openTier(t, gpumst.TierCPU)
	g := edgeList[cost]{n: 3, u: []uint32{0, 1, 0}, v: []uint32{1, 2, 2}, w: []cost{5, 1, 2}}
	f, err := gpumst.MinimumSpanningForest(ctx, g.n, g.u, g.v, g.w)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Edges, []int{1, 2}) || f.Total.Int.Int64() != 3 {
		t.Fatalf("forest %v total %v, want [1 2] and 3", f.Edges, f.Total)
	}
}

// checkCSR builds the symmetric CSR of g (self-loops dropped, each edge listed
// both ways) and checks that its forest is g's, mapped through CSR positions.
func checkCSR[W gpumst.Number](t *testing.T, ctx *gpumst.Context, g edgeList[W]) {
	t.Helper()
	offsets := make([]uint64, g.n+1)
	for i := range g.u {
		if g.u[i] != g.v[i] {
			offsets[g.u[i]+1]++
			offsets[g.v[i]+1]++
		}
	}
	for i := range g.n {
		offsets[i+1] += offsets[i]
	}
	targets := make([]uint32, offsets[g.n])
	weights := make([]W, offsets[g.n])
	next := slices.Clone(offsets[:g.n])
	// The edge-list id of the u < v entry at each CSR position (-1 elsewhere).
	idAt := make([]int, offsets[g.n])
	for i := range g.u {
		a, b := g.u[i], g.v[i]
		if a == b {
			continue
		}
		for _, end := range [2][2]uint32{{a, b}, {b, a}} {
			p := next[end[0]]
			next[end[0]]++
			targets[p], weights[p] = end[1], g.w[i]
			idAt[p] = -1
			if end[0] < end[1] {
				idAt[p] = i
			}
		}
	}
	// The CSR's own edge order is by position; the reference over it is the
	// edge list in position order.
	var csrGraph edgeList[W]
	csrGraph.n = g.n
	var positions []int
	for p, id := range idAt {
		if id >= 0 {
			csrGraph.u = append(csrGraph.u, g.u[id])
			csrGraph.v = append(csrGraph.v, g.v[id])
			csrGraph.w = append(csrGraph.w, g.w[id])
			positions = append(positions, p)
		}
	}
	f, err := gpumst.MinimumSpanningForestCSR(ctx, offsets, targets, weights)
	if err != nil {
		t.Fatalf("CSR: %v", err)
	}
	want := referenceForest(csrGraph, false)
	for i, k := range want {
		want[i] = positions[k]
	}
	if !slices.Equal(f.Edges, want) {
		t.Fatalf("CSR forest (%d edges) differs from the reference (%d) at %d", len(f.Edges), len(want), firstDifference(f.Edges, want))
	}
	unweighted, err := gpumst.MinimumSpanningForestCSRUnweighted(ctx, offsets, targets)
	if err != nil {
		t.Fatalf("CSR unweighted: %v", err)
	}
	if len(unweighted.Edges) != len(want) || unweighted.Total.Int.Int64() != int64(len(want)) {
		t.Fatalf("CSR unweighted: %d edges weighing %v, want %d", len(unweighted.Edges), unweighted.Total, len(want))
	}
}

func TestUnweightedPrefersLowerIDs(t *testing.T) {
	forEachTier(t, func(t *testing.T, ctx *gpumst.Context) {
		rng := rand.New(rand.NewPCG(3, 4))
		g := randomGraph(rng, 500, 2000, func() uint32 { return 1 })
		f, err := gpumst.MinimumSpanningForestUnweighted(ctx, g.n, g.u, g.v)
		if err != nil {
			t.Fatal(err)
		}
		// With equal weights the order is by edge id alone.
		if want := referenceForest(g, false); !slices.Equal(f.Edges, want) {
			t.Fatalf("unweighted forest differs from the lowest-id spanning forest")
		}
		if f.Total.IsFloat || f.Total.Int.Int64() != int64(len(f.Edges)) {
			t.Fatalf("unweighted total %v, want the edge count %d", f.Total, len(f.Edges))
		}
	})
}

func TestMinimumSpanningForestErrors(t *testing.T) {
	ctx := openTier(t, gpumst.TierCPU)
	u, v := []uint32{0, 1, 2}, []uint32{1, 2, 0}
	cases := []struct {
		name    string
		call    func() error
		want    error
		message string
	}{
		{"vertex out of range", func() error {
			_, err := gpumst.MinimumSpanningForest(ctx, 3, u, []uint32{1, 7, 0}, []int32{1, 2, 3})
			return err
		}, gpumst.ErrInvalidGraph, "edge 1: v = 7 is out of range for 3 vertices"},
		{"NaN weight", func() error {
			_, err := gpumst.MinimumSpanningForest(ctx, 3, u, v, []float64{1, 2, math.NaN()})
			return err
		}, gpumst.ErrInvalidGraph, "edge 2: weight is NaN"},
		{"weights length", func() error {
			_, err := gpumst.MinimumSpanningForest(ctx, 3, u, v, []float32{1, 2})
			return err
		}, gpumst.ErrInvalidArgument, "3 edges but 2 weights"},
		{"v length", func() error {
			_, err := gpumst.MinimumSpanningForestUnweighted(ctx, 3, u, v[:2])
			return err
		}, gpumst.ErrInvalidArgument, "u has 3 entries but v has 2"},
		{"negative vertex count", func() error {
			_, err := gpumst.MinimumSpanningForestUnweighted(ctx, -1, nil, nil)
			return err
		}, gpumst.ErrInvalidArgument, "-1 vertices"},
		{"unknown algorithm (checked by the library)", func() error {
			_, err := gpumst.MinimumSpanningForest(ctx, 3, u, v, []int64{1, 2, 3}, gpumst.WithAlgorithm(99))
			return err
		}, gpumst.ErrInvalidArgument, "99"},
		{"CSR target out of range", func() error {
			_, err := gpumst.MinimumSpanningForestCSR(ctx, []uint64{0, 1, 2}, []uint32{1, 5}, []uint64{4, 4})
			return err
		}, gpumst.ErrInvalidGraph, "targets[1] = 5"},
		{"CSR offsets not monotone", func() error {
			_, err := gpumst.MinimumSpanningForestCSRUnweighted(ctx, []uint64{0, 2, 1, 2}, []uint32{1, 2})
			return err
		}, gpumst.ErrInvalidGraph, "offsets[2] = 1"},
		{"CSR not symmetric (checked by the library)", func() error {
			_, err := gpumst.MinimumSpanningForestCSR(ctx, []uint64{0, 1, 1}, []uint32{1}, []int32{3})
			return err
		}, gpumst.ErrInvalidGraph, ""},
		{"CSR empty offsets", func() error {
			_, err := gpumst.MinimumSpanningForestCSRUnweighted(ctx, nil, nil)
			return err
		}, gpumst.ErrInvalidArgument, "offsets is empty"},
	}
	for _, c := range cases {
		err := c.call()
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want one matching %v", c.name, err, c.want)
			continue
		}
		var ge *gpumst.Error
		if !errors.As(err, &ge) || ge.Message == "" || !strings.Contains(err.Error(), c.message) {
			t.Errorf("%s: error %q lacks a message containing %q", c.name, err, c.message)
		}
		if errors.Is(err, gpumst.ErrClosed) {
			t.Errorf("%s: error %v matches ErrClosed", c.name, err)
		}
	}
}

func TestForcedTierThatDoesNotOpen(t *testing.T) {
	for _, tier := range []gpumst.Tier{gpumst.TierCUDA, gpumst.TierOpenCL} {
		ctx, err := gpumst.NewContext(gpumst.Options{Tier: tier})
		if err == nil {
			got, _ := ctx.Tier()
			_ = ctx.Close()
			if got != tier {
				t.Fatalf("forcing %s opened a context on %s", tier, got)
			}
			t.Logf("tier %s opens on this machine; its failure path is not tested here", tier)
			continue
		}
		if !errors.Is(err, gpumst.ErrBackendUnavailable) || !strings.Contains(err.Error(), ": ") {
			t.Fatalf("forcing %s: %v, want ErrBackendUnavailable with the reason", tier, err)
		}
	}
	if _, err := gpumst.NewContext(gpumst.Options{Tier: 42}); !errors.Is(err, gpumst.ErrInvalidArgument) {
		t.Fatalf("tier 42: %v, want ErrInvalidArgument", err)
	}
	if _, err := gpumst.NewContext(gpumst.Options{Threads: -2}); !errors.Is(err, gpumst.ErrInvalidArgument) {
		t.Fatalf("threads -2: %v, want ErrInvalidArgument", err)
	}
}
