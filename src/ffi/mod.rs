//! The C ABI: a thin, defensive layer over the safe Rust API.
//!
//! Every function validates its pointers and lengths, catches panics, and reports
//! failure as a `gpumst_status` with a message kept on the context (never in
//! thread-local state: callers such as Go move between OS threads). No caller pointer
//! is kept after a function returns. `include/gpumst.h` is generated from this file by
//! cbindgen (see `tests/header.rs`).
#![allow(non_camel_case_types)]
// Every entry point documents its contract in the generated header instead.
#![allow(clippy::missing_safety_doc)]

mod file;
mod memory;
mod msf;
#[cfg(feature = "fault-injection")]
pub mod testing;

pub use device::*;
pub use file::*;
pub use msf::*;

use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use crate::types::{DType, Element, ScanKind, ScanOp};
use crate::{probe, Context, Devices, Error, Options, Result, Status, Tier};
use memory::{input_slice, output_slice, write_string, Region};

/// Library version, also returned by `gpumst_version()`.
pub const GPUMST_VERSION_MAJOR: u32 = 0;
pub const GPUMST_VERSION_MINOR: u32 = 1;
pub const GPUMST_VERSION_PATCH: u32 = 0;

/// Outcome of a call. `GPUMST_OK` is 0; on any other status the context (if any)
/// holds a message: `gpumst_context_last_error`.
pub type gpumst_status = i32;
pub const GPUMST_OK: gpumst_status = 0;
/// A pointer, length, option or enum value is not acceptable.
pub const GPUMST_INVALID_ARGUMENT: gpumst_status = 1;
/// Graph data failed validation.
pub const GPUMST_INVALID_GRAPH: gpumst_status = 2;
/// The requested tier is missing on this machine or lacks the operation.
pub const GPUMST_BACKEND_UNAVAILABLE: gpumst_status = 3;
/// Host or device memory could not be allocated.
pub const GPUMST_OUT_OF_MEMORY: gpumst_status = 4;
/// A GPU driver or runtime call failed.
pub const GPUMST_DEVICE_ERROR: gpumst_status = 5;
/// A bug in gpumst (for example a caught panic).
pub const GPUMST_INTERNAL: gpumst_status = 6;

/// Compute tier.
pub type gpumst_tier = i32;
/// CUDA, then an OpenCL GPU, then the CPU; honours the GPUMST_BACKEND variable.
pub const GPUMST_TIER_AUTO: gpumst_tier = 0;
pub const GPUMST_TIER_CPU: gpumst_tier = 1;
pub const GPUMST_TIER_OPENCL: gpumst_tier = 2;
pub const GPUMST_TIER_CUDA: gpumst_tier = 3;

/// Element type of a `void*` array.
pub type gpumst_dtype = i32;
pub const GPUMST_I32: gpumst_dtype = 0;
pub const GPUMST_U32: gpumst_dtype = 1;
pub const GPUMST_I64: gpumst_dtype = 2;
pub const GPUMST_U64: gpumst_dtype = 3;
pub const GPUMST_F32: gpumst_dtype = 4;
pub const GPUMST_F64: gpumst_dtype = 5;

/// Scan operator. Integer sums wrap; float sums are IEEE. MIN and MAX treat NaN as
/// the extreme (it propagates) and keep the earlier of equal values.
pub type gpumst_scan_op = i32;
pub const GPUMST_SUM: gpumst_scan_op = 0;
pub const GPUMST_MIN: gpumst_scan_op = 1;
pub const GPUMST_MAX: gpumst_scan_op = 2;

/// Inclusive: out[i] covers in[0..i]. Exclusive: out[i] covers in[0..i-1] and each
/// segment starts with the identity (0 for SUM, the type's max / +inf for MIN, the
/// type's min / -inf for MAX).
pub type gpumst_scan_kind = i32;
pub const GPUMST_INCLUSIVE: gpumst_scan_kind = 0;
pub const GPUMST_EXCLUSIVE: gpumst_scan_kind = 1;

/// Index reported for an empty segment, or an empty argmin/argmax.
pub const GPUMST_EMPTY_SEGMENT: u64 = u64::MAX;

/// Options for `gpumst_context_create`. Initialize with `gpumst_options_init`, which
/// sets `struct_size`, so that later library versions can add fields compatibly.
#[repr(C)]
pub struct gpumst_options {
    /// sizeof(gpumst_options) as the caller was compiled with.
    pub struct_size: usize,
    pub tier: gpumst_tier,
    /// Device of the chosen GPU tier (ignored by the CPU tier).
    pub device_index: u32,
    /// CPU worker threads; 0 means all cores.
    pub cpu_threads: u32,
    /// A `CUcontext` the CUDA tier uses instead of the device's primary context (its
    /// device is then the device; `device_index` is ignored by the CUDA tier); NULL:
    /// the primary context. The caller keeps it alive while the gpumst context lives.
    pub cuda_context: *mut c_void,
    /// The most device memory (bytes) a GPU tier may use for one call's buffers; 0:
    /// the device's. A minimum spanning forest larger than it is computed a partition
    /// of the edges at a time (the same forest); primitives larger fail with
    /// GPUMST_OUT_OF_MEMORY. On the CPU tier: the most memory a minimum spanning
    /// forest's working arrays may take beside the caller's graph (0: no cap); a
    /// larger one is computed a part of the edges at a time (the same forest).
    pub device_memory_limit: u64,
    /// Several devices of the chosen GPU tier: `device_count` device indices at
    /// `devices`, the first of which replaces `device_index`. Everything runs on the
    /// first; the minimum spanning forest of an edge list or a CSR graph can be split
    /// across them (same forest), which the environment variable GPUMST_SPLIT_MIN_EDGES turns
    /// on: measured so far, it was slower than one device (see the README). `device_count` 0: `device_index` alone (`devices` is
    /// not read); GPUMST_ALL_DEVICES: every usable device of the tier of the same
    /// kind as `device_index`'s (`devices` is not read). The CPU tier ignores both.
    pub devices: *const u32,
    pub device_count: u32,
}

/// `gpumst_options.device_count` for every usable device of the tier.
pub const GPUMST_ALL_DEVICES: u32 = u32::MAX;

/// An opened library context (opaque). Any function may be called on the same
/// context from several threads at once.
pub struct gpumst_context {
    inner: Context,
    last_error: Mutex<String>,
}

impl gpumst_context {
    fn set_error(&self, message: String) {
        let message = c_message(message);
        // A poisoned lock only means another thread panicked mid-write; the String
        // is still valid, so take it over.
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = message;
    }
}

/// A message as C reads it: a NUL byte (quoted from a file, say) would end the string
/// early, so it is written as `\0`.
fn c_message(message: String) -> String {
    if message.contains('\0') {
        message.replace('\0', "\\0")
    } else {
        message
    }
}

fn status_of(status: Status) -> gpumst_status {
    status as gpumst_status
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Runs `body` on the context behind `ctx`, turning errors and panics into a status
/// and a message on the context.
fn with_context(
    ctx: *const gpumst_context,
    function: &str,
    body: impl FnOnce(&Context) -> Result<()>,
) -> gpumst_status {
    // SAFETY: a non-NULL `ctx` must come from gpumst_context_create and not yet be
    // destroyed (the documented contract); we only take a shared reference.
    let Some(handle) = (unsafe { ctx.as_ref() }) else {
        return GPUMST_INVALID_ARGUMENT;
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| body(&handle.inner)));
    let error = match outcome {
        Ok(Ok(())) => return GPUMST_OK,
        Ok(Err(e)) => e,
        Err(payload) => Error::internal(format!("panic: {}", panic_message(payload.as_ref()))),
    };
    handle.set_error(format!("{function}: {}", error.message()));
    status_of(error.status())
}

/// Runs `body` where there is no context to hold a message.
fn without_context(body: impl FnOnce() -> Result<()>) -> gpumst_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => GPUMST_OK,
        Ok(Err(e)) => status_of(e.status()),
        Err(_) => GPUMST_INTERNAL,
    }
}

fn tier_from_c(tier: gpumst_tier) -> Result<Tier> {
    match tier {
        GPUMST_TIER_AUTO => Ok(Tier::Auto),
        GPUMST_TIER_CPU => Ok(Tier::Cpu),
        GPUMST_TIER_OPENCL => Ok(Tier::OpenCl),
        GPUMST_TIER_CUDA => Ok(Tier::Cuda),
        other => Err(Error::invalid_argument(format!(
            "tier {other} is not a gpumst_tier (0..=3)"
        ))),
    }
}

fn tier_to_c(tier: Tier) -> gpumst_tier {
    tier as gpumst_tier
}

fn op_from_c(op: gpumst_scan_op) -> Result<ScanOp> {
    ScanOp::ALL
        .into_iter()
        .find(|o| *o as i32 == op)
        .ok_or_else(|| Error::invalid_argument(format!("op {op} is not a gpumst_scan_op (0..=2)")))
}

fn kind_from_c(kind: gpumst_scan_kind) -> Result<ScanKind> {
    ScanKind::ALL
        .into_iter()
        .find(|k| *k as i32 == kind)
        .ok_or_else(|| {
            Error::invalid_argument(format!("kind {kind} is not a gpumst_scan_kind (0..=1)"))
        })
}

pub(crate) fn dtype_from_c(dtype: gpumst_dtype) -> Result<DType> {
    DType::ALL
        .into_iter()
        .find(|d| *d as i32 == dtype)
        .ok_or_else(|| {
            Error::invalid_argument(format!("dtype {dtype} is not a gpumst_dtype (0..=5)"))
        })
}

/// Runs `$body` with `$t` bound to the Rust type of a `gpumst_dtype`.
macro_rules! with_element {
    ($dtype:expr, $t:ident => $body:expr) => {
        match dtype_from_c($dtype)? {
            DType::I32 => {
                type $t = i32;
                $body
            }
            DType::U32 => {
                type $t = u32;
                $body
            }
            DType::I64 => {
                type $t = i64;
                $body
            }
            DType::U64 => {
                type $t = u64;
                $body
            }
            DType::F32 => {
                type $t = f32;
                $body
            }
            DType::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}

// After with_element, which it uses (macros are visible below their definition).
mod device;

// ---- version, statuses, options --------------------------------------------------

/// The library version as "MAJOR.MINOR.PATCH" (a static string; do not free).
#[no_mangle]
pub extern "C" fn gpumst_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// A static, human-readable name of a status ("ok", "invalid argument", ...);
/// "unknown status" for a value that is not a gpumst_status.
#[no_mangle]
pub extern "C" fn gpumst_status_string(status: gpumst_status) -> *const c_char {
    let name: &'static [u8] = match Status::ALL.iter().find(|s| **s as i32 == status) {
        Some(Status::Ok) => b"ok\0",
        Some(Status::InvalidArgument) => b"invalid argument\0",
        Some(Status::InvalidGraph) => b"invalid graph\0",
        Some(Status::BackendUnavailable) => b"backend unavailable\0",
        Some(Status::OutOfMemory) => b"out of memory\0",
        Some(Status::DeviceError) => b"device error\0",
        Some(Status::Internal) => b"internal error\0",
        None => b"unknown status\0",
    };
    name.as_ptr().cast()
}

/// A static name of a tier ("auto", "cpu", "opencl", "cuda"), or "unknown".
#[no_mangle]
pub extern "C" fn gpumst_tier_name(tier: gpumst_tier) -> *const c_char {
    let name: &'static [u8] = match tier_from_c(tier) {
        Ok(Tier::Auto) => b"auto\0",
        Ok(Tier::Cpu) => b"cpu\0",
        Ok(Tier::OpenCl) => b"opencl\0",
        Ok(Tier::Cuda) => b"cuda\0",
        Err(_) => b"unknown\0",
    };
    name.as_ptr().cast()
}

/// Fills `options` with defaults: auto tier, device 0, all CPU cores.
/// Returns GPUMST_INVALID_ARGUMENT if `options` is NULL.
#[no_mangle]
pub unsafe extern "C" fn gpumst_options_init(options: *mut gpumst_options) -> gpumst_status {
    without_context(|| {
        // SAFETY: the caller passes NULL or a pointer to a writable gpumst_options.
        let options = unsafe { options.as_mut() }
            .ok_or_else(|| Error::invalid_argument("options is NULL"))?;
        *options = gpumst_options {
            struct_size: std::mem::size_of::<gpumst_options>(),
            tier: GPUMST_TIER_AUTO,
            device_index: 0,
            cpu_threads: 0,
            cuda_context: std::ptr::null_mut(),
            device_memory_limit: 0,
            devices: std::ptr::null(),
            device_count: 0,
        };
        Ok(())
    })
}

// ---- contexts ----------------------------------------------------------------------

/// Opens a context. `options` may be NULL for defaults. On failure `*out` is set to
/// NULL and, if `error` is not NULL, the reason is written there as a NUL-terminated
/// string truncated to `error_capacity` bytes. A forced tier that cannot be used is an
/// error (GPUMST_BACKEND_UNAVAILABLE), never a silent fallback to another tier.
#[no_mangle]
pub unsafe extern "C" fn gpumst_context_create(
    options: *const gpumst_options,
    out: *mut *mut gpumst_context,
    error: *mut c_char,
    error_capacity: usize,
) -> gpumst_status {
    reporting_to_buffer(error, error_capacity, "creating the context", || {
        if out.is_null() {
            return Err(Error::invalid_argument("out is NULL"));
        }
        // SAFETY: checked non-NULL; the caller passes a writable pointer slot.
        unsafe { *out = std::ptr::null_mut() };
        let opts = read_options(options)?;
        let context = Context::new(&opts)?;
        let handle = Box::new(gpumst_context {
            inner: context,
            last_error: Mutex::new(String::new()),
        });
        // SAFETY: as above.
        unsafe { *out = Box::into_raw(handle) };
        Ok(())
    })
}

/// Runs `body` for a function that has no context to keep its message (context
/// creation, file reading): the message of a failure, or of a caught panic while
/// `doing`, goes into the caller's `error` buffer (NUL-terminated, truncated to
/// `error_capacity`); success writes an empty string there.
fn reporting_to_buffer(
    error: *mut c_char,
    error_capacity: usize,
    doing: &str,
    body: impl FnOnce() -> Result<()>,
) -> gpumst_status {
    let mut message = String::new();
    let status = without_context(|| {
        let result = body();
        if let Err(e) = &result {
            message = e.message().to_string();
        }
        result
    });
    if status == GPUMST_INTERNAL && message.is_empty() {
        message = format!("internal error: panic while {doing}");
    }
    if !error.is_null() && error_capacity > 0 {
        // SAFETY: the caller promises `error` has room for `error_capacity` bytes.
        unsafe { write_string(&c_message(message), error, error_capacity) };
    }
    status
}

fn read_options(options: *const gpumst_options) -> Result<Options> {
    // SAFETY: the caller passes NULL or a pointer to a gpumst_options; we read only
    // `struct_size` first, then the fields it says are present.
    let Some(raw) = (unsafe { options.as_ref() }) else {
        return Ok(Options::default());
    };
    if raw.struct_size < std::mem::size_of::<gpumst_options>() {
        return Err(Error::invalid_argument(format!(
            "options.struct_size = {} is smaller than sizeof(gpumst_options) = {}: initialize options with gpumst_options_init",
            raw.struct_size,
            std::mem::size_of::<gpumst_options>()
        )));
    }
    let devices = match raw.device_count {
        0 => Devices::One,
        GPUMST_ALL_DEVICES => Devices::All,
        count => {
            if raw.devices.is_null() {
                return Err(Error::invalid_argument(format!(
                    "options.devices is NULL but options.device_count is {count}"
                )));
            }
            // SAFETY: the caller passes `device_count` readable indices at `devices`.
            let list = unsafe { std::slice::from_raw_parts(raw.devices, count as usize) };
            Devices::List(list.to_vec())
        }
    };
    Ok(Options {
        tier: tier_from_c(raw.tier)?,
        device_index: raw.device_index,
        cpu_threads: raw.cpu_threads as usize,
        cuda_context: raw.cuda_context as usize,
        device_memory_limit: raw.device_memory_limit,
        devices,
    })
}

/// Destroys a context. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn gpumst_context_destroy(ctx: *mut gpumst_context) {
    if !ctx.is_null() {
        // SAFETY: `ctx` came from gpumst_context_create (Box::into_raw) and the caller
        // destroys it once, with no call on it in flight.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(ctx) })));
    }
}

/// The tier the context runs on (never GPUMST_TIER_AUTO).
#[no_mangle]
pub unsafe extern "C" fn gpumst_context_tier(
    ctx: *const gpumst_context,
    tier: *mut gpumst_tier,
) -> gpumst_status {
    with_context(ctx, "gpumst_context_tier", |c| {
        // SAFETY: the caller passes NULL or a writable gpumst_tier.
        let tier =
            unsafe { tier.as_mut() }.ok_or_else(|| Error::invalid_argument("tier is NULL"))?;
        *tier = tier_to_c(c.tier());
        Ok(())
    })
}

/// Copies the device's name into `buffer` (NUL-terminated, truncated to `capacity`)
/// and its full length (without the NUL) into `*length` if `length` is not NULL.
/// `buffer` may be NULL when `capacity` is 0, to ask only for the length.
#[no_mangle]
pub unsafe extern "C" fn gpumst_context_device_name(
    ctx: *const gpumst_context,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> gpumst_status {
    with_context(ctx, "gpumst_context_device_name", |c| {
        copy_out_string(&c.device_name(), buffer, capacity, length)
    })
}

/// Memory of the context's device in bytes (system memory for the CPU tier).
#[no_mangle]
pub unsafe extern "C" fn gpumst_context_device_memory(
    ctx: *const gpumst_context,
    bytes: *mut u64,
) -> gpumst_status {
    with_context(ctx, "gpumst_context_device_memory", |c| {
        // SAFETY: the caller passes NULL or a writable uint64_t.
        let bytes =
            unsafe { bytes.as_mut() }.ok_or_else(|| Error::invalid_argument("bytes is NULL"))?;
        *bytes = c.device_memory();
        Ok(())
    })
}

/// How many devices of its GPU tier the context uses (`gpumst_options.devices`); 1 on
/// the CPU tier.
#[no_mangle]
pub unsafe extern "C" fn gpumst_context_device_count(
    ctx: *const gpumst_context,
    count: *mut u32,
) -> gpumst_status {
    with_context(ctx, "gpumst_context_device_count", |c| {
        // SAFETY: the caller passes NULL or a writable uint32_t.
        let count =
            unsafe { count.as_mut() }.ok_or_else(|| Error::invalid_argument("count is NULL"))?;
        *count = c.device_count() as u32;
        Ok(())
    })
}

/// Copies the message of the most recent failed call on `ctx` into `buffer`
/// (NUL-terminated, truncated to `capacity`) and returns its full length without the
/// NUL (0 if no call has failed). With concurrent failing calls, the last one wins.
#[no_mangle]
pub unsafe extern "C" fn gpumst_context_last_error(
    ctx: *const gpumst_context,
    buffer: *mut c_char,
    capacity: usize,
) -> usize {
    let body = || {
        // SAFETY: see with_context.
        let message = match unsafe { ctx.as_ref() } {
            Some(handle) => handle
                .last_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            None => "context is NULL".to_string(),
        };
        if !buffer.is_null() && capacity > 0 {
            // SAFETY: the caller promises room for `capacity` bytes.
            unsafe { write_string(&message, buffer, capacity) };
        }
        message.len()
    };
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(0)
}

/// Writes the run-time probe report (what CUDA and OpenCL drivers were found, and why
/// each tier is or is not usable) as JSON, like `gpumst info --json`. Buffer rules as
/// for gpumst_context_device_name.
#[no_mangle]
pub unsafe extern "C" fn gpumst_probe_report(
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> gpumst_status {
    without_context(|| {
        let json = serde_json::to_string(probe::report())
            .map_err(|e| Error::internal(format!("probe report: {e}")))?;
        copy_out_string(&json, buffer, capacity, length)
    })
}

fn copy_out_string(
    text: &str,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> Result<()> {
    if buffer.is_null() && capacity > 0 {
        return Err(Error::invalid_argument(format!(
            "buffer is NULL but capacity = {capacity}"
        )));
    }
    if !buffer.is_null() && capacity > 0 {
        // SAFETY: the caller promises room for `capacity` bytes.
        unsafe { write_string(text, buffer, capacity) };
    }
    // SAFETY: the caller passes NULL or a writable size_t.
    if let Some(length) = unsafe { length.as_mut() } {
        *length = text.len();
    }
    Ok(())
}

// ---- primitives ----------------------------------------------------------------------

/// Scans `n` elements of `dtype` from `input` into `output`. `output == input` scans
/// in place; otherwise the arrays must not overlap. Both may be NULL when n is 0.
#[no_mangle]
pub unsafe extern "C" fn gpumst_scan(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    op: gpumst_scan_op,
    kind: gpumst_scan_kind,
    input: *const c_void,
    output: *mut c_void,
    n: u64,
) -> gpumst_status {
    with_context(ctx, "gpumst_scan", |c| {
        let (op, kind) = (op_from_c(op)?, kind_from_c(kind)?);
        with_element!(dtype, T => {
            // SAFETY: the caller's contract: input/output hold n elements of dtype.
            unsafe { scan_any::<T>(input, output, n, &[], |src, dst| match src {
                Some(src) => c.scan(src, dst, op, kind),
                None => c.scan_in_place(dst, op, kind),
            }) }
        })
    })
}

/// Segmented scan: `flags[i] != 0` starts a new segment at i (index 0 always does).
/// `flags` holds n bytes. In-place and overlap rules as for gpumst_scan.
#[no_mangle]
pub unsafe extern "C" fn gpumst_segmented_scan_flags(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    op: gpumst_scan_op,
    kind: gpumst_scan_kind,
    input: *const c_void,
    output: *mut c_void,
    flags: *const u8,
    n: u64,
) -> gpumst_status {
    with_context(ctx, "gpumst_segmented_scan_flags", |c| {
        let (op, kind) = (op_from_c(op)?, kind_from_c(kind)?);
        // SAFETY: the caller's contract: flags holds n bytes.
        let flags = unsafe { input_slice(flags, n, "flags") }?;
        with_element!(dtype, T => {
            // SAFETY: as in gpumst_scan.
            unsafe { scan_any::<T>(input, output, n, &[Region::of("flags", flags)], |src, dst| match src {
                Some(src) => c.segmented_scan_flags(src, dst, flags, op, kind),
                None => c.segmented_scan_flags_in_place(dst, flags, op, kind),
            }) }
        })
    })
}

/// Segmented scan over CSR offsets: segment s covers [offsets[s], offsets[s+1]).
/// `offsets` holds num_segments + 1 entries, starts at 0, never decreases and ends at
/// n; empty segments are allowed. In-place and overlap rules as for gpumst_scan.
#[no_mangle]
pub unsafe extern "C" fn gpumst_segmented_scan_offsets(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    op: gpumst_scan_op,
    kind: gpumst_scan_kind,
    input: *const c_void,
    output: *mut c_void,
    n: u64,
    offsets: *const u64,
    num_segments: u64,
) -> gpumst_status {
    with_context(ctx, "gpumst_segmented_scan_offsets", |c| {
        let (op, kind) = (op_from_c(op)?, kind_from_c(kind)?);
        // SAFETY: the caller's contract: offsets holds num_segments + 1 entries.
        let offsets = unsafe { input_slice(offsets, segments_plus_one(num_segments)?, "offsets") }?;
        with_element!(dtype, T => {
            // SAFETY: as in gpumst_scan.
            unsafe { scan_any::<T>(input, output, n, &[Region::of("offsets", offsets)], |src, dst| match src {
                Some(src) => c.segmented_scan_offsets(src, dst, offsets, op, kind),
                None => c.segmented_scan_offsets_in_place(dst, offsets, op, kind),
            }) }
        })
    })
}

fn segments_plus_one(num_segments: u64) -> Result<u64> {
    num_segments
        .checked_add(1)
        .ok_or_else(|| Error::invalid_argument("num_segments is too large"))
}

/// Shared by the scans: builds the input/output slices (aliased input means in place,
/// `src == None`), checks that the output overlaps nothing else, and runs `body`.
///
/// # Safety
/// `input` and `output` must be NULL (only when n == 0) or point to n elements of `T`.
unsafe fn scan_any<T: Element>(
    input: *const c_void,
    output: *mut c_void,
    n: u64,
    others: &[Region],
    body: impl FnOnce(Option<&[T]>, &mut [T]) -> Result<()>,
) -> Result<()> {
    let in_place = n > 0 && std::ptr::eq(input, output);
    if !in_place {
        // SAFETY: caller's contract; no mutable view of `input` exists.
        let src = unsafe { input_slice(input.cast::<T>(), n, "input") }?;
        let dst_region = Region::raw("output", output, n, std::mem::size_of::<T>());
        dst_region.disjoint_from(&Region::of("input", src))?;
        for other in others {
            dst_region.disjoint_from(other)?;
        }
        // SAFETY: caller's contract, and `output` overlaps no other argument.
        let dst = unsafe { output_slice(output.cast::<T>(), n, "output") }?;
        body(Some(src), dst)
    } else {
        let dst_region = Region::raw("output", output, n, std::mem::size_of::<T>());
        for other in others {
            dst_region.disjoint_from(other)?;
        }
        // SAFETY: caller's contract, and `output` overlaps no other argument.
        let dst = unsafe { output_slice(output.cast::<T>(), n, "output") }?;
        body(None, dst)
    }
}

/// The minimum of n elements and the first index holding it (NaN counts as the
/// minimum, so the first NaN wins). For n == 0, `*index` is GPUMST_EMPTY_SEGMENT and
/// `*value` the type's maximum (+inf for floats). `value` points to one element of
/// `dtype`.
#[no_mangle]
pub unsafe extern "C" fn gpumst_argmin(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    input: *const c_void,
    n: u64,
    value: *mut c_void,
    index: *mut u64,
) -> gpumst_status {
    with_context(
        ctx,
        "gpumst_argmin",
        |c| with_element!(dtype, T => unsafe { arg_any::<T>(c, input, n, value, index, false) }),
    )
}

/// As gpumst_argmin, for the maximum (NaN counts as the maximum); for n == 0 `*value`
/// is the type's minimum (-inf for floats).
#[no_mangle]
pub unsafe extern "C" fn gpumst_argmax(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    input: *const c_void,
    n: u64,
    value: *mut c_void,
    index: *mut u64,
) -> gpumst_status {
    with_context(
        ctx,
        "gpumst_argmax",
        |c| with_element!(dtype, T => unsafe { arg_any::<T>(c, input, n, value, index, true) }),
    )
}

/// # Safety
/// `input` holds n elements of `T`; `value` and `index` point to one `T` / `u64`.
unsafe fn arg_any<T: Element>(
    c: &Context,
    input: *const c_void,
    n: u64,
    value: *mut c_void,
    index: *mut u64,
    max: bool,
) -> Result<()> {
    // SAFETY: caller's contract.
    let data = unsafe { input_slice(input.cast::<T>(), n, "input") }?;
    let value_region = Region::raw("value", value, 1, std::mem::size_of::<T>());
    let index_region = Region::raw("index", index.cast(), 1, 8);
    value_region.disjoint_from(&index_region)?;
    value_region.disjoint_from(&Region::of("input", data))?;
    index_region.disjoint_from(&Region::of("input", data))?;
    // SAFETY: caller's contract (one element each), and no overlap (checked above).
    let value = unsafe { output_slice(value.cast::<T>(), 1, "value") }?;
    let index = unsafe { output_slice(index, 1, "index") }?;
    let found = if max {
        c.argmax(data)?
    } else {
        c.argmin(data)?
    };
    (value[0], index[0]) = match found {
        Some((v, i)) => (v, i as u64),
        None => (
            if max { T::LOWEST } else { T::HIGHEST },
            GPUMST_EMPTY_SEGMENT,
        ),
    };
    Ok(())
}

/// Per segment [offsets[s], offsets[s+1]) of `input` (offsets as for
/// gpumst_segmented_scan_offsets): the minimum into `values[s]` (num_segments
/// elements of dtype) and its first index into `input` into `indices[s]`. Empty
/// segments get the type's maximum and GPUMST_EMPTY_SEGMENT.
#[no_mangle]
pub unsafe extern "C" fn gpumst_segmented_argmin(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    input: *const c_void,
    n: u64,
    offsets: *const u64,
    num_segments: u64,
    values: *mut c_void,
    indices: *mut u64,
) -> gpumst_status {
    with_context(ctx, "gpumst_segmented_argmin", |c| {
        with_element!(dtype, T => unsafe {
            segmented_arg_any::<T>(c, input, n, offsets, num_segments, values, indices, false)
        })
    })
}

/// As gpumst_segmented_argmin, for the maximum; empty segments get the type's minimum.
#[no_mangle]
pub unsafe extern "C" fn gpumst_segmented_argmax(
    ctx: *mut gpumst_context,
    dtype: gpumst_dtype,
    input: *const c_void,
    n: u64,
    offsets: *const u64,
    num_segments: u64,
    values: *mut c_void,
    indices: *mut u64,
) -> gpumst_status {
    with_context(ctx, "gpumst_segmented_argmax", |c| {
        with_element!(dtype, T => unsafe {
            segmented_arg_any::<T>(c, input, n, offsets, num_segments, values, indices, true)
        })
    })
}

/// # Safety
/// Pointers hold the element counts the public functions document.
#[allow(clippy::too_many_arguments)]
unsafe fn segmented_arg_any<T: Element>(
    c: &Context,
    input: *const c_void,
    n: u64,
    offsets: *const u64,
    num_segments: u64,
    values: *mut c_void,
    indices: *mut u64,
    max: bool,
) -> Result<()> {
    // SAFETY (all four): caller's contract on element counts; the outputs are checked
    // to overlap nothing before mutable views are made.
    let data = unsafe { input_slice(input.cast::<T>(), n, "input") }?;
    let offsets = unsafe { input_slice(offsets, segments_plus_one(num_segments)?, "offsets") }?;
    let values_region = Region::raw("values", values, num_segments, std::mem::size_of::<T>());
    let indices_region = Region::raw("indices", indices.cast(), num_segments, 8);
    for out in [&values_region, &indices_region] {
        out.disjoint_from(&Region::of("input", data))?;
        out.disjoint_from(&Region::of("offsets", offsets))?;
    }
    values_region.disjoint_from(&indices_region)?;
    let values = unsafe { output_slice(values.cast::<T>(), num_segments, "values") }?;
    let indices = unsafe { output_slice(indices, num_segments, "indices") }?;
    if max {
        c.segmented_argmax(data, offsets, values, indices)
    } else {
        c.segmented_argmin(data, offsets, values, indices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_macros_match_cargo() {
        assert_eq!(
            GPUMST_VERSION_MAJOR.to_string(),
            env!("CARGO_PKG_VERSION_MAJOR")
        );
        assert_eq!(
            GPUMST_VERSION_MINOR.to_string(),
            env!("CARGO_PKG_VERSION_MINOR")
        );
        assert_eq!(
            GPUMST_VERSION_PATCH.to_string(),
            env!("CARGO_PKG_VERSION_PATCH")
        );
    }

    #[test]
    fn empty_segment_matches_the_rust_constant() {
        assert_eq!(GPUMST_EMPTY_SEGMENT, crate::EMPTY_SEGMENT);
    }

    #[test]
    fn status_codes_match_the_rust_enum() {
        for (code, status) in [
            (GPUMST_OK, Status::Ok),
            (GPUMST_INVALID_ARGUMENT, Status::InvalidArgument),
            (GPUMST_INVALID_GRAPH, Status::InvalidGraph),
            (GPUMST_BACKEND_UNAVAILABLE, Status::BackendUnavailable),
            (GPUMST_OUT_OF_MEMORY, Status::OutOfMemory),
            (GPUMST_DEVICE_ERROR, Status::DeviceError),
            (GPUMST_INTERNAL, Status::Internal),
        ] {
            assert_eq!(code, status as i32);
            // SAFETY: gpumst_status_string returns a static NUL-terminated string.
            let name = unsafe { std::ffi::CStr::from_ptr(gpumst_status_string(code)) };
            assert_eq!(name.to_str().unwrap(), status.name());
        }
    }
}
