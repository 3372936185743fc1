//! The OpenCL tier: kernels from `kernels/opencl/`, compiled at run time by whatever
//! platform the system's ICD loader offers (opencl3 with its `dynamic` feature, so the
//! library has no link-time dependency on libOpenCL).
//!
//! This module owns the device and its queue, builds programs, allocates buffers and
//! launches kernels; the primitives and MSF algorithms in `tier::gpu` drive them.

use opencl3::error_codes::{
    ClError, CL_INVALID_COMMAND_QUEUE, CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES,
};

use crate::testing::DriverFault;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::event::{Event, CL_COMPLETE};
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_device_type, cl_int, cl_mem, CL_BLOCKING, CL_NON_BLOCKING};

use super::gpu::{self, tuning, Arg, Gpu, Plain, ProgramKind, Settings};
use super::probe;
use crate::{Error, Result, Status};
use recycle::{ClMemory, Recycler};

/// The OpenCL tier: the shared GPU drivers on an OpenCL device.
pub(crate) type OpenClTier = Gpu<OpenClDevice>;

/// The kernel sources of kernels/opencl/, embedded in the library without their
/// comments (build.rs; line numbers kept).
/// The kernel sources as build.rs packed them (comments stripped, xz-compressed):
/// types, primitives, MSF kernels.
const SOURCES_XZ: [&[u8]; 3] = [
    include_bytes!(concat!(env!("OUT_DIR"), "/types.cl.xz")),
    include_bytes!(concat!(env!("OUT_DIR"), "/primitives.cl.xz")),
    include_bytes!(concat!(env!("OUT_DIR"), "/msf.cl.xz")),
];

/// The kernel sources, expanded once per process: types, primitives, MSF kernels.
fn sources() -> Result<&'static [String; 3]> {
    static SOURCES: std::sync::OnceLock<std::result::Result<[String; 3], String>> =
        std::sync::OnceLock::new();
    SOURCES
        .get_or_init(|| {
            let expand = |packed: &[u8]| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut xz2::read::XzDecoder::new(packed), &mut text)
                    .map(|_| text)
                    .map_err(|e| format!("the library's OpenCL sources do not expand: {e}"))
            };
            Ok([
                expand(SOURCES_XZ[0])?,
                expand(SOURCES_XZ[1])?,
                expand(SOURCES_XZ[2])?,
            ])
        })
        .as_ref()
        .map_err(|why| Error::internal(why.clone()))
}

/// `GPUMST_OPENCL_ATOMICS=32` makes the MSF kernels use only 32-bit atomics, as on a
/// device without 64-bit ones (for testing that path on any device).
pub(crate) const ATOMICS_ENV: &str = "GPUMST_OPENCL_ATOMICS";

/// `GPUMST_OPENCL_MEMORY_LIMIT=BYTES` caps the device memory gpumst assumes (both the
/// total and the largest allocation), to exercise the out-of-memory paths.
pub(crate) const MEMORY_LIMIT_ENV: &str = "GPUMST_OPENCL_MEMORY_LIMIT";

/// Work-items per work-group (clamped to the device's limit; `GPUMST_OPENCL_GROUP_SIZE`
/// overrides it, rounded down to a power of two).
const PREFERRED_GROUP: usize = 256;

mod recycle;

/// Bytes of dropped buffers a GPU keeps for reuse: a sixteenth of the device's memory,
/// at most 512 MiB (none where gpumst's use of the device is capped: the cap holds).
fn recycle_limit(global_memory: u64) -> usize {
    (global_memory / 16).min(512 << 20) as usize
}

// Tuning knobs: `GPUMST_OPENCL_TILE_BYTES` (bytes per work-item in a scan tile;
// default 128 where a work-group may use 48 KiB of local memory, else 32) and
// `GPUMST_OPENCL_GROUPS_PER_UNIT` (work-groups per compute unit for kernels that walk
// tiles, default 8).

/// Bytes per work-item in a scan tile: big tiles amortize the work-group scan (an H200
/// scans 2^28 u32 in 0.86 ms with 128 bytes, 1.74 ms with 32), if local memory holds
/// them (about 1.3 KiB of it per byte here, with 256 work-items).
fn tile_bytes(local_memory: u64) -> usize {
    let default = if local_memory >= 48 * 1024 { 128 } else { 32 };
    // Whole 16-byte chunks: tiles move in them (primitives.cl).
    tuning("GPUMST_OPENCL_TILE_BYTES", default).clamp(16, 256) / 16 * 16
}

/// `GPUMST_OPENCL_SCAN=single-pass|reduce-then-scan` overrides the scan chosen for a
/// device (so both are tested on any device).
pub(crate) const SCAN_ENV: &str = "GPUMST_OPENCL_SCAN";

/// `GPUMST_OPENCL_SHUFFLE=0` turns off the warp-shuffle work-group scan on NVIDIA GPUs
/// (for comparison; the portable Hillis-Steele scan runs instead).
pub(crate) const SHUFFLE_ENV: &str = "GPUMST_OPENCL_SHUFFLE";

/// An OpenCL device found through the ICD loader, with what gpumst needs to know.
pub(crate) struct DeviceEntry {
    pub device: Device,
    pub platform: String,
    pub kind: cl_device_type,
}

/// Every device of every platform, GPUs first, then accelerators, then CPU devices
/// (the order `device_index` counts in).
pub(crate) fn devices_in_preference_order() -> Result<Vec<DeviceEntry>> {
    if let Err(e) = cl3::load_library() {
        return Err(Error::backend_unavailable(format!(
            "the OpenCL tier is unavailable: the ICD loader could not be opened ({e})"
        )));
    }
    let platforms = opencl3::platform::get_platforms()
        .map_err(|e| Error::backend_unavailable(format!("clGetPlatformIDs failed: {e}")))?;
    let mut entries = Vec::new();
    for platform in platforms {
        let name = platform.name().unwrap_or_else(|_| "(unnamed)".into());
        // A platform with no devices answers CL_DEVICE_NOT_FOUND: nothing to add.
        for id in platform.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default() {
            let device = Device::new(id);
            let kind = device.dev_type().unwrap_or(0);
            entries.push(DeviceEntry {
                device,
                platform: name.clone(),
                kind,
            });
        }
    }
    // The probe's order, so that its judgement of each device lines up with these.
    entries.sort_by_key(|entry| probe::preference_rank(probe::opencl_kind(entry.kind)));
    Ok(entries)
}

/// A built program and the kernel objects made from it, kept for reuse: creating a
/// kernel object for every launch costs a driver call per launch.
pub(crate) struct OpenClProgram {
    program: Program,
    /// The build options (the host reads some defines back: `built_with`).
    options: String,
    /// Locked from setting a kernel's arguments until it is enqueued, so that
    /// concurrent launches of one kernel cannot mix their arguments.
    kernels: Mutex<HashMap<String, Kernel>>,
}

/// A non-blocking read of one u32 into `value`, which lives on the heap so that it
/// stays put while the device writes it.
pub(crate) struct OpenClPending {
    value: Box<[u8; 4]>,
    /// Until the copy is known to be done.
    event: Option<Event>,
}

impl Drop for OpenClPending {
    fn drop(&mut self) {
        if let Some(event) = &self.event {
            // `value` is freed after this, so the copy into it must be over (a failed
            // wait means the queue is broken and the copy will not run).
            let _ = event.wait();
        }
    }
}

/// An opened OpenCL device and its in-order queue.
pub(crate) struct OpenClDevice {
    context: ClContext,
    queue: CommandQueue,
    /// A second queue for writes beside the main queue's work (`write_beside`), made
    /// on first use.
    side_queue: std::sync::OnceLock<CommandQueue>,
    /// For messages.
    name: String,
    /// Work-group scans use warp shuffles through inline PTX (NVIDIA GPUs only).
    nv_shuffle: bool,
    /// The MSF program holds `ec_rounds`, whose work-groups wait for one another
    /// (NVIDIA GPUs only; see `groups_per_unit_together`).
    resident_rounds: bool,
    /// The device's largest work-group (`CL_DEVICE_MAX_WORK_GROUP_SIZE`).
    largest_group: usize,
    /// Buffers kept after use for later allocations (recycle.rs).
    recycler: Arc<Mutex<Recycler>>,
}

/// Opens the `index`-th usable device in preference order.
pub(crate) fn open(index: u32) -> Result<OpenClTier> {
    let entries = devices_in_preference_order()?;
    if entries.is_empty() {
        return Err(Error::backend_unavailable(
            "the OpenCL tier is unavailable: the ICD loader lists no devices",
        ));
    }
    // The probe judged each device, listing them in this same order.
    let probed = &probe::report().opencl.devices;
    if probed.len() != entries.len() {
        return Err(Error::backend_unavailable(format!(
            "the OpenCL platforms changed while running: the probe saw {} device(s), now {}",
            probed.len(),
            entries.len()
        )));
    }
    let usable: Vec<&DeviceEntry> = entries
        .iter()
        .zip(probed)
        .filter(|(_, p)| p.usable)
        .map(|(e, _)| e)
        .collect();
    let Some(entry) = usable.get(index as usize) else {
        return Err(Error::invalid_argument(format!(
            "OpenCL device index {index} is out of range: {} of {} device(s) are usable (see gpumst info)",
            usable.len(),
            entries.len()
        )));
    };
    let device = entry.device;
    let fail = |what: &str, e: opencl3::error_codes::ClError| {
        Error::new(
            status_of(e.0),
            format!("OpenCL {what} failed on '{}': {e}", entry.platform),
        )
    };
    let context = ClContext::from_device(&device).map_err(|e| fail("clCreateContext", e))?;
    #[allow(deprecated)] // clCreateCommandQueue is the OpenCL 1.2 entry point.
    let queue =
        CommandQueue::create_default(&context, 0).map_err(|e| fail("clCreateCommandQueue", e))?;
    let extensions = device.extensions().unwrap_or_default();
    let limit = gpu::memory_limit(MEMORY_LIMIT_ENV)?;
    let has = |ext: &str| extensions.split_whitespace().any(|x| x == ext);
    let max_group = device.max_work_group_size().unwrap_or(1).max(1);
    let group_size =
        prev_power_of_two(tuning("GPUMST_OPENCL_GROUP_SIZE", PREFERRED_GROUP).min(max_group));
    let name = format!(
        "{} ({}, {})",
        device.name().unwrap_or_default().trim(),
        entry.platform.trim(),
        device.version().unwrap_or_default().trim()
    );
    let int64_atomics = has("cl_khr_int64_base_atomics");
    // Work-groups keep running once started on NVIDIA and AMD GPUs; nothing says
    // so elsewhere (CPU devices, other vendors), where the scan must not rely on it.
    let forward_progress = probe::opencl_kind(entry.kind) == "gpu"
        && ["NVIDIA", "AMD", "Advanced Micro Devices"]
            .iter()
            .any(|v| entry.platform.contains(v));
    // NVIDIA's compiler takes inline PTX; its warps are 32 consecutive work-items.
    let nv_shuffle = probe::opencl_kind(entry.kind) == "gpu"
        && entry.platform.contains("NVIDIA")
        && group_size % 32 == 0
        && group_size <= 1024
        && std::env::var(SHUFFLE_ENV).map_or(true, |v| v.trim() != "0");
    // A barrier across a launch needs every group resident at once: NVIDIA's platform
    // runs OpenCL work-groups as CUDA blocks (with inline PTX for the kernel's fence).
    let resident_rounds = probe::opencl_kind(entry.kind) == "gpu"
        && entry.platform.contains("NVIDIA")
        && forward_progress;
    let single_pass_scan = int64_atomics && gpu::single_pass_scan(SCAN_ENV, forward_progress)?;
    let settings = Settings {
        name: name.clone(),
        global_memory: device.global_mem_size().unwrap_or(0).min(limit),
        max_allocation: device.max_mem_alloc_size().unwrap_or(0).min(limit),
        compute_units: device.max_compute_units().unwrap_or(1).max(1) as usize,
        group_size,
        tile_bytes: [tile_bytes(device.local_mem_size().unwrap_or(0)); 6],
        int64_atomics: has("cl_khr_int64_base_atomics")
            && has("cl_khr_int64_extended_atomics")
            && std::env::var(ATOMICS_ENV).map_or(true, |v| v.trim() != "32"),
        single_pass_scan,
        fp64: has("cl_khr_fp64"),
        groups_per_unit: tuning("GPUMST_OPENCL_GROUPS_PER_UNIT", 8),
    };
    let device = OpenClDevice {
        context,
        queue,
        side_queue: std::sync::OnceLock::new(),
        name,
        nv_shuffle,
        resident_rounds,
        largest_group: max_group,
        // Only GPUs keep buffers: a CPU device's cost little to make, and its kept
        // ones would be the process's memory. A capped device (the test knob) keeps
        // none beyond the cap.
        recycler: Recycler::new(
            if probe::opencl_kind(entry.kind) == "gpu" && limit == u64::MAX {
                recycle_limit(settings.global_memory)
            } else {
                0
            },
        ),
    };
    Ok(Gpu::new(device, settings))
}

/// Writes `data` at byte `offset` of `memory` through `queue`, blocking.
fn write_blocking(
    queue: &CommandQueue,
    memory: &mut Buffer<u8>,
    offset: usize,
    data: &[u8],
) -> std::result::Result<(), ClError> {
    // SAFETY: the write is blocking, so `data` outlives the transfer; the caller
    // keeps offset + data.len() inside the buffer.
    unsafe { queue.enqueue_write_buffer(memory, CL_BLOCKING, offset, data, &[]) }.map(|_| ())
}

impl OpenClDevice {
    fn cl_error(&self, what: &str, e: opencl3::error_codes::ClError) -> Error {
        let error = Error::new(
            status_of(e.0),
            format!("OpenCL {what} failed on {}: {e}", self.name),
        );
        // The queue is gone (-36), or NVIDIA's code for a kernel's illegal access
        // (-9999), after which its queue fails every command.
        if matches!(e.0, CL_INVALID_COMMAND_QUEUE | -9999) {
            error.with_context_lost()
        } else {
            error
        }
    }
}

impl gpu::Device for OpenClDevice {
    type Memory = ClMemory;
    type Handle = cl_mem;
    type Program = OpenClProgram;
    type Pending = OpenClPending;
    /// None: results are read from device memory.
    type HostWords = std::convert::Infallible;
    /// None: host edges are written from the caller's memory (`write_beside`).
    type Staged = std::convert::Infallible;
    /// None: `write_beside` returns once its copies are over.
    type Mark = std::convert::Infallible;

    fn injected_error(&self, what: &str, fault: DriverFault) -> Error {
        let code = match fault {
            DriverFault::OutOfMemory => CL_MEM_OBJECT_ALLOCATION_FAILURE,
            DriverFault::LaunchFailed => CL_OUT_OF_RESOURCES,
            DriverFault::ContextLost => CL_INVALID_COMMAND_QUEUE,
        };
        self.cl_error(&format!("{what} (injected)"), ClError(code))
    }

    fn alloc(&self, bytes: usize) -> Result<ClMemory> {
        Recycler::alloc(&self.recycler, bytes.max(1), |bytes| {
            // SAFETY: no host pointer is passed (null with flags that do not use one).
            unsafe {
                Buffer::<u8>::create(
                    &self.context,
                    CL_MEM_READ_WRITE,
                    bytes,
                    std::ptr::null_mut::<c_void>(),
                )
            }
            .map_err(|e| self.cl_error("clCreateBuffer", e))
        })
    }

    unsafe fn wrap(&self, address: usize, bytes: usize, what: &str) -> Result<ClMemory> {
        let memory = address as cl_mem;
        let info = |name| opencl3::memory::get_mem_object_info(memory, name);
        let not_ours = |why: String| {
            Error::invalid_argument(format!(
                "{what}: {address:#x} is not an OpenCL buffer gpumst can use on {} ({why})",
                self.name
            ))
        };
        let owner = info(opencl3::memory::CL_MEM_CONTEXT)
            .map_err(|e| not_ours(format!("clGetMemObjectInfo: {}", ClError(e))))?;
        if isize::from(owner) as usize != self.context.get() as usize {
            return Err(not_ours(
                "it was made in another cl_context; make it in gpumst's (gpumst_context_native)"
                    .into(),
            ));
        }
        let size: usize = info(opencl3::memory::CL_MEM_SIZE)
            .map_err(|e| not_ours(format!("clGetMemObjectInfo: {}", ClError(e))))?
            .into();
        if size < bytes {
            return Err(Error::invalid_argument(format!(
                "{what}: the OpenCL buffer holds {size} bytes, but {bytes} are needed"
            )));
        }
        // SAFETY: a valid cl_mem of this context (checked above, and the caller's
        // promise); the reference taken here is the one Buffer's Drop releases, so the
        // caller's own reference is untouched.
        unsafe { opencl3::memory::retain_mem_object(memory) }
            .map_err(|e| self.cl_error("clRetainMemObject", ClError(e)))?;
        Ok(ClMemory::own(Buffer::new(memory)))
    }

    unsafe fn follow(&self, queue: *mut c_void) -> Result<()> {
        // The caller's queue may be of another device of the context, so its work is
        // waited for from the host: simple, and only as long as that work takes.
        opencl3::command_queue::finish(queue as opencl3::types::cl_command_queue)
            .map_err(|e| self.cl_error("clFinish on the caller's queue", ClError(e)))
    }

    fn native_handles(&self) -> gpu::NativeHandles {
        gpu::NativeHandles {
            context: self.context.get().cast(),
            queue: self.queue.get().cast(),
            device: self.context.default_device().cast(),
        }
    }

    fn address(memory: &ClMemory) -> usize {
        memory.get() as usize
    }

    fn starts_on_16_bytes(_: &ClMemory) -> bool {
        // A kernel sees a buffer (or a sub-buffer, whose origin must be) aligned to
        // CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least the size of long16 (int16 on embedded
        // devices): 64 bytes or more.
        true
    }

    fn handle(memory: &ClMemory) -> cl_mem {
        memory.get()
    }

    fn write(&self, memory: &mut ClMemory, offset: usize, data: &[u8]) -> Result<()> {
        write_blocking(&self.queue, memory, offset, data)
            .map_err(|e| self.cl_error("clEnqueueWriteBuffer", e))
    }

    fn write_staged(&self, staged: Self::Staged, _: &mut [gpu::Filling<'_, Self>]) -> Result<()> {
        match staged {}
    }

    fn await_mark(&self, mark: Self::Mark) -> Result<()> {
        match mark {}
    }

    fn beside_after(&self, mark: Self::Mark) -> Result<()> {
        match mark {}
    }

    fn write_beside(&self, fillings: &mut [gpu::Filling<'_, Self>]) -> Result<()> {
        let queue = match self.side_queue.get() {
            Some(queue) => queue,
            None => {
                let queue = CommandQueue::create_default(&self.context, 0)
                    .map_err(|e| self.cl_error("clCreateCommandQueue (a second queue)", e))?;
                // Another thread may have made one meanwhile: this one is then dropped.
                self.side_queue.get_or_init(|| queue)
            }
        };
        for filling in fillings {
            for (offset, piece) in gpu::placed(&filling.pieces) {
                write_blocking(queue, filling.memory, offset, piece)
                    .map_err(|e| self.cl_error("clEnqueueWriteBuffer (on a second queue)", e))?;
            }
        }
        Ok(())
    }

    fn read(&self, memory: &ClMemory, offset: usize, out: &mut [u8]) -> Result<()> {
        let marked = Recycler::mark(&self.recycler);
        // SAFETY: the read is blocking, so `out` is written before we return; the
        // caller keeps offset + out.len() inside the buffer.
        unsafe {
            self.queue
                .enqueue_read_buffer(memory, CL_BLOCKING, offset, out, &[])
        }
        .map_err(|e| self.cl_error("clEnqueueReadBuffer", e))?;
        // Everything issued before the read is done.
        Recycler::done(&self.recycler, marked);
        Ok(())
    }

    fn host_words(&self) -> Option<Self::HostWords> {
        None
    }

    fn host_words_handle(words: &Self::HostWords) -> cl_mem {
        match *words {}
    }

    fn host_words_read(words: &Self::HostWords) -> [u64; 2] {
        match *words {}
    }

    fn read_later(&self, memory: &ClMemory, offset: usize) -> Result<OpenClPending> {
        let mut value = Box::new([0u8; 4]);
        // SAFETY: the caller keeps offset + 4 inside the buffer; `value` is on the heap,
        // so it does not move, and OpenClPending owns it and waits for the event before
        // freeing it.
        let event = unsafe {
            self.queue
                .enqueue_read_buffer(memory, CL_NON_BLOCKING, offset, &mut value[..], &[])
        }
        .map_err(|e| self.cl_error("clEnqueueReadBuffer", e))?;
        let pending = OpenClPending {
            value,
            event: Some(event),
        };
        // Submitted now, so that polling sees it finish.
        self.queue
            .flush()
            .map_err(|e| self.cl_error("clFlush", e))?;
        Ok(pending)
    }

    fn poll(&self, pending: &mut OpenClPending, wait: bool) -> Result<Option<u32>> {
        if let Some(event) = &pending.event {
            if wait {
                event
                    .wait()
                    .map_err(|e| self.cl_error("clWaitForEvents", e))?;
            } else {
                let status = event
                    .command_execution_status()
                    .map_err(|e| self.cl_error("clGetEventInfo", e))?;
                if status.0 < 0 {
                    return Err(Error::new(
                        Status::DeviceError,
                        format!(
                            "OpenCL read of a result failed on {} with status {}",
                            self.name, status.0
                        ),
                    ));
                }
                if status.0 != CL_COMPLETE {
                    return Ok(None);
                }
            }
            pending.event = None;
        }
        Ok(Some(u32::from_ne_bytes(*pending.value)))
    }

    fn fill<T: Plain>(&self, memory: &mut ClMemory, value: T, count: usize) -> Result<()> {
        let pattern = gpu::bytes_of(std::slice::from_ref(&value));
        // SAFETY: the pattern is copied by the driver at enqueue time; the caller keeps
        // the range inside the buffer.
        unsafe {
            self.queue.enqueue_fill_buffer(
                memory,
                pattern,
                0,
                count * std::mem::size_of::<T>(),
                &[],
            )
        }
        .map_err(|e| self.cl_error("clEnqueueFillBuffer", e))?;
        Ok(())
    }

    fn copy(
        &self,
        source: &ClMemory,
        from: usize,
        target: &mut ClMemory,
        to: usize,
        bytes: usize,
    ) -> Result<()> {
        // SAFETY: the caller keeps both ranges inside their buffers.
        unsafe {
            self.queue
                .enqueue_copy_buffer(source, target, from, to, bytes, &[])
        }
        .map_err(|e| self.cl_error("clEnqueueCopyBuffer", e))?;
        Ok(())
    }

    fn build(&self, kind: ProgramKind, settings: &Settings) -> Result<OpenClProgram> {
        let mut items = 8;
        let [types, primitives, msf] = sources()?;
        let (body, defines, what) = match kind {
            ProgramKind::Primitives(dtype, op, segmented) => {
                items = settings.tile_items(dtype);
                (
                    primitives,
                    format!(
                        "-DDTYPE={} -DSCAN_OP={} -DSINGLE_PASS={} -DSEGMENTED={} -DNV_SHUFFLE={}",
                        dtype as u32,
                        op as u32,
                        settings.single_pass_scan as u8,
                        segmented as u8,
                        self.nv_shuffle as u8
                    ),
                    format!("primitives for {} {op:?}", dtype.name()),
                )
            }
            ProgramKind::Msf(config) => (
                msf,
                format!(
                    "{} -DRESIDENT_ROUNDS={}",
                    config.defines(),
                    self.resident_rounds as u8
                ),
                "MSF kernels".into(),
            ),
        };
        let source = format!("{types}\n{body}");
        let options = format!(
            "-cl-std=CL1.2 -DWG={} -DITEMS={items} {defines}",
            settings.group_size
        );
        let program = Program::create_and_build_from_source(&self.context, &source, &options)
            .map_err(|log| {
                Error::new(
                    Status::DeviceError,
                    format!(
                        "building the OpenCL {what} for {} with '{options}' failed:\n{log}",
                        self.name
                    ),
                )
            })?;
        Ok(OpenClProgram {
            program,
            kernels: Mutex::new(HashMap::new()),
            options,
        })
    }

    fn built_with(program: &OpenClProgram, name: &str) -> Option<usize> {
        gpu::define(&program.options, name)
    }

    fn launch(
        &self,
        program: &OpenClProgram,
        name: &str,
        groups: usize,
        group: usize,
        args: &[Arg<Self>],
    ) -> Result<()> {
        self.enqueue(program, name, groups, group, args, &[])
            .map(|_| ())
    }

    /// One work-group per compute unit: NVIDIA's hardware then runs every group of the
    /// launch at once, as no other kernel runs beside it (the tier's kernels go to one
    /// in-order queue, its second queue only copies, and other contexts' kernels take
    /// turns with this context's; under MPS another process's groups may hold a
    /// multiprocessor, and ours there start when those end). Whether a group of
    /// `group` work-items fits a compute unit shows at the launch (`launch_together`):
    /// NVIDIA's driver reports a kernel work-group size of 256 for every kernel, even a
    /// one-line one, and launches groups of 1024 all the same (H200, driver 580), so
    /// that query cannot say. None where the program was built without the kernel
    /// (other platforms, where `resident_rounds` is false).
    fn groups_per_unit_together(
        &self,
        program: &OpenClProgram,
        _name: &str,
        group: usize,
    ) -> Result<Option<usize>> {
        let built = gpu::define(&program.options, "RESIDENT_ROUNDS") == Some(1);
        Ok((built && group > 0 && group <= self.largest_group).then_some(1))
    }

    /// False where the driver refuses the group as too large for the kernel's
    /// resources (nothing was launched).
    fn launch_together(
        &self,
        program: &OpenClProgram,
        name: &str,
        groups: usize,
        group: usize,
        args: &[Arg<Self>],
    ) -> Result<bool> {
        use opencl3::error_codes::{CL_INVALID_WORK_GROUP_SIZE, CL_OUT_OF_RESOURCES};
        let too_large = [CL_INVALID_WORK_GROUP_SIZE, CL_OUT_OF_RESOURCES];
        self.enqueue(program, name, groups, group, args, &too_large)
    }

    fn memory_limited(&self) {
        Recycler::keep_none(&self.recycler);
    }

    fn finish(&self) -> Result<()> {
        let marked = Recycler::mark(&self.recycler);
        self.queue
            .finish()
            .map_err(|e| self.cl_error("clFinish", e))?;
        Recycler::done(&self.recycler, marked);
        Ok(())
    }
}

impl OpenClDevice {
    /// Runs `work` on the program's kernel `name`, created on first use, with the cache
    /// locked (so that concurrent launches of one kernel cannot mix their arguments).
    fn with_kernel<R>(
        &self,
        program: &OpenClProgram,
        name: &str,
        work: impl FnOnce(&Kernel) -> Result<R>,
    ) -> Result<R> {
        let mut kernels = program
            .kernels
            .lock()
            .map_err(|_| Error::internal("the OpenCL kernel cache was poisoned by a panic"))?;
        if !kernels.contains_key(name) {
            let kernel =
                Kernel::create(&program.program, name).map_err(|e| self.cl_error(name, e))?;
            kernels.insert(name.to_string(), kernel);
        }
        work(&kernels[name])
    }

    /// Launches kernel `name` (its arguments set, then its buffer arguments cleared);
    /// false where the driver refused the enqueue with one of the `declined` codes
    /// (nothing was launched), any other refusal an error.
    fn enqueue(
        &self,
        program: &OpenClProgram,
        name: &str,
        groups: usize,
        group: usize,
        args: &[Arg<Self>],
        declined: &[i32],
    ) -> Result<bool> {
        self.with_kernel(program, name, |kernel| {
            for (index, arg) in args.iter().enumerate() {
                let index = index as u32;
                // SAFETY: each value has the size and representation of the OpenCL
                // parameter at that position in kernels/opencl/*.cl (cl_mem for buffers,
                // uint for U32, ulong for U64).
                let set = unsafe {
                    match arg {
                        Arg::Mem(mem) => kernel.set_arg(index, mem),
                        Arg::U32(value) => kernel.set_arg(index, value),
                        Arg::U64(value) => kernel.set_arg(index, value),
                    }
                };
                set.map_err(|e| self.cl_error(&format!("clSetKernelArg({name}, {index})"), e))?;
            }
            // SAFETY: every argument was set above and the buffers they name are alive
            // until the queue finishes (callers keep them until a blocking read or
            // finish).
            let enqueued = unsafe {
                self.queue.enqueue_nd_range_kernel(
                    kernel.get(),
                    1,
                    std::ptr::null(),
                    [groups * group].as_ptr(),
                    [group].as_ptr(),
                    &[],
                )
            };
            // The enqueued command has its arguments; clear the buffer arguments of the
            // cached kernel object so that no implementation keeps those buffers alive.
            for (index, arg) in args.iter().enumerate() {
                if let Arg::Mem(_) = arg {
                    let none: cl_mem = std::ptr::null_mut();
                    // SAFETY: a null cl_mem is a valid value for a buffer parameter (the
                    // OpenCL specification of clSetKernelArg), and it is never launched
                    // with: every launch sets every argument first.
                    unsafe { kernel.set_arg(index as u32, &none) }.map_err(|e| {
                        self.cl_error(&format!("clSetKernelArg({name}, {index}, NULL)"), e)
                    })?;
                }
            }
            match enqueued {
                Ok(_) => Ok(true),
                Err(ClError(code)) if declined.contains(&code) => Ok(false),
                Err(e) => Err(self.cl_error(&format!("launching {name}"), e)),
            }
        })
    }
}

/// Out-of-memory codes become `OutOfMemory`; everything else is a device error.
fn status_of(code: cl_int) -> Status {
    use opencl3::error_codes::{
        CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_HOST_MEMORY, CL_OUT_OF_RESOURCES,
    };
    match code {
        CL_MEM_OBJECT_ALLOCATION_FAILURE | CL_OUT_OF_RESOURCES | CL_OUT_OF_HOST_MEMORY => {
            Status::OutOfMemory
        }
        _ => Status::DeviceError,
    }
}

fn prev_power_of_two(x: usize) -> usize {
    1 << (usize::BITS - 1 - x.max(1).leading_zeros())
}
