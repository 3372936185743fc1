//! Kruskal's algorithm over sorted edges on many threads, by deterministic
//! reservations (Blelloch, Fineman, Gibbons and Shun's framework for parallel loops
//! whose iterations conflict).
//!
//! A window of the next edges in order looks up its ends' trees in parallel, and each
//! tree is reserved for the earliest window edge that touches it. An edge holding one of
//! its two trees joins it to the other: no earlier edge of the window touches that tree,
//! so sequential Kruskal would make the same join. Edges inside one tree drop out; the
//! rest are retried first in the next window. A tree is joined by at most one edge per
//! window, so no cycle forms, and the forest is exactly sequential Kruskal's.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use super::prepare::Priority;
use super::union_find::{find_halving, hook, UnionFind};
use crate::{alloc, profile, Result};

/// Windows hold at most this share of the edges (at least 5 windows), so that the
/// conflicts of one window are resolved before edges far behind it are looked at.
const MAX_WINDOW_SHARE: usize = 5;
/// The smallest window: enough work to spread over every thread.
const MIN_WINDOW: usize = 1 << 12;
/// Elements per parallel task.
const TASK: usize = 1 << 10;

/// An edge (its priority) with the trees, or the vertices, at its two ends.
pub(crate) type Linked<P> = (P, u32, u32);

/// What became of a window's edge.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// It touched no tree it held: it waits for the next window.
    Retry,
    /// It joined two trees: a forest edge.
    Taken,
    /// Its ends were in one tree already.
    Dropped,
}

/// Adds to `forest` the edges of `sorted` (ascending priority) that join two trees of
/// `sets`, in order, joining them as it goes: Kruskal's pass over `sorted`.
pub(crate) fn kruskal_reserving<P: Priority>(
    sorted: &[P],
    u: &[u32],
    v: &[u32],
    sets: &mut UnionFind,
    forest: &mut Vec<usize>,
) -> Result<()> {
    let parents = sets.parents();
    // Per tree: the complement of the earliest window index that reserved it (0 = free).
    // A holder always decides its edge, then frees the cell or hooks its tree under
    // another, so at the end of a window every root's cell is free again.
    let holder: Vec<AtomicU32> = alloc::zeroed(parents.len(), "the trees' reservations")?;
    let most = (sorted.len() / MAX_WINDOW_SHARE).clamp(MIN_WINDOW, u32::MAX as usize - 1);
    // Edges of the window with the trees of their ends (the previous window's found
    // trees are where the next lookups of a retried edge start).
    let mut window: Vec<Linked<P>> = alloc::with_capacity(most, "a window of sorted edges")?;
    let mut outcomes = alloc::filled(most, Outcome::Retry, "a window's outcomes")?;
    // The window grows while few of its edges conflict and shrinks while many do.
    let mut size = (most / 4).max(MIN_WINDOW);
    let mut next = 0;
    loop {
        let fresh = size.saturating_sub(window.len()).min(sorted.len() - next);
        profile::span("auto: fill the window", || {
            window.par_extend(sorted[next..next + fresh].par_iter().map(|&p| {
                let e = p.position();
                (p, u[e], v[e])
            }))
        });
        next += fresh;
        if window.is_empty() {
            return Ok(());
        }
        let outcomes = &mut outcomes[..window.len()];
        profile::span("auto: reserve", || {
            window
                .par_iter_mut()
                .enumerate()
                .with_min_len(TASK)
                .for_each(|(i, edge)| {
                    // Nothing links trees during this pass, so lookups may halve paths.
                    let (a, b) = (find_halving(parents, edge.1), find_halving(parents, edge.2));
                    (edge.1, edge.2) = (a, b);
                    if a != b {
                        let mine = !(i as u32);
                        for tree in [a, b] {
                            let cell = &holder[tree as usize];
                            // Most edges lose to an earlier one and write nothing.
                            if cell.load(Relaxed) < mine {
                                cell.fetch_max(mine, Relaxed);
                            }
                        }
                    }
                })
        });
        profile::span("auto: commit", || {
            outcomes
                .par_iter_mut()
                .zip(window.par_iter())
                .enumerate()
                .with_min_len(TASK)
                .for_each(|(i, (outcome, &(_, a, b)))| {
                    let holds = |tree: u32| holder[tree as usize].load(Relaxed) == !(i as u32);
                    // Each hook is of a root this edge holds, which no other edge of
                    // the window hooks, and nothing looks trees up meanwhile.
                    *outcome = if a == b {
                        Outcome::Dropped
                    } else if holds(b) {
                        hook(parents, b, a);
                        if holds(a) {
                            holder[a as usize].store(0, Relaxed);
                        }
                        Outcome::Taken
                    } else if holds(a) {
                        hook(parents, a, b);
                        Outcome::Taken
                    } else {
                        Outcome::Retry
                    };
                })
        });
        let outcomes = &outcomes[..];
        let decided = |i: usize, outcome: Outcome| outcomes[i] == outcome;
        let retries = profile::span("auto: collect the taken and retried edges", || {
            forest.par_extend(
                (0..window.len())
                    .into_par_iter()
                    .with_min_len(TASK)
                    .filter(|&i| decided(i, Outcome::Taken))
                    .map(|i| window[i].0.position()),
            );
            alloc::par_collect_ranges(window.len(), "the retried edges", |range, out| {
                out.extend(
                    range
                        .filter(|&i| decided(i, Outcome::Retry))
                        .map(|i| window[i]),
                )
            })
        })?;
        let conflicts = retries.len() as f64 / window.len() as f64;
        if conflicts > 0.2 {
            size = (size / 2).max(MIN_WINDOW);
        } else if conflicts < 0.1 {
            size = (size * 2).min(most);
        }
        window.clear();
        window.par_extend(retries.par_iter().copied());
    }
}
