//! Minimum spanning forests: the algorithms of the founding papers, and the driver
//! that validates a graph, runs one, and assembles the result.

/// Runs `$body` with `$w` bound to the typed weight slice (or `None` for unweighted).
macro_rules! with_weights {
    ($weights:expr, $w:ident => $body:expr) => {
        match $weights {
            None => {
                let $w: Option<&[u32]> = None;
                $body
            }
            Some(Weights::I32(s)) => {
                let $w = Some(s);
                $body
            }
            Some(Weights::U32(s)) => {
                let $w = Some(s);
                $body
            }
            Some(Weights::I64(s)) => {
                let $w = Some(s);
                $body
            }
            Some(Weights::U64(s)) => {
                let $w = Some(s);
                $body
            }
            Some(Weights::F32(s)) => {
                let $w = Some(s);
                $body
            }
            Some(Weights::F64(s)) => {
                let $w = Some(s);
                $body
            }
        }
    };
}

mod across_devices;
mod adjacency;
mod boruvka;
mod contract;
mod filter_kruskal;
mod kruskal;
mod light_boruvka;
mod live;
mod on_device;
mod partitioned;
mod prepare;
mod prim;
mod radix;
mod reserving_kruskal;
mod streamed;
mod strut;
mod union_find;

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rayon::prelude::*;

use crate::graph::{Graph, Weights};
use crate::kept;
use crate::tier::cuda::CudaTier;
use crate::tier::gpu::msf::resident::{self, ResidentOutcome};
pub use crate::tier::gpu::msf::DeviceTimings;
use crate::tier::gpu::msf::{DeviceCsr, DeviceKeys, DeviceProblem};
use crate::tier::gpu::{self, Device, Gpu};
use crate::tier::opencl::OpenClTier;
pub use crate::types::Algorithm;
use crate::types::Element;
use crate::{alloc, profile, Error, Result, Tier};
pub(crate) use on_device::{forest_labels_on_device, minimum_spanning_forest_on_device};
pub use on_device::{DeviceCsrGraph, DeviceForest, DeviceGraph, DeviceInput, DeviceOutput};
use prepare::{Prepared, Priority, WeightKey};
use union_find::UnionFind;

/// Exact total weight of a forest: integers summed in i128, floats in f64, both in
/// ascending edge-id order so every tier gives the same bits. An unweighted forest
/// weighs its edge count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TotalWeight {
    Int(i128),
    Float(f64),
}

impl fmt::Display for TotalWeight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TotalWeight::Int(x) => write!(f, "{x}"),
            TotalWeight::Float(x) => write!(f, "{x}"),
        }
    }
}

/// A minimum spanning forest. Equality compares the forest, not the timings.
#[derive(Debug, Clone)]
pub struct Forest {
    /// Edge ids of the forest, ascending.
    pub edges: Vec<u64>,
    pub num_vertices: usize,
    /// Connected components (isolated vertices included).
    pub num_components: usize,
    pub total_weight: TotalWeight,
    /// Per vertex, the smallest vertex id of its component (when asked for).
    pub labels: Option<Vec<u32>>,
    /// Set when a GPU tier computed the forest.
    pub device_timings: Option<DeviceTimings>,
    /// The tier that ran the call.
    pub tier: Tier,
}

impl PartialEq for Forest {
    fn eq(&self, other: &Self) -> bool {
        self.edges == other.edges
            && self.num_vertices == other.num_vertices
            && self.num_components == other.num_components
            && self.total_weight == other.total_weight
            && self.labels == other.labels
    }
}

/// What to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsfOptions {
    pub algorithm: Algorithm,
    /// Fill [`Forest::labels`].
    pub labels: bool,
    /// Ignore weights: the spanning forest of lowest edge ids.
    pub unweighted: bool,
    /// The maximum spanning forest instead: edges ordered by (weight descending, edge
    /// id ascending), so ties still fall to the lower id.
    pub maximum: bool,
}

impl Default for MsfOptions {
    fn default() -> Self {
        MsfOptions {
            algorithm: Algorithm::Auto,
            labels: false,
            unweighted: false,
            maximum: false,
        }
    }
}

/// Where the algorithm runs. Validation, weight keys and the assembly of the result
/// are shared; Kruskal, the sequential reference, always runs on the host.
#[derive(Clone, Copy)]
pub(crate) enum Solver<'a> {
    /// All cores; `memory_limit` bytes (0: none) for a call's working arrays, over
    /// which the edges are taken a part at a time (`streamed.rs`).
    Cpu {
        memory_limit: u64,
    },
    /// A GPU tier's devices: the first runs everything, the others take part in
    /// forests split across devices (`across_devices.rs`).
    OpenCl(&'a [&'a OpenClTier]),
    Cuda(&'a [&'a CudaTier]),
}

impl Solver<'_> {
    fn tier(self) -> Tier {
        match self {
            Solver::Cpu { .. } => Tier::Cpu,
            Solver::OpenCl(_) => Tier::OpenCl,
            Solver::Cuda(_) => Tier::Cuda,
        }
    }
}

/// Both directions of every edge (self-loops dropped, parallel edges merged to the
/// lightest) as CSR arrays for a device: offsets, targets, edge positions. Needs
/// 2m < 2^32 (device kernels index entries with 32 bits).
pub(crate) fn device_adjacency(problem: &DeviceProblem<'_>) -> Result<DeviceCsr> {
    const WHAT: &str = "the edge priorities";
    let (n, u, v) = (problem.num_vertices, problem.u, problem.v);
    let adjacency = adjacency::Adjacency::of_edges(n, u, v)?;
    let adjacency = match &problem.keys {
        Some(DeviceKeys::Wide(keys)) => {
            let priorities: Vec<u128> = alloc::par_collect(
                keys.par_iter()
                    .enumerate()
                    .map(|(e, &k)| Priority::new(k, e)),
                WHAT,
            )?;
            adjacency.merge_parallel_edges(&priorities)?
        }
        keys => {
            let key = |e: usize| match keys {
                Some(DeviceKeys::Narrow(k)) => k[e] as u64,
                _ => 0,
            };
            let priorities: Vec<u64> = alloc::par_collect(
                (0..u.len())
                    .into_par_iter()
                    .map(|e| Priority::new(key(e), e)),
                WHAT,
            )?;
            adjacency.merge_parallel_edges(&priorities)?
        }
    };
    let offsets = alloc::par_collect(
        adjacency.offsets.par_iter().map(|&o| o as u32),
        "the device adjacency offsets",
    )?;
    let entries = &adjacency.entries;
    let targets = alloc::par_collect(entries.par_iter().map(|e| e.0), "the device targets")?;
    let edges = alloc::par_collect(entries.par_iter().map(|e| e.1), "the device edge list")?;
    Ok((offsets, targets, edges))
}

/// Validates `graph`, runs the algorithm on `solver`, and assembles the forest.
pub(crate) fn minimum_spanning_forest(
    graph: &Graph<'_>,
    options: &MsfOptions,
    solver: Solver<'_>,
) -> Result<Forest> {
    let weights = weights_used(graph, options);
    let solved = match across_devices::solve(graph, options, solver)? {
        Some(split) => Solved {
            edges: split.edges,
            timings: split.timings,
            total: split.total,
        },
        None => {
            // A GPU tier checks an edge list's ends on the device (same messages),
            // unless the host runs the algorithm or renumbers the vertices first.
            let device_checks_ends = match (graph, solver) {
                (
                    Graph::EdgeList {
                        num_vertices, u, ..
                    },
                    Solver::OpenCl(_) | Solver::Cuda(_),
                ) => {
                    !matches!(options.algorithm, Algorithm::Kruskal | Algorithm::Prim)
                        && prepare::keeps_vertex_numbers(*num_vertices, u.len())
                }
                _ => false,
            };
            // A CPU context's cap bounds a CSR's check and the edge list made of it.
            let memory_limit = match solver {
                Solver::Cpu { memory_limit } => memory_limit,
                _ => 0,
            };
            let ends = profile::span("validate", || {
                prepare::endpoints(graph, options.unweighted, !device_checks_ends, memory_limit)
            })?;
            with_weights!(weights, w => solve_typed(ends, w, options, solver))?
        }
    };
    Ok(Forest {
        device_timings: solved.timings,
        ..forest_of(graph, options, solved.edges, solved.total, solver.tier())?
    })
}

/// An algorithm's run: the forest's edge ids (ascending), a GPU tier's timings, and the
/// forest's total weight where the device added it up.
struct Solved {
    edges: Vec<u64>,
    timings: Option<DeviceTimings>,
    total: Option<TotalWeight>,
}

/// The graph's weights unless the options ask for an unweighted forest.
fn weights_used<'g>(graph: &Graph<'g>, options: &MsfOptions) -> Option<Weights<'g>> {
    match graph {
        Graph::EdgeList { weights, .. } | Graph::Csr { weights, .. } => {
            weights.filter(|_| !options.unweighted)
        }
    }
}

/// The forest of `graph` whose edge ids (ascending) are `edges`, with its total weight
/// (`total` where the device found it) and, if `options` ask, its labels: the last
/// step of every MSF call, also for a forest found otherwise (the MPI merges' result).
/// `tier` is the tier to report.
pub(crate) fn forest_of(
    graph: &Graph<'_>,
    options: &MsfOptions,
    edges: Vec<u64>,
    total: Option<TotalWeight>,
    tier: Tier,
) -> Result<Forest> {
    let weights = weights_used(graph, options);
    let num_vertices = graph.num_vertices();
    let total_weight = match total {
        Some(total) => total,
        None => profile::span(
            "total weight",
            || with_weights!(weights, w => total_weight(w, &edges)),
        ),
    };
    let labels = options
        .labels
        .then(|| profile::span("labels", || component_labels(num_vertices, graph, &edges)))
        .transpose()?;
    Ok(Forest {
        num_components: num_vertices - edges.len(),
        edges,
        num_vertices,
        total_weight,
        labels,
        device_timings: None,
        tier,
    })
}

/// Runs `algorithm` on a GPU tier: the forest's edge ids (ascending) and timings. The
/// arrays go up as they are and the device checks them, computes their keys and
/// numbers the forest (the pipeline of graphs already in device memory); Prim, whose
/// adjacency the host builds, takes the host's keys, except in partitions (a graph over
/// the device's memory), which go through that pipeline for every algorithm.
fn solve_on_gpu<D: Device, W: WeightKey + Element>(
    tier: &Gpu<D>,
    ends: prepare::Endpoints<'_>,
    weights: Option<&[W]>,
    options: &MsfOptions,
) -> Result<Solved> {
    let m = ends.u.len();
    let algorithm = options.algorithm;
    let ids = ends.ids.as_deref();
    let n = ends.num_vertices;
    let fit = resident::host_edges_that_fit::<D, W>(tier, n, algorithm, weights.is_some());
    // In partitions where the device holds the vertices' arrays and room for twice a
    // forest (each partition then brings at least n - 1 new edges); otherwise one call
    // refuses the graph with the sizes.
    let in_partitions = m > fit && fit >= 2 * n.max(1);
    // A graph over the device's memory that partitions cannot take either: the refusal
    // also says how much memory partitions would need.
    let least = resident::least_for_partitions::<W>(n, algorithm, weights.is_some(), 0);
    let refused = |e: Error| match m > fit {
        true => resident::with_least_for_partitions(e, (n, m), least),
        false => e,
    };
    if algorithm == Algorithm::Prim && !in_partitions {
        let order = prepare::KeyOrder::of(options);
        let problem = DeviceProblem {
            num_vertices: ends.num_vertices,
            u: &ends.u,
            v: &ends.v,
            keys: profile::span("device keys", || {
                prepare::device_keys(weights, ids, m, order)
            })?,
            adjacency: device_adjacency,
        };
        let (positions, timings) = profile::span("device solve", || {
            gpu::msf::solve(tier, &problem, algorithm)
        })
        .map_err(refused)?;
        let forest = profile::span("forest edge ids", || {
            chosen_ids(m, |e| positions[e] != 0, ids)
        })?;
        return Ok(Solved {
            edges: forest,
            timings: Some(timings),
            total: None,
        });
    }
    // CSR weights are per entry: checked here (a NaN on a self-loop's entry counts
    // too), then taken by edge position.
    let weights: Option<Cow<'_, [W]>> = match (weights, ids) {
        (Some(w), Some(ids)) => profile::span("device weights", || {
            prepare::reject_nan(w, Some(ids), m)?;
            alloc::par_collect(
                ids.par_iter().map(|&id| w[id as usize]),
                "the edges' weights",
            )
            .map(Cow::Owned)
        })
        .map(Some)?,
        (w, _) => w.map(Cow::Borrowed),
    };
    let work = resident::Work {
        algorithm,
        descending: options.maximum,
        // Floats are summed here, from the caller's weights.
        total: resident::Total::OfIntegers,
        device_clock: true,
    };
    if in_partitions {
        let solved = profile::span("device solve in partitions", || {
            partitioned::solve_in_partitions(
                tier,
                n,
                &ends.u,
                &ends.v,
                weights.as_deref(),
                &work,
                fit,
            )
        })?;
        if let Some((positions, sum, timings)) = solved {
            return Ok(Solved {
                edges: positions_to_ids(positions, ids),
                timings: Some(timings),
                total: sum.map(TotalWeight::Int),
            });
        }
        // A partition's device found a bad edge, but it sees only its part: the host
        // names the first of the whole list, as one call does (a bad u anywhere before
        // any bad v, then the first NaN), which a later partition may hold. Checked
        // only now, so valid graphs never pay for a pass over the list on the host.
        // (CSR weights were checked above.)
        if !ends.ends_checked {
            prepare::check_edge_list_ends(&ends.u, &ends.v, n)?;
        }
        if let (Some(w), None) = (&weights, ids) {
            prepare::reject_nan(w, None, m)?;
        }
        return Err(Error::internal(
            "a partition's device found a bad edge that the host's checks did not",
        ));
    }
    let (outcome, positions) = profile::span("device solve", || {
        let weights: Option<[&[W]; 1]> = weights.as_deref().map(|w| [w]);
        let edges = resident::HostEdges {
            num_vertices: n,
            u: &[&ends.u],
            v: &[&ends.v],
            weights: weights.as_ref().map(|w| &w[..]),
        };
        resident::solve_host(tier, &edges, &work, device_adjacency)
    })
    .map_err(refused)?;
    match outcome {
        ResidentOutcome::Forest {
            timings,
            weight_sum,
            ..
        } => Ok(Solved {
            edges: positions_to_ids(positions, ids),
            timings: Some(timings),
            total: weight_sum.map(TotalWeight::Int),
        }),
        ResidentOutcome::Invalid(finding) => {
            Err(on_device::finding_error(finding, ends.num_vertices, ids))
        }
    }
}

/// Edge ids of edge positions (CSR ids grow with position: still ascending).
fn positions_to_ids(positions: Vec<u64>, ids: Option<&[u64]>) -> Vec<u64> {
    match ids {
        None => positions,
        Some(ids) => positions.into_iter().map(|p| ids[p as usize]).collect(),
    }
}

/// Runs the algorithm on `solver`'s tier.
fn solve_typed<W: WeightKey + Element>(
    ends: prepare::Endpoints<'_>,
    weights: Option<&[W]>,
    options: &MsfOptions,
    solver: Solver<'_>,
) -> Result<Solved> {
    // Union-find over calloc'd memory costs nothing per isolated vertex; everything
    // else (vertex-centric algorithms, device buffers) works on the touched vertices.
    let ends = match (options.algorithm, solver) {
        // Under a memory cap too: renumbering takes memory per edge.
        (Algorithm::Kruskal, _) | (Algorithm::Auto, Solver::Cpu { .. }) => ends,
        (_, Solver::Cpu { memory_limit }) if memory_limit > 0 => ends,
        _ => profile::span("drop isolated vertices", || {
            ends.without_isolated_vertices()
        })?,
    };
    match solver {
        // A forest split across devices was taken before (`across_devices`): here the
        // first device solves the graph.
        Solver::OpenCl(tiers) if options.algorithm != Algorithm::Kruskal => {
            solve_on_gpu(tiers[0], ends, weights, options)
        }
        Solver::Cuda(tiers) if options.algorithm != Algorithm::Kruskal => {
            solve_on_gpu(tiers[0], ends, weights, options)
        }
        Solver::Cpu { memory_limit } => solve_on_cpu(ends, weights, options, memory_limit),
        // Kruskal on a GPU tier's context: host memory is not capped there.
        _ => solve_on_cpu(ends, weights, options, 0),
    }
}

/// [`solve_typed`] on the CPU tier (and Kruskal everywhere), picking the narrowest
/// priority type; a part of the edges at a time where the whole would not fit
/// `memory_limit` bytes (0: no limit).
fn solve_on_cpu<W: WeightKey>(
    ends: prepare::Endpoints<'_>,
    weights: Option<&[W]>,
    options: &MsfOptions,
    memory_limit: u64,
) -> Result<Solved> {
    let m = ends.u.len();
    let order = prepare::KeyOrder::of(options);
    // Narrow priorities (half the memory traffic) when every key fits 32 bits, if need
    // be after taking away the least key: 64-bit weights with a small range, such as
    // the int64 numbers of most Python and Julia callers. Strictly below 2^32
    // positions, so no packed priority can equal `Priority::NONE`.
    let narrow_from = match weights {
        _ if (m as u64) >= 1 << 32 => None,
        Some(w) if !W::NARROW => prepare::narrow_key_offset(w, order),
        _ => Some(0),
    };
    // From here on the weights' type is matched per edge: the algorithms are compiled
    // once per priority type, not once per weight type too.
    solve_within(
        ends,
        weights.map(W::as_weights),
        options,
        narrow_from,
        memory_limit,
    )
}

/// [`solve_on_cpu`] past the choice of priorities: narrow less `narrow_from`'s key,
/// or wide where it is `None`.
fn solve_within(
    ends: prepare::Endpoints<'_>,
    weights: Option<Weights<'_>>,
    options: &MsfOptions,
    narrow_from: Option<u64>,
    memory_limit: u64,
) -> Result<Solved> {
    let solve_part = |ends: prepare::Endpoints<'_>| match narrow_from {
        Some(least) => solve::<u64>(ends, weights, options, least).map(|(edges, _)| edges),
        None => solve::<u128>(ends, weights, options, 0).map(|(edges, _)| edges),
    };
    let wide = narrow_from.is_none();
    let (n, m) = (ends.num_vertices, ends.u.len());
    // The edge list made of a CSR graph is held beside the solve's arrays.
    let held = match ends.ids {
        Some(_) => m as u64 * prepare::CSR_EDGE_BYTES,
        None => 0,
    };
    let edges = if memory_limit == 0
        || streamed::fits(
            memory_limit.saturating_sub(held),
            options.algorithm,
            wide,
            n,
            m,
        ) {
        solve_part(ends)?
    } else {
        let whole = streamed::Whole {
            ends: &ends,
            weights,
            order: prepare::KeyOrder::of(options),
            algorithm: options.algorithm,
            wide,
            limit: memory_limit,
            held,
        };
        profile::span("solve in parts", || {
            streamed::solve_in_parts(&whole, &solve_part)
        })?
    };
    Ok(Solved {
        edges,
        timings: None,
        total: None,
    })
}

fn solve<P: Priority>(
    ends: prepare::Endpoints<'_>,
    weights: Option<Weights<'_>>,
    options: &MsfOptions,
    least_key: u64,
) -> Result<(Vec<u64>, usize)> {
    let m = ends.u.len();
    let algorithm = options.algorithm;
    // Borůvka, Prim and strut keep edge positions in 4-byte entries.
    if matches!(
        algorithm,
        Algorithm::Boruvka | Algorithm::Prim | Algorithm::Strut
    ) && m as u64 >= u32::MAX as u64
    {
        return Err(Error::invalid_argument(format!(
            "the {algorithm} algorithm handles fewer than 2^32 - 1 edges (this graph has {m}); use auto or kruskal"
        )));
    }
    let order = prepare::KeyOrder::of(options);
    let num_vertices = ends.num_vertices;
    let ids = ends.ids;
    let positions = if algorithm == Algorithm::Auto {
        // `auto` computes priorities when it looks at an edge, never storing all of them.
        profile::span("validate weights", || {
            prepare::reject_nan_in(weights, ids.as_deref(), m)
        })?;
        let source = prepare::PrioritySource::new(weights, ids.as_deref(), order, least_key);
        profile::span(algorithm.name(), || {
            filter_kruskal::filter_kruskal::<P>(num_vertices, &ends.u, &ends.v, source)
        })?
    } else {
        let priority = profile::span("priorities", || {
            prepare::priorities::<P>(weights, ids.as_deref(), m, order, least_key)
        })?;
        let prepared = Prepared {
            num_vertices,
            u: ends.u,
            v: ends.v,
            priority,
        };
        profile::span(algorithm.name(), || match algorithm {
            Algorithm::Auto => unreachable!("auto takes the branch above"),
            Algorithm::Boruvka => boruvka::boruvka(&prepared),
            Algorithm::Prim => prim::prim(&prepared),
            Algorithm::Strut => strut::strut(&prepared),
            Algorithm::Kruskal => kruskal::kruskal(prepared),
        })?
    };
    profile::span("forest edge ids", || {
        let flags: Vec<AtomicBool> = kept::zeroed(m, "the chosen-edge flags")?;
        let mark = |flags: &[AtomicBool], value: bool| {
            positions
                .par_iter()
                .with_min_len(4096)
                .for_each(|&e| flags[e].store(value, Relaxed))
        };
        mark(&flags, true);
        let chosen = |e: usize| flags[e].load(Relaxed);
        let edge_ids = chosen_ids(m, chosen, ids.as_deref())?;
        // Kept for the next call, the flags all false again.
        kept::keep_cleared(flags, |flags| mark(flags, false));
        kept::keep_room(positions);
        Ok((edge_ids, num_vertices))
    })
}

/// Room for a forest of `n` vertices and `m` edges: at most min(n - 1, m) edges, so
/// pushing them never reallocates (and a huge declared vertex count with few edges
/// costs nothing here).
fn new_forest(n: usize, m: usize) -> Result<Vec<usize>> {
    kept::with_capacity(n.saturating_sub(1).min(m), "the forest")
}

/// The ids of the chosen positions, read back in order: ascending ids without a sort
/// (CSR ids grow with position too).
fn chosen_ids(
    m: usize,
    chosen: impl Fn(usize) -> bool + Sync,
    ids: Option<&[u64]>,
) -> Result<Vec<u64>> {
    // Counted first, then written once into the result (no pieces to join).
    alloc::par_filter_indices(m, "the forest's edge ids", chosen, |e| {
        ids.map_or(e as u64, |ids| ids[e])
    })
}

/// Sum of the forest's weights in ascending edge-id order (`ids` are sorted; ids index
/// edge-list weights and CSR weights alike).
fn total_weight<W: WeightKey>(weights: Option<&[W]>, ids: &[u64]) -> TotalWeight {
    match weights {
        None => TotalWeight::Int(ids.len() as i128),
        Some(w) => sum_of_weights(ids.len(), |i| w[ids[i] as usize]),
    }
}

/// Sum of `count` weights taken in order by `weight`: floats added one after another
/// in f64 (so every tier's total is the same to the bit), integers exactly in any order.
fn sum_of_weights<W: WeightKey>(count: usize, weight: impl Fn(usize) -> W + Sync) -> TotalWeight {
    if W::FLOAT {
        TotalWeight::Float((0..count).fold(0.0, |sum, i| sum + weight(i).as_f64()))
    } else {
        TotalWeight::Int(
            (0..count)
                .into_par_iter()
                .with_min_len(1 << 14)
                .map(|i| weight(i).as_i128())
                .sum(),
        )
    }
}

/// Endpoints of edge `id` in the caller's graph.
fn edge_ends(graph: &Graph<'_>, id: u64) -> (u32, u32) {
    match *graph {
        Graph::EdgeList { u, v, .. } => (u[id as usize], v[id as usize]),
        Graph::Csr {
            offsets, targets, ..
        } => {
            let source = prepare::source_of(offsets, id as usize);
            (source as u32, targets[id as usize])
        }
    }
}

/// Per vertex, the smallest vertex id of its component: its union-find root, since
/// roots are the smallest vertex of their set.
fn component_labels(num_vertices: usize, graph: &Graph<'_>, forest: &[u64]) -> Result<Vec<u32>> {
    // The labels read every vertex's parent anyway.
    let mut sets = UnionFind::new(num_vertices, num_vertices)?;
    for &id in forest {
        let (a, b) = edge_ends(graph, id);
        sets.union(a, b);
    }
    let parents = sets.parents();
    alloc::par_collect(
        (0..num_vertices)
            .into_par_iter()
            .map(|x| union_find::find_shared(parents, x as u32)),
        "the component labels",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small random multigraph with self-loops and repeated weights.
    pub(crate) fn random_graph(n: u32, m: usize, seed: u64) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let u = (0..m).map(|_| (next() % n as u64) as u32).collect();
        let v = (0..m).map(|_| (next() % n as u64) as u32).collect();
        let w = (0..m).map(|_| (next() % 50) as u32).collect();
        (u, v, w)
    }

    /// On 1, 2, 4 and 8 threads, since `auto` picks its light-edge method (sorted link,
    /// Borůvka rounds or reservations) by thread count and graph density: every pairing
    /// runs here.
    #[test]
    fn every_algorithm_matches_kruskal_on_random_graphs() {
        for threads in [1, 2, 4, 8] {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(match_kruskal_on_random_graphs);
        }
    }

    /// 64-bit weights whose keys span less than 2^32 run on narrow priorities, less
    /// their least key; wider ones on wide priorities. Either way, order-preserving
    /// images of the same weights give the same forest, minimum and maximum.
    #[test]
    fn wide_weights_give_the_forest_of_their_order() {
        let (n, m) = (5000, 60_000);
        let (u, v, w) = random_graph(n, m, 11);
        let images: [(&str, Vec<i64>); 3] = [
            // Negative, near the type's bottom, and tied as in `w`.
            (
                "narrow span",
                w.iter().map(|&x| i64::MIN + 7 + 3 * x as i64).collect(),
            ),
            // Keys whose low 32 bits wrap inside the span: only the offset keeps order.
            (
                "narrow span across a multiple of 2^32",
                w.iter().map(|&x| (1 << 40) - 20 + x as i64).collect(),
            ),
            (
                "wide span",
                w.iter().map(|&x| (x as i64 - 25) << 40).collect(),
            ),
        ];
        for threads in [2, 8] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for maximum in [false, true] {
                let run = |weights| {
                    let graph = Graph::EdgeList {
                        num_vertices: n as usize,
                        u: &u,
                        v: &v,
                        weights: Some(weights),
                    };
                    let options = MsfOptions {
                        maximum,
                        labels: true,
                        ..MsfOptions::default()
                    };
                    let forest = pool.install(|| {
                        minimum_spanning_forest(&graph, &options, Solver::Cpu { memory_limit: 0 })
                    });
                    let forest = forest.unwrap();
                    (forest.edges, forest.labels, forest.num_components)
                };
                let expected = run(Weights::U32(&w));
                for (what, image) in &images {
                    assert_eq!(
                        run(Weights::I64(image)),
                        expected,
                        "{what}, maximum {maximum}, {threads} threads"
                    );
                }
            }
        }
    }

    fn match_kruskal_on_random_graphs() {
        for (n, m, seed) in [
            (1, 0, 1),
            (10, 30, 2),
            (1000, 3000, 3),
            (5000, 200_000, 4),
            (3000, 1500, 5),
            (40_000, 50_000, 6),
            (20_000, 400_000, 7),
            // Its heavy part leaves over 8,192 edges for a last round (the Rest set).
            (200_000, 800_000, 8),
        ] {
            let (u, v, w) = random_graph(n, m, seed);
            let graph = Graph::EdgeList {
                num_vertices: n as usize,
                u: &u,
                v: &v,
                weights: Some(Weights::U32(&w)),
            };
            let run = |algorithm| {
                minimum_spanning_forest(
                    &graph,
                    &MsfOptions {
                        algorithm,
                        labels: true,
                        ..MsfOptions::default()
                    },
                    Solver::Cpu { memory_limit: 0 },
                )
                .unwrap()
            };
            let reference = run(Algorithm::Kruskal);
            for algorithm in Algorithm::ALL {
                assert_eq!(
                    run(algorithm),
                    reference,
                    "{algorithm} on n={n} m={m}, {} threads",
                    rayon::current_num_threads()
                );
            }
        }
    }
}
