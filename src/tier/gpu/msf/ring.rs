//! Host chunks on their way to the partitions' filter: a few slots of device memory,
//! filled in list order by a thread of their own as the filter frees them, so that the
//! device's copies go on while it solves a partition. Marks order the two queues slot by
//! slot: a freed slot carries a mark behind the main queue's last work that reads it
//! (its copies wait for that alone, not for a solve issued after it), and a filled slot
//! a mark behind its own copies (the filter of a chunk waits for that alone, not for the
//! copies issued after it).

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Condvar, Mutex, MutexGuard};

use super::filter::EdgeArgs;
use super::partitions::host_fillings;
use super::resident::EdgeArrays;
use crate::tier::gpu::staging::Staging;
use crate::tier::gpu::{Device, Gpu};
use crate::types::Element;
use crate::{Error, Result};

/// Slots a ring has (fewer where fewer chunks are left): their room comes out of the
/// partitions' (`Sizes::of`). Dense 22 at an 800 MB cap (4x), one H200, three rounds, ms
/// end to end: the earlier two chunks held (one filtered, one going up beside it, none
/// beside a solve) 106.5-109.8, 2 slots 106.0-106.8, 4 102.1-104.2, 6 101.3-104.8, 8
/// 98.8-100.6, 12 107.7-111.0; at 1.6 GB 87.6-93.7 / 90.9-95.1 / 87.3-92.1 / 84.5-87.4
/// / 84.8-85.4 / 83.9-87.5; R-MAT 24 (16.8M vertices, a smaller room) at 4 GB
/// 91.3-93.0 / 86.4-88.4 / 84.3-87.7 / 85.6-87.1 / 93.7-95.5 / 95.6-96.9
/// (docs/performance-log.md, thirty-fourth session).
pub(super) const RING_SLOTS: usize = 6;

/// The slots' arrays, and where the slots stand.
pub(super) struct Ring<D: Device, W> {
    slots: Vec<Mutex<EdgeArrays<D, W>>>,
    states: SlotStates<D>,
}

/// Where the slots stand, and the signal that that changed (apart from the slots'
/// arrays: this code is built once per device kind, not per weight size too).
struct SlotStates<D: Device> {
    state: Mutex<State<D>>,
    changed: Condvar,
}

/// Where the slots stand.
struct State<D: Device> {
    /// Slots the filter is done with, to fill next, each with a mark behind the main
    /// queue's work that reads it (None: the tier has no marks).
    free: VecDeque<(usize, Option<D::Mark>)>,
    /// Filled slots in list order, not yet taken by the filter.
    filled: VecDeque<Filled<D>>,
    /// The filling thread's error, once it failed.
    failed: Option<Error>,
    /// Set when the filling thread ends (every chunk issued, stopped, or failed).
    ended: bool,
    /// Set when the filter stops (on every way out): the filling thread stops.
    stopped: bool,
}

/// A slot whose copies of edges `range` of the list were issued.
pub(super) struct Filled<D: Device> {
    pub slot: usize,
    pub range: Range<usize>,
    mark: Option<D::Mark>,
}

impl<D: Device, W: Element> Ring<D, W> {
    /// `count` slots of `chunk` edges each over `n` vertices (weighted or not).
    pub(super) fn new(
        tier: &Gpu<D>,
        n: usize,
        (count, chunk): (usize, usize),
        weighted: bool,
    ) -> Result<Self> {
        let slots = (0..count)
            .map(|_| {
                Ok(Mutex::new(EdgeArrays {
                    num_vertices: n,
                    u: tier.alloc::<u32>(chunk)?,
                    v: tier.alloc::<u32>(chunk)?,
                    weights: weighted.then(|| tier.alloc::<W>(chunk)).transpose()?,
                    kept: true,
                }))
            })
            .collect::<Result<Vec<_>>>()?;
        // The first copies into each slot follow its allocation (queued on the main
        // queue where the tier's pool orders them).
        Ok(Ring {
            states: SlotStates::new(tier, count)?,
            slots,
        })
    }

    /// Fills the slots with edges `ranges` of the host list `(u, v, weights)` in order,
    /// each from `staging`'s copy where it has one, as slots come free (the filling
    /// thread's loop); returns when every range is issued, the filter stops, or a copy
    /// fails (the filter then gets the error from `next`).
    pub(super) fn fill(
        &self,
        tier: &Gpu<D>,
        (u, v, weights): (&[u32], &[u32], Option<&[W]>),
        ranges: impl Iterator<Item = Range<usize>>,
        staging: &Staging,
    ) {
        // However the loop ends (a panic too), the filter stops waiting for it.
        let _ended = EndOnDrop(&self.states);
        for range in ranges {
            let Some((slot, freed)) = self.states.free() else {
                break;
            };
            let issued = self.issue(tier, (slot, freed), (u, v, weights), range.clone(), staging);
            if !self.states.issued(slot, range, issued) {
                break;
            }
        }
    }

    /// Issues the copies of edges `range` into `slot`, behind the main queue's work
    /// before `freed` (or all of it so far, where None): a mark behind them.
    fn issue(
        &self,
        tier: &Gpu<D>,
        (slot, freed): (usize, Option<D::Mark>),
        list: (&[u32], &[u32], Option<&[W]>),
        range: Range<usize>,
        staging: &Staging,
    ) -> Result<Option<D::Mark>> {
        let staged = match D::STAGES {
            true => crate::profile::span("partitions: wait for a staged chunk", || {
                staging.next(&range)
            })?,
            false => None,
        };
        // The copies follow the last work that reads the slot (the filter of the chunk
        // it held, issued before the slot came free): only that where the tier marks
        // it, so that a solve issued since runs beside them (dense 22 at an 800 MB cap:
        // the copies stopped for every solve and the staging behind them filled).
        match freed {
            Some(mark) => tier.beside_after(mark)?,
            None => tier.prepare_beside()?,
        }
        let mut into = self.slots[slot].lock().unwrap_or_else(|e| e.into_inner());
        let mut pieces = host_fillings(&mut into, list, range);
        match staged.map(|staged| staged.downcast::<D::Staged>()) {
            Some(Ok(staged)) => tier.write_staged(*staged, &mut pieces)?,
            Some(Err(_)) => return Err(Error::internal("edges staged by another kind of device")),
            None => tier.write_beside(&mut pieces)?,
        }
        tier.mark_beside()
    }

    /// The next filled slot in list order, once its copies are issued; the main queue's
    /// work from here on waits for them.
    pub(super) fn next(&self, tier: &Gpu<D>) -> Result<Filled<D>> {
        self.states.next(tier)
    }

    /// The arguments of the edges in `slot`.
    pub(super) fn args(&self, slot: usize) -> EdgeArgs<D> {
        self.slots[slot]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .args()
    }

    /// Gives `slot` back for filling (the work that reads it is issued), marked behind
    /// that work.
    pub(super) fn release(&self, tier: &Gpu<D>, slot: usize) -> Result<()> {
        self.states.release(tier, slot)
    }

    /// Stops the filling thread (at its next slot).
    pub(super) fn stop(&self) {
        self.states.update(|state| state.stopped = true);
    }
}

impl<D: Device> SlotStates<D> {
    /// `count` free slots, each marked behind its allocation.
    fn new(tier: &Gpu<D>, count: usize) -> Result<Self> {
        let mut free = VecDeque::with_capacity(count);
        for slot in 0..count {
            free.push_back((slot, tier.mark_main()?));
        }
        Ok(SlotStates {
            state: Mutex::new(State {
                free,
                filled: VecDeque::new(),
                failed: None,
                ended: false,
                stopped: false,
            }),
            changed: Condvar::new(),
        })
    }

    fn state(&self) -> MutexGuard<'_, State<D>> {
        // A panic while holding the lock leaves a consistent state (plain fields).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the state and wakes the other side.
    fn update<R>(&self, change: impl FnOnce(&mut State<D>) -> R) -> R {
        let changed = change(&mut self.state());
        self.changed.notify_all();
        changed
    }

    /// The next free slot and its mark, waiting for one; None once the filter stopped.
    fn free(&self) -> Option<(usize, Option<D::Mark>)> {
        let mut state = self.state();
        loop {
            if state.stopped {
                return None;
            }
            if let Some(free) = state.free.pop_front() {
                return Some(free);
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Files what issuing edges `range` into `slot` gave: its mark, or the error the
    /// filter gets instead (false: the filling stops).
    fn issued(&self, slot: usize, range: Range<usize>, issued: Result<Option<D::Mark>>) -> bool {
        self.update(|state| match issued {
            Ok(mark) => {
                state.filled.push_back(Filled { slot, range, mark });
                true
            }
            Err(error) => {
                state.failed = Some(error);
                false
            }
        })
    }

    /// See [`Ring::next`].
    fn next(&self, tier: &Gpu<D>) -> Result<Filled<D>> {
        let mut filled = crate::profile::span("partitions: wait for a filled slot", || {
            let mut state = self.state();
            loop {
                if let Some(filled) = state.filled.pop_front() {
                    return Ok(filled);
                }
                if let Some(error) = state.failed.take() {
                    return Err(error);
                }
                if state.ended {
                    return Err(Error::internal(
                        "a partition's host edges ran out before the list did",
                    ));
                }
                state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
            }
        })?;
        if let Some(mark) = filled.mark.take() {
            tier.await_mark(mark)?;
        }
        Ok(filled)
    }

    /// See [`Ring::release`].
    fn release(&self, tier: &Gpu<D>, slot: usize) -> Result<()> {
        let mark = tier.mark_main()?;
        self.update(|state| state.free.push_back((slot, mark)));
        Ok(())
    }
}

/// Marks a [`Ring`]'s filling as ended when dropped: on every way out of its loop.
struct EndOnDrop<'a, D: Device>(&'a SlotStates<D>);

impl<D: Device> Drop for EndOnDrop<'_, D> {
    fn drop(&mut self) {
        self.0.update(|state| state.ended = true);
    }
}

/// Stops a [`Ring`]'s filling thread when dropped: on every way out of the filter.
pub(super) struct StopRing<'a, D: Device, W: Element>(pub(super) &'a Ring<D, W>);

impl<D: Device, W: Element> Drop for StopRing<'_, D, W> {
    fn drop(&mut self) {
        self.0.stop();
    }
}
