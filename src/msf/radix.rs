//! Parallel LSD radix sort of edge priorities (8-bit digits).

use rayon::prelude::*;

use super::prepare::Priority;

/// Below this many elements a comparison sort is faster.
const SMALL: usize = 1 << 15;

/// Where one pass scatters to. Shared by the worker threads.
struct Destination<P>(*mut P);

// SAFETY: a pass gives every (chunk, bucket) pair its own disjoint range of the
// destination (exclusive prefix sums of the histograms), so no two threads ever write
// the same element, and nothing reads the destination until the pass has finished.
unsafe impl<P: Send> Sync for Destination<P> {}

/// Sorts `data` ascending. Digits equal in every element are skipped, so small
/// weights and small edge counts cost fewer passes.
pub(crate) fn radix_sort<P: Priority>(data: &mut Vec<P>) {
    if data.len() <= SMALL {
        data.sort_unstable();
        return;
    }
    radix_sort_by(data, P::BYTES, |p, i| p.byte(i));
}

/// Sorts `data` stably by the key whose byte `i` (0 = least significant) of
/// `key_bytes` is `byte(item, i)`. Digits equal in every element are skipped.
pub(crate) fn radix_sort_by<T: Copy + Send + Sync>(
    data: &mut Vec<T>,
    key_bytes: usize,
    byte: impl Fn(&T, usize) -> u8 + Sync,
) {
    let n = data.len();
    if n < 2 {
        return;
    }
    let first = data[0];
    let varying: Vec<usize> = (0..key_bytes)
        .filter(|&d| {
            let b = byte(&first, d);
            data.par_iter().any(|x| byte(x, d) != b)
        })
        .collect();
    if varying.is_empty() {
        return;
    }
    let chunks = (rayon::current_num_threads() * 4).max(1);
    let chunk_len = n.div_ceil(chunks);
    let mut scratch: Vec<T> = vec![first; n];
    for &digit in &varying {
        let histograms: Vec<[usize; 256]> = data
            .par_chunks(chunk_len)
            .map(|chunk| {
                let mut h = [0usize; 256];
                for x in chunk {
                    h[byte(x, digit) as usize] += 1;
                }
                h
            })
            .collect();
        // starts[c][b]: where chunk c writes its first element of bucket b.
        let mut starts = vec![[0usize; 256]; histograms.len()];
        let mut next = 0;
        for bucket in 0..256 {
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
                    let b = byte(x, digit) as usize;
                    // SAFETY: `at[b]` stays inside this chunk's range for bucket b,
                    // which lies within `scratch` (the ranges partition 0..n).
                    unsafe { out.0.add(at[b]).write(*x) };
                    at[b] += 1;
                }
            });
        std::mem::swap(data, &mut scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_library() {
        let mut x = 12345u64;
        let mut data: Vec<u64> = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x % 1_000_003) << 20) | (x & 0xFFFFF)
            })
            .collect();
        let mut expected = data.clone();
        expected.sort_unstable();
        radix_sort(&mut data);
        assert_eq!(data, expected);

        let mut wide: Vec<u128> = (0..100_000u128)
            .rev()
            .map(|i| ((i % 7) << 64) | i)
            .collect();
        let mut expected = wide.clone();
        expected.sort_unstable();
        radix_sort(&mut wide);
        assert_eq!(wide, expected);
    }
}
