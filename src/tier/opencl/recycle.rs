//! Device buffers kept after use for later allocations of the same size.
//!
//! NVIDIA's OpenCL driver gives a new buffer its memory at the buffer's first use and
//! releases it only once the work on it is done: a road graph's MSF call holds a dozen
//! buffers, and their creation and release took about 1 ms of its 1.2 (NY, H200; see
//! docs/performance-log.md, twentieth session). Buffers up to `LARGEST` bytes are
//! therefore kept when dropped, for the next allocation of the same size (exactly:
//! a buffer's size is what a caller's bounds are checked against), up to a total of
//! `limit` bytes (kept ones are released to make room).
//!
//! A dropped buffer may still be in use by work on the queue. It waits in `pending`
//! until a blocking call on the in-order queue returns that was issued after it was
//! dropped (`Recycler::mark` before the call, `Recycler::done` after it); only then is
//! it handed out again.

use opencl3::memory::Buffer;
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};

/// The largest buffer kept (a larger one's creation is small beside its use).
const LARGEST: usize = 64 << 20;

pub(crate) struct Recycler {
    /// Dropped, perhaps still in use by queued work: (number, size, buffer), in the
    /// order dropped.
    pending: Vec<(u64, usize, Buffer<u8>)>,
    /// Buffers dropped so far (the next one's number).
    dropped: u64,
    /// Free to hand out, by size, oldest first.
    ready: HashMap<usize, Vec<Buffer<u8>>>,
    /// Bytes held in both.
    held: usize,
    limit: usize,
}

/// A device allocation: a buffer of its own (released when dropped), or one that goes
/// back to its recycler.
pub(crate) struct ClMemory {
    buffer: ManuallyDrop<Buffer<u8>>,
    /// The recycler and the buffer's size, where it is kept after use.
    home: Option<(Arc<Mutex<Recycler>>, usize)>,
}

impl Recycler {
    /// Keeps at most `limit` bytes of dropped buffers.
    pub(crate) fn new(limit: usize) -> Arc<Mutex<Recycler>> {
        Arc::new(Mutex::new(Recycler {
            pending: Vec::new(),
            dropped: 0,
            ready: HashMap::new(),
            held: 0,
            limit,
        }))
    }

    /// A buffer of `bytes` bytes: one kept from before, or a new one from `create`
    /// (tried again after releasing every free kept buffer, if it fails).
    pub(crate) fn alloc<E>(
        this: &Arc<Mutex<Recycler>>,
        bytes: usize,
        mut create: impl FnMut(usize) -> Result<Buffer<u8>, E>,
    ) -> Result<ClMemory, E> {
        if bytes > LARGEST {
            return Self::create_or_make_room(this, bytes, &mut create).map(ClMemory::own);
        }
        let kept = this.lock().ok().and_then(|mut recycler| {
            let buffer = recycler.ready.get_mut(&bytes)?.pop()?;
            recycler.held -= bytes;
            Some(buffer)
        });
        let buffer = match kept {
            Some(buffer) => buffer,
            None => Self::create_or_make_room(this, bytes, &mut create)?,
        };
        Ok(ClMemory {
            buffer: ManuallyDrop::new(buffer),
            home: Some((this.clone(), bytes)),
        })
    }

    /// A new buffer from `create`; where that fails and kept buffers are free, they are
    /// released and `create` is tried once more (the memory may be theirs).
    fn create_or_make_room<E>(
        this: &Arc<Mutex<Recycler>>,
        bytes: usize,
        create: &mut impl FnMut(usize) -> Result<Buffer<u8>, E>,
    ) -> Result<Buffer<u8>, E> {
        create(bytes).or_else(|e| {
            let released = this
                .lock()
                .map_or(0, |mut recycler| recycler.release_free());
            if released > 0 {
                create(bytes)
            } else {
                Err(e)
            }
        })
    }

    /// Releases every free kept buffer (not the pending ones); how many.
    fn release_free(&mut self) -> usize {
        let mut released = 0;
        for (size, kept) in self.ready.drain() {
            self.held -= size * kept.len();
            released += kept.len();
        }
        released
    }

    /// Releases kept buffers, the largest first (the fewest releases), until `bytes`
    /// more fit under the limit; whether they do.
    fn make_room(&mut self, bytes: usize) -> bool {
        while self.held + bytes > self.limit {
            let Some(size) = self
                .ready
                .iter()
                .filter(|(_, kept)| !kept.is_empty())
                .map(|(&size, _)| size)
                .max()
            else {
                return false;
            };
            let kept = self.ready.get_mut(&size).expect("found above");
            kept.remove(0); // the oldest of its size is released here
            self.held -= size;
        }
        true
    }

    /// Keeps no buffers from now on (releasing those free now).
    pub(crate) fn keep_none(this: &Arc<Mutex<Recycler>>) {
        if let Ok(mut recycler) = this.lock() {
            recycler.limit = 0;
            recycler.release_free();
        }
    }

    /// The number of buffers dropped so far: pass it to `done` once a blocking call
    /// issued after this returns.
    pub(crate) fn mark(this: &Arc<Mutex<Recycler>>) -> u64 {
        this.lock().map_or(0, |recycler| recycler.dropped)
    }

    /// The buffers dropped before `mark` said `marked` are no longer used by any work:
    /// a blocking call on the in-order queue, issued after they were dropped, has
    /// returned.
    pub(crate) fn done(this: &Arc<Mutex<Recycler>>, marked: u64) {
        if let Ok(mut recycler) = this.lock() {
            let free = recycler
                .pending
                .partition_point(|&(number, _, _)| number < marked);
            let free: Vec<_> = recycler.pending.drain(..free).collect();
            for (_, bytes, buffer) in free {
                recycler.ready.entry(bytes).or_default().push(buffer);
            }
            // Over the limit only where it was lowered meanwhile (keep_none).
            recycler.make_room(0);
        }
    }
}

impl ClMemory {
    /// A buffer released when dropped (the caller's, or one too large to keep).
    pub(crate) fn own(buffer: Buffer<u8>) -> ClMemory {
        ClMemory {
            buffer: ManuallyDrop::new(buffer),
            home: None,
        }
    }
}

impl Deref for ClMemory {
    type Target = Buffer<u8>;
    fn deref(&self) -> &Buffer<u8> {
        &self.buffer
    }
}

impl DerefMut for ClMemory {
    fn deref_mut(&mut self) -> &mut Buffer<u8> {
        &mut self.buffer
    }
}

impl Drop for ClMemory {
    fn drop(&mut self) {
        // SAFETY: the buffer is taken once, here, and `self` is not used after.
        let buffer = unsafe { ManuallyDrop::take(&mut self.buffer) };
        let Some((recycler, bytes)) = &self.home else {
            return; // `buffer` is released here.
        };
        if let Ok(mut recycler) = recycler.lock() {
            if recycler.make_room(*bytes) {
                let number = recycler.dropped;
                recycler.dropped += 1;
                recycler.held += bytes;
                recycler.pending.push((number, *bytes, buffer));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencl3::context::Context;
    use opencl3::memory::{ClMem, CL_MEM_READ_WRITE};
    use std::cell::Cell;

    /// A context on the first OpenCL device, or None (with the reason printed).
    fn context() -> Option<Context> {
        let entries = match super::super::devices_in_preference_order() {
            Ok(entries) => entries,
            Err(e) => {
                println!("recycler test skipped: {e}");
                return None;
            }
        };
        let Some(entry) = entries.first() else {
            println!("recycler test skipped: the ICD loader lists no OpenCL device");
            return None;
        };
        Some(Context::from_device(&entry.device).expect("clCreateContext"))
    }

    #[test]
    fn buffers_come_back_only_after_the_work_issued_before_a_wait() {
        let Some(context) = context() else {
            return;
        };
        let made = Cell::new(0);
        let refuse_next = Cell::new(false);
        let create = |bytes: usize| {
            if refuse_next.replace(false) {
                return Err(opencl3::error_codes::ClError(-4)); // out of memory
            }
            made.set(made.get() + 1);
            // SAFETY: no host pointer is passed (null with flags that do not use one).
            unsafe {
                Buffer::<u8>::create(&context, CL_MEM_READ_WRITE, bytes, std::ptr::null_mut())
            }
        };
        let recycler = Recycler::new(1000);
        let first = Recycler::alloc(&recycler, 100, create).unwrap();
        let handle = first.get();
        let before_drop = Recycler::mark(&recycler);
        drop(first);
        // Dropped after the mark: a wait that began before the drop frees nothing.
        Recycler::done(&recycler, before_drop);
        let second = Recycler::alloc(&recycler, 100, create).unwrap();
        assert_eq!(made.get(), 2, "a pending buffer was handed out");
        assert_ne!(second.get(), handle);
        let marked = Recycler::mark(&recycler);
        Recycler::done(&recycler, marked);
        // Now the first comes back, for its own size only.
        let other_size = Recycler::alloc(&recycler, 200, create).unwrap();
        assert_eq!(made.get(), 3);
        let third = Recycler::alloc(&recycler, 100, create).unwrap();
        assert_eq!(made.get(), 3, "the freed buffer was not reused");
        assert_eq!(third.get(), handle);
        drop((second, third, other_size));
        // 100 + 100 + 200 bytes kept, under the limit of 1000.
        assert_eq!(recycler.lock().unwrap().held, 400);
        // Too large to keep beside them: older kept ones make room.
        let big = Recycler::alloc(&recycler, 900, create).unwrap();
        let marked = Recycler::mark(&recycler);
        Recycler::done(&recycler, marked);
        drop(big);
        {
            // Room was made by releasing the largest kept buffers first: the 200, then
            // one of the 100s.
            let kept = recycler.lock().unwrap();
            assert_eq!(kept.held, 1000);
            assert_eq!(kept.ready.get(&200).map_or(0, Vec::len), 0);
            assert_eq!(kept.ready.get(&100).map_or(0, Vec::len), 1);
        }
        // Over the size kept at all: its own buffer, released when dropped.
        let huge = Recycler::alloc(&recycler, LARGEST + 1, create).unwrap();
        assert!(huge.home.is_none());
        // A refused creation releases the free kept buffers and tries once more...
        let marked = Recycler::mark(&recycler);
        Recycler::done(&recycler, marked);
        assert!(recycler.lock().unwrap().held > 0);
        refuse_next.set(true);
        let retried = Recycler::alloc(&recycler, 300, create).unwrap();
        assert_eq!(recycler.lock().unwrap().held, 0);
        // ...and with none to release, the refusal is the answer.
        refuse_next.set(true);
        assert!(Recycler::alloc(&recycler, 300, create).is_err());
        drop(retried);
        // A capped context keeps nothing, also of what was pending when capped.
        let last = Recycler::alloc(&recycler, 100, create).unwrap();
        drop(last);
        Recycler::keep_none(&recycler);
        let marked = Recycler::mark(&recycler);
        Recycler::done(&recycler, marked);
        assert_eq!(recycler.lock().unwrap().held, 0);
        let made_before = made.get();
        drop(Recycler::alloc(&recycler, 100, create).unwrap());
        assert_eq!(made.get(), made_before + 1);
    }
}
