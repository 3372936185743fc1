//! A host edge list split across several devices of one tier. Each device solves a
//! contiguous range of the list in its own memory, all at once, each from a host
//! thread of its own (as partitions, `partitions.rs`: a range over its device's memory
//! still goes, and the forest stays in device memory with its positions in the whole
//! list). Then the forests are merged in pairs, ceil(log2 p) rounds: the right device
//! gathers its forest's ends, weights and positions, the left device copies them
//! (device to device where the tier can: CUDA peer copies, over NVLink where there is
//! one; else through the host) and solves its own forest followed by them.
//! Under the strict (weight, position) order the forest of G1 ∪ G2 is the forest of
//! MSF(G1) ∪ MSF(G2), and the right range's positions follow the left's, so ties fall
//! as in one call: the forest is the one-device forest edge for edge.
//!
//! The host checks nothing beforehand: each device checks its range. Where one finds a
//! bad edge, the caller names the whole list's first (a later range may hold a bad u
//! before a range's bad v), as for partitions on one device.

use std::any::Any;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex};

use super::partitions::{
    as_stored, solve_as, Adjacency, Fresh, HostParts, Own, Partitions, Solver, Source,
};
use super::resident::{
    host_edges_that_fit, key_kind, msf_config, EdgeArrays, Finding, HostIds, Work,
};
use crate::tier::gpu::{Device, DeviceBuffer, Gpu, ProgramKind};
use crate::types::Element;
use crate::{Error, Result};

/// The forest of the host list `u`, `v`, `weights` over `n` vertices split across
/// `tiers` (see the module's documentation): its positions in the list (ascending),
/// its integer weight sum where `work` asks for it, and the first device's timings; or
/// a device's finding (a bad edge, at its position in the list). None where a device
/// cannot hold twice a forest beside its share, in partitions if need be (the caller
/// splits only shares of at least twice a forest: the merges would redo the work).
pub(crate) fn split_host_list<D: Device, W: Element>(
    tiers: &[&Gpu<D>],
    n: usize,
    (u, v, weights): (&[u32], &[u32], Option<&[W]>),
    work: &Work,
    adjacency: Adjacency,
) -> Result<Option<std::result::Result<HostParts, Finding>>> {
    // One copy of the split's code for the weights of each size, as for partitions:
    // only the solve's keys depend on the type.
    let kind = key_kind(W::DTYPE);
    let list = (u, v, n);
    match W::DTYPE.size() {
        8 => {
            let solver = (solve_as::<D, u64, W> as Solver<D, u64>, kind);
            split_stored(tiers, list, weights.map(as_stored), solver, work, adjacency)
        }
        _ => {
            let solver = (solve_as::<D, u32, W> as Solver<D, u32>, kind);
            split_stored(tiers, list, weights.map(as_stored), solver, work, adjacency)
        }
    }
}

/// [`split_host_list`] for weights stored as S, solved by `solver`.
#[inline(never)]
fn split_stored<D: Device, S: Element>(
    tiers: &[&Gpu<D>],
    (u, v, n): (&[u32], &[u32], usize),
    weights: Option<&[S]>,
    solver: (Solver<D, S>, u32),
    work: &Work,
    adjacency: Adjacency,
) -> Result<Option<std::result::Result<HostParts, Finding>>> {
    let (p, m) = (tiers.len(), u.len());
    // (S has W's size: the same room as for W.)
    let fits: Vec<usize> = tiers
        .iter()
        .map(|tier| host_edges_that_fit::<D, S>(tier, n, work.algorithm, weights.is_some()))
        .collect();
    // (The driver split only shares of at least twice a forest.)
    if fits.iter().any(|&fit| fit < 2 * n.max(1)) {
        return Ok(None);
    }
    let parts = (0..p)
        .map(|d| {
            let share = Share {
                tiers,
                device: d,
                fit: fits[d],
                range: d * m / p..(d + 1) * m / p,
                work: *work,
                adjacency,
            };
            Box::new(RangePart::new(share, n, (u, v, weights), solver)) as Box<dyn DevicePart>
        })
        .collect();
    run_parts(parts).map(Some)
}

/// One device's part of a split, whatever its device kind and weight size (the
/// threads, messages and rounds are compiled once, behind this).
trait DevicePart: Send {
    /// Solves the device's range of the list: a bad edge found in it, or None.
    fn solve_range(&mut self) -> Result<Option<Finding>>;
    /// Solves its forest followed by `right`, another device's forest of later
    /// positions (a [`HeldForest`] of its kind).
    fn merge(&mut self, right: Held) -> Result<()>;
    /// Its forest, gathered on its device for another device to merge.
    fn hold(self: Box<Self>) -> Result<Held>;
    /// Its forest's positions, weight sum and timings: the whole list's, after the
    /// last merge.
    fn finish(self: Box<Self>) -> Result<HostParts>;
}

/// A forest held on a device, sent to the device that merges it.
type Held = Box<dyn Any + Send>;

/// How a device's part of a split ended.
enum Part {
    /// The whole forest (the first device's, after the last merge).
    Forest(HostParts),
    /// Its forest went to the device that merges it.
    Sent,
    /// Its range holds a bad edge.
    Found(Finding),
    /// A device whose forest it was to merge failed (that device's outcome tells why).
    PartnerFailed,
}

/// Runs every device's part at once, one host thread each (on a pool of threads of
/// its own), and merges their forests in ceil(log2 p) rounds: round r merges device d
/// + 2^r's forest into device d's, for d a multiple of 2^(r+1).
fn run_parts(
    parts: Vec<Box<dyn DevicePart + '_>>,
) -> Result<std::result::Result<HostParts, Finding>> {
    let p = parts.len();
    let mailbox = Mailbox {
        slots: Mutex::new((0..p).map(|_| Slot::Waiting).collect()),
        changed: Condvar::new(),
    };
    let pools = DevicePools::take(p);
    let outcomes: Vec<Result<Part>> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .into_iter()
            .enumerate()
            .map(|(d, part)| {
                let (pool, mailbox) = (pools.get(d), &mailbox);
                scope.spawn(move || {
                    // However the part ends (a panic too), its left partner stops waiting.
                    let _unblock = FailsUnsent(mailbox, d);
                    match pool {
                        Some(pool) => pool.install(|| run_part(part, d, p, mailbox)),
                        None => run_part(part, d, p, mailbox),
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle.join().unwrap_or_else(|_| {
                    Err(Error::internal(
                        "a device's part of a split forest panicked",
                    ))
                })
            })
            .collect()
    });
    let (mut forest, mut found) = (None, None);
    for outcome in outcomes {
        match outcome? {
            Part::Forest(parts) => forest = Some(parts),
            Part::Found(finding) => found = found.or(Some(finding)),
            Part::Sent | Part::PartnerFailed => {}
        }
    }
    match (found, forest) {
        (Some(finding), _) => Ok(Err(finding)),
        (None, Some(forest)) => Ok(Ok(forest)),
        (None, None) => Err(Error::internal("no device of a split returned the forest")),
    }
}

/// Device d's part (of p): its range, then the forests of devices d + 1, d + 2, d + 4,
/// ... merged in turn, while d is a multiple of twice the step; then its forest sent
/// to its left partner (device 0 returns it: the whole list's).
fn run_part(
    mut part: Box<dyn DevicePart + '_>,
    d: usize,
    p: usize,
    mailbox: &Mailbox,
) -> Result<Part> {
    if let Some(finding) = crate::profile::span("split: a range", || part.solve_range())? {
        return Ok(Part::Found(finding));
    }
    let mut step = 1;
    while d % (2 * step) == 0 && d + step < p {
        let Some(right) =
            crate::profile::span("split: wait for a forest", || mailbox.take(d + step))
        else {
            return Ok(Part::PartnerFailed);
        };
        crate::profile::span("split: merge", || part.merge(right))?;
        step *= 2;
    }
    if d == 0 {
        return part.finish().map(Part::Forest);
    }
    let forest = crate::profile::span("split: gather the forest", || part.hold())?;
    mailbox.put(d, Slot::Sent(forest));
    Ok(Part::Sent)
}

/// The forests the devices' threads hand on: slot d holds device d's.
struct Mailbox {
    slots: Mutex<Vec<Slot>>,
    changed: Condvar,
}

/// Marks device `.1`'s slot failed when dropped, unless its forest was sent.
struct FailsUnsent<'m>(&'m Mailbox, usize);

impl Drop for FailsUnsent<'_> {
    fn drop(&mut self) {
        let FailsUnsent(mailbox, d) = *self;
        let mut slots = mailbox.slots.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(slots[d], Slot::Waiting) {
            slots[d] = Slot::Failed;
            mailbox.changed.notify_all();
        }
    }
}

enum Slot {
    Waiting,
    Sent(Held),
    /// Its device failed before sending (its outcome says why).
    Failed,
}

impl Mailbox {
    fn put(&self, d: usize, slot: Slot) {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())[d] = slot;
        self.changed.notify_all();
    }

    /// Device d's forest once sent, or None if it failed.
    fn take(&self, d: usize) -> Option<Held> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match std::mem::replace(&mut slots[d], Slot::Failed) {
                Slot::Sent(forest) => return Some(forest),
                Slot::Failed => return None,
                Slot::Waiting => {
                    slots[d] = Slot::Waiting;
                    slots = self.changed.wait(slots).unwrap_or_else(|e| e.into_inner());
                }
            }
        }
    }
}

/// A pool of host threads for each of `p` devices, a share of the cores each, taken
/// for one call and given back when it ends: each device's host copies run on threads
/// of their own (R-MAT 24 on two H200s: both uploads together 85 ms on one shared
/// pool, 45 ms on a pool each), and making the threads took a millisecond a call.
/// A call's pools are its own: a pool thread waiting inside a parallel copy runs other
/// jobs of its pool meanwhile, and another call's part run there would make its own
/// device's context current on the thread under the waiting copy (two splits at once
/// on two H200s failed so, a copy's stream not of the thread's context). Empty where
/// the threads cannot be made (the devices then share rayon's pool).
struct DevicePools(Vec<rayon::ThreadPool>);

/// Pools given back by finished calls, kept for the next (at most this many).
const IDLE_POOLS_KEPT: usize = 8;
static IDLE_POOLS: Mutex<Vec<rayon::ThreadPool>> = Mutex::new(Vec::new());

impl DevicePools {
    fn take(p: usize) -> DevicePools {
        let threads = (rayon::current_num_threads() / p).max(1);
        let mut taken = Vec::with_capacity(p);
        {
            let mut idle = IDLE_POOLS.lock().unwrap_or_else(|e| e.into_inner());
            idle.retain(|pool| pool.current_num_threads() == threads);
            while taken.len() < p {
                match idle.pop() {
                    Some(pool) => taken.push(pool),
                    None => break,
                }
            }
        }
        while taken.len() < p {
            match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                Ok(pool) => taken.push(pool),
                Err(_) => return DevicePools(Vec::new()),
            }
        }
        DevicePools(taken)
    }

    fn get(&self, d: usize) -> Option<&rayon::ThreadPool> {
        self.0.get(d)
    }
}

impl Drop for DevicePools {
    fn drop(&mut self) {
        let mut idle = IDLE_POOLS.lock().unwrap_or_else(|e| e.into_inner());
        let room = IDLE_POOLS_KEPT.saturating_sub(idle.len());
        idle.extend(self.0.drain(..).take(room));
    }
}

/// A device's forest gathered in its memory for a merge: its edges' ends and weights
/// (stored as S) and their positions in the whole list, ascending; and the device's
/// index.
struct HeldForest<D: Device, S> {
    device: usize,
    arrays: EdgeArrays<D, S>,
    positions: Option<DeviceBuffer<D, u64>>,
}

/// What every device's part shares but its weights: all the devices, its own, the
/// edges it takes at once, its range, the work and Prim's adjacency.
struct Share<'t, D: Device> {
    tiers: &'t [&'t Gpu<D>],
    device: usize,
    fit: usize,
    range: Range<usize>,
    work: Work,
    adjacency: Adjacency,
}

/// A host edge list of one weight size.
type List<'a, S> = (&'a [u32], &'a [u32], Option<&'a [S]>);

/// A device's part for weights stored as S: its range solved as partitions.
struct RangePart<'t, 'a, D: Device, S> {
    share: Share<'t, D>,
    list: List<'a, S>,
    parts: Partitions<'t, D, S>,
    /// The first device's room for the whole forest's positions, made from its first
    /// merge on (after the uploads, which the pool's threads would slow).
    ids: HostIds,
}

impl<'t, 'a, D: Device, S: Element> RangePart<'t, 'a, D, S> {
    fn new(share: Share<'t, D>, n: usize, list: List<'a, S>, solver: (Solver<D, S>, u32)) -> Self {
        let tier = share.tiers[share.device];
        let parts = Partitions::new(tier, share.work, n, solver);
        RangePart {
            share,
            list,
            parts,
            ids: HostIds::Later,
        }
    }

    /// The MSF kernels of this device and weight size.
    fn program(&self) -> Result<Arc<D::Program>> {
        let tier = self.parts.tier;
        tier.program(ProgramKind::Msf(msf_config::<D, S>(
            tier,
            self.list.2.is_some(),
        )))
    }
}

impl<D: Device, S: Element> DevicePart for RangePart<'_, '_, D, S> {
    fn solve_range(&mut self) -> Result<Option<Finding>> {
        let (u, v, weights) = self.list;
        let fresh = |range| Fresh {
            source: Source::Host { u, v, weights },
            range,
        };
        let share = &self.share;
        let solved =
            self.parts
                .solve_all(share.range.clone(), share.fit, &fresh, share.adjacency)?;
        Ok(solved.err())
    }

    fn merge(&mut self, right: Held) -> Result<()> {
        let right = right
            .downcast::<HeldForest<D, S>>()
            .map_err(|_| Error::internal("a forest held by another kind of device"))?;
        let Some(positions) = &right.positions else {
            return Ok(());
        };
        let program = self.program()?;
        let parts = &mut self.parts;
        let (tier, from) = (parts.tier, self.share.tiers[right.device]);
        let (carried, more) = (parts.count, positions.len());
        if let (0, HostIds::Later) = (self.share.device, &self.ids) {
            let bound = parts.num_vertices.saturating_sub(1).min(self.list.0.len());
            self.ids = HostIds::prepare(bound)?;
        }
        let mut arrays = parts.arrays(carried + more, right.arrays.weights.is_some())?;
        parts.carry_into(&program, &mut arrays)?;
        tier.copy_from_peer(from, &right.arrays.u, &mut arrays.u, carried)?;
        tier.copy_from_peer(from, &right.arrays.v, &mut arrays.v, carried)?;
        if let (Some(into), Some(w)) = (&mut arrays.weights, &right.arrays.weights) {
            tier.copy_from_peer(from, w, into, carried)?;
        }
        let mut listed = tier.alloc::<u64>(more)?;
        tier.copy_from_peer(from, positions, &mut listed, 0)?;
        // The right forest's memory is freed on its device's queue: only once this
        // device's copies of it are done.
        tier.finish()?;
        drop(right);
        match parts.solve(
            &program,
            arrays,
            carried,
            Own::Listed(listed),
            self.share.adjacency,
        )? {
            Ok(_) => Ok(()),
            Err(finding) => Err(Error::internal(format!(
                "a merge of two checked forests found a bad edge: {finding:?}"
            ))),
        }
    }

    fn hold(self: Box<Self>) -> Result<Held> {
        let program = self.program()?;
        let RangePart {
            share,
            list,
            mut parts,
            ..
        } = *self;
        let tier = parts.tier;
        let mut arrays = parts.arrays(parts.count, list.2.is_some())?;
        parts.carry_into(&program, &mut arrays)?;
        let (_, positions, _, _) = parts.into_parts();
        // Finished, so that another device may copy it.
        tier.finish()?;
        Ok(Box::new(HeldForest {
            device: share.device,
            arrays,
            positions,
        }))
    }

    fn finish(self: Box<Self>) -> Result<HostParts> {
        self.parts.finish(self.ids)
    }
}
