package gpumst

/*
#include <stdint.h>
#include "gpumst.h"

// Device addresses travel as integers and become pointers on the C side: they are
// GPU memory (or OpenCL handles), never Go memory. An edge list's `first` and
// `second` are u and v; a CSR's (`csr` != 0), its offsets and targets. Where
// `labels` is not 0, the forest's component labels are written there.
static gpumst_status gpumstgo_msf_device(gpumst_context *ctx, int csr, uint64_t num_vertices,
		uint64_t num_edges, uintptr_t first, uintptr_t second, gpumst_dtype weight_type,
		uintptr_t weights, gpumst_algorithm algorithm, uint32_t flags, uintptr_t edge_ids,
		uintptr_t stream, uintptr_t labels, uint64_t *count, uint64_t *components,
		gpumst_total_weight *total) {
	gpumst_device_graph graph;
	gpumst_status status = csr
		? gpumst_device_graph_init_csr(&graph, num_vertices, num_edges, (void *)first,
			(void *)second, weight_type, (void *)weights)
		: gpumst_device_graph_init(&graph, num_vertices, num_edges, (void *)first,
			(void *)second, weight_type, (void *)weights);
	if (status != GPUMST_OK)
		return status;
	status = gpumst_msf_device(ctx, &graph, algorithm, flags, (void *)edge_ids, (void *)stream,
		count, components, total);
	if (status != GPUMST_OK || labels == 0)
		return status;
	return gpumst_forest_labels_device(ctx, &graph, (void *)edge_ids, *count, (void *)labels, NULL);
}
*/
import "C"

// DevicePtr is an address in the memory of the context's GPU tier: a CUDA device
// pointer (CUdeviceptr) of the device's primary context, the one the CUDA runtime
// uses, or an OpenCL cl_mem made in the cl_context of [Context.Native]. gpumst
// reads and writes it only during a call.
type DevicePtr uintptr

// Native holds the native objects of a context's GPU tier.
type Native struct {
	Tier Tier
	// Context is the CUcontext (the device's primary context) or cl_context.
	Context uintptr
	// Queue is the CUstream or cl_command_queue gpumst issues its work to.
	Queue uintptr
	// Device is the cl_device_id (OpenCL); 0 for CUDA.
	Device uintptr
}

// Native returns the native objects of the context's GPU tier; a context
// without one fails with ErrBackendUnavailable.
func (c *Context) Native() (Native, error) {
	const op = "native handles"
	ptr, err := c.acquire(op)
	if err != nil {
		return Native{}, err
	}
	defer c.mu.RUnlock()
	var out C.gpumst_native
	if s := C.gpumst_context_native(ptr, &out); s != C.GPUMST_OK {
		return Native{}, fail(ptr, op, s)
	}
	return Native{
		Tier:    Tier(out.tier),
		Context: uintptr(out.context),
		Queue:   uintptr(out.queue),
		Device:  uintptr(out.device),
	}, nil
}

// DeviceGraph is an undirected edge list in device memory: NumEdges uint32 ends
// in U and V, and (for the weighted calls) NumEdges weights in W.
type DeviceGraph struct {
	NumVertices uint64
	NumEdges    uint64
	U, V, W     DevicePtr
}

// DeviceForest is what a device forest call returns to Go; the edge ids stay in
// device memory.
type DeviceForest struct {
	NumEdges      uint64
	NumComponents uint64
	// Total is the forest's total weight; nil with [WithoutTotalWeight].
	Total *TotalWeight
}

// DeviceOptions adds to the [Option]s of a device call.
type DeviceOptions struct {
	// Stream is the caller's CUstream or cl_command_queue: the call's work starts
	// after what was issued to it so far (0: none). The call is complete when it
	// returns.
	Stream uintptr
	// NoTotalWeight leaves out the total weight, which brings the forest's
	// weights over to the host.
	NoTotalWeight bool
	// Labels, where not 0, is device memory for NumVertices uint32 labels: per
	// vertex the smallest vertex id of its component, computed on the device from
	// the forest (as [Forest.Labels] for host graphs).
	Labels DevicePtr
}

// MinimumSpanningForestDevice computes the minimum spanning forest of a graph in
// device memory, with weights of type W, and writes its edge ids (uint64,
// ascending) to device memory at edgeIDs, which holds min(NumVertices-1,
// NumEdges) of them. Validation runs on the device and fails with
// ErrInvalidGraph and the message the host call gives. Component labels come
// through [DeviceOptions].Labels (WithLabels is refused); AlgorithmKruskal (the
// host reference) is refused.
func MinimumSpanningForestDevice[W Weight](ctx *Context, g DeviceGraph, edgeIDs DevicePtr, dev DeviceOptions, opts ...Option) (*DeviceForest, error) {
	return deviceMSF(ctx, "minimum spanning forest (device)", g.layout(), g.W, dtypeOf[W](), 0, edgeIDs, dev, opts)
}

// MinimumSpanningForestDeviceUnweighted is [MinimumSpanningForestDevice]
// ignoring weights (g.W is not read): the forest that prefers lower edge ids.
func MinimumSpanningForestDeviceUnweighted(ctx *Context, g DeviceGraph, edgeIDs DevicePtr, dev DeviceOptions, opts ...Option) (*DeviceForest, error) {
	return deviceMSF(ctx, "minimum spanning forest (device, unweighted)", g.layout(), 0, C.GPUMST_U32,
		C.GPUMST_MSF_UNWEIGHTED, edgeIDs, dev, opts)
}

// DeviceCSR is a symmetric CSR graph in device memory: NumVertices+1 uint64
// Offsets, NumEntries uint32 Targets and (for the weighted calls) NumEntries
// weights in W, every edge listed in both directions with the same weight. An
// edge's id is the CSR position of its entry with source < target, as for
// [MinimumSpanningForestCSR].
type DeviceCSR struct {
	NumVertices         uint64
	NumEntries          uint64
	Offsets, Targets, W DevicePtr
}

// MinimumSpanningForestDeviceCSR is [MinimumSpanningForestDevice] for a
// symmetric CSR: the offsets, the targets' range and the symmetry are checked on
// the device (a rejected graph is copied to the host, where the fault is named
// with the host call's message). edgeIDs holds min(NumVertices-1, NumEntries/2)
// ids.
func MinimumSpanningForestDeviceCSR[W Weight](ctx *Context, g DeviceCSR, edgeIDs DevicePtr, dev DeviceOptions, opts ...Option) (*DeviceForest, error) {
	return deviceMSF(ctx, "minimum spanning forest (device CSR)", g.layout(), g.W, dtypeOf[W](), 0, edgeIDs, dev, opts)
}

// MinimumSpanningForestDeviceCSRUnweighted is [MinimumSpanningForestDeviceCSR]
// ignoring weights (g.W is not read).
func MinimumSpanningForestDeviceCSRUnweighted(ctx *Context, g DeviceCSR, edgeIDs DevicePtr, dev DeviceOptions, opts ...Option) (*DeviceForest, error) {
	return deviceMSF(ctx, "minimum spanning forest (device CSR, unweighted)", g.layout(), 0, C.GPUMST_U32,
		C.GPUMST_MSF_UNWEIGHTED, edgeIDs, dev, opts)
}

// deviceLayout is either graph as gpumstgo_msf_device takes it.
type deviceLayout struct {
	csr             bool
	vertices, edges uint64
	first, second   DevicePtr
}

func (g DeviceGraph) layout() deviceLayout {
	return deviceLayout{false, g.NumVertices, g.NumEdges, g.U, g.V}
}

func (g DeviceCSR) layout() deviceLayout {
	return deviceLayout{true, g.NumVertices, g.NumEntries, g.Offsets, g.Targets}
}

func deviceMSF(ctx *Context, op string, g deviceLayout, w DevicePtr, dtype C.gpumst_dtype, flags C.uint32_t, edgeIDs DevicePtr, dev DeviceOptions, opts []Option) (*DeviceForest, error) {
	cfg := configure(opts)
	ptr, err := ctx.acquire(op)
	if err != nil {
		return nil, err
	}
	defer ctx.mu.RUnlock()
	var count, components C.uint64_t
	var total C.gpumst_total_weight
	totalOut := &total
	if dev.NoTotalWeight {
		totalOut = nil
	}
	s := C.gpumstgo_msf_device(ptr, cBool(g.csr), C.uint64_t(g.vertices), C.uint64_t(g.edges),
		C.uintptr_t(g.first), C.uintptr_t(g.second), dtype, C.uintptr_t(w),
		C.gpumst_algorithm(cfg.algorithm), cfg.flags|flags, C.uintptr_t(edgeIDs),
		C.uintptr_t(dev.Stream), C.uintptr_t(dev.Labels), &count, &components, totalOut)
	if s != C.GPUMST_OK {
		return nil, fail(ptr, op, s)
	}
	out := &DeviceForest{NumEdges: uint64(count), NumComponents: uint64(components)}
	if !dev.NoTotalWeight {
		t := totalWeight(&total)
		out.Total = &t
	}
	return out, nil
}
