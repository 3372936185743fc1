//! Parallel LSD radix sort (stable, digits of at most 11 bits) over the bits in which
//! the keys differ.

use rayon::prelude::*;

use super::prepare::Priority;
use crate::{alloc, Result};

/// At most this many bits per digit: 2048 buckets keep a chunk's histogram in L1.
const MAX_DIGIT_BITS: u32 = 11;
/// The fewest elements per chunk (and so per histogram) of a pass.
const MIN_CHUNK: usize = 1 << 14;

/// An array that many threads scatter into, each element written by exactly one of
/// them (the callers compute disjoint slots), and read only after they all finish.
pub(crate) struct Destination<T>(pub *mut T);

// SAFETY: users guarantee that no two threads write the same element and that nothing
// reads the array while writes are in flight (see `write`).
unsafe impl<T: Send> Sync for Destination<T> {}

impl<T> Destination<T> {
    /// # Safety
    /// `index` is inside the array's allocation, and no other thread writes or reads it
    /// concurrently.
    #[inline(always)]
    pub unsafe fn write(&self, index: usize, value: T) {
        // SAFETY: guaranteed by the caller.
        unsafe { self.0.add(index).write(value) }
    }
}

/// Sorts priorities that are already in ascending position order by their weight
/// part only: the sort is stable, so equal weights stay in position order and the
/// result is in (weight, position) order without sorting the position bits.
pub(crate) fn sort_by_weight<P: Priority>(data: &mut Vec<P>) -> Result<()> {
    debug_assert!(data.windows(2).all(|w| w[0].position() < w[1].position()));
    radix_sort_by_key(data, |p| p.shifted(P::KEY_SHIFT))
}

/// The least and the greatest `key` over `data` (one parallel pass); `None` when empty.
pub(crate) fn key_range<T: Sync>(data: &[T], key: impl Fn(&T) -> u64 + Sync) -> Option<(u64, u64)> {
    data.par_iter()
        .map(|x| {
            let k = key(x);
            (k, k)
        })
        .reduce_with(|a, b| (a.0.min(b.0), a.1.max(b.1)))
}

/// Sorts `data` stably by `key`. Only the bits in which keys can differ are sorted:
/// keys are taken relative to the least one, so a set whose keys span a narrow range
/// (a light part of edges below a pivot) needs fewer passes, and the digit width is
/// balanced across the passes.
pub(crate) fn radix_sort_by_key<T: Copy + Send + Sync>(
    data: &mut Vec<T>,
    key: impl Fn(&T) -> u64 + Sync,
) -> Result<()> {
    let n = data.len();
    if n < 2 {
        return Ok(());
    }
    let (least, most) = key_range(data, &key).expect("at least two elements");
    let bits = u64::BITS - (most - least).leading_zeros();
    if bits == 0 {
        return Ok(());
    }
    let passes = bits.div_ceil(MAX_DIGIT_BITS);
    let digit_bits = bits.div_ceil(passes);
    let buckets = 1usize << digit_bits;
    // A few chunks per thread, but none under MIN_CHUNK elements: each chunk costs a
    // histogram of every bucket, filled, summed and scanned per pass.
    let chunks = (n / MIN_CHUNK).clamp(1, rayon::current_num_threads() * 4);
    let chunk_len = n.div_ceil(chunks);
    // Written whole by the first pass's scatter before anything reads it.
    let mut scratch: Vec<T> = alloc::with_capacity(n, "the radix sort's scratch array")?;
    for pass in 0..passes {
        let shift = pass * digit_bits;
        let digit = |x: &T| ((key(x) - least) >> shift) as usize & (buckets - 1);
        // Histograms and starts are per chunk (a few per thread), not per element.
        let histograms: Vec<Vec<usize>> = data
            .par_chunks(chunk_len)
            .map(|chunk| {
                let mut h = vec![0usize; buckets];
                for x in chunk {
                    h[digit(x)] += 1;
                }
                h
            })
            .collect();
        // starts[c][b]: where chunk c writes its first element of bucket b.
        let mut starts = vec![vec![0usize; buckets]; histograms.len()];
        let mut next = 0;
        for bucket in 0..buckets {
            for (c, h) in histograms.iter().enumerate() {
                starts[c][bucket] = next;
                next += h[bucket];
            }
        }
        let out = Destination(scratch.as_mut_ptr());
        data.par_chunks(chunk_len)
            .zip(starts.into_par_iter())
            .for_each(|(chunk, mut at)| {
                let out = &out;
                for x in chunk {
                    let b = digit(x);
                    // SAFETY: `at[b]` stays inside this chunk's range for bucket b,
                    // which lies within `scratch`'s capacity of n (the ranges
                    // partition 0..n).
                    unsafe { out.write(at[b], *x) };
                    at[b] += 1;
                }
            });
        // SAFETY: the ranges partition 0..n and every chunk wrote all of its elements,
        // so each of the first n slots was written (T is Copy: nothing to drop).
        unsafe { scratch.set_len(n) };
        std::mem::swap(data, &mut scratch);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    #[test]
    fn weight_sort_gives_weight_then_position_order() {
        let mut next = stream(12345);
        let mut data: Vec<u64> = (0..200_000u64)
            .map(|i| <u64 as Priority>::new(next() % 1000, i as usize))
            .collect();
        let mut expected = data.clone();
        expected.sort_unstable();
        sort_by_weight(&mut data).unwrap();
        assert_eq!(data, expected);

        let mut wide: Vec<u128> = (0..100_000usize)
            .map(|i| <u128 as Priority>::new(next(), i))
            .collect();
        let mut expected = wide.clone();
        expected.sort_unstable();
        sort_by_weight(&mut wide).unwrap();
        assert_eq!(wide, expected);
    }

    #[test]
    fn sorts_pairs_stably_by_key() {
        let mut next = stream(777);
        let mut data: Vec<(u64, u32)> = (0..150_000u32).map(|i| (next() % 5000, i)).collect();
        let mut expected = data.clone();
        expected.sort_by_key(|&(k, _)| k); // stable
        radix_sort_by_key(&mut data, |&(k, _)| k).unwrap();
        assert_eq!(data, expected);
        // Keys in a narrow range far from zero, and keys all equal.
        let mut narrow: Vec<(u64, u32)> = (0..100_000u32)
            .map(|i| ((1 << 40) + next() % 3000, i))
            .collect();
        let mut expected = narrow.clone();
        expected.sort_by_key(|&(k, _)| k);
        radix_sort_by_key(&mut narrow, |&(k, _)| k).unwrap();
        assert_eq!(narrow, expected);
        let mut same: Vec<(u64, u32)> = (0..5000u32).map(|i| (7, 5000 - i)).collect();
        let expected = same.clone();
        radix_sort_by_key(&mut same, |&(k, _)| k).unwrap();
        assert_eq!(same, expected);
    }
}
