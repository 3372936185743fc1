//! A graph solved in partitions whose forest stays in device memory. The first
//! partition is the list's first edges; after it, the list's next edges are filtered a
//! chunk at a time against the forest carried so far (`filter::Filter`), and the
//! survivors gather behind that forest until a chunk's survivors do not fit the
//! partition's room, when the forest and its survivors are solved as a graph of their
//! own (that chunk goes through the next partition's filter). The forest's ends,
//! weights and positions in the whole list are gathered on the device (no trip through
//! the host, no second upload). Host edges after the first partition go up on the
//! device's second queue into a ring of slots (`ring.rs`) filled by a thread of their
//! own while the device filters or solves, staged in page-locked memory by another
//! where the tier can (`gpu/staging.rs`).

use std::ops::Range;

use super::filter::{Filter, WeightKeys};
use super::resident::{
    check_host_call, edge_bytes, input_bytes, key_kind, msf_config, solve_uploaded, EdgeArrays,
    Finding, HostIds, ResidentOutcome, Work,
};
use super::ring::{Filled, Ring, StopRing, RING_SLOTS};
use super::{DeviceProblem, DeviceTimings, Stopwatch};
use crate::tier::gpu::staging::{Staging, StopOnDrop};
use crate::tier::gpu::{bytes_of, Arg, Device, DeviceBuffer, Filling, Gpu, ProgramKind};
use crate::types::Element;
use crate::{Error, Result};

/// Where a partition's own edges come from: `range` of a whole list.
pub(crate) struct Fresh<'a, D: Device, W> {
    pub source: Source<'a, D, W>,
    pub range: Range<usize>,
}

/// A whole edge list: host arrays (a partition's range is uploaded) or arrays in device
/// memory (read where they are).
pub(crate) enum Source<'a, D: Device, W> {
    Host {
        u: &'a [u32],
        v: &'a [u32],
        weights: Option<&'a [W]>,
    },
    Device(&'a EdgeArrays<D, W>),
}

impl<D: Device, W> Source<'_, D, W> {
    fn weighted(&self) -> bool {
        match self {
            Source::Host { weights, .. } => weights.is_some(),
            Source::Device(list) => list.weights.is_some(),
        }
    }
}

/// Copies edges `range` of `from` into `into` from position `at` on (queued).
fn copy_edges<D: Device, W: Element>(
    tier: &Gpu<D>,
    from: &EdgeArrays<D, W>,
    range: Range<usize>,
    into: &mut EdgeArrays<D, W>,
    at: usize,
) -> Result<()> {
    let len = range.len();
    tier.copy_at(&from.u, range.start, &mut into.u, at, len)?;
    tier.copy_at(&from.v, range.start, &mut into.v, at, len)?;
    if let (Some(w), Some(into)) = (&from.weights, &mut into.weights) {
        tier.copy_at(w, range.start, into, at, len)?;
    }
    Ok(())
}

/// The fillings that copy edges `range` of host arrays `u`, `v`, `weights` into the
/// first elements of `into`.
pub(super) fn host_fillings<'a, D: Device, W: Element>(
    into: &'a mut EdgeArrays<D, W>,
    (u, v, weights): (&'a [u32], &'a [u32], Option<&'a [W]>),
    range: Range<usize>,
) -> Vec<Filling<'a, D>> {
    let mut fillings = vec![
        into.u.filling(&[&u[range.clone()]]),
        into.v.filling(&[&v[range.clone()]]),
    ];
    if let (Some(into), Some(w)) = (&mut into.weights, weights) {
        fillings.push(into.filling(&[&w[range]]));
    }
    fillings
}

/// A partition's arrays and the positions in them of its forest's `count` edges, all
/// on the device.
struct Solved<D: Device, W> {
    arrays: EdgeArrays<D, W>,
    ids: DeviceBuffer<D, u64>,
    count: usize,
}

/// Where a solve's edges after the carried forest stand in the whole list.
pub(super) enum Own<D: Device> {
    /// From this position on, in order.
    From(usize),
    /// At these positions (a filter's survivors).
    Listed(DeviceBuffer<D, u64>),
}

/// How a graph of `fit` edges' room is shared out.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    /// Edges a solve takes at most, carried forest included.
    most: usize,
    /// Edges filtered (and, from the host, uploaded) at once.
    chunk: usize,
}

impl Sizes {
    /// A solve's working set beside the ring's slots (host edges) and its
    /// survivors' positions fills the memory of `fit` edges' working sets; the room
    /// left beside the largest forest (n - 1 edges) takes at least one chunk. (The
    /// filter's own buffers, held while no solve runs, take less than a solve's working
    /// set: about a quarter of it per edge, and 32 bytes a vertex.) A host chunk's
    /// bytes are what `staged_chunk_bytes` makes of them (`Device::staged_chunk_bytes`).
    fn of<W: Element>(
        work: &Work,
        weighted: bool,
        host: bool,
        n: usize,
        fit: usize,
        staged_chunk_bytes: &dyn Fn(usize) -> usize,
    ) -> Sizes {
        let (working, raw) = (
            edge_bytes::<W>(work.algorithm, weighted),
            input_bytes::<W>(weighted),
        );
        let memory = fit as u64 * working;
        // A quarter of the room: chunks 2x or 8x as large took as long at a 4x cap.
        let mut chunk = (fit / 4).clamp(1, 1 << 25);
        loop {
            let ahead = if host {
                RING_SLOTS as u64 * chunk as u64 * raw
            } else {
                0
            };
            let most = (memory.saturating_sub(ahead) / (working + 8)) as usize;
            if most >= n + chunk || chunk == 1 {
                if host {
                    // As many edges as the tier stages best (whole staging blocks): no
                    // more than room was left for.
                    let bytes = staged_chunk_bytes(chunk * raw as usize);
                    chunk = (bytes / raw as usize).clamp(1, chunk);
                }
                return Sizes { most, chunk };
            }
            chunk /= 2;
        }
    }
}

/// What a partition's solve finds: its forest's edge count, timings and integer weight
/// sum (where the work asks for it), or a bad edge.
pub(super) type PartOutcome = std::result::Result<(usize, DeviceTimings, Option<i128>), Finding>;

/// A partition's solve, for the weight type whose weights the partitions store as S.
pub(super) type Solver<D, S> =
    fn(&Gpu<D>, EdgeArrays<D, S>, &Work, Adjacency, &mut Stopwatch) -> Result<SolvedPart<D, S>>;

/// What a partition's solve gives back: its arrays, what it found, and its forest's
/// positions in the arrays.
pub(super) type SolvedPart<D, S> = (EdgeArrays<D, S>, PartOutcome, Option<DeviceBuffer<D, u64>>);

pub(super) type Adjacency = fn(&DeviceProblem<'_>) -> Result<super::DeviceCsr>;

/// [`Solver`] for weights of type W stored as S (of W's size).
pub(super) fn solve_as<D: Device, S: Element, W: Element>(
    tier: &Gpu<D>,
    arrays: EdgeArrays<D, S>,
    work: &Work,
    adjacency: Adjacency,
    watch: &mut Stopwatch,
) -> Result<SolvedPart<D, S>> {
    let mut typed = arrays.cast::<W>();
    let (outcome, ids) = solve_uploaded(tier, &mut typed, work, adjacency, watch)?;
    let outcome = match outcome {
        ResidentOutcome::Forest {
            count,
            timings,
            weight_sum,
            ..
        } => Ok((count, timings, weight_sum)),
        ResidentOutcome::Invalid(finding) => Err(finding),
    };
    Ok((typed.cast(), outcome, ids))
}

/// `weights` as elements of type S, of W's size and alignment.
pub(super) fn as_stored<W: Element, S: Element>(weights: &[W]) -> &[S] {
    assert!(
        std::mem::size_of::<W>() == std::mem::size_of::<S>()
            && std::mem::align_of::<W>() == std::mem::align_of::<S>(),
        "weights stored as a type of another size"
    );
    // SAFETY: W and S are element types (plain numbers, every bit pattern of their
    // size a valid value) of the same size and alignment, so the slice's memory holds
    // as many valid S, borrowed as long as `weights`.
    unsafe { std::slice::from_raw_parts(weights.as_ptr().cast::<S>(), weights.len()) }
}

/// Solves host arrays `u`, `v`, `weights` over `n` vertices in partitions whose
/// working sets take at most that of `fit` edges: the forest's positions in the list
/// (ascending), its integer weight sum where `work` asks for it (the last solve's, whose
/// forest is the whole list's), and the timings; or the finding of a partition's device
/// (at its position in the whole list; see [`Partitions::solve_all`]).
pub(crate) fn solve_host_list<D: Device, W: Element>(
    tier: &Gpu<D>,
    n: usize,
    (u, v, weights): (&[u32], &[u32], Option<&[W]>),
    work: &Work,
    fit: usize,
    adjacency: Adjacency,
) -> Result<std::result::Result<HostParts, Finding>> {
    // One copy of the partitions' code for the weights of each size.
    let kind = key_kind(W::DTYPE);
    match W::DTYPE.size() {
        8 => {
            let stored = (u, v, weights.map(as_stored));
            let weights = (solve_as::<D, u64, W> as Solver<D, u64>, kind);
            solve_host_as(tier, n, stored, (work, weights), fit, adjacency)
        }
        _ => {
            let stored = (u, v, weights.map(as_stored));
            let weights = (solve_as::<D, u32, W> as Solver<D, u32>, kind);
            solve_host_as(tier, n, stored, (work, weights), fit, adjacency)
        }
    }
}

/// [`solve_host_list`] for weights stored as S, solved by `solver`, of key kind `kind`.
#[inline(never)]
fn solve_host_as<D: Device, S: Element>(
    tier: &Gpu<D>,
    n: usize,
    (u, v, weights): (&[u32], &[u32], Option<&[S]>),
    (work, (solver, kind)): (&Work, (Solver<D, S>, u32)),
    fit: usize,
    adjacency: Adjacency,
) -> Result<std::result::Result<HostParts, Finding>> {
    let mut partitions = Partitions::<D, S>::new(tier, *work, n, (solver, kind));
    let fresh = |range| Fresh {
        source: Source::Host { u, v, weights },
        range,
    };
    match partitions.solve_all(0..u.len(), fit, &fresh, adjacency)? {
        Ok(()) => partitions.finish(HostIds::Later).map(Ok),
        Err(finding) => Ok(Err(finding)),
    }
}

/// What partitions of host edges leave: the forest's positions in the whole list
/// (ascending), its integer weight sum, and the timings.
pub(crate) type HostParts = (Vec<u64>, Option<i128>, DeviceTimings);

/// What partitions leave: the forest's edge count, its positions in the whole list on
/// the device (none for no edges), the watch and the timings.
pub(super) type Parts<D> = (
    usize,
    Option<DeviceBuffer<D, u64>>,
    Stopwatch,
    DeviceTimings,
);

/// Solves `list`, the caller's arrays in device memory, in partitions as
/// [`solve_host_list`] does host arrays.
pub(super) fn solve_device_list<D: Device, W: Element>(
    tier: &Gpu<D>,
    list: &EdgeArrays<D, W>,
    work: &Work,
    fit: usize,
    adjacency: Adjacency,
) -> Result<std::result::Result<Parts<D>, Finding>> {
    let (n, m) = (list.num_vertices, list.u.len());
    let addresses = (
        list.u.address(),
        list.v.address(),
        list.weights.as_ref().map(|w| w.address()),
    );
    let kind = key_kind(W::DTYPE);
    match W::DTYPE.size() {
        8 => {
            let weights = (solve_as::<D, u64, W> as Solver<D, u64>, kind);
            solve_device_as(tier, (n, m, addresses), (work, weights), fit, adjacency)
        }
        _ => {
            let weights = (solve_as::<D, u32, W> as Solver<D, u32>, kind);
            solve_device_as(tier, (n, m, addresses), (work, weights), fit, adjacency)
        }
    }
}

/// [`solve_device_list`] for the list of `m` edges over `n` vertices at `addresses`
/// (u, v, weights), its weights stored as S, solved by `solver`, of key kind `kind`.
#[inline(never)]
fn solve_device_as<D: Device, S: Element>(
    tier: &Gpu<D>,
    (n, m, (u, v, weights)): (usize, usize, (usize, usize, Option<usize>)),
    (work, (solver, kind)): (&Work, (Solver<D, S>, u32)),
    fit: usize,
    adjacency: Adjacency,
) -> Result<std::result::Result<Parts<D>, Finding>> {
    // SAFETY (each wrap): the caller's memory that its list wraps, held for this call
    // by the caller's promise; the weights as S, of their type's size.
    let stored = EdgeArrays {
        num_vertices: n,
        u: unsafe { tier.wrap::<u32>(u, m, "u")? },
        v: unsafe { tier.wrap::<u32>(v, m, "v")? },
        weights: match weights {
            Some(w) => Some(unsafe { tier.wrap::<S>(w, m, "weights")? }),
            None => None,
        },
        kept: false,
    };
    let mut partitions = Partitions::<D, S>::new(tier, *work, n, (solver, kind));
    let fresh = |range| Fresh {
        source: Source::Device(&stored),
        range,
    };
    Ok(partitions
        .solve_all(0..m, fit, &fresh, adjacency)?
        .map(|()| partitions.into_parts()))
}

/// A graph's partitions as they are solved (see the module's documentation), for
/// weights stored as W.
pub(crate) struct Partitions<'t, D: Device, W> {
    pub(super) tier: &'t Gpu<D>,
    work: Work,
    pub(super) num_vertices: usize,
    /// The solve of the weight type stored as W, and its weights' key kind.
    solver: Solver<D, W>,
    kind: u32,
    /// One watch for every call: the peak counts the arrays carried between calls.
    watch: Stopwatch,
    /// The last solve's arrays and its forest in them.
    last: Option<Solved<D, W>>,
    /// The carried forest's edge count, its integer weight sum (where the work asks
    /// for it), and its positions in the whole list.
    pub(super) count: usize,
    sum: Option<i128>,
    positions: Option<DeviceBuffer<D, u64>>,
    timings: DeviceTimings,
}

impl<'t, D: Device, W: Element> Partitions<'t, D, W> {
    /// Partitions of a graph whose weights are stored as W, solved by `solver`, of key
    /// kind `kind` (see [`solve_as`]).
    pub(super) fn new(
        tier: &'t Gpu<D>,
        work: Work,
        num_vertices: usize,
        (solver, kind): (Solver<D, W>, u32),
    ) -> Self {
        Partitions {
            tier,
            work,
            num_vertices,
            solver,
            kind,
            watch: Stopwatch::start(tier),
            last: None,
            count: 0,
            sum: None,
            positions: None,
            timings: DeviceTimings::default(),
        }
    }

    /// Solves the list's `edges` in partitions whose working sets take at most
    /// that of `fit` edges; `fresh` gives the edges of a range. `Err(finding)` when a
    /// partition's device finds a bad edge, at its position in the whole list: a
    /// partition sees only its part (a filter keeps every bad edge), so the caller
    /// names the first bad edge of the whole list from there.
    pub(super) fn solve_all<'a>(
        &mut self,
        edges: Range<usize>,
        fit: usize,
        fresh: &dyn Fn(Range<usize>) -> Fresh<'a, D, W>,
        adjacency: Adjacency,
    ) -> Result<std::result::Result<(), Finding>>
    where
        D: 'a,
        W: 'a,
    {
        let tier = self.tier;
        let n = self.num_vertices;
        let (first, m) = (edges.start, edges.end);
        let whole = fresh(edges);
        let weighted = whole.source.weighted();
        let list = match whole.source {
            Source::Device(list) => Some(list),
            Source::Host { .. } => None,
        };
        let staged_chunk_bytes = |bytes| tier.device.staged_chunk_bytes(bytes);
        let sizes = Sizes::of::<W>(
            &self.work,
            weighted,
            list.is_none(),
            n,
            fit,
            &staged_chunk_bytes,
        );
        let program = tier.program(ProgramKind::Msf(msf_config::<D, W>(tier, weighted)))?;
        let staging = Staging::new();
        // The first partition's end, and slots for the host chunks after it (none for
        // device lists).
        let end_of_first = m.min(first + sizes.most);
        let chunks_after = (m - end_of_first).div_ceil(sizes.chunk);
        let ring = match list {
            None if chunks_after > 0 => Some(Ring::<D, W>::new(
                tier,
                n,
                (RING_SLOTS.min(chunks_after), sizes.chunk),
                weighted,
            )?),
            _ => None,
        };
        let outcome = std::thread::scope(|scope| {
            // On every way out of here, before the scope waits for the threads.
            let _stopping = StopOnDrop(&staging);
            let _stopping_ring = ring.as_ref().map(StopRing);

            // The first partition: the list's first edges, nothing carried.
            let mut arrays = self.arrays(end_of_first - first, weighted)?;
            match fresh(first..end_of_first) {
                Fresh {
                    source: Source::Host { u, v, weights },
                    range,
                } => {
                    // In one pass of the transfer buffers (each copy of its own would
                    // start and drain them).
                    let mut fillings = host_fillings(&mut arrays, (u, v, weights), range);
                    tier.write_together(&mut fillings)?;
                }
                Fresh {
                    source: Source::Device(list),
                    range,
                } => copy_edges(tier, list, range, &mut arrays, 0)?,
            }
            // The later host chunks are staged ahead on a thread of their own (after the
            // first partition's upload, which it would slow: 1.6 GB cap, 10 -> 21 ms),
            // and go up into the ring's slots from another as slots come free.
            if let (Source::Host { u, v, weights }, Some(ring)) = (&whole.source, &ring) {
                if D::STAGES {
                    let mut arrays = vec![(bytes_of(u), 4), (bytes_of(v), 4)];
                    arrays.extend(weights.map(|w| (bytes_of(w), W::DTYPE.size())));
                    staging.start(scope, tier, arrays, end_of_first..m, sizes.chunk);
                }
                let (staging, list) = (&staging, (*u, *v, *weights));
                let ranges = (end_of_first..m)
                    .step_by(sizes.chunk)
                    .map(move |start| start..m.min(start + sizes.chunk));
                scope.spawn(move || ring.fill(tier, list, ranges, staging));
            }
            let mut start = end_of_first;
            if let Err(finding) = self.solve(&program, arrays, 0, Own::From(first), adjacency)? {
                return Ok(Err(finding));
            }

            // Then the forest so far and the next chunks' survivors, as often as they fill
            // a partition; a chunk whose survivors did not fit opens the next one.
            let mut pending: Option<Filled<D>> = None;
            while start < m {
                let carried = self.count;
                let room = sizes.most.saturating_sub(carried);
                let mut arrays = self.arrays(carried + room, weighted)?;
                self.carry_into(&program, &mut arrays)?;
                let keys = WeightKeys {
                    kind: self.kind,
                    descending: self.work.descending,
                    words: (W::DTYPE.size() / 4) as u32,
                };
                let mut filter = crate::profile::span("partitions: labels", || {
                    Filter::new(
                        tier,
                        &program,
                        (arrays.args(), n, carried),
                        keys,
                        sizes.chunk,
                    )
                })?;
                let mut listed = tier.alloc::<u64>(room)?;
                let mut kept = 0;
                while start < m && kept < room {
                    let (from, first, len, filled) = match (&ring, list) {
                        (Some(ring), _) => {
                            let filled = match pending.take() {
                                Some(filled) => filled,
                                None => ring.next(tier)?,
                            };
                            if filled.range.start != start {
                                return Err(Error::internal(format!(
                                    "edges {:?} came up where {start} was next",
                                    filled.range
                                )));
                            }
                            (ring.args(filled.slot), 0, filled.range.len(), Some(filled))
                        }
                        (None, Some(list)) => {
                            (list.args(), start, sizes.chunk.min(m - start), None)
                        }
                        (None, None) => {
                            return Err(Error::internal(
                                "a partition's host edges have no slots to go up into",
                            ))
                        }
                    };
                    let count = crate::profile::span("partitions: filter", || {
                        filter.select(tier, &program, (&from, first, len))
                    })?;
                    if kept + count > room {
                        // Its survivors do not fit beside the partition's: the chunk
                        // stays on the device for the next partition's filter (whose
                        // room holds a chunk).
                        pending = filled;
                        break;
                    }
                    filter.gather(
                        tier,
                        &program,
                        (&from, first, start, count),
                        (arrays.args(), carried + kept),
                        (&listed, kept),
                    )?;
                    if let (Some(ring), Some(filled)) = (&ring, filled) {
                        ring.release(tier, filled.slot)?;
                    }
                    kept += count;
                    start += len;
                }
                if start < m && kept == 0 {
                    return Err(Error::internal(format!(
                        "a partition has room for {room} edges beside its forest, less than a chunk of {}",
                        sizes.chunk
                    )));
                }
                drop(filter);
                self.timings.compute_ms += self.watch.lap();
                if kept == 0 {
                    // Every edge left was dropped: the forest carried is the whole list's.
                    break;
                }
                for buffer in [&mut arrays.u, &mut arrays.v] {
                    buffer.set_len(carried + kept);
                }
                if let Some(weights) = &mut arrays.weights {
                    weights.set_len(carried + kept);
                }
                listed.set_len(kept);
                if let Err(finding) =
                    self.solve(&program, arrays, carried, Own::Listed(listed), adjacency)?
                {
                    return Ok(Err(finding));
                }
            }
            Ok(Ok(()))
        });
        // The slots are freed on the main queue: only behind the copies into them.
        let awaited = match ring {
            Some(_) => tier.await_beside(),
            None => Ok(()),
        };
        let outcome = outcome?;
        awaited.map(|()| outcome)
    }

    /// Arrays for `len` edges of the partitions' graph (kept whole by the solve: the
    /// next partition gathers its forest from them).
    pub(super) fn arrays(&self, len: usize, weighted: bool) -> Result<EdgeArrays<D, W>> {
        let tier = self.tier;
        Ok(EdgeArrays {
            num_vertices: self.num_vertices,
            u: tier.alloc::<u32>(len)?,
            v: tier.alloc::<u32>(len)?,
            weights: weighted.then(|| tier.alloc::<W>(len)).transpose()?,
            kept: true,
        })
    }

    /// Gathers the last solve's forest into the head of `arrays` (queued), and frees
    /// the last solve's arrays behind that (a free is ordered behind the work already
    /// queued: CUDA's stream-ordered pool, OpenCL's release of a buffer in use).
    pub(super) fn carry_into(
        &mut self,
        program: &D::Program,
        arrays: &mut EdgeArrays<D, W>,
    ) -> Result<()> {
        let Some(Solved {
            arrays: last,
            ids,
            count,
        }) = self.last.take().filter(|last| last.count > 0)
        else {
            return Ok(());
        };
        let gather = |from: Arg<D>, wide: bool, into: Arg<D>| {
            self.tier.launch(
                program,
                "rs_forest_weights",
                count,
                0,
                &[
                    from,
                    ids.arg(),
                    Arg::U32(count as u32),
                    Arg::U32(wide as u32),
                    into,
                ],
            )
        };
        gather(last.u.arg(), false, arrays.u.arg())?;
        gather(last.v.arg(), false, arrays.v.arg())?;
        if let (Some(from), Some(into)) = (&last.weights, &arrays.weights) {
            gather(from.arg(), W::DTYPE.size() == 8, into.arg())?;
        }
        Ok(())
    }

    /// Solves `arrays`, the forest carried so far (its first `carried` edges) followed
    /// by edges at `own` (`program`: the partitions' MSF kernels); the device's finding
    /// if a check fails.
    pub(super) fn solve(
        &mut self,
        program: &D::Program,
        arrays: EdgeArrays<D, W>,
        carried: usize,
        own: Own<D>,
        adjacency: Adjacency,
    ) -> Result<std::result::Result<(), Finding>> {
        let tier = self.tier;
        let (n, m) = (self.num_vertices, arrays.u.len());
        let weighted = arrays.weights.is_some();
        check_host_call::<D, W>(tier, n, m, &self.work, weighted)?;
        let solver = self.solver;
        let (arrays, outcome, ids) = crate::profile::span("partitions: solve", || {
            solver(tier, arrays, &self.work, adjacency, &mut self.watch)
        })?;
        let (count, mut timings, sum) = match outcome {
            Ok(found) => found,
            // The carried forest's edges passed their checks before: the bad edge is
            // one of the partition's own.
            Err(finding) => {
                let at = finding.edge() - carried;
                let position = match &own {
                    Own::From(start) => start + at,
                    Own::Listed(positions) => tier.read_one(positions, at)? as usize,
                };
                return Ok(Err(
                    finding.moved(position as isize - finding.edge() as isize)
                ));
            }
        };
        self.last = ids.map(|ids| Solved { arrays, ids, count });
        self.count = count;
        self.sum = sum;
        // The forest's positions in the whole list, from the call's.
        self.positions = match &self.last {
            Some(solved) if count > 0 => {
                let after = tier.alloc::<u64>(count)?;
                // With nothing carried, `before` is never read, nor `own`'s buffer
                // where it has none: any buffer will do.
                let before = self.positions.as_ref().unwrap_or(&solved.ids);
                let (listed, own_positions, start) = match &own {
                    Own::From(start) => (0, before, *start),
                    Own::Listed(positions) => (1, positions, 0),
                };
                tier.launch(
                    program,
                    "rs_carry_positions",
                    count,
                    0,
                    &[
                        solved.ids.arg(),
                        Arg::U32(count as u32),
                        Arg::U32(carried as u32),
                        Arg::U64(start as u64),
                        before.arg(),
                        Arg::U32(listed),
                        own_positions.arg(),
                        after.arg(),
                    ],
                )?;
                Some(after)
            }
            _ => None,
        };
        timings.download_ms += self.watch.lap();
        self.timings.add(&timings);
        Ok(Ok(()))
    }

    /// The forest's positions in the whole list, ascending (into `ids`, room made
    /// while the device worked or later), its integer weight sum, and the calls'
    /// timings added up (the peak: the most held at once, carried arrays included).
    pub(super) fn finish(self, ids: HostIds) -> Result<HostParts> {
        let (tier, sum) = (self.tier, self.sum);
        let (count, on_device, mut watch, mut timings) = self.into_parts();
        let mut positions = ids.take(count)?;
        if let Some(on_device) = &on_device {
            tier.read(on_device, &mut positions)?;
        }
        timings.download_ms += watch.lap();
        Ok((positions, sum, timings))
    }

    /// What the partitions leave (see [`Parts`]); the last call's arrays are freed.
    pub(super) fn into_parts(self) -> Parts<D> {
        (self.count, self.positions, self.watch, self.timings)
    }
}
