// Package gpumst is the Go binding of gpumst, a shared library that computes
// minimum spanning forests and data-parallel primitives (scan, segmented scan,
// argmin/argmax, segmented argmin/argmax) on CUDA, OpenCL or all CPU cores.
//
// The package links against an installed libgpumst through cgo and pkg-config
// (`#cgo pkg-config: gpumst`): build with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
// and run with the library on the loader's path (LD_LIBRARY_PATH=PREFIX/lib, or
// an rpath).
//
// # Contexts
//
// Every computation runs on a [Context], opened with [NewContext]. The library
// picks the tier (CUDA, an OpenCL GPU, then the CPU) at run time unless
// [Options] forces one. A Context is safe for concurrent use by any number of
// goroutines; [Context.Close] waits for the calls in flight and later calls
// fail with [ErrClosed]. A Context that becomes unreachable without Close is
// released by a cleanup, but Close is the way to release device resources at a
// known time.
//
// # Minimum spanning forests
//
// [MinimumSpanningForest] takes an edge list (edge i joins u[i] and v[i], its
// id is i) with weights of any of the six element types ([Number]);
// [MinimumSpanningForestUnweighted] ignores weights; [MinimumSpanningForestCSR]
// takes a symmetric CSR graph. The result, a [Forest], lives in Go memory: the
// library's forest is copied and freed before the call returns.
//
// The forest is unique because gpumst orders edges by (weight, edge id): of two
// edges with equal weights, the one with the lower edge id is preferred. With
// [Maximum] the order is (weight descending, edge id ascending), so equal
// weights still fall to the lower id. Every tier and every [Algorithm] returns
// the same edges. Self-loops are ignored, parallel edges are allowed, NaN
// weights are rejected. For CSR input the id of an edge is the CSR position of
// its u < v entry.
//
// The gonum adaptor lives in the subpackage gpumst.dev/gpumst/gonumgraph, so
// that this package does not depend on gonum; its documentation says how it
// numbers a gonum graph's edges, which decides how ties are broken there.
//
// # Primitives
//
// [Scan], [SegmentedScanFlags], [SegmentedScanOffsets], [ArgMin], [ArgMax],
// [SegmentedArgMin] and [SegmentedArgMax] work on slices of any [Number] type.
// A scan may run in place when in and out are the same slice; partially
// overlapping slices are rejected. Integer sums wrap; float sums are IEEE but
// summed in a fixed tree order, so they may differ from a sequential sum by
// rounding. Min and Max treat NaN as the extreme value.
//
// # Errors
//
// Failures are *[Error] values that wrap a [Status]: errors.Is(err,
// gpumst.ErrInvalidGraph) tells the kind, and err.Error() carries the
// message, which names the offending index where there is one. Lengths, vertex
// ids, CSR offsets, segment offsets and NaN weights are checked in Go before
// the library is called, because the C API trusts array lengths and because a
// context keeps only its most recent failure message, which a concurrent
// failing call on the same context could overwrite; the checks cost one pass
// over the input.
//
// # cgo pointer rules
//
// Go memory is passed to C only as direct arguments of a call (slices as the
// address of their first element, or nil when empty) and the library never
// keeps a pointer after a call returns. The one C struct that would hold Go
// pointers, gpumst_graph, is built on the C stack by small C helpers in this
// package from pointers passed as arguments, so no Go memory ever contains a
// pointer handed to C and no runtime.Pinner is needed.
package gpumst
