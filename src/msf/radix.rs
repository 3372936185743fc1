//! Parallel LSD radix sort (11-bit digits, stable), skipping digits that are equal in
//! every element.

use rayon::prelude::*;

use super::prepare::Priority;
use crate::{alloc, Result};

/// Bits per digit: 2048 buckets keep the histograms in L1 and need few passes.
const DIGIT_BITS: u32 = 11;
const BUCKETS: usize = 1 << DIGIT_BITS;

/// An array that many threads scatter into, each element written by exactly one of
/// them (the callers compute disjoint slots), and read only after they all finish.
pub(crate) struct Destination<T>(pub *mut T);

// SAFETY: users guarantee that no two threads write the same element and that nothing
// reads the array while writes are in flight (see `write`).
unsafe impl<T: Send> Sync for Destination<T> {}

impl<T> Destination<T> {
    /// # Safety
    /// `index` is inside the array, and no other thread writes or reads it
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
    radix_sort_by(data, P::KEY_SHIFT, P::BITS, |p, shift| p.shifted(shift))
}

/// Sorts `data` stably by the key bits `low_bit..high_bit`, where `bits(item, s)`
/// returns the key shifted right by `s` (at least [`DIGIT_BITS`] meaningful bits).
pub(crate) fn radix_sort_by<T: Copy + Send + Sync>(
    data: &mut Vec<T>,
    low_bit: u32,
    high_bit: u32,
    bits: impl Fn(&T, u32) -> u64 + Sync,
) -> Result<()> {
    let n = data.len();
    if n < 2 {
        return Ok(());
    }
    let digit = |x: &T, shift: u32| (bits(x, shift) & (BUCKETS as u64 - 1)) as usize;
    let first = data[0];
    let varying: Vec<u32> = (low_bit..high_bit)
        .step_by(DIGIT_BITS as usize)
        .filter(|&shift| {
            let d = digit(&first, shift);
            data.par_iter().any(|x| digit(x, shift) != d)
        })
        .collect();
    if varying.is_empty() {
        return Ok(());
    }
    let chunks = (rayon::current_num_threads() * 4).max(1);
    let chunk_len = n.div_ceil(chunks);
    // Histograms and starts are per chunk (a few per thread), not per element.
    let mut scratch: Vec<T> = alloc::filled(n, first, "the radix sort's scratch array")?;
    for &shift in &varying {
        let histograms: Vec<Vec<usize>> = data
            .par_chunks(chunk_len)
            .map(|chunk| {
                let mut h = vec![0usize; BUCKETS];
                for x in chunk {
                    h[digit(x, shift)] += 1;
                }
                h
            })
            .collect();
        // starts[c][b]: where chunk c writes its first element of bucket b.
        let mut starts = vec![vec![0usize; BUCKETS]; histograms.len()];
        let mut next = 0;
        for bucket in 0..BUCKETS {
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
                    let b = digit(x, shift);
                    // SAFETY: `at[b]` stays inside this chunk's range for bucket b,
                    // which lies within `scratch` (the ranges partition 0..n).
                    unsafe { out.write(at[b], *x) };
                    at[b] += 1;
                }
            });
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
        radix_sort_by(&mut data, 0, 64, |&(k, _), s| k >> s).unwrap();
        assert_eq!(data, expected);
    }
}
