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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tier::gpu::bytes_of;

    /// Stages as a tier would, into memory of its own: the pieces joined.
    fn joined(pieces: &[&[u8]], _: &AtomicBool) -> Result<Option<Staged>> {
        Ok(Some(Box::new(pieces.concat())))
    }

    fn ranges(range: Range<usize>, chunk: usize) -> Vec<Range<usize>> {
        range
            .clone()
            .step_by(chunk)
            .map(|start| start..range.end.min(start + chunk))
            .collect()
    }

    #[test]
    fn chunks_come_in_order_with_their_bytes_then_nothing() {
        let u: Vec<u32> = (0..1000).collect();
        let w: Vec<u64> = (0..1000).map(|i| i * 7 + (1 << 40)).collect();
        let staging = Staging::new();
        std::thread::scope(|scope| {
            let _stopping = StopOnDrop(&staging);
            let arrays = vec![(bytes_of(&u), 4), (bytes_of(&w), 8)];
            staging.spawn(scope, Box::new(joined), arrays, (100..1000, 256));
            for range in ranges(100..1000, 256) {
                let staged = staging.next(&range).unwrap().expect("a staged chunk");
                let bytes = staged.downcast::<Vec<u8>>().expect("the stage's own type");
                let want = [bytes_of(&u[range.clone()]), bytes_of(&w[range.clone()])].concat();
                assert_eq!(*bytes, want, "chunk {range:?}");
            }
            // Every chunk given: the thread ends, and nothing more comes.
            assert!(staging.next(&(1000..1000)).unwrap().is_none());
        });
    }

    #[test]
    fn a_chunk_asked_out_of_turn_is_an_internal_error() {
        let u: Vec<u32> = (0..64).collect();
        let staging = Staging::new();
        std::thread::scope(|scope| {
            let _stopping = StopOnDrop(&staging);
            staging.spawn(
                scope,
                Box::new(joined),
                vec![(bytes_of(&u), 4)],
                (0..64, 16),
            );
            let e = staging.next(&(16..32)).map(|_| ()).unwrap_err();
            assert_eq!(e.status(), crate::Status::Internal, "{e}");
            assert!(e.message().contains("were staged where"), "{e}");
        });
    }

    #[test]
    fn with_no_thread_or_once_the_tier_stages_nothing_chunks_are_not_staged() {
        assert!(Staging::new().next(&(0..10)).unwrap().is_none());
        let u: Vec<u32> = (0..64).collect();
        let staging = Staging::new();
        let second = |pieces: &[&[u8]], _: &AtomicBool| -> Result<Option<Staged>> {
            // The second chunk (edges 16..32) is refused, as by a driver out of memory.
            match pieces[0].first() {
                Some(&16) => Ok(None),
                _ => Ok(Some(Box::new(pieces.concat()))),
            }
        };
        std::thread::scope(|scope| {
            let _stopping = StopOnDrop(&staging);
            staging.spawn(
                scope,
                Box::new(second),
                vec![(bytes_of(&u), 4)],
                (0..64, 16),
            );
            assert!(staging.next(&(0..16)).unwrap().is_some());
            assert!(staging.next(&(16..32)).unwrap().is_none());
            // The thread stopped there: the rest go up from the list.
            assert!(staging.next(&(32..48)).unwrap().is_none());
        });
    }

    #[test]
    fn a_stage_waiting_for_memory_gives_up_when_the_uploads_stop() {
        let u: Vec<u32> = (0..64).collect();
        let staging = Staging::new();
        // Waits as a tier whose staging memory is full, until told to stop.
        let full = |_: &[&[u8]], stop: &AtomicBool| -> Result<Option<Staged>> {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Ok(None)
        };
        // Leaving the scope without taking a chunk stops the thread, which the scope
        // then joins: this returns.
        std::thread::scope(|scope| {
            let _stopping = StopOnDrop(&staging);
            staging.spawn(scope, Box::new(full), vec![(bytes_of(&u), 4)], (0..64, 16));
        });
    }

    #[test]
    fn a_staging_thread_that_panics_leaves_nothing_waiting() {
        let u: Vec<u32> = (0..64).collect();
        let staging = Staging::new();
        let panics = |_: &[&[u8]], _: &AtomicBool| -> Result<Option<Staged>> {
            panic!("a stage that fails (this panic is the test's)")
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            std::thread::scope(|scope| {
                let _stopping = StopOnDrop(&staging);
                staging.spawn(
                    scope,
                    Box::new(panics),
                    vec![(bytes_of(&u), 4)],
                    (0..64, 16),
                );
                staging.next(&(0..16)).map(|staged| staged.is_none())
            })
        }));
        // The scope passes the thread's panic on; `next` had returned (nothing staged).
        assert!(outcome.is_err());
    }
}
