//! Large host-to-device copies by a team of the current pool's threads (`crate::team`):
//! every member stays with the copy from its first chunk to its last, the members
//! meeting at spinning barriers between chunks, as `benches/multi_gpu_upload.cu`'s
//! teams do. One member (the lead) waits for a transfer buffer to come free and issues
//! each chunk's device copy; each copies a contiguous share of each chunk into its
//! buffer. A fork and join of the pool per chunk (`rayon::broadcast`, waking threads
//! that went to sleep between chunks) made one GPU's uploads on a 32-core host 10%
//! slower (R-MAT 24's 3.2 GB to an H200: 71-73 against 64-65 ms); on a 16-core host
//! both ran at the bus's speed (docs/performance-log.md, thirty-first session).

use std::sync::Mutex;
use std::time::Duration;

use cudarc::driver::{result, sys};

use super::{chunk_for, CudaDevice, TransferRing, TRANSFER_BUFFERS};
use crate::{Error, Result};

/// Bytes bound for one device address.
pub(super) type Piece<'a> = (sys::CUdeviceptr, &'a [u8]);

/// `pieces` cut into fills of at most `size` bytes: each fill the next bytes of one
/// piece or of several (a short piece does not take a chunk of its own).
fn fills<'a>(pieces: &[Piece<'a>], size: usize) -> Vec<Vec<Piece<'a>>> {
    let mut fills = Vec::new();
    let (mut fill, mut room) = (Vec::new(), size);
    for &(to, data) in pieces {
        let mut done = 0;
        while done < data.len() {
            let take = (data.len() - done).min(room);
            fill.push((to + done as u64, &data[done..done + take]));
            (done, room) = (done + take, room - take);
            if room == 0 {
                fills.push(std::mem::take(&mut fill));
                room = size;
            }
        }
    }
    if !fill.is_empty() {
        fills.push(fill);
    }
    fills
}

/// What the team shares of the ring and the stream.
struct Shared<'r> {
    ring: &'r TransferRing,
    stream: sys::CUstream,
}

// SAFETY: the buffers are plain page-locked host memory owned by the ring, which the
// caller holds (mutably) for the whole copy; the members write disjoint shares of a
// buffer, only between the lead's wait for that buffer's last device copy and the
// issue of its next one. Only the lead uses the events and the stream, in driver calls
// which the driver lets any thread make.
unsafe impl Sync for Shared<'_> {}

impl Shared<'_> {
    fn buffer(&self, k: usize) -> *mut u8 {
        self.ring.buffers[k]
    }
}

impl CudaDevice {
    /// Copies `pieces` (device address, bytes) to the device through `ring`'s buffers,
    /// in chunks of [`chunk_for`] the total, by a team (see the module's
    /// documentation), each chunk's device copy issued to `stream` as soon as it is in
    /// its buffer. No wait for the copies: the buffers' events guard them, and later
    /// work on the stream follows them.
    pub(super) fn write_team(
        &self,
        ring: &mut TransferRing,
        pieces: &[Piece<'_>],
        stream: sys::CUstream,
    ) -> Result<()> {
        let total: usize = pieces.iter().map(|(_, data)| data.len()).sum();
        let fills = fills(pieces, chunk_for(total));
        let first = ring.next;
        ring.next = (first + fills.len()) % TRANSFER_BUFFERS;
        let shared = Shared { ring, stream };
        let failure: Mutex<Option<Error>> = Mutex::new(None);
        let failed = |error: Error| {
            let mut failure = failure.lock().unwrap_or_else(|e| e.into_inner());
            failure.get_or_insert(error);
        };
        // One thread copies about 10 GB/s (it sets how long the team waits for a late
        // thread).
        let alone = Duration::from_nanos(total as u64 / 10);
        crate::team::run(alone, |me| {
            let lead = me.index() == 0;
            // The lead may be any thread of the pool: it issues the device copies.
            let mut ok = !lead || self.context.bind().map_err(failed).is_ok();
            for (i, fill) in fills.iter().enumerate() {
                let k = (first + i) % TRANSFER_BUFFERS;
                if lead && ok {
                    let wait = || shared.ring.wait(k);
                    ok = crate::profile::span("cuda: wait for a transfer buffer", wait)
                        .map_err(failed)
                        .is_ok();
                }
                if !me.agree(ok) {
                    return;
                }
                match me.size() {
                    // Alone (another team runs in this pool, or it has one thread):
                    // the chunk on all of the pool's threads once they are free.
                    1 => copy_pieces(shared.buffer(k), fill),
                    size => copy_share(shared.buffer(k), fill, me.index(), size),
                }
                me.sync();
                if lead {
                    ok = self
                        .issue(shared.buffer(k), fill, shared.stream)
                        .and_then(|()| shared.ring.mark(k, shared.stream))
                        .map_err(failed)
                        .is_ok();
                }
            }
        });
        match failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Issues the device copies of `fill`, whose bytes lie one after another from
    /// `buffer`'s start.
    fn issue(&self, buffer: *mut u8, fill: &[Piece<'_>], stream: sys::CUstream) -> Result<()> {
        let mut at = 0;
        for &(to, data) in fill {
            // SAFETY: the fill's bytes were copied into the buffer (page-locked, a
            // transfer buffer's size at least) at offset `at`; the caller keeps each
            // device range inside its allocation; the buffer is not written again before
            // its event, recorded after these copies, says they are over.
            unsafe {
                let bytes = std::slice::from_raw_parts(buffer.add(at), data.len());
                result::memcpy_htod_async(to, bytes, stream)
            }
            .map_err(self.err("cuMemcpyHtoDAsync from page-locked memory"))?;
            at += data.len();
        }
        Ok(())
    }
}

/// Copies `fill` into `buffer` as [`copy_share`] does, on all of the pool's threads.
fn copy_pieces(buffer: *mut u8, fill: &[Piece<'_>]) {
    let total: usize = fill.iter().map(|(_, data)| data.len()).sum();
    let bytes: Vec<&[u8]> = fill.iter().map(|(_, data)| *data).collect();
    // SAFETY: as for `copy_share`, with one member: the fill's bytes fit the buffer.
    let target = unsafe { std::slice::from_raw_parts_mut(buffer, total) };
    super::copy_pieces(target, &bytes);
}

/// Thread `me` of `threads`' share of `fill`: a contiguous stretch of its bytes (64-byte
/// aligned where it starts), copied to the same place in `buffer`.
fn copy_share(buffer: *mut u8, fill: &[Piece<'_>], me: usize, threads: usize) {
    let total: usize = fill.iter().map(|(_, data)| data.len()).sum();
    let share = total.div_ceil(threads).next_multiple_of(64);
    let (lo, hi) = ((me * share).min(total), ((me + 1) * share).min(total));
    let mut start = 0;
    for &(_, data) in fill {
        let (from, to) = (lo.max(start), hi.min(start + data.len()));
        if from < to {
            // SAFETY: [from, to) lies inside the fill's bytes, which fit the buffer; the
            // members' stretches [lo, hi) do not overlap, and nothing else touches the
            // buffer while the team copies (see `Buffers`).
            let target = unsafe { std::slice::from_raw_parts_mut(buffer.add(from), to - from) };
            target.copy_from_slice(&data[from - start..to - start]);
        }
        start += data.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_cut_pieces_into_chunks_in_order() {
        let (a, b) = (vec![1u8; 10], vec![2u8; 7]);
        let pieces = [(100, &a[..]), (200, &b[..])];
        let fills = fills(&pieces, 4);
        let sizes: Vec<Vec<(u64, usize)>> = fills
            .iter()
            .map(|fill| fill.iter().map(|&(to, d)| (to, d.len())).collect())
            .collect();
        assert_eq!(
            sizes,
            vec![
                vec![(100, 4)],
                vec![(104, 4)],
                vec![(108, 2), (200, 2)],
                vec![(202, 4)],
                vec![(206, 1)],
            ]
        );
    }

    #[test]
    fn shares_cover_a_fill_once() {
        let (a, b) = (
            (0..=255u8).cycle().take(1000).collect::<Vec<_>>(),
            vec![7u8; 333],
        );
        let fill = [(0, &a[..]), (0, &b[..])];
        for threads in [1, 2, 3, 7, 64] {
            let mut buffer = vec![0u8; 1333];
            for me in 0..threads {
                copy_share(buffer.as_mut_ptr(), &fill, me, threads);
            }
            assert_eq!(&buffer[..1000], &a[..], "{threads} threads");
            assert_eq!(&buffer[1000..], &b[..], "{threads} threads");
        }
    }
}
