//! Minimum spanning forests split across several devices of a GPU tier
//! (`Options::devices`), where `GPUMST_SPLIT_MIN_EDGES` asks for it.
//!
//! The edges are cut into one contiguous range per device, and every device computes
//! its range's forest at the same time as the others (each from its own host thread,
//! through the one-device driver, [`minimum_spanning_forest`]). Then the forests are
//! merged in pairs, ceil(log2 p) rounds, each pair on the device of its left range:
//! under the strict (weight, id) order the forest of G1 ∪ G2 is the forest of
//! MSF(G1) ∪ MSF(G2) (an edge left out of MSF(G1) is the heaviest of a cycle in G1, so
//! of one in G1 ∪ G2). Positions keep the ids' order (a range's positions follow its
//! left neighbour's, a forest's stay ascending), so ties fall as in one call, and the
//! forest is the one-device forest edge for edge.
//!
//! Splitting is off unless `GPUMST_SPLIT_MIN_EDGES` asks for it: measured on two H200s
//! (docs/performance-log.md, issue 21), every split graph took longer end to end than
//! on one device, 1.1-2x, whether it fit one device or not (R-MAT 22 capped so that
//! each half fits a device: 50-54 ms on one, 75-90 ms split): the host's memory bounds
//! a call from host arrays, and the host's checks of the whole list and its gathers of
//! the forests for the merges cost more than the second device saves. Merging in
//! device memory (peer copies) is what would change it.
//!
//! Nothing here is generic over the weight type or the device kind: the split is
//! compiled once (compiled per weight type and device kind it was 0.4 MB of the
//! installed library, whose mark is 5 MB). The host checks the whole list first, so
//! that a bad edge is named as one device names it.

use rayon::prelude::*;

use super::{minimum_spanning_forest, prepare, DeviceTimings, MsfOptions, Solver};
use crate::graph::{Graph, WeightVec, Weights};
use crate::types::Algorithm;
use crate::{profile, Error, Result};

/// A split forest: its edge ids (ascending) and the devices' timings (the longest of
/// work done at once, summed over the rounds).
pub(super) struct Split {
    pub edges: Vec<u64>,
    pub timings: Option<DeviceTimings>,
}

/// The forest of `graph` split across `solver`'s devices, or None where it is not
/// split: one device, Kruskal or Prim, shares of less than twice a forest (the merges
/// would redo the work), or fewer edges per device than `GPUMST_SPLIT_MIN_EDGES` asks
/// for (unset: never; see the module's documentation). A CSR graph is split as its
/// edge list (each edge once, at the position of its first entry; positions grow with
/// the entries, so ties fall as on one device), whose forest maps back to entries.
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
            && split_min_edges().is_some_and(|least| m / p >= least)
    };
    if !splits(m) {
        return Ok(None);
    }
    let weights = super::weights_used(graph, options);
    let ends = profile::span("validate", || {
        prepare::endpoints(graph, options.unweighted, true, 0)
    })?;
    let m = ends.u.len();
    prepare::reject_nan_in(weights, ends.ids.as_deref(), m)?;
    let Some(ids) = &ends.ids else {
        return split(n, &ends.u, &ends.v, weights, options, solver).map(Some);
    };
    if !splits(m) {
        return Ok(None);
    }
    // The edges' weights by position (CSR weights are per entry).
    let by_position = weights.map(|w| gather_weights(w, ids)).transpose()?;
    let weights = by_position.as_ref().map(WeightVec::as_weights);
    let mut forest = split(n, &ends.u, &ends.v, weights, options, solver)?;
    forest.edges.iter_mut().for_each(|e| *e = ids[*e as usize]);
    Ok(Some(forest))
}

/// The forest of the edge list `u`, `v`, `weights` over `n` vertices (checked), split
/// across `solver`'s devices.
fn split(
    n: usize,
    u: &[u32],
    v: &[u32],
    weights: Option<Weights<'_>>,
    options: &MsfOptions,
    solver: Solver<'_>,
) -> Result<Split> {
    let (p, m) = (solver.devices(), u.len());
    // Each range and merge gets the caller's options but labels, which the caller's
    // call computes once for the whole forest.
    let part = MsfOptions {
        labels: false,
        ..*options
    };
    let ranges: Vec<(usize, usize)> = (0..p).map(|d| (d * m / p, (d + 1) * m / p)).collect();
    let solved = profile::span("split: every range", || {
        on_each_device(p, &|d| {
            let (start, end) = ranges[d];
            let range = Graph::EdgeList {
                num_vertices: n,
                u: &u[start..end],
                v: &v[start..end],
                weights: weights.map(|w| w.slice(start..end)),
            };
            let forest = minimum_spanning_forest(&range, &part, solver.device(d))?;
            let mut edges = forest.edges;
            // (One pass over at most n - 1 ids, on one thread: on all cores this and
            // the merges' mapping below cost 10 KB of a library with a 5 MB mark.)
            edges.iter_mut().for_each(|e| *e += start as u64);
            Ok((edges, forest.device_timings))
        })
    });
    let mut timings = DeviceTimings::default();
    let mut forests = Vec::with_capacity(p);
    for solved in solved {
        let (edges, t) = solved?;
        at_the_same_time(&mut timings, t);
        forests.push(edges);
    }
    // Merge in pairs until one forest is left; the left forest of each pair stays on
    // its device, which solves the pair.
    let mut holders: Vec<usize> = (0..p).collect();
    while forests.len() > 1 {
        let pairs: Vec<(&[u64], &[u64], usize)> = forests
            .chunks_exact(2)
            .zip(holders.iter().step_by(2))
            .map(|(pair, &holder)| (&pair[0][..], &pair[1][..], holder))
            .collect();
        let merged = profile::span("split: merges", || {
            on_each_device(pairs.len(), &|k| {
                let (left, right, holder) = pairs[k];
                let mut joined =
                    crate::alloc::with_capacity(left.len() + right.len(), "two forests")?;
                joined.extend_from_slice(left);
                joined.extend_from_slice(right);
                let (ju, jv) = (gather::<u32>(u, &joined)?, gather::<u32>(v, &joined)?);
                let jw = weights.map(|w| gather_weights(w, &joined)).transpose()?;
                let pair = Graph::EdgeList {
                    num_vertices: n,
                    u: &ju,
                    v: &jv,
                    weights: jw.as_ref().map(WeightVec::as_weights),
                };
                let forest = minimum_spanning_forest(&pair, &part, solver.device(holder))?;
                // Position q of the pair is its q-th edge in the whole list.
                let edges = crate::alloc::collect(
                    forest.edges.iter().map(|&q| joined[q as usize]),
                    "the merged forest",
                )?;
                Ok((edges, forest.device_timings))
            })
        });
        let mut round = DeviceTimings::default();
        let mut next = Vec::with_capacity(forests.len().div_ceil(2));
        for merged in merged {
            let (edges, t) = merged?;
            at_the_same_time(&mut round, t);
            next.push(edges);
        }
        timings.add(&round);
        if forests.len() % 2 == 1 {
            next.push(forests.pop().expect("an odd count is at least one"));
        }
        holders = (0..next.len()).map(|i| holders[2 * i]).collect();
        forests = next;
    }
    Ok(Split {
        edges: forests.pop().unwrap_or_default(),
        timings: Some(timings),
    })
}

/// `GPUMST_SPLIT_MIN_EDGES`: the fewest edges per device for a split (unset: none).
fn split_min_edges() -> Option<usize> {
    std::env::var("GPUMST_SPLIT_MIN_EDGES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
}

/// A part's forest (edge ids ascending) and its device's timings.
type Part = (Vec<u64>, Option<DeviceTimings>);

/// Runs `job` for each of 0..`jobs` at once, one host thread each (every job drives its
/// own device and mostly waits for it), and returns their results in order. (Their
/// host work runs on rayon's global pool, not the context's CPU threads.)
fn on_each_device(jobs: usize, job: &(dyn Fn(usize) -> Result<Part> + Sync)) -> Vec<Result<Part>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..jobs).map(|j| scope.spawn(move || job(j))).collect();
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

/// `values[p]` for each of `positions`.
fn gather<T: Copy + Send + Sync>(values: &[T], positions: &[u64]) -> Result<Vec<T>> {
    crate::alloc::par_collect(
        positions.par_iter().map(|&p| values[p as usize]),
        "two forests' edges",
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

/// Timings of work that ran beside `total`'s: the longer of each.
fn at_the_same_time(total: &mut DeviceTimings, part: Option<DeviceTimings>) {
    let Some(part) = part else { return };
    total.upload_ms = total.upload_ms.max(part.upload_ms);
    total.compute_ms = total.compute_ms.max(part.compute_ms);
    total.download_ms = total.download_ms.max(part.download_ms);
    total.compute_device_ms = match (total.compute_device_ms, part.compute_device_ms) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    total.peak_device_bytes = total.peak_device_bytes.max(part.peak_device_bytes);
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

    /// Its device `d` alone.
    fn device(self, d: usize) -> Self {
        match self {
            cpu @ Solver::Cpu { .. } => cpu,
            Solver::OpenCl(tiers) => Solver::OpenCl(std::slice::from_ref(&tiers[d])),
            Solver::Cuda(tiers) => Solver::Cuda(std::slice::from_ref(&tiers[d])),
        }
    }
}
