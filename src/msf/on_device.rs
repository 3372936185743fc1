//! Minimum spanning forests of graphs already in a GPU tier's memory: the shapes and
//! options are checked here, the arrays on the device (`tier::gpu::msf::resident`),
//! and findings become the same errors the host path gives.

use super::prepare::{self, WeightKey};
use super::{device_adjacency, sum_of_weights, MsfOptions, TotalWeight};
use crate::tier::gpu::msf::csr::{self, CsrChecked, ResidentCsr};
use crate::tier::gpu::msf::resident::{
    self, Finding, ResidentEdges, ResidentOutcome, ResidentRequest, Total, Work,
};
use crate::tier::gpu::{Device, Gpu};
use crate::types::{Algorithm, DType, Element};
use crate::{DeviceTimings, Error, Result, Tier};

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
pub(crate) enum DeviceInput<'g> {
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
            "component labels are not computed for graphs in device memory; call without labels (or pass host arrays)",
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
    let address = weights.map(|(address, _)| address);
    // SAFETY (each arm): the caller's promise, passed on.
    let (num_edges, total_weight, device_timings) = match weights.map(|(_, dtype)| dtype) {
        None | Some(DType::U32) => unsafe { solve::<D, u32>(tier, graph, address, &request) },
        Some(DType::I32) => unsafe { solve::<D, i32>(tier, graph, address, &request) },
        Some(DType::U64) => unsafe { solve::<D, u64>(tier, graph, address, &request) },
        Some(DType::I64) => unsafe { solve::<D, i64>(tier, graph, address, &request) },
        Some(DType::F32) => unsafe { solve::<D, f32>(tier, graph, address, &request) },
        Some(DType::F64) => unsafe { solve::<D, f64>(tier, graph, address, &request) },
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

/// [`resident::solve`] with weights of type W (at `weights`, unless unweighted);
/// findings become the host path's errors.
///
/// # Safety
/// As [`minimum_spanning_forest_on_device`].
unsafe fn solve<D: Device, W: Element + WeightKey>(
    tier: &Gpu<D>,
    graph: DeviceInput<'_>,
    weights: Option<usize>,
    request: &ResidentRequest,
) -> Result<Solution> {
    let graph = match graph {
        DeviceInput::EdgeList(graph) => graph,
        // SAFETY: the caller's promise.
        DeviceInput::Csr(graph) => {
            return unsafe { solve_csr::<D, W>(tier, graph, weights, request) }
        }
    };
    let edges = ResidentEdges {
        num_vertices: graph.num_vertices,
        num_edges: graph.num_edges,
        u: graph.u,
        v: graph.v,
        weights,
    };
    // SAFETY: the caller's promise.
    match unsafe { resident::solve::<D, W>(tier, &edges, request, device_adjacency) }? {
        ResidentOutcome::Forest {
            count,
            weights,
            weight_sum,
            timings,
        } => Ok(solution(count, weights, weight_sum, timings)),
        ResidentOutcome::Invalid(finding) => Err(finding_error(finding, edges.num_vertices, None)),
    }
}

/// The count, total and timings of a solved forest.
fn solution<W: WeightKey>(
    count: usize,
    weights: Option<Vec<W>>,
    weight_sum: Option<i128>,
    timings: DeviceTimings,
) -> Solution {
    let total = match weight_sum {
        Some(sum) => Some(TotalWeight::Int(sum)),
        None => weights.map(|w| sum_of_weights(w.len(), |i| w[i])),
    };
    (count, total, timings)
}

/// A CSR graph: checked and made an edge list on the device, solved as one, and the
/// forest's positions in that list rewritten as the CSR entries' positions.
///
/// # Safety
/// As [`minimum_spanning_forest_on_device`].
unsafe fn solve_csr<D: Device, W: Element + WeightKey>(
    tier: &Gpu<D>,
    graph: &DeviceCsrGraph,
    weights: Option<usize>,
    request: &ResidentRequest,
) -> Result<Solution> {
    let n = graph.num_vertices;
    let csr = ResidentCsr {
        num_vertices: n,
        num_entries: graph.num_entries,
        offsets: graph.offsets,
        targets: graph.targets,
        weights,
    };
    // SAFETY (follow, edge_list, solve and wrap): the caller's promise; the edge list
    // is gpumst's own memory, alive until the end.
    unsafe { tier.follow(request.queue as *mut std::ffi::c_void)? };
    let edges = match unsafe { csr::edge_list::<D, W>(tier, &csr) }? {
        CsrChecked::Edges(edges) => edges,
        CsrChecked::Rejected {
            offsets,
            targets,
            weights,
        } => return Err(host_csr_error(&offsets, &targets, weights.as_deref())),
    };
    let list = ResidentEdges {
        num_vertices: n,
        num_edges: edges.count,
        u: edges.u.address(),
        v: edges.v.address(),
        weights: edges.weights.as_ref().map(|w| w.address()),
    };
    let followed = ResidentRequest {
        queue: 0,
        ..*request
    };
    match unsafe { resident::solve::<D, W>(tier, &list, &followed, device_adjacency) }? {
        ResidentOutcome::Forest {
            count,
            weights,
            weight_sum,
            timings,
        } => {
            if count > 0 {
                let mut ids =
                    unsafe { tier.wrap::<u64>(request.ids_out, count, "the forest's edge ids")? };
                csr::positions_to_entries(tier, &mut ids, count, &edges.ids)?;
            }
            Ok(solution(count, weights, weight_sum, timings))
        }
        ResidentOutcome::Invalid(Finding::NanWeight { edge }) => Err(prepare::nan_weight(
            true,
            csr::entry_of(tier, &edges, edge)?,
        )),
        ResidentOutcome::Invalid(finding) => Err(Error::internal(format!(
            "the edge list made of a checked CSR graph has {finding:?}"
        ))),
    }
}

/// The host path's error for a CSR graph the device's checks rejected.
fn host_csr_error<W: Element + WeightKey>(
    offsets: &[u64],
    targets: &[u32],
    weights: Option<&[W]>,
) -> Error {
    let graph = crate::Graph::Csr {
        offsets,
        targets,
        weights: weights.map(W::as_weights),
    };
    match prepare::endpoints(&graph, false, true) {
        Err(error) => error,
        Ok(_) => Error::internal(
            "the device's checks rejected a CSR graph that the host's checks accept",
        ),
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
