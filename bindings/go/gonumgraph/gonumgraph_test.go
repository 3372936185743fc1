package gonumgraph_test

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/iterator"
	"gonum.org/v1/gonum/graph/path"
	"gonum.org/v1/gonum/graph/simple"

	"gpumst.dev/gpumst"
	"gpumst.dev/gpumst/gonumgraph"
)

func openCPU(t *testing.T) *gpumst.Context {
	t.Helper()
	ctx, err := gpumst.NewContext(gpumst.Options{Tier: gpumst.TierCPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ctx.Close() })
	return ctx
}

func newDst() *simple.WeightedUndirectedGraph {
	return simple.NewWeightedUndirectedGraph(0, math.Inf(1))
}

// randomGonum builds a simple graph over the given node IDs with m random
// edges whose weights come from draw.
func randomGonum(rng *rand.Rand, ids []int64, m int, draw func() float64) *simple.WeightedUndirectedGraph {
	g := newDst()
	for _, id := range ids {
		g.AddNode(simple.Node(id))
	}
	for range m {
		x, y := ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]
		if x == y {
			continue // a simple graph holds no self-loops
		}
		g.SetWeightedEdge(simple.WeightedEdge{F: simple.Node(x), T: simple.Node(y), W: draw()})
	}
	return g
}

// edgeSet lists dst's edges as sorted (low ID, high ID, weight) triples.
type triple struct {
	x, y int64
	w    float64
}

func edgeSet(g *simple.WeightedUndirectedGraph) []triple {
	var out []triple
	for _, e := range graph.WeightedEdgesOf(g.WeightedEdges()) {
		x, y := e.From().ID(), e.To().ID()
		out = append(out, triple{min(x, y), max(x, y), e.Weight()})
	}
	slices.SortFunc(out, func(a, b triple) int {
		return cmp.Or(cmp.Compare(a.x, b.x), cmp.Compare(a.y, b.y))
	})
	return out
}

func nodeIDs(g graph.Graph) []int64 {
	var ids []int64
	for it := g.Nodes(); it.Next(); {
		ids = append(ids, it.Node().ID())
	}
	slices.Sort(ids)
	return ids
}

// idLayouts are node ID sets that exercise each way of numbering nodes:
// contiguous, sparse in a small range (a table) and spread out (a map).
func idLayouts(rng *rand.Rand, n int) map[string][]int64 {
	contiguous := make([]int64, n)
	table := make([]int64, n)
	spread := make([]int64, n)
	for i := range n {
		contiguous[i] = int64(i) + 100
		table[i] = int64(3*i) - 50
		spread[i] = int64(rng.Uint64() >> 1)
	}
	return map[string][]int64{"contiguous": contiguous, "table": table, "spread": spread}
}

// With distinct weights the minimum spanning forest is unique, so the edge
// sets must equal path.Kruskal's (and path.Prim's, on connected graphs).
func TestDistinctWeightsMatchKruskal(t *testing.T) {
	ctx := openCPU(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for name, ids := range idLayouts(rng, 300) {
		for _, m := range []int{0, 200, 299, 1500} {
			g := randomGonum(rng, ids, m, func() float64 { return rng.Float64()*1000 - 500 })
			want := newDst()
			wantTotal := path.Kruskal(want, g)
			got := newDst()
			total, err := gonumgraph.MinimumSpanningForest(ctx, got, g)
			if err != nil {
				t.Fatalf("%s m=%d: %v", name, m, err)
			}
			if !slices.Equal(edgeSet(got), edgeSet(want)) {
				t.Fatalf("%s m=%d: forest differs from path.Kruskal's (%d vs %d edges)", name, m, got.Edges().Len(), want.Edges().Len())
			}
			if !slices.Equal(nodeIDs(got), nodeIDs(g)) {
				t.Fatalf("%s m=%d: dst does not hold exactly g's nodes", name, m)
			}
			if math.Abs(total-wantTotal) > 1e-9*math.Max(1, math.Abs(wantTotal)) {
				t.Fatalf("%s m=%d: total %v, path.Kruskal %v", name, m, total, wantTotal)
			}
		}
	}
}

func TestDistinctWeightsMatchPrimOnConnectedGraphs(t *testing.T) {
	ctx := openCPU(t)
	rng := rand.New(rand.NewPCG(3, 4))
	ids := idLayouts(rng, 200)["contiguous"]
	g := randomGonum(rng, ids, 0, nil)
	// A path through all nodes keeps it connected; random chords are added.
	for i := 1; i < len(ids); i++ {
		g.SetWeightedEdge(simple.WeightedEdge{F: simple.Node(ids[i-1]), T: simple.Node(ids[i]), W: rng.Float64()})
	}
	for range 600 {
		x, y := ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]
		if x != y {
			g.SetWeightedEdge(simple.WeightedEdge{F: simple.Node(x), T: simple.Node(y), W: rng.Float64()})
		}
	}
	want := newDst()
	path.Prim(want, g)
	got := newDst()
	if _, err := gonumgraph.MinimumSpanningForest(ctx, got, g); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(edgeSet(got), edgeSet(want)) {
		t.Fatal("forest differs from path.Prim's on a connected graph with distinct weights")
	}
}

// With ties several forests are minimal: the total equals Kruskal's, and the
// forest is the one the documented numbering picks, computed here by a
// straightforward Kruskal over edges sorted by (weight, low ID, high ID).
// Whole weights in [0, 2^32) take the library's uint32 path, others the
// float64 one; ties must fall the same way on both.
func TestTiesFollowTheDocumentedNumbering(t *testing.T) {
	ctx := openCPU(t)
	rng := rand.New(rand.NewPCG(5, 6))
	draws := map[string]func() float64{
		"whole":      func() float64 { return float64(rng.IntN(4)) },
		"fractional": func() float64 { return float64(rng.IntN(4))/2 - 0.5 },
		"beyond u32": func() float64 { return float64(rng.IntN(4)) * (1 << 33) },
	}
	for layout, ids := range idLayouts(rng, 400) {
		for weights, draw := range draws {
			name := layout + ", " + weights + " weights"
			g := randomGonum(rng, ids, 2000, draw)
			want := newDst()
			wantTotal := path.Kruskal(want, g)
			got := newDst()
			total, err := gonumgraph.MinimumSpanningForest(ctx, got, g)
			if err != nil {
				t.Fatal(err)
			}
			if total != wantTotal {
				t.Fatalf("%s: total %v, path.Kruskal %v", name, total, wantTotal)
			}
			if !slices.Equal(edgeSet(got), documentedForest(g, false)) {
				t.Fatalf("%s: the forest is not the one the (weight, low ID, high ID) order picks", name)
			}
			maxDst := newDst()
			if _, err := gonumgraph.MinimumSpanningForest(ctx, maxDst, g, gpumst.Maximum()); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(edgeSet(maxDst), documentedForest(g, true)) {
				t.Fatalf("%s: the maximum forest is not the one the (-weight, low ID, high ID) order picks", name)
			}
		}
	}
}

// A graph of 200K edges is numbered in chunks on several goroutines (at least
// 64K edges each); the forest must still be the documented one.
func TestLargeGraphsAreNumberedInChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds a 200K-edge gonum graph")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(5))
	ctx := openCPU(t)
	rng := rand.New(rand.NewPCG(7, 8))
	ids := idLayouts(rng, 30_000)["spread"]
	for weights, draw := range map[string]func() float64{
		"whole":      func() float64 { return float64(rng.IntN(8)) },
		"fractional": func() float64 { return float64(rng.IntN(8)) / 4 },
	} {
		g := randomGonum(rng, ids, 200_000, draw)
		got := newDst()
		if _, err := gonumgraph.MinimumSpanningForest(ctx, got, g); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(edgeSet(got), documentedForest(g, false)) {
			t.Fatalf("%s weights: the forest is not the one the (weight, low ID, high ID) order picks", weights)
		}
		// Listed twice, each edge's first copy is numbered first, so wins.
		twice := listedTwice{g}
		got = newDst()
		if _, err := gonumgraph.MinimumSpanningForest(ctx, got, twice); err != nil {
			t.Fatal(err)
		}
		for _, e := range graph.WeightedEdgesOf(got.WeightedEdges()) {
			if _, second := e.(secondCopy); second {
				t.Fatalf("%s weights: the second listing of %d-%d was chosen over the first", weights, e.From().ID(), e.To().ID())
			}
		}
	}
}

// listedTwice lists each edge of a simple graph twice: as itself, then, after
// all of them, as a secondCopy.
type listedTwice struct {
	*simple.WeightedUndirectedGraph
}

type secondCopy struct{ simple.WeightedEdge }

func (g listedTwice) WeightedEdges() graph.WeightedEdges {
	edges := graph.WeightedEdgesOf(g.WeightedUndirectedGraph.WeightedEdges())
	for _, e := range edges {
		edges = append(edges, secondCopy{e.(simple.WeightedEdge)})
	}
	return iterator.NewOrderedWeightedEdges(edges)
}

func documentedForest(g *simple.WeightedUndirectedGraph, maximum bool) []triple {
	edges := edgeSet(g) // sorted by (low ID, high ID): the package's numbering
	slices.SortStableFunc(edges, func(a, b triple) int {
		if maximum {
			return cmp.Compare(b.w, a.w)
		}
		return cmp.Compare(a.w, b.w)
	})
	parent := map[int64]int64{}
	var find func(int64) int64
	find = func(x int64) int64 {
		p, ok := parent[x]
		if !ok || p == x {
			return x
		}
		r := find(p)
		parent[x] = r
		return r
	}
	var forest []triple
	for _, e := range edges {
		a, b := find(e.x), find(e.y)
		if a != b {
			parent[a] = b
			forest = append(forest, e)
		}
	}
	slices.SortFunc(forest, func(a, b triple) int {
		return cmp.Or(cmp.Compare(a.x, b.x), cmp.Compare(a.y, b.y))
	})
	return forest
}

// adjacencyOnly hides WeightedEdges, so the adaptor must walk From and Weight.
type adjacencyOnly struct {
	graph.WeightedUndirected
}

func TestGraphsWithoutAnEdgeListing(t *testing.T) {
	ctx := openCPU(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for name, ids := range idLayouts(rng, 300) {
		g := randomGonum(rng, ids, 900, func() float64 { return float64(rng.IntN(5)) })
		viaEdges, viaAdjacency := newDst(), newDst()
		if _, err := gonumgraph.MinimumSpanningForest(ctx, viaEdges, g); err != nil {
			t.Fatal(err)
		}
		if _, err := gonumgraph.MinimumSpanningForest(ctx, viaAdjacency, adjacencyOnly{g}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(edgeSet(viaEdges), edgeSet(viaAdjacency)) {
			t.Fatalf("%s: walking adjacency gives another forest than the edge listing (ties must not depend on it)", name)
		}
	}
}

func TestErrorsLeaveDstWithoutEdges(t *testing.T) {
	ctx := openCPU(t)
	g := newDst()
	g.SetWeightedEdge(simple.WeightedEdge{F: simple.Node(1), T: simple.Node(2), W: 1})
	g.SetWeightedEdge(simple.WeightedEdge{F: simple.Node(2), T: simple.Node(3), W: math.NaN()})
	dst := newDst()
	_, err := gonumgraph.MinimumSpanningForest(ctx, dst, g)
	if !errors.Is(err, gpumst.ErrInvalidGraph) || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("a NaN weight gave %v, want ErrInvalidGraph naming it", err)
	}
	if dst.Edges().Len() != 0 {
		t.Fatalf("a failed call added %d edges to dst", dst.Edges().Len())
	}
	dst = newDst()
	_, err = gonumgraph.MinimumSpanningForest(ctx, dst, adjacencyOnly{g})
	if !errors.Is(err, gpumst.ErrInvalidGraph) || !strings.Contains(err.Error(), "2 and 3") {
		t.Fatalf("a NaN weight (adjacency walk) gave %v, want ErrInvalidGraph naming nodes 2 and 3", err)
	}
	if dst.Edges().Len() != 0 {
		t.Fatalf("a failed call added %d edges to dst", dst.Edges().Len())
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	g.SetWeightedEdge(simple.WeightedEdge{F: simple.Node(2), T: simple.Node(3), W: 2})
	dst = newDst()
	if _, err := gonumgraph.MinimumSpanningForest(ctx, dst, g); !errors.Is(err, gpumst.ErrClosed) {
		t.Fatalf("a closed context gave %v, want ErrClosed", err)
	}
	if dst.Edges().Len() != 0 {
		t.Fatalf("a failed call added %d edges to dst", dst.Edges().Len())
	}
}

// A dst that already holds one of g's nodes panics in AddNode, in the
// caller's goroutine (where path.Kruskal panics too), not on another.
func TestNodeCollisionPanicsInTheCaller(t *testing.T) {
	ctx := openCPU(t)
	g := newDst()
	g.SetWeightedEdge(simple.WeightedEdge{F: simple.Node(1), T: simple.Node(2), W: 1})
	dst := newDst()
	dst.AddNode(simple.Node(2))
	defer func() {
		p := recover()
		if p == nil || !strings.Contains(fmt.Sprint(p), "collision") {
			t.Fatalf("recovered %v, want gonum's node collision panic", p)
		}
	}()
	_, _ = gonumgraph.MinimumSpanningForest(ctx, dst, g)
	t.Fatal("no panic for a node dst already held")
}

// Kruskal's own documentation example, swapped for gonumgraph.
func ExampleMinimumSpanningForest() {
	ctx, err := gpumst.NewContext(gpumst.Options{})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()

	g := simple.NewWeightedUndirectedGraph(0, math.Inf(1))
	for _, e := range []simple.WeightedEdge{
		{F: simple.Node(0), T: simple.Node(1), W: 4},
		{F: simple.Node(1), T: simple.Node(2), W: 1},
		{F: simple.Node(2), T: simple.Node(0), W: 2},
		{F: simple.Node(2), T: simple.Node(3), W: 7},
	} {
		g.SetWeightedEdge(e)
	}
	dst := simple.NewWeightedUndirectedGraph(0, math.Inf(1))
	// Instead of: total := path.Kruskal(dst, g)
	total, err := gonumgraph.MinimumSpanningForest(ctx, dst, g)
	if err != nil {
		panic(err)
	}
	fmt.Println("total:", total, "edges:", dst.Edges().Len())
	// Output: total: 10 edges: 3
}
