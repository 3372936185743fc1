//! The C ABI of data already in a GPU's memory: graphs and primitive arrays given as
//! CUDA device pointers or OpenCL `cl_mem` handles, on the caller's stream or queue.

use std::ffi::c_void;

use super::msf::{algorithm_from_c, gpumst_algorithm, gpumst_total_weight, total_weight_to_c};
use super::msf::{gpumst_graph_kind, GPUMST_GRAPH_CSR, GPUMST_GRAPH_EDGE_LIST};
use super::msf::{GPUMST_MSF_MAXIMUM, GPUMST_MSF_UNWEIGHTED};
use super::{
    dtype_from_c, gpumst_context, gpumst_dtype, gpumst_scan_kind, gpumst_scan_op, gpumst_status,
    gpumst_tier, kind_from_c, op_from_c, tier_to_c, with_context, GPUMST_EMPTY_SEGMENT,
    GPUMST_INVALID_ARGUMENT, GPUMST_OK,
};
use crate::msf::{DeviceCsrGraph, DeviceGraph, DeviceInput, DeviceOutput, MsfOptions};
use crate::types::{DType, Element, Extreme, Stored};
use crate::{Buffer, Context, Error, Result};

/// A graph in device memory, read during the call only: an undirected edge list (edge
/// id = position; gpumst_device_graph_init) or a symmetric CSR (edge id = the CSR
/// position of its entry with source < target, as for gpumst_graph_init_csr;
/// gpumst_device_graph_init_csr).
///
/// Device memory is what the context's GPU tier calls memory: on CUDA a device
/// pointer (a `CUdeviceptr` cast to `void *`, or a pointer from `cudaMalloc`) of the
/// device's primary context, which the CUDA runtime, CuPy and PyTorch use; on OpenCL
/// a `cl_mem` made in the `cl_context` that gpumst_context_native returns.
#[repr(C)]
pub struct gpumst_device_graph {
    /// sizeof(gpumst_device_graph) as the caller was compiled with.
    pub struct_size: usize,
    /// Type of `weights` (ignored when `weights` is NULL).
    pub weight_type: gpumst_dtype,
    pub num_vertices: u64,
    /// Edge list: edges (entries of u, v and weights). CSR: entries of targets and
    /// weights.
    pub num_edges: u64,
    /// Edge list: num_edges uint32_t ends each (NULL for CSR).
    pub u: *mut c_void,
    pub v: *mut c_void,
    /// num_edges weights of `weight_type` (one per CSR entry, equal in both
    /// directions); NULL for an unweighted graph.
    pub weights: *mut c_void,
    /// GPUMST_GRAPH_EDGE_LIST or GPUMST_GRAPH_CSR (a struct_size that ends before
    /// this field, from a caller compiled before CSR graphs: an edge list).
    pub kind: gpumst_graph_kind,
    /// CSR: num_vertices + 1 uint64_t offsets and num_edges uint32_t targets (NULL
    /// for edge lists).
    pub offsets: *mut c_void,
    pub targets: *mut c_void,
}

/// The size of gpumst_device_graph before `kind` (callers compiled then pass it).
const EDGE_LIST_ONLY_SIZE: usize = std::mem::offset_of!(gpumst_device_graph, kind);

/// The native objects behind a context's GPU tier.
#[repr(C)]
pub struct gpumst_native {
    /// GPUMST_TIER_CUDA or GPUMST_TIER_OPENCL.
    pub tier: gpumst_tier,
    /// CUDA: the device's primary `CUcontext`. OpenCL: the `cl_context`, in which
    /// the buffers passed to the device functions must be made.
    pub context: *mut c_void,
    /// The `CUstream` or `cl_command_queue` gpumst issues its work to.
    pub queue: *mut c_void,
    /// OpenCL: the `cl_device_id`; CUDA: NULL.
    pub device: *mut c_void,
}

/// Fills `graph` as a device edge-list view (see gpumst_device_graph).
#[no_mangle]
pub unsafe extern "C" fn gpumst_device_graph_init(
    graph: *mut gpumst_device_graph,
    num_vertices: u64,
    num_edges: u64,
    u: *mut c_void,
    v: *mut c_void,
    weight_type: gpumst_dtype,
    weights: *mut c_void,
) -> gpumst_status {
    // SAFETY: passed on from the caller.
    unsafe {
        fill_device_graph(
            graph,
            gpumst_device_graph {
                struct_size: std::mem::size_of::<gpumst_device_graph>(),
                weight_type,
                num_vertices,
                num_edges,
                u,
                v,
                weights,
                kind: GPUMST_GRAPH_EDGE_LIST,
                offsets: std::ptr::null_mut(),
                targets: std::ptr::null_mut(),
            },
        )
    }
}

/// Fills `graph` as a device view of a symmetric CSR (see gpumst_device_graph):
/// `offsets` num_vertices + 1 uint64_t, `targets` num_entries uint32_t, `weights`
/// num_entries of `weight_type` or NULL, all device memory.
#[no_mangle]
pub unsafe extern "C" fn gpumst_device_graph_init_csr(
    graph: *mut gpumst_device_graph,
    num_vertices: u64,
    num_entries: u64,
    offsets: *mut c_void,
    targets: *mut c_void,
    weight_type: gpumst_dtype,
    weights: *mut c_void,
) -> gpumst_status {
    // SAFETY: passed on from the caller.
    unsafe {
        fill_device_graph(
            graph,
            gpumst_device_graph {
                struct_size: std::mem::size_of::<gpumst_device_graph>(),
                weight_type,
                num_vertices,
                num_edges: num_entries,
                u: std::ptr::null_mut(),
                v: std::ptr::null_mut(),
                weights,
                kind: GPUMST_GRAPH_CSR,
                offsets,
                targets,
            },
        )
    }
}

/// # Safety
/// `graph` is NULL or a writable gpumst_device_graph.
unsafe fn fill_device_graph(
    graph: *mut gpumst_device_graph,
    filled: gpumst_device_graph,
) -> gpumst_status {
    // SAFETY: the caller's promise.
    match unsafe { graph.as_mut() } {
        Some(slot) => {
            *slot = filled;
            GPUMST_OK
        }
        None => GPUMST_INVALID_ARGUMENT,
    }
}

/// Writes the native objects of the context's GPU tier to `*native`. A context
/// without a GPU tier fails with GPUMST_BACKEND_UNAVAILABLE.
#[no_mangle]
pub unsafe extern "C" fn gpumst_context_native(
    ctx: *mut gpumst_context,
    native: *mut gpumst_native,
) -> gpumst_status {
    with_context(ctx, "gpumst_context_native", |c| {
        // SAFETY: the caller passes NULL or a writable gpumst_native.
        let out =
            unsafe { native.as_mut() }.ok_or_else(|| Error::invalid_argument("native is NULL"))?;
        let (tier, handles) = c.native_handles().ok_or_else(no_gpu_tier(c))?;
        *out = gpumst_native {
            tier: tier_to_c(tier),
            context: handles.context,
            queue: handles.queue,
            device: handles.device,
        };
        Ok(())
    })
}

fn no_gpu_tier(c: &Context) -> impl FnOnce() -> Error + '_ {
    move || {
        Error::backend_unavailable(format!(
            "device memory needs a GPU tier, and this context has only the {} tier",
            c.tier()
        ))
    }
}

fn count(n: u64, name: &str) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::invalid_argument(format!("{name} is too large")))
}

/// A copy of the caller's graph, of which only its `struct_size` bytes are read: a
/// caller compiled before CSR graphs passes a shorter struct, an edge list.
///
/// # Safety
/// `graph` is NULL or points to `struct_size` readable bytes of a gpumst_device_graph.
unsafe fn read_device_graph(graph: *const gpumst_device_graph) -> Result<gpumst_device_graph> {
    if graph.is_null() {
        return Err(Error::invalid_argument("graph is NULL"));
    }
    // SAFETY: every version of the struct starts with struct_size.
    let size = unsafe { std::ptr::addr_of!((*graph).struct_size).read_unaligned() };
    let full = std::mem::size_of::<gpumst_device_graph>();
    if size < EDGE_LIST_ONLY_SIZE {
        return Err(Error::invalid_argument(format!(
            "graph.struct_size = {size} is smaller than sizeof(gpumst_device_graph) = {full}: fill the graph with gpumst_device_graph_init or gpumst_device_graph_init_csr"
        )));
    }
    let mut copy = gpumst_device_graph {
        struct_size: size,
        weight_type: 0,
        num_vertices: 0,
        num_edges: 0,
        u: std::ptr::null_mut(),
        v: std::ptr::null_mut(),
        weights: std::ptr::null_mut(),
        kind: GPUMST_GRAPH_EDGE_LIST,
        offsets: std::ptr::null_mut(),
        targets: std::ptr::null_mut(),
    };
    // SAFETY: the caller's struct holds `size` bytes, and the copy `full`; every field
    // is a plain number or pointer, valid for any bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(
            graph.cast::<u8>(),
            std::ptr::addr_of_mut!(copy).cast::<u8>(),
            size.min(full),
        )
    };
    if size < full {
        copy.kind = GPUMST_GRAPH_EDGE_LIST;
        copy.offsets = std::ptr::null_mut();
        copy.targets = std::ptr::null_mut();
    }
    Ok(copy)
}

/// The caller's graph (read by [`read_device_graph`]) as the library takes it; its
/// weights are read where `weighted`.
enum CallerGraph {
    EdgeList(DeviceGraph),
    Csr(DeviceCsrGraph),
}

impl CallerGraph {
    fn input(&self) -> DeviceInput<'_> {
        match self {
            CallerGraph::EdgeList(g) => DeviceInput::EdgeList(g),
            CallerGraph::Csr(g) => DeviceInput::Csr(g),
        }
    }
}

fn caller_graph(raw: &gpumst_device_graph, weighted: bool) -> Result<CallerGraph> {
    let weights = match raw.weights.is_null() || !weighted {
        true => None,
        false => Some((raw.weights as usize, dtype_from_c(raw.weight_type)?)),
    };
    let (vertices, edges) = (
        count(raw.num_vertices, "graph.num_vertices")?,
        count(raw.num_edges, "graph.num_edges")?,
    );
    match raw.kind {
        GPUMST_GRAPH_EDGE_LIST => Ok(CallerGraph::EdgeList(DeviceGraph {
            num_vertices: vertices,
            num_edges: edges,
            u: raw.u as usize,
            v: raw.v as usize,
            weights,
        })),
        GPUMST_GRAPH_CSR => Ok(CallerGraph::Csr(DeviceCsrGraph {
            num_vertices: vertices,
            num_entries: edges,
            offsets: raw.offsets as usize,
            targets: raw.targets as usize,
            weights,
        })),
        other => Err(Error::invalid_argument(format!(
            "graph.kind = {other} is neither GPUMST_GRAPH_EDGE_LIST nor GPUMST_GRAPH_CSR"
        ))),
    }
}

/// The minimum spanning forest of a graph in device memory, under the (weight, edge
/// id) order: the same edges as gpumst_msf on the same arrays. The graph is validated
/// on the device (ids in range, no NaN weight; a CSR's offsets and symmetry) with
/// gpumst_msf's messages (a CSR the device rejects is copied to the host, where the
/// fault is named); a rejected graph leaves `edge_ids` as it was. The forest's edge
/// ids (uint64_t, ascending) are written to device memory `edge_ids`, which must hold
/// min(num_vertices - 1, num_edges) of them (for a CSR, min(num_vertices - 1,
/// num_edges / 2)); it may be NULL when that is 0. `*num_edges` receives their count and `*num_components` the
/// component count (either may be NULL). `total` (may be NULL) receives the total
/// weight, as gpumst_forest_total_weight gives it; computing it brings the forest's
/// weights to the host, so pass NULL when the total is not needed.
///
/// The work starts after what the caller issued so far to `stream` (a `CUstream` or
/// `cl_command_queue` of the context's device; NULL: none), and is complete when the
/// call returns. `flags`: GPUMST_MSF_UNWEIGHTED, GPUMST_MSF_MAXIMUM (GPUMST_MSF_LABELS
/// is refused: gpumst_forest_labels_device writes the labels from the forest's ids). Every algorithm
/// but GPUMST_ALGORITHM_KRUSKAL (the host reference) is accepted; prim builds its
/// adjacency on the host, so it copies the graph there. A context without a GPU tier
/// fails with GPUMST_BACKEND_UNAVAILABLE.
///
/// The caller's arrays (the graph and `edge_ids`) count against the device's memory
/// (or `device_memory_limit`). Where gpumst's working set does not fit beside them,
/// the forest is computed a partition of the edges at a time, each copied on the
/// device from the caller's arrays (the same forest); where the vertices' arrays and
/// twice a forest do not fit either, the call fails with GPUMST_OUT_OF_MEMORY and the
/// sizes. A CSR is first made an edge list in gpumst's device memory (12 bytes per
/// entry while it is made, then 16 bytes and a weight per edge). Its symmetry check
/// looks up each entry's twins and reverse: by bisection in the two rows where every
/// row is sorted by target, else in a hash table of the entries (4 bytes per slot,
/// the next power of two at or above twice the entries) built for the check.
#[no_mangle]
pub unsafe extern "C" fn gpumst_msf_device(
    ctx: *mut gpumst_context,
    graph: *const gpumst_device_graph,
    algorithm: gpumst_algorithm,
    flags: u32,
    edge_ids: *mut c_void,
    stream: *mut c_void,
    num_edges: *mut u64,
    num_components: *mut u64,
    total: *mut gpumst_total_weight,
) -> gpumst_status {
    with_context(ctx, "gpumst_msf_device", |c| {
        // SAFETY: the caller passes NULL or a readable graph of its struct_size.
        let raw = unsafe { read_device_graph(graph) }?;
        if flags & !(GPUMST_MSF_UNWEIGHTED | GPUMST_MSF_MAXIMUM) != 0 {
            return Err(Error::invalid_argument(format!(
                "flags = {flags:#x} has bits gpumst_msf_device does not take (GPUMST_MSF_UNWEIGHTED and GPUMST_MSF_MAXIMUM only; component labels come from gpumst_forest_labels_device)"
            )));
        }
        let graph = caller_graph(&raw, true)?;
        let options = MsfOptions {
            algorithm: algorithm_from_c(algorithm)?,
            labels: false,
            unweighted: flags & GPUMST_MSF_UNWEIGHTED != 0,
            maximum: flags & GPUMST_MSF_MAXIMUM != 0,
        };
        let output = DeviceOutput {
            edge_ids: edge_ids as usize,
            queue: stream as usize,
            total_weight: !total.is_null(),
        };
        // SAFETY (both arms): the caller's contract on the device arrays and the stream.
        let forest = match &graph {
            CallerGraph::EdgeList(g) => unsafe { c.msf_on_device(g, &options, &output) },
            CallerGraph::Csr(g) => unsafe { c.msf_csr_on_device(g, &options, &output) },
        }?;
        // SAFETY (each write): the caller passes NULL or writable outputs.
        unsafe {
            if let Some(out) = num_edges.as_mut() {
                *out = forest.num_edges as u64;
            }
            if let Some(out) = num_components.as_mut() {
                *out = forest.num_components as u64;
            }
            if let (Some(out), Some(t)) = (total.as_mut(), forest.total_weight) {
                *out = total_weight_to_c(t);
            }
        }
        Ok(())
    })
}

/// Writes to device memory `labels` (num_vertices uint32_t) the component labels of
/// the forest whose `num_edges` edge ids (uint64_t, device memory, as gpumst_msf_device
/// writes them; any of the graph's edge ids will do) are at `edge_ids`: per vertex the
/// smallest vertex id of its component, as gpumst_forest_labels gives them for host
/// graphs. After the work the caller issued to `stream` (NULL: none); complete when the
/// call returns. An id that is not one of the graph's edges (or whose edge has an end
/// out of range) is GPUMST_INVALID_ARGUMENT, naming its index.
#[no_mangle]
pub unsafe extern "C" fn gpumst_forest_labels_device(
    ctx: *mut gpumst_context,
    graph: *const gpumst_device_graph,
    edge_ids: *const c_void,
    num_edges: u64,
    labels: *mut c_void,
    stream: *mut c_void,
) -> gpumst_status {
    with_context(ctx, "gpumst_forest_labels_device", |c| {
        // SAFETY: the caller passes NULL or a readable graph of its struct_size.
        let raw = unsafe { read_device_graph(graph) }?;
        let graph = caller_graph(&raw, false)?;
        let ids = count(num_edges, "num_edges")?;
        // SAFETY: the caller's contract on the device arrays and the stream.
        unsafe {
            c.forest_labels_on_device(
                graph.input(),
                edge_ids as usize,
                ids,
                labels as usize,
                stream as usize,
            )
        }
    })
}

/// Lends `n` elements of device memory at `address` to a *_buffer primitive.
///
/// # Safety
/// `address` holds `n` elements of T in the tier's memory for the whole call.
unsafe fn lent<T: Stored>(c: &Context, address: *const c_void, n: u64) -> Result<Buffer<T>> {
    // SAFETY: passed on from the caller.
    unsafe { c.wrap_device::<T>(address as usize, count(n, "n")?) }
}

/// The output of a device scan: `output` lent, holding a copy of `input` unless the
/// scan is in place (an empty buffer when n is 0, where both may be NULL).
///
/// # Safety
/// As [`lent`], for `input` and `output`.
unsafe fn scan_target<T: Element>(
    c: &Context,
    input: *const c_void,
    output: *mut c_void,
    n: u64,
) -> Result<Buffer<T>> {
    if n == 0 {
        return c.upload::<T>(&[]);
    }
    // SAFETY (both): passed on from the caller.
    let mut target = unsafe { lent::<T>(c, output, n) }?;
    if input != output.cast_const() {
        let source = unsafe { lent::<T>(c, input, n) }?;
        c.copy_buffer(&source, &mut target)?;
    }
    Ok(target)
}

/// Scans `n` elements of `dtype` in device memory from `input` into `output` (as
/// gpumst_scan; `output == input` scans in place), after the work the caller issued
/// to `stream` (NULL: none). Complete when the call returns.
#[no_mangle]
pub unsafe extern "C" fn gpumst_scan_device(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    op: gpumst_scan_op,
    kind: gpumst_scan_kind,
    input: *const c_void,
    output: *mut c_void,
    n: u64,
    stream: *mut c_void,
) -> gpumst_status {
    with_context(ctx, "gpumst_scan_device", |c| {
        let (op, kind) = (op_from_c(op)?, kind_from_c(kind)?);
        if n == 0 {
            return Ok(());
        }
        // SAFETY: the caller's contract on the stream and both arrays.
        unsafe { c.follow_queue(stream as usize) }?;
        with_element!(dtype, T => {
            let mut target = unsafe { scan_target::<T>(c, input, output, n) }?;
            c.scan_buffer(&mut target, op, kind)
        })
    })
}

/// Segmented scan of `n` elements of `dtype` in device memory from `input` into
/// `output` (`output == input` scans in place), restarting wherever `flags` (n
/// uint8_t in device memory) is nonzero; index 0 always starts a segment (as
/// gpumst_segmented_scan_flags). After the work the caller issued to `stream` (NULL:
/// none); complete when the call returns.
#[no_mangle]
pub unsafe extern "C" fn gpumst_segmented_scan_flags_device(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    op: gpumst_scan_op,
    kind: gpumst_scan_kind,
    input: *const c_void,
    output: *mut c_void,
    flags: *const c_void,
    n: u64,
    stream: *mut c_void,
) -> gpumst_status {
    with_context(ctx, "gpumst_segmented_scan_flags_device", |c| {
        let (op, kind) = (op_from_c(op)?, kind_from_c(kind)?);
        if n == 0 {
            return Ok(());
        }
        // SAFETY: the caller's contract on the stream and every array.
        unsafe { c.follow_queue(stream as usize) }?;
        let flags = unsafe { lent::<u8>(c, flags, n) }?;
        with_element!(dtype, T => {
            let mut target = unsafe { scan_target::<T>(c, input, output, n) }?;
            c.segmented_scan_flags_buffer(&mut target, &flags, op, kind)
        })
    })
}

/// Segmented scan of `n` elements of `dtype` in device memory from `input` into
/// `output` (`output == input` scans in place): segment s is `offsets[s] ..
/// offsets[s+1]`, with `offsets` num_segments + 1 uint64_t in device memory, validated
/// on the device with gpumst_segmented_scan_offsets's messages. After the work the
/// caller issued to `stream` (NULL: none); complete when the call returns.
#[no_mangle]
pub unsafe extern "C" fn gpumst_segmented_scan_offsets_device(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    op: gpumst_scan_op,
    kind: gpumst_scan_kind,
    input: *const c_void,
    output: *mut c_void,
    n: u64,
    offsets: *const c_void,
    num_segments: u64,
    stream: *mut c_void,
) -> gpumst_status {
    with_context(ctx, "gpumst_segmented_scan_offsets_device", |c| {
        let (op, kind) = (op_from_c(op)?, kind_from_c(kind)?);
        let entries = num_segments
            .checked_add(1)
            .ok_or_else(|| Error::invalid_argument("num_segments is too large"))?;
        // SAFETY: the caller's contract on the stream and every array.
        unsafe { c.follow_queue(stream as usize) }?;
        let offsets = unsafe { lent::<u64>(c, offsets, entries) }?;
        with_element!(dtype, T => {
            let mut target = unsafe { scan_target::<T>(c, input, output, n) }?;
            c.segmented_scan_buffer(&mut target, &offsets, op, kind)
        })
    })
}

/// The minimum of `n` elements of `dtype` in device memory and its first index (as
/// gpumst_argmin: `*value` and `*index` are host memory; for n == 0 the type's maximum
/// and GPUMST_EMPTY_SEGMENT), after the work the caller issued to `stream` (NULL: none).
#[no_mangle]
pub unsafe extern "C" fn gpumst_argmin_device(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    input: *const c_void,
    n: u64,
    stream: *mut c_void,
    value: *mut c_void,
    index: *mut u64,
) -> gpumst_status {
    // SAFETY: passed on from the caller.
    unsafe { arg_extreme_device(ctx, Extreme::Min, dtype, input, n, stream, value, index) }
}

/// As gpumst_argmin_device, for the maximum (as gpumst_argmax).
#[no_mangle]
pub unsafe extern "C" fn gpumst_argmax_device(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    input: *const c_void,
    n: u64,
    stream: *mut c_void,
    value: *mut c_void,
    index: *mut u64,
) -> gpumst_status {
    // SAFETY: passed on from the caller.
    unsafe { arg_extreme_device(ctx, Extreme::Max, dtype, input, n, stream, value, index) }
}

/// gpumst_argmin_device and gpumst_argmax_device.
#[allow(clippy::too_many_arguments)]
unsafe fn arg_extreme_device(
    ctx: *mut gpumst_context,
    extreme: Extreme,
    dtype: gpumst_dtype,
    input: *const c_void,
    n: u64,
    stream: *mut c_void,
    value: *mut c_void,
    index: *mut u64,
) -> gpumst_status {
    let function = match extreme {
        Extreme::Min => "gpumst_argmin_device",
        Extreme::Max => "gpumst_argmax_device",
    };
    with_context(ctx, function, |c| {
        if value.is_null() || index.is_null() {
            return Err(Error::invalid_argument("value and index must not be NULL"));
        }
        // SAFETY: the caller's contract on the stream and the array.
        unsafe { c.follow_queue(stream as usize) }?;
        with_element!(dtype, T => {
            // No elements: the host call's answer (the operator's identity and
            // GPUMST_EMPTY_SEGMENT), without a look at `input`.
            let found = match n {
                0 => None,
                _ => {
                    let data = unsafe { lent::<T>(c, input, n) }?;
                    match extreme {
                        Extreme::Min => c.argmin_buffer(&data)?,
                        Extreme::Max => c.argmax_buffer(&data)?,
                    }
                }
            };
            let (best, at) = found.map_or(
                (
                    match extreme {
                        Extreme::Min => T::HIGHEST,
                        Extreme::Max => T::LOWEST,
                    },
                    GPUMST_EMPTY_SEGMENT,
                ),
                |(best, at)| (best, at as u64),
            );
            // SAFETY: checked non-NULL; the caller passes room for one T and one u64.
            unsafe {
                value.cast::<T>().write_unaligned(best);
                *index = at;
            }
            Ok(())
        })
    })
}

/// Per segment of `offsets` (num_segments + 1 uint64_t in device memory, as for
/// gpumst_segmented_argmin), the minimum of `input` (n elements of `dtype`) into
/// `values` and its first index into `indices` (uint64_t), all in device memory,
/// after the work the caller issued to `stream` (NULL: none). The offsets are
/// validated on the device with gpumst_segmented_argmin's messages.
#[no_mangle]
pub unsafe extern "C" fn gpumst_segmented_argmin_device(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    input: *const c_void,
    n: u64,
    offsets: *const c_void,
    num_segments: u64,
    values: *mut c_void,
    indices: *mut c_void,
    stream: *mut c_void,
) -> gpumst_status {
    // SAFETY: passed on from the caller.
    unsafe {
        segmented_arg_extreme_device(
            ctx,
            Extreme::Min,
            dtype,
            input,
            n,
            offsets,
            num_segments,
            values,
            indices,
            stream,
        )
    }
}

/// As gpumst_segmented_argmin_device, for the maximum (as gpumst_segmented_argmax:
/// empty segments get the type's minimum).
#[no_mangle]
pub unsafe extern "C" fn gpumst_segmented_argmax_device(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    input: *const c_void,
    n: u64,
    offsets: *const c_void,
    num_segments: u64,
    values: *mut c_void,
    indices: *mut c_void,
    stream: *mut c_void,
) -> gpumst_status {
    // SAFETY: passed on from the caller.
    unsafe {
        segmented_arg_extreme_device(
            ctx,
            Extreme::Max,
            dtype,
            input,
            n,
            offsets,
            num_segments,
            values,
            indices,
            stream,
        )
    }
}

/// gpumst_segmented_argmin_device and gpumst_segmented_argmax_device.
#[allow(clippy::too_many_arguments)]
unsafe fn segmented_arg_extreme_device(
    ctx: *mut gpumst_context,
    extreme: Extreme,
    dtype: gpumst_dtype,
    input: *const c_void,
    n: u64,
    offsets: *const c_void,
    num_segments: u64,
    values: *mut c_void,
    indices: *mut c_void,
    stream: *mut c_void,
) -> gpumst_status {
    let function = match extreme {
        Extreme::Min => "gpumst_segmented_argmin_device",
        Extreme::Max => "gpumst_segmented_argmax_device",
    };
    with_context(ctx, function, |c| {
        let entries = num_segments
            .checked_add(1)
            .ok_or_else(|| Error::invalid_argument("num_segments is too large"))?;
        // SAFETY: the caller's contract on the stream and every array.
        unsafe { c.follow_queue(stream as usize) }?;
        let offsets = unsafe { lent::<u64>(c, offsets, entries) }?;
        let mut indices = match num_segments {
            0 => c.upload::<u64>(&[])?,
            _ => unsafe { lent::<u64>(c, indices, num_segments) }?,
        };
        with_element!(dtype, T => {
            let data = match n {
                0 => c.upload::<T>(&[])?,
                _ => unsafe { lent::<T>(c, input, n) }?,
            };
            let mut values = match num_segments {
                0 => c.upload::<T>(&[])?,
                _ => unsafe { lent::<T>(c, values, num_segments) }?,
            };
            match extreme {
                Extreme::Min => c.segmented_argmin_buffer(&data, &offsets, &mut values, &mut indices),
                Extreme::Max => c.segmented_argmax_buffer(&data, &offsets, &mut values, &mut indices),
            }
        })
    })
}
