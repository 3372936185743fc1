//! Minimum spanning forests of graphs whose working set exceeds a GPU tier's memory,
//! a partition of the edges at a time.
//!
//! Under a total order of the edges (here (key, id)), the minimum spanning forest of
//! G1 ∪ G2 is that of MSF(G1) ∪ G2: an edge of G1 outside MSF(G1) is the heaviest of a
//! cycle in G1, so of a cycle in G1 ∪ G2 too. So the forest so far is carried into each
//! next partition: the device solves the forest's edges followed by the partition's,
//! whose positions keep the ids' order (the forest's ids all precede the partition's),
//! so ties fall as in one call and the forest is the same. The forest's arrays are kept
//! compact on the host, and each call's arrays go up as two pieces (forest, then the
//! caller's own slice), joined on the device.

use rayon::prelude::*;

use super::{device_adjacency, Result};
use crate::alloc;
use crate::tier::gpu::msf::resident::{self, HostEdges, ResidentOutcome, Work};
use crate::tier::gpu::msf::DeviceTimings;
use crate::tier::gpu::{Device, Gpu};
use crate::types::Element;

/// The forest's edge positions (ascending) of the edge list `u`, `v`, `weights` over
/// `n` vertices, solved in partitions that leave room for the forest within `fit`
/// edges (`fit` > n - 1). `None` when a partition's device finds a bad edge: it sees
/// only its part, so the caller names the first bad edge of the whole list.
pub(super) fn solve_in_partitions<D: Device, W: Element>(
    tier: &Gpu<D>,
    n: usize,
    u: &[u32],
    v: &[u32],
    weights: Option<&[W]>,
    work: &Work,
    fit: usize,
) -> Result<Option<(Vec<u64>, DeviceTimings)>> {
    let m = u.len();
    let mut timings = DeviceTimings::default();
    // The forest so far: its edges' positions in the whole list, and their arrays.
    let mut forest = Carried::<W>::default();
    let mut start = 0;
    while start < m {
        let end = m.min(start + (fit - forest.positions.len()));
        // Each array goes up as two pieces, the forest's and the partition's.
        let weight_pieces = weights.map(|w| [&forest.w[..], &w[start..end]]);
        let edges = HostEdges {
            num_vertices: n,
            u: &[&forest.u, &u[start..end]],
            v: &[&forest.v, &v[start..end]],
            weights: weight_pieces.as_ref().map(|p| &p[..]),
        };
        let (outcome, chosen) = resident::solve_host(tier, &edges, work, device_adjacency)?;
        let ResidentOutcome::Forest { timings: t, .. } = outcome else {
            return Ok(None);
        };
        add(&mut timings, &t);
        forest = forest.next(&chosen, start, u, v, weights)?;
        start = end;
    }
    Ok(Some((forest.positions, timings)))
}

/// The forest carried from one partition into the next.
#[derive(Default)]
struct Carried<W> {
    positions: Vec<u64>,
    u: Vec<u32>,
    v: Vec<u32>,
    w: Vec<W>,
}

impl<W: Copy + Send + Sync> Carried<W> {
    /// The forest of a call on this forest followed by the edges from `start` on:
    /// `chosen` are positions in that call (below the forest's length: its own edges).
    fn next(
        &self,
        chosen: &[u64],
        start: usize,
        u: &[u32],
        v: &[u32],
        weights: Option<&[W]>,
    ) -> Result<Self> {
        let carried = self.positions.len() as u64;
        // Where edge p of the call comes from: (from the forest?, index there).
        let source = |p: u64| {
            if p < carried {
                (true, p as usize)
            } else {
                (false, start + (p - carried) as usize)
            }
        };
        fn take<T: Copy + Send + Sync>(
            chosen: &[u64],
            source: impl Fn(u64) -> (bool, usize) + Sync,
            carried: &[T],
            all: &[T],
        ) -> Result<Vec<T>> {
            alloc::par_collect(
                chosen.par_iter().map(|&p| match source(p) {
                    (true, i) => carried[i],
                    (false, i) => all[i],
                }),
                "the forest carried to the next partition",
            )
        }
        let positions = alloc::par_collect(
            chosen.par_iter().map(|&p| match source(p) {
                (true, i) => self.positions[i],
                (false, i) => i as u64,
            }),
            "the forest carried to the next partition",
        )?;
        Ok(Carried {
            positions,
            u: take(chosen, source, &self.u, u)?,
            v: take(chosen, source, &self.v, v)?,
            w: match weights {
                Some(w) => take(chosen, source, &self.w, w)?,
                None => Vec::new(),
            },
        })
    }
}

pub(super) fn add(total: &mut DeviceTimings, part: &DeviceTimings) {
    total.upload_ms += part.upload_ms;
    total.compute_ms += part.compute_ms;
    total.download_ms += part.download_ms;
    total.compute_device_ms = match (total.compute_device_ms, part.compute_device_ms) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    };
    total.peak_device_bytes = total.peak_device_bytes.max(part.peak_device_bytes);
}
