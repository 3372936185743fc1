//! Large host-to-device copies through the transfer buffers: the pieces (device
//! address, bytes) packed into chunks of a quarter of the bytes (8 MiB to a buffer),
//! each chunk copied into a free buffer on all of the pool's threads (a fork and join),
//! then sent behind the previous chunk's device copy while the host fills the other
//! buffer. One loop for a single array, for several arrays at once
//! (`Gpu::write_together`) and for copies on the second stream (`write_beside`).
//!
//! Tried and not kept (docs/performance-log.md, thirty-first session): the pool's
//! threads as one team for the whole copy, meeting at barriers between chunks. On a
//! 32-core host with spinning waiters, one H200's uploads were 10% faster; on a
//! 16-core host 2-7% slower with waiters that nap, far slower with waiters that yield.

use cudarc::driver::{result, sys};

use super::{chunk_for, copy_pieces, CudaDevice, TransferRing, TRANSFER_BUFFERS};
use crate::Result;

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
        for fill in fills(pieces, chunk_for(total)) {
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
}
