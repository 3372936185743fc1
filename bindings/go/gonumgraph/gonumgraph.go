// Package gonumgraph computes minimum spanning forests of gonum graphs
// (gonum.org/v1/gonum/graph) with gpumst, as a drop-in for gonum's
// path.Kruskal and path.Prim.
//
// [MinimumSpanningForest] reads a graph.WeightedUndirected, numbers its nodes
// and edges, runs gpumst.MinimumSpanningForest on the resulting edge list and
// writes the forest into a destination the way path.Kruskal does: every node
// of g is added to dst, then every forest edge (as g lists it, or as
// g.WeightedEdge(x, y) returns it), and the total weight is returned.
//
// # Edge numbering and ties
//
// gpumst breaks ties between equal weights by edge id: the edge with the lower
// id is preferred (with gpumst.Maximum, too). This package numbers the edges
// of g deterministically, independent of the order in which g enumerates its
// nodes and neighbours:
//
//   - nodes are ranked by ascending ID;
//   - each edge {x, y} is taken once, as the pair with ID(x) < ID(y);
//   - edges are numbered in ascending order of (ID(x), ID(y)).
//
// So of two edges of equal weight, the one whose smaller endpoint ID is lower
// wins, and if those are the same node, the one whose other endpoint ID is
// lower. When all weights are distinct, the forest is unique and is exactly
// the one path.Kruskal and path.Prim return. With ties, several forests are
// minimal: gonum's choice depends on its sort and on map iteration order,
// gpumst's on the numbering above, so the edge sets may differ while the total
// weight is the same.
//
// Self-loops are ignored. Weights are the float64 values of g.Weight; a NaN
// weight is an error matching gpumst.ErrInvalidGraph. When every weight is a
// whole number in [0, 2^32) they are handed to the library as uint32 values,
// which it sorts faster; the order (weight, edge number), and so the forest,
// is the same.
package gonumgraph

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/path"
	"gonum.org/v1/gonum/graph/simple"

	"gpumst.dev/gpumst"
)

// MinimumSpanningForest computes the minimum spanning forest of g with gpumst
// and writes it into dst as path.Kruskal(dst, g) does: every node of g is
// added to dst (so dst must not already hold any of them, or dst.AddNode
// panics, as with Kruskal), then each forest edge as g lists it. It
// returns the forest's total weight. dst is not cleared first; a
// graph.WeightedBuilder such as *simple.WeightedUndirectedGraph is a valid dst.
// opts are passed to gpumst.MinimumSpanningForest (gpumst.Maximum() gives a
// maximum spanning forest).
//
// Unlike path.Kruskal it also returns an error: from the library, for a closed
// context, for a NaN weight, or for a g whose methods contradict each other.
// On error dst holds no forest edge, but may hold g's nodes: they are added
// while the edges are converted and the forest computed, on another goroutine
// (dst must not be g, nor share state with it).
func MinimumSpanningForest(ctx *gpumst.Context, dst path.WeightedBuilder, g graph.WeightedUndirected, opts ...gpumst.Option) (float64, error) {
	// gonum's own graph lists its edges while its nodes are read and ranked:
	// its read methods only read maps, so they are safe to call at once. Other
	// implementations make no such promise and are read in turn.
	var listing chan []graph.WeightedEdge
	if sg, ok := g.(*simple.WeightedUndirectedGraph); ok {
		listing = make(chan []graph.WeightedEdge, 1)
		go func() { listing <- graph.WeightedEdgesOf(sg.WeightedEdges()) }()
	}
	fl, idx, err := readNodes(g)
	if err != nil {
		if listing != nil {
			<-listing
		}
		return 0, err
	}
	// Adding the nodes costs as much as reading the edges; overlap the two. A
	// panic of dst.AddNode (a node dst already has) is raised again here, in
	// the caller's goroutine, where path.Kruskal would raise it.
	added := make(chan any, 1)
	go func() {
		defer func() { added <- recover() }()
		for _, n := range fl.nodes {
			dst.AddNode(n)
		}
	}()
	if listing != nil {
		err = fl.fromEdges(<-listing, idx)
	} else {
		err = fl.readEdges(g, idx)
	}
	var f *gpumst.Forest
	if err == nil {
		if fl.w32 != nil {
			f, err = gpumst.MinimumSpanningForest(ctx, len(fl.nodes), fl.u, fl.v, fl.w32, opts...)
		} else {
			f, err = gpumst.MinimumSpanningForest(ctx, len(fl.nodes), fl.u, fl.v, fl.w, opts...)
		}
	}
	if p := <-added; p != nil {
		panic(p)
	}
	if err != nil {
		return 0, err
	}
	// A listed edge is written as listed: the listing's edge values are g's
	// own (Kruskal looks each up again with g.WeightedEdge, which for a
	// consistent g returns the same edge).
	if fl.edges != nil {
		for _, k := range f.Edges {
			dst.SetWeightedEdge(fl.edges[fl.perm[k]])
		}
		return f.Total.Float, nil
	}
	// Otherwise gather every forest edge before writing any, so that an
	// inconsistent g leaves dst without edges.
	edges := make([]graph.WeightedEdge, len(f.Edges))
	for i, k := range f.Edges {
		x, y := fl.ids[fl.u[k]], fl.ids[fl.v[k]]
		if edges[i] = g.WeightedEdge(x, y); edges[i] == nil {
			return 0, fmt.Errorf("gpumst: gonum graph: From(%d) lists %d but WeightedEdge(%d, %d) is nil: %w", x, y, x, y, gpumst.ErrInvalidGraph)
		}
	}
	for _, e := range edges {
		dst.SetWeightedEdge(e)
	}
	return f.Total.Float, nil
}

// flat is a gonum graph as a gpumst edge list.
type flat struct {
	// nodes holds g's nodes in the order g.Nodes() returned them.
	nodes []graph.Node
	// ids maps a vertex index to its node ID; it is sorted, so vertex i is the
	// node with the i-th smallest ID.
	ids []int64
	// Edge k joins vertices u[k] < v[k] with weight w[k]; edges are in
	// ascending (u, v) order, the numbering of the package documentation.
	u, v []uint32
	w    []float64
	// w32 replaces w (then nil) when every weight is a whole number in
	// [0, 2^32): the library's integer path is faster, and it orders the
	// edges by (weight, id) exactly as the float64 path would.
	w32 []uint32
	// When g lists its edges, edges holds them as listed and edge k is
	// edges[perm[k]]; otherwise both are nil.
	edges []graph.WeightedEdge
	perm  []int
}

// edgeLister is what path.Kruskal requires of a graph beyond
// graph.WeightedUndirected: a listing of its edges, each once.
type edgeLister interface {
	WeightedEdges() graph.WeightedEdges
}

// readNodes lists g's nodes and ranks their IDs.
func readNodes(g graph.WeightedUndirected) (*flat, *indexer, error) {
	fl := &flat{}
	it := g.Nodes()
	if n := it.Len(); n > 0 {
		fl.nodes = make([]graph.Node, 0, n)
	}
	minID, maxID := int64(math.MaxInt64), int64(math.MinInt64)
	for it.Next() {
		n := it.Node()
		id := n.ID()
		minID = min(minID, id)
		maxID = max(maxID, id)
		fl.nodes = append(fl.nodes, n)
	}
	if uint64(len(fl.nodes)) > math.MaxUint32+1 {
		return nil, nil, fmt.Errorf("gpumst: gonum graph: %d nodes, at most 2^32 are supported: %w", len(fl.nodes), gpumst.ErrInvalidArgument)
	}
	idx, err := newIndexer(fl, minID, maxID)
	if err != nil {
		return nil, nil, err
	}
	return fl, idx, nil
}

// readEdges numbers g's edges into the edge list. Reading the edge listing is
// much cheaper than a From and a Weight per node for gonum's own graphs (no
// map lookup per neighbour).
func (fl *flat) readEdges(g graph.WeightedUndirected, idx *indexer) error {
	if lister, ok := g.(edgeLister); ok {
		return fl.fromEdges(graph.WeightedEdgesOf(lister.WeightedEdges()), idx)
	}
	return fl.fromAdjacency(g, idx)
}

// fromEdges numbers the listed edges by a counting sort on the lower endpoint
// and an insertion sort of each bucket on the higher one, chunks of edges on
// all cores.
func (fl *flat) fromEdges(edges []graph.WeightedEdge, idx *indexer) error {
	n := len(fl.nodes)
	lo := make([]uint32, len(edges))
	hi := make([]uint32, len(edges))
	weights := make([]float64, len(edges))
	chunks := chunksOf(len(edges))
	wholes := make([]bool, chunks)
	errs := make([]error, chunks)
	inParallel(chunks, len(edges), func(c, begin, end int) {
		wholes[c], errs[c] = endsOfRange(edges, idx, lo, hi, weights, begin, end)
	})
	// Of several bad edges the first is reported, as a sequential pass would.
	if err := firstNonNil(errs); err != nil {
		return err
	}
	// Each chunk counts its edges per bucket, so that it can place them on its
	// own; a chunk's counters cost as much as its edges' ends, hence at most
	// m/n chunks.
	chunks = max(1, min(chunks, len(edges)/max(n, 1)))
	next := make([][]int, chunks) // next[c][a]: chunk c's next slot in bucket a
	inParallel(chunks, len(edges), func(c, begin, end int) {
		counts := make([]int, n)
		for k := begin; k < end; k++ {
			if a := lo[k]; a != hi[k] {
				counts[a]++
			}
		}
		next[c] = counts
	})
	// Bucket a holds chunk 0's edges, then chunk 1's, ...: listing order, so a
	// listing that repeats an edge numbers the copies in listing order.
	bucketStart := make([]int, n+1)
	kept := 0
	for a := range n {
		bucketStart[a] = kept
		for _, counts := range next {
			count := counts[a]
			counts[a] = kept
			kept += count
		}
	}
	bucketStart[n] = kept
	fl.u = make([]uint32, kept)
	fl.v = make([]uint32, kept)
	fl.perm = make([]int, kept)
	if !slices.Contains(wholes, false) {
		fl.w32 = make([]uint32, kept)
		placeAndSort(fl, lo, hi, weights, next, bucketStart, fl.w32)
	} else {
		fl.w = make([]float64, kept)
		placeAndSort(fl, lo, hi, weights, next, bucketStart, fl.w)
	}
	fl.edges = edges
	return nil
}

// placeAndSort moves each kept edge k to the next free slot of its chunk in
// bucket lo[k], with its weight as a W, then sorts each bucket by the higher
// end.
func placeAndSort[W float64 | uint32](fl *flat, lo, hi []uint32, weights []float64, next [][]int, bucketStart []int, w []W) {
	inParallel(len(next), len(lo), func(c, begin, end int) {
		slot := next[c]
		for k := begin; k < end; k++ {
			a, b := lo[k], hi[k]
			if a == b {
				continue
			}
			p := slot[a]
			slot[a]++
			fl.u[p], fl.v[p], w[p], fl.perm[p] = a, b, W(weights[k]), k
		}
	})
	// Each chunk sorts the buckets that start in its share of the edges.
	n := len(bucketStart) - 1
	inParallel(len(next), len(fl.u), func(_, begin, end int) {
		a, _ := slices.BinarySearch(bucketStart[:n], begin)
		for ; a < n && bucketStart[a] < end; a++ {
			if bucketStart[a] < begin {
				continue // a bucket of equal starts, before this share
			}
			from, to := bucketStart[a], bucketStart[a+1]
			sortBucket(fl.v[from:to], w[from:to], fl.perm[from:to])
		}
	})
}

// chunksOf says in how many chunks to cut m edges: one per core, each of at
// least 64K edges (a goroutine costs a few microseconds).
func chunksOf(m int) int {
	const minChunk = 1 << 16
	return max(1, min(runtime.GOMAXPROCS(0), (m+minChunk-1)/minChunk))
}

// inParallel runs fn on chunk c = [begin, end) of [0, m) for each of the
// chunks, each on its own goroutine, and waits for them.
func inParallel(chunks, m int, fn func(c, begin, end int)) {
	if chunks == 1 {
		fn(0, 0, m)
		return
	}
	var wg sync.WaitGroup
	for c := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(c, c*m/chunks, (c+1)*m/chunks)
		}()
	}
	wg.Wait()
}

func firstNonNil(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// endsOfRange fills lo, hi and weights for edges [begin, end) (lo == hi for a
// self-loop, which is dropped): reading an edge is a cache miss or more,
// whatever its type. It reports whether every kept weight is a whole number
// that fits a uint32.
func endsOfRange(edges []graph.WeightedEdge, idx *indexer, lo, hi []uint32, weights []float64, begin, end int) (whole bool, err error) {
	whole = true
	for k := begin; k < end; k++ {
		xid, yid, w := endsOf(edges[k])
		a, ok := idx.index(xid)
		if !ok {
			return false, notANode(xid)
		}
		b, ok := idx.index(yid)
		if !ok {
			return false, notANode(yid)
		}
		if a == b {
			lo[k], hi[k] = 0, 0
			continue
		}
		if w != w {
			return false, nanWeight(xid, yid)
		}
		lo[k], hi[k], weights[k] = min(a, b), max(a, b), w
		// -0 is left to the float path, which may order it before +0.
		whole = whole && w >= 0 && w <= math.MaxUint32 && w == math.Trunc(w) && !math.Signbit(w)
	}
	return whole, nil
}

// endsOf returns an edge's endpoint IDs and weight. gonum's own edge type is
// read directly: through the interface, From and To box their node, which
// allocates once per call.
func endsOf(e graph.WeightedEdge) (xid, yid int64, w float64) {
	if se, ok := e.(simple.WeightedEdge); ok {
		x, xok := se.F.(simple.Node)
		y, yok := se.T.(simple.Node)
		if xok && yok {
			return int64(x), int64(y), se.W
		}
		return se.F.ID(), se.T.ID(), se.W
	}
	return e.From().ID(), e.To().ID(), e.Weight()
}

// sortBucket sorts a bucket of edges, which share u, by v, stably (so a
// listing that repeats an edge numbers the copies in listing order).
func sortBucket[W float64 | uint32](v []uint32, w []W, perm []int) {
	if len(v) > 32 {
		type entry struct {
			v uint32
			w W
			p int
		}
		es := make([]entry, len(v))
		for i := range es {
			es[i] = entry{v[i], w[i], perm[i]}
		}
		slices.SortStableFunc(es, func(a, b entry) int { return cmp.Compare(a.v, b.v) })
		for i, e := range es {
			v[i], w[i], perm[i] = e.v, e.w, e.p
		}
		return
	}
	for i := 1; i < len(v); i++ {
		for k := i; k > 0 && v[k] < v[k-1]; k-- {
			v[k], v[k-1] = v[k-1], v[k]
			w[k], w[k-1] = w[k-1], w[k]
			perm[k], perm[k-1] = perm[k-1], perm[k]
		}
	}
}

// fromAdjacency enumerates each node's higher-ranked neighbours through From
// and Weight, sorts them by rank and appends them: the edges come out in
// ascending (u, v) order without a global sort.
func (fl *flat) fromAdjacency(g graph.WeightedUndirected, idx *indexer) error {
	type neighbour struct {
		j uint32
		w float64
	}
	var nb []neighbour
	for i, xid := range fl.ids {
		nb = nb[:0]
		adj := g.From(xid)
		for adj.Next() {
			yid := adj.Node().ID()
			j, ok := idx.index(yid)
			if !ok {
				return notANode(yid)
			}
			if j <= uint32(i) {
				continue // the other direction, or a self-loop
			}
			w, ok := g.Weight(xid, yid)
			if !ok {
				return fmt.Errorf("gpumst: gonum graph: From(%d) lists %d but Weight(%d, %d) reports no edge: %w", xid, yid, xid, yid, gpumst.ErrInvalidGraph)
			}
			if w != w {
				return nanWeight(xid, yid)
			}
			nb = append(nb, neighbour{j, w})
		}
		slices.SortFunc(nb, func(a, b neighbour) int { return cmp.Compare(a.j, b.j) })
		for _, e := range nb {
			fl.u = append(fl.u, uint32(i))
			fl.v = append(fl.v, e.j)
			fl.w = append(fl.w, e.w)
		}
	}
	return nil
}

func notANode(id int64) error {
	return fmt.Errorf("gpumst: gonum graph: an edge ends at %d, which is not a node of the graph: %w", id, gpumst.ErrInvalidGraph)
}

func nanWeight(xid, yid int64) error {
	return fmt.Errorf("gpumst: gonum graph: the edge between nodes %d and %d has a NaN weight: %w", xid, yid, gpumst.ErrInvalidGraph)
}

// indexer maps node IDs to vertex indices (the ranks of the IDs). Contiguous
// IDs, the common case, need no table; IDs spread over a moderate range use a
// dense table; others a map.
type indexer struct {
	min   int64
	n     uint64
	table []uint32 // rank+1 per ID-min, 0 for an absent ID (dense case)
	ranks map[int64]uint32
}

func newIndexer(fl *flat, minID, maxID int64) (*indexer, error) {
	n := len(fl.nodes)
	idx := &indexer{min: minID, n: uint64(n)}
	fl.ids = make([]int64, n)
	if n == 0 {
		return idx, nil
	}
	// maxID-minID wraps for IDs spanning more than int64, but as a uint64 it
	// is the exact span.
	span := uint64(maxID - minID)
	if span == uint64(n-1) {
		// n distinct IDs (a graph's IDs are unique) in a range of n values.
		for i := range fl.ids {
			fl.ids[i] = minID + int64(i)
		}
		return idx, nil
	}
	for i, nd := range fl.nodes {
		fl.ids[i] = nd.ID()
	}
	slices.Sort(fl.ids)
	for i := 1; i < n; i++ {
		if fl.ids[i] == fl.ids[i-1] {
			return nil, fmt.Errorf("gpumst: gonum graph: node ID %d appears twice in Nodes(): %w", fl.ids[i], gpumst.ErrInvalidGraph)
		}
	}
	if span < 4*uint64(n) {
		idx.table = make([]uint32, span+1)
		for i, id := range fl.ids {
			idx.table[id-minID] = uint32(i) + 1
		}
	} else {
		idx.ranks = make(map[int64]uint32, n)
		for i, id := range fl.ids {
			idx.ranks[id] = uint32(i)
		}
	}
	return idx, nil
}

func (x *indexer) index(id int64) (uint32, bool) {
	off := uint64(id - x.min) // wraps for id < min, which the bounds then reject
	switch {
	case x.table != nil:
		if id < x.min || off >= uint64(len(x.table)) || x.table[off] == 0 {
			return 0, false
		}
		return x.table[off] - 1, true
	case x.ranks != nil:
		r, ok := x.ranks[id]
		return r, ok
	default:
		if id < x.min || off >= x.n {
			return 0, false
		}
		return uint32(off), true
	}
}
