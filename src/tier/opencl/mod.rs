//! The OpenCL tier: kernels from `kernels/opencl/`, compiled at run time by whatever
//! platform the system's ICD loader offers (opencl3 with its `dynamic` feature, so the
//! library has no link-time dependency on libOpenCL).
//!
//! This module owns the device, its queue, the cache of built programs, buffer
//! allocation and kernel launches; `primitives` and `msf` drive the kernels.

mod msf;
mod primitives;

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_device_type, cl_int, cl_mem, CL_BLOCKING};

use super::probe;
use crate::types::{DType, ScanOp};
use crate::{Error, Result, Status};

pub(crate) use msf::solve as msf_solve;

/// The kernel sources, embedded in the library.
const TYPES_SOURCE: &str = include_str!("../../../kernels/opencl/types.cl");
const PRIMITIVES_SOURCE: &str = include_str!("../../../kernels/opencl/primitives.cl");
const MSF_SOURCE: &str = include_str!("../../../kernels/opencl/msf.cl");

/// `GPUMST_OPENCL_ATOMICS=32` makes the MSF kernels use only 32-bit atomics, as on a
/// device without 64-bit ones (for testing that path on any device).
pub(crate) const ATOMICS_ENV: &str = "GPUMST_OPENCL_ATOMICS";

/// `GPUMST_OPENCL_MEMORY_LIMIT=BYTES` caps the device memory gpumst assumes (both the
/// total and the largest allocation), to exercise the out-of-memory paths.
pub(crate) const MEMORY_LIMIT_ENV: &str = "GPUMST_OPENCL_MEMORY_LIMIT";

/// Work-items per work-group (clamped to the device's limit; `GPUMST_OPENCL_GROUP_SIZE`
/// overrides it, rounded down to a power of two).
const PREFERRED_GROUP: usize = 256;

/// Tuning knobs read once: `GPUMST_OPENCL_TILE_BYTES` (bytes per work-item in a scan
/// tile; default 128 where a work-group may use 48 KiB of local memory, else 32) and
/// `GPUMST_OPENCL_GROUPS_PER_UNIT` (work-groups per compute unit for kernels that walk
/// tiles, default 8).
fn tuning(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&v| v > 0)
        .unwrap_or(default)
}

/// Bytes per work-item in a scan tile: big tiles amortize the work-group scan (an H200
/// scans 2^28 u32 in 0.86 ms with 128 bytes, 1.74 ms with 32), if local memory holds
/// them (about 1.3 KiB of it per byte here, with 256 work-items).
fn tile_bytes(local_memory: u64) -> usize {
    let default = if local_memory >= 48 * 1024 { 128 } else { 32 };
    tuning("GPUMST_OPENCL_TILE_BYTES", default).clamp(8, 256)
}

/// `GPUMST_OPENCL_SCAN=single-pass|reduce-then-scan` overrides the scan chosen for a
/// device (so both are tested on any device).
pub(crate) const SCAN_ENV: &str = "GPUMST_OPENCL_SCAN";

/// `GPUMST_OPENCL_SHUFFLE=0` turns off the warp-shuffle work-group scan on NVIDIA GPUs
/// (for comparison; the portable Hillis-Steele scan runs instead).
pub(crate) const SHUFFLE_ENV: &str = "GPUMST_OPENCL_SHUFFLE";

/// Which program: the primitives for one (element type, operator), or the MSF kernels
/// in one configuration.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum ProgramKind {
    /// The bool: the scans read head flags (segmented).
    Primitives(DType, ScanOp, bool),
    Msf(msf::KernelConfig),
}

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

/// An opened OpenCL device.
pub(crate) struct OpenClTier {
    context: ClContext,
    queue: CommandQueue,
    name: String,
    global_memory: u64,
    max_allocation: u64,
    compute_units: usize,
    group_size: usize,
    /// `cl_khr_int64_base_atomics` and `cl_khr_int64_extended_atomics` (64-bit atom_min).
    int64_atomics: bool,
    tile_bytes: usize,
    /// Whether 4-byte scans run in a single pass (see primitives.cl).
    single_pass_scan: bool,
    /// `cl_khr_fp64` (f64 elements).
    fp64: bool,
    /// Work-group scans use warp shuffles through inline PTX (NVIDIA GPUs only).
    nv_shuffle: bool,
    programs: Mutex<HashMap<ProgramKind, Arc<Program>>>,
}

impl OpenClTier {
    /// Opens the `index`-th usable device in preference order.
    pub(crate) fn open(index: u32) -> Result<Self> {
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
        let queue = CommandQueue::create_default(&context, 0)
            .map_err(|e| fail("clCreateCommandQueue", e))?;
        let extensions = device.extensions().unwrap_or_default();
        let limit = match std::env::var(MEMORY_LIMIT_ENV) {
            Ok(text) => text.trim().parse::<u64>().map_err(|_| {
                Error::invalid_argument(format!(
                    "{MEMORY_LIMIT_ENV}='{text}' is not a number of bytes"
                ))
            })?,
            Err(_) => u64::MAX,
        };
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
        let single_pass_scan = int64_atomics
            && match std::env::var(SCAN_ENV).as_deref().map(str::trim) {
                Ok("single-pass") => true,
                Ok("reduce-then-scan") => false,
                Ok(other) => {
                    return Err(Error::invalid_argument(format!(
                        "{SCAN_ENV}='{other}': expected single-pass or reduce-then-scan"
                    )))
                }
                Err(_) => forward_progress,
            };
        Ok(OpenClTier {
            tile_bytes: tile_bytes(device.local_mem_size().unwrap_or(0)),
            single_pass_scan,
            context,
            queue,
            name,
            global_memory: device.global_mem_size().unwrap_or(0).min(limit),
            max_allocation: device.max_mem_alloc_size().unwrap_or(0).min(limit),
            compute_units: device.max_compute_units().unwrap_or(1).max(1) as usize,
            group_size,
            int64_atomics: has("cl_khr_int64_base_atomics")
                && has("cl_khr_int64_extended_atomics")
                && std::env::var(ATOMICS_ENV).map_or(true, |v| v.trim() != "32"),
            fp64: has("cl_khr_fp64"),
            nv_shuffle,
            programs: Mutex::new(HashMap::new()),
        })
    }

    pub(crate) fn device_name(&self) -> String {
        self.name.clone()
    }

    pub(crate) fn memory_bytes(&self) -> u64 {
        self.global_memory
    }

    /// Elements per work-item in a scan tile of `dtype`.
    fn tile_items(&self, dtype: DType) -> usize {
        (self.tile_bytes / dtype.size()).max(1)
    }

    /// Whether scans of `dtype` take the single pass.
    fn single_pass(&self, dtype: DType) -> bool {
        self.single_pass_scan && dtype.size() == 4
    }

    pub(crate) fn supports_dtype(&self, dtype: DType) -> bool {
        dtype != DType::F64 || self.fp64
    }

    /// Work-groups that keep every compute unit busy, for kernels that walk tiles.
    fn resident_groups(&self) -> usize {
        static PER_UNIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        self.compute_units * *PER_UNIT.get_or_init(|| tuning("GPUMST_OPENCL_GROUPS_PER_UNIT", 8))
    }

    /// The built program, compiling it on first use (once per context).
    fn program(&self, kind: ProgramKind) -> Result<Arc<Program>> {
        let mut cache = self
            .programs
            .lock()
            .map_err(|_| Error::internal("the OpenCL program cache was poisoned by a panic"))?;
        if let Some(program) = cache.get(&kind) {
            return Ok(program.clone());
        }
        let mut items = 8;
        let (body, defines, what) = match kind {
            ProgramKind::Primitives(dtype, op, segmented) => {
                if !self.supports_dtype(dtype) {
                    return Err(Error::backend_unavailable(format!(
                        "{} lacks cl_khr_fp64, so it cannot run f64 primitives",
                        self.name
                    )));
                }
                items = self.tile_items(dtype);
                (
                    PRIMITIVES_SOURCE,
                    format!(
                        "-DDTYPE={} -DSCAN_OP={} -DSINGLE_PASS={} -DSEGMENTED={} -DNV_SHUFFLE={}",
                        dtype as u32,
                        op as u32,
                        self.single_pass(dtype) as u8,
                        segmented as u8,
                        self.nv_shuffle as u8
                    ),
                    format!("primitives for {} {op:?}", dtype.name()),
                )
            }
            ProgramKind::Msf(config) => (MSF_SOURCE, config.defines(), "MSF kernels".into()),
        };
        let source = format!("{TYPES_SOURCE}\n{body}");
        let options = format!(
            "-cl-std=CL1.2 -DWG={} -DITEMS={items} {defines}",
            self.group_size
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
        let program = Arc::new(program);
        cache.insert(kind, program.clone());
        Ok(program)
    }

    /// A zero-length-safe device buffer of `len` elements (contents undefined).
    fn alloc<T>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = (len.max(1) as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        if bytes > self.max_allocation {
            return Err(Error::new(
                Status::OutOfMemory,
                format!(
                    "a device buffer of {bytes} bytes exceeds the largest allocation {} allows ({} bytes)",
                    self.name, self.max_allocation
                ),
            ));
        }
        // SAFETY: no host pointer is passed (null with flags that do not use one), and
        // the count times size_of::<T>() is the byte size checked above.
        let buffer = unsafe {
            Buffer::<T>::create(
                &self.context,
                CL_MEM_READ_WRITE,
                len.max(1),
                std::ptr::null_mut::<c_void>(),
            )
        }
        .map_err(|e| self.cl_error("clCreateBuffer", e))?;
        Ok(DeviceBuffer {
            buffer,
            len,
            capacity: len,
        })
    }

    /// A device copy of `data`.
    fn upload<T: Copy>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        let mut buffer = self.alloc::<T>(data.len())?;
        self.write(&mut buffer, data)?;
        Ok(buffer)
    }

    fn write<T: Copy>(&self, buffer: &mut DeviceBuffer<T>, data: &[T]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        debug_assert!(data.len() <= buffer.len);
        // SAFETY: the write is blocking, so `data` outlives the transfer, and the
        // buffer holds at least data.len() elements of T.
        unsafe {
            self.queue
                .enqueue_write_buffer(&mut buffer.buffer, CL_BLOCKING, 0, data, &[])
        }
        .map_err(|e| self.cl_error("clEnqueueWriteBuffer", e))?;
        Ok(())
    }

    /// Copies the first `out.len()` elements of `buffer` into `out` (blocking).
    fn read<T: Copy>(&self, buffer: &DeviceBuffer<T>, out: &mut [T]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        debug_assert!(out.len() <= buffer.len);
        // SAFETY: the read is blocking, so `out` is written before we return, and the
        // buffer holds at least out.len() elements of T.
        unsafe {
            self.queue
                .enqueue_read_buffer(&buffer.buffer, CL_BLOCKING, 0, out, &[])
        }
        .map_err(|e| self.cl_error("clEnqueueReadBuffer", e))?;
        Ok(())
    }

    fn read_one<T: Copy + Default>(&self, buffer: &DeviceBuffer<T>, index: usize) -> Result<T> {
        let mut value = [T::default()];
        // SAFETY: blocking read of one element at `index` < buffer.len.
        assert!(index < buffer.len.max(1));
        unsafe {
            self.queue.enqueue_read_buffer(
                &buffer.buffer,
                CL_BLOCKING,
                index * std::mem::size_of::<T>(),
                &mut value,
                &[],
            )
        }
        .map_err(|e| self.cl_error("clEnqueueReadBuffer", e))?;
        Ok(value[0])
    }

    /// Sets the first `len` elements of `buffer` to `value`.
    fn fill<T: Copy>(&self, buffer: &mut DeviceBuffer<T>, value: T, len: usize) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        debug_assert!(len <= buffer.len);
        // SAFETY: the pattern is one T, copied by the driver at enqueue time; the
        // range lies inside the buffer.
        unsafe {
            self.queue.enqueue_fill_buffer(
                &mut buffer.buffer,
                &[value],
                0,
                len * std::mem::size_of::<T>(),
                &[],
            )
        }
        .map_err(|e| self.cl_error("clEnqueueFillBuffer", e))?;
        Ok(())
    }

    /// Enqueues `name` from `program` over `items` work-items (rounded up to whole
    /// groups of `group` work-items, or of the tier's group size when 0).
    fn launch(
        &self,
        program: &Program,
        name: &str,
        items: usize,
        group: usize,
        args: &[Arg],
    ) -> Result<()> {
        if items == 0 {
            return Ok(());
        }
        let group = if group == 0 { self.group_size } else { group };
        let kernel = Kernel::create(program, name).map_err(|e| self.cl_error(name, e))?;
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
        let global = items.div_ceil(group) * group;
        // SAFETY: every argument was set above and the buffers they name are alive
        // until the queue finishes (callers keep them until a blocking read or finish).
        unsafe {
            self.queue.enqueue_nd_range_kernel(
                kernel.get(),
                1,
                std::ptr::null(),
                [global].as_ptr(),
                [group].as_ptr(),
                &[],
            )
        }
        .map_err(|e| self.cl_error(&format!("launching {name}"), e))?;
        Ok(())
    }

    pub(crate) fn upload_buffer<T: Copy>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        self.upload(data)
    }

    pub(crate) fn download_buffer<T: Copy>(
        &self,
        buffer: &DeviceBuffer<T>,
        out: &mut [T],
    ) -> Result<()> {
        self.read(buffer, out)
    }

    fn finish(&self) -> Result<()> {
        self.queue
            .finish()
            .map_err(|e| self.cl_error("clFinish", e))
    }

    fn cl_error(&self, what: &str, e: opencl3::error_codes::ClError) -> Error {
        Error::new(
            status_of(e.0),
            format!("OpenCL {what} failed on {}: {e}", self.name),
        )
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

/// A kernel argument.
#[derive(Clone, Copy)]
pub(crate) enum Arg {
    Mem(cl_mem),
    U32(u32),
    U64(u64),
}

/// A device array of `len` elements, released when dropped (on every path).
pub(crate) struct DeviceBuffer<T> {
    buffer: Buffer<T>,
    len: usize,
    capacity: usize,
}

impl<T> DeviceBuffer<T> {
    pub(crate) fn len(&self) -> usize {
        self.len
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

    fn arg(&self) -> Arg {
        Arg::Mem(self.buffer.get())
    }
}
