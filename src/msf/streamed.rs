//! Minimum spanning forests on the CPU tier under a memory cap
//! (`Options::device_memory_limit` on a CPU context): where an algorithm's working
//! arrays for the whole graph would exceed the cap, the edges are taken a part at a
//! time.
//!
//! Under the total order (key, position), MSF(G1 ∪ G2) = MSF(MSF(G1) ∪ G2), so the
//! forest so far F is solved again with each part's edges behind it; F's positions all
//! precede the part's, so ties fall as in one call and the forest is the same. Before a
//! part is solved its edges go through a filter against F: an edge whose ends F already
//! joins by edges all lighter than it is the heaviest of a cycle, in no minimum forest,
//! and is dropped (filter-Kruskal across parts). F's components below a few thresholds
//! (quantiles of F's priorities) decide that with two label reads an edge; only the
//! survivors take room, so a part holds many times its share of the edges
//! (docs/performance-log.md, issue 21).

use super::positions_to_ids;
use super::prepare::{self, Endpoints, KeyOrder, PrioritySource};
use super::union_find::UnionFind;
use crate::graph::Weights;
use crate::types::Algorithm;
use crate::{alloc, profile, Error, Result, Status};

/// Labels are kept for this many thresholds (4 bytes a vertex each).
const THRESHOLDS: usize = 8;

/// Working bytes of one in-memory solve beside the caller's graph: per edge (its
/// priority, the algorithm's arrays, the chosen-edge flags), per vertex (union-find
/// parents, the forest, labels) and per call, for narrow (64-bit) or wide (128-bit)
/// priorities. Measured with a counting allocator (`tests/cpu_capped.rs` fails if a
/// call goes over its cap), rounded up.
struct Footprint {
    per_edge: u64,
    per_vertex: u64,
    fixed: u64,
}

impl Footprint {
    fn of(algorithm: Algorithm, wide: bool, edges: usize) -> Footprint {
        let w = wide as u64;
        let (per_edge, fixed) = match algorithm {
            // Filter-Kruskal's samples (the first 2^18 edges) and each thread's buffers.
            Algorithm::Auto => (
                4 + 2 * w + 16 * (edges.min(1 << 18) as u64) / (edges.max(1) as u64),
                32 << 10,
            ),
            Algorithm::Kruskal => (13 + 12 * w, 0),
            Algorithm::Prim => (33 + 8 * w, 0),
            Algorithm::Boruvka | Algorithm::Strut => (49 + 8 * w, 0),
        };
        Footprint {
            per_edge,
            per_vertex: 40,
            fixed: fixed * rayon::current_num_threads() as u64,
        }
    }

    /// Bytes for `m` edges over `n` vertices.
    fn bytes(&self, n: usize, m: usize) -> u64 {
        (m as u64)
            .saturating_mul(self.per_edge)
            .saturating_add((n as u64).saturating_mul(self.per_vertex))
            .saturating_add(self.fixed)
    }
}

/// Whether `m` edges over `n` vertices fit `limit` bytes in one solve.
pub(super) fn fits(limit: u64, algorithm: Algorithm, wide: bool, n: usize, m: usize) -> bool {
    Footprint::of(algorithm, wide, m).bytes(n, m) <= limit
}

/// The caller's graph and what a part's solve needs to know of it.
pub(super) struct Whole<'a> {
    pub ends: &'a Endpoints<'a>,
    pub weights: Option<Weights<'a>>,
    pub order: KeyOrder,
    pub algorithm: Algorithm,
    pub wide: bool,
    pub limit: u64,
    /// Bytes of the cap already taken beside the parts (the edge list made of a CSR).
    pub held: u64,
}

/// The forest's ids (ascending) of `whole`, solved a part at a time within its cap by
/// `solve_part`, which takes a part's endpoints (positions of the whole kept in
/// order, ids the caller's) and returns its forest's ids.
pub(super) fn solve_in_parts(
    whole: &Whole<'_>,
    solve_part: &dyn Fn(Endpoints<'_>) -> Result<Vec<u64>>,
) -> Result<Vec<u64>> {
    let ends = whole.ends;
    let (n, m) = (ends.num_vertices, ends.u.len());
    // A part's edges hold their ends and ids (16 bytes) beside the solve's arrays.
    let solve = Footprint::of(whole.algorithm, whole.wide, m);
    let per_edge = solve.per_edge + 16;
    // Beside the solve's own: the filter's labels, parents and forest buckets, and
    // what the caller holds under the cap.
    let fixed = solve.bytes(n, 0) + n as u64 * (4 * THRESHOLDS as u64 + 5) + whole.held;
    let room = (whole.limit.saturating_sub(fixed) / per_edge) as usize;
    // Each part brings at least as many new edges as the forest it carries.
    if room < 2 * n.max(1) {
        let least = fixed + 2 * n.max(1) as u64 * per_edge;
        return Err(Error::new(
            Status::OutOfMemory,
            format!(
                "a memory cap of {} bytes is too small for a graph of {n} vertices: its parts need at least {least} bytes ({per_edge} bytes for each of 2n edges, {fixed} for the vertices, the threads and the edge list made of a CSR)",
                whole.limit
            ),
        ));
    }
    // A NaN weight is named as one call names it, before any part (the filter would
    // compare it).
    prepare::reject_nan_in(whole.weights, ends.ids.as_deref(), m)?;
    let priority = PrioritySource::new(whole.weights, ends.ids.as_deref(), whole.order, 0);
    // Positions in the whole list: the forest so far, then the part's survivors.
    let mut part: Vec<u64> = alloc::with_capacity(room, "a part of the edges")?;
    let mut forest_len = 0;
    let mut filter: Option<Filter> = None;
    let mut next = 0;
    loop {
        let take = (room - part.len()).min(m - next);
        let survivors = profile::span("parts: filter", || {
            alloc::par_filter_indices(
                take,
                "a part's surviving edges",
                |i| {
                    let e = next + i;
                    let (a, b) = (ends.u[e], ends.v[e]);
                    a != b
                        && filter
                            .as_ref()
                            .map_or(true, |f| f.keeps(a, b, priority.at(e)))
                },
                |i| (next + i) as u64,
            )
        })?;
        part.extend_from_slice(&survivors);
        drop(survivors);
        next += take;
        let new_edges = part.len() - forest_len;
        if next < m && new_edges < whole_enough(whole.algorithm, room - forest_len) {
            continue;
        }
        // The labels go before the part's solve takes its memory.
        drop(filter.take());
        let forest = if new_edges == 0 {
            // Nothing joined the forest since the last solve (or the graph has only
            // self-loops).
            positions_to_ids(part, ends.ids.as_deref())
        } else {
            let edges = profile::span("parts: gather", || part_endpoints(ends, part))?;
            solve_part(edges)?
        };
        if next == m {
            return Ok(forest);
        }
        part = alloc::with_capacity(room, "a part of the edges")?;
        match &ends.ids {
            None => part.extend_from_slice(&forest),
            Some(ids) => part.extend(forest.iter().map(|id| {
                ids.binary_search(id)
                    .expect("a part's forest holds ids of the whole") as u64
            })),
        }
        drop(forest);
        forest_len = part.len();
        filter = Some(profile::span("parts: labels", || {
            Filter::new(ends, &part, &priority)
        })?);
    }
}

/// How many survivors a part gathers before it is solved, of `room` places. `auto`
/// solves a part for little more than the labels rebuilt after it, so it fills the
/// part (fewer rebuilds: 14-32% less time on 16 cores, 28% on 2); the others pay more
/// for each edge solved than for a rebuild, so they solve at half, when the forest is
/// fresher and the filter stronger (Borůvka 10% faster than full on 2 cores; Kruskal
/// mixed, and on 16 cores a quarter slower on R-MAT when full).
fn whole_enough(algorithm: Algorithm, room: usize) -> usize {
    match algorithm {
        Algorithm::Auto => room - room / 16,
        _ => room / 2,
    }
}

/// The edges at `positions` (ascending) as a graph of their own, each with its ends
/// and its id in the caller's graph.
fn part_endpoints<'a>(ends: &Endpoints<'_>, positions: Vec<u64>) -> Result<Endpoints<'a>> {
    // Sequential: a pass over a part costs little beside its solve, and each parallel
    // loop adds its own code to the library.
    let gather = |side: &[u32]| {
        alloc::collect(
            positions.iter().map(|&p| side[p as usize]),
            "a part's edge ends",
        )
    };
    let (u, v) = (gather(&ends.u)?, gather(&ends.v)?);
    // In place: the positions' array becomes the ids'.
    let ids = positions_to_ids(positions, ends.ids.as_deref());
    Ok(Endpoints {
        num_vertices: ends.num_vertices,
        u: u.into(),
        v: v.into(),
        ids: Some(ids),
        ends_checked: true,
    })
}

/// The forest's components below each of a few priorities.
struct Filter {
    /// Ascending; `labels[j]` are the components of the forest's edges lighter than
    /// `thresholds[j]`, the last being above every forest edge.
    thresholds: Vec<u128>,
    labels: Vec<Vec<u32>>,
}

impl Filter {
    fn new(ends: &Endpoints<'_>, forest: &[u64], priority: &PrioritySource<'_>) -> Result<Self> {
        let n = ends.num_vertices;
        let priority_of = |p: u64| -> u128 { priority.at(p as usize) };
        // No forest edge, no threshold: every edge is kept.
        let Some(heaviest) = forest.iter().map(|&p| priority_of(p)).max() else {
            return Ok(Filter {
                thresholds: Vec::new(),
                labels: Vec::new(),
            });
        };
        // Quantiles of a sample of the forest's priorities, then one above them all.
        let stride = forest.len().div_ceil(32 * THRESHOLDS).max(1);
        let mut sample: Vec<u128> = forest
            .iter()
            .step_by(stride)
            .map(|&p| priority_of(p))
            .collect();
        sample.sort_unstable();
        let mut thresholds: Vec<u128> = (1..THRESHOLDS)
            .map(|j| sample[j * sample.len() / THRESHOLDS])
            .collect();
        thresholds.push(heaviest + 1);
        thresholds.dedup();
        // Each forest edge joins the components from the first threshold above it on.
        let bucket: Vec<u8> = alloc::collect(
            forest
                .iter()
                .map(|&p| thresholds.partition_point(|&t| t <= priority_of(p)) as u8),
            "the forest's threshold buckets",
        )?;
        let mut sets = UnionFind::new(n, 0)?;
        let mut labels = Vec::with_capacity(thresholds.len());
        for j in 0..thresholds.len() {
            for (&p, _) in forest.iter().zip(&bucket).filter(|(_, &b)| b as usize == j) {
                sets.union(ends.u[p as usize], ends.v[p as usize]);
            }
            labels.push(sets.flatten()?);
        }
        Ok(Filter { thresholds, labels })
    }

    /// Whether an edge a-b of `priority` may belong to the forest: not when the forest's
    /// edges lighter than it already join a and b.
    #[inline]
    fn keeps(&self, a: u32, b: u32, priority: u128) -> bool {
        match self.thresholds.partition_point(|&t| t <= priority) {
            0 => true,
            j => {
                let labels = &self.labels[j - 1];
                labels[a as usize] != labels[b as usize]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unweighted edges 0-1 (priority 0) and 1-2 (priority 1).
    fn path() -> Endpoints<'static> {
        Endpoints {
            num_vertices: 3,
            u: vec![0, 1].into(),
            v: vec![1, 2].into(),
            ids: None,
            ends_checked: true,
        }
    }

    #[test]
    fn a_forest_drops_only_edges_it_joins_by_lighter_ones() {
        let ends = path();
        let priority = PrioritySource::new(None, None, KeyOrder::Ascending, 0);
        let none = Filter::new(&ends, &[], &priority).unwrap();
        assert!(
            none.keeps(0, 1, priority.at(1)),
            "no forest keeps every edge"
        );
        let first = Filter::new(&ends, &[0], &priority).unwrap();
        assert!(
            !first.keeps(0, 1, priority.at(1)),
            "joined by a lighter edge"
        );
        assert!(
            first.keeps(0, 1, priority.at(0)),
            "not heavier than the joining edge"
        );
        assert!(first.keeps(1, 2, priority.at(1)), "ends in two trees");
    }
}
