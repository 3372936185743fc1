//! Working arrays the CPU tier keeps from one call to the next, while a context with a
//! CPU tier lives.
//!
//! Freed memory goes back to the kernel (glibc unmaps large blocks and trims its heaps),
//! and the next call's first touches fault it in again, page by page. Where many
//! threads fault at once on a virtual machine, those faults made a road graph's
//! Borůvka rounds at 16 threads 2-3x slower in about a third of the calls
//! (docs/performance-log.md, sixteenth session). The arrays written all over by every
//! thread at once (each tree's lightest edge, the union-find parents, the forest) are
//! kept here instead, up to [`MOST_BYTES`], and handed to the next call that asks for
//! the same type; the last context to go frees them.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::alloc::{self, Zeroable};
use crate::Result;

/// At most this many bytes are kept (the arrays of a graph of a few million vertices;
/// a larger graph's call is long enough that its faults matter less).
pub(crate) const MOST_BYTES: usize = 256 << 20;

/// Contexts with a CPU tier now: arrays are kept only while one lives.
static HOLDERS: AtomicUsize = AtomicUsize::new(0);

/// The kept arrays, each a `Vec<T>` of some `T`.
static SHELF: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

struct Kept {
    array: Box<dyn Any + Send>,
    bytes: usize,
    /// All of the array's `len` elements are zero (else it is empty, its capacity kept).
    zeroed: bool,
}

/// Held by each CPU tier: while one is alive, arrays are kept; the last to go frees
/// them.
pub(crate) struct Holder(());

impl Holder {
    pub(crate) fn new() -> Holder {
        HOLDERS.fetch_add(1, Ordering::AcqRel);
        Holder(())
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        if HOLDERS.fetch_sub(1, Ordering::AcqRel) == 1 {
            let freed = std::mem::take(&mut *shelf());
            drop(freed);
        }
    }
}

fn shelf() -> std::sync::MutexGuard<'static, Vec<Kept>> {
    // The shelf holds only whole entries: a panic elsewhere leaves it usable.
    SHELF.lock().unwrap_or_else(|e| e.into_inner())
}

/// The smallest kept `Vec<T>` that `fits`, taken off the shelf.
fn take<T: Send + 'static>(zeroed: bool, fits: impl Fn(&Vec<T>) -> bool) -> Option<Vec<T>> {
    let mut shelf = shelf();
    let (at, _) = shelf
        .iter()
        .enumerate()
        .filter(|(_, k)| k.zeroed == zeroed)
        .filter_map(|(i, k)| k.array.downcast_ref::<Vec<T>>().map(|v| (i, v)))
        .filter(|(_, v)| fits(v))
        .min_by_key(|(_, v)| v.capacity())?;
    let kept = shelf.swap_remove(at);
    Some(
        *kept
            .array
            .downcast::<Vec<T>>()
            .expect("the entry is a Vec<T>"),
    )
}

fn bytes_of<T>(array: &Vec<T>) -> usize {
    array.capacity() * std::mem::size_of::<T>()
}

/// Whether `shelf` takes `bytes` more: a context with a CPU tier lives, and the
/// kept arrays stay within [`MOST_BYTES`].
fn fits(shelf: &[Kept], bytes: usize) -> bool {
    HOLDERS.load(Ordering::Acquire) != 0
        && bytes != 0
        && shelf.iter().map(|k| k.bytes).sum::<usize>() + bytes <= MOST_BYTES
}

/// Whether the shelf would take `bytes` more now.
fn has_room(bytes: usize) -> bool {
    fits(&shelf(), bytes)
}

fn keep<T: Send + 'static>(array: Vec<T>, zeroed: bool) {
    let bytes = bytes_of(&array);
    let mut shelf = shelf();
    if fits(&shelf, bytes) {
        shelf.push(Kept {
            array: Box::new(array),
            bytes,
            zeroed,
        });
    }
}

/// `count` zeroes, from a kept array where one is long enough, else as
/// [`alloc::zeroed`].
pub(crate) fn zeroed<T: Zeroable + Send + 'static>(count: usize, what: &str) -> Result<Vec<T>> {
    if count == 0 {
        return alloc::zeroed(count, what);
    }
    match take::<T>(true, |v| v.len() >= count) {
        Some(mut array) => {
            // A refusal here stands for the allocation that the kept array saves, so
            // that a call's refusals are the same whatever is kept.
            crate::testing::allocation(what, count)?;
            // Zeroable types have no drop to run.
            array.truncate(count);
            Ok(array)
        }
        None => alloc::zeroed(count, what),
    }
}

/// Keeps `array`, every element of which is zero (the caller's promise), for a
/// later [`zeroed`].
pub(crate) fn keep_zeroed<T: Zeroable + Send + 'static>(array: Vec<T>) {
    keep(array, true);
}

/// Keeps `array` for a later [`zeroed`] once `clear` has set every element to zero;
/// `clear` runs only where the shelf has room for it (clearing an array that is then
/// freed would be a wasted pass).
pub(crate) fn keep_cleared<T: Zeroable + Send + 'static>(
    mut array: Vec<T>,
    clear: impl FnOnce(&mut [T]),
) {
    if has_room(bytes_of(&array)) {
        clear(&mut array);
        keep(array, true);
    }
}

/// An empty `Vec<T>` with room for `capacity`, from a kept array where one has room,
/// else as [`alloc::with_capacity`].
pub(crate) fn with_capacity<T: Send + 'static>(capacity: usize, what: &str) -> Result<Vec<T>> {
    if capacity == 0 {
        return alloc::with_capacity(capacity, what);
    }
    match take::<T>(false, |v| v.capacity() >= capacity) {
        Some(array) => {
            crate::testing::allocation(what, capacity)?;
            Ok(array)
        }
        None => alloc::with_capacity(capacity, what),
    }
}

/// Keeps `array`'s room (its elements dropped) for a later [`with_capacity`].
pub(crate) fn keep_room<T: Send + 'static>(mut array: Vec<T>) {
    array.clear();
    keep(array, false);
}

/// Whether the shelf holds the array at `at` (for tests).
#[cfg(test)]
pub(crate) fn holds<T: 'static>(at: *const T) -> bool {
    shelf()
        .iter()
        .filter_map(|k| k.array.downcast_ref::<Vec<T>>())
        .any(|v| v.as_ptr() == at)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arrays come back while a holder lives, zeroed ones only as zeroes, and go
    /// when the last holder goes. (One test: the shelf is process-wide.)
    #[test]
    fn arrays_are_kept_while_a_holder_lives() {
        let holder = Holder::new();
        let first: Vec<u64> = with_capacity(1000, "a").unwrap();
        let at = first.as_ptr();
        let mut first = first;
        first.extend(0..10);
        keep_room(first);
        let again: Vec<u64> = with_capacity(500, "a").unwrap();
        assert_eq!(
            (again.as_ptr(), again.len()),
            (at, 0),
            "the kept room came back"
        );
        assert!(again.capacity() >= 1000);

        let zeros: Vec<u32> = zeroed(300, "z").unwrap();
        let at = zeros.as_ptr();
        keep_zeroed(zeros);
        let fewer: Vec<u32> = zeroed(200, "z").unwrap();
        assert_eq!((fewer.as_ptr(), fewer.len()), (at, 200));
        assert!(fewer.iter().all(|&x| x == 0));
        keep_zeroed(fewer);
        // Too short for 400: a fresh array, zeroed too.
        let more: Vec<u32> = zeroed(400, "z").unwrap();
        assert_ne!(more.as_ptr(), at);
        assert_eq!(more, vec![0; 400]);

        // Cleared, then kept: it comes back as zeroes.
        let mut written: Vec<u8> = zeroed(333, "c").unwrap();
        written
            .iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = i as u8 | 1);
        let at = written.as_ptr();
        keep_cleared(written, |x| x.fill(0));
        let cleared: Vec<u8> = zeroed(333, "c").unwrap();
        assert_eq!(cleared.as_ptr(), at, "the cleared array came back");
        assert!(cleared.iter().all(|&x| x == 0));

        drop(holder);
        keep_room(again);
        // Other tests of this binary may hold contexts of their own meanwhile.
        if HOLDERS.load(Ordering::Acquire) == 0 {
            assert!(shelf().is_empty(), "the last holder freed the shelf");
            // With nothing to keep it for, an array is not cleared (nor kept).
            let mut ran = false;
            keep_cleared(cleared, |_| ran = true);
            assert!(!ran, "no pass over an array that will be freed");
        } else {
            eprintln!("kept: another test holds a context; the freeing was not checked");
        }
    }
}
