//! The minimum spanning forest of a graph whose arrays are already in device memory
//! (the caller's CUDA pointers or OpenCL buffers): validation, weight keys, the light
//! phases' sample and the forest's edge ids all stay on the device, so the host moves
//! only a few words, plus the forest's weights when the caller wants its total.

use std::borrow::Cow;
use std::sync::{Arc, Condvar, Mutex};

use super::{
    check_capacity, largest_buffer_per_edge, sample_stride, thresholds_of, working_set, DeviceKeys,
    DeviceProblem, DeviceTimings, KernelConfig, KeyBuffer, Run, Stopwatch, SAMPLE,
};
use crate::tier::gpu::{Arg, Device, DeviceBuffer, Gpu, Plain, ProgramKind};
use crate::types::{Algorithm, DType, Element, ScanKind, ScanOp};
use crate::{alloc, Error, Result};
use rayon::prelude::*;

/// An edge list in device memory: addresses as the tier knows them (CUDA device
/// pointers, OpenCL `cl_mem` handles).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResidentEdges {
    pub num_vertices: usize,
    pub num_edges: usize,
    pub u: usize,
    pub v: usize,
    /// Weights of the call's element type; None: unweighted.
    pub weights: Option<usize>,
}

/// What to compute and where the result goes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResidentRequest {
    pub work: Work,
    /// The caller's queue to follow (0: none).
    pub queue: usize,
    /// Device memory for min(n - 1, m) u64 edge ids (unused when that is 0).
    pub ids_out: usize,
}

/// Which check a device graph failed first, in the order the host path checks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Finding {
    /// Edge `edge` has `u` (or, when the bool is false, `v`) = `value` out of range.
    EndOutOfRange {
        u: bool,
        edge: usize,
        value: u32,
    },
    NanWeight {
        edge: usize,
    },
}

impl Finding {
    /// The edge found.
    pub(super) fn edge(self) -> usize {
        match self {
            Finding::EndOutOfRange { edge, .. } | Finding::NanWeight { edge } => edge,
        }
    }

    /// The same finding for an edge `by` positions further on.
    pub(super) fn moved(self, by: isize) -> Finding {
        let at = |edge: usize| edge.wrapping_add_signed(by);
        match self {
            Finding::EndOutOfRange { u, edge, value } => Finding::EndOutOfRange {
                u,
                edge: at(edge),
                value,
            },
            Finding::NanWeight { edge } => Finding::NanWeight { edge: at(edge) },
        }
    }
}

pub(crate) enum ResidentOutcome<W> {
    Forest {
        /// Edges written to `ids_out`.
        count: usize,
        /// Their weights in the same order, when asked for (and the graph has some),
        /// unless `weight_sum` holds their sum.
        weights: Option<Vec<W>>,
        /// The sum of their weights, where `Work::total` asked for it and the
        /// weights are integers.
        weight_sum: Option<i128>,
        timings: DeviceTimings,
    },
    Invalid(Finding),
}

/// Where `W`'s weights find their keys: as they are (unsigned, ascending) or by
/// `rs_narrow_keys` / `rs_wide_keys` with this kind (see msf.cl).
pub(super) fn key_kind(dtype: DType) -> u32 {
    match dtype {
        DType::U32 | DType::U64 => 0,
        DType::I32 | DType::I64 => 1,
        DType::F32 | DType::F64 => 2,
    }
}

const NO_POSITION: u32 = u32::MAX;

/// Edges per work-item when the forest's ids are written (IDS_PER_ITEM in msf.cl).
pub(super) const IDS_PER_ITEM: usize = 16;
/// Blocks of edges (a work-group's each) up to which the forest's ids take one launch
/// (`rs_ids_one_pass`, whose groups read every earlier block's count: blocks^2 / 2 reads).
const ONE_PASS_BLOCKS: usize = 1024;

/// Solves `edges` (weights of type W) on `tier`, writing the forest's edge ids in
/// ascending order to `request.ids_out`. `adjacency` builds Prim's CSR on the host
/// (Prim alone brings the graph over).
///
/// # Safety
/// Every address in `edges` and `request` is live device memory of this tier holding
/// what its documentation says, left alone by other work until this returns (the
/// caller's queue is followed first); `request.queue` is null or a live queue of the
/// tier's context.
pub(crate) unsafe fn solve<D: Device, W: Element>(
    tier: &Gpu<D>,
    edges: &ResidentEdges,
    request: &ResidentRequest,
    adjacency: fn(&DeviceProblem<'_>) -> Result<super::DeviceCsr>,
) -> Result<ResidentOutcome<W>> {
    let mut watch = Stopwatch::start(tier);
    let (n, m) = (edges.num_vertices, edges.num_edges);
    super::check_edge_count(request.work.algorithm, m)?;
    let capacity = n.saturating_sub(1).min(m);
    // SAFETY (every wrap and follow below): the caller's promise.
    unsafe { tier.follow(request.queue as *mut std::ffi::c_void)? };
    if m == 0 {
        // No array is read (they may be null, as for empty host arrays).
        return Ok(ResidentOutcome::Forest {
            count: 0,
            weights: request.work.brings_weights().then(Vec::new),
            weight_sum: None,
            timings: DeviceTimings::default(),
        });
    }
    let mut arrays = EdgeArrays {
        num_vertices: n,
        u: unsafe { tier.wrap::<u32>(edges.u, m, "u")? },
        v: unsafe { tier.wrap::<u32>(edges.v, m, "v")? },
        weights: match edges.weights {
            Some(address) => Some(unsafe { tier.wrap::<W>(address, m, "weights")? }),
            None => None,
        },
        kept: false,
    };
    let mut ids = match capacity {
        0 => None,
        _ => Some(unsafe { tier.wrap::<u64>(request.ids_out, capacity, "the forest's edge ids")? }),
    };
    let weighted = arrays.weights.is_some();
    let algorithm = request.work.algorithm;
    if let Err(too_large) = check_capacity(tier, algorithm, n, m, key_bytes::<W>(weighted), 0) {
        // Over the device's memory: in partitions, copied from the caller's arrays, if
        // the memory beside them (and the ids' room) holds the vertices' arrays and
        // twice a forest.
        let theirs = m as u64 * input_bytes::<W>(weighted) + 8 * capacity as u64;
        let memory = tier.settings.global_memory.saturating_sub(theirs);
        let fit = edges_that_fit::<D, W>(tier, n, algorithm, weighted, memory);
        if fit >= m {
            return Err(too_large);
        }
        if fit < 2 * n.max(1) {
            let least = least_for_partitions::<W>(n, algorithm, weighted, theirs);
            return Err(with_least_for_partitions(too_large, (n, m), least));
        }
        return solve_in_partitions(tier, &arrays, ids.as_mut(), &request.work, fit, adjacency);
    }
    solve_arrays(
        tier,
        &mut arrays,
        ids.as_ref(),
        &request.work,
        adjacency,
        &mut watch,
    )
}

/// Solves `list`, the caller's arrays in device memory, in partitions of at most
/// `fit` edges, each copied on the device; the forest's positions go to `ids`.
fn solve_in_partitions<D: Device, W: Element>(
    tier: &Gpu<D>,
    list: &EdgeArrays<D, W>,
    ids: Option<&mut DeviceBuffer<D, u64>>,
    work: &Work,
    fit: usize,
    adjacency: fn(&DeviceProblem<'_>) -> Result<super::DeviceCsr>,
) -> Result<ResidentOutcome<W>> {
    // The forest's weights are gathered once, from the caller's weights, at the end.
    let each = Work {
        total: Total::None,
        ..*work
    };
    let (count, positions, mut watch, mut timings) =
        match super::partitions::solve_device_list(tier, list, &each, fit, adjacency)? {
            Ok(parts) => parts,
            Err(seen) => return Ok(ResidentOutcome::Invalid(first_bad_edge(tier, list, seen)?)),
        };
    let mut weights = work.brings_weights().then(Vec::new);
    if let Some(positions) = &positions {
        if let Some(ids) = ids {
            tier.copy_at(positions, 0, ids, 0, count)?;
        }
        if let (Some(w), true) = (&list.weights, work.brings_weights()) {
            let program = tier.program(ProgramKind::Msf(msf_config::<D, W>(tier, true)))?;
            weights = Some(gather_weights(tier, &program, w, positions, count)?);
        }
    }
    // The ids are in the caller's memory when the call returns.
    tier.finish()?;
    timings.download_ms += watch.lap();
    Ok(ResidentOutcome::Forest {
        count,
        weights,
        weight_sum: None,
        timings,
    })
}

/// The first bad edge of the whole list `list`, as one call names it (a bad u anywhere
/// before any bad v, then the first NaN), after a partition found `seen` (at its
/// position in the list): partitions are solved in order, so a NaN that one finds is
/// the list's first, but a bad end may lie in a later partition.
fn first_bad_edge<D: Device, W: Element>(
    tier: &Gpu<D>,
    list: &EdgeArrays<D, W>,
    seen: Finding,
) -> Result<Finding> {
    let program = tier.program(ProgramKind::Msf(msf_config::<D, W>(
        tier,
        list.weights.is_some(),
    )))?;
    let status = check_ends(tier, &program, list, Prepare::default())?;
    let mut found = [0u32; STATUS_WORDS];
    tier.read(&status, &mut found)?;
    if let Finding::NanWeight { edge } = seen {
        found[2] = edge as u32;
    }
    first_finding(tier, &found, &list.u, &list.v)?.ok_or_else(|| {
        Error::internal(format!(
            "a partition's device found {seen:?}, which the checks of the whole list did not"
        ))
    })
}

/// An edge list in host memory, each array given as pieces that follow one another
/// (edge `e` = position `e` of the joined arrays; every array's pieces have the same
/// lengths).
pub(crate) struct HostEdges<'a, W> {
    pub num_vertices: usize,
    pub u: &'a [&'a [u32]],
    pub v: &'a [&'a [u32]],
    pub weights: Option<&'a [&'a [W]]>,
}

/// Solves a graph given as host arrays through the same device pipeline: the arrays
/// are uploaded as they are (the pieces joined on the device), and validation, weight
/// keys and the forest's ids run on the device. Returns the outcome and, for a forest,
/// its edge positions in ascending order.
pub(crate) fn solve_host<D: Device, W: Element>(
    tier: &Gpu<D>,
    edges: &HostEdges<'_, W>,
    work: &Work,
    adjacency: fn(&DeviceProblem<'_>) -> Result<super::DeviceCsr>,
) -> Result<(ResidentOutcome<W>, Vec<u64>)> {
    let mut watch = Stopwatch::start(tier);
    let (n, m) = (
        edges.num_vertices,
        edges.u.iter().map(|p| p.len()).sum::<usize>(),
    );
    if !check_host_call::<D, W>(tier, n, m, work, edges.weights.is_some())? {
        return Ok((empty_forest(), Vec::new()));
    }
    let mut arrays = crate::profile::span("gpu e2e: uploads issued", || {
        let mut arrays = EdgeArrays {
            num_vertices: n,
            u: tier.alloc(m)?,
            v: tier.alloc(m)?,
            weights: edges.weights.map(|_| tier.alloc(m)).transpose()?,
            kept: false,
        };
        let mut fillings = vec![arrays.u.filling(edges.u), arrays.v.filling(edges.v)];
        if let (Some(buffer), Some(pieces)) = (&mut arrays.weights, edges.weights) {
            fillings.push(buffer.filling(pieces));
        }
        tier.write_together(&mut fillings)?;
        Ok::<_, Error>(arrays)
    })?;
    let host_ids = HostIds::prepare(n.saturating_sub(1).min(m))?;
    let (mut outcome, ids) = solve_uploaded(tier, &mut arrays, work, adjacency, &mut watch)?;
    let mut positions = Vec::new();
    if let (ResidentOutcome::Forest { count, timings, .. }, Some(ids)) = (&mut outcome, &ids) {
        positions = host_ids.take(*count)?;
        crate::profile::span("gpu e2e: ids to the host", || {
            tier.read(ids, &mut positions)
        })?;
        timings.download_ms += watch.lap();
    }
    Ok((outcome, positions))
}

/// The forest of a graph with no edges.
fn empty_forest<W>() -> ResidentOutcome<W> {
    ResidentOutcome::Forest {
        count: 0,
        weights: None,
        weight_sum: None,
        timings: DeviceTimings::default(),
    }
}

/// Refuses a call on host arrays of `m` edges over `n` vertices that the device cannot
/// hold; false when there is nothing to solve (no edges).
pub(super) fn check_host_call<D: Device, W: Element>(
    tier: &Gpu<D>,
    n: usize,
    m: usize,
    work: &Work,
    weighted: bool,
) -> Result<bool> {
    super::check_edge_count(work.algorithm, m)?;
    if m == 0 {
        return Ok(false);
    }
    let capacity = n.saturating_sub(1).min(m);
    // The uploaded weights (beside their keys, if converted) and the ids are gpumst's own.
    let own = (if weighted { W::DTYPE.size() * m } else { 0 } + 8 * capacity) as u64;
    check_capacity(tier, work.algorithm, n, m, key_bytes::<W>(weighted), own)?;
    let largest = m as u64 * largest_buffer_per_edge(work.algorithm);
    if largest > tier.settings.max_allocation {
        return Err(Error::new(
            crate::Status::OutOfMemory,
            format!(
                "this graph's {m} edges need a device buffer of about {largest} bytes; {} allows at most {} in one allocation",
                tier.settings.name,
                tier.settings.max_allocation
            ),
        ));
    }
    Ok(true)
}

/// A call's outcome and the device buffer holding its forest's positions (ascending;
/// none when the graph can have no forest edge).
type Solution<D, W> = (ResidentOutcome<W>, Option<DeviceBuffer<D, u64>>);

/// Solves uploaded arrays (see [`Solution`]).
pub(super) fn solve_uploaded<D: Device, W: Element>(
    tier: &Gpu<D>,
    arrays: &mut EdgeArrays<D, W>,
    work: &Work,
    adjacency: fn(&DeviceProblem<'_>) -> Result<super::DeviceCsr>,
    watch: &mut Stopwatch,
) -> Result<Solution<D, W>> {
    let capacity = arrays.num_vertices.saturating_sub(1).min(arrays.u.len());
    let ids = match capacity {
        0 => None,
        _ => Some(tier.alloc::<u64>(capacity)?),
    };
    let outcome = solve_arrays(tier, arrays, ids.as_ref(), work, adjacency, watch)?;
    Ok((outcome, ids))
}

/// The host vector that receives a forest's ids from the device, written with zeros
/// by the pool while the device works: the page faults of a fresh vector cost as much
/// as a road graph's whole device time (NY on an H200: ~0.2 ms to allocate and ~0.2 ms
/// to fill 2.1 MB after the device finished), and a large one's slowed its copy from
/// the transfer buffers to 13 GB/s (R-MAT 24's 71 MB of ids: 5.4 ms after a 19 ms
/// solve on an H200). A small vector is written by one thread, a large one by all of
/// the pool's (one thread alone took longer than the copy: 33 MB in ~17 ms on the
/// H100's host).
pub(super) enum HostIds {
    /// Handed to the pool to write.
    Touching(Arc<IdsRoom>),
    /// Made when the forest's size is known.
    Later,
}

/// A vector to be written with zeros by whichever comes first: the pool's job, or the
/// caller taking it (whose thread may be the pool's only one, busy until then: it must
/// not wait for a job that cannot start).
pub(super) struct IdsRoom {
    state: Mutex<Ids>,
    written: Condvar,
}

#[derive(Default)]
enum Ids {
    /// Not begun: zeros from the allocator, whose pages nothing has touched.
    Unwritten(Vec<u64>),
    /// Being written by the pool's job.
    #[default]
    Writing,
    Written(Vec<u64>),
}

/// The largest ids vector one thread writes while the device works.
const TOUCHED_IDS_ALONE: usize = 1 << 20;

/// Writes `ids` (zeros, from the allocator) with zeros: its pages are touched here.
fn touch(ids: &mut [u64]) {
    match ids.len() <= TOUCHED_IDS_ALONE {
        true => ids.fill(0),
        false => ids.par_chunks_mut(1 << 15).for_each(|chunk| chunk.fill(0)),
    }
}

impl HostIds {
    /// Starts preparing room for up to `capacity` ids (the allocation itself is made
    /// here, on the caller's thread). Not inlined, nor is `take`: one compiled copy
    /// serves every device and weight type.
    #[inline(never)]
    pub(super) fn prepare(capacity: usize) -> Result<HostIds> {
        if capacity == 0 {
            return Ok(HostIds::Later);
        }
        let ids = alloc::zeroed::<u64>(capacity, "the forest's edge ids")?;
        let room = Arc::new(IdsRoom {
            state: Mutex::new(Ids::Unwritten(ids)),
            written: Condvar::new(),
        });
        let writer = room.clone();
        rayon::spawn(move || {
            if let Some(mut ids) = writer.claim() {
                touch(&mut ids);
                *writer.lock() = Ids::Written(ids);
                writer.written.notify_one();
            }
        });
        Ok(HostIds::Touching(room))
    }

    /// Room for exactly `count` ids (at most the capacity prepared).
    #[inline(never)]
    pub(super) fn take(self, count: usize) -> Result<Vec<u64>> {
        let HostIds::Touching(room) = self else {
            return alloc::zeroed::<u64>(count, "the forest's edge ids");
        };
        let mut ids = match room.claim() {
            // The job has not begun: written here.
            Some(mut ids) => {
                touch(&mut ids);
                ids
            }
            None => room.wait(),
        };
        if ids.len() < count {
            // (Not prepared for so many: the caller's bound was wrong.)
            return alloc::zeroed::<u64>(count, "the forest's edge ids");
        }
        ids.truncate(count);
        Ok(ids)
    }
}

impl IdsRoom {
    fn lock(&self) -> std::sync::MutexGuard<'_, Ids> {
        // Nothing panics while holding the lock, so a poisoned one still holds the truth.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The vector to write, if nobody has begun writing it.
    fn claim(&self) -> Option<Vec<u64>> {
        let mut state = self.lock();
        match std::mem::take(&mut *state) {
            Ids::Unwritten(ids) => Some(ids),
            other => {
                *state = other;
                None
            }
        }
    }

    /// The vector, once the pool's job has written it.
    fn wait(&self) -> Vec<u64> {
        let mut state = self.lock();
        loop {
            match std::mem::take(&mut *state) {
                Ids::Written(ids) => return ids,
                other => *state = other,
            }
            state = self.written.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The most edges [`solve_host`] takes at once for a graph of `n` vertices on `tier`
/// (its checks pass for any count up to it); at most n - 1 means the graph cannot be
/// solved in partitions either (a partition must hold a forest and one edge more).
pub(crate) fn host_edges_that_fit<D: Device, W: Element>(
    tier: &Gpu<D>,
    n: usize,
    algorithm: Algorithm,
    weighted: bool,
) -> usize {
    edges_that_fit::<D, W>(tier, n, algorithm, weighted, tier.settings.global_memory)
}

/// Device bytes per edge of a partition (or a call on host arrays): the algorithm's
/// working set and the uploaded weights.
pub(super) fn edge_bytes<W: Element>(algorithm: Algorithm, weighted: bool) -> u64 {
    let (per_edge, _) = working_set(algorithm, key_bytes::<W>(weighted));
    per_edge + if weighted { W::DTYPE.size() as u64 } else { 0 }
}

/// Bytes per edge of an edge list as given: its ends and weights.
pub(super) fn input_bytes<W: Element>(weighted: bool) -> u64 {
    8 + if weighted { W::DTYPE.size() as u64 } else { 0 }
}

/// As [`host_edges_that_fit`], in `memory` bytes of the device.
fn edges_that_fit<D: Device, W: Element>(
    tier: &Gpu<D>,
    n: usize,
    algorithm: Algorithm,
    weighted: bool,
    memory: u64,
) -> usize {
    let per_edge = edge_bytes::<W>(algorithm, weighted);
    let fixed = vertex_bytes::<W>(n, algorithm, weighted);
    if fixed >= memory {
        return 0;
    }
    let by_memory = (memory - fixed) / per_edge;
    let by_allocation = tier.settings.max_allocation / largest_buffer_per_edge(algorithm);
    by_memory.min(by_allocation).min(usize::MAX as u64) as usize
}

/// Device bytes for the vertices of a graph of `n` (beside its edges): the algorithm's
/// per-vertex arrays, a forest id per vertex at most and, in partitions, the carried
/// forest's positions in the whole list (one per vertex at most), held while the next
/// partition is solved.
fn vertex_bytes<W: Element>(n: usize, algorithm: Algorithm, weighted: bool) -> u64 {
    let (_, per_vertex) = working_set(algorithm, key_bytes::<W>(weighted));
    n as u64 * (per_vertex + 8 + 8)
}

/// The least device memory in which partitions take a graph of `n` vertices: the
/// vertices' arrays and room for twice a forest (each partition must bring more edges
/// than the forest it carries), beside `theirs` (the caller's arrays, when in device
/// memory). A lower bound by memory: the device's largest allocation may still refuse.
pub(crate) fn least_for_partitions<W: Element>(
    n: usize,
    algorithm: Algorithm,
    weighted: bool,
    theirs: u64,
) -> u64 {
    let edges = 2 * n.max(1) as u64 * edge_bytes::<W>(algorithm, weighted);
    vertex_bytes::<W>(n, algorithm, weighted) + edges + theirs
}

/// `refusal` (a graph of `n` vertices and `m` edges over the device's memory in one
/// piece) with `least`, the memory in which partitions would take it
/// ([`least_for_partitions`]): a cap too small for the vertices otherwise reads as if
/// the whole graph had to fit. Compiled once (not per weight type).
#[inline(never)]
pub(crate) fn with_least_for_partitions(
    refusal: Error,
    (n, m): (usize, usize),
    least: u64,
) -> Error {
    // Partitions take less memory than one piece only for more than twice a forest.
    if refusal.status() != crate::Status::OutOfMemory || m <= 2 * n.max(1) {
        return refusal;
    }
    Error::new(
        crate::Status::OutOfMemory,
        format!(
            "{}; in partitions it would need at least {least} bytes (the vertices' arrays and room for twice a forest)",
            refusal.message()
        ),
    )
}

/// What a device MSF computes, wherever its arrays came from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Work {
    pub algorithm: Algorithm,
    /// Descending keys (a maximum spanning forest).
    pub descending: bool,
    pub total: Total,
    /// Time the algorithm by the device's clock too (a wait of its own).
    pub device_clock: bool,
}

/// What a device MSF finds toward its forest's total weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Total {
    /// Nothing.
    None,
    /// The sum of integer weights, on the device (exact: 128-bit sums per block, added
    /// on the host); a float total is left to the caller, who holds the weights.
    OfIntegers,
    /// The total whatever the weights: integers summed on the device, float weights
    /// brought to the host in the forest's order (the host adds them in id order, so
    /// that the total is every tier's to the bit).
    Always,
}

impl Work {
    /// Whether the forest's integer weights are summed on the device.
    fn sums_integers(&self) -> bool {
        self.total != Total::None
    }

    /// Whether the forest's weights come to the host where the device does not sum them.
    fn brings_weights(&self) -> bool {
        self.total == Total::Always
    }
}

/// An edge list on the device: the caller's memory (wrapped) or gpumst's (uploaded).
pub(crate) struct EdgeArrays<D: Device, W> {
    pub(super) num_vertices: usize,
    pub(super) u: DeviceBuffer<D, u32>,
    pub(super) v: DeviceBuffer<D, u32>,
    pub(super) weights: Option<DeviceBuffer<D, W>>,
    /// Kept whole after the call (a partition's, whose forest the next one gathers):
    /// the weights are not freed early.
    pub(super) kept: bool,
}

impl<D: Device, W> EdgeArrays<D, W> {
    /// The same arrays, their weights as elements of type U (of W's size).
    pub(super) fn cast<U>(self) -> EdgeArrays<D, U> {
        EdgeArrays {
            num_vertices: self.num_vertices,
            u: self.u,
            v: self.v,
            weights: self.weights.map(DeviceBuffer::cast),
            kept: self.kept,
        }
    }

    /// The arrays as kernel arguments.
    pub(super) fn args(&self) -> super::filter::EdgeArgs<D> {
        super::filter::EdgeArgs {
            u: self.u.arg(),
            v: self.v.arg(),
            weights: self.weights.as_ref().map(|w| w.arg()),
        }
    }
}

/// The MSF kernels' configuration for weights of type W (or none).
pub(super) fn msf_config<D: Device, W: Element>(tier: &Gpu<D>, weighted: bool) -> KernelConfig {
    kernel_config(tier, weighted.then_some(W::DTYPE))
}

/// The MSF kernels' configuration for weights of type `weights` (None: unweighted).
pub(super) fn kernel_config<D: Device>(tier: &Gpu<D>, weights: Option<DType>) -> KernelConfig {
    KernelConfig {
        keys: match weights.map(|dtype| dtype.size()) {
            None => 0,
            Some(8) => 2,
            Some(_) => 1,
        },
        atom64: tier.settings.int64_atomics,
    }
}

/// Bytes per edge of the keys the kernels read, for the capacity check.
fn key_bytes<W: Element>(weighted: bool) -> usize {
    if weighted {
        W::DTYPE.size().max(4)
    } else {
        0
    }
}

/// The pipeline both entries share: checks and keys, the algorithm, the forest's ids
/// (written to `ids`, which holds min(n - 1, m) entries, or is None when that is 0).
fn solve_arrays<D: Device, W: Element>(
    tier: &Gpu<D>,
    arrays: &mut EdgeArrays<D, W>,
    ids: Option<&DeviceBuffer<D, u64>>,
    work: &Work,
    adjacency: fn(&DeviceProblem<'_>) -> Result<super::DeviceCsr>,
    watch: &mut Stopwatch,
) -> Result<ResidentOutcome<W>> {
    let mut timings = DeviceTimings::default();
    let n = arrays.num_vertices;
    let (eu, ev) = (&arrays.u, &arrays.v);
    let m = eu.len();
    let algorithm = work.algorithm;
    if n == 0 {
        // Every end is out of range; name the first as the host does.
        let value = tier.read_one(eu, 0)?;
        return Ok(ResidentOutcome::Invalid(Finding::EndOutOfRange {
            u: true,
            edge: 0,
            value,
        }));
    }
    let wide = W::DTYPE.size() == 8;
    let config = msf_config::<D, W>(tier, arrays.weights.is_some());
    let program = tier.program(ProgramKind::Msf(config))?;
    let run_on =
        |name: &str, items: usize, args: &[Arg<D>]| tier.launch(&program, name, items, 0, args);

    // The light phases' sample first (the keys of every stride-th weight, from the
    // weights themselves): its wait then covers no more than its own small kernel (and,
    // for host arrays, the uploads), and the host sorts it while the device checks the
    // edges and makes their keys.
    let filter_from = match arrays.kept {
        true => super::FILTER_FROM_IN_PARTITIONS,
        false => crate::tier::gpu::knobs().filter_from,
    };
    let sample = match (&arrays.weights, algorithm, sample_stride(m, n, filter_from)) {
        (Some(w), Algorithm::Auto, Some(stride)) => {
            let sample = tier.alloc::<u64>(SAMPLE)?;
            run_on(
                "rs_sample_keys",
                SAMPLE,
                &[
                    w.arg(),
                    Arg::U64(stride as u64),
                    Arg::U32(SAMPLE as u32),
                    Arg::U32(key_kind(W::DTYPE)),
                    Arg::U32(work.descending as u32),
                    sample.arg(),
                ],
            )?;
            let mut host = vec![0u64; SAMPLE];
            crate::profile::span("gpu e2e: wait for the sample", || {
                tier.read(&sample, &mut host)
            })?;
            Some(host)
        }
        _ => None,
    };

    // Validation, the flags' zeroing and 32-bit keys in one launch (64-bit keys in one
    // more). Their findings are read with the forest's edge count at the end: the
    // algorithms read the ends clamped to the vertex range (msf.cl, end_at) and any bits
    // make some key, so a graph the checks reject runs safely to the end (its ids are
    // not written), and no wait stands between the checks and the algorithm.
    // The flags are read a vector of 16 at a time (rs_count_chosen): zero to a multiple
    // of 16.
    let in_forest = tier.alloc::<u8>(m.next_multiple_of(16))?;
    let make_keys = arrays.weights.is_some() && (key_kind(W::DTYPE) != 0 || work.descending);
    let keys = match &arrays.weights {
        None => KeyBuffer::None(tier.alloc(0)?),
        // Unsigned weights in ascending order are their own keys (the weights' buffer,
        // lent again: it outlives the keys below).
        Some(w) if !make_keys => {
            // SAFETY: `w` is live device memory of this tier holding m weights, kept
            // until the end of this function, after the last use of the keys.
            if wide {
                KeyBuffer::Wide(unsafe { tier.wrap(w.address(), m, "weights")? })
            } else {
                KeyBuffer::Narrow(unsafe { tier.wrap(w.address(), m, "weights")? })
            }
        }
        Some(_) if wide => KeyBuffer::Wide(tier.alloc::<u64>(m)?),
        Some(_) => KeyBuffer::Narrow(tier.alloc::<u32>(m)?),
    };
    let narrow_keys = match (&arrays.weights, &keys) {
        (Some(w), KeyBuffer::Narrow(k)) if make_keys => Some(NarrowKeys {
            weights: w.arg(),
            aligned: w.starts_on_16_bytes(),
            kind: key_kind(W::DTYPE),
            descending: work.descending,
            keys: k.arg(),
        }),
        _ => None,
    };
    // The ids in one launch for few blocks, where work-groups keep running once started
    // (the chained scan's condition); its ticket and counts follow the status words.
    let group = tier.settings.group_size;
    let blocks = m.div_ceil(group * IDS_PER_ITEM);
    let one_pass = tier.settings.single_pass_scan && (1..=ONE_PASS_BLOCKS).contains(&blocks);
    let chain_words = if one_pass { 1 + blocks } else { 0 };
    let prepare = Prepare {
        status_words: STATUS_WORDS + chain_words,
        flags: Some(&in_forest),
        narrow_keys,
    };
    let mut status = check_ends(tier, &program, arrays, prepare)?;
    if let (Some(w), KeyBuffer::Wide(k), true) = (&arrays.weights, &keys, make_keys) {
        run_on(
            "rs_wide_keys",
            m,
            &[
                w.arg(),
                Arg::U32(m as u32),
                Arg::U32(key_kind(W::DTYPE)),
                Arg::U32(work.descending as u32),
                k.arg(),
                status.arg(),
            ],
        )?;
    }
    if algorithm == Algorithm::Prim {
        // Prim's adjacency is built on the host from the ends: they must be in range.
        let mut found = [0u32; STATUS_WORDS];
        tier.read(&status, &mut found)?;
        if let Some(finding) = first_finding(tier, &found, eu, ev)? {
            return Ok(ResidentOutcome::Invalid(finding));
        }
    }
    // Converted keys stand in for the weights from here on unless the forest's weights
    // are wanted (or the arrays are kept): an uploaded copy is freed now (a free is
    // ordered behind the kernels already queued: CUDA's stream-ordered pool, OpenCL's
    // release of a buffer in use).
    let keys_are_weights = key_kind(W::DTYPE) == 0 && !work.descending;
    let sum_here = work.sums_integers() && !matches!(W::DTYPE, DType::F32 | DType::F64);
    if !(keys_are_weights || work.brings_weights() || arrays.kept || sum_here) {
        arrays.weights = None;
    }
    let thresholds = sample.map_or_else(Vec::new, |sample| thresholds_of(sample, m, n));
    if work.device_clock {
        // A call that times its phases (host arrays) waits here for the uploads, checks
        // and keys, so that its compute lap is the algorithm's; a device-input call goes
        // straight on.
        tier.finish()?;
    }
    timings.upload_ms = watch.lap();

    let run = Run {
        tier,
        program: &program,
        config,
        eu,
        ev,
        keys: keys.arg(),
        in_forest: &in_forest,
    };
    // The device clock costs a wait of its own: only where the caller asks for it.
    let compute = || {
        if algorithm == Algorithm::Prim {
            // Prim grows from an adjacency the host builds: the graph comes over.
            let (u, v, keys) = host_copy(tier, eu, ev, &keys)?;
            let problem = DeviceProblem {
                num_vertices: n,
                u: &u,
                v: &v,
                keys,
                adjacency,
            };
            run.algorithm(n, m, algorithm, &[], Some(&problem))
        } else {
            run.algorithm(n, m, algorithm, &thresholds, None)
        }
    };
    if work.device_clock {
        timings.compute_device_ms = tier.time(compute)?.1;
        tier.finish()?;
    } else {
        // Queued only: the ids' kernels follow the algorithm's without a wait between.
        compute()?;
    }
    timings.compute_ms = watch.lap();

    let sums = match &arrays.weights {
        Some(w) if sum_here => Some((w.arg(), wide, key_kind(W::DTYPE) == 1)),
        _ => None,
    };
    let (found, block_sums) = forest_ids(
        tier,
        &program,
        (&in_forest, m, one_pass),
        &mut status,
        ids,
        sums,
    )?;
    if let Some(finding) = first_finding(tier, &found, eu, ev)? {
        return Ok(ResidentOutcome::Invalid(finding));
    }
    let count = found[STATUS_WORDS - 1] as usize;
    let weight_sum = match block_sums {
        Some(sums) => Some(add_block_sums(tier, &sums)?),
        None => None,
    };
    let capacity = ids.map_or(0, |ids| ids.len());
    if count > capacity {
        return Err(Error::internal(format!(
            "the device found a forest of {count} edges in a graph of {n} vertices and {m} edges"
        )));
    }
    let forest_weights = match (ids, &arrays.weights) {
        (Some(ids), Some(w)) if work.brings_weights() && weight_sum.is_none() => {
            Some(gather_weights(tier, &program, w, ids, count)?)
        }
        _ => None,
    };
    timings.download_ms = watch.lap();
    timings.peak_device_bytes = watch.peak_bytes(tier);
    Ok(ResidentOutcome::Forest {
        count,
        weights: forest_weights.or_else(|| work.brings_weights().then(Vec::new)),
        weight_sum,
        timings,
    })
}

/// The forest's ids in ascending order into `ids` (if any), from the flags
/// `in_forest` of `m` edges, and the call's status words read back behind them (one
/// wait), with the chosen weights' sums per block where `sums` gives the weights (their
/// argument, whether 8 bytes wide, whether signed). Per block of edges its count of
/// chosen ones, their inclusive scan, then each block writes its ids from there; in one
/// launch where it can (`one_pass`: rs_ids_one_pass), which writes the four status
/// words straight to host memory where the tier has some. (One copy of this code per
/// device, not per weight type.)
fn forest_ids<D: Device>(
    tier: &Gpu<D>,
    program: &D::Program,
    (in_forest, m, one_pass): (&DeviceBuffer<D, u8>, usize, bool),
    status: &mut DeviceBuffer<D, u32>,
    ids: Option<&DeviceBuffer<D, u64>>,
    sums: Option<(Arg<D>, bool, bool)>,
) -> Result<(StatusWords, Option<DeviceBuffer<D, u64>>)> {
    let run_on =
        |name: &str, items: usize, args: &[Arg<D>]| tier.launch(program, name, items, 0, args);
    let group = tier.settings.group_size;
    let blocks = m.div_ceil(group * IDS_PER_ITEM);
    let id_args = [in_forest.arg(), Arg::U32(m as u32)];
    let host_words = if one_pass {
        tier.device.host_words()
    } else {
        None
    };
    if one_pass {
        let out = match &host_words {
            Some(words) => Arg::Mem(D::host_words_handle(words)),
            None => status.arg(),
        };
        // Without ids nothing is written to the ids' argument: any buffer will do.
        let ids_arg = ids.map_or(status.arg(), |ids| ids.arg());
        run_on(
            "rs_ids_one_pass",
            blocks * group,
            &[
                id_args[0],
                id_args[1],
                status.arg(),
                Arg::U32(ids.is_some() as u32),
                ids_arg,
                out,
            ],
        )?;
    } else {
        let mut block_ends = tier.alloc::<u32>(blocks)?;
        let args = [id_args[0], id_args[1], block_ends.arg()];
        run_on("rs_count_chosen", blocks * group, &args)?;
        tier.scan_queued(&mut block_ends, None, ScanOp::Sum, ScanKind::Inclusive)?;
        match ids {
            // It also puts the count in the status' last word.
            Some(ids) => run_on(
                "rs_write_ids",
                blocks * group,
                &[args[0], args[1], args[2], status.arg(), ids.arg()],
            )?,
            None => tier.copy_at(&block_ends, blocks - 1, status, STATUS_WORDS - 1, 1)?,
        }
    }
    let block_sums = match sums {
        Some((weights, wide, signed)) => {
            let sums = tier.alloc::<u64>(2 * blocks)?;
            run_on(
                "rs_chosen_weight_sums",
                blocks * group,
                &[
                    id_args[0],
                    id_args[1],
                    weights,
                    Arg::U32(wide as u32),
                    Arg::U32(signed as u32),
                    sums.arg(),
                ],
            )?;
            Some(sums)
        }
        None => None,
    };
    // Read behind the ids' writes (and the sums): one wait for all.
    let mut found = [0u32; STATUS_WORDS];
    crate::profile::span("gpu e2e: wait for the forest's ids", || match &host_words {
        Some(words) => {
            tier.finish()?;
            let bytes = D::host_words_read(words).map(u64::to_ne_bytes).concat();
            for (word, bytes) in found.iter_mut().zip(bytes.chunks_exact(4)) {
                let mut four = [0u8; 4];
                four.copy_from_slice(bytes);
                *word = u32::from_ne_bytes(four);
            }
            Ok(())
        }
        None => tier.read(status, &mut found),
    })?;
    Ok((found, block_sums))
}

/// A call's status words as read back.
type StatusWords = [u32; STATUS_WORDS];

/// Words of a call's status on the device: the first failed checks' positions (u out
/// of range, v out of range, NaN weight; `NO_POSITION` while none), then the forest's
/// edge count, read together at the end (one copy, or straight from the host memory
/// `rs_ids_one_pass` writes them to).
const STATUS_WORDS: usize = 4;

/// What `rs_prepare` does beside the ends' check.
struct Prepare<'a, D: Device> {
    /// Status words to allocate (at least [`STATUS_WORDS`]), every one NO_POSITION.
    status_words: usize,
    /// The forest's flags, zeroed (their whole length, a multiple of 4 bytes).
    flags: Option<&'a DeviceBuffer<D, u8>>,
    /// Keys of 32-bit weights to make.
    narrow_keys: Option<NarrowKeys<D>>,
}

impl<D: Device> Default for Prepare<'_, D> {
    fn default() -> Self {
        Prepare {
            status_words: STATUS_WORDS,
            flags: None,
            narrow_keys: None,
        }
    }
}

/// 32-bit weights and their keys' buffer, for `rs_prepare`.
struct NarrowKeys<D: Device> {
    weights: Arg<D>,
    /// The weights start on 16 bytes (vector loads).
    aligned: bool,
    kind: u32,
    descending: bool,
    keys: Arg<D>,
}

/// A call's status words (see [`STATUS_WORDS`]), the ends' checks over `list` queued
/// into them, with what else `prepare` asks of the same launch.
fn check_ends<D: Device, W>(
    tier: &Gpu<D>,
    program: &D::Program,
    list: &EdgeArrays<D, W>,
    prepare: Prepare<'_, D>,
) -> Result<DeviceBuffer<D, u32>> {
    let m = list.u.len();
    let mut status = tier.alloc::<u32>(prepare.status_words)?;
    tier.fill(&mut status, NO_POSITION, prepare.status_words)?;
    let (flags, flag_words) = match prepare.flags {
        Some(flags) => (flags.arg(), flags.len() / 4),
        // Not written: any buffer will do.
        None => (status.arg(), 0),
    };
    let make_keys = prepare.narrow_keys.is_some();
    let (weights, keys, kind, descending, aligned) = match prepare.narrow_keys {
        Some(k) => (k.weights, k.keys, k.kind, k.descending, k.aligned),
        // Not read or written: any buffer will do.
        None => (status.arg(), status.arg(), 0, false, false),
    };
    tier.launch(
        program,
        "rs_prepare",
        m.div_ceil(4).max(flag_words),
        0,
        &[
            list.u.arg(),
            list.v.arg(),
            Arg::U32(m as u32),
            Arg::U64(list.num_vertices as u64),
            // Both ends' arrays as vectors, or neither.
            Arg::U32((list.u.starts_on_16_bytes() && list.v.starts_on_16_bytes()) as u32),
            flags,
            Arg::U32(flag_words as u32),
            weights,
            Arg::U32(make_keys as u32),
            Arg::U32(kind),
            Arg::U32(descending as u32),
            Arg::U32(aligned as u32),
            keys,
            status.arg(),
        ],
    )?;
    Ok(status)
}

/// The first failed check among the positions the kernels found (`found`: u out of
/// range, v out of range, NaN weight), with the offending value read back.
fn first_finding<D: Device>(
    tier: &Gpu<D>,
    found: &[u32],
    eu: &DeviceBuffer<D, u32>,
    ev: &DeviceBuffer<D, u32>,
) -> Result<Option<Finding>> {
    for (u, ends, edge) in [(true, eu, found[0]), (false, ev, found[1])] {
        if edge != NO_POSITION {
            let edge = edge as usize;
            let value = tier.read_one(ends, edge)?;
            return Ok(Some(Finding::EndOutOfRange { u, edge, value }));
        }
    }
    Ok((found[2] != NO_POSITION).then_some(Finding::NanWeight {
        edge: found[2] as usize,
    }))
}

/// The total of `rs_chosen_weight_sums`' block sums (128-bit two's complement, low
/// word first), exactly.
fn add_block_sums<D: Device>(tier: &Gpu<D>, sums: &DeviceBuffer<D, u64>) -> Result<i128> {
    let mut host = alloc::filled(sums.len(), 0u64, "the forest's weight sums")?;
    tier.read(sums, &mut host)?;
    Ok(host
        .chunks_exact(2)
        .map(|word| ((word[1] as u128) << 64 | word[0] as u128) as i128)
        .fold(0, i128::wrapping_add))
}

/// The weights of the forest's `count` edges (ids in `ids`), in that order.
fn gather_weights<D: Device, W: Element>(
    tier: &Gpu<D>,
    program: &D::Program,
    weights: &DeviceBuffer<D, W>,
    ids: &DeviceBuffer<D, u64>,
    count: usize,
) -> Result<Vec<W>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let gathered = tier.alloc::<W>(count)?;
    tier.launch(
        program,
        "rs_forest_weights",
        count,
        0,
        &[
            weights.arg(),
            ids.arg(),
            Arg::U32(count as u32),
            Arg::U32((W::DTYPE.size() == 8) as u32),
            gathered.arg(),
        ],
    )?;
    let mut host = alloc::filled(count, W::default(), "the forest's weights")?;
    tier.read(&gathered, &mut host)?;
    Ok(host)
}

/// The graph's ends and keys on the host, for Prim's adjacency.
type HostCopy = (Vec<u32>, Vec<u32>, Option<DeviceKeys<'static>>);

fn host_copy<D: Device>(
    tier: &Gpu<D>,
    eu: &DeviceBuffer<D, u32>,
    ev: &DeviceBuffer<D, u32>,
    keys: &KeyBuffer<D>,
) -> Result<HostCopy> {
    let keys = match keys {
        KeyBuffer::None(_) => None,
        KeyBuffer::Narrow(k) => Some(DeviceKeys::Narrow(Cow::Owned(download(tier, k)?))),
        KeyBuffer::Wide(k) => Some(DeviceKeys::Wide(Cow::Owned(download(tier, k)?))),
    };
    Ok((download(tier, eu)?, download(tier, ev)?, keys))
}

/// A host copy of `buffer` (a graph's array: for the host's checks or algorithms).
pub(super) fn download<D: Device, T: Plain>(
    tier: &Gpu<D>,
    buffer: &DeviceBuffer<D, T>,
) -> Result<Vec<T>> {
    let mut host = alloc::filled(buffer.len(), T::default(), "a host copy of the graph")?;
    tier.read(buffer, &mut host)?;
    Ok(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The caller may be its pool's only thread, busy until it takes the vector: the
    /// pool's job cannot start before, and taking must not wait for it.
    #[test]
    fn ids_are_taken_on_a_pool_of_one_busy_thread() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a pool of one thread");
        for capacity in [5, TOUCHED_IDS_ALONE + 3] {
            let ids = pool.install(|| {
                let room = HostIds::prepare(capacity).expect("room");
                room.take(capacity - 2).expect("the ids")
            });
            assert_eq!(ids.len(), capacity - 2);
            assert!(ids.iter().all(|&id| id == 0));
        }
        // Taken after the job wrote it, on a pool with threads to spare.
        let room = HostIds::prepare(1000).expect("room");
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(room.take(1000).expect("the ids"), vec![0u64; 1000]);
    }
}
