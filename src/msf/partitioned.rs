//! Minimum spanning forests of graphs whose working set exceeds a GPU tier's memory,
//! a partition of the edges at a time.
//!
//! Under a total order of the edges (here (key, id)), the minimum spanning forest of
//! G1 ∪ G2 is that of MSF(G1) ∪ G2: an edge of G1 outside MSF(G1) is the heaviest of a
//! cycle in G1, so of a cycle in G1 ∪ G2 too. So the forest so far is carried into each
//! next partition: the device solves the forest's edges followed by the partition's,
//! whose positions keep the ids' order (the forest's ids all precede the partition's),
//! so ties fall as in one call and the forest is the same.

use rayon::prelude::*;

use super::{device_adjacency, prepare, Result};
use crate::tier::gpu::msf::resident::{self, ResidentOutcome, Work};
use crate::tier::gpu::msf::DeviceTimings;
use crate::tier::gpu::{Device, Gpu};
use crate::types::Element;
use crate::{alloc, Error};

/// The forest's edge positions (ascending) of the edge list `u`, `v`, `weights` over
/// `n` vertices, solved in partitions that leave room for the forest within `fit`
/// edges (`fit` > n - 1). The ends and weights are checked here, on the host, so that
/// the first bad edge of the whole list is the one reported.
pub(super) fn solve_in_partitions<D: Device, W: Element + prepare::WeightKey>(
    tier: &Gpu<D>,
    n: usize,
    u: &[u32],
    v: &[u32],
    weights: Option<&[W]>,
    work: &Work,
    fit: usize,
) -> Result<(Vec<u64>, DeviceTimings)> {
    let m = u.len();
    prepare::check_edge_list_ends(u, v, n)?;
    if let Some(w) = weights {
        prepare::reject_nan(w, None, m)?;
    }
    let mut timings = DeviceTimings::default();
    let mut forest: Vec<u64> = Vec::new();
    let mut start = 0;
    while start < m {
        let end = m.min(start + (fit - forest.len()));
        let take = |all: &[u32]| -> Result<Vec<u32>> { gather(all, &forest, start..end) };
        let (pu, pv) = (take(u)?, take(v)?);
        let pw = weights
            .map(|w| gather(w, &forest, start..end))
            .transpose()?;
        let (outcome, positions) =
            resident::solve_host(tier, n, &pu, &pv, pw.as_deref(), work, device_adjacency)?;
        let ResidentOutcome::Forest { timings: t, .. } = outcome else {
            return Err(Error::internal(
                "the device found a bad edge in a partition the host had checked",
            ));
        };
        add(&mut timings, &t);
        // A position below the carried forest's length is one of its edges.
        let carried = forest.len() as u64;
        forest = alloc::par_collect(
            positions.par_iter().map(|&p| {
                if p < carried {
                    forest[p as usize]
                } else {
                    start as u64 + (p - carried)
                }
            }),
            "the forest's edge ids",
        )?;
        start = end;
    }
    Ok((forest, timings))
}

/// `all[forest]` followed by `all[range]`, on all cores (the forest's positions are
/// scattered over the whole list: a cache miss each).
fn gather<T: Copy + Send + Sync>(
    all: &[T],
    forest: &[u64],
    range: std::ops::Range<usize>,
) -> Result<Vec<T>> {
    let carried = forest.len();
    alloc::par_collect(
        (0..carried + range.len()).into_par_iter().map(|i| {
            if i < carried {
                all[forest[i] as usize]
            } else {
                all[range.start + i - carried]
            }
        }),
        "a partition of the edges",
    )
}

fn add(total: &mut DeviceTimings, part: &DeviceTimings) {
    total.upload_ms += part.upload_ms;
    total.compute_ms += part.compute_ms;
    total.download_ms += part.download_ms;
    total.compute_device_ms = match (total.compute_device_ms, part.compute_device_ms) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    };
    total.peak_device_bytes = total.peak_device_bytes.max(part.peak_device_bytes);
}
