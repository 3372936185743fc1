//! Arg-reductions on the CPU: the extreme value and the first index holding it.

use rayon::prelude::*;

use crate::types::{beats_max, beats_min, Element, Extreme, EMPTY_SEGMENT};

/// Elements per parallel task; large enough that task overhead is noise.
const TASK_LEN: usize = 1 << 16;

#[inline(always)]
fn beats<T: Element>(extreme: Extreme, candidate: T, current: T) -> bool {
    match extreme {
        Extreme::Min => beats_min(candidate, current),
        Extreme::Max => beats_max(candidate, current),
    }
}

/// Elements examined per step of [`arg_extreme_seq`] (fits in L1).
const BLOCK_LEN: usize = 2048;

/// Independent running extremes of [`lane_fold`]: the compiler keeps them in vector
/// registers. One running value would be a serial chain for floats, which LLVM may not
/// reassociate into vectors (it does for integers only).
const LANES: usize = 16;

/// `data` as whole chunks of [`LANES`] elements, and the rest (`slice::as_chunks`
/// is newer than this crate's minimum Rust).
#[inline(always)]
fn lane_chunks<T>(
    data: &[T],
) -> (
    impl DoubleEndedIterator<Item = &[T; LANES]> + ExactSizeIterator,
    &[T],
) {
    let chunks = data.chunks_exact(LANES);
    let tail = chunks.remainder();
    (chunks.map(|c| c.try_into().unwrap()), tail)
}

/// The extreme of a block of at least [`LANES`] elements and whether the block holds a
/// NaN (then the value is meaningless). `better(x, m)`: `x` replaces `m`; NaN never
/// does, so the lanes stay comparable.
#[inline(always)]
fn lane_fold<T: Element>(block: &[T], better: impl Fn(T, T) -> bool + Copy) -> (T, bool) {
    let pick = |m: T, x: T| if better(x, m) { x } else { m };
    let (mut chunks, tail) = lane_chunks(block);
    // The first chunk starts the lanes (a block has at least one).
    let first = chunks.next().unwrap();
    let mut best = *first;
    let mut nan = first.map(|x| x.is_nan());
    for chunk in chunks {
        for l in 0..LANES {
            nan[l] |= chunk[l].is_nan();
            best[l] = pick(best[l], chunk[l]);
        }
    }
    if !tail.is_empty() {
        // The last LANES elements once more: seeing an element twice changes no
        // extreme, and fixed indices keep `best` in registers.
        let last: &[T; LANES] = block[block.len() - LANES..].try_into().unwrap();
        for l in 0..LANES {
            nan[l] |= last[l].is_nan();
            best[l] = pick(best[l], last[l]);
        }
    }
    let mut width = LANES / 2;
    while width > 0 {
        for l in 0..width {
            best[l] = pick(best[l], best[l + width]);
        }
        width /= 2;
    }
    (best[0], nan.contains(&true))
}

/// Bit `l` set where `x[l] == value` (compiles to a vector compare and a mask move).
#[inline(always)]
fn matches<T: Element>(x: &[T; LANES], value: T) -> u32 {
    let mut mask = 0u32;
    for (l, &y) in x.iter().enumerate() {
        mask |= ((y == value) as u32) << l;
    }
    mask
}

/// The first index of `value` in a slice of at least [`LANES`] elements that holds it,
/// LANES elements per step.
///
/// A short slice (`short`) is read whole, last chunk first, with no exit from the loop:
/// an exit at an unpredictable position costs more than a short segment's comparisons.
/// A long one stops at the first chunk holding `value`.
#[inline(always)]
fn first_index_of<T: Element>(data: &[T], value: T, short: bool) -> usize {
    let (chunks, tail) = lane_chunks(data);
    // The last LANES elements stand for the tail (the overlap is harmless).
    let last_at = data.len() - LANES;
    let last: &[T; LANES] = data[last_at..].try_into().unwrap();
    if short {
        let mut found = usize::MAX;
        let mut look = |mask: u32, at: usize| {
            if mask != 0 {
                found = at + mask.trailing_zeros() as usize;
            }
        };
        if !tail.is_empty() {
            look(matches(last, value), last_at);
        }
        for (c, x) in chunks.enumerate().rev() {
            look(matches(x, value), c * LANES);
        }
        return found;
    }
    for (c, x) in chunks.enumerate() {
        let mask = matches(x, value);
        if mask != 0 {
            return c * LANES + mask.trailing_zeros() as usize;
        }
    }
    last_at + matches(last, value).trailing_zeros() as usize
}

/// Slices up to this long are searched for their extreme's position whole, without an
/// early exit (see [`first_index_of`]).
const SHORT_LEN: usize = 8 * LANES;

#[inline(always)]
fn block_extreme<T: Element>(block: &[T], extreme: Extreme) -> (T, bool) {
    match extreme {
        Extreme::Min => lane_fold(block, |x, m| x < m),
        Extreme::Max => lane_fold(block, |x, m| x > m),
    }
}

/// The extreme of a non-empty slice, as a left-to-right fold of `Min` or `Max` finds it:
/// the first NaN if there is one, else the value at the extreme's first position (so
/// of -0.0 and +0.0 the sign seen first).
#[inline(never)]
pub(super) fn first_extreme<T: Element>(data: &[T], extreme: Extreme) -> T {
    arg_extreme_seq(data, 0, extreme).0
}

/// Sequential arg-extreme of a non-empty slice; indices are offset by `base`.
///
/// Works block by block: the block's extreme by a lane fold (vectorizes; NaN is only
/// noted there), then, only when the block improves on the best so far, the first
/// position holding it; a block with a NaN ends the search at its first NaN.
/// Not inlined: one compiled copy per element type serves every caller.
#[inline(never)]
fn arg_extreme_seq<T: Element>(data: &[T], base: usize, extreme: Extreme) -> (T, usize) {
    arg_extreme_body(data, base, extreme)
}

/// [`arg_extreme_seq`]'s body, for callers compiled with other target features.
#[inline(always)]
fn arg_extreme_body<T: Element>(data: &[T], base: usize, extreme: Extreme) -> (T, usize) {
    if data.len() < LANES {
        return arg_extreme_short(data, base, extreme);
    }
    let short = data.len() <= SHORT_LEN;
    // The first block's extreme is the best so far whatever it is: a slice of one block
    // (every short segment) compares nothing beyond its lanes.
    let mut best = None::<(T, usize)>;
    let mut start = 0;
    while start < data.len() {
        // The last block takes the rest when a further one would be under LANES long.
        let end = if data.len() - start < BLOCK_LEN + LANES {
            data.len()
        } else {
            start + BLOCK_LEN
        };
        let block = &data[start..end];
        let (candidate, has_nan) = block_extreme(block, extreme);
        if has_nan {
            // The first NaN is final.
            let i = block.iter().position(|x| x.is_nan()).unwrap_or(0);
            best = Some((block[i], start + i));
            break;
        }
        if best.map_or(true, |(value, _)| beats(extreme, candidate, value)) {
            let i = first_index_of(block, candidate, short);
            best = Some((block[i], start + i));
        }
        start = end;
    }
    let (value, i) = best.expect("a slice of at least LANES elements has a block");
    (value, base + i)
}

/// Plain loop for short slices (short segments), where block setup would dominate.
fn arg_extreme_short<T: Element>(data: &[T], base: usize, extreme: Extreme) -> (T, usize) {
    let mut best = (data[0], 0usize);
    for (i, &x) in data.iter().enumerate().skip(1) {
        if beats(extreme, x, best.0) {
            best = (x, i);
        }
    }
    (best.0, base + best.1)
}

/// Arg-extreme of `data`, `None` when empty. Ties go to the lowest index.
pub(crate) fn arg_extreme<T: Element>(
    pool: &rayon::ThreadPool,
    data: &[T],
    extreme: Extreme,
) -> Option<(T, usize)> {
    if data.is_empty() {
        return None;
    }
    if data.len() <= TASK_LEN || pool.current_num_threads() == 1 {
        return Some(arg_extreme_seq(data, 0, extreme));
    }
    pool.install(|| arg_extreme_par(data, 0, extreme))
}

/// Parallel arg-extreme of a non-empty slice, inside the pool. Rayon hands `reduce`
/// its operands in sequence order, so keeping the left one on ties keeps the first index.
fn arg_extreme_par<T: Element>(data: &[T], base: usize, extreme: Extreme) -> Option<(T, usize)> {
    data.par_chunks(TASK_LEN)
        .enumerate()
        .map(|(c, part)| arg_extreme_seq(part, base + c * TASK_LEN, extreme))
        .reduce_with(|left, right| {
            if beats(extreme, right.0, left.0) {
                right
            } else {
                left
            }
        })
}

/// Consecutive segments of a segmented arg-extreme: `offsets` holds their bounds.
struct Segments<'a, T> {
    data: &'a [T],
    offsets: &'a [u64],
    extreme: Extreme,
    empty_value: T,
}

impl<T: Element> Segments<'_, T> {
    /// Each segment's extreme and its first index into `values` and `indices`; a short
    /// segment's by `seq` (an arg-extreme of a slice).
    #[inline(always)]
    fn reduce(
        &self,
        values: &mut [T],
        indices: &mut [u64],
        seq: impl Fn(&[T], usize, Extreme) -> (T, usize),
    ) {
        let (data, extreme) = (self.data, self.extreme);
        let bounds = self.offsets.windows(2);
        for ((value, index), bound) in values.iter_mut().zip(indices.iter_mut()).zip(bounds) {
            let (start, end) = (bound[0] as usize, bound[1] as usize);
            let result = match end - start {
                0 => None,
                1 => Some((data[start], start)),
                len if len > TASK_LEN => arg_extreme_par(&data[start..end], start, extreme),
                _ => Some(seq(&data[start..end], start, extreme)),
            };
            (*value, *index) = match result {
                Some((v, i)) => (v, i as u64),
                None => (self.empty_value, EMPTY_SEGMENT),
            };
        }
    }

    /// [`Segments::reduce`] with the arg-extreme of each short segment compiled for AVX2:
    /// 32-bit lanes compare eight to an instruction, where SSE2 (the x86_64 baseline) has
    /// four and no unsigned or 32-bit minimum at all. Used for 4-byte types, whose
    /// short segments are bound by those compares.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn reduce_avx2(&self, values: &mut [T], indices: &mut [u64]) {
        self.reduce(values, indices, |data, base, extreme| {
            if data.len() <= SHORT_LEN {
                arg_extreme_body(data, base, extreme)
            } else {
                arg_extreme_seq(data, base, extreme)
            }
        });
    }
}

/// Per-segment arg-extreme over validated CSR `offsets`. An empty segment gets the
/// operator's identity as its value and [`EMPTY_SEGMENT`] as its index.
///
/// Segments are grouped into blocks of about [`TASK_LEN`] elements (found by binary
/// search in `offsets`), so one task handles many short segments in a tight loop and
/// a long segment gets a task of its own, reduced in parallel inside.
pub(crate) fn segmented_arg_extreme<T: Element>(
    pool: &rayon::ThreadPool,
    data: &[T],
    offsets: &[u64],
    extreme: Extreme,
    values: &mut [T],
    indices: &mut [u64],
) -> crate::Result<()> {
    let empty_value = match extreme {
        Extreme::Min => T::HIGHEST,
        Extreme::Max => T::LOWEST,
    };
    // Reduces segments first.. into the given output slices.
    let reduce_block = |first: usize, values: &mut [T], indices: &mut [u64]| {
        let segments = Segments {
            data,
            offsets: &offsets[first..=first + values.len()],
            extreme,
            empty_value,
        };
        #[cfg(target_arch = "x86_64")]
        if std::mem::size_of::<T>() == 4 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (just checked), all the function requires.
            unsafe { segments.reduce_avx2(values, indices) };
            return;
        }
        segments.reduce(values, indices, arg_extreme_seq);
    };
    let segments = values.len();
    if data.len() <= TASK_LEN && segments <= TASK_LEN {
        // No segment is long enough to need the pool.
        reduce_block(0, values, indices);
        return Ok(());
    }
    // Block boundaries: the segment holding every TASK_LEN-th element, plus a cap on
    // the number of (empty or tiny) segments per block.
    let mut starts: Vec<usize> = crate::alloc::with_capacity(
        data.len().div_ceil(TASK_LEN) + segments.div_ceil(TASK_LEN),
        "the reduction's block starts",
    )?;
    starts.extend(
        (0..data.len())
            .step_by(TASK_LEN)
            .map(|element| {
                offsets
                    .partition_point(|&o| o as usize <= element)
                    .saturating_sub(1)
            })
            .chain((0..segments).step_by(TASK_LEN)),
    );
    starts.sort_unstable();
    starts.dedup();
    let mut blocks = crate::alloc::with_capacity(starts.len(), "the reduction's blocks")?;
    let (mut values_rest, mut indices_rest) = (values, indices);
    for (k, &first) in starts.iter().enumerate() {
        let len = starts.get(k + 1).unwrap_or(&segments) - first;
        let (v, vr) = values_rest.split_at_mut(len);
        let (i, ir) = indices_rest.split_at_mut(len);
        blocks.push((first, v, i));
        (values_rest, indices_rest) = (vr, ir);
    }
    pool.install(|| {
        blocks
            .into_par_iter()
            .for_each(|(first, values, indices)| reduce_block(first, values, indices));
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first index of the extreme of `data` (NaN the extreme), one element at a time.
    fn reference<T: Element>(data: &[T], extreme: Extreme) -> Option<(T, usize)> {
        let mut best: Option<(T, usize)> = None;
        for (i, &x) in data.iter().enumerate() {
            if best.map_or(true, |(b, _)| beats(extreme, x, b)) {
                best = Some((x, i));
            }
        }
        best
    }

    /// Segments of every length from 0 to past `SHORT_LEN`, through the plain loop and,
    /// where the CPU has it, the AVX2 one (which the context picks for 4-byte types, so
    /// the plain loop is not otherwise tested on them on such a CPU).
    fn both_paths_agree<T: Element>(values_of: impl Fn(u64) -> T) {
        let mut offsets = vec![0u64];
        for len in (0..=SHORT_LEN + 20).chain([0, 1, 2, 15, 16, 17]) {
            offsets.push(offsets.last().unwrap() + len as u64);
        }
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let data: Vec<T> = (0..*offsets.last().unwrap())
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                values_of(state)
            })
            .collect();
        for extreme in [Extreme::Min, Extreme::Max] {
            let segments = Segments {
                data: &data,
                offsets: &offsets,
                extreme,
                empty_value: T::ZERO,
            };
            let count = offsets.len() - 1;
            let mut plain = (vec![T::ZERO; count], vec![0u64; count]);
            segments.reduce(&mut plain.0, &mut plain.1, arg_extreme_seq);
            for (s, bound) in offsets.windows(2).enumerate() {
                let (start, end) = (bound[0] as usize, bound[1] as usize);
                let want = reference(&data[start..end], extreme)
                    .map_or((T::ZERO.to_bits64(), EMPTY_SEGMENT), |(v, i)| {
                        (v.to_bits64(), (start + i) as u64)
                    });
                assert_eq!((plain.0[s].to_bits64(), plain.1[s]), want, "segment {s}");
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let mut avx2 = (vec![T::ZERO; count], vec![0u64; count]);
                // SAFETY: the CPU has AVX2 (just checked).
                unsafe { segments.reduce_avx2(&mut avx2.0, &mut avx2.1) };
                assert_eq!(plain.1, avx2.1);
                let bits = |v: &[T]| v.iter().map(|x| x.to_bits64()).collect::<Vec<_>>();
                assert_eq!(bits(&plain.0), bits(&avx2.0));
            } else {
                eprintln!("both_paths_agree: AVX2 path SKIPPED: this CPU has no AVX2");
            }
        }
    }

    #[test]
    fn short_segments_plain_and_avx2() {
        // Few distinct values, so ties are common.
        both_paths_agree(|r| (r % 7) as u32 * 0x2000_0000);
        both_paths_agree(|r| (r % 5) as i32 - 2);
        both_paths_agree(|r| match r % 11 {
            0 => f32::NAN,
            1 => -0.0,
            2 => 0.0,
            k => k as f32 - 6.0,
        });
        both_paths_agree(|r| r % 9);
        both_paths_agree(|r| {
            if r % 13 == 0 {
                f64::NAN
            } else {
                (r % 4) as f64
            }
        });
    }
}
