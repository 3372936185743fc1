//! Host edges staged ahead of their device copies (`Device::stage`, `write_staged`): a
//! thread copies a large graph's later chunks into page-locked blocks while the device
//! filters or solves earlier ones, so that a chunk's device copy, when its turn comes,
//! has no host copy in front of it and runs at the bus's speed. The blocks are made as
//! needed, up to [`staged_bytes`], and kept with the context for later calls.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use cudarc::driver::{result, sys};

use super::{copy_spread, cuda_error, transfer_chunk_bytes, Context, CudaDevice, SideStream};
use crate::tier::gpu::Filling;
use crate::{Error, Result};

/// Page-locked bytes the staged chunks take at most: 128 MiB, or
/// `GPUMST_CUDA_STAGED_BYTES` (a tuning knob; 0 stages nothing). A chunk of more than a
/// [`STAGED_CHUNKS`]th of it is not staged. Few enough for the chunks ahead to stay in
/// the host's last-level cache from the host's copy to the device's, which then runs at
/// the bus's speed: at a 4x cap (3.2 GB of edges) 108-111 ms end to end against 114-117
/// through 512 MiB with non-temporal stores (thirty-second session); on H200 hosts
/// with 300 MiB of L3 a ring of four 32 MiB blocks fed the device at 49.9-54.7 GB/s,
/// one of eight at 35.5-44.9 (thirty-third; docs/performance-log.md).
fn staged_bytes() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        std::env::var("GPUMST_CUDA_STAGED_BYTES")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(128 << 20)
    })
}

/// `bytes` cut to whole staging blocks where that chunk is staged and `bytes` is over
/// one block (a chunk a little over one block took two, which held half as many chunks
/// ahead), and cut to the largest staged chunk where it is up to twice that (a 2x cap's
/// 72 MB chunks staged as 32 MiB: 92-97 ms end to end, against 121-127 unstaged and
/// 110-118 as 64 MiB in 256 MiB of blocks); else `bytes`.
pub(super) fn whole_blocks(bytes: usize) -> usize {
    let block = transfer_chunk_bytes();
    let largest = largest_staged_blocks();
    match bytes / block {
        0 => bytes,
        blocks if blocks <= largest => blocks * block,
        blocks if blocks <= 2 * largest => largest * block,
        _ => bytes,
    }
}

/// The most staging blocks a staged chunk takes: chunks are staged only where the
/// staging memory holds [`STAGED_CHUNKS`] of them (R-MAT 24 at a 3.2 GB cap, chunks of
/// 213 MB: no gain; R-MAT 26 at 12.4 GB, 403 MB: 680 against 432 ms).
fn largest_staged_blocks() -> usize {
    staged_bytes() / transfer_chunk_bytes() / STAGED_CHUNKS
}

/// Chunks the staging memory holds at least for chunks to be staged at all.
const STAGED_CHUNKS: usize = 4;

/// How often a thread waiting for a free block looks whether it should give up.
const STOP_POLL: Duration = Duration::from_millis(5);

/// One page-locked block (a transfer buffer's size) and the event recorded after the
/// last device copy out of it (handles: a copy names the same block).
#[derive(Clone, Copy)]
struct Block {
    pointer: *mut u8,
    event: sys::CUevent,
}

/// The context's staging blocks and which of them are free.
#[derive(Default)]
pub(super) struct HostBlocks {
    blocks: Vec<Block>,
    free: Vec<usize>,
    /// Set once the driver refuses a block: no more are asked for.
    refused: bool,
}

/// [`HostBlocks`] behind their lock, and the signal that a block came free.
#[derive(Default)]
pub(super) struct StagingBlocks {
    list: Mutex<HostBlocks>,
    freed: Condvar,
}

impl StagingBlocks {
    /// Frees every block (the context bound; no copy from them is in flight once
    /// their events are waited for).
    pub(super) fn release(&mut self) {
        let Ok(list) = self.list.get_mut() else {
            return;
        };
        for block in list.blocks.drain(..) {
            // SAFETY: each block and event was made in `new_block` and is released
            // once, here, after its last copy is over.
            unsafe {
                let _ = result::event::synchronize(block.event);
                let _ = result::event::destroy(block.event);
                let _ = result::free_host(block.pointer.cast());
            }
        }
        list.free.clear();
    }

    /// Puts `blocks` back on the free list and wakes a waiting thread.
    fn give_back(&self, blocks: impl Iterator<Item = usize>) {
        if let Ok(mut list) = self.list.lock() {
            list.free.extend(blocks);
        }
        self.freed.notify_all();
    }
}

/// Bytes staged in the context's blocks, one piece after another; its blocks go back
/// to the free list when it is dropped (after `write_staged` issued their copies).
pub(crate) struct CudaStaged {
    context: Arc<Context>,
    /// The blocks in order (each's index in the list, and itself), and the bytes each
    /// holds.
    blocks: Vec<(usize, Block, usize)>,
    /// Each piece's bytes.
    pieces: Vec<usize>,
}

impl Drop for CudaStaged {
    fn drop(&mut self) {
        let blocks = std::mem::take(&mut self.blocks);
        self.context
            .staged
            .give_back(blocks.into_iter().map(|(k, _, _)| k));
    }
}

// SAFETY: the blocks' pointers are plain page-locked host memory owned by the context
// (which is Send and Sync); a staged value is the one user of its blocks until it
// gives them back.
unsafe impl Send for CudaStaged {}

/// A page-locked block and its event, or the driver's refusal.
fn new_block() -> std::result::Result<Block, cudarc::driver::DriverError> {
    // SAFETY: a plain page-locked allocation and an event, released in
    // `StagingBlocks::release` with the context (the allocation here if the event
    // cannot be made).
    unsafe {
        let pointer = result::malloc_host(transfer_chunk_bytes(), 0)?;
        match result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING) {
            Ok(event) => Ok(Block {
                pointer: pointer.cast(),
                event,
            }),
            Err(e) => {
                let _ = result::free_host(pointer);
                Err(e)
            }
        }
    }
}

impl CudaDevice {
    /// See `Device::stage`.
    pub(super) fn stage_pieces(
        &self,
        pieces: &[&[u8]],
        stop: &AtomicBool,
    ) -> Result<Option<CudaStaged>> {
        let total: usize = pieces.iter().map(|piece| piece.len()).sum();
        if total == 0 || staged_bytes() == 0 {
            return Ok(None);
        }
        let context = &self.context;
        context.bind()?;
        let size = transfer_chunk_bytes();
        let need = total.div_ceil(size);
        let most = staged_bytes() / size;
        if need > largest_staged_blocks() {
            return Ok(None);
        }
        let mut staged = CudaStaged {
            context: context.clone(),
            blocks: Vec::with_capacity(need),
            pieces: pieces.iter().map(|piece| piece.len()).collect(),
        };
        let mut left = total;
        while left > 0 {
            // None: stopped, or the driver gives too few blocks for this chunk (the
            // caller then copies it itself); `staged` gives back what it took.
            let taken = crate::profile::span("cuda: wait for a staging block", || {
                self.take_block(most, need, stop)
            })?;
            let Some((k, block)) = taken else {
                return Ok(None);
            };
            staged.blocks.push((k, block, left.min(size)));
            left -= left.min(size);
        }
        let mut targets = Vec::with_capacity(need);
        for &(_, block, len) in &staged.blocks {
            // SAFETY: the event was made with the block and lives as long as it.
            unsafe { result::event::synchronize(block.event) }
                .map_err(|e| cuda_error("cuEventSynchronize on a staging block", e))?;
            // SAFETY: the block (transfer_chunk_bytes() bytes, len at most that) was
            // taken off the free list for `staged` alone, its last device copy is over
            // (waited for just above), and blocks are freed only with the context.
            targets.push(unsafe { std::slice::from_raw_parts_mut(block.pointer, len) });
        }
        crate::profile::span("cuda: stage a chunk in page-locked memory", || {
            copy_spread(targets, pieces)
        })?;
        Ok(Some(staged))
    }

    /// A free staging block (made if fewer than `most` exist) and its index, waiting for
    /// one while none is; None once `stop` is set, or if the driver refuses a block
    /// while fewer than `need` exist.
    fn take_block(
        &self,
        most: usize,
        need: usize,
        stop: &AtomicBool,
    ) -> Result<Option<(usize, Block)>> {
        let staged = &self.context.staged;
        let poisoned = || Error::internal("the CUDA staging blocks were poisoned");
        let mut list = staged.list.lock().map_err(|_| poisoned())?;
        loop {
            if let Some(k) = list.free.pop() {
                return Ok(Some((k, list.blocks[k])));
            }
            if list.blocks.len() < most && !list.refused {
                // Made without the lock: the partitions give blocks back meanwhile.
                drop(list);
                let made = new_block();
                list = staged.list.lock().map_err(|_| poisoned())?;
                match made {
                    Ok(block) => {
                        list.blocks.push(block);
                        return Ok(Some((list.blocks.len() - 1, block)));
                    }
                    Err(_) => list.refused = true,
                }
            }
            if stop.load(Ordering::Relaxed) || (list.refused && list.blocks.len() < need) {
                return Ok(None);
            }
            list = staged
                .freed
                .wait_timeout(list, STOP_POLL)
                .map_err(|_| poisoned())?
                .0;
        }
    }

    /// See `Device::write_staged`: the staged pieces' device copies on the second
    /// stream, each block's event recorded after its copies.
    pub(super) fn write_staged_pieces(
        &self,
        staged: CudaStaged,
        into: &mut [Filling<'_, Self>],
    ) -> Result<()> {
        // Each filling was checked to fit its buffer; the staged pieces are its bytes.
        let fits = |(&bytes, filling): (&usize, &Filling<'_, Self>)| {
            bytes
                == filling
                    .pieces
                    .iter()
                    .map(|piece| piece.len())
                    .sum::<usize>()
        };
        if into.len() != staged.pieces.len() || !staged.pieces.iter().zip(into.iter()).all(fits) {
            return Err(Error::internal(
                "staged pieces written as other bytes than the ones staged",
            ));
        }
        self.with_side(|SideStream { stream, .. }| {
            let (mut piece, mut done) = (0, 0);
            for &(_, block, len) in &staged.blocks {
                let mut at = 0;
                while at < len {
                    while staged.pieces[piece] == done {
                        (piece, done) = (piece + 1, 0);
                    }
                    let take = (staged.pieces[piece] - done).min(len - at);
                    let to = into[piece].memory.pointer + done as u64;
                    // SAFETY: the block holds `len` staged bytes (it is `staged`'s until
                    // dropped below), page-locked; the device range lies inside the
                    // piece's buffer (its filling's length, checked above), whose allocation the stream
                    // follows (`prepare_beside`). The block is written again only after
                    // its event, recorded next, says this copy is over.
                    unsafe {
                        let bytes = std::slice::from_raw_parts(block.pointer.add(at), take);
                        result::memcpy_htod_async(to, bytes, *stream)
                    }
                    .map_err(self.err("cuMemcpyHtoDAsync from a staging block"))?;
                    (at, done) = (at + take, done + take);
                }
                // SAFETY: the event and stream are live handles of the bound context.
                unsafe { result::event::record(block.event, *stream) }
                    .map_err(self.err("cuEventRecord after a staged copy"))?;
            }
            Ok(())
        })
        // `staged` drops here: its blocks go back to the free list, guarded by their
        // events.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk the staging memory takes is cut to whole blocks, one up to twice the
    /// largest staged chunk to that; smaller chunks and chunks too large to be staged
    /// stay as they are (checked without a GPU).
    #[test]
    fn staged_chunks_are_cut_to_whole_blocks() {
        let block = transfer_chunk_bytes();
        let most = staged_bytes() / block;
        assert_eq!(whole_blocks(block / 2), block / 2);
        // Staged where the blocks it is cut to leave room for STAGED_CHUNKS of them.
        let over = block + block / 8;
        let staged = STAGED_CHUNKS <= most;
        assert_eq!(whole_blocks(over), if staged { block } else { over });
        // Over the largest staged chunk, up to twice it: cut to it.
        let largest = most / STAGED_CHUNKS;
        let twice = 2 * block + 12;
        let cut = match largest {
            0 => twice,
            1 => block,
            _ => 2 * block,
        };
        assert_eq!(whole_blocks(twice), cut);
        if largest > 0 {
            assert_eq!(whole_blocks(2 * largest * block + 5), largest * block);
        }
        // Larger chunks are not staged, and stay as they are.
        let large = (2 * largest + 1) * block + 7;
        assert_eq!(whole_blocks(large), large);
    }
}
