//! Minimum spanning forests of large graphs split across several devices of a GPU
//! tier (`Options::devices`).
//!
//! The edges are cut into one contiguous range per device, and every device computes
//! its range's forest at the same time as the others (each from its own host thread).
//! Each device brings back its forest's positions, ends and weights (gathered on the
//! device), so the host never gathers them from the caller's arrays. Then the forests
//! are merged in pairs, ceil(log2 p) rounds, each pair on the device of its left
//! range: under the strict (key, id) order the forest of G1 ∪ G2 is the
//! forest of MSF(G1) ∪ MSF(G2) (an edge left out of MSF(G1) is the heaviest of a cycle
//! in G1, so of one in G1 ∪ G2). Positions keep the ids' order (a range's positions
//! follow its left neighbour's, a forest's stay ascending), so ties fall as in one
//! call, and the forest is the one-device forest edge for edge.
//!
//! A graph is split only where it does not fit the first device's memory (or its
//! cap): one device would solve it a partition after another, each carrying the
//! forest so far; split, every device takes its share of the partitions at once. A
//! graph that fits one device stays there: measured on two H200s (docs/
//! performance-log.md, issue 21), with both ranges' forests coming back through the
//! host for the merge, a split R-MAT scale 24 (268M edges) took 136 ms end to end
//! against 100 ms on one device, uniform random and smaller graphs lost more.

use rayon::prelude::*;

use super::partitioned::{self, ForestArrays};
use super::prepare::WeightKey;
use super::{device_adjacency, Result};
use crate::tier::gpu::msf::resident::{self, Finding, HostEdges, ResidentOutcome, Work};
use crate::tier::gpu::msf::DeviceTimings;
use crate::tier::gpu::{Device, Gpu};
use crate::types::Element;
use crate::{alloc, profile, Error};

/// Whether `m` edges over `n` vertices are split across `devices` devices:
/// `fits_first` says whether the first device takes them in one call. Each device's
/// share must be at least twice a forest (else the merges redo the work).
/// `GPUMST_SPLIT_MIN_EDGES` (a test knob) also splits graphs that fit, from that many
/// edges per device, so that small graphs exercise the split.
pub(super) fn worth_splitting(m: usize, n: usize, devices: usize, fits_first: bool) -> bool {
    if devices < 2 || m / devices < 2 * n.max(1) {
        return false;
    }
    let forced_from = std::env::var("GPUMST_SPLIT_MIN_EDGES")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok());
    !fits_first || forced_from.is_some_and(|least| m / devices >= least)
}

/// The forest of the edge list `u`, `v`, `weights` over `n` vertices, split across
/// `tiers` (at least two): the outcome (an invalid edge is the first the host would
/// name, as a position of the whole list) and the forest's positions, ascending.
/// `ends_checked`: the host has checked every end already.
pub(super) fn solve<D: Device, W: WeightKey + Element>(
    tiers: &[&Gpu<D>],
    n: usize,
    u: &[u32],
    v: &[u32],
    weights: Option<&[W]>,
    work: &Work,
    ends_checked: bool,
) -> Result<(ResidentOutcome<W>, Vec<u64>)> {
    let m = u.len();
    let p = tiers.len();
    let fits: Vec<usize> = tiers
        .iter()
        .map(|tier| {
            resident::host_edges_that_fit::<D, W>(tier, n, work.algorithm, weights.is_some())
        })
        .collect();
    let ranges: Vec<(usize, usize)> = (0..p).map(|i| (i * m / p, (i + 1) * m / p)).collect();
    // A range (or a merge) larger than its device takes is solved in partitions, whose
    // devices see only their part: then the host checks everything first, so that the
    // first bad edge of the whole list is the one named.
    let partitions = ranges
        .iter()
        .zip(&fits)
        .any(|(&(s, e), &fit)| e - s > fit || 2 * n > fit);
    if partitions {
        if !ends_checked {
            super::prepare::check_edge_list_ends(u, v, n)?;
        }
        if let Some(w) = weights {
            super::prepare::reject_nan(w, None, m)?;
        }
    }
    let solved = profile::span("split: every range", || {
        on_each_device(
            ranges.iter().zip(tiers.iter().zip(&fits)).collect(),
            |(&(s, e), (tier, &fit))| {
                let weights = weights.map(|w| [&w[s..e]]);
                let edges = HostEdges {
                    num_vertices: n,
                    u: &[&u[s..e]],
                    v: &[&v[s..e]],
                    weights: weights.as_ref().map(|w| &w[..]),
                };
                solve_fitting(tier, fit, &edges, work, true)
            },
        )
    });
    let mut timings = DeviceTimings::default();
    let mut forests: Vec<ForestArrays<W>> = Vec::with_capacity(p);
    let mut first_bad: Option<Finding> = None;
    for (solved, &(start, _)) in solved.into_iter().zip(&ranges) {
        match solved? {
            Ok((mut forest, t)) => {
                at_the_same_time(&mut timings, &t);
                forest
                    .positions
                    .par_iter_mut()
                    .for_each(|q| *q += start as u64);
                forests.push(forest);
            }
            Err(finding) => {
                let finding = shifted(finding, start);
                if first_bad.map_or(true, |bad| named_first(finding) < named_first(bad)) {
                    first_bad = Some(finding);
                }
            }
        }
    }
    if let Some(finding) = first_bad {
        return Ok((ResidentOutcome::Invalid(finding), Vec::new()));
    }
    // Merge in pairs until one forest is left; the left forest of each pair stays on
    // its device, which solves the pair. The last merge needs only positions.
    let mut holders: Vec<usize> = (0..p).collect();
    while forests.len() > 1 {
        let last = forests.len() == 2;
        let pairs: Vec<(&ForestArrays<W>, &ForestArrays<W>, usize)> = forests
            .chunks_exact(2)
            .zip(holders.iter().step_by(2))
            .map(|(pair, &holder)| (&pair[0], &pair[1], holder))
            .collect();
        let weighted = weights.is_some();
        let merged = profile::span("split: merges", || {
            on_each_device(pairs, |(left, right, holder)| {
                merge_pair(
                    tiers[holder],
                    fits[holder],
                    left,
                    right,
                    n,
                    weighted,
                    work,
                    !last,
                )
            })
        });
        let mut round = DeviceTimings::default();
        let mut next = Vec::with_capacity(forests.len().div_ceil(2));
        for merged in merged {
            let (forest, t) = merged?;
            at_the_same_time(&mut round, &t);
            next.push(forest);
        }
        partitioned::add(&mut timings, &round);
        if forests.len() % 2 == 1 {
            next.push(forests.pop().expect("an odd count is at least one"));
        }
        holders = (0..next.len()).map(|i| holders[2 * i]).collect();
        forests = next;
    }
    let forest = forests.pop().map(|f| f.positions).unwrap_or_default();
    let outcome = ResidentOutcome::Forest {
        count: forest.len(),
        weights: None,
        ends: None,
        timings,
    };
    Ok((outcome, forest))
}

/// Runs `job` on each of `jobs` at once, one host thread each (every job drives its
/// own device and mostly waits for it), and returns their results in order.
fn on_each_device<J: Send, R: Send>(
    jobs: Vec<J>,
    job: impl Fn(J) -> Result<R> + Sync,
) -> Vec<Result<R>> {
    let job = &job;
    std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|j| scope.spawn(move || job(j)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Error::internal("a device's part of the forest panicked"))
                })
            })
            .collect()
    })
}

/// The forest of two forests (`left`'s positions all below `right`'s) on `tier`, with
/// its ends and weights where `arrays` (for a later merge).
#[allow(clippy::too_many_arguments)]
fn merge_pair<D: Device, W: Element>(
    tier: &Gpu<D>,
    fit: usize,
    left: &ForestArrays<W>,
    right: &ForestArrays<W>,
    n: usize,
    weighted: bool,
    work: &Work,
    arrays: bool,
) -> Result<(ForestArrays<W>, DeviceTimings)> {
    let weights = weighted.then(|| [&left.w[..], &right.w[..]]);
    let edges = HostEdges {
        num_vertices: n,
        u: &[&left.u, &right.u],
        v: &[&left.v, &right.v],
        weights: weights.as_ref().map(|w| &w[..]),
    };
    let solved = profile::span("split: merge solve", || {
        solve_fitting(tier, fit, &edges, work, arrays)
    })?;
    let Ok((mut forest, timings)) = solved else {
        return Err(Error::internal(
            "a device found a bad edge among two forests",
        ));
    };
    // Position q of the joined arrays is left's q-th edge, or right's (q - |left|)-th.
    let split = left.positions.len();
    forest.positions.par_iter_mut().for_each(|q| {
        let i = *q as usize;
        *q = if i < split {
            left.positions[i]
        } else {
            right.positions[i - split]
        };
    });
    Ok((forest, timings))
}

/// Solves `edges` on `tier`: in one call where they fit, else in partitions (whose
/// ends the host has checked, see [`solve`]). The forest's positions in `edges`, with
/// their ends and weights where `arrays`; or the first bad edge the device found.
fn solve_fitting<D: Device, W: Element>(
    tier: &Gpu<D>,
    fit: usize,
    edges: &HostEdges<'_, W>,
    work: &Work,
    arrays: bool,
) -> Result<std::result::Result<(ForestArrays<W>, DeviceTimings), Finding>> {
    let n = edges.num_vertices;
    let m: usize = edges.u.iter().map(|p| p.len()).sum();
    if m <= fit || fit < 2 * n.max(1) {
        // (Where even partitions cannot fit, the call refuses the graph with the sizes.)
        let work = Work {
            forest_weights: arrays && edges.weights.is_some(),
            forest_ends: arrays,
            ..*work
        };
        let (outcome, positions) = resident::solve_host(tier, edges, &work, device_adjacency)?;
        return Ok(match outcome {
            ResidentOutcome::Forest {
                weights,
                ends,
                timings,
                ..
            } => {
                let (u, v) = ends.unwrap_or_default();
                let w = weights.unwrap_or_default();
                Ok((ForestArrays { positions, u, v, w }, timings))
            }
            ResidentOutcome::Invalid(finding) => Err(finding),
        });
    }
    let (u, v) = (joined(edges.u)?, joined(edges.v)?);
    let w = edges.weights.map(joined).transpose()?;
    let (forest, timings) =
        partitioned::solve_in_partitions(tier, n, &u, &v, w.as_deref(), work, fit)?;
    Ok(Ok((forest, timings)))
}

/// The pieces of an array as one slice: the piece itself where there is one (a
/// range of the caller's arrays: copying it would cost more than solving it), else
/// the pieces copied one after the other (two forests).
fn joined<'a, T: Copy + Send + Sync>(pieces: &[&'a [T]]) -> Result<std::borrow::Cow<'a, [T]>> {
    if let [piece] = pieces {
        return Ok(std::borrow::Cow::Borrowed(piece));
    }
    let total = pieces.iter().map(|p| p.len()).sum();
    let all = alloc::par_collect(
        (0..total).into_par_iter().map(|i| {
            let mut i = i;
            for piece in pieces {
                if i < piece.len() {
                    return piece[i];
                }
                i -= piece.len();
            }
            unreachable!("an index below the pieces' total length")
        }),
        "a device's edges joined",
    )?;
    Ok(std::borrow::Cow::Owned(all))
}

/// The order in which the host checks an edge list: every u, then every v, then the
/// weights, each from the first edge on.
fn named_first(finding: Finding) -> (u8, usize) {
    match finding {
        Finding::EndOutOfRange { u: true, edge, .. } => (0, edge),
        Finding::EndOutOfRange { u: false, edge, .. } => (1, edge),
        Finding::NanWeight { edge } => (2, edge),
    }
}

/// A finding of a range that starts at `start`, as a position of the whole list.
fn shifted(finding: Finding, start: usize) -> Finding {
    match finding {
        Finding::EndOutOfRange { u, edge, value } => Finding::EndOutOfRange {
            u,
            edge: edge + start,
            value,
        },
        Finding::NanWeight { edge } => Finding::NanWeight { edge: edge + start },
    }
}

/// Timings of work that ran beside `total`'s: the longer of each.
fn at_the_same_time(total: &mut DeviceTimings, part: &DeviceTimings) {
    total.upload_ms = total.upload_ms.max(part.upload_ms);
    total.compute_ms = total.compute_ms.max(part.compute_ms);
    total.download_ms = total.download_ms.max(part.download_ms);
    total.compute_device_ms = match (total.compute_device_ms, part.compute_device_ms) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    total.peak_device_bytes = total.peak_device_bytes.max(part.peak_device_bytes);
}
