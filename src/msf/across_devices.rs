//! Minimum spanning forests split across several devices of a GPU tier
//! (`Options::devices`): each device solves a contiguous range of the edges at the
//! same time as the others, and the ranges' forests are merged in pairs, ceil(log2 p)
//! rounds, on the devices (`tier/gpu/msf/split.rs`). Under the strict (weight, id)
//! order the forest of G1 ∪ G2 is the forest of MSF(G1) ∪ MSF(G2), and positions keep
//! the ids' order, so the forest is the one-device forest edge for edge.
//!
//! Where it pays: from host arrays, one device's call is bound by the host's copies
//! into page-locked memory and one bus; two devices take two buses, and the host fed
//! both at 97 GB/s against 49 GB/s for one (an H200 pair, benches/multi_gpu_upload.cu).
//! Measured end to end on that pair (docs/performance-log.md), two devices were 1.0-1.6x
//! as fast as one on graphs of 2^25 to 2^28 edges, most on the largest and densest. A graph is split when every
//! device's share has at least `GPUMST_SPLIT_MIN_EDGES` edges (default
//! [`SPLIT_MIN_EDGES`] on CUDA; OpenCL, whose forests go between devices through the
//! host and whose split was not timed on two GPUs, only when that variable asks) and
//! twice a forest (the merges would otherwise redo the work).
//! The host checks an edge list's ends and weights only when a device found a bad
//! edge, to name the whole list's first.

use super::{on_device, prepare, DeviceTimings, MsfOptions, Solver};
use crate::graph::{Graph, WeightVec, Weights};
use crate::tier::gpu::msf::partitions::HostParts;
use crate::tier::gpu::msf::resident::{Finding, Total, Work};
use crate::tier::gpu::msf::split;
use crate::types::{Algorithm, Element};
use crate::{profile, Result, TotalWeight};

/// The fewest edges per device for a split on CUDA where `GPUMST_SPLIT_MIN_EDGES` does
/// not say.
pub(super) const SPLIT_MIN_EDGES: usize = 1 << 24;

/// A split forest: its edge ids (ascending), the first device's timings, and its total
/// weight where the devices added it up (integer weights).
pub(super) struct Split {
    pub edges: Vec<u64>,
    pub timings: Option<DeviceTimings>,
    pub total: Option<TotalWeight>,
}

/// The forest of `graph` split across `solver`'s devices, or None where it is not
/// split: one device, Kruskal or Prim, too few edges per device (see the module's
/// documentation), or a device that cannot hold twice a forest. A CSR graph is split
/// as the edge list the host makes of it (each edge once, at the position of its first
/// entry; positions grow with the entries, so ties fall as on one device), whose
/// forest maps back to entries.
#[inline(never)]
pub(super) fn solve(
    graph: &Graph<'_>,
    options: &MsfOptions,
    solver: Solver<'_>,
) -> Result<Option<Split>> {
    let p = solver.devices();
    let (n, m) = match *graph {
        Graph::EdgeList {
            num_vertices, u, ..
        } => (num_vertices, u.len()),
        // Each undirected edge has two entries (an estimate: checked again below).
        Graph::Csr {
            offsets, targets, ..
        } => (offsets.len().saturating_sub(1), targets.len() / 2),
    };
    // The environment is read only for a context with several devices: every call
    // passes here.
    let splits = |m: usize| {
        p >= 2
            && !matches!(options.algorithm, Algorithm::Kruskal | Algorithm::Prim)
            && m / p >= 2 * n.max(1)
            && split_min_edges(solver).is_some_and(|least| m / p >= least)
    };
    if !splits(m) {
        return Ok(None);
    }
    let weights = super::weights_used(graph, options);
    // An edge list's ends are checked on the devices; a CSR's entries here.
    let csr = matches!(graph, Graph::Csr { .. });
    let ends = profile::span("validate", || {
        prepare::endpoints(graph, options.unweighted, csr, 0)
    })?;
    let m = ends.u.len();
    let by_position = match &ends.ids {
        Some(ids) => {
            prepare::reject_nan_in(weights, Some(ids), m)?;
            if !splits(m) {
                return Ok(None);
            }
            // The edges' weights by position (CSR weights are per entry).
            weights.map(|w| gather_weights(w, ids)).transpose()?
        }
        None => None,
    };
    let weights = by_position.as_ref().map(WeightVec::as_weights).or(weights);
    let work = Work {
        algorithm: options.algorithm,
        descending: options.maximum,
        total: Total::OfIntegers,
        device_clock: true,
    };
    let list = (&ends.u[..], &ends.v[..]);
    let Some(solved) = with_weights!(weights, w => split_typed(n, list, w, &work, solver))? else {
        return Ok(None);
    };
    let (positions, sum, timings) = match solved {
        Ok(parts) => parts,
        Err(finding) => {
            // A device sees only its range: the host names the whole list's first bad
            // edge, as one call does (a bad u anywhere before any bad v, then the
            // first NaN). CSR entries were checked before.
            if !ends.ends_checked {
                prepare::check_edge_list_ends(&ends.u, &ends.v, n)?;
            }
            if ends.ids.is_none() {
                prepare::reject_nan_in(weights, None, m)?;
            }
            return Err(on_device::finding_error(finding, n, ends.ids.as_deref()));
        }
    };
    Ok(Some(Split {
        edges: super::positions_to_ids(positions, ends.ids.as_deref()),
        timings: Some(timings),
        total: sum.map(TotalWeight::Int),
    }))
}

/// [`split_typed`]'s answer: None where a device cannot hold its share.
type Typed = Option<std::result::Result<HostParts, Finding>>;

/// The split of the edge list `(u, v)` with weights of type W on `solver`'s devices.
#[inline(never)]
fn split_typed<W: Element>(
    n: usize,
    (u, v): (&[u32], &[u32]),
    weights: Option<&[W]>,
    work: &Work,
    solver: Solver<'_>,
) -> Result<Typed> {
    let adjacency = super::device_adjacency;
    match solver {
        Solver::Cuda(tiers) => split::split_host_list(tiers, n, (u, v, weights), work, adjacency),
        Solver::OpenCl(tiers) => split::split_host_list(tiers, n, (u, v, weights), work, adjacency),
        Solver::Cpu { .. } => Ok(None),
    }
}

/// `GPUMST_SPLIT_MIN_EDGES`: the fewest edges per device for a split (unset:
/// [`SPLIT_MIN_EDGES`] on CUDA, no split on OpenCL).
fn split_min_edges(solver: Solver<'_>) -> Option<usize> {
    std::env::var("GPUMST_SPLIT_MIN_EDGES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .or(matches!(solver, Solver::Cuda(_)).then_some(SPLIT_MIN_EDGES))
}

/// `values[p]` for each of `positions`.
fn gather<T: Copy + Send + Sync>(values: &[T], positions: &[u64]) -> Result<Vec<T>> {
    use rayon::prelude::*;
    crate::alloc::par_collect(
        positions.par_iter().map(|&p| values[p as usize]),
        "the edges' weights",
    )
}

/// The weights at `positions`, gathered as their bits (two instances for six types).
fn gather_weights(weights: Weights<'_>, positions: &[u64]) -> Result<WeightVec> {
    /// `values` viewed as the unsigned integers of their size.
    ///
    /// # Safety
    /// `T` and `B` are plain numbers of the same size and alignment.
    unsafe fn bits<T, B>(values: &[T]) -> &[B] {
        debug_assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<B>());
        // SAFETY: same size and alignment (the caller's promise); every bit pattern is
        // a valid B.
        unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), values.len()) }
    }
    /// `values` of the unsigned integers of their size as a vector of `T`.
    ///
    /// # Safety
    /// As for `bits`, and every bit pattern is a valid `T`.
    unsafe fn from_bits<B, T>(values: Vec<B>) -> Vec<T> {
        let mut values = std::mem::ManuallyDrop::new(values);
        // SAFETY: the allocation's layout is that of `len` (or `capacity`) Ts too.
        unsafe { Vec::from_raw_parts(values.as_mut_ptr().cast(), values.len(), values.capacity()) }
    }
    // SAFETY (each arm): i32/f32 are u32-sized and -aligned, i64/f64 u64-sized and
    // -aligned; every bit pattern of either is a valid value of the other.
    Ok(unsafe {
        match weights {
            Weights::U32(w) => WeightVec::U32(gather::<u32>(w, positions)?),
            Weights::I32(w) => WeightVec::I32(from_bits(gather::<u32>(bits(w), positions)?)),
            Weights::F32(w) => WeightVec::F32(from_bits(gather::<u32>(bits(w), positions)?)),
            Weights::U64(w) => WeightVec::U64(gather::<u64>(w, positions)?),
            Weights::I64(w) => WeightVec::I64(from_bits(gather::<u64>(bits(w), positions)?)),
            Weights::F64(w) => WeightVec::F64(from_bits(gather::<u64>(bits(w), positions)?)),
        }
    })
}

impl Solver<'_> {
    /// How many devices it has (the CPU: one).
    fn devices(self) -> usize {
        match self {
            Solver::Cpu { .. } => 1,
            Solver::OpenCl(tiers) => tiers.len(),
            Solver::Cuda(tiers) => tiers.len(),
        }
    }
}
