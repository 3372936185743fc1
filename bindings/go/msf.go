package gpumst

/*
#include "gpumst.h"

// The MSF helpers build the gpumst_graph view on the C stack, so Go passes the
// arrays as plain call arguments and never stores a Go pointer in memory that C
// reads (see the package documentation on cgo pointer rules).

// Where an empty weight slice points: NULL weights would make the graph unweighted,
// but a weighted graph without edges still has a weight type (it decides whether
// the total is an integer or a float).
static const void *gpumstgo_weights(const void *weights, int weighted) {
	static const uint64_t none = 0;
	return weights == NULL && weighted ? &none : weights;
}

static gpumst_status gpumstgo_msf_edge_list(gpumst_context *ctx, uint64_t num_vertices,
		uint64_t num_edges, const uint32_t *u, const uint32_t *v, gpumst_dtype weight_type,
		const void *weights, gpumst_algorithm algorithm, uint32_t flags, gpumst_forest **out) {
	gpumst_graph graph;
	gpumst_status status = gpumst_graph_init_edge_list(&graph, num_vertices, num_edges, u, v,
		weight_type, gpumstgo_weights(weights, !(flags & GPUMST_MSF_UNWEIGHTED)));
	if (status != GPUMST_OK)
		return status;
	return gpumst_msf(ctx, &graph, algorithm, flags, out);
}

static gpumst_status gpumstgo_msf_csr(gpumst_context *ctx, uint64_t num_vertices,
		uint64_t num_entries, const uint64_t *offsets, const uint32_t *targets,
		gpumst_dtype weight_type, const void *weights, gpumst_algorithm algorithm,
		uint32_t flags, gpumst_forest **out) {
	gpumst_graph graph;
	gpumst_status status = gpumst_graph_init_csr(&graph, num_vertices, num_entries, offsets,
		targets, weight_type, gpumstgo_weights(weights, !(flags & GPUMST_MSF_UNWEIGHTED)));
	if (status != GPUMST_OK)
		return status;
	return gpumst_msf(ctx, &graph, algorithm, flags, out);
}
*/
import "C"

import (
	"math/big"
	"unsafe"
)

// Algorithm selects the MSF algorithm. All return the identical forest.
type Algorithm int32

// The algorithms.
const (
	// AlgorithmAuto picks the fastest for the tier and graph.
	AlgorithmAuto Algorithm = C.GPUMST_ALGORITHM_AUTO
	// AlgorithmBoruvka is Vineet et al.'s recursive Borůvka.
	AlgorithmBoruvka Algorithm = C.GPUMST_ALGORITHM_BORUVKA
	// AlgorithmPrim is Wang et al.'s Prim on the min-reduction.
	AlgorithmPrim Algorithm = C.GPUMST_ALGORITHM_PRIM
	// AlgorithmStrut is Vasconcellos, Cáceres et al.'s strut algorithm.
	AlgorithmStrut Algorithm = C.GPUMST_ALGORITHM_STRUT
	// AlgorithmKruskal is sequential Kruskal (the reference).
	AlgorithmKruskal Algorithm = C.GPUMST_ALGORITHM_KRUSKAL
)

// String returns the algorithm's name.
func (a Algorithm) String() string {
	switch a {
	case AlgorithmAuto:
		return "auto"
	case AlgorithmBoruvka:
		return "boruvka"
	case AlgorithmPrim:
		return "prim"
	case AlgorithmStrut:
		return "strut"
	case AlgorithmKruskal:
		return "kruskal"
	}
	return "unknown"
}

// Option adjusts a minimum spanning forest computation.
type Option func(*msfConfig)

type msfConfig struct {
	algorithm Algorithm
	flags     C.uint32_t
}

// WithAlgorithm selects the algorithm (default AlgorithmAuto).
func WithAlgorithm(a Algorithm) Option {
	return func(c *msfConfig) { c.algorithm = a }
}

// WithLabels also computes a component label per vertex ([Forest.Labels]).
func WithLabels() Option {
	return func(c *msfConfig) { c.flags |= C.GPUMST_MSF_LABELS }
}

// Maximum computes the maximum spanning forest, under the order (weight
// descending, edge id ascending): equal weights still fall to the lower id.
func Maximum() Option {
	return func(c *msfConfig) { c.flags |= C.GPUMST_MSF_MAXIMUM }
}

// Forest is a computed minimum (or maximum) spanning forest, in Go memory.
type Forest struct {
	// Edges holds the forest's edge ids in ascending order: indexes into the
	// edge list, or CSR positions of the u < v entries for CSR input.
	Edges []int
	// NumVertices is the number of vertices of the graph.
	NumVertices int
	// NumComponents is the number of connected components, isolated vertices
	// included.
	NumComponents int
	// Labels gives, per vertex, the smallest vertex id of its component; nil
	// unless [WithLabels] was given.
	Labels []uint32
	// Total is the forest's exact total weight.
	Total TotalWeight
	// Tier is the tier that computed the forest.
	Tier Tier
}

// TotalWeight is the exact total weight of a forest, summed in ascending
// edge-id order. An unweighted forest weighs its edge count.
type TotalWeight struct {
	// IsFloat is true for float32/float64 weights; then Float is the total.
	IsFloat bool
	// Float is the total as a float64: exact for float weights, rounded for
	// integer totals beyond 2^53.
	Float float64
	// Int is the exact total for integer weights (a 128-bit value in the
	// library), nil for float weights.
	Int *big.Int
}

// String returns the total in decimal: exact for integers, the shortest
// round-trip form for floats.
func (t TotalWeight) String() string {
	if t.Int != nil {
		return t.Int.String()
	}
	return big.NewFloat(t.Float).Text('g', -1)
}

// MinimumSpanningForest computes the minimum spanning forest of the graph with
// numVertices vertices whose edge i joins u[i] and v[i] with weight w[i] (edge
// id i). Equal weights fall to the lower edge id, so the forest is unique.
func MinimumSpanningForest[W Weight](ctx *Context, numVertices int, u, v []uint32, w []W, opts ...Option) (*Forest, error) {
	const op = "minimum spanning forest"
	if len(w) != len(u) {
		return nil, errorf(op, StatusInvalidArgument, "edge list: %d edges but %d weights", len(u), len(w))
	}
	if i := firstNaN(w); i >= 0 {
		return nil, errorf(op, StatusInvalidGraph, "edge %d: weight is NaN", i)
	}
	return edgeListMSF(ctx, op, numVertices, u, v, dtypeOf[W](), sliceArg(w), 0, opts)
}

// MinimumSpanningForestUnweighted computes the spanning forest of the edge list
// that prefers lower edge ids: every edge weighs the same (the total weight is
// the edge count).
func MinimumSpanningForestUnweighted(ctx *Context, numVertices int, u, v []uint32, opts ...Option) (*Forest, error) {
	const op = "minimum spanning forest (unweighted)"
	return edgeListMSF(ctx, op, numVertices, u, v, C.GPUMST_U32, nil, C.GPUMST_MSF_UNWEIGHTED, opts)
}

func edgeListMSF(ctx *Context, op string, numVertices int, u, v []uint32, dtype C.gpumst_dtype, weights unsafe.Pointer, flags C.uint32_t, opts []Option) (*Forest, error) {
	if len(u) != len(v) {
		return nil, errorf(op, StatusInvalidArgument, "edge list: u has %d entries but v has %d", len(u), len(v))
	}
	if numVertices < 0 || uint64(numVertices) > maxVertices {
		return nil, errorf(op, StatusInvalidArgument, "%d vertices: vertex ids are 32-bit, so 0 to 2^32 vertices", numVertices)
	}
	if err := checkEndpoints(op, "u", u, numVertices); err != nil {
		return nil, err
	}
	if err := checkEndpoints(op, "v", v, numVertices); err != nil {
		return nil, err
	}
	return runMSF(ctx, op, opts, flags, func(ptr *C.gpumst_context, alg C.gpumst_algorithm, flags C.uint32_t, out **C.gpumst_forest) C.gpumst_status {
		return C.gpumstgo_msf_edge_list(ptr, C.uint64_t(numVertices), C.uint64_t(len(u)),
			(*C.uint32_t)(sliceArg(u)), (*C.uint32_t)(sliceArg(v)), dtype, weights, alg, flags, out)
	})
}

// MinimumSpanningForestCSR computes the minimum spanning forest of a symmetric
// CSR graph: the neighbours of vertex x are targets[offsets[x]:offsets[x+1]],
// every edge is listed in both directions with the same weight (w has one
// entry per target), and an edge's id is the CSR position of its u < v entry.
// The number of vertices is len(offsets)-1.
func MinimumSpanningForestCSR[W Weight](ctx *Context, offsets []uint64, targets []uint32, w []W, opts ...Option) (*Forest, error) {
	const op = "minimum spanning forest (CSR)"
	if len(w) != len(targets) {
		return nil, errorf(op, StatusInvalidArgument, "CSR: %d targets but %d weights", len(targets), len(w))
	}
	if i := firstNaN(w); i >= 0 {
		return nil, errorf(op, StatusInvalidGraph, "CSR entry %d: weight is NaN", i)
	}
	return csrMSF(ctx, op, offsets, targets, dtypeOf[W](), sliceArg(w), 0, opts)
}

// MinimumSpanningForestCSRUnweighted is [MinimumSpanningForestCSR] ignoring
// weights: the spanning forest that prefers lower edge ids.
func MinimumSpanningForestCSRUnweighted(ctx *Context, offsets []uint64, targets []uint32, opts ...Option) (*Forest, error) {
	const op = "minimum spanning forest (CSR, unweighted)"
	return csrMSF(ctx, op, offsets, targets, C.GPUMST_U32, nil, C.GPUMST_MSF_UNWEIGHTED, opts)
}

func csrMSF(ctx *Context, op string, offsets []uint64, targets []uint32, dtype C.gpumst_dtype, weights unsafe.Pointer, flags C.uint32_t, opts []Option) (*Forest, error) {
	if len(offsets) == 0 {
		return nil, errorf(op, StatusInvalidArgument, "CSR offsets is empty: it needs num_vertices + 1 entries (at least [0])")
	}
	n := len(offsets) - 1
	if uint64(n) > maxVertices {
		return nil, errorf(op, StatusInvalidArgument, "%d vertices: vertex ids are 32-bit, so at most 2^32 vertices", n)
	}
	// The library checks these too; checking here keeps the message this
	// call's own under concurrent failures (see the package documentation).
	if offsets[0] != 0 {
		return nil, errorf(op, StatusInvalidGraph, "CSR offsets[0] = %d, expected 0", offsets[0])
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] {
			return nil, errorf(op, StatusInvalidGraph, "CSR offsets are not monotone: offsets[%d] = %d is less than offsets[%d] = %d", i, offsets[i], i-1, offsets[i-1])
		}
	}
	if offsets[n] != uint64(len(targets)) {
		return nil, errorf(op, StatusInvalidGraph, "CSR offsets[%d] = %d but there are %d targets", n, offsets[n], len(targets))
	}
	for p, t := range targets {
		if uint64(t) >= uint64(n) {
			return nil, errorf(op, StatusInvalidGraph, "CSR targets[%d] = %d is out of range for %d vertices", p, t, n)
		}
	}
	return runMSF(ctx, op, opts, flags, func(ptr *C.gpumst_context, alg C.gpumst_algorithm, flags C.uint32_t, out **C.gpumst_forest) C.gpumst_status {
		return C.gpumstgo_msf_csr(ptr, C.uint64_t(n), C.uint64_t(len(targets)),
			(*C.uint64_t)(sliceArg(offsets)), (*C.uint32_t)(sliceArg(targets)), dtype, weights, alg, flags, out)
	})
}

// runMSF applies the options, calls the library through call on the context
// (held shared for the call) and takes the forest into Go memory.
func runMSF(ctx *Context, op string, opts []Option, flags C.uint32_t, call func(*C.gpumst_context, C.gpumst_algorithm, C.uint32_t, **C.gpumst_forest) C.gpumst_status) (*Forest, error) {
	cfg := configure(opts)
	ptr, err := ctx.acquire(op)
	if err != nil {
		return nil, err
	}
	defer ctx.mu.RUnlock()
	var forest *C.gpumst_forest
	if s := call(ptr, C.gpumst_algorithm(cfg.algorithm), cfg.flags|flags, &forest); s != C.GPUMST_OK {
		return nil, fail(ptr, op, s)
	}
	return takeForest(forest)
}

// checkEndpoints reports the first endpoint that is not a vertex id, in the
// library's words.
func checkEndpoints(op, name string, ends []uint32, numVertices int) error {
	n := uint64(numVertices)
	for i, x := range ends {
		if uint64(x) >= n {
			return errorf(op, StatusInvalidGraph, "edge %d: %s = %d is out of range for %d vertices", i, name, x, numVertices)
		}
	}
	return nil
}

// takeForest copies a library forest into Go memory and frees it, so a Forest
// never refers to C memory and needs no Close.
func takeForest(f *C.gpumst_forest) (*Forest, error) {
	defer C.gpumst_forest_free(f)
	out := &Forest{
		NumVertices:   int(C.gpumst_forest_num_vertices(f)),
		NumComponents: int(C.gpumst_forest_num_components(f)),
		Tier:          Tier(C.gpumst_forest_tier(f)),
	}
	m := int(C.gpumst_forest_num_edges(f))
	out.Edges = make([]int, m)
	if m > 0 {
		ids := unsafe.Slice((*uint64)(unsafe.Pointer(C.gpumst_forest_edges(f))), m)
		for i, id := range ids {
			out.Edges[i] = int(id)
		}
	}
	if labels := C.gpumst_forest_labels(f); labels != nil {
		out.Labels = make([]uint32, out.NumVertices)
		copy(out.Labels, unsafe.Slice((*uint32)(unsafe.Pointer(labels)), out.NumVertices))
	}
	var total C.gpumst_total_weight
	if s := C.gpumst_forest_total_weight(f, &total); s != C.GPUMST_OK {
		return nil, &Error{Status: Status(s), Op: "forest total weight"}
	}
	out.Total = totalWeight(&total)
	return out, nil
}

// configure applies opts to the default configuration.
func configure(opts []Option) msfConfig {
	var cfg msfConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return cfg
}

// totalWeight converts the C API's total.
func totalWeight(total *C.gpumst_total_weight) TotalWeight {
	t := TotalWeight{IsFloat: total.is_float != 0, Float: float64(total.value)}
	if !t.IsFloat {
		t.Int = int128(int64(total.exact_high), uint64(total.exact_low))
	}
	return t
}

// int128 is hi*2^64 + lo as a big.Int.
func int128(hi int64, lo uint64) *big.Int {
	z := big.NewInt(hi)
	z.Lsh(z, 64)
	return z.Add(z, new(big.Int).SetUint64(lo))
}
