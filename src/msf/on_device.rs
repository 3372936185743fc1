//! Minimum spanning forests of graphs already in a GPU tier's memory: the shapes and
//! options are checked here, the arrays on the device (`tier::gpu::msf::resident`),
//! and findings become the same errors the host path gives.

use super::prepare::{self, WeightKey};
use super::{device_adjacency, sum_of_weights, MsfOptions, TotalWeight};
use crate::tier::gpu::msf::csr::{self, CsrChecked, ResidentCsr};
use crate::tier::gpu::msf::labels::{self, LabelEnds};
use crate::tier::gpu::msf::resident::{
    self, Finding, ResidentEdges, ResidentOutcome, ResidentRequest, Total, Work,
};
use crate::tier::gpu::{Device, Gpu};
use crate::types::{Algorithm, DType, Element};
use crate::{DeviceTimings, Error, Result, Tier, WeightVec};

/// An undirected edge list in a GPU tier's memory (edge id = position). Addresses are
/// what the tier calls memory: CUDA device pointers (`CUdeviceptr`, or a runtime
/// pointer of the device's primary context), or OpenCL `cl_mem` handles made in the
/// context gpumst uses (see [`crate::Context::native_handles`]).
#[derive(Clone, Copy, Debug)]
pub struct DeviceGraph {
    pub num_vertices: usize,
    pub num_edges: usize,
    /// `num_edges` u32 ends each.
    pub u: usize,
    pub v: usize,
    /// `num_edges` weights of the given type; None: unweighted.
    pub weights: Option<(usize, DType)>,
}

/// Where a device forest goes.
#[derive(Clone, Copy, Debug)]
pub struct DeviceOutput {
    /// Device memory for min(num_vertices - 1, num_edges) u64 edge ids: the forest's
    /// ids are written there in ascending order (may be 0 when that minimum is 0).
    pub edge_ids: usize,
    /// The caller's `CUstream` or `cl_command_queue` (its handle's value): the call's
    /// work starts after what the caller issued to it so far. 0: no queue to follow.
    pub queue: usize,
    /// Also compute the forest's total weight, which brings the forest's weights (not
    /// the graph's) to the host, so that the total is the one every tier gives.
    pub total_weight: bool,
}

/// What a device forest call returns to the host (the ids stay on the device).
#[derive(Debug, Clone)]
pub struct DeviceForest {
    /// Edge ids written to [`DeviceOutput::edge_ids`].
    pub num_edges: usize,
    pub num_vertices: usize,
    pub num_components: usize,
    /// None unless [`DeviceOutput::total_weight`] asked for it.
    pub total_weight: Option<TotalWeight>,
    pub device_timings: DeviceTimings,
    pub tier: Tier,
}

/// A symmetric CSR graph in a GPU tier's memory (addresses as for [`DeviceGraph`]):
/// the neighbours of x are `targets[offsets[x] .. offsets[x + 1]]`, every edge listed
/// in both directions with the same weight, its id the position of its entry with
/// source < target (as [`crate::Graph::Csr`]).
#[derive(Clone, Copy, Debug)]
pub struct DeviceCsrGraph {
    pub num_vertices: usize,
    /// Entries of `targets` (and of `weights`).
    pub num_entries: usize,
    /// `num_vertices + 1` u64 offsets.
    pub offsets: usize,
    /// `num_entries` u32 targets.
    pub targets: usize,
    /// `num_entries` weights of the given type; None: unweighted.
    pub weights: Option<(usize, DType)>,
}

/// A graph in device memory, in either layout.
#[derive(Clone, Copy, Debug)]
pub enum DeviceInput<'g> {
    EdgeList(&'g DeviceGraph),
    Csr(&'g DeviceCsrGraph),
}

impl DeviceInput<'_> {
    fn num_vertices(&self) -> usize {
        match self {
            DeviceInput::EdgeList(g) => g.num_vertices,
            DeviceInput::Csr(g) => g.num_vertices,
        }
    }

    fn weights(&self) -> Option<(usize, DType)> {
        match self {
            DeviceInput::EdgeList(g) => g.weights,
            DeviceInput::Csr(g) => g.weights,
        }
    }
}

/// Solves `graph` on `tier` (named `tier_kind`).
///
/// # Safety
/// Every address in `graph` and `output` is live memory of this tier holding what its
/// documentation says, and stays so until the call returns; `output.queue` is null or
/// a live queue of the tier's context.
pub(crate) unsafe fn minimum_spanning_forest_on_device<D: Device>(
    tier: &Gpu<D>,
    tier_kind: Tier,
    graph: DeviceInput<'_>,
    options: &MsfOptions,
    output: &DeviceOutput,
) -> Result<DeviceForest> {
    let n = graph.num_vertices();
    prepare::check_vertex_count(n)?;
    if options.labels {
        return Err(Error::invalid_argument(
            "component labels of a graph in device memory come from Context::forest_labels_on_device (gpumst_forest_labels_device) with the forest's ids; call without labels",
        ));
    }
    if options.algorithm == Algorithm::Kruskal {
        return Err(Error::invalid_argument(
            "kruskal, the sequential host reference, takes host arrays; use auto, boruvka, prim or strut on a graph in device memory",
        ));
    }
    let weights = graph.weights().filter(|_| !options.unweighted);
    let request = ResidentRequest {
        work: Work {
            algorithm: options.algorithm,
            descending: options.maximum,
            total: match output.total_weight {
                true => Total::Always,
                false => Total::None,
            },
            // The device clock costs a wait of its own; this path reports the host's.
            device_clock: false,
        },
        queue: output.queue,
        ids_out: output.edge_ids,
    };
    // SAFETY (each arm): the caller's promise, passed on.
    let (num_edges, total_weight, device_timings) = match weights.map(|(_, dtype)| dtype) {
        None | Some(DType::U32) => unsafe { solve::<D, u32>(tier, graph, weights, &request) },
        Some(DType::I32) => unsafe { solve::<D, i32>(tier, graph, weights, &request) },
        Some(DType::U64) => unsafe { solve::<D, u64>(tier, graph, weights, &request) },
        Some(DType::I64) => unsafe { solve::<D, i64>(tier, graph, weights, &request) },
        Some(DType::F32) => unsafe { solve::<D, f32>(tier, graph, weights, &request) },
        Some(DType::F64) => unsafe { solve::<D, f64>(tier, graph, weights, &request) },
    }?;
    let total_weight = match (output.total_weight, weights) {
        (false, _) => None,
        (true, None) => Some(TotalWeight::Int(num_edges as i128)),
        (true, Some(_)) => total_weight,
    };
    Ok(DeviceForest {
        num_edges,
        num_vertices: n,
        num_components: n - num_edges,
        total_weight,
        device_timings,
        tier: tier_kind,
    })
}

type Solution = (usize, Option<TotalWeight>, DeviceTimings);

/// [`resident::solve`] with weights of type W (`weights`, None when unweighted); a CSR
/// graph is first checked and made an edge list on the device, and the forest's
/// positions in that list rewritten as CSR positions. Findings become the host path's
/// errors.
///
/// # Safety
/// As [`minimum_spanning_forest_on_device`].
unsafe fn solve<D: Device, W: Element + WeightKey>(
    tier: &Gpu<D>,
    graph: DeviceInput<'_>,
    weights: Option<(usize, DType)>,
    request: &ResidentRequest,
) -> Result<Solution> {
    let (list, csr, request) = match graph {
        DeviceInput::EdgeList(graph) => {
            let list = ResidentEdges {
                num_vertices: graph.num_vertices,
                num_edges: graph.num_edges,
                u: graph.u,
                v: graph.v,
                weights: weights.map(|(address, _)| address),
            };
            (list, None, *request)
        }
        DeviceInput::Csr(graph) => {
            // SAFETY: the caller's promise.
            let edges = unsafe { csr_edges(tier, graph, weights, request.queue) }?;
            // The caller's queue is followed already.
            (
                edges.list(),
                Some(edges),
                ResidentRequest {
                    queue: 0,
                    ..*request
                },
            )
        }
    };
    // SAFETY: the caller's promise; a CSR's edge list is gpumst's memory, alive in `csr`.
    match unsafe { resident::solve::<D, W>(tier, &list, &request, device_adjacency) }? {
        ResidentOutcome::Forest {
            count,
            weights,
            weight_sum,
            timings,
        } => {
            if let (Some(csr), true) = (&csr, count > 0) {
                // SAFETY: the caller's promise on the ids' room.
                let mut ids =
                    unsafe { tier.wrap::<u64>(request.ids_out, count, "the forest's edge ids")? };
                csr::positions_to_entries(tier, &mut ids, count, csr)?;
            }
            let total = match weight_sum {
                Some(sum) => Some(TotalWeight::Int(sum)),
                None => weights.map(|w| sum_of_weights(w.len(), |i| w[i])),
            };
            Ok((count, total, timings))
        }
        ResidentOutcome::Invalid(finding) => Err(match (&csr, finding) {
            (None, finding) => finding_error(finding, list.num_vertices, None),
            (Some(csr), Finding::NanWeight { edge }) => {
                prepare::nan_weight(true, csr.entry_of(tier, edge)?)
            }
            (Some(_), finding) => Error::internal(format!(
                "the edge list made of a checked CSR graph has {finding:?}"
            )),
        }),
    }
}

/// A CSR graph's edge list, made on the device after its checks; a graph they reject
/// gets the host path's error, found on a host copy.
///
/// # Safety
/// As [`minimum_spanning_forest_on_device`].
#[inline(never)] // one copy per tier, not one per weight type
unsafe fn csr_edges<D: Device>(
    tier: &Gpu<D>,
    graph: &DeviceCsrGraph,
    weights: Option<(usize, DType)>,
    queue: usize,
) -> Result<csr::CsrEdges<D>> {
    let resident = ResidentCsr {
        num_vertices: graph.num_vertices,
        num_entries: graph.num_entries,
        offsets: graph.offsets,
        targets: graph.targets,
        weights,
    };
    // SAFETY (both): the caller's promise.
    unsafe { tier.follow(queue as *mut std::ffi::c_void)? };
    match unsafe { csr::edge_list(tier, &resident) }? {
        CsrChecked::Edges(edges) => Ok(edges),
        CsrChecked::Rejected {
            offsets,
            targets,
            weight_words,
        } => {
            let weights = weight_words.map(|words| weight_vec(weights.map(|w| w.1), &words));
            let graph = crate::Graph::Csr {
                offsets: &offsets,
                targets: &targets,
                weights: weights.as_ref().map(WeightVec::as_weights),
            };
            // The host's checks in the host's order: shape and symmetry, then NaN.
            let nan = |ends: prepare::Endpoints<'_>| {
                let weights = weights.as_ref().map(WeightVec::as_weights);
                prepare::reject_nan_in(weights, ends.ids.as_deref(), ends.u.len())
            };
            Err(
                match prepare::endpoints(&graph, false, true, 0).and_then(nan) {
                    Err(error) => error,
                    Ok(()) => Error::internal(
                        "the device's checks rejected a CSR graph that the host's checks accept",
                    ),
                },
            )
        }
    }
}

/// Weights of type `dtype` from their 32-bit words as a device holds them (the low
/// word first).
fn weight_vec(dtype: Option<DType>, words: &[u32]) -> WeightVec {
    fn narrow<W: Element>(words: &[u32]) -> Vec<W> {
        words.iter().map(|&w| W::from_bits64(w as u64)).collect()
    }
    fn wide<W: Element>(words: &[u32]) -> Vec<W> {
        let bits = |w: &[u32]| w[0] as u64 | (w[1] as u64) << 32;
        words
            .chunks_exact(2)
            .map(|w| W::from_bits64(bits(w)))
            .collect()
    }
    match dtype.unwrap_or(DType::U32) {
        DType::I32 => WeightVec::I32(narrow(words)),
        DType::U32 => WeightVec::U32(narrow(words)),
        DType::F32 => WeightVec::F32(narrow(words)),
        DType::I64 => WeightVec::I64(wide(words)),
        DType::U64 => WeightVec::U64(wide(words)),
        DType::F64 => WeightVec::F64(wide(words)),
    }
}

/// The host path's error for what the device found; `ids` maps edge positions to the
/// caller's CSR entries (None: an edge list, positions are ids).
pub(super) fn finding_error(finding: Finding, num_vertices: usize, ids: Option<&[u64]>) -> Error {
    match finding {
        Finding::EndOutOfRange { u, edge, value } => {
            prepare::end_out_of_range(if u { "u" } else { "v" }, edge, value, num_vertices)
        }
        Finding::NanWeight { edge } => {
            prepare::nan_weight(ids.is_some(), ids.map_or(edge as u64, |ids| ids[edge]))
        }
    }
}

/// Writes to `labels` (device memory, one u32 per vertex) the component labels of the
/// forest whose `count` edge ids (u64, device memory) are at `ids`: per vertex the
/// smallest vertex of its component, as [`crate::Forest::labels`]. Any set of the
/// graph's edge ids will do (its components are labelled).
///
/// # Safety
/// As [`minimum_spanning_forest_on_device`], for `graph`, `ids` and `labels`.
pub(crate) unsafe fn forest_labels_on_device<D: Device>(
    tier: &Gpu<D>,
    graph: DeviceInput<'_>,
    ids: usize,
    count: usize,
    labels: usize,
    queue: usize,
) -> Result<()> {
    let n = graph.num_vertices();
    prepare::check_vertex_count(n)?;
    if n >= u32::MAX as usize || count >= u32::MAX as usize {
        return Err(Error::invalid_argument(format!(
            "labels in device memory take fewer than 2^32 - 1 vertices and edge ids; got {n} and {count}"
        )));
    }
    let (ends, edges) = match graph {
        DeviceInput::EdgeList(g) => (
            LabelEnds::EdgeList {
                u: g.u,
                v: g.v,
                edges: g.num_edges,
            },
            g.num_edges,
        ),
        DeviceInput::Csr(g) => (
            LabelEnds::Csr {
                offsets: g.offsets,
                targets: g.targets,
                entries: g.num_entries,
            },
            g.num_entries,
        ),
    };
    // SAFETY (both): the caller's promise.
    unsafe { tier.follow(queue as *mut std::ffi::c_void)? };
    match unsafe { labels::forest_labels(tier, ends, n, ids, count, labels) }? {
        None => Ok(()),
        Some(i) => Err(Error::invalid_argument(format!(
            "edge_ids[{i}] is not one of the graph's {edges} edge ids, or names an edge whose ends are not below {n}"
        ))),
    }
}
