//! Scans on the CPU: one pass over memory, chunk by chunk, with a chained carry.
//!
//! Each worker claims the next chunk (sized to stay in L2), reduces it while it streams
//! in, waits for its predecessor's inclusive prefix, publishes its own, then scans the
//! chunk from cache. Memory is read once and written once, as by a copy. A worker only
//! ever waits on a chunk that a running worker claimed earlier, so there is no
//! deadlock whatever the pool is doing; it never blocks inside rayon.
//!
//! The chunk size depends only on the element size, never on the thread count, so a
//! float sum is associated the same way on every run and with any number of threads.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use super::reduce;
use super::segments::Segmentation;
use crate::types::{DType, Element, Extreme, MaxOp, MinOp, Monoid, ScanKind};

/// Bytes per chunk: small enough that a chunk and its output stay in a core's L2.
const CHUNK_BYTES: usize = 128 * 1024;

fn chunk_len<T>() -> usize {
    CHUNK_BYTES / std::mem::size_of::<T>()
}

/// A chunk's inclusive prefix, published once for its successor.
struct Carry {
    ready: AtomicBool,
    bits: AtomicU64,
}

impl Carry {
    fn publish<T: Element>(&self, value: T) {
        self.bits.store(value.to_bits64(), Ordering::Relaxed);
        self.ready.store(true, Ordering::Release);
    }

    fn wait<T: Element>(&self) -> T {
        let mut spins = 0u32;
        while !self.ready.load(Ordering::Acquire) {
            spins += 1;
            if spins < 1 << 10 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        T::from_bits64(self.bits.load(Ordering::Relaxed))
    }
}

/// Reduction of a chunk as seen by its successors: whether it contains a segment head,
/// and the combination of its elements since its last head.
fn reduce_chunk<T: Element, M: Monoid<T>>(
    data: &[T],
    base: usize,
    seg: &impl Segmentation,
) -> (bool, T) {
    let mut has_head = false;
    let mut acc = M::IDENTITY;
    seg.runs(base, base + data.len(), |a, b, begins| {
        if begins {
            has_head = true;
            acc = M::IDENTITY;
        }
        let run = &data[a - base..b - base];
        acc = match float_extreme::<T, M>() {
            // The fold's value, found by compares that vectorize.
            Some(extreme) if !run.is_empty() => {
                M::combine(acc, reduce::first_extreme(run, extreme))
            }
            _ => run.iter().fold(acc, |running, &x| M::combine(running, x)),
        };
    });
    (has_head, acc)
}

/// `M`'s extreme when `T` is a float type. A running float minimum or maximum is a
/// serial chain of NaN-aware compares, several cycles per element, which the paths for
/// them break up; integer compares are short enough as they are.
#[inline(always)]
fn float_extreme<T: Element, M: Monoid<T>>() -> Option<Extreme> {
    match T::DTYPE {
        DType::F32 | DType::F64 => M::EXTREME,
        _ => None,
    }
}

/// Scans `src` (or `dst` itself when `src` is `None`) into `dst`, entering with
/// `carry` (the prefix before the chunk); returns the running value at its end. One
/// fused read-scan-write loop per run. Not inlined: the plain and the streamed paths
/// share one compiled copy per element type, operator and segmentation.
#[inline(never)]
fn scan_chunk<T: Element, M: Monoid<T>>(
    src: Option<&[T]>,
    dst: &mut [T],
    base: usize,
    carry: T,
    kind: ScanKind,
    seg: &impl Segmentation,
) -> T {
    let mut acc = carry;
    seg.runs(base, base + dst.len(), |a, b, begins| {
        if begins {
            acc = M::IDENTITY;
        }
        let out = &mut dst[a - base..b - base];
        let input = src.map(|src| &src[a - base..b - base]);
        acc = match float_extreme::<T, M>() {
            Some(Extreme::Min) => extreme_scan_run::<T, false>(input, out, acc, kind),
            Some(Extreme::Max) => extreme_scan_run::<T, true>(input, out, acc, kind),
            None => plain_scan_run::<T, M>(input, out, acc, kind),
        };
    });
    acc
}

/// Scans `input` (or `out` itself when `None`) into `out`, one element after the other.
#[inline(always)]
fn plain_scan_run<T: Element, M: Monoid<T>>(
    input: Option<&[T]>,
    out: &mut [T],
    acc: T,
    kind: ScanKind,
) -> T {
    match input {
        Some(input) => scan_run::<T, M>(out.iter_mut().zip(input.iter().copied()), acc, kind),
        None => scan_run::<T, M>(
            out.iter_mut().map(|x| {
                let value = *x;
                (x, value)
            }),
            acc,
            kind,
        ),
    }
}

/// A float minimum or maximum scan of one run (`MAX` picks the operator), compiled
/// once per float type and operator rather than into every scan variant: whole blocks
/// by `extreme_blocks` where the CPU has SSE, element by element for a block holding a
/// NaN, for the run's tail, and on other CPUs.
#[inline(never)]
fn extreme_scan_run<T: Element, const MAX: bool>(
    input: Option<&[T]>,
    out: &mut [T],
    mut acc: T,
    kind: ScanKind,
) -> T {
    let mut at = 0;
    while at < out.len() {
        #[cfg(target_arch = "x86_64")]
        {
            let inclusive = matches!(kind, ScanKind::Inclusive);
            let rest = input.map(|input| &input[at..]);
            let (done, after) =
                super::extreme_blocks::scan_blocks::<T, MAX>(rest, &mut out[at..], acc, inclusive);
            (at, acc) = (at + done, after);
        }
        // What the blocks left: a block with a NaN, or less than a block.
        #[cfg(target_arch = "x86_64")]
        let end = out
            .len()
            .min(at + super::extreme_blocks::BLOCK_BYTES / std::mem::size_of::<T>());
        #[cfg(not(target_arch = "x86_64"))]
        let end = out.len();
        let rest = input.map(|input| &input[at..end]);
        acc = nan_aware_scan_run::<T, MAX>(rest, &mut out[at..end], acc, kind);
        at = end;
    }
    acc
}

/// The element-by-element minimum or maximum scan, NaN-aware (`MinOp`'s and `MaxOp`'s
/// `combine`).
#[inline(always)]
fn nan_aware_scan_run<T: Element, const MAX: bool>(
    input: Option<&[T]>,
    out: &mut [T],
    acc: T,
    kind: ScanKind,
) -> T {
    if MAX {
        plain_scan_run::<T, MaxOp>(input, out, acc, kind)
    } else {
        plain_scan_run::<T, MinOp>(input, out, acc, kind)
    }
}

/// Elements per piece of a streamed chunk: the piece is scanned into a buffer in L1,
/// then streamed out.
const PIECE_LEN: usize = 1024;

/// Scans `src` into `dst` as [`scan_chunk`] does, but writes `dst` with streaming
/// stores, which skip the read of each output line that a plain store costs (a third
/// of a large out-of-place scan's memory traffic).
fn scan_chunk_streamed<T: Element, M: Monoid<T>>(
    src: &[T],
    dst: &mut [T],
    base: usize,
    carry: T,
    kind: ScanKind,
    seg: &impl Segmentation,
) {
    let mut piece = [T::ZERO; PIECE_LEN];
    let mut acc = carry;
    for (k, (input, out)) in src
        .chunks(PIECE_LEN)
        .zip(dst.chunks_mut(PIECE_LEN))
        .enumerate()
    {
        let piece = &mut piece[..input.len()];
        acc = scan_chunk::<T, M>(Some(input), piece, base + k * PIECE_LEN, acc, kind, seg);
        stream::copy(piece, out);
    }
}

/// Out-of-place scans whose output is at least this large stream it to memory (it
/// cannot stay in the caches anyway) when they run on at least [`STREAM_THREADS`]
/// threads. Fewer threads are bound by the scan's arithmetic, not by memory, and there
/// the extra pass through the piece buffer costs more than it saves (2-core AMD EPYC,
/// f64 sums of 2^26: 37 ms plain, 45 ms streamed; 16-core Xeon, u32 sums of 2^28 on 16
/// threads: 23 ms plain, 19 ms streamed).
const STREAM_BYTES: usize = 64 << 20;
const STREAM_THREADS: usize = 8;

/// Scans one run (no segment heads inside) from `(output slot, input value)` pairs,
/// entering with `acc`; returns the running value at its end.
#[inline(always)]
fn scan_run<'a, T: Element, M: Monoid<T>>(
    pairs: impl Iterator<Item = (&'a mut T, T)>,
    mut acc: T,
    kind: ScanKind,
) -> T {
    match kind {
        ScanKind::Inclusive => {
            for (out, value) in pairs {
                acc = M::combine(acc, value);
                *out = acc;
            }
        }
        ScanKind::Exclusive => {
            for (out, value) in pairs {
                *out = acc;
                acc = M::combine(acc, value);
            }
        }
    }
    acc
}

/// Scans `src` (or `dst` itself when `src` is `None`) into `dst` under segmentation `seg`.
/// Lengths and segment descriptions are validated by the caller.
pub(crate) fn scan<T: Element, M: Monoid<T>>(
    pool: &rayon::ThreadPool,
    src: Option<&[T]>,
    dst: &mut [T],
    kind: ScanKind,
    seg: &impl Segmentation,
) -> crate::Result<()> {
    let n = dst.len();
    let chunk = chunk_len::<T>();
    if let Some(src) = src {
        debug_assert_eq!(src.len(), n);
    }
    if n <= chunk {
        scan_chunk::<T, M>(src, dst, 0, M::IDENTITY, kind, seg);
        return Ok(());
    }
    // Even with one thread, go through the chunked carries below: float sums must be
    // associated the same way whatever the thread count.

    let num_chunks = n.div_ceil(chunk);
    let carries: Vec<Carry> = crate::alloc::collect(
        (0..num_chunks).map(|_| Carry {
            ready: AtomicBool::new(false),
            bits: AtomicU64::new(0),
        }),
        "the scan's chunk carries",
    )?;
    let streamed = src.is_some()
        && cfg!(target_arch = "x86_64")
        && std::mem::size_of_val(dst) >= STREAM_BYTES
        && pool.current_num_threads() >= STREAM_THREADS;
    let next_chunk = AtomicUsize::new(0);
    // Hand each chunk of `dst` to whichever worker claims its index. The slots are
    // taken exactly once each (claimed through `next_chunk`), so no two workers ever
    // touch the same chunk.
    let slots: Vec<std::sync::Mutex<Option<&mut [T]>>> = crate::alloc::collect(
        dst.chunks_mut(chunk)
            .map(|c| std::sync::Mutex::new(Some(c))),
        "the scan's chunk slots",
    )?;

    let worker = || loop {
        let index = next_chunk.fetch_add(1, Ordering::Relaxed);
        if index >= num_chunks {
            break;
        }
        let base = index * chunk;
        let out = slots[index]
            .lock()
            .expect("chunk slot lock is never poisoned: nothing panics while holding it")
            .take()
            .expect("each chunk is claimed once");
        let input: &[T] = match src {
            Some(src) => &src[base..base + out.len()],
            None => &*out,
        };
        let (has_head, aggregate) = reduce_chunk::<T, M>(input, base, seg);
        let before = if index == 0 {
            M::IDENTITY
        } else if has_head {
            // The successor's prefix restarts inside this chunk: publish before waiting.
            carries[index].publish(aggregate);
            carries[index - 1].wait::<T>()
        } else {
            carries[index - 1].wait::<T>()
        };
        if index == 0 || !has_head {
            carries[index].publish(M::combine(before, aggregate));
        }
        match src {
            Some(src) if streamed => {
                let input = &src[base..base + out.len()];
                scan_chunk_streamed::<T, M>(input, out, base, before, kind, seg);
            }
            _ => {
                let input = src.map(|src| &src[base..base + out.len()]);
                scan_chunk::<T, M>(input, out, base, before, kind, seg);
            }
        }
    };
    pool.broadcast(|_| {
        worker();
        if streamed {
            // Streaming stores are weakly ordered: make them visible before this
            // worker reports done.
            stream::fence();
        }
    });
    Ok(())
}

/// Streaming (non-temporal) stores where the target has them, plain copies elsewhere.
mod stream {
    #[cfg(target_arch = "x86_64")]
    pub(super) fn copy<T: Copy>(src: &[T], dst: &mut [T]) {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        debug_assert_eq!(src.len(), dst.len());
        let size = std::mem::size_of::<T>();
        // Plain stores up to dst's first 16-byte boundary (elements are 4 or 8 bytes,
        // so whole elements reach it), streaming ones for whole 16-byte blocks, plain
        // ones for the rest.
        let head = (dst.as_ptr().align_offset(16)).min(dst.len());
        let blocks = (dst.len() - head) * size / 16;
        let tail = head + blocks * 16 / size;
        dst[..head].copy_from_slice(&src[..head]);
        let from = src[head..].as_ptr().cast::<__m128i>();
        let to = dst[head..].as_mut_ptr().cast::<__m128i>();
        for b in 0..blocks {
            // SAFETY: SSE2 is part of x86_64. Block b covers bytes 16b..16b+16 after
            // `head`, all inside both slices (blocks * 16 <= (len - head) * size); `to`
            // is 16-byte aligned (align_offset); the unaligned load has no requirement.
            unsafe { _mm_stream_si128(to.add(b), _mm_loadu_si128(from.add(b))) };
        }
        dst[tail..].copy_from_slice(&src[tail..]);
    }

    #[cfg(target_arch = "x86_64")]
    pub(super) fn fence() {
        // SAFETY: SSE is part of x86_64; a store fence has no other requirement.
        unsafe { std::arch::x86_64::_mm_sfence() };
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub(super) fn copy<T: Copy>(src: &[T], dst: &mut [T]) {
        dst.copy_from_slice(src);
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub(super) fn fence() {}
}
