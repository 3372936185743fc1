//! Minimum spanning forests of graphs whose working set exceeds a GPU tier's memory,
//! a partition of the edges at a time.
//!
//! Under a total order of the edges (here (key, id)), the minimum spanning forest of
//! G1 ∪ G2 is that of MSF(G1) ∪ G2: an edge of G1 outside MSF(G1) is the heaviest of a
//! cycle in G1, so of a cycle in G1 ∪ G2 too. So the forest so far is carried into each
//! next partition: the device solves the forest's edges followed by the partition's
//! (after the first partition, only the edges that a filter against the forest so far
//! keeps), whose positions keep the ids' order (the forest's ids all precede the
//! partition's), so ties fall as in one call and the forest is the same. The forest
//! stays in device memory (`tier::gpu::msf::partitions` gathers its ends, weights and
//! positions in the whole list there); the host brings its positions back once, at the
//! end.

use super::{device_adjacency, Result};
use crate::tier::gpu::msf::partitions::{solve_host_list, HostParts};
use crate::tier::gpu::msf::resident::Work;
use crate::tier::gpu::{Device, Gpu};
use crate::types::Element;

/// The forest's edge positions (ascending) of the edge list `u`, `v`, `weights` over
/// `n` vertices, its integer weight sum (where `work` asks for it) and the timings,
/// solved in partitions that leave room for the forest within `fit` edges (`fit` >
/// n - 1). `None` when a partition's device finds a bad edge: it sees
/// only its part, so the caller names the first bad edge of the whole list.
pub(super) fn solve_in_partitions<D: Device, W: Element>(
    tier: &Gpu<D>,
    n: usize,
    u: &[u32],
    v: &[u32],
    weights: Option<&[W]>,
    work: &Work,
    fit: usize,
) -> Result<Option<HostParts>> {
    Ok(solve_host_list(tier, n, (u, v, weights), work, fit, device_adjacency)?.ok())
}
