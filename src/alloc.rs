//! Fallible allocation for every buffer whose size depends on the input.
//!
//! Rust's `Vec::with_capacity`, `vec![x; n]` and `collect` abort the process when the
//! allocator refuses; an embedded library must not. Every input-sized host buffer in
//! the library is therefore made here, and a refusal becomes
//! [`Status::OutOfMemory`](crate::Status::OutOfMemory) with a message naming the
//! buffer and its size. Small fixed-size allocations (messages, a tier's bookkeeping)
//! are left to the global allocator.
//!
//! With the `fault-injection` feature (test builds only) `gpumst::testing` can make
//! the N-th of these allocations fail, so that tests can walk every failure path.

use std::alloc::{alloc_zeroed, Layout};
use std::sync::atomic::{AtomicBool, AtomicU32};

use rayon::prelude::*;

use crate::{Error, Result, Status};

/// The error for a refused allocation of `count` elements of `T`.
pub(crate) fn out_of_memory<T>(what: &str, count: usize) -> Error {
    let bytes = (count as u128) * std::mem::size_of::<T>() as u128;
    Error::new(
        Status::OutOfMemory,
        format!("could not allocate {bytes} bytes of host memory for {what} ({count} elements)"),
    )
}

/// An empty vector with room for `count` elements.
pub(crate) fn with_capacity<T>(count: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    reserve(&mut v, count, what)?;
    Ok(v)
}

/// Makes room for `additional` more elements (growing geometrically, like `Vec`).
pub(crate) fn reserve<T>(v: &mut Vec<T>, additional: usize, what: &str) -> Result<()> {
    if v.capacity() - v.len() >= additional {
        return Ok(());
    }
    crate::testing::allocation(what, additional)?;
    v.try_reserve(additional)
        .map_err(|_| out_of_memory::<T>(what, v.len().saturating_add(additional)))
}

/// `count` copies of `value`.
pub(crate) fn filled<T: Clone>(count: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = with_capacity(count, what)?;
    v.resize(count, value);
    Ok(v)
}

/// Types whose all-zero bit pattern is a valid value (so zeroed memory from the
/// allocator, which the kernel may hand out lazily, needs no writing).
///
/// # Safety
/// Implement only for types for which all-zero bytes are a valid, initialised value.
pub(crate) unsafe trait Zeroable: Sized {}
// SAFETY: integers, bool (0 = false) and atomics of integers are valid when all zero.
unsafe impl Zeroable for u8 {}
unsafe impl Zeroable for u32 {}
unsafe impl Zeroable for i32 {}
unsafe impl Zeroable for u64 {}
unsafe impl Zeroable for i64 {}
unsafe impl Zeroable for usize {}
unsafe impl Zeroable for bool {}
unsafe impl Zeroable for AtomicU32 {}
unsafe impl Zeroable for AtomicBool {}
// SAFETY: a pair is all zero exactly when both halves are (padding may hold anything).
unsafe impl<A: Zeroable, B: Zeroable> Zeroable for (A, B) {}

/// `count` zeroes, from `calloc`-like memory (pages not touched until used).
pub(crate) fn zeroed<T: Zeroable>(count: usize, what: &str) -> Result<Vec<T>> {
    let layout = Layout::array::<T>(count).map_err(|_| out_of_memory::<T>(what, count))?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    crate::testing::allocation(what, count)?;
    // SAFETY: the layout has a non-zero size (checked above).
    let ptr = unsafe { alloc_zeroed(layout) } as *mut T;
    if ptr.is_null() {
        return Err(out_of_memory::<T>(what, count));
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of exactly
    // `count` `T`s (what `Vec` itself would use), and all-zero bytes are valid `T`s
    // (`Zeroable`), so all `count` elements are initialised.
    Ok(unsafe { Vec::from_raw_parts(ptr, count, count) })
}

/// An exact-size iterator into a vector.
pub(crate) fn collect<I: ExactSizeIterator>(iter: I, what: &str) -> Result<Vec<I::Item>> {
    let mut v = with_capacity(iter.len(), what)?;
    v.extend(iter);
    Ok(v)
}

/// An indexed parallel iterator into a vector (rayon writes into the room made here).
pub(crate) fn par_collect<I: IndexedParallelIterator>(iter: I, what: &str) -> Result<Vec<I::Item>> {
    let mut v = with_capacity(iter.len(), what)?;
    iter.collect_into_vec(&mut v);
    Ok(v)
}

/// What `fill(range, out)` pushes for consecutive ranges covering `0..len`, in order,
/// where `fill` pushes at most one element per index of its range (a filter). The
/// ranges are filled in parallel, each into room reserved first, then concatenated
/// (cheaper than rayon's unindexed collect for filters).
pub(crate) fn par_collect_ranges<T: Send>(
    len: usize,
    what: &str,
    fill: impl Fn(std::ops::Range<usize>, &mut Vec<T>) + Sync,
) -> Result<Vec<T>> {
    const CHUNK: usize = 1 << 16;
    const STEP: usize = 1 << 12;
    let pieces = (0..len.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut piece = Vec::new();
            let end = ((c + 1) * CHUNK).min(len);
            let mut start = c * CHUNK;
            while start < end {
                let step_end = (start + STEP).min(end);
                // `fill` pushes at most `step_end - start`, so it never reallocates.
                reserve(&mut piece, step_end - start, what)?;
                fill(start..step_end, &mut piece);
                start = step_end;
            }
            Ok(piece)
        })
        .collect::<Result<Vec<Vec<T>>>>()?;
    let mut all = with_capacity(pieces.iter().map(Vec::len).sum(), what)?;
    for piece in pieces {
        all.extend(piece);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_allocations_become_out_of_memory() {
        let e = with_capacity::<u64>(usize::MAX / 4, "the test's buffer").unwrap_err();
        assert_eq!(e.status(), Status::OutOfMemory);
        assert!(e.message().contains("the test's buffer"), "{e}");
        assert!(e
            .message()
            .contains(&format!("{} bytes", (usize::MAX / 4) as u128 * 8)));
        let e = zeroed::<u32>(usize::MAX / 2, "zeroes").unwrap_err();
        assert_eq!(e.status(), Status::OutOfMemory);
    }

    #[test]
    fn helpers_give_what_the_infallible_forms_give() {
        assert_eq!(zeroed::<u32>(5, "z").unwrap(), vec![0u32; 5]);
        assert_eq!(filled(3, 7u8, "f").unwrap(), vec![7u8; 3]);
        assert_eq!(collect(0..4u32, "c").unwrap(), vec![0, 1, 2, 3]);
        let doubled = par_collect((0..100_000u32).into_par_iter().map(|x| x * 2), "p").unwrap();
        assert_eq!(doubled, (0..100_000u32).map(|x| x * 2).collect::<Vec<_>>());
        let odd = par_collect_ranges(300_001, "r", |range, out| {
            out.extend(range.filter(|x| x % 2 == 1))
        })
        .unwrap();
        assert_eq!(odd, (0..300_001).filter(|x| x % 2 == 1).collect::<Vec<_>>());
        let mut v: Vec<u8> = Vec::new();
        for i in 0..1000 {
            reserve(&mut v, 1, "one").unwrap();
            v.push(i as u8);
        }
        assert_eq!(v.len(), 1000);
    }
}
