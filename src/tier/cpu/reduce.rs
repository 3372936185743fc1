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

/// Elements examined per vectorized step of [`arg_extreme_seq`] (fits in L1).
const BLOCK_LEN: usize = 2048;

/// Sequential arg-extreme of a non-empty slice; indices are offset by `base`.
///
/// Works block by block: the block's extreme by a select-fold (vectorizes; NaN is
/// ignored there and checked separately), then, only when the block improves on the
/// best so far, the first position holding it.
fn arg_extreme_seq<T: Element>(data: &[T], base: usize, extreme: Extreme) -> (T, usize) {
    if data.len() < 8 {
        return arg_extreme_short(data, base, extreme);
    }
    let mut best = (data[0], 0usize);
    for (b, block) in data.chunks(BLOCK_LEN).enumerate() {
        let start = b * BLOCK_LEN;
        if block.iter().any(|x| x.is_nan()) {
            let i = block.iter().position(|x| x.is_nan()).unwrap_or(0);
            if !best.0.is_nan() {
                best = (block[i], start + i);
            }
            break; // the first NaN is final
        }
        let candidate = match extreme {
            Extreme::Min => block
                .iter()
                .fold(block[0], |m, &x| if x < m { x } else { m }),
            Extreme::Max => block
                .iter()
                .fold(block[0], |m, &x| if x > m { x } else { m }),
        };
        if beats(extreme, candidate, best.0) {
            let i = block.iter().position(|&x| x == candidate).unwrap_or(0);
            best = (block[i], start + i);
        }
    }
    (best.0, base + best.1)
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
        let bounds = offsets[first..=first + values.len()].windows(2);
        for ((value, index), bound) in values.iter_mut().zip(indices.iter_mut()).zip(bounds) {
            let (start, end) = (bound[0] as usize, bound[1] as usize);
            let result = match end - start {
                0 => None,
                len if len > TASK_LEN => arg_extreme_par(&data[start..end], start, extreme),
                _ => Some(arg_extreme_seq(&data[start..end], start, extreme)),
            };
            (*value, *index) = match result {
                Some((v, i)) => (v, i as u64),
                None => (empty_value, EMPTY_SEGMENT),
            };
        }
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
