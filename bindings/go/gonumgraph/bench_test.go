package gonumgraph_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/path"
	"gonum.org/v1/gonum/graph/simple"

	"gpumst.dev/gpumst"
	"gpumst.dev/gpumst/gonumgraph"
)

// benchGraph is one random graph in both forms: a gonum graph and the slices
// it was built from.
type benchGraph struct {
	g    *simple.WeightedUndirectedGraph
	n    int
	u, v []uint32
	w    []float64
	w32  []uint32
}

// randomBenchGraph builds a graph with n nodes and m distinct random edges
// (no self-loops, no parallel edges, which a simple graph cannot hold) with
// integer weights in [1, 1e6], from a fixed seed.
func randomBenchGraph(n, m int, seed uint64) *benchGraph {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	bg := &benchGraph{g: simple.NewWeightedUndirectedGraph(0, math.Inf(1)), n: n}
	for i := range n {
		bg.g.AddNode(simple.Node(i))
	}
	seen := make(map[[2]uint32]struct{}, m)
	for len(bg.u) < m {
		x, y := uint32(rng.IntN(n)), uint32(rng.IntN(n))
		if x == y {
			continue
		}
		key := [2]uint32{min(x, y), max(x, y)}
		if _, dup := seen[key]; dup {
			continue
		}
		seen[key] = struct{}{}
		w := uint32(1 + rng.IntN(1_000_000))
		bg.u = append(bg.u, x)
		bg.v = append(bg.v, y)
		bg.w = append(bg.w, float64(w))
		bg.w32 = append(bg.w32, w)
		bg.g.SetWeightedEdge(simple.WeightedEdge{F: simple.Node(x), T: simple.Node(y), W: float64(w)})
	}
	return bg
}

var (
	bench1MOnce sync.Once
	bench1M     *benchGraph
)

// The 1M-edge graph is built on first use, so only a -bench run pays for it.
func graph1M() *benchGraph {
	bench1MOnce.Do(func() { bench1M = randomBenchGraph(250_000, 1_000_000, 1) })
	return bench1M
}

func BenchmarkMSF1M(b *testing.B) {
	benchmarkMSF(b, graph1M)
}

func BenchmarkMSF40K(b *testing.B) {
	var once sync.Once
	var bg *benchGraph
	benchmarkMSF(b, func() *benchGraph {
		once.Do(func() { bg = randomBenchGraph(10_000, 40_000, 2) })
		return bg
	})
}

func benchmarkMSF(b *testing.B, get func() *benchGraph) {
	ctx, err := gpumst.NewContext(gpumst.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	newDst := func() *simple.WeightedUndirectedGraph {
		return simple.NewWeightedUndirectedGraph(0, math.Inf(1))
	}
	var want float64
	check := func(b *testing.B, got float64) {
		if want == 0 {
			want = path.Kruskal(newDst(), get().g)
		}
		if got != want {
			b.Fatalf("total weight %v, want %v (path.Kruskal)", got, want)
		}
	}
	b.Run("gonum-Kruskal", func(b *testing.B) {
		bg := get()
		var w float64
		for b.Loop() {
			w = path.Kruskal(newDst(), bg.g)
		}
		check(b, w)
	})
	b.Run("gonum-Prim", func(b *testing.B) {
		bg := get()
		var w float64
		for b.Loop() {
			w = path.Prim(newDst(), bg.g)
		}
		check(b, w)
	})
	// From the gonum graph to a gonum graph: conversion, the library call and
	// writing dst all timed, as for path.Kruskal.
	b.Run("gpumst-gonum", func(b *testing.B) {
		bg := get()
		var w float64
		for b.Loop() {
			var err error
			if w, err = gonumgraph.MinimumSpanningForest(ctx, newDst(), bg.g); err != nil {
				b.Fatal(err)
			}
		}
		check(b, w)
	})
	// What any adaptor must do through gonum's API, with the forest known in
	// advance: list g's edges (From and Weight per node are slower) while adding
	// g's nodes to dst, then write the forest's edges into dst. No computation:
	// path.Kruskal's time over this one bounds the ratio any adaptor can reach.
	b.Run("gonum-api-floor", func(b *testing.B) {
		bg := get()
		forest := forestEdges(b, bg)
		var w float64
		for b.Loop() {
			dst := newDst()
			added := make(chan struct{})
			go func() {
				nodes := bg.g.Nodes()
				for nodes.Next() {
					dst.AddNode(nodes.Node())
				}
				close(added)
			}()
			listedEdges = graph.WeightedEdgesOf(bg.g.WeightedEdges())
			<-added
			w = 0
			for _, e := range forest {
				dst.SetWeightedEdge(e)
				w += e.Weight()
			}
		}
		check(b, w)
	})
	// From slices the caller already has (float64 and uint32 weights).
	b.Run("gpumst-slices-f64", func(b *testing.B) {
		bg := get()
		var f *gpumst.Forest
		for b.Loop() {
			var err error
			if f, err = gpumst.MinimumSpanningForest(ctx, bg.n, bg.u, bg.v, bg.w); err != nil {
				b.Fatal(err)
			}
		}
		check(b, f.Total.Float)
	})
	b.Run("gpumst-slices-u32", func(b *testing.B) {
		bg := get()
		var f *gpumst.Forest
		for b.Loop() {
			var err error
			if f, err = gpumst.MinimumSpanningForest(ctx, bg.n, bg.u, bg.v, bg.w32); err != nil {
				b.Fatal(err)
			}
		}
		check(b, f.Total.Float)
	})
}

// listedEdges keeps the floor's edge listing alive, as an adaptor would use it.
var listedEdges []graph.WeightedEdge

// forestEdges returns the edges of g's minimum spanning forest, as g stores
// them.
func forestEdges(b *testing.B, bg *benchGraph) []graph.WeightedEdge {
	dst := simple.NewWeightedUndirectedGraph(0, math.Inf(1))
	path.Kruskal(dst, bg.g)
	forest := graph.WeightedEdgesOf(dst.WeightedEdges())
	for i, e := range forest {
		forest[i] = bg.g.WeightedEdge(e.From().ID(), e.To().ID())
	}
	if len(forest) == 0 {
		b.Fatal("the forest has no edges")
	}
	return forest
}
