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
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

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
        .map_err(|_| out_of_memory::<T>(what, v.len().saturating_add(additional)))?;
    prefer_huge_pages(
        v.as_mut_ptr().cast(),
        v.capacity() * std::mem::size_of::<T>(),
    );
    Ok(())
}

/// Asks the kernel to back the whole 2 MiB pages of a large allocation with huge
/// pages (Linux's transparent huge pages, where they are set to "madvise", the usual
/// default): one page fault and one TLB entry per 2 MiB instead of 512. Arrays of
/// millions of elements written all over at once (the tiers' working arrays, the file
/// loaders') fault and miss the TLB much less, and unmap faster: on a 16-core Xeon the
/// CPU tier's compute was 9-27% shorter on grid, random and R-MAT graphs with this
/// (docs/performance-log.md, fourteenth session).
fn prefer_huge_pages(at: *mut u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    if bytes < 2 * HUGE {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let (start, end) = (
            (at as usize).next_multiple_of(HUGE),
            (at as usize + bytes) & !(HUGE - 1),
        );
        if end > start {
            // SAFETY: [start, end) lies inside the allocation at `at` of `bytes` bytes,
            // which the caller owns; MADV_HUGEPAGE changes only how the kernel backs
            // those pages, not their contents or their mapping. Where it fails (no
            // transparent huge pages), ordinary pages stay, so the result is ignored.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = at;
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
unsafe impl Zeroable for AtomicU64 {}
unsafe impl Zeroable for AtomicBool {}
// SAFETY: all-zero bytes are the float +0.0.
unsafe impl Zeroable for f32 {}
unsafe impl Zeroable for f64 {}
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
    prefer_huge_pages(ptr.cast(), layout.size());
    // SAFETY: `ptr` was allocated by the global allocator with the layout of exactly
    // `count` `T`s (what `Vec` itself would use), and all-zero bytes are valid `T`s
    // (`Zeroable`), so all `count` elements are initialised.
    Ok(unsafe { Vec::from_raw_parts(ptr, count, count) })
}

/// Drops `value`, which holds `bytes` bytes, on a thread of its own when that is
/// worth it: giving a few hundred MB of pages back to the system takes tens of
/// milliseconds on one thread (the kernel unmaps them page by page), which the caller
/// need not wait for. Where no thread can be started, the closure holding `value` is
/// dropped here, and `value` with it.
pub(crate) fn free_in_background<T: Send + 'static>(value: T, bytes: usize) {
    const WORTH_A_THREAD: usize = 32 << 20;
    if bytes >= WORTH_A_THREAD {
        FREEING.fetch_add(1, Ordering::AcqRel);
        // Counted down when the closure is dropped: after `value` on the new thread,
        // or here if no thread starts.
        let done = CountDown;
        let freeing = std::thread::Builder::new().name("gpumst-free".into());
        let _ = freeing.spawn(move || {
            drop(value);
            drop(done);
        });
    }
}

/// Values being dropped by [`free_in_background`]'s threads.
static FREEING: AtomicUsize = AtomicUsize::new(0);

struct CountDown;

impl Drop for CountDown {
    fn drop(&mut self) {
        FREEING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Waits until the arrays that loading a large file handed to threads of their own to
/// free are freed (at once when there are none): a measurement of the heap taken
/// meanwhile would count their freeing against whatever runs next.
pub fn wait_for_background_frees() {
    while FREEING.load(Ordering::Acquire) != 0 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
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
/// ranges are filled in parallel, each into room reserved first, then copied in
/// parallel into the result (cheaper than rayon's unindexed collect for filters).
pub(crate) fn par_collect_ranges<T: Send>(
    len: usize,
    what: &str,
    fill: impl Fn(std::ops::Range<usize>, &mut Vec<T>) + Sync,
) -> Result<Vec<T>> {
    par_collect_ranges_n(len, 1, what, fill)
}

/// [`par_collect_ranges`] where `fill` pushes at most `per_index` elements per index.
pub(crate) fn par_collect_ranges_n<T: Send>(
    len: usize,
    per_index: usize,
    what: &str,
    fill: impl Fn(std::ops::Range<usize>, &mut Vec<T>) + Sync,
) -> Result<Vec<T>> {
    const STEP: usize = 1 << 12;
    let chunk = chunk_len(len, 1);
    let pieces = (0..len.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            let mut piece = Vec::new();
            let end = ((c + 1) * chunk).min(len);
            let mut start = c * chunk;
            while start < end {
                let step_end = (start + STEP).min(end);
                // `fill` pushes at most this many, so it never reallocates.
                reserve(&mut piece, (step_end - start) * per_index, what)?;
                fill(start..step_end, &mut piece);
                start = step_end;
            }
            Ok(piece)
        })
        .collect::<Result<Vec<Vec<T>>>>()?;
    concat(pieces, what)
}

/// What `fill(range, push)` pushes for consecutive ranges covering `0..len`, in order,
/// counted first: `fill` runs twice on each range and must push as many both times. The
/// result's memory alone is taken (no pieces, nor room reserved ahead in each), for
/// filters that keep few of many under a memory cap.
pub(crate) fn par_collect_counted<T: Send>(
    len: usize,
    what: &str,
    fill: impl Fn(std::ops::Range<usize>, &mut dyn FnMut(T)) + Sync,
) -> Result<Vec<T>> {
    let chunk = chunk_len(len, 1);
    let range = |c: usize| c * chunk..((c + 1) * chunk).min(len);
    let counts: Vec<usize> = par_collect(
        (0..len.div_ceil(chunk)).into_par_iter().map(|c| {
            let mut count = 0;
            fill(range(c), &mut |_| count += 1);
            count
        }),
        "a filter's counts",
    )?;
    let total = counts.iter().sum();
    let mut out = with_capacity(total, what)?;
    let targets = split_spare_capacity(&mut out, counts.iter().copied(), what)?;
    let all_written = targets.into_par_iter().enumerate().all(|(c, target)| {
        let mut slots = target.iter_mut();
        fill(range(c), &mut |x| {
            slots
                .next()
                .expect("`fill` pushes as many as it counted")
                .write(x);
        });
        slots.next().is_none()
    });
    if !all_written {
        return Err(Error::internal(format!(
            "{what}: fewer pushed than counted"
        )));
    }
    // SAFETY: the targets cover the first `total` slots of the spare capacity, and each
    // chunk wrote every slot of its target (none left, checked above).
    unsafe { out.set_len(total) };
    Ok(out)
}

/// The first index of `0..len` that `find` reports, or `None`: ranges of 64K indices are
/// scanned in parallel, each by `find` (a plain sequential loop, returning the position
/// within its range), and the earliest hit wins, as a sequential scan would report it.
pub(crate) fn par_position_first(
    len: usize,
    find: impl Fn(std::ops::Range<usize>) -> Option<usize> + Sync,
) -> Option<usize> {
    const RANGE: usize = 1 << 16;
    if len <= RANGE {
        return find(0..len);
    }
    (0..len.div_ceil(RANGE))
        .into_par_iter()
        .find_map_first(|k| {
            let start = k * RANGE;
            find(start..len.min(start + RANGE)).map(|p| start + p)
        })
}

/// The elements of `data` that satisfy `keep`, in order. Two parallel passes: one bit
/// per element and a count per chunk, then each chunk writes its survivors straight to
/// their place, so the only buffers are the result and the bits.
pub(crate) fn par_filter<T: Copy + Send + Sync>(
    data: &[T],
    what: &str,
    keep: impl Fn(&T) -> bool + Sync,
) -> Result<Vec<T>> {
    par_filter_map(data, what, |x| keep(x).then_some(*x))
}

/// The `Some` values of `f` over `data`, in order, as [`par_filter`] does it: `f` runs
/// twice on each element (once to count, once to write), so it must give the same
/// answer both times.
pub(crate) fn par_filter_map<T: Sync, U: Send>(
    data: &[T],
    what: &str,
    f: impl Fn(&T) -> Option<U> + Sync,
) -> Result<Vec<U>> {
    par_filter_map_indices(data.len(), what, |i| f(&data[i]))
}

/// The `Some` values of `f(i)` for `i` in `0..len`, in order, as [`par_filter_map`]
/// does it (for elements computed from their index rather than stored).
pub(crate) fn par_filter_map_indices<U: Send>(
    len: usize,
    what: &str,
    f: impl Fn(usize) -> Option<U> + Sync,
) -> Result<Vec<U>> {
    par_filter_indices(
        len,
        what,
        |i| f(i).is_some(),
        |i| f(i).expect("`f` gives the same answer twice"),
    )
}

/// `value(i)` for the `i` in `0..len` that `keep` keeps, in order, as
/// [`par_filter_map`] does it, but with the test and the value apart: the second pass
/// computes only the values of the kept indices, without testing them again.
pub(crate) fn par_filter_indices<U: Send>(
    len: usize,
    what: &str,
    keep: impl Fn(usize) -> bool + Sync,
    value: impl Fn(usize) -> U + Sync,
) -> Result<Vec<U>> {
    let chunk_len = chunk_len(len, 64);
    let mut bits: Vec<u64> = zeroed(len.div_ceil(64), "a filter's flags")?;
    let chunk = |c: usize| c * chunk_len..((c + 1) * chunk_len).min(len);
    let counts: Vec<usize> = par_collect(
        bits.par_chunks_mut(chunk_len / 64)
            .enumerate()
            .map(|(c, words)| mark_kept(words, chunk(c), &keep)),
        "a filter's counts",
    )?;
    let total = counts.iter().sum();
    let mut out = with_capacity(total, what)?;
    let targets = split_spare_capacity(&mut out, counts.iter().copied(), what)?;
    targets
        .into_par_iter()
        .zip(bits.par_chunks(chunk_len / 64))
        .enumerate()
        .for_each(|(c, (target, words))| {
            let mut slots = target.iter_mut();
            for_each_kept(words, chunk(c), |i| {
                slots
                    .next()
                    .expect("one slot per kept index")
                    .write(value(i));
            });
        });
    // SAFETY: the targets cover the first `total` slots of the spare capacity, and each
    // chunk wrote exactly as many elements as the bits it counted into its target (a
    // panic in `value` leaves `out` empty).
    unsafe { out.set_len(total) };
    Ok(out)
}

/// [`par_filter_indices`] on the calling thread (for callers already running in
/// parallel, each over its own part).
pub(crate) fn filter_indices<U>(
    len: usize,
    what: &str,
    keep: impl Fn(usize) -> bool,
    value: impl Fn(usize) -> U,
) -> Result<Vec<U>> {
    let mut bits: Vec<u64> = zeroed(len.div_ceil(64), "a filter's flags")?;
    let total = mark_kept(&mut bits, 0..len, &keep);
    let mut out = with_capacity(total, what)?;
    for_each_kept(&bits, 0..len, |i| out.push(value(i)));
    Ok(out)
}

/// Sets bit `i - range.start` of `words` (64 to a word) for each `i` in `range` that
/// `keep` keeps, and counts them.
fn mark_kept(words: &mut [u64], range: Range<usize>, keep: impl Fn(usize) -> bool) -> usize {
    let mut count = 0;
    for (word, first) in words.iter_mut().zip(range.clone().step_by(64)) {
        for i in first..(first + 64).min(range.end) {
            *word |= (keep(i) as u64) << (i - first);
        }
        count += word.count_ones() as usize;
    }
    count
}

/// `each(i)` for the indices of `range` marked by [`mark_kept`], in order.
fn for_each_kept(words: &[u64], range: Range<usize>, mut each: impl FnMut(usize)) {
    for (&word, first) in words.iter().zip(range.step_by(64)) {
        let mut word = word;
        while word != 0 {
            each(first + word.trailing_zeros() as usize);
            word &= word - 1;
        }
    }
}

/// Elements per parallel chunk for `len` elements: a few chunks per thread (so that
/// small inputs still spread over every thread), a multiple of `multiple`, between 2^10
/// and 2^16 elements.
fn chunk_len(len: usize, multiple: usize) -> usize {
    let per_chunk = len.div_ceil(rayon::current_num_threads() * 4);
    per_chunk.clamp(1 << 10, 1 << 16).next_multiple_of(multiple)
}

/// The pieces, one after another (copied in parallel).
fn concat<S: Send>(pieces: Vec<Vec<S>>, what: &str) -> Result<Vec<S>> {
    let total = pieces.iter().map(Vec::len).sum();
    let mut all = with_capacity(total, what)?;
    let targets = split_spare_capacity(&mut all, pieces.iter().map(Vec::len), what)?;
    pieces
        .into_par_iter()
        .zip(targets)
        .for_each(|(piece, target)| {
            for (slot, x) in target.iter_mut().zip(piece) {
                slot.write(x);
            }
        });
    // SAFETY: the targets cover the first `total` slots of the spare capacity, and each
    // was written with every element of its piece (of exactly its length).
    unsafe { all.set_len(total) };
    Ok(all)
}

/// Appends the elements of `parts`, in order, to `v`, each converted by `convert`: the
/// parts are copied in parallel, each straight into its place.
pub(crate) fn par_append<S: Sync, T: Send>(
    v: &mut Vec<T>,
    parts: &[&[S]],
    convert: impl Fn(&S) -> T + Sync,
    what: &str,
) -> Result<()> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    reserve(v, total, what)?;
    let targets = split_spare_capacity(v, parts.iter().map(|p| p.len()), what)?;
    parts.par_iter().zip(targets).for_each(|(part, target)| {
        for (slot, x) in target.iter_mut().zip(part.iter()) {
            slot.write(convert(x));
        }
    });
    let len = v.len() + total;
    // SAFETY: the targets cover the first `total` slots of the spare capacity, and each
    // was written with every element of its part (of exactly its length).
    unsafe { v.set_len(len) };
    Ok(())
}

/// The spare capacity of `v` cut into consecutive pieces of the given lengths (their
/// sum at most the spare capacity).
fn split_spare_capacity<'v, T>(
    v: &'v mut Vec<T>,
    lengths: impl ExactSizeIterator<Item = usize>,
    what: &str,
) -> Result<Vec<&'v mut [std::mem::MaybeUninit<T>]>> {
    let mut pieces = with_capacity(lengths.len(), what)?;
    let mut rest = v.spare_capacity_mut();
    for length in lengths {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(length);
        pieces.push(piece);
        rest = tail;
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counted collects push in order, exactly the result's room; a `fill` that pushes
    /// fewer the second time is an error, not uninitialized elements.
    #[test]
    fn counted_collects_keep_order_and_catch_a_changing_fill() {
        let len = 300_000;
        let kept = |i: usize| i % 7 == 3 || i % 1000 == 0;
        let got = par_collect_counted(len, "test", |range, push| {
            range.filter(|&i| kept(i)).for_each(|i| push(i as u64))
        })
        .unwrap();
        let want: Vec<u64> = (0..len).filter(|&i| kept(i)).map(|i| i as u64).collect();
        assert_eq!(got, want);
        assert_eq!(got.capacity(), want.len());
        let calls = AtomicUsize::new(0);
        let error = par_collect_counted(10, "test", |range, push| {
            // The first pass (counting) sees every index, the second only the first.
            let first = calls.fetch_add(1, Ordering::Relaxed) == 0;
            range.take(if first { 10 } else { 1 }).for_each(push)
        })
        .unwrap_err();
        assert_eq!(error.status(), Status::Internal, "{}", error.message());
    }

    /// Waiting for the background frees returns only once the value handed over has
    /// been dropped.
    #[test]
    fn waiting_sees_background_frees_done() {
        use std::sync::Arc;
        struct Slow(Arc<AtomicBool>);
        impl Drop for Slow {
            fn drop(&mut self) {
                std::thread::sleep(std::time::Duration::from_millis(50));
                self.0.store(true, Ordering::Release);
            }
        }
        let dropped = Arc::new(AtomicBool::new(false));
        // Said to be large, so that it goes to a thread of its own.
        free_in_background(Slow(Arc::clone(&dropped)), 64 << 20);
        wait_for_background_frees();
        assert!(
            dropped.load(Ordering::Acquire),
            "dropped before the wait ended"
        );
    }

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

    /// The filters keep exactly the kept indices, in order, at lengths around the
    /// 64-index words and the parallel chunks.
    #[test]
    fn filters_keep_the_kept_indices_in_order() {
        let keep = |i: usize| (i * 2_654_435_761) % 7 < 3;
        for len in [0, 1, 63, 64, 65, 1_000, 70_001, 300_000] {
            let expected: Vec<u64> = (0..len)
                .filter(|&i| keep(i))
                .map(|i| i as u64 * 3)
                .collect();
            let sequential = filter_indices(len, "s", keep, |i| i as u64 * 3).unwrap();
            let parallel = par_filter_indices(len, "p", keep, |i| i as u64 * 3).unwrap();
            assert_eq!(sequential, expected, "sequential, {len} indices");
            assert_eq!(parallel, expected, "parallel, {len} indices");
        }
    }

    /// The kernel's flags for the mapping holding `at`, from /proc/self/smaps.
    #[cfg(target_os = "linux")]
    fn mapping_flags(at: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ').filter(|(r, _)| r.contains('-')) {
                let (lo, hi) = range.split_once('-')?;
                let (lo, hi) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16));
                inside = matches!((lo, hi), (Ok(lo), Ok(hi)) if lo <= at && at < hi);
            } else if let Some(flags) = line.strip_prefix("VmFlags:").filter(|_| inside) {
                return Some(flags.trim().to_string());
            }
        }
        None
    }

    /// Large arrays, zeroed or reserved, are marked for huge pages ("hg" in the
    /// mapping's flags); small ones are left alone.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_arrays_ask_for_huge_pages() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if !thp.is_ok_and(|t| t.contains("[madvise]") || t.contains("[always]")) {
            eprintln!("SKIPPED large_arrays_ask_for_huge_pages: no transparent huge pages here");
            return;
        }
        let zeroes = zeroed::<u64>(4 << 20, "z").unwrap();
        let mut reserved: Vec<u32> = with_capacity(8 << 20, "r").unwrap();
        reserved.push(1);
        for at in [
            zeroes.as_ptr() as usize + (8 << 20),
            reserved.as_ptr() as usize + (8 << 20),
        ] {
            let flags = mapping_flags(at).expect("the array's mapping is listed");
            assert!(flags.split(' ').any(|f| f == "hg"), "flags: {flags}");
        }
    }
}
