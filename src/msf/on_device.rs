//! Minimum spanning forests of graphs already in a GPU tier's memory: the shapes and
//! options are checked here, the arrays on the device (`tier::gpu::msf::resident`),
//! and findings become the same errors the host path gives.

use super::prepare::{self, WeightKey};
use super::{device_adjacency, sum_of_weights, MsfOptions, TotalWeight};
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

/// Solves `graph` on `tier` (named `tier_kind`).
///
/// # Safety
/// Every address in `graph` and `output` is live memory of this tier holding what its
/// documentation says, and stays so until the call returns; `output.queue` is null or
/// a live queue of the tier's context.
pub(crate) unsafe fn minimum_spanning_forest_on_device<D: Device>(
    tier: &Gpu<D>,
    tier_kind: Tier,
    graph: &DeviceGraph,
    options: &MsfOptions,
    output: &DeviceOutput,
) -> Result<DeviceForest> {
    let n = graph.num_vertices;
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
    let weights = graph.weights.filter(|_| !options.unweighted);
    let edges = ResidentEdges {
        num_vertices: n,
        num_edges: graph.num_edges,
        u: graph.u,
        v: graph.v,
        weights: weights.map(|(address, _)| address),
    };
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
        None | Some(DType::U32) => unsafe { solve::<D, u32>(tier, &edges, &request) },
        Some(DType::I32) => unsafe { solve::<D, i32>(tier, &edges, &request) },
        Some(DType::U64) => unsafe { solve::<D, u64>(tier, &edges, &request) },
        Some(DType::I64) => unsafe { solve::<D, i64>(tier, &edges, &request) },
        Some(DType::F32) => unsafe { solve::<D, f32>(tier, &edges, &request) },
        Some(DType::F64) => unsafe { solve::<D, f64>(tier, &edges, &request) },
    }?;
    let total_weight = match (output.total_weight, edges.weights) {
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

/// [`resident::solve`] with weights of type W; findings become the host path's errors.
///
/// # Safety
/// As [`minimum_spanning_forest_on_device`].
unsafe fn solve<D: Device, W: Element + WeightKey>(
    tier: &Gpu<D>,
    edges: &ResidentEdges,
    request: &ResidentRequest,
) -> Result<(usize, Option<TotalWeight>, DeviceTimings)> {
    // SAFETY: the caller's promise.
    match unsafe { resident::solve::<D, W>(tier, edges, request, device_adjacency) }? {
        ResidentOutcome::Forest {
            count,
            weights,
            weight_sum,
            timings,
        } => {
            let total = match weight_sum {
                Some(sum) => Some(TotalWeight::Int(sum)),
                None => weights.map(|w| sum_of_weights(w.len(), |i| w[i])),
            };
            Ok((count, total, timings))
        }
        ResidentOutcome::Invalid(finding) => Err(finding_error(finding, edges.num_vertices, None)),
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
