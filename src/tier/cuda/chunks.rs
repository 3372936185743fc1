//! Large host-to-device copies through the transfer buffers: the pieces (device
//! address, bytes) packed into chunks of a quarter of the bytes (8 MiB to a buffer,
//! or to a buffer's share where uploads to several devices run at once), each chunk
//! copied into a free buffer on all of the pool's threads (a fork and join),
//! then sent behind the previous chunk's device copy while the host fills the other
//! buffer. One loop for a single array, for several arrays at once
//! (`Gpu::write_together`) and for copies on the second stream (`write_beside`).
//!
//! Tried and not kept (docs/performance-log.md, thirty-first session): the pool's
//! threads as one team for the whole copy, meeting at barriers between chunks. On a
//! 32-core host with spinning waiters, one H200's uploads were 10% faster; on a
//! 16-core host 2-7% slower with waiters that nap, far slower with waiters that yield.

use std::sync::atomic::{AtomicUsize, Ordering};

use cudarc::driver::{result, sys};

use super::{chunk_for, copy_pieces, CudaDevice, TransferRing, TRANSFER_BUFFERS};
use crate::Result;

/// Bytes bound for one device address.
pub(super) type Piece<'a> = (sys::CUdeviceptr, &'a [u8]);

/// `pieces` cut into fills, each of at most the size asked for: the next bytes of one
/// piece or of several (a short piece does not take a chunk of its own).
struct Fills<'p, 'a> {
    pieces: &'p [Piece<'a>],
    /// The piece the next fill starts in, and the bytes of it already taken.
    at: (usize, usize),
}

impl<'a> Fills<'_, 'a> {
    /// The next fill, of at most `size` (> 0) bytes; None once every byte is taken.
    fn next(&mut self, size: usize) -> Option<Vec<Piece<'a>>> {
        let (mut fill, mut room) = (Vec::new(), size);
        while room > 0 {
            let Some(&(to, data)) = self.pieces.get(self.at.0) else {
                break;
            };
            let done = self.at.1;
            let take = (data.len() - done).min(room);
            if take > 0 {
                fill.push((to + done as u64, &data[done..done + take]));
            }
            room -= take;
            self.at = match done + take == data.len() {
                true => (self.at.0 + 1, 0),
                false => (self.at.0, done + take),
            };
        }
        (!fill.is_empty()).then_some(fill)
    }
}

/// Chunked uploads running at once in the process, on any device (see [`chunk_for`]).
static UPLOADS_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// One upload counted in [`UPLOADS_IN_FLIGHT`] while it lives.
struct InFlight;

impl InFlight {
    fn enter() -> InFlight {
        UPLOADS_IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
        InFlight
    }

    /// The uploads running now, this one among them.
    fn sharing(&self) -> usize {
        UPLOADS_IN_FLIGHT.load(Ordering::Relaxed)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        UPLOADS_IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
    }
}

impl CudaDevice {
    /// Copies `pieces` to the device through `ring`'s buffers (see the module's
    /// documentation), each chunk's device copies issued to `stream` as soon as the
    /// chunk is in its buffer. No wait for the last copies: the caller's memory is free
    /// already (its bytes are in the buffers, which their events guard), and later work
    /// on the stream follows them (`Gpu::upload_buffer`, whose buffer the caller may
    /// use on another stream, waits).
    pub(super) fn write_chunks(
        &self,
        ring: &mut TransferRing,
        pieces: &[Piece<'_>],
        stream: sys::CUstream,
    ) -> Result<()> {
        let total: usize = pieces.iter().map(|(_, data)| data.len()).sum();
        // Each chunk's size asks how many uploads run now: a split's devices start
        // theirs at about the same time, and one may end before the others.
        let uploading = InFlight::enter();
        let mut fills = Fills { pieces, at: (0, 0) };
        while let Some(fill) = fills.next(chunk_for(total, uploading.sharing())) {
            let k = ring.next;
            ring.next = (k + 1) % TRANSFER_BUFFERS;
            crate::profile::span("cuda: wait for a transfer buffer", || ring.wait(k))?;
            let bytes: Vec<&[u8]> = fill.iter().map(|(_, data)| *data).collect();
            let len = bytes.iter().map(|data| data.len()).sum();
            // SAFETY: the buffer's last device copy is over (waited for just above), and
            // a fill takes at most a buffer's size.
            let buffer = unsafe { ring.buffer(k, len) };
            crate::profile::span("cuda: copy into a transfer buffer", || {
                copy_pieces(buffer, &bytes)
            })?;
            let mut at = 0;
            for (to, data) in fill {
                // SAFETY: the caller keeps each device range inside its allocation; the
                // buffer is page-locked and is not written again before its event
                // (recorded next) says these copies are over.
                unsafe { result::memcpy_htod_async(to, &buffer[at..at + data.len()], stream) }
                    .map_err(self.err("cuMemcpyHtoDAsync from page-locked memory"))?;
                at += data.len();
            }
            ring.mark(k, stream)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::transfer_chunk_bytes;
    use super::*;

    #[test]
    fn fills_cut_pieces_into_chunks_in_order() {
        let (a, b) = (vec![1u8; 10], vec![2u8; 7]);
        let pieces = [(100, &a[..]), (200, &b[..])];
        let mut fills = Fills {
            pieces: &pieces,
            at: (0, 0),
        };
        // Sizes as asked fill by fill (an upload's chunks shrink as others start).
        let sizes: Vec<Vec<(u64, usize)>> = [4, 4, 4, 3, 6, 6]
            .into_iter()
            .map_while(|size| fills.next(size))
            .map(|fill| fill.iter().map(|&(to, d)| (to, d.len())).collect())
            .collect();
        assert_eq!(
            sizes,
            vec![
                vec![(100, 4)],
                vec![(104, 4)],
                vec![(108, 2), (200, 2)],
                vec![(202, 3)],
                vec![(205, 2)],
            ]
        );
        assert!(fills.next(6).is_none());
    }

    #[test]
    fn chunks_shrink_as_uploads_share_the_host() {
        let buffer = transfer_chunk_bytes();
        let large = 64 * buffer;
        assert_eq!(chunk_for(large, 1), buffer);
        // Two at once: half a buffer each (but never below 8 MiB, nor above a buffer).
        assert_eq!(chunk_for(large, 2), (buffer / 2).max(buffer.min(8 << 20)));
        assert_eq!(chunk_for(large, 64), buffer.min(8 << 20));
        // A small copy still goes in four chunks where they are at least 8 MiB.
        assert_eq!(chunk_for(64 << 20, 1), (16 << 20).min(buffer));
        assert_eq!(chunk_for(0, 3), buffer.min(8 << 20));
    }
}
