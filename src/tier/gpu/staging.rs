//! Host chunks staged ahead of their uploads by a thread of their own
//! ([`Device::stage`]): while the device works on earlier chunks, the thread copies the
//! next ones into the tier's page-locked memory, in order, and queues them; the thread
//! that uploads them takes each in turn and only issues its device copies
//! ([`Device::write_staged`]). The queue holds the tiers' staged copies type-erased, so
//! its code is built once, not per device kind.

use std::any::Any;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

use super::{Device, Gpu};
use crate::{Error, Result};

/// A tier's staged copy of some host bytes (its `Device::Staged`).
pub(crate) type Staged = Box<dyn Any + Send>;

/// A tier's `stage`, its staged copies type-erased.
type StageFn<'a> = dyn Fn(&[&[u8]], &AtomicBool) -> Result<Option<Staged>> + Send + 'a;

/// What a staging thread gives for a chunk: its range of edges, and the tier's staged
/// copy of it (None: the tier stages nothing, or cannot now).
type Chunk = (Range<usize>, Result<Option<Staged>>);

/// The chunks staged so far, in order, and whether the staging thread is done.
struct Queue {
    chunks: VecDeque<Chunk>,
    done: bool,
}

/// The meeting point of a staging thread ([`Staging::start`]) and the thread that
/// uploads its chunks ([`Staging::next`]).
pub(crate) struct Staging {
    queue: Mutex<Queue>,
    changed: Condvar,
    /// Set when the uploads stop (on every way out): the staging thread stops.
    stop: AtomicBool,
}

impl Staging {
    /// A meeting point with no staging thread yet: `next` finds nothing staged.
    pub(crate) fn new() -> Staging {
        Staging {
            queue: Mutex::new(Queue {
                chunks: VecDeque::new(),
                done: true,
            }),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
        }
    }

    /// Starts a thread of `scope` that stages the chunks of edges `range` of the host
    /// `arrays` (each's bytes and its bytes per edge), `chunk` edges each, with `tier`,
    /// in order; it ends when every chunk is queued, the tier stages no more, or the
    /// uploads stop.
    pub(crate) fn start<'scope, 'env, D: Device>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        tier: &'env Gpu<D>,
        arrays: Vec<(&'env [u8], usize)>,
        range: Range<usize>,
        chunk: usize,
    ) {
        let stage = move |pieces: &[&[u8]], stop: &AtomicBool| {
            tier.stage(pieces, stop)
                .map(|staged| staged.map(|staged| Box::new(staged) as Staged))
        };
        self.spawn(scope, Box::new(stage), arrays, (range, chunk));
    }

    /// [`Staging::start`] with the tier's `stage` (one copy of this code).
    fn spawn<'scope, 'env>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        stage: Box<StageFn<'env>>,
        arrays: Vec<(&'env [u8], usize)>,
        (range, chunk): (Range<usize>, usize),
    ) {
        // Before the thread exists: `next` waits for it from now on.
        self.set_done(false);
        scope.spawn(move || {
            // Done on every way out, a panic's too: `next` then stops waiting.
            let _done = DoneOnDrop(self);
            self.stage_all(&*stage, &arrays, range, chunk);
        });
    }

    /// [`Staging::start`]'s loop (one copy of it for every device kind).
    fn stage_all(
        &self,
        stage: &StageFn<'_>,
        arrays: &[(&[u8], usize)],
        range: Range<usize>,
        chunk: usize,
    ) {
        for start in range.clone().step_by(chunk.max(1)) {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            let part = start..range.end.min(start + chunk);
            let pieces: Vec<&[u8]> = arrays
                .iter()
                .map(|(bytes, size)| &bytes[part.start * size..part.end * size])
                .collect();
            let staged = stage(&pieces, &self.stop);
            let more = matches!(staged, Ok(Some(_)));
            let Ok(mut queue) = self.queue.lock() else {
                return;
            };
            queue.chunks.push_back((part, staged));
            drop(queue);
            self.changed.notify_all();
            if !more {
                return;
            }
        }
    }

    fn set_done(&self, done: bool) {
        if let Ok(mut queue) = self.queue.lock() {
            queue.done = done;
        }
        self.changed.notify_all();
    }

    /// The staged copy of edges `range`, the next chunk to go up, once staged; None
    /// where it is not (the caller then copies it from the list).
    pub(crate) fn next(&self, range: &Range<usize>) -> Result<Option<Staged>> {
        let poisoned = || Error::internal("the staging queue was poisoned");
        let mut queue = self.queue.lock().map_err(|_| poisoned())?;
        loop {
            if let Some((staged, outcome)) = queue.chunks.pop_front() {
                if staged != *range {
                    return Err(Error::internal(format!(
                        "edges {staged:?} were staged where {range:?} go up"
                    )));
                }
                return outcome;
            }
            if queue.done {
                return Ok(None);
            }
            queue = self.changed.wait(queue).map_err(|_| poisoned())?;
        }
    }

    /// Stops the staging thread (at its next chunk, or while it waits for the tier's
    /// memory).
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Stops a [`Staging`]'s thread when dropped: on every way out of the uploads.
pub(crate) struct StopOnDrop<'a>(pub(crate) &'a Staging);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Marks its staging thread done when dropped.
struct DoneOnDrop<'a>(&'a Staging);

impl Drop for DoneOnDrop<'_> {
    fn drop(&mut self) {
        self.0.set_done(true);
    }
}
