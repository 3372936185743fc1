//! What the GPU tiers share. A tier (OpenCL, CUDA) is a [`Device`]: raw memory, programs
//! built from the kernel sources in `kernels/`, launches and a queue to wait on. The
//! primitives and MSF algorithms are written once, against [`Gpu`], which adds typed
//! buffers, the program cache and the tuning every tier shares.

pub(crate) mod msf;
mod primitives;
mod staging;

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::types::{DType, ScanOp};
use crate::{Error, Result, Status};

/// Which program: the primitives for one (element type, operator), or the MSF kernels
/// in one configuration.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum ProgramKind {
    /// The bool: the scans read head flags (segmented).
    Primitives(DType, ScanOp, bool),
    Msf(msf::KernelConfig),
}

/// Plain numbers: no padding, and every byte pattern is a valid value, so device memory
/// can be copied into them as bytes.
///
/// # Safety
/// Implement only for such types.
pub(crate) unsafe trait Plain: Copy + Default + Send + Sync + 'static {}
// SAFETY: Stored is sealed in crate::types to u8 and the six element types, plain
// numbers.
unsafe impl<T: crate::types::Stored> Plain for T {}

/// Views plain numbers as their bytes.
pub(crate) fn bytes_of<T: Plain>(data: &[T]) -> &[u8] {
    // SAFETY: T has no padding (Plain), so all size_of_val(data) bytes are initialized.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast(), std::mem::size_of_val(data)) }
}

/// Views plain numbers as bytes to overwrite.
pub(crate) fn bytes_of_mut<T: Plain>(data: &mut [T]) -> &mut [u8] {
    // SAFETY: T has no padding and accepts any byte pattern (Plain), and the slice is
    // borrowed mutably for the view's lifetime.
    unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast(), std::mem::size_of_val(data)) }
}

/// A GPU tier's device: memory, programs and launches, in the order they were issued.
pub(crate) trait Device: Send + Sync + Sized + 'static {
    /// An allocation, released when dropped.
    type Memory: Send + Sync;
    /// What a kernel receives for a buffer argument.
    type Handle: Copy;
    /// A built program (module) whose kernels are launched by name.
    type Program: Send + Sync;
    /// A 4-byte device-to-host copy in flight (see `read_later`); dropping it waits
    /// for the copy.
    type Pending;
    /// Host memory kernels write straight into (see `host_words`).
    type HostWords;
    /// Host bytes copied ahead into the tier's page-locked memory (see `stage`).
    type Staged: Send + 'static;
    /// A point in one of the device's queues (see `mark_beside`, `mark_main`).
    type Mark: Send;
    /// Whether `stage` may stage anything (where not, callers leave out the code
    /// around it).
    const STAGES: bool = false;

    fn alloc(&self, bytes: usize) -> Result<Self::Memory>;
    /// The caller's device memory at `address` (a CUDA device pointer, an OpenCL
    /// `cl_mem`) as a `Memory` that does not free it, after checking that it belongs to
    /// this device and holds `bytes` bytes from there; `what` names the array in errors.
    ///
    /// # Safety
    /// `address` is a live allocation of the caller's (for OpenCL a valid `cl_mem`:
    /// the check itself calls the driver on it), and it stays so, untouched by other
    /// work, until the returned value is dropped.
    unsafe fn wrap(&self, address: usize, bytes: usize, what: &str) -> Result<Self::Memory>;
    /// Orders the work issued after this call behind the work the caller issued so far
    /// to its `queue` (a `CUstream` or `cl_command_queue`; null: nothing to wait for).
    ///
    /// # Safety
    /// A non-null `queue` is a live queue of this tier's context.
    unsafe fn follow(&self, queue: *mut std::ffi::c_void) -> Result<()>;
    /// The native handles of the device's context and queue (`CUcontext` and
    /// `CUstream`, or `cl_context`, `cl_command_queue` and `cl_device_id`), for callers
    /// that allocate the memory they pass to `wrap`.
    fn native_handles(&self) -> NativeHandles;
    /// The memory's address as callers know it (the device pointer, the `cl_mem`).
    fn address(memory: &Self::Memory) -> usize;
    /// Whether the memory starts on 16 bytes as kernels see it (they may then read
    /// four 32-bit entries as one vector).
    fn starts_on_16_bytes(memory: &Self::Memory) -> bool;
    fn handle(memory: &Self::Memory) -> Self::Handle;
    /// Writes `data` at byte `offset` (blocking: `data` may be dropped on return).
    fn write(&self, memory: &mut Self::Memory, offset: usize, data: &[u8]) -> Result<()>;
    /// Writes each filling's pieces one after another from byte 0 of its memory, as
    /// `write` would one at a time (blocking: the pieces may be dropped on return); a
    /// tier may move them in one transfer.
    fn write_all(&self, fillings: &mut [Filling<'_, Self>]) -> Result<()> {
        write_each(self, fillings)
    }
    /// Writes each filling's pieces one after another from byte 0 of its memory, on a
    /// queue of its own beside the one all other work goes to, so that another
    /// thread's kernels may run meanwhile; returns once the caller's bytes may go (the
    /// device's copies may still run: work on the main queue that reads them follows
    /// [`Device::await_beside`]). [`Device::prepare_beside`] was called after the
    /// buffers were allocated, and no work issued to the main queue since may touch
    /// them before `await_beside`.
    fn write_beside(&self, fillings: &mut [Filling<'_, Self>]) -> Result<()>;
    /// Copies `pieces`, one after another, into the tier's page-locked host memory for
    /// a later [`Device::write_staged`], on the calling thread (a thread of the
    /// caller's beside the device's work); waits while that memory is full, giving up
    /// once `stop` is set. None where the tier stages nothing, or cannot now: the
    /// caller then writes the pieces from where they are.
    fn stage(&self, pieces: &[&[u8]], stop: &AtomicBool) -> Result<Option<Self::Staged>> {
        let _ = (pieces, stop);
        Ok(None)
    }
    /// The bytes a chunk of at most `bytes` should take to be staged well by `stage`:
    /// `bytes`, or less where the tier stages a chunk of that size in blocks that it
    /// would leave partly filled.
    fn staged_chunk_bytes(&self, bytes: usize) -> usize {
        bytes
    }
    /// Copies `staged`'s pieces as [`Device::write_beside`] would `into`'s (piece i is
    /// the bytes of filling i, which only give each piece's length here), without
    /// waiting for them.
    fn write_staged(&self, staged: Self::Staged, into: &mut [Filling<'_, Self>]) -> Result<()>;
    /// Makes the copies of `write_beside` calls from now on follow the work issued to
    /// the main queue so far (buffer allocations among it; a buffer recycled from a
    /// release may still be in use there): by default, waits for it. For tiers without
    /// marks; where `mark_main` gives one, `beside_after` orders the copies instead.
    fn prepare_beside(&self) -> Result<()> {
        self.finish()
    }
    /// Makes work issued to the main queue from now on wait for the copies of
    /// `write_beside` and `write_staged` calls that have returned.
    fn await_beside(&self) -> Result<()> {
        Ok(())
    }
    /// A mark behind the copies of the `write_beside` and `write_staged` calls that
    /// have returned, for [`Device::await_mark`]; None where those copies are over
    /// when the calls return.
    fn mark_beside(&self) -> Result<Option<Self::Mark>> {
        Ok(None)
    }
    /// Makes work issued to the main queue from now on wait for the copies before
    /// `mark` (not for those issued since).
    fn await_mark(&self, mark: Self::Mark) -> Result<()>;
    /// A mark behind the work issued to the main queue so far, for
    /// [`Device::beside_after`]; None where the tier has none (its callers then
    /// `prepare_beside`).
    fn mark_main(&self) -> Result<Option<Self::Mark>> {
        Ok(None)
    }
    /// Makes the copies of `write_beside` and `write_staged` calls from now on follow
    /// the main queue's work before `mark` (not the work issued since).
    fn beside_after(&self, mark: Self::Mark) -> Result<()>;
    /// Reads `out.len()` bytes from byte `offset` (blocking).
    fn read(&self, memory: &Self::Memory, offset: usize, out: &mut [u8]) -> Result<()>;
    /// Starts copying the u32 at byte `offset` to the host once the work issued so far
    /// is done, without waiting, so the host can go on issuing work meanwhile.
    fn read_later(&self, memory: &Self::Memory, offset: usize) -> Result<Self::Pending>;
    /// The value of a `read_later` once its copy is done; `None` while it is not and
    /// `wait` is false.
    fn poll(&self, pending: &mut Self::Pending, wait: bool) -> Result<Option<u32>>;
    /// Two page-locked 64-bit host words a kernel can write directly (CUDA's mapped
    /// memory), for a small result the host reads after `finish` with no copy behind
    /// the kernel; None where the tier has none (the caller then reads device memory).
    fn host_words(&self) -> Option<Self::HostWords>;
    /// What a kernel receives for `words`.
    fn host_words_handle(words: &Self::HostWords) -> Self::Handle;
    /// The words' contents (call after `finish`: the kernels that wrote them are done).
    fn host_words_read(words: &Self::HostWords) -> [u64; 2];
    /// Sets the first `count` elements of type T to `value`.
    fn fill<T: Plain>(&self, memory: &mut Self::Memory, value: T, count: usize) -> Result<()>;
    /// Copies `bytes` bytes from byte `from` of `source` to byte `to` of `target`, in
    /// order behind the work issued so far (no wait).
    fn copy(
        &self,
        source: &Self::Memory,
        from: usize,
        target: &mut Self::Memory,
        to: usize,
        bytes: usize,
    ) -> Result<()>;
    /// Copies `bytes` bytes from byte `from` of `source`, memory of `peer` (another
    /// device of this kind, its work on `source` finished), to byte `to` of `target`,
    /// in order behind the work issued so far (no wait); false where this kind copies
    /// nothing between devices (the caller goes through the host).
    fn copy_from_peer(
        &self,
        _peer: &Self,
        _source: &Self::Memory,
        _from: usize,
        _target: &mut Self::Memory,
        _to: usize,
        _bytes: usize,
    ) -> Result<bool> {
        Ok(false)
    }
    fn build(&self, kind: ProgramKind, settings: &Settings) -> Result<Self::Program>;
    /// Launches `groups` work-groups of `group` work-items of kernel `name`.
    fn launch(
        &self,
        program: &Self::Program,
        name: &str,
        groups: usize,
        group: usize,
        args: &[Arg<Self>],
    ) -> Result<()>;
    /// How many work-groups of `group` work-items of kernel `name` each compute unit
    /// holds at once, for a launch whose groups wait for one another
    /// (`launch_together`); None where the tier cannot launch so (OpenCL promises
    /// nothing of the kind; NVIDIA's platform keeps it in practice, and only there does
    /// the OpenCL tier say yes).
    fn groups_per_unit_together(
        &self,
        _program: &Self::Program,
        _name: &str,
        _group: usize,
    ) -> Result<Option<usize>> {
        Ok(None)
    }
    /// Launches `groups` work-groups that all run at once (at most what
    /// `groups_per_unit_together` allows), so that they may wait for one another
    /// (CUDA's cooperative launch; a plain launch on NVIDIA's OpenCL); false when the
    /// driver found that they do not fit after all (nothing was launched).
    fn launch_together(
        &self,
        _program: &Self::Program,
        name: &str,
        _groups: usize,
        _group: usize,
        _args: &[Arg<Self>],
    ) -> Result<bool> {
        Err(Error::internal(format!(
            "{name}: this tier cannot launch work-groups that wait for one another"
        )))
    }
    /// The value of `-DNAME=` among the options `program` was built with: the host
    /// launches some kernels by them (ARG_LAST_GROUP in primitives.cl).
    fn built_with(program: &Self::Program, name: &str) -> Option<usize>;
    /// Waits until everything issued so far has finished.
    fn finish(&self) -> Result<()>;

    /// The error a driver call of `what` would return with `fault`'s code (for the
    /// fault-injection tests), marked context-lost where the real one is.
    fn injected_error(&self, what: &str, fault: crate::testing::DriverFault) -> Error;

    /// gpumst's use of the device's memory is capped from now on (the context's
    /// option): a tier that keeps memory beyond what its buffers hold stops keeping it.
    fn memory_limited(&self) {}
    /// Runs `work` and, where the device keeps its own clock for the queue (CUDA
    /// events), returns the device time from its first command to its last, in ms.
    fn time<R>(&self, work: impl FnOnce() -> Result<R>) -> Result<(R, Option<f64>)> {
        Ok((work()?, None))
    }
}

/// A GPU tier's own driver objects, as their raw handles (null where the tier has none).
#[derive(Clone, Copy, Debug)]
pub struct NativeHandles {
    /// `CUcontext` (the device's primary context) or `cl_context`.
    pub context: *mut std::ffi::c_void,
    /// `CUstream` or `cl_command_queue`: the queue gpumst issues its work to.
    pub queue: *mut std::ffi::c_void,
    /// `cl_device_id` (OpenCL); null for CUDA, whose device is the context's.
    pub device: *mut std::ffi::c_void,
}

/// What the drivers need to know about a device, filled in by the tier that opens it.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// Device name for messages and `gpumst info`.
    pub name: String,
    /// Bytes of device memory gpumst assumes it may use.
    pub global_memory: u64,
    /// The largest single allocation.
    pub max_allocation: u64,
    pub compute_units: usize,
    /// Work-items per work-group (a power of two).
    pub group_size: usize,
    /// Bytes per work-item in a scan tile, per element type (DType's discriminant).
    pub tile_bytes: [usize; 6],
    /// 64-bit atomic minimum (a single atomic per offered edge).
    pub int64_atomics: bool,
    /// Whether scans run in a single pass (decoupled look-back).
    pub single_pass_scan: bool,
    /// f64 elements are supported.
    pub fp64: bool,
    /// Work-groups per compute unit for kernels that walk tiles.
    pub groups_per_unit: usize,
}

/// Device bytes held by gpumst's buffers on one context, and the most held since the
/// last reset (the MSF benchmark reports it per edge).
#[derive(Default)]
pub(crate) struct MemoryMeter {
    live: AtomicU64,
    peak: AtomicU64,
}

impl MemoryMeter {
    fn add(&self, bytes: u64) {
        let live = self.live.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(live, Ordering::Relaxed);
    }

    fn sub(&self, bytes: u64) {
        self.live.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Starts a new peak from what is held now, and returns that.
    pub(crate) fn reset_peak(&self) -> u64 {
        let live = self.live.load(Ordering::Relaxed);
        self.peak.store(live, Ordering::Relaxed);
        live
    }

    /// Bytes held now.
    #[cfg(feature = "fault-injection")]
    pub(crate) fn live(&self) -> u64 {
        self.live.load(Ordering::Relaxed)
    }

    /// The most held since the last reset (concurrent calls on the context add up).
    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

impl Settings {
    /// Elements per work-item in a scan tile of `dtype`.
    pub(crate) fn tile_items(&self, dtype: DType) -> usize {
        (self.tile_bytes[dtype as usize] / dtype.size()).max(1)
    }
}

/// A GPU tier: its device, what the drivers need to know about it, and its programs.
pub(crate) struct Gpu<D: Device> {
    pub(crate) device: D,
    pub(crate) settings: Settings,
    pub(crate) meter: Arc<MemoryMeter>,
    programs: Mutex<HashMap<ProgramKind, Arc<D::Program>>>,
    /// The single-pass scan's ticket and tile states, kept between calls.
    scan_words: Mutex<ScanWords<D>>,
    /// Argmin's count of finished groups and its scratch, kept between calls.
    arg_words: Mutex<ArgWords<D>>,
    /// Set by the first error after which the device context is unusable (a sticky
    /// CUDA error, a lost OpenCL queue): every later call is refused with it.
    lost: OnceLock<String>,
}

/// Device words the single-pass scan keeps from one call to the next (primitives.cl):
/// its ticket, which every call leaves at zero, and its tile states, which carry the
/// epoch of the call that wrote them; zeroed when allocated and every SCAN_EPOCHS
/// calls, not on every call. Callers hold the lock while they issue the kernel, so
/// calls from several threads take their epochs in stream order.
pub(crate) struct ScanWords<D: Device> {
    pub(crate) words: Option<DeviceBuffer<D, u64>>,
    /// The epoch of the last scan that used `words` (0: none since they were zeroed).
    pub(crate) epoch: u32,
}

/// Device words argmin keeps from one call to the next: the count of finished groups
/// (ARG_LAST_GROUP in primitives.cl), zeroed once and left at zero by every call, and
/// the scratch for the partial results and the answer. Callers hold the lock until
/// they have read the answer. Saves each call an allocation (and its release).
pub(crate) struct ArgWords<D: Device> {
    pub(crate) done: Option<DeviceBuffer<D, u32>>,
    pub(crate) scratch: Option<DeviceBuffer<D, u64>>,
}

/// Locks one of a Gpu's mutexes (`what` names it in the error).
fn locked<'a, X>(mutex: &'a Mutex<X>, what: &str) -> Result<std::sync::MutexGuard<'a, X>> {
    mutex
        .lock()
        .map_err(|_| Error::internal(format!("the GPU's {what} was poisoned by a panic")))
}

impl<D: Device> Gpu<D> {
    pub(crate) fn new(device: D, settings: Settings) -> Self {
        Gpu {
            device,
            settings,
            meter: Arc::new(MemoryMeter::default()),
            programs: Mutex::new(HashMap::new()),
            scan_words: Mutex::new(ScanWords {
                words: None,
                epoch: 0,
            }),
            arg_words: Mutex::new(ArgWords {
                done: None,
                scratch: None,
            }),
            lost: OnceLock::new(),
        }
    }

    /// Runs one driver call of the device: refused once the context is lost, failed on
    /// purpose by the fault-injection tests, and remembered when it loses the context.
    fn driver<T>(&self, what: &str, call: impl FnOnce() -> Result<T>) -> Result<T> {
        // A lock-free read: this runs on every driver call.
        if let Some(why) = self.lost.get() {
            return Err(Error::new(
                Status::DeviceError,
                format!(
                    "{} cannot be used after an earlier failure ({why}); destroy this gpumst context and create a new one",
                    self.settings.name
                ),
            ));
        }
        let outcome = match crate::testing::driver_fault() {
            Some(fault) => Err(self.device.injected_error(what, fault)),
            None => call(),
        };
        if let Err(e) = &outcome {
            if e.is_context_lost() {
                // The first loss is the one reported from then on.
                let _ = self.lost.set(e.message().to_string());
            }
        }
        outcome
    }

    pub(crate) fn device_name(&self) -> String {
        self.settings.name.clone()
    }

    pub(crate) fn memory_bytes(&self) -> u64 {
        self.settings.global_memory
    }

    pub(crate) fn supports_dtype(&self, dtype: DType) -> bool {
        dtype != DType::F64 || self.settings.fp64
    }

    /// Work-groups that keep every compute unit busy, for kernels that walk tiles.
    fn resident_groups(&self) -> usize {
        self.settings.compute_units * self.settings.groups_per_unit
    }

    /// The built program, building it on first use (once per context).
    fn program(&self, kind: ProgramKind) -> Result<Arc<D::Program>> {
        if let ProgramKind::Primitives(dtype, ..) = kind {
            if !self.supports_dtype(dtype) {
                return Err(Error::backend_unavailable(format!(
                    "{} cannot run {} primitives",
                    self.settings.name,
                    dtype.name()
                )));
            }
        }
        let mut cache = locked(&self.programs, "program cache")?;
        if let Some(program) = cache.get(&kind) {
            return Ok(program.clone());
        }
        let program = Arc::new(self.driver("building a program", || {
            self.device.build(kind, &self.settings)
        })?);
        cache.insert(kind, program.clone());
        Ok(program)
    }

    /// A zero-length-safe device buffer of `len` elements (contents undefined).
    fn alloc<T>(&self, len: usize) -> Result<DeviceBuffer<D, T>> {
        let bytes = (len.max(1) as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        if bytes > self.settings.max_allocation {
            return Err(Error::new(
                Status::OutOfMemory,
                format!(
                    "a device buffer of {bytes} bytes exceeds the largest allocation {} allows ({} bytes)",
                    self.settings.name, self.settings.max_allocation
                ),
            ));
        }
        // Device buffers count as input-sized allocations for the fault-injection tests.
        crate::testing::allocation("a device buffer", len)?;
        let memory = self.driver("allocating device memory", || {
            self.device.alloc(bytes as usize)
        })?;
        self.meter.add(bytes);
        Ok(DeviceBuffer {
            memory,
            len,
            capacity: len,
            bytes,
            meter: self.meter.clone(),
            element: PhantomData,
        })
    }

    /// Makes `kept` (a buffer kept between calls) hold at least `len` elements, and
    /// zeroes it when it is new or `zero` says so: whether it did. On failure it holds
    /// nothing, so no later call trusts a buffer that was not zeroed.
    fn keep_zeroed<T: Plain>(
        &self,
        kept: &mut Option<DeviceBuffer<D, T>>,
        len: usize,
        zero: bool,
    ) -> Result<bool> {
        let mut buffer = match kept.take() {
            Some(buffer) if buffer.len() >= len && !zero => {
                *kept = Some(buffer);
                return Ok(false);
            }
            Some(buffer) if buffer.len() >= len => buffer,
            smaller => {
                drop(smaller); // freed before the larger one is taken
                self.alloc::<T>(len)?
            }
        };
        let all = buffer.len();
        self.fill(&mut buffer, T::default(), all)?;
        *kept = Some(buffer);
        Ok(true)
    }

    /// The caller's device memory at `address` as a buffer of `len` elements (not
    /// counted by the meter, never freed by gpumst).
    ///
    /// # Safety
    /// As [`Device::wrap`].
    pub(crate) unsafe fn wrap<T>(
        &self,
        address: usize,
        len: usize,
        what: &str,
    ) -> Result<DeviceBuffer<D, T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            Error::invalid_argument(format!("{what}: {len} elements do not fit in memory"))
        })?;
        if address == 0 {
            return Err(Error::invalid_argument(format!(
                "{what} is a null device address"
            )));
        }
        // SAFETY: passed on from the caller.
        let memory = self.driver("wrapping device memory", || unsafe {
            self.device.wrap(address, bytes, what)
        })?;
        Ok(DeviceBuffer {
            memory,
            len,
            capacity: len,
            bytes: 0,
            meter: self.meter.clone(),
            element: PhantomData,
        })
    }

    /// See [`Device::follow`].
    ///
    /// # Safety
    /// As [`Device::follow`].
    pub(crate) unsafe fn follow(&self, queue: *mut std::ffi::c_void) -> Result<()> {
        if queue.is_null() {
            return Ok(());
        }
        // SAFETY: passed on from the caller.
        self.driver("waiting for the caller's queue", || unsafe {
            self.device.follow(queue)
        })
    }

    /// Assumes at most `bytes` of device memory (0: leaves the device's, or the
    /// environment's cap, as it is).
    pub(crate) fn limit_memory(&mut self, bytes: u64) {
        if bytes > 0 {
            self.settings.global_memory = self.settings.global_memory.min(bytes);
            self.settings.max_allocation = self.settings.max_allocation.min(bytes);
            self.device.memory_limited();
        }
    }

    pub(crate) fn native_handles(&self) -> NativeHandles {
        self.device.native_handles()
    }

    /// A device copy of `data`.
    fn upload<T: Plain>(&self, data: &[T]) -> Result<DeviceBuffer<D, T>> {
        let mut buffer = self.alloc::<T>(data.len())?;
        self.write_at(&mut buffer, 0, data)?;
        Ok(buffer)
    }

    /// Writes each filling (see [`DeviceBuffer::filling`]) at once: on CUDA, arrays
    /// that fit one transfer buffer together cross in one host pass and one wait-free
    /// batch of copies, instead of a wait for each array's copy.
    pub(crate) fn write_together(&self, fillings: &mut [Filling<'_, D>]) -> Result<()> {
        self.driver("a copy to the device", || self.device.write_all(fillings))
    }

    /// Copies `data` into `buffer` from element `at` on.
    fn write_at<T: Plain>(
        &self,
        buffer: &mut DeviceBuffer<D, T>,
        at: usize,
        data: &[T],
    ) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        assert!(
            at + data.len() <= buffer.len,
            "write past a device buffer's end"
        );
        self.driver("a copy to the device", || {
            self.device.write(
                &mut buffer.memory,
                at * std::mem::size_of::<T>(),
                bytes_of(data),
            )
        })
    }

    /// Copies the whole of `source`, a buffer of `peer` (its work on it finished), to
    /// element `at` of `target` on this device: device to device where the tier can,
    /// else through the host (and then done when this returns).
    fn copy_from_peer<T: Plain>(
        &self,
        peer: &Gpu<D>,
        source: &DeviceBuffer<D, T>,
        target: &mut DeviceBuffer<D, T>,
        at: usize,
    ) -> Result<()> {
        let len = source.len;
        if len == 0 {
            return Ok(());
        }
        assert!(at + len <= target.len, "a copy past a device buffer's end");
        let size = std::mem::size_of::<T>();
        let copied = self.driver("a copy from another device", || {
            self.device.copy_from_peer(
                &peer.device,
                &source.memory,
                0,
                &mut target.memory,
                at * size,
                len * size,
            )
        })?;
        if !copied {
            let mut host = crate::alloc::filled(len, T::default(), "a copy between devices")?;
            peer.read(source, &mut host)?;
            self.write_at(target, at, &host)?;
        }
        Ok(())
    }

    /// Copies `len` elements from element `from` of `source` to element `at` of
    /// `target`, in order behind the work issued so far.
    fn copy_at<T>(
        &self,
        source: &DeviceBuffer<D, T>,
        from: usize,
        target: &mut DeviceBuffer<D, T>,
        at: usize,
        len: usize,
    ) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        assert!(
            from + len <= source.len && at + len <= target.len,
            "a device copy past a buffer's end"
        );
        let size = std::mem::size_of::<T>();
        self.driver("a copy on the device", || {
            self.device.copy(
                &source.memory,
                from * size,
                &mut target.memory,
                at * size,
                len * size,
            )
        })
    }

    /// See [`Device::write_beside`].
    fn write_beside(&self, fillings: &mut [Filling<'_, D>]) -> Result<()> {
        self.driver("a copy to the device beside other work", || {
            self.device.write_beside(fillings)
        })
    }

    /// See [`Device::stage`].
    fn stage(&self, pieces: &[&[u8]], stop: &AtomicBool) -> Result<Option<D::Staged>> {
        self.driver("staging host bytes in page-locked memory", || {
            self.device.stage(pieces, stop)
        })
    }

    /// See [`Device::write_staged`].
    fn write_staged(&self, staged: D::Staged, into: &mut [Filling<'_, D>]) -> Result<()> {
        self.driver("a staged copy to the device beside other work", || {
            self.device.write_staged(staged, into)
        })
    }

    /// See [`Device::prepare_beside`].
    fn prepare_beside(&self) -> Result<()> {
        self.driver("ordering copies beside other work", || {
            self.device.prepare_beside()
        })
    }

    /// See [`Device::await_beside`].
    fn await_beside(&self) -> Result<()> {
        self.driver("waiting for copies beside other work", || {
            self.device.await_beside()
        })
    }

    /// See [`Device::mark_beside`].
    fn mark_beside(&self) -> Result<Option<D::Mark>> {
        self.driver("marking copies beside other work", || {
            self.device.mark_beside()
        })
    }

    /// See [`Device::await_mark`].
    fn await_mark(&self, mark: D::Mark) -> Result<()> {
        self.driver("waiting for marked copies beside other work", || {
            self.device.await_mark(mark)
        })
    }

    /// See [`Device::mark_main`].
    fn mark_main(&self) -> Result<Option<D::Mark>> {
        self.driver("marking the device's work so far", || {
            self.device.mark_main()
        })
    }

    /// See [`Device::beside_after`].
    fn beside_after(&self, mark: D::Mark) -> Result<()> {
        self.driver("ordering copies after marked work", || {
            self.device.beside_after(mark)
        })
    }

    /// Copies the first `out.len()` elements of `buffer` into `out` (blocking).
    fn read<T: Plain>(&self, buffer: &DeviceBuffer<D, T>, out: &mut [T]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        assert!(out.len() <= buffer.len, "read past a device buffer's end");
        self.driver("a copy from the device", || {
            self.device.read(&buffer.memory, 0, bytes_of_mut(out))
        })
    }

    fn read_one<T: Plain>(&self, buffer: &DeviceBuffer<D, T>, index: usize) -> Result<T> {
        assert!(index < buffer.len.max(1), "read past a device buffer's end");
        let mut value = [T::default()];
        self.driver("a copy from the device", || {
            self.device.read(
                &buffer.memory,
                index * std::mem::size_of::<T>(),
                bytes_of_mut(&mut value),
            )
        })?;
        Ok(value[0])
    }

    /// See [`Device::read_later`].
    fn read_later(&self, buffer: &DeviceBuffer<D, u32>, index: usize) -> Result<D::Pending> {
        assert!(index < buffer.len.max(1), "read past a device buffer's end");
        self.driver("a copy from the device", || {
            self.device.read_later(&buffer.memory, 4 * index)
        })
    }

    /// Sets the first `len` elements of `buffer` to `value`.
    fn fill<T: Plain>(&self, buffer: &mut DeviceBuffer<D, T>, value: T, len: usize) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        assert!(len <= buffer.len, "fill past a device buffer's end");
        self.driver("a fill", || {
            self.device.fill(&mut buffer.memory, value, len)
        })
    }

    /// Launches `name` over `items` work-items (rounded up to whole groups of `group`
    /// work-items, or of the tier's group size when 0).
    fn launch(
        &self,
        program: &D::Program,
        name: &str,
        items: usize,
        group: usize,
        args: &[Arg<D>],
    ) -> Result<()> {
        if items == 0 {
            return Ok(());
        }
        let group = if group == 0 {
            self.settings.group_size
        } else {
            group
        };
        self.driver("a kernel launch", || {
            self.device
                .launch(program, name, items.div_ceil(group), group, args)
        })
    }

    /// How many work-groups of `group` work-items of kernel `name` the device holds at
    /// once (see [`Device::groups_per_unit_together`]).
    fn groups_together(
        &self,
        program: &D::Program,
        name: &str,
        group: usize,
    ) -> Result<Option<usize>> {
        let per_unit = self.driver("an occupancy query", || {
            self.device.groups_per_unit_together(program, name, group)
        })?;
        Ok(per_unit.map(|per_unit| per_unit * self.settings.compute_units))
    }

    /// See [`Device::launch_together`].
    fn launch_together(
        &self,
        program: &D::Program,
        name: &str,
        groups: usize,
        group: usize,
        args: &[Arg<D>],
    ) -> Result<bool> {
        self.driver("a launch of resident work-groups", || {
            self.device
                .launch_together(program, name, groups, group, args)
        })
    }

    fn finish(&self) -> Result<()> {
        self.driver("waiting for the device", || self.device.finish())
    }

    /// See [`Device::poll`].
    fn poll(&self, pending: &mut D::Pending, wait: bool) -> Result<Option<u32>> {
        self.driver("waiting for a copy", || self.device.poll(pending, wait))
    }

    /// See [`Device::time`].
    pub(crate) fn time<R>(&self, work: impl FnOnce() -> Result<R>) -> Result<(R, Option<f64>)> {
        self.driver("timing device work", || self.device.time(work))
    }

    /// A device copy of `data` for the caller, complete on return: the caller may hand
    /// its address to work of its own on another queue.
    pub(crate) fn upload_buffer<T: Plain>(&self, data: &[T]) -> Result<DeviceBuffer<D, T>> {
        let buffer = self.upload(data)?;
        self.finish()?;
        Ok(buffer)
    }

    pub(crate) fn download_buffer<T: Plain>(
        &self,
        buffer: &DeviceBuffer<D, T>,
        out: &mut [T],
    ) -> Result<()> {
        self.read(buffer, out)
    }
}

/// A kernel argument.
pub(crate) enum Arg<D: Device> {
    Mem(D::Handle),
    U32(u32),
    U64(u64),
}

// Not derived: the derive would ask D itself to be Copy.
impl<D: Device> Clone for Arg<D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<D: Device> Copy for Arg<D> {}

/// [`Device::write_all`] as one `write` per piece.
pub(crate) fn write_each<D: Device>(device: &D, fillings: &mut [Filling<'_, D>]) -> Result<()> {
    for filling in fillings {
        for (offset, piece) in placed(&filling.pieces) {
            device.write(filling.memory, offset, piece)?;
        }
    }
    Ok(())
}

/// A filling's non-empty pieces, each with its byte offset in the buffer (the pieces
/// lie one after another from byte 0).
pub(crate) fn placed<'p>(pieces: &'p [&'p [u8]]) -> impl Iterator<Item = (usize, &'p [u8])> {
    pieces
        .iter()
        .scan(0, |offset, piece| {
            let at = *offset;
            *offset += piece.len();
            Some((at, *piece))
        })
        .filter(|(_, piece)| !piece.is_empty())
}

/// Bytes for the start of a device buffer, as pieces written one after another.
pub(crate) struct Filling<'a, D: Device> {
    pub(crate) memory: &'a mut D::Memory,
    pub(crate) pieces: Vec<&'a [u8]>,
}

/// A device array of `len` elements, released when dropped (on every path).
pub(crate) struct DeviceBuffer<D: Device, T> {
    memory: D::Memory,
    len: usize,
    capacity: usize,
    /// The allocation's size, for the meter.
    bytes: u64,
    meter: Arc<MemoryMeter>,
    element: PhantomData<T>,
}

impl<D: Device, T> Drop for DeviceBuffer<D, T> {
    fn drop(&mut self) {
        self.meter.sub(self.bytes);
    }
}

impl<D: Device, T> DeviceBuffer<D, T> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// This buffer's first elements as `pieces` joined, for [`Gpu::write_together`].
    pub(crate) fn filling<'a>(&'a mut self, pieces: &[&'a [T]]) -> Filling<'a, D>
    where
        T: Plain,
    {
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        assert!(total <= self.len, "write past a device buffer's end");
        Filling {
            memory: &mut self.memory,
            pieces: pieces.iter().map(|p| bytes_of(p)).collect(),
        }
    }

    /// Uses the first `len` elements (at most the allocated count) from now on.
    fn set_len(&mut self, len: usize) {
        assert!(
            len <= self.capacity,
            "device buffer of {} elements cannot hold {len}",
            self.capacity
        );
        self.len = len;
    }

    fn arg(&self) -> Arg<D> {
        Arg::Mem(D::handle(&self.memory))
    }

    /// The same memory as elements of type U, of T's size.
    pub(crate) fn cast<U>(self) -> DeviceBuffer<D, U> {
        assert_eq!(
            std::mem::size_of::<T>(),
            std::mem::size_of::<U>(),
            "a device buffer cast to elements of another size"
        );
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so its memory and meter are moved out once
        // each (the meter's count goes with them); device memory holds bytes whatever
        // the element type says.
        let (memory, meter) =
            unsafe { (std::ptr::read(&this.memory), std::ptr::read(&this.meter)) };
        DeviceBuffer {
            memory,
            len: this.len,
            capacity: this.capacity,
            bytes: this.bytes,
            meter,
            element: PhantomData,
        }
    }

    /// See [`Device::address`].
    pub(crate) fn address(&self) -> usize {
        D::address(&self.memory)
    }

    /// See [`Device::starts_on_16_bytes`].
    pub(crate) fn starts_on_16_bytes(&self) -> bool {
        D::starts_on_16_bytes(&self.memory)
    }
}

/// The value of `-DNAME=` in a program's build options.
pub(crate) fn define(options: &str, name: &str) -> Option<usize> {
    let key = format!("-D{name}=");
    options
        .split_whitespace()
        .find_map(|o| o.strip_prefix(&key))
        .and_then(|v| v.parse().ok())
}

/// A non-negative integer from the environment variable `name`, if set and valid.
fn integer_setting(name: &str) -> Option<usize> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
}

/// Reads a tuning knob from the environment (a positive integer), or `default`.
pub(crate) fn tuning(name: &str, default: usize) -> usize {
    integer_setting(name).filter(|&v| v > 0).unwrap_or(default)
}

/// The `GPUMST_GPU_*` tuning knobs of both GPU tiers (`scripts/device.sh` sweeps them),
/// read from the environment once per process: they are consulted on every call.
pub(crate) struct Knobs {
    /// Segmented argmin gives runs of lanes to segments from this average length.
    pub lanes_from: usize,
    /// Elements each of those lanes should fold.
    pub items_per_lane: usize,
    /// Argmin launches this many times the work-groups the device holds at once.
    pub arg_waves: usize,
    /// Rounds the `auto` MSF's host may run ahead of the worklist lengths it has read
    /// back (0 waits for every round's length).
    pub lookahead: usize,
    /// The `auto` MSF's light phases run on graphs of at least this many edges per 100
    /// vertices.
    pub filter_from: usize,
    /// The `auto` MSF runs a phase's remaining rounds in one launch of resident
    /// work-groups once its worklist holds at most this many edges, where the tier can
    /// (0: never).
    pub resident_below: usize,
    /// Work-items per group of that launch.
    pub resident_group: usize,
    /// Its groups per compute unit (at most what fits; 0: as many as fit).
    pub resident_groups_per_unit: usize,
    /// Single-pass scans between zeroings of their kept tile states (tests make it
    /// small to exercise the zeroing; at most the 2^29 epochs a state word holds).
    pub scan_epochs: u32,
}

pub(crate) fn knobs() -> &'static Knobs {
    static KNOBS: std::sync::OnceLock<Knobs> = std::sync::OnceLock::new();
    KNOBS.get_or_init(|| Knobs {
        lanes_from: tuning(
            "GPUMST_GPU_LANES_FROM",
            primitives::ITEMS_PER_SEGMENT_FOR_LANES,
        ),
        items_per_lane: tuning("GPUMST_GPU_ITEMS_PER_LANE", primitives::ITEMS_PER_LANE),
        arg_waves: tuning("GPUMST_GPU_ARG_WAVES", primitives::ARG_WAVES),
        lookahead: integer_setting("GPUMST_GPU_LOOKAHEAD").unwrap_or(msf::LOOKAHEAD),
        filter_from: tuning("GPUMST_GPU_FILTER_FROM", msf::FILTER_FROM),
        resident_below: integer_setting("GPUMST_GPU_RESIDENT_BELOW").unwrap_or(msf::RESIDENT_BELOW),
        resident_group: tuning("GPUMST_GPU_RESIDENT_GROUP", msf::RESIDENT_GROUP),
        resident_groups_per_unit: integer_setting("GPUMST_GPU_RESIDENT_GROUPS_PER_UNIT")
            .unwrap_or(msf::RESIDENT_GROUPS_PER_UNIT),
        scan_epochs: tuning("GPUMST_GPU_SCAN_EPOCHS", primitives::SCAN_EPOCHS as usize)
            .clamp(2, primitives::SCAN_EPOCHS as usize) as u32,
    })
}

/// `GPUMST_<API>_SCAN=single-pass|reduce-then-scan` overrides a tier's choice of scan
/// (`default`): whether scans take the single pass.
pub(crate) fn single_pass_scan(variable: &str, default: bool) -> Result<bool> {
    match std::env::var(variable).as_deref().map(str::trim) {
        Ok("single-pass") => Ok(true),
        Ok("reduce-then-scan") => Ok(false),
        Ok(other) => Err(Error::invalid_argument(format!(
            "{variable}='{other}': expected single-pass or reduce-then-scan"
        ))),
        Err(_) => Ok(default),
    }
}

/// `GPUMST_<API>_MEMORY_LIMIT=BYTES` caps the device memory gpumst assumes (both the
/// total and the largest allocation), to exercise the out-of-memory paths.
pub(crate) fn memory_limit(variable: &str) -> Result<u64> {
    Ok(bytes_setting(variable)?.unwrap_or(u64::MAX))
}

/// A number of bytes from the environment variable `variable`, if set.
pub(crate) fn bytes_setting(variable: &str) -> Result<Option<u64>> {
    match std::env::var(variable) {
        Ok(text) => text.trim().parse::<u64>().map(Some).map_err(|_| {
            Error::invalid_argument(format!("{variable}='{text}' is not a number of bytes"))
        }),
        Err(_) => Ok(None),
    }
}
