//! The CUDA tier: the shared GPU drivers (`tier::gpu`) on an NVIDIA GPU, through the CUDA
//! driver API (cudarc, loaded at run time only after the probe found libcuda).
//!
//! The kernels are the OpenCL sources built as CUDA C++ (`kernels/cuda/*.cu`), compiled
//! ahead of time to PTX by `tools/build_cuda_kernels.py` and embedded here, so a machine
//! needs only the NVIDIA driver: no nvcc or NVRTC at run time.

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys, DriverError};

use super::gpu::{self, define, tuning, Arg, Gpu, Plain, ProgramKind, Settings};
use crate::types::DType;
use crate::{Error, Result, Status};

mod chunks;
mod staged;
pub(crate) use staged::CudaStaged;

/// The PTX of every module, built by tools/build_cuda_kernels.py (see that file) and
/// stored xz-compressed: 8.4 MB of text in 0.3 MB of the library, expanded on the CUDA
/// tier's first use.
const BUNDLE_XZ: &[u8] = include_bytes!("../../../kernels/cuda/gpumst.ptx.xz");

/// The oldest driver that loads the bundle (NVRTC 12.4 writes PTX ISA 8.4: R550).
pub(crate) const MIN_DRIVER_VERSION: i32 = 12040;
/// The oldest GPUs the bundle targets (compute_70: Volta).
pub(crate) const MIN_COMPUTE_CAPABILITY: (i32, i32) = (7, 0);

/// `GPUMST_CUDA_MEMORY_LIMIT=BYTES` caps the device memory gpumst assumes.
pub(crate) const MEMORY_LIMIT_ENV: &str = "GPUMST_CUDA_MEMORY_LIMIT";
/// `GPUMST_CUDA_POOL_KEEP_BYTES=BYTES`: how much freed device memory the context keeps.
pub(crate) const POOL_KEEP_ENV: &str = "GPUMST_CUDA_POOL_KEEP_BYTES";
/// `GPUMST_CUDA_SCAN=single-pass|reduce-then-scan` picks the scan (both tested).
pub(crate) const SCAN_ENV: &str = "GPUMST_CUDA_SCAN";

/// The CUDA tier.
pub(crate) type CudaTier = Gpu<CudaDevice>;

/// One module of the bundle: its PTX and the options it was built with.
struct BundledModule {
    ptx: &'static str,
    options: &'static str,
}

/// `GPUMST_CUDA_KERNELS=FILE`: a bundle (as tools/build_cuda_kernels.py writes) whose
/// modules replace the shipped ones of the same names, for trying kernel variants on a
/// device without rebuilding the library.
pub(crate) const KERNELS_ENV: &str = "GPUMST_CUDA_KERNELS";

/// Splits a bundle's text into its modules, by name.
fn split_bundle(text: &'static str, modules: &mut HashMap<&'static str, BundledModule>) {
    let mut rest = text;
    while let Some(start) = rest.find("//@module ") {
        let after = &rest[start + "//@module ".len()..];
        let line_end = after.find('\n').unwrap_or(after.len());
        let (name, options) = after[..line_end]
            .split_once(' ')
            .unwrap_or((&after[..line_end], ""));
        let body = &after[line_end..];
        let end = body.find("//@module ").unwrap_or(body.len());
        modules.insert(
            name,
            BundledModule {
                ptx: &body[..end],
                options,
            },
        );
        rest = &body[end..];
    }
}

/// The bundle's modules by name (split once), with those of `GPUMST_CUDA_KERNELS` in
/// place of the shipped ones.
fn bundled_modules() -> Result<&'static HashMap<&'static str, BundledModule>> {
    type Modules = std::result::Result<HashMap<&'static str, BundledModule>, String>;
    static MODULES: std::sync::OnceLock<Modules> = std::sync::OnceLock::new();
    MODULES
        .get_or_init(|| {
            let mut modules = HashMap::new();
            split_bundle(shipped_bundle()?, &mut modules);
            if let Some(path) = std::env::var_os(KERNELS_ENV) {
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    format!("{KERNELS_ENV}={}: cannot read it: {e}", path.to_string_lossy())
                })?;
                if !text.contains("//@module ") {
                    return Err(format!(
                        "{KERNELS_ENV}={}: no modules in it (not a bundle from tools/build_cuda_kernels.py)",
                        path.to_string_lossy()
                    ));
                }
                // Read once per process and kept for its lifetime, like the shipped bundle.
                split_bundle(Box::leak(text.into_boxed_str()), &mut modules);
            }
            Ok(modules)
        })
        .as_ref()
        .map_err(|why| Error::invalid_argument(why.clone()))
}

/// The shipped bundle's text, expanded (once per process, kept for its lifetime).
fn shipped_bundle() -> std::result::Result<&'static str, String> {
    use std::io::Read;
    let mut text = String::new();
    xz2::read::XzDecoder::new(BUNDLE_XZ)
        .read_to_string(&mut text)
        .map_err(|e| format!("the library's PTX bundle does not expand: {e}"))?;
    Ok(Box::leak(text.into_boxed_str()))
}

fn primitives_module(dtype: DType, op: crate::ScanOp, segmented: bool) -> String {
    format!(
        "primitives_d{}_o{}_s{}",
        dtype as u32, op as u32, segmented as u8
    )
}

/// A retained primary context (or the caller's own context) with this gpumst context's
/// stream and memory pool, kept until the last user (device, buffer or module) lets go
/// of it.
struct Context {
    context: sys::CUcontext,
    device: sys::CUdevice,
    /// Whether `context` is the device's primary context, retained here (and released
    /// on drop); false for a context the caller made and keeps.
    primary: bool,
    stream: sys::CUstream,
    /// gpumst's own stream-ordered pool: allocations and frees cost no device-wide
    /// synchronization (cuMemFree's), and other users of the primary context keep
    /// their default pool's settings.
    pool: sys::CUmemoryPool,
    /// Page-locked host slots for small reads (null if the driver gave none).
    staging: *mut u8,
    /// The staging page's address for kernels, which may write a slot directly (0 if
    /// the driver did not map it).
    staging_device: sys::CUdeviceptr,
    /// The staging slots not in use.
    free_slots: Mutex<Vec<usize>>,
    /// Page-locked buffers for large copies, made on the first one (`None` until then,
    /// or if the driver gave none).
    transfer: Mutex<Option<TransferRing>>,
    /// A second stream, with transfer buffers of its own, for copies beside the
    /// stream's work (`write_beside`), made on first use.
    side: Mutex<Option<SideStream>>,
    /// Page-locked blocks that later chunks of a large upload are copied into ahead
    /// of their device copies (`Device::stage`), made as needed.
    staged: staged::StagingBlocks,
    /// The devices whose memory this one was let read directly (`reach`).
    reached: Mutex<Vec<sys::CUdevice>>,
}

/// A stream for copies that run beside the context's stream, and its transfer buffers
/// (`None` if the driver gave none: its copies take the pageable path).
struct SideStream {
    stream: sys::CUstream,
    ring: Option<TransferRing>,
}

impl SideStream {
    /// Makes the stream and buffers (the context is bound).
    fn new() -> Result<SideStream> {
        Ok(SideStream {
            stream: result::stream::create(result::stream::StreamKind::NonBlocking)
                .map_err(|e| cuda_error("cuStreamCreate (a second stream)", e))?,
            ring: TransferRing::new(),
        })
    }
}

impl Drop for SideStream {
    fn drop(&mut self) {
        // SAFETY: dropped with the Context, bound, or never used; the stream's copies
        // are waited for first, and the stream is destroyed once.
        unsafe {
            let _ = result::stream::synchronize(self.stream);
            drop(self.ring.take());
            let _ = result::stream::destroy(self.stream);
        }
    }
}

// SAFETY: CUDA driver API handles may be used from any thread; every use first makes
// the context current on the calling thread (`bind`), and the driver orders the work
// issued to one stream whichever thread issues it. The page-locked buffers are plain
// host memory, used by one copy at a time (the slots' free list and the transfer
// ring's mutex).
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

/// The share of device memory the pool keeps after frees for reuse by later calls
/// (the rest goes back to the driver): growing a pool maps new pages on the call's
/// time, so a pool that kept only a little would remap most of a large graph's buffers
/// on every call. Everything goes back when the context is
/// destroyed. `GPUMST_CUDA_POOL_KEEP_BYTES` overrides it.
const POOL_KEEPS_SHARE: u64 = 4;

/// Small reads (a worklist length, an argmin's value and index) go through page-locked
/// host memory: a copy into pageable memory is staged by the driver and blocks the
/// host, while one into page-locked memory is a plain DMA that can run behind other
/// work. One page of 16-byte slots, mapped for the device where the driver allows, so
/// that a kernel can write a result into a slot with no copy after it (argmin).
const STAGING_SLOT_BYTES: usize = 16;
const STAGING_SLOTS: usize = 256;

/// Large copies go through page-locked buffers: a copy from or into pageable memory is
/// staged by the driver at a fraction of the bus's speed (6.4 against 54.6 GB/s
/// measured on an H200). The host copies each chunk between the caller's memory and
/// one buffer on all cores while the device copies the other buffer's chunk.
const TRANSFER_BUFFERS: usize = 2;

/// Bytes per transfer buffer (the largest chunk): 32 MiB, or
/// `GPUMST_CUDA_TRANSFER_CHUNK_BYTES` (1 MiB to 256 MiB; a tuning knob). Each chunk's
/// copy on all cores is a fork and join of the host's threads, which costs about as
/// much as copying 8 MiB: 8 MiB chunks moved 403 MB at 23-25 GB/s, 32 MiB ones at
/// 40-46 GB/s (H200, docs/performance-log.md).
fn transfer_chunk_bytes() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        std::env::var("GPUMST_CUDA_TRANSFER_CHUNK_BYTES")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .map_or(32 << 20, |b| b.clamp(1 << 20, 256 << 20))
    })
}

/// The chunk for a copy of `total` bytes while `sharing` chunked copies (this one
/// among them) run at once in the process: a quarter of it (so that the host's and the
/// device's copies overlap), at least 8 MiB, and at most a buffer shared out among the
/// copies (down to 8 MiB). The transfer buffers of copies that run together then take
/// as much of the host's cache as one copy's: two H200s' uploads of R-MAT 24 at once
/// took 38-51 ms with 16 MiB chunks, 52-57 with 32 MiB (and with 8 host threads each
/// as with 16: it is the buffers' bytes, not a thread's share), while one GPU's upload
/// is as fast or faster with 32 (docs/performance-log.md, thirty-seventh session).
fn chunk_for(total: usize, sharing: usize) -> usize {
    let buffer = transfer_chunk_bytes();
    let least = buffer.min(8 << 20);
    let most = ((buffer / sharing.max(1)) & !0xFFFF).max(least);
    ((total / 4) & !0xFFFF).clamp(least, most)
}

/// Each filling's pieces at their device addresses, in order.
fn placed_pieces<'a>(fillings: &'a [gpu::Filling<'_, CudaDevice>]) -> Vec<chunks::Piece<'a>> {
    fillings
        .iter()
        .flat_map(|filling| {
            gpu::placed(&filling.pieces)
                .map(|(offset, data)| (filling.memory.pointer + offset as u64, data))
        })
        .collect()
}

/// Copies below this size take the driver's pageable path.
const TRANSFER_MIN_BYTES: usize = 1 << 20;

/// The page-locked buffers of large copies, each with the event recorded after the
/// last device copy that used it.
struct TransferRing {
    buffers: [*mut u8; TRANSFER_BUFFERS],
    events: [sys::CUevent; TRANSFER_BUFFERS],
    /// The buffer a chunked copy takes next: copies that follow one another (the
    /// pieces of one `write_beside`) go on alternating, so each one's host copy
    /// overlaps the last one's device copy.
    next: usize,
}

impl TransferRing {
    /// Allocates the buffers and events (the context is bound); `None` if the driver
    /// refuses, and then nothing is kept.
    fn new() -> Option<TransferRing> {
        let mut ring = TransferRing {
            buffers: [std::ptr::null_mut(); TRANSFER_BUFFERS],
            events: [std::ptr::null_mut(); TRANSFER_BUFFERS],
            next: 0,
        };
        for k in 0..TRANSFER_BUFFERS {
            // SAFETY: a plain page-locked allocation, freed in Drop (a null entry is
            // skipped there).
            ring.buffers[k] = unsafe { result::malloc_host(transfer_chunk_bytes(), 0) }
                .ok()?
                .cast();
            ring.events[k] =
                result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).ok()?;
        }
        Some(ring)
    }

    /// Buffer `k` as a slice of `len` bytes.
    ///
    /// # Safety
    /// No device copy into or out of the buffer is in flight (its event was waited
    /// for), and `len <= transfer_chunk_bytes()`.
    unsafe fn buffer(&mut self, k: usize, len: usize) -> &mut [u8] {
        // SAFETY: the buffer holds transfer_chunk_bytes() bytes, owned by the ring, and
        // the caller guarantees the device does not touch it now.
        unsafe { std::slice::from_raw_parts_mut(self.buffers[k], len) }
    }

    /// Waits until the last device copy that used buffer `k` is over.
    fn wait(&self, k: usize) -> Result<()> {
        // SAFETY: the event was created in `new` and lives as long as the ring; an
        // event never recorded counts as complete.
        unsafe { result::event::synchronize(self.events[k]) }
            .map_err(|e| cuda_error("cuEventSynchronize on a transfer buffer", e))
    }

    /// Records buffer `k`'s event after the copies issued so far to `stream`.
    fn mark(&self, k: usize, stream: sys::CUstream) -> Result<()> {
        // SAFETY: the event and stream are live handles of the bound context.
        unsafe { result::event::record(self.events[k], stream) }
            .map_err(|e| cuda_error("cuEventRecord after a transfer", e))
    }
}

impl Drop for TransferRing {
    fn drop(&mut self) {
        // SAFETY: dropped with the Context (bound, stream synchronized: no copy uses the
        // buffers) or on a failed `new`; each handle is released once.
        unsafe {
            for k in 0..TRANSFER_BUFFERS {
                if !self.events[k].is_null() {
                    let _ = result::event::synchronize(self.events[k]);
                    let _ = result::event::destroy(self.events[k]);
                }
                if !self.buffers[k].is_null() {
                    let _ = result::free_host(self.buffers[k].cast());
                }
            }
        }
    }
}

/// Copies `pieces` one after another into `to` (as long as they are together): on the
/// calling thread when small (a fork and join of the pool costs more), else on every
/// thread of the current pool at once, a contiguous share each.
fn copy_pieces(to: &mut [u8], pieces: &[&[u8]]) -> Result<()> {
    copy_spread(vec![to], pieces)
}

/// A stretch of a copy: its target and its source, of one length.
type Cut<'a> = (&'a mut [u8], &'a [u8]);

/// Shares of a large host copy per thread of the pool (see [`copy_spread`]).
const SHARES_PER_THREAD: usize = 4;

/// Copies `pieces` one after another into the buffers `to`, filled in order (as long
/// as the pieces together), as [`copy_pieces`] does into one buffer, with plain
/// stores: targets the device reads soon after (the transfer buffers, the staging
/// blocks) are then still in the host's last-level cache when it does. Non-temporal
/// stores, which skip the cache, made a 4x-capped call 8-10% slower on an H200's
/// host (docs/performance-log.md, thirty-second session).
///
/// The thread's current context is current again when it returns: a pool thread
/// waiting for the others runs other jobs of its pool meanwhile (rayon steals), and
/// one of them may make another context current on it (a driver call of the caller's
/// after the copy would then name a stream of a context not current: invalid).
fn copy_spread(to: Vec<&mut [u8]>, pieces: &[&[u8]]) -> Result<()> {
    let context = result::ctx::get_current().map_err(|e| cuda_error("cuCtxGetCurrent", e))?;
    spread(to, pieces);
    match context {
        // SAFETY: the context was current on this thread before the copy, and its
        // owner (the caller, which holds it) keeps it alive across the copy.
        Some(context) => unsafe { result::ctx::set_current(context) }
            .map_err(|e| cuda_error("cuCtxSetCurrent after a host copy", e)),
        None => Ok(()),
    }
}

/// [`copy_spread`]'s copy.
fn spread(to: Vec<&mut [u8]>, pieces: &[&[u8]]) {
    const SMALL: usize = 256 << 10;
    let total: usize = to.iter().map(|buffer| buffer.len()).sum();
    // As a team: the current pool's threads take contiguous shares of the bytes, four
    // a thread, in order as each is free. Slices of 64-256 KB taken by rayon's
    // threads as they came moved 33 GB/s a device into the transfer buffers of two
    // H200s at once, one share a thread ~40 (R-MAT 24 on both: uploads 48-49 against
    // 40-44 ms); but with one share a thread a thread held up elsewhere (likely by the
    // caller's other thread spinning on the device on a core of the pool's) delayed the
    // whole copy: four a thread took R-MAT 24's upload on one H200 from 76-77 to 64-65
    // ms (docs/performance-log.md, thirty-third session).
    let count = match total <= SMALL {
        true => 1,
        false => rayon::current_num_threads().max(1) * SHARES_PER_THREAD,
    };
    let share = total.div_ceil(count).next_multiple_of(64);
    // The targets and the pieces cut where they meet and at the shares' boundaries,
    // each cut filed under its share.
    let mut shares: Vec<Vec<Cut<'_>>> = (0..count).map(|_| Vec::new()).collect();
    let (mut at, mut targets) = (0, to.into_iter());
    let mut target: &mut [u8] = &mut [];
    for piece in pieces {
        let mut piece: &[u8] = piece;
        while !piece.is_empty() {
            if target.is_empty() {
                match targets.next() {
                    Some(next) => target = next,
                    None => break,
                }
            }
            let take = piece.len().min(target.len()).min(share - at % share);
            let (head, tail) = std::mem::take(&mut target).split_at_mut(take);
            shares[(at / share).min(count - 1)].push((head, &piece[..take]));
            (target, piece, at) = (tail, &piece[take..], at + take);
        }
    }
    let copy = |cuts: Vec<Cut<'_>>| {
        for (t, f) in cuts {
            t.copy_from_slice(f);
        }
    };
    if count == 1 {
        return shares.into_iter().for_each(copy);
    }
    let shares: Vec<Mutex<Vec<Cut<'_>>>> = shares.into_iter().map(Mutex::new).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    rayon::broadcast(|_| loop {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(share) = shares.get(i) else { break };
        let mut mine = share.lock().unwrap_or_else(|e| e.into_inner());
        copy(std::mem::take(&mut *mine));
    });
}

impl Context {
    /// Retains the primary context of `device` (or takes the caller's `adopted`
    /// context of that device) and creates the stream and pool.
    fn open(
        device: sys::CUdevice,
        pool_keeps_bytes: u64,
        adopted: Option<sys::CUcontext>,
    ) -> Result<Context> {
        let (context, primary) = match adopted {
            Some(context) => (context, false),
            // SAFETY: a valid device; released in Drop (or below on failure).
            None => (
                unsafe { result::primary_ctx::retain(device) }
                    .map_err(|e| cuda_error("cuDevicePrimaryCtxRetain", e))?,
                true,
            ),
        };
        let mut context = Context {
            context,
            device,
            primary,
            stream: std::ptr::null_mut(),
            pool: std::ptr::null_mut(),
            staging: std::ptr::null_mut(),
            staging_device: 0,
            free_slots: Mutex::new(Vec::new()),
            transfer: Mutex::new(None),
            side: Mutex::new(None),
            staged: staged::StagingBlocks::default(),
            reached: Mutex::new(Vec::new()),
        };
        context.bind()?;
        context.stream = result::stream::create(result::stream::StreamKind::NonBlocking)
            .map_err(|e| cuda_error("cuStreamCreate", e))?;
        // SAFETY: zeroed CUmemPoolProps is the documented default, then set to pinned
        // device memory on `device`; the attribute value is a u64 as cuda.h specifies.
        context.pool = unsafe {
            let mut props: sys::CUmemPoolProps = std::mem::zeroed();
            props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
            props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
            props.location.id = device;
            let pool =
                result::mem_pool::create(&props).map_err(|e| cuda_error("cuMemPoolCreate", e))?;
            let mut keep = pool_keeps_bytes;
            result::mem_pool::set_attribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep as *mut u64).cast(),
            )
            .map_err(|e| cuda_error("cuMemPoolSetAttribute", e))?;
            pool
        };
        // SAFETY: a page-locked allocation, mapped into the device's address space where
        // the driver can (else plain), freed in Drop; without it small reads take the
        // pageable path. The device address is the driver's for that page.
        unsafe {
            let bytes = STAGING_SLOTS * STAGING_SLOT_BYTES;
            let mapped = result::malloc_host(bytes, sys::CU_MEMHOSTALLOC_DEVICEMAP);
            if let Ok(page) = mapped.or_else(|_| result::malloc_host(bytes, 0)) {
                context.staging = page.cast();
                context.free_slots = Mutex::new((0..STAGING_SLOTS).rev().collect());
                let mut device_address = 0;
                if sys::cuMemHostGetDevicePointer_v2(&mut device_address, page, 0)
                    == sys::CUresult::CUDA_SUCCESS
                {
                    context.staging_device = device_address;
                }
            }
        }
        Ok(context)
    }

    /// A free staging slot, if any (each is returned when its guard drops).
    fn take_slot(self: &Arc<Self>) -> Option<StagingSlot> {
        if self.staging.is_null() {
            return None;
        }
        let index = self.free_slots.lock().ok()?.pop()?;
        Some(StagingSlot {
            context: self.clone(),
            index,
        })
    }

    /// Makes the context current on this thread (cheap; needed before any driver call,
    /// since gpumst functions may be called from any thread).
    fn bind(&self) -> Result<()> {
        // SAFETY: the context is retained for as long as self lives.
        unsafe { result::ctx::set_current(self.context) }
            .map_err(|e| cuda_error("cuCtxSetCurrent", e))
    }

    /// Lets this context's device read `peer`'s memory directly (NVLink, or PCIe peer
    /// to peer) where the two devices can: peer access to its context and to its pool's
    /// allocations (a pool's memory is its own device's alone until granted). Once per
    /// device; where they cannot, the driver stages copies between them through the host.
    fn reach(&self, peer: &Context) -> Result<()> {
        let mut reached = self.reached.lock().unwrap_or_else(|e| e.into_inner());
        if self.device == peer.device || reached.contains(&peer.device) {
            return Ok(());
        }
        reached.push(peer.device);
        let mut can = 0;
        // SAFETY: two valid device ordinals and an int to write.
        unsafe { sys::cuDeviceCanAccessPeer(&mut can, self.device, peer.device) }
            .result()
            .map_err(|e| cuda_error("cuDeviceCanAccessPeer", e))?;
        if can == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: `peer`'s context is retained while `peer` lives; access enabled before
        // (by another context of this device) is refused without harm.
        let enabled = unsafe { sys::cuCtxEnablePeerAccess(peer.context, 0) };
        if enabled != sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
            enabled
                .result()
                .map_err(|e| cuda_error("cuCtxEnablePeerAccess", e))?;
        }
        let access = sys::CUmemAccessDesc {
            location: sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: self.device,
            },
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: `peer.pool` is a live pool (created in `open`), the descriptor one entry.
        unsafe { sys::cuMemPoolSetAccess(peer.pool, &access, 1) }
            .result()
            .map_err(|e| cuda_error("cuMemPoolSetAccess", e))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: the stream and pool were created in `open` (null if that failed
        // first) and nothing uses them after this: every buffer and module holds this
        // Context, so they are gone. The primary context was retained once.
        unsafe {
            if self.bind().is_ok() {
                if !self.stream.is_null() {
                    let _ = result::stream::synchronize(self.stream);
                }
                // The transfer buffers and the second stream go while the context is
                // bound.
                if let Ok(ring) = self.transfer.get_mut() {
                    drop(ring.take());
                }
                if let Ok(side) = self.side.get_mut() {
                    drop(side.take());
                }
                self.staged.release();
                if !self.stream.is_null() {
                    let _ = result::stream::destroy(self.stream);
                }
                if !self.pool.is_null() {
                    let _ = result::mem_pool::destroy(self.pool);
                }
                if !self.staging.is_null() {
                    // Every slot guard holds this Context, so no copy targets it now.
                    let _ = result::free_host(self.staging.cast());
                }
            }
            if self.primary {
                let _ = result::primary_ctx::release(self.device);
            }
        }
    }
}

/// One 16-byte slot of the context's page-locked staging memory, returned to the free
/// list on drop. Whoever copies into it, or has a kernel write it (`host_words`), makes
/// sure that is over before then.
pub(crate) struct StagingSlot {
    context: Arc<Context>,
    index: usize,
}

impl StagingSlot {
    fn pointer(&self) -> *mut u8 {
        // SAFETY: index < STAGING_SLOTS, so the slot lies inside the staging page.
        unsafe { self.context.staging.add(self.index * STAGING_SLOT_BYTES) }
    }

    /// The slot's address for kernels (only where the page is mapped).
    fn device_address(&self) -> sys::CUdeviceptr {
        self.context.staging_device + (self.index * STAGING_SLOT_BYTES) as u64
    }

    /// Copies `bytes` (at most a slot) from `device` into the slot, in stream order.
    fn copy_from(&self, device: sys::CUdeviceptr, bytes: usize) -> Result<()> {
        debug_assert!(bytes <= STAGING_SLOT_BYTES);
        // SAFETY: the slot is page-locked host memory of STAGING_SLOT_BYTES, owned by
        // this guard until it drops, and callers wait for the copy before then; the
        // caller keeps the device range inside its allocation.
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(self.pointer().cast(), device, bytes, self.context.stream)
        }
        .result()
        .map_err(|e| cuda_error("cuMemcpyDtoHAsync into page-locked memory", e))
    }
}

impl Drop for StagingSlot {
    fn drop(&mut self) {
        if let Ok(mut free) = self.context.free_slots.lock() {
            free.push(self.index);
        }
    }
}

/// A `read_later` in flight: the slot it lands in and the event recorded after it.
pub(crate) struct CudaPending {
    in_flight: Option<InFlight>,
    value: u32,
}

struct InFlight {
    /// Dropped after `event` is waited for (Drop below runs before the fields drop).
    slot: StagingSlot,
    event: sys::CUevent,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.slot.context.bind().is_ok() {
            // SAFETY: created in read_later and destroyed once, here; waiting first
            // means the copy into the slot is over before the slot is handed out again.
            unsafe {
                let _ = result::event::synchronize(self.event);
                let _ = result::event::destroy(self.event);
            }
        }
    }
}

/// An opened CUDA device (its context, stream and pool live in `Context`).
pub(crate) struct CudaDevice {
    context: Arc<Context>,
    name: String,
    /// Whether the device takes cooperative launches (`launch_together`).
    cooperative: bool,
}

/// Device memory from the context's pool, freed in stream order when dropped.
pub(crate) struct CudaMemory {
    pointer: sys::CUdeviceptr,
    context: Arc<Context>,
    /// False for the caller's memory (`wrap`), which the caller frees.
    owned: bool,
}

impl Drop for CudaMemory {
    fn drop(&mut self) {
        if self.owned && self.context.bind().is_ok() {
            // SAFETY: allocated from the pool on this stream; freed once, after the
            // work already issued to the stream (which may still read it).
            unsafe {
                let _ = result::free_async(self.pointer, self.context.stream);
            }
        }
    }
}

/// A loaded module and the kernels looked up in it.
pub(crate) struct CudaModule {
    module: sys::CUmodule,
    functions: Mutex<HashMap<String, sys::CUfunction>>,
    /// Blocks per multiprocessor by kernel and block size (`groups_per_unit_together` asks on
    /// every MSF call; the driver's answer does not change).
    occupancy: Mutex<HashMap<String, HashMap<usize, usize>>>,
    context: Arc<Context>,
    /// The options it was built with (from the bundle).
    options: &'static str,
}

// SAFETY: module and function handles are plain driver handles, valid on any thread
// with the context current; the function cache is behind a mutex.
unsafe impl Send for CudaModule {}
unsafe impl Sync for CudaModule {}

impl Drop for CudaModule {
    fn drop(&mut self) {
        if self.context.bind().is_ok() {
            // SAFETY: loaded once in `build`; the program cache drops modules only with
            // the device, after its last launch has been waited for.
            unsafe {
                let _ = result::stream::synchronize(self.context.stream);
                let _ = result::module::unload(self.module);
            }
        }
    }
}

fn cuda_error(what: &str, e: DriverError) -> Error {
    let status = if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Status::OutOfMemory
    } else {
        Status::DeviceError
    };
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned());
    let text = e.error_string().map(|s| s.to_string_lossy().into_owned());
    let error = Error::new(
        status,
        format!(
            "CUDA {what} failed: {} ({})",
            name.unwrap_or_else(|_| format!("{:?}", e.0)),
            text.unwrap_or_default()
        ),
    );
    // Sticky errors: the CUDA context is corrupt and every later call fails with them.
    use sys::CUresult::*;
    match e.0 {
        CUDA_ERROR_LAUNCH_FAILED
        | CUDA_ERROR_ILLEGAL_ADDRESS
        | CUDA_ERROR_MISALIGNED_ADDRESS
        | CUDA_ERROR_HARDWARE_STACK_ERROR
        | CUDA_ERROR_ILLEGAL_INSTRUCTION
        | CUDA_ERROR_INVALID_ADDRESS_SPACE
        | CUDA_ERROR_INVALID_PC
        | CUDA_ERROR_ASSERT
        | CUDA_ERROR_ECC_UNCORRECTABLE => error.with_context_lost(),
        _ => error,
    }
}

/// Opens CUDA device `index` in its primary context, or, when `adopted` is a
/// CUcontext's value (not 0), the caller's context and its device. The caller has
/// checked that the probe found the driver and the device (cudarc panics when libcuda
/// is missing).
pub(crate) fn open(index: u32, adopted: usize) -> Result<CudaTier> {
    // SAFETY: only reports whether cudarc can load the driver library.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::backend_unavailable(
            "the CUDA tier is unavailable: cudarc cannot load libcuda by its usual names",
        ));
    }
    let fail = |what: &'static str| move |e: DriverError| cuda_error(what, e);
    result::init().map_err(fail("cuInit"))?;
    let mut driver = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut driver) }
        .result()
        .map_err(fail("cuDriverGetVersion"))?;
    let adopted = (adopted != 0).then_some(adopted as sys::CUcontext);
    let device = match adopted {
        None => result::device::get(index as i32).map_err(fail("cuDeviceGet"))?,
        Some(context) => {
            // SAFETY: the caller's live context (its promise); made current only to ask
            // for its device, as every later call does before using it.
            unsafe { result::ctx::set_current(context) }
                .map_err(fail("cuCtxSetCurrent on options.cuda_context"))?;
            let mut device = 0;
            // SAFETY: writes one device handle for the current context.
            unsafe { sys::cuCtxGetDevice(&mut device) }
                .result()
                .map_err(fail("cuCtxGetDevice on options.cuda_context"))?;
            device
        }
    };
    let attribute = |a| {
        // SAFETY: a valid device and attribute.
        unsafe { result::device::get_attribute(device, a) }.map_err(fail("cuDeviceGetAttribute"))
    };
    use sys::CUdevice_attribute::*;
    let compute = (
        attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
    );
    let units = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?.max(1) as usize;
    let cooperative = attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? != 0;
    let device_name = result::device::get_name(device).map_err(fail("cuDeviceGetName"))?;
    // SAFETY: a valid device.
    let total = unsafe { result::device::total_mem(device) }.map_err(fail("cuDeviceTotalMem"))?;
    if let Some(why) = unusable(driver, compute) {
        return Err(Error::backend_unavailable(format!(
            "the CUDA tier cannot use {device_name}: {why}"
        )));
    }
    let pool_keeps_bytes =
        gpu::bytes_setting(POOL_KEEP_ENV)?.unwrap_or(total as u64 / POOL_KEEPS_SHARE);
    let context = Arc::new(Context::open(device, pool_keeps_bytes, adopted)?);
    let name = format!(
        "{device_name} (CUDA, compute {}.{}, driver {}.{})",
        compute.0,
        compute.1,
        driver / 1000,
        driver % 1000 / 10
    );
    let limit = gpu::memory_limit(MEMORY_LIMIT_ENV)?;
    let modules = bundled_modules()?;
    let options = |name: &str| {
        modules
            .get(name)
            .map(|m| m.options)
            .ok_or_else(|| Error::internal(format!("the CUDA kernel bundle lacks module {name}")))
    };
    let group_size = define(options("msf_k0")?, "WG").unwrap_or(0);
    let mut tile_bytes = [0; 6];
    for dtype in DType::ALL {
        let module = options(&primitives_module(dtype, crate::ScanOp::Sum, false))?;
        tile_bytes[dtype as usize] = define(module, "ITEMS").unwrap_or(1) * dtype.size();
        if define(module, "WG") != Some(group_size) {
            return Err(Error::internal(
                "the CUDA kernel bundle mixes work-group sizes",
            ));
        }
    }
    let single_pass_scan = gpu::single_pass_scan(SCAN_ENV, true)?;

    let settings = Settings {
        name: name.clone(),
        global_memory: (total as u64).min(limit),
        max_allocation: (total as u64).min(limit),
        compute_units: units,
        group_size,
        tile_bytes,
        int64_atomics: true,
        single_pass_scan,
        fp64: true,
        groups_per_unit: tuning("GPUMST_CUDA_GROUPS_PER_UNIT", 8),
    };
    let device = CudaDevice {
        context,
        name,
        cooperative,
    };
    Ok(Gpu::new(device, settings))
}

/// Why a device with this driver version and compute capability cannot run the bundle.
pub(crate) fn unusable(driver: i32, compute: (i32, i32)) -> Option<String> {
    if driver < MIN_DRIVER_VERSION {
        return Some(format!(
            "driver {}.{} is older than {}.{}, the oldest that loads gpumst's PTX",
            driver / 1000,
            driver % 1000 / 10,
            MIN_DRIVER_VERSION / 1000,
            MIN_DRIVER_VERSION % 1000 / 10
        ));
    }
    if compute < MIN_COMPUTE_CAPABILITY {
        return Some(format!(
            "compute capability {}.{} is below {}.{}",
            compute.0, compute.1, MIN_COMPUTE_CAPABILITY.0, MIN_COMPUTE_CAPABILITY.1
        ));
    }
    None
}

impl CudaDevice {
    fn stream(&self) -> sys::CUstream {
        self.context.stream
    }

    /// Launches `groups` blocks of `group` threads of kernel `name`; `together`: a
    /// cooperative launch (every block resident at once, or the launch fails). Ok(false)
    /// where the driver refused a cooperative launch as too large (nothing launched).
    fn launch_kernel(
        &self,
        program: &CudaModule,
        name: &str,
        groups: usize,
        group: usize,
        args: &[Arg<Self>],
        together: bool,
    ) -> Result<bool> {
        if groups > i32::MAX as usize {
            return Err(Error::invalid_argument(format!(
                "{name} would need {groups} blocks, more than CUDA launches"
            )));
        }
        self.context.bind()?;
        let function = self.function(program, name)?;
        let mut cells: Vec<ParamCell> = args
            .iter()
            .map(|arg| match *arg {
                Arg::Mem(pointer) => ParamCell { u64: pointer },
                Arg::U32(value) => ParamCell { u32: value },
                Arg::U64(value) => ParamCell { u64: value },
            })
            .collect();
        let mut params: Vec<*mut c_void> = cells
            .iter_mut()
            .map(|cell| (cell as *mut ParamCell).cast())
            .collect();
        let (grid, block) = (groups as u32, group as u32);
        // SAFETY: each parameter cell holds the value of the kernel's parameter at that
        // position in kernels/opencl/*.cl (a device pointer, uint or ulong), and the
        // cells outlive the call (the driver copies them at launch). The buffers they
        // name stay alive until the stream is synchronized (callers keep them).
        let launched = unsafe {
            if together {
                sys::cuLaunchCooperativeKernel(
                    function,
                    grid,
                    1,
                    1,
                    block,
                    1,
                    1,
                    0,
                    self.stream(),
                    params.as_mut_ptr(),
                )
                .result()
            } else {
                result::launch_kernel(
                    function,
                    (grid, 1, 1),
                    (block, 1, 1),
                    0,
                    self.stream(),
                    &mut params,
                )
            }
        };
        match launched {
            Ok(()) => Ok(true),
            // Fewer blocks fit than the occupancy query said (a GPU shared through MPS
            // with a share of its SMs, say): the caller launches another way.
            Err(DriverError(sys::CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)) => Ok(false),
            Err(e) => Err(cuda_error(&format!("launching {name} on {}", self.name), e)),
        }
    }

    /// Kernel `name` of `program`, looked up once per module (the context is bound).
    fn function(&self, program: &CudaModule, name: &str) -> Result<sys::CUfunction> {
        let mut functions = program
            .functions
            .lock()
            .map_err(|_| Error::internal("the CUDA function cache was poisoned"))?;
        if let Some(&function) = functions.get(name) {
            return Ok(function);
        }
        let c_name = CString::new(name).expect("kernel names have no NUL");
        // SAFETY: the module is loaded in the bound context.
        let function = unsafe { result::module::get_function(program.module, c_name) }
            .map_err(|e| cuda_error(&format!("cuModuleGetFunction({name}) on {}", self.name), e))?;
        functions.insert(name.to_string(), function);
        Ok(function)
    }

    fn sync(&self, what: &str) -> Result<()> {
        // SAFETY: the stream lives as long as self.
        unsafe { result::stream::synchronize(self.stream()) }.map_err(|e| cuda_error(what, e))
    }

    /// The transfer buffers, made on first use, if no other copy holds them now (that
    /// copy's caller then takes the pageable path). The context is bound.
    fn transfer_ring(&self) -> Option<std::sync::MutexGuard<'_, Option<TransferRing>>> {
        let mut ring = self.context.transfer.try_lock().ok()?;
        if ring.is_none() {
            *ring = TransferRing::new();
        }
        Some(ring)
    }

    /// Runs `f` on the second stream (made on first use), the context bound.
    fn with_side<R>(&self, f: impl FnOnce(&mut SideStream) -> Result<R>) -> Result<R> {
        self.context.bind()?;
        let mut side = self
            .context
            .side
            .lock()
            .map_err(|_| Error::internal("the CUDA second stream was poisoned"))?;
        if side.is_none() {
            *side = Some(SideStream::new()?);
        }
        match side.as_mut() {
            Some(side) => f(side),
            None => unreachable!("made above"),
        }
    }

    /// A mark behind the copies issued to the second stream so far.
    fn side_mark(&self) -> Result<EventMark> {
        // SAFETY: the second stream lives as long as the context.
        self.with_side(|side| unsafe { self.mark_on(side.stream) })
    }

    /// An event recorded on `stream` behind the work issued to it so far (the context
    /// is bound).
    ///
    /// # Safety
    /// `stream` is a live stream of the context.
    unsafe fn mark_on(&self, stream: sys::CUstream) -> Result<EventMark> {
        let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map_err(self.err("cuEventCreate"))?;
        let mark = EventMark(event);
        // SAFETY: the stream is live (the caller's promise); the event was made above.
        unsafe { result::event::record(mark.0, stream) }.map_err(self.err("cuEventRecord"))?;
        Ok(mark)
    }

    /// Makes work issued to `waiter` from now on wait for `mark` (the context is
    /// bound; the mark may be dropped once this returns: the driver keeps what the
    /// wait needs).
    ///
    /// # Safety
    /// `waiter` is a live stream of the context.
    unsafe fn wait_for(&self, waiter: sys::CUstream, mark: &EventMark) -> Result<()> {
        // SAFETY: the stream is live (the caller's promise); the event is `mark`'s,
        // recorded in `mark_on` and not destroyed before `mark` drops.
        unsafe {
            result::stream::wait_event(
                waiter,
                mark.0,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(self.err("cuStreamWaitEvent"))
    }

    /// Copies every filling's pieces into transfer buffer 0 and issues their device
    /// copies without waiting: later work on the stream runs after them, and the
    /// buffer's event guards its next use. The bytes go in `BATCH_PARTS` parts (one
    /// below 2 MiB), each a host pass on all cores followed by its device copies, so
    /// that a part crosses the bus while the host copies the next. `total` (the pieces'
    /// bytes) is at most a buffer.
    fn write_batch(
        &self,
        ring: &mut TransferRing,
        fillings: &[gpu::Filling<'_, Self>],
        total: usize,
    ) -> Result<()> {
        const BATCH_PARTS: usize = 2;
        crate::profile::span("cuda: wait for a transfer buffer", || ring.wait(0))?;
        // SAFETY: buffer 0's last device copy is over (waited for just above), and the
        // caller keeps `total` within a buffer.
        let buffer = unsafe { ring.buffer(0, total) };
        // Each piece: its device address, its place in the buffer, its bytes.
        let mut staged = Vec::new();
        let mut at = 0;
        for filling in fillings {
            for (offset, piece) in gpu::placed(&filling.pieces) {
                staged.push((filling.memory.pointer + offset as u64, at, piece));
                at += piece.len();
            }
        }
        let parts = if total >= 2 << 20 { BATCH_PARTS } else { 1 };
        let part = total.div_ceil(parts);
        for range in (0..total)
            .step_by(part)
            .map(|lo| lo..(lo + part).min(total))
        {
            // The pieces' bytes that fall in `range`: (device address, buffer range).
            let mut sources = Vec::new();
            let mut copies = Vec::new();
            for &(address, start, piece) in &staged {
                let (lo, hi) = (range.start.max(start), range.end.min(start + piece.len()));
                if lo < hi {
                    sources.push(&piece[lo - start..hi - start]);
                    copies.push((address + (lo - start) as u64, lo..hi));
                }
            }
            crate::profile::span("cuda: copy into a transfer buffer", || {
                copy_pieces(&mut buffer[range.clone()], &sources)
            })?;
            for (address, bytes) in copies {
                // SAFETY: `DeviceBuffer::filling` kept the pieces inside their buffers;
                // the transfer buffer is page-locked and is not written again before
                // its event (recorded below) says these copies are over.
                unsafe { result::memcpy_htod_async(address, &buffer[bytes], self.stream()) }
                    .map_err(self.err("cuMemcpyHtoDAsync from page-locked memory"))?;
            }
        }
        ring.mark(0, self.stream())
    }

    /// Copies device address `from` into `out` through the transfer buffers: the device
    /// fills one buffer while the host empties the other on all cores.
    fn read_chunked(
        &self,
        ring: &mut TransferRing,
        from: sys::CUdeviceptr,
        out: &mut [u8],
    ) -> Result<()> {
        let total = out.len();
        // (As if alone: a split's forest comes back from one device.)
        let chunk = chunk_for(total, 1);
        let chunks = total.div_ceil(chunk);
        let range = |i: usize| i * chunk..((i + 1) * chunk).min(total);
        let issue = |ring: &mut TransferRing, i: usize| -> Result<()> {
            let k = i % TRANSFER_BUFFERS;
            let len = range(i).len();
            // SAFETY: the buffer was emptied (its previous chunk waited for and copied
            // out) before its next chunk is issued, and len is at most a buffer's size.
            let buffer = unsafe { ring.buffer(k, len) };
            let at = from + (i * chunk) as u64;
            // SAFETY: the caller keeps the device range inside its allocation; the buffer
            // is page-locked, and read only after its event (recorded next) is waited for.
            unsafe { result::memcpy_dtoh_async(buffer, at, self.stream()) }
                .map_err(self.err("cuMemcpyDtoHAsync into page-locked memory"))?;
            ring.mark(k, self.stream())
        };
        issue(ring, 0)?;
        for i in 0..chunks {
            if i + 1 < chunks {
                issue(ring, i + 1)?;
            }
            let k = i % TRANSFER_BUFFERS;
            crate::profile::span("cuda: wait for a transfer buffer", || ring.wait(k))?;
            let target = &mut out[range(i)];
            // SAFETY: the device copy into buffer k is over (waited for just above).
            let buffer = unsafe { ring.buffer(k, target.len()) };
            crate::profile::span("cuda: copy out of a transfer buffer", || {
                copy_pieces(target, &[buffer])
            })?;
        }
        Ok(())
    }

    /// The error for a failed `what`, built only on failure (launches are hot).
    fn err<'a>(&'a self, what: &'a str) -> impl Fn(DriverError) -> Error + 'a {
        move |e| cuda_error(&format!("{what} on {}", self.name), e)
    }
}

/// One kernel parameter's bytes; CUDA reads as many as the parameter's size.
#[repr(C)]
union ParamCell {
    u32: u32,
    u64: u64,
}

/// An event recorded on a stream behind the work issued to it (`mark_on`: the second
/// stream's copies for `mark_beside`, the main stream's work for `mark_main`),
/// destroyed when dropped.
pub(crate) struct EventMark(sys::CUevent);

// SAFETY: a CUDA event is a handle of its context's, usable from any thread that binds
// that context (`await_mark` does); the mark is only moved, never shared.
unsafe impl Send for EventMark {}

impl Drop for EventMark {
    fn drop(&mut self) {
        // SAFETY: made in `mark_on` and destroyed once, here; a wait already enqueued
        // on it keeps what it needs.
        unsafe {
            let _ = result::event::destroy(self.0);
        }
    }
}

impl gpu::Device for CudaDevice {
    type Memory = CudaMemory;
    type Handle = sys::CUdeviceptr;
    type Program = CudaModule;
    type Pending = CudaPending;
    /// A staging slot (16 bytes) of the mapped page.
    type HostWords = StagingSlot;
    type Staged = CudaStaged;
    type Mark = EventMark;
    const STAGES: bool = true;

    fn injected_error(&self, what: &str, fault: crate::testing::DriverFault) -> Error {
        use crate::testing::DriverFault::*;
        let code = match fault {
            OutOfMemory => sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
            LaunchFailed => sys::CUresult::CUDA_ERROR_LAUNCH_FAILED,
            ContextLost => sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
        };
        cuda_error(
            &format!("{what} on {} (injected)", self.name),
            DriverError(code),
        )
    }

    fn alloc(&self, bytes: usize) -> Result<CudaMemory> {
        self.context.bind()?;
        // SAFETY: a stream-ordered allocation from the context's pool, owned by the
        // returned value; every use of it is issued to the same stream, and CudaMemory's
        // Drop frees it in stream order.
        let pointer = unsafe {
            result::mem_pool::alloc_async(self.context.pool, bytes.max(1), self.stream())
        }
        .map_err(self.err("cuMemAllocFromPoolAsync"))?;
        Ok(CudaMemory {
            pointer,
            context: self.context.clone(),
            owned: true,
        })
    }

    unsafe fn wrap(&self, address: usize, bytes: usize, what: &str) -> Result<CudaMemory> {
        self.context.bind()?;
        let pointer = address as sys::CUdeviceptr;
        let not_ours = |why: String| {
            Error::invalid_argument(format!(
                "{what}: {pointer:#x} is not device memory gpumst can use on {} ({why})",
                self.name
            ))
        };
        let mut ordinal: i32 = -1;
        // SAFETY: the driver checks the address itself (any value is allowed) and
        // writes one int.
        let found = unsafe {
            sys::cuPointerGetAttribute(
                (&mut ordinal as *mut i32).cast(),
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                pointer,
            )
        };
        if found != sys::CUresult::CUDA_SUCCESS {
            return Err(not_ours(format!(
                "the driver does not know the address: {found:?}"
            )));
        }
        // CUdevice handles are ordinals.
        if ordinal != self.context.device {
            return Err(not_ours(format!("it lies on device {ordinal}")));
        }
        let mut owner: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one context handle (null for memory of no one context, such as
        // stream-ordered pools).
        unsafe {
            sys::cuPointerGetAttribute(
                (&mut owner as *mut sys::CUcontext).cast(),
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
                pointer,
            )
        };
        if !owner.is_null() && owner != self.context.context {
            return Err(not_ours(if self.context.primary {
                "it belongs to another CUDA context than the device's primary one, which gpumst and the CUDA runtime use (pass that context as options.cuda_context)".into()
            } else {
                "it belongs to another CUDA context than options.cuda_context".into()
            }));
        }
        let (mut base, mut size) = (0, 0);
        // SAFETY: writes the allocation's base and size for a known address.
        let ranged = unsafe { sys::cuMemGetAddressRange_v2(&mut base, &mut size, pointer) };
        if ranged == sys::CUresult::CUDA_SUCCESS {
            let room = (base + size as u64).saturating_sub(pointer);
            if room < bytes as u64 {
                return Err(Error::invalid_argument(format!(
                    "{what}: the device allocation at {pointer:#x} holds {room} bytes from there, but {bytes} are needed"
                )));
            }
        }
        Ok(CudaMemory {
            pointer,
            context: self.context.clone(),
            owned: false,
        })
    }

    unsafe fn follow(&self, queue: *mut std::ffi::c_void) -> Result<()> {
        self.context.bind()?;
        // SAFETY: the caller's stream is live (the caller's promise).
        let mark = unsafe { self.mark_on(queue as sys::CUstream) }?;
        self.await_mark(mark)
    }

    fn native_handles(&self) -> gpu::NativeHandles {
        gpu::NativeHandles {
            context: self.context.context.cast(),
            queue: self.context.stream.cast(),
            device: std::ptr::null_mut(),
        }
    }

    fn address(memory: &CudaMemory) -> usize {
        memory.pointer as usize
    }

    fn starts_on_16_bytes(memory: &CudaMemory) -> bool {
        memory.pointer % 16 == 0
    }

    fn handle(memory: &CudaMemory) -> sys::CUdeviceptr {
        memory.pointer
    }

    fn write(&self, memory: &mut CudaMemory, offset: usize, data: &[u8]) -> Result<()> {
        self.context.bind()?;
        if data.len() >= TRANSFER_MIN_BYTES {
            if let Some(mut ring) = self.transfer_ring() {
                if let Some(ring) = ring.as_mut() {
                    let to = memory.pointer + offset as u64;
                    return self.write_chunks(ring, &[(to, data)], self.stream());
                }
            }
        }
        // SAFETY: the caller keeps offset + data.len() inside the allocation; the stream
        // is synchronized before returning, so `data` outlives the copy.
        unsafe { result::memcpy_htod_async(memory.pointer + offset as u64, data, self.stream()) }
            .map_err(self.err("cuMemcpyHtoDAsync"))?;
        self.sync("cuStreamSynchronize after a host-to-device copy")
    }

    fn write_all(&self, fillings: &mut [gpu::Filling<'_, Self>]) -> Result<()> {
        let total: usize = fillings
            .iter()
            .flat_map(|f| &f.pieces)
            .map(|p| p.len())
            .sum();
        self.context.bind()?;
        if total > 0 {
            if let Some(mut ring) = self.transfer_ring() {
                if let Some(ring) = ring.as_mut() {
                    if total <= transfer_chunk_bytes() {
                        return self.write_batch(ring, fillings, total);
                    }
                    let pieces = placed_pieces(fillings);
                    return self.write_chunks(ring, &pieces, self.stream());
                }
            }
        }
        gpu::write_each(self, fillings)
    }

    fn write_beside(&self, fillings: &mut [gpu::Filling<'_, Self>]) -> Result<()> {
        self.with_side(|SideStream { stream, ring }| {
            let pieces = placed_pieces(fillings);
            let total: usize = pieces.iter().map(|(_, data)| data.len()).sum();
            match ring {
                // No wait: the bytes are in the transfer buffers (whose events guard
                // them) when this returns; the main stream waits in `await_beside`.
                Some(ring) if total >= TRANSFER_MIN_BYTES => {
                    return self.write_chunks(ring, &pieces, *stream)
                }
                _ => {
                    for (to, data) in pieces {
                        // SAFETY: the caller keeps the range inside the allocation,
                        // whose creation the stream follows (`prepare_beside`); the
                        // stream is synchronized below, before `data` may go.
                        unsafe { result::memcpy_htod_async(to, data, *stream) }
                            .map_err(self.err("cuMemcpyHtoDAsync (on a second stream)"))?;
                    }
                }
            }
            // SAFETY: the stream lives as long as the context.
            unsafe { result::stream::synchronize(*stream) }
                .map_err(self.err("cuStreamSynchronize after a copy on a second stream"))
        })
    }

    fn stage(&self, pieces: &[&[u8]], stop: &AtomicBool) -> Result<Option<CudaStaged>> {
        self.stage_pieces(pieces, stop)
    }

    fn staged_chunk_bytes(&self, bytes: usize) -> usize {
        staged::whole_blocks(bytes)
    }

    fn write_staged(&self, staged: CudaStaged, into: &mut [gpu::Filling<'_, Self>]) -> Result<()> {
        self.write_staged_pieces(staged, into)
    }

    fn await_beside(&self) -> Result<()> {
        self.await_mark(self.side_mark()?)
    }

    fn mark_beside(&self) -> Result<Option<EventMark>> {
        self.side_mark().map(Some)
    }

    fn await_mark(&self, mark: EventMark) -> Result<()> {
        self.context.bind()?;
        // SAFETY: the main stream lives as long as the context.
        unsafe { self.wait_for(self.stream(), &mark) }
    }

    fn mark_main(&self) -> Result<Option<EventMark>> {
        self.context.bind()?;
        // SAFETY: the main stream lives as long as the context.
        unsafe { self.mark_on(self.stream()) }.map(Some)
    }

    fn beside_after(&self, mark: EventMark) -> Result<()> {
        // SAFETY: the second stream lives as long as the context.
        self.with_side(|side| unsafe { self.wait_for(side.stream, &mark) })
    }

    fn read(&self, memory: &CudaMemory, offset: usize, out: &mut [u8]) -> Result<()> {
        self.context.bind()?;
        if out.len() <= STAGING_SLOT_BYTES {
            if let Some(slot) = self.context.take_slot() {
                slot.copy_from(memory.pointer + offset as u64, out.len())?;
                self.sync("cuStreamSynchronize after a device-to-host copy")?;
                // SAFETY: the copy into the slot is over (the stream was synchronized)
                // and the slot holds at least out.len() bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(slot.pointer(), out.as_mut_ptr(), out.len())
                };
                return Ok(());
            }
        }
        if out.len() >= TRANSFER_MIN_BYTES {
            if let Some(mut ring) = self.transfer_ring() {
                if let Some(ring) = ring.as_mut() {
                    return self.read_chunked(ring, memory.pointer + offset as u64, out);
                }
            }
        }
        // SAFETY: as in write: in bounds, and complete before `out` is used again.
        unsafe { result::memcpy_dtoh_async(out, memory.pointer + offset as u64, self.stream()) }
            .map_err(self.err("cuMemcpyDtoHAsync"))?;
        self.sync("cuStreamSynchronize after a device-to-host copy")
    }

    fn host_words(&self) -> Option<StagingSlot> {
        if self.context.staging_device == 0 {
            return None;
        }
        self.context.take_slot()
    }

    fn host_words_handle(words: &StagingSlot) -> sys::CUdeviceptr {
        words.device_address()
    }

    fn host_words_read(words: &StagingSlot) -> [u64; 2] {
        let slot = words.pointer().cast::<u64>();
        // SAFETY: the slot is 16 bytes of the page-locked page (16-byte aligned: the page
        // is, and slots are 16 bytes), owned by this guard; the caller has waited for the
        // kernels that write it. Volatile: the device, not this program, wrote it.
        unsafe { [slot.read_volatile(), slot.add(1).read_volatile()] }
    }

    fn read_later(&self, memory: &CudaMemory, offset: usize) -> Result<CudaPending> {
        self.context.bind()?;
        let Some(slot) = self.context.take_slot() else {
            let mut value = [0u8; 4];
            self.read(memory, offset, &mut value)?;
            return Ok(CudaPending {
                in_flight: None,
                value: u32::from_ne_bytes(value),
            });
        };
        let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map_err(self.err("cuEventCreate"))?;
        let in_flight = InFlight { slot, event };
        in_flight
            .slot
            .copy_from(memory.pointer + offset as u64, 4)?;
        // SAFETY: the event was just created in the bound context; the stream is ours.
        if let Err(e) = unsafe { result::event::record(event, self.stream()) } {
            // The slot goes back to the free list below: let the copy into it end first.
            let _ = self.sync("cuStreamSynchronize");
            return Err(self.err("cuEventRecord")(e));
        }
        Ok(CudaPending {
            in_flight: Some(in_flight),
            value: 0,
        })
    }

    fn poll(&self, pending: &mut CudaPending, wait: bool) -> Result<Option<u32>> {
        let Some(flight) = &pending.in_flight else {
            return Ok(Some(pending.value));
        };
        self.context.bind()?;
        // SAFETY: the event lives until `flight` drops.
        let done = unsafe {
            if wait {
                result::event::synchronize(flight.event).map_err(self.err("cuEventSynchronize"))?;
                true
            } else {
                match result::event::query(flight.event) {
                    Ok(()) => true,
                    Err(e) if e.0 == sys::CUresult::CUDA_ERROR_NOT_READY => false,
                    Err(e) => return Err(self.err("cuEventQuery")(e)),
                }
            }
        };
        if !done {
            return Ok(None);
        }
        let mut value = [0u8; 4];
        // SAFETY: the event follows the copy, so the slot holds the value.
        unsafe { std::ptr::copy_nonoverlapping(flight.slot.pointer(), value.as_mut_ptr(), 4) };
        pending.value = u32::from_ne_bytes(value);
        pending.in_flight = None;
        Ok(Some(pending.value))
    }

    fn fill<T: Plain>(&self, memory: &mut CudaMemory, value: T, count: usize) -> Result<()> {
        self.context.bind()?;
        let bytes = gpu::bytes_of(std::slice::from_ref(&value));
        let word = |i: usize| u32::from_ne_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        let p = memory.pointer;
        // SAFETY: the caller keeps `count` elements of T inside the allocation. An
        // 8-byte pattern of two equal words is one 32-bit fill; any other is two
        // strided 32-bit fills (pitch 8, one word per row: much slower, and rare).
        let status = unsafe {
            match bytes.len() {
                1 => sys::cuMemsetD8Async(p, bytes[0], count, self.stream()),
                2 => sys::cuMemsetD16Async(
                    p,
                    u16::from_ne_bytes([bytes[0], bytes[1]]),
                    count,
                    self.stream(),
                ),
                4 => sys::cuMemsetD32Async(p, word(0), count, self.stream()),
                8 if word(0) == word(4) => {
                    sys::cuMemsetD32Async(p, word(0), 2 * count, self.stream())
                }
                8 => {
                    let low = sys::cuMemsetD2D32Async(p, 8, word(0), 1, count, self.stream());
                    if low != sys::CUresult::CUDA_SUCCESS {
                        low
                    } else {
                        sys::cuMemsetD2D32Async(p + 4, 8, word(4), 1, count, self.stream())
                    }
                }
                other => {
                    return Err(Error::internal(format!(
                        "no CUDA fill for {other}-byte elements"
                    )))
                }
            }
        };
        status.result().map_err(self.err("cuMemset"))
    }

    fn copy(
        &self,
        source: &CudaMemory,
        from: usize,
        target: &mut CudaMemory,
        to: usize,
        bytes: usize,
    ) -> Result<()> {
        self.context.bind()?;
        // SAFETY: the caller keeps both ranges inside their allocations.
        unsafe {
            result::memcpy_dtod_async(
                target.pointer + to as u64,
                source.pointer + from as u64,
                bytes,
                self.stream(),
            )
        }
        .map_err(self.err("cuMemcpyDtoDAsync"))
    }

    fn copy_from_peer(
        &self,
        peer: &Self,
        source: &CudaMemory,
        from: usize,
        target: &mut CudaMemory,
        to: usize,
        bytes: usize,
    ) -> Result<bool> {
        self.context.reach(&peer.context)?;
        self.context.bind()?;
        // SAFETY: the caller keeps both ranges inside their allocations, and `peer`'s
        // work on the source is finished; both contexts live as long as their devices.
        unsafe {
            result::memcpy_peer_async(
                self.context.context,
                target.pointer + to as u64,
                peer.context.context,
                source.pointer + from as u64,
                bytes,
                self.stream(),
            )
        }
        .map_err(self.err("cuMemcpyPeerAsync"))?;
        Ok(true)
    }

    fn build(&self, kind: ProgramKind, _settings: &Settings) -> Result<CudaModule> {
        let name = match kind {
            ProgramKind::Primitives(dtype, op, segmented) => {
                primitives_module(dtype, op, segmented)
            }
            ProgramKind::Msf(config) => config.cuda_module()?,
        };
        let module = bundled_modules()?.get(name.as_str()).ok_or_else(|| {
            Error::internal(format!("the CUDA kernel bundle lacks module {name}"))
        })?;
        let image = CString::new(module.ptx)
            .map_err(|_| Error::internal("the CUDA kernel bundle holds a NUL byte"))?;
        self.context.bind()?;
        // The JIT's error log, for the message if the driver rejects the PTX.
        let mut log = vec![0u8; 8192];
        let mut options = [
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values = [log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
        let mut handle = std::ptr::null_mut();
        // SAFETY: `image` is NUL-terminated PTX; the option values are the log buffer and
        // its size (passed by value in the pointer, as cuda.h specifies), both alive
        // for the call.
        let status = unsafe {
            sys::cuModuleLoadDataEx(
                &mut handle,
                image.as_ptr().cast(),
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if let Err(e) = status.result() {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let mut error = cuda_error(&format!("loading module {name} on {}", self.name), e);
            let text = String::from_utf8_lossy(&log[..end]);
            if !text.trim().is_empty() {
                error = Error::new(error.status(), format!("{}:\n{text}", error.message()));
            }
            return Err(error);
        }
        Ok(CudaModule {
            module: handle,
            functions: Mutex::new(HashMap::new()),
            occupancy: Mutex::new(HashMap::new()),
            context: self.context.clone(),
            options: module.options,
        })
    }

    fn launch(
        &self,
        program: &CudaModule,
        name: &str,
        groups: usize,
        group: usize,
        args: &[Arg<Self>],
    ) -> Result<()> {
        self.launch_kernel(program, name, groups, group, args, false)
            .map(|_| ())
    }

    fn groups_per_unit_together(
        &self,
        program: &CudaModule,
        name: &str,
        group: usize,
    ) -> Result<Option<usize>> {
        if !self.cooperative {
            return Ok(None);
        }
        let mut known = program
            .occupancy
            .lock()
            .map_err(|_| Error::internal("the CUDA occupancy cache was poisoned"))?;
        let per_unit = match known.get(name).and_then(|sizes| sizes.get(&group)) {
            Some(&per_unit) => per_unit,
            None => {
                self.context.bind()?;
                let function = self.function(program, name)?;
                let mut per_unit = 0;
                // SAFETY: writes one int; the function belongs to the bound context.
                unsafe {
                    sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                        &mut per_unit,
                        function,
                        group as i32,
                        0,
                    )
                }
                .result()
                .map_err(self.err("cuOccupancyMaxActiveBlocksPerMultiprocessor"))?;
                let per_unit = per_unit.max(0) as usize;
                known
                    .entry(name.to_string())
                    .or_default()
                    .insert(group, per_unit);
                per_unit
            }
        };
        Ok((per_unit > 0).then_some(per_unit))
    }

    fn launch_together(
        &self,
        program: &CudaModule,
        name: &str,
        groups: usize,
        group: usize,
        args: &[Arg<Self>],
    ) -> Result<bool> {
        self.launch_kernel(program, name, groups, group, args, true)
    }

    fn built_with(program: &CudaModule, name: &str) -> Option<usize> {
        define(program.options, name)
    }

    fn finish(&self) -> Result<()> {
        self.context.bind()?;
        self.sync("cuStreamSynchronize")
    }

    fn time<R>(&self, work: impl FnOnce() -> Result<R>) -> Result<(R, Option<f64>)> {
        self.context.bind()?;
        let create = || {
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
                .map_err(self.err("cuEventCreate"))
        };
        let events = [create()?, create()?];
        // SAFETY: both events were created above in the bound context and are
        // destroyed once, below; records go to this device's stream.
        let outcome = (|| unsafe {
            result::event::record(events[0], self.stream()).map_err(self.err("cuEventRecord"))?;
            let value = work()?;
            self.context.bind()?;
            result::event::record(events[1], self.stream()).map_err(self.err("cuEventRecord"))?;
            result::event::synchronize(events[1]).map_err(self.err("cuEventSynchronize"))?;
            let ms = result::event::elapsed(events[0], events[1])
                .map_err(self.err("cuEventElapsedTime"))?;
            Ok((value, Some(ms as f64)))
        })();
        for event in events {
            // SAFETY: created above, no longer recorded or waited on.
            unsafe {
                let _ = result::event::destroy(event);
            }
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ScanOp;

    /// Copies spread over several buffers fill them in order, the pieces cut where
    /// buffers and the threads' shares end.
    #[test]
    fn spread_copies_copy_exactly_their_bytes() {
        // Pieces of 700 KB over blocks of 300 KB: on all cores.
        let pieces: Vec<Vec<u8>> = (0..3u8)
            .map(|p| {
                (0..700_000u32)
                    .map(|i| (i as u8) ^ p.wrapping_mul(77))
                    .collect()
            })
            .collect();
        let mut blocks = vec![vec![0u8; 300_000]; 7];
        let targets: Vec<&mut [u8]> = blocks.iter_mut().map(|b| &mut b[..]).collect();
        let views: Vec<&[u8]> = pieces.iter().map(|p| &p[..]).collect();
        spread(targets, &views);
        assert_eq!(blocks.concat(), pieces.concat());
    }

    /// Every module the tier can ask for is in the shipped bundle, built with one block
    /// size, and is PTX for the documented target (checked without a GPU).
    #[test]
    fn the_bundle_holds_every_module_the_tier_loads() {
        let modules = bundled_modules().expect("the shipped bundle");
        let mut names: Vec<String> = Vec::new();
        for dtype in DType::ALL {
            for op in ScanOp::ALL {
                for segmented in [false, true] {
                    names.push(primitives_module(dtype, op, segmented));
                }
            }
        }
        names.extend((0..3).map(|keys| format!("msf_k{keys}")));
        for name in &names {
            let module = modules
                .get(name.as_str())
                .unwrap_or_else(|| panic!("the bundle lacks {name}"));
            assert_eq!(define(module.options, "WG"), Some(256), "{name}");
            assert!(define(module.options, "ITEMS").is_some(), "{name}");
            assert!(module.ptx.contains(".target sm_70"), "{name}");
            assert!(module.ptx.contains(".version 8.4"), "{name}: PTX ISA");
        }
        assert_eq!(modules.len(), names.len(), "no stray modules");
        // The scans keep 128 bytes per thread in a tile.
        let u32_sum = modules[primitives_module(DType::U32, ScanOp::Sum, false).as_str()].options;
        assert_eq!(define(u32_sum, "ITEMS"), Some(32));
        assert_eq!(define(u32_sum, "SINGLE_PASS"), Some(1));
    }

    #[test]
    fn old_drivers_and_gpus_are_refused_with_a_reason() {
        assert_eq!(unusable(12040, (7, 0)), None);
        assert_eq!(unusable(13000, (9, 0)), None);
        let driver = unusable(12030, (9, 0)).expect("CUDA 12.3 is too old");
        assert!(
            driver.contains("12.3") && driver.contains("12.4"),
            "{driver}"
        );
        let gpu = unusable(13000, (6, 1)).expect("Pascal is too old");
        assert!(gpu.contains("6.1") && gpu.contains("7.0"), "{gpu}");
    }
}
