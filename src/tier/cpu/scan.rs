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

use super::segments::Segmentation;
use crate::types::{Element, Monoid, ScanKind};

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
        acc = data[a - base..b - base]
            .iter()
            .fold(acc, |running, &x| M::combine(running, x));
    });
    (has_head, acc)
}

/// Scans `src` (or `dst` itself when `src` is `None`) into `dst`, entering with
/// `carry` (the prefix before the chunk). One fused read-scan-write loop per run.
fn scan_chunk<T: Element, M: Monoid<T>>(
    src: Option<&[T]>,
    dst: &mut [T],
    base: usize,
    carry: T,
    kind: ScanKind,
    seg: &impl Segmentation,
) {
    let mut acc = carry;
    seg.runs(base, base + dst.len(), |a, b, begins| {
        if begins {
            acc = M::IDENTITY;
        }
        let out = &mut dst[a - base..b - base];
        acc = match src {
            Some(src) => scan_run::<T, M>(
                out.iter_mut().zip(src[a - base..b - base].iter().copied()),
                acc,
                kind,
            ),
            None => scan_run::<T, M>(
                out.iter_mut().map(|x| {
                    let value = *x;
                    (x, value)
                }),
                acc,
                kind,
            ),
        };
    });
}

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
        let input = src.map(|src| &src[base..base + out.len()]);
        scan_chunk::<T, M>(input, out, base, before, kind, seg);
    };
    pool.broadcast(|_| worker());
    Ok(())
}
