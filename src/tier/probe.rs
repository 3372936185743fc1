//! Finds GPU drivers at run time without linking to them.
//!
//! Each probe opens the driver library with libloading, asks it for its version and
//! devices, and records every step, so `gpumst info` can say why a tier was or was not
//! usable. A missing library is a normal outcome, never a panic. Probing happens once
//! per process (drivers are slow to initialize) and the report is shared.

use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

use serde::Serialize;

/// One attempt to open a driver library.
#[derive(Debug, Clone, Serialize)]
pub struct LibraryAttempt {
    pub path: String,
    /// The loader's message when the library could not be opened.
    pub error: Option<String>,
}

/// A device a driver reported.
#[derive(Debug, Clone, Serialize)]
pub struct ProbedDevice {
    pub name: String,
    /// "gpu", "cpu", "accelerator" or "other".
    pub kind: String,
    /// OpenCL platform the device belongs to (None for CUDA).
    pub platform: Option<String>,
    pub memory_bytes: u64,
    /// Whether gpumst can run its kernels there (OpenCL: version 1.2+, available,
    /// with a compiler).
    pub usable: bool,
    /// Why it is not usable, or what it lacks that gpumst works around.
    pub notes: Vec<String>,
}

/// What the probe of one GPU tier found.
#[derive(Debug, Clone, Serialize)]
pub struct DriverProbe {
    /// "cuda" or "opencl".
    pub tier: &'static str,
    pub attempts: Vec<LibraryAttempt>,
    /// The library that opened, if any.
    pub library: Option<String>,
    pub driver_version: Option<String>,
    /// OpenCL platforms seen: "name (version): N device(s)".
    pub platforms: Vec<String>,
    /// Devices, in the order `device_index` counts (OpenCL: GPUs, then accelerators,
    /// then CPU devices).
    pub devices: Vec<ProbedDevice>,
    /// Why the driver, once opened, could not be used (an API call failed).
    pub error: Option<String>,
}

impl DriverProbe {
    fn new(tier: &'static str) -> Self {
        DriverProbe {
            tier,
            attempts: Vec::new(),
            library: None,
            driver_version: None,
            platforms: Vec::new(),
            devices: Vec::new(),
            error: None,
        }
    }

    /// The driver opened and reported at least one device.
    pub fn found_devices(&self) -> bool {
        self.library.is_some() && self.error.is_none() && !self.devices.is_empty()
    }

    /// One line saying what was found, or why nothing was.
    pub fn summary(&self) -> String {
        let Some(library) = &self.library else {
            let tried: Vec<String> = self
                .attempts
                .iter()
                .map(|a| format!("{} ({})", a.path, a.error.as_deref().unwrap_or("?")))
                .collect();
            return format!(
                "no driver library could be opened; tried {}",
                tried.join(", ")
            );
        };
        if let Some(error) = &self.error {
            return format!("{library} opened but {error}");
        }
        format!(
            "{library} (driver {}) reports {} device(s)",
            self.driver_version.as_deref().unwrap_or("unknown"),
            self.devices.len()
        )
    }
}

/// Probe results for every GPU tier.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    pub cuda: DriverProbe,
    pub opencl: DriverProbe,
}

/// The process-wide probe report, computed on first use.
///
/// `GPUMST_CUDA_LIBRARY` and `GPUMST_OPENCL_LIBRARY` replace the default library names
/// (useful for a driver in an unusual place, and for tests that hide a driver).
pub fn report() -> &'static ProbeReport {
    static REPORT: OnceLock<ProbeReport> = OnceLock::new();
    REPORT.get_or_init(|| ProbeReport {
        cuda: probe_cuda(),
        opencl: probe_opencl(),
    })
}

fn candidates(env_var: &str, defaults: &[&str]) -> Vec<String> {
    match std::env::var(env_var) {
        Ok(path) if !path.is_empty() => vec![path],
        _ => defaults.iter().map(|s| s.to_string()).collect(),
    }
}

/// Opens the first loadable library among `paths`, recording each attempt.
fn open_first(probe: &mut DriverProbe, paths: &[String]) -> Option<libloading::Library> {
    for path in paths {
        // SAFETY: opening a library runs its initializers. We only open GPU driver
        // libraries by their well-known names (or the one the user named through the
        // environment), whose initializers are made to run in any process.
        match unsafe { libloading::Library::new(path) } {
            Ok(lib) => {
                probe.attempts.push(LibraryAttempt {
                    path: path.clone(),
                    error: None,
                });
                probe.library = Some(path.clone());
                return Some(lib);
            }
            Err(e) => probe.attempts.push(LibraryAttempt {
                path: path.clone(),
                error: Some(error_chain(&e)),
            }),
        }
    }
    None
}

/// An error and its sources, joined (libloading puts dlerror's text in the source).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

/// Looks up `name` in `lib` as a function of type `F`.
///
/// # Safety
/// `F` must be the exact C signature of the symbol as the driver's headers declare it.
unsafe fn symbol<F: Copy>(lib: &libloading::Library, name: &str) -> Result<F, String> {
    // SAFETY: the caller guarantees `F` matches the symbol's real type.
    unsafe { lib.get::<F>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("symbol {name} is missing: {}", error_chain(&e)))
}

fn c_buffer_to_string(buf: &[u8]) -> String {
    CStr::from_bytes_until_nul(buf)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(buf).into_owned())
}

fn probe_cuda() -> DriverProbe {
    let mut probe = DriverProbe::new("cuda");
    let defaults: &[&str] = if cfg!(windows) {
        &["nvcuda.dll"]
    } else {
        &["libcuda.so.1", "libcuda.so"]
    };
    let Some(lib) = open_first(&mut probe, &candidates("GPUMST_CUDA_LIBRARY", defaults)) else {
        return probe;
    };
    if let Err(e) = query_cuda(&lib, &mut probe) {
        probe.error = Some(e);
    }
    // A GPU driver must not be unloaded once initialized; it stays for the process.
    std::mem::forget(lib);
    probe
}

fn query_cuda(lib: &libloading::Library, probe: &mut DriverProbe) -> Result<(), String> {
    type CuInit = unsafe extern "C" fn(u32) -> i32;
    type CuIntOut = unsafe extern "C" fn(*mut i32) -> i32;
    type CuDeviceGet = unsafe extern "C" fn(*mut i32, i32) -> i32;
    type CuDeviceGetName = unsafe extern "C" fn(*mut c_char, i32, i32) -> i32;
    type CuDeviceTotalMem = unsafe extern "C" fn(*mut usize, i32) -> i32;
    type CuDeviceGetAttribute = unsafe extern "C" fn(*mut i32, i32, i32) -> i32;
    // SAFETY: each type above is the prototype in the CUDA driver API's cuda.h
    // (CUresult is a C enum, i.e. int; CUdevice is int; size_t is usize).
    let (init, version, count, get, name, total_mem, attribute) = unsafe {
        (
            symbol::<CuInit>(lib, "cuInit")?,
            symbol::<CuIntOut>(lib, "cuDriverGetVersion")?,
            symbol::<CuIntOut>(lib, "cuDeviceGetCount")?,
            symbol::<CuDeviceGet>(lib, "cuDeviceGet")?,
            symbol::<CuDeviceGetName>(lib, "cuDeviceGetName")?,
            symbol::<CuDeviceTotalMem>(lib, "cuDeviceTotalMem_v2")?,
            symbol::<CuDeviceGetAttribute>(lib, "cuDeviceGetAttribute")?,
        )
    };
    let check = |what: &str, code: i32| {
        if code == 0 {
            Ok(())
        } else {
            Err(format!("{what} returned CUDA error {code}"))
        }
    };
    // SAFETY (all calls below): the functions have the prototypes checked above and
    // every out-pointer refers to a live local of the right type and size.
    check("cuInit", unsafe { init(0) })?;
    let mut v = 0i32;
    check("cuDriverGetVersion", unsafe { version(&mut v) })?;
    probe.driver_version = Some(format!("{}.{}", v / 1000, (v % 1000) / 10));
    let mut n = 0i32;
    check("cuDeviceGetCount", unsafe { count(&mut n) })?;
    for ordinal in 0..n {
        let mut device = 0i32;
        check("cuDeviceGet", unsafe { get(&mut device, ordinal) })?;
        let mut buf = [0u8; 256];
        check("cuDeviceGetName", unsafe {
            name(buf.as_mut_ptr().cast(), buf.len() as i32, device)
        })?;
        let mut bytes = 0usize;
        check("cuDeviceTotalMem", unsafe { total_mem(&mut bytes, device) })?;
        // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR.
        let (mut major, mut minor) = (0i32, 0i32);
        check("cuDeviceGetAttribute", unsafe {
            attribute(&mut major, 75, device)
        })?;
        check("cuDeviceGetAttribute", unsafe {
            attribute(&mut minor, 76, device)
        })?;
        let why_not = super::cuda::unusable(v, (major, minor));
        let mut notes = vec![format!("compute capability {major}.{minor}")];
        notes.extend(why_not.clone());
        probe.devices.push(ProbedDevice {
            name: c_buffer_to_string(&buf),
            kind: "gpu".into(),
            platform: None,
            memory_bytes: bytes as u64,
            usable: why_not.is_none(),
            notes,
        });
    }
    if n == 0 {
        return Err("the driver reports no CUDA devices".into());
    }
    Ok(())
}

fn probe_opencl() -> DriverProbe {
    let mut probe = DriverProbe::new("opencl");
    let defaults: &[&str] = if cfg!(windows) {
        &["OpenCL.dll"]
    } else {
        &["libOpenCL.so.1", "libOpenCL.so"]
    };
    let Some(lib) = open_first(&mut probe, &candidates("GPUMST_OPENCL_LIBRARY", defaults)) else {
        return probe;
    };
    if let Err(e) = query_opencl(&lib, &mut probe) {
        probe.error = Some(e);
    }
    // ICD loaders keep platform state for the process; keep the library loaded.
    std::mem::forget(lib);
    probe
}

fn query_opencl(lib: &libloading::Library, probe: &mut DriverProbe) -> Result<(), String> {
    type Handle = *mut c_void;
    type GetPlatformIds = unsafe extern "C" fn(u32, *mut Handle, *mut u32) -> i32;
    type GetInfo = unsafe extern "C" fn(Handle, u32, usize, *mut c_void, *mut usize) -> i32;
    type GetDeviceIds = unsafe extern "C" fn(Handle, u64, u32, *mut Handle, *mut u32) -> i32;
    const CL_PLATFORM_VERSION: u32 = 0x0901;
    const CL_PLATFORM_NAME: u32 = 0x0902;
    const CL_DEVICE_TYPE: u32 = 0x1000;
    const CL_DEVICE_GLOBAL_MEM_SIZE: u32 = 0x101F;
    const CL_DEVICE_NAME: u32 = 0x102B;
    const CL_DEVICE_AVAILABLE: u32 = 0x1027;
    const CL_DEVICE_COMPILER_AVAILABLE: u32 = 0x1028;
    const CL_DEVICE_VERSION: u32 = 0x102F;
    const CL_DEVICE_EXTENSIONS: u32 = 0x1030;
    const CL_DEVICE_TYPE_ALL: u64 = 0xFFFF_FFFF;
    const CL_DEVICE_NOT_FOUND: i32 = -1;
    const CL_PLATFORM_NOT_FOUND_KHR: i32 = -1001;

    // SAFETY: each type above is the prototype in Khronos' cl.h (cl_int is i32,
    // cl_uint u32, cl_bitfield u64, handles are opaque pointers, size_t is usize).
    let (platform_ids, platform_info, device_ids, device_info) = unsafe {
        (
            symbol::<GetPlatformIds>(lib, "clGetPlatformIDs")?,
            symbol::<GetInfo>(lib, "clGetPlatformInfo")?,
            symbol::<GetDeviceIds>(lib, "clGetDeviceIDs")?,
            symbol::<GetInfo>(lib, "clGetDeviceInfo")?,
        )
    };
    // Strings of any length: the size first, then the bytes.
    let info_string = |f: GetInfo, handle: Handle, param: u32| -> String {
        let mut size = 0usize;
        // SAFETY: `f` has cl.h's prototype and `handle` came from the same driver; a
        // null buffer with size 0 asks only for the size.
        let code = unsafe { f(handle, param, 0, std::ptr::null_mut(), &mut size) };
        if code != 0 {
            return format!("(unknown: OpenCL error {code})");
        }
        let mut buf = vec![0u8; size.max(1)];
        // SAFETY: as above; the buffer holds the `size` bytes the driver asked for.
        let code = unsafe {
            f(
                handle,
                param,
                buf.len(),
                buf.as_mut_ptr().cast(),
                std::ptr::null_mut(),
            )
        };
        if code == 0 {
            c_buffer_to_string(&buf)
        } else {
            format!("(unknown: OpenCL error {code})")
        }
    };
    let info_bool = |handle: Handle, param: u32| -> bool {
        let mut value = 0u32;
        // SAFETY: as above; cl_bool is a 4-byte cl_uint.
        let code = unsafe {
            device_info(
                handle,
                param,
                4,
                (&mut value as *mut u32).cast(),
                std::ptr::null_mut(),
            )
        };
        code == 0 && value != 0
    };
    let info_u64 = |handle: Handle, param: u32| -> u64 {
        let mut value = 0u64;
        // SAFETY: as above; the parameters asked for are cl_ulong / cl_bitfield (8 bytes).
        let code = unsafe {
            device_info(
                handle,
                param,
                8,
                (&mut value as *mut u64).cast(),
                std::ptr::null_mut(),
            )
        };
        if code == 0 {
            value
        } else {
            0
        }
    };

    let mut count = 0u32;
    // SAFETY: prototypes checked above; out-pointers are live locals / vectors sized to `count`.
    let code = unsafe { platform_ids(0, std::ptr::null_mut(), &mut count) };
    if code == CL_PLATFORM_NOT_FOUND_KHR || (code == 0 && count == 0) {
        return Err(
            "the ICD loader finds no OpenCL platforms (no vendor driver registered)".into(),
        );
    }
    if code != 0 {
        return Err(format!("clGetPlatformIDs returned OpenCL error {code}"));
    }
    let mut platforms: Vec<Handle> = vec![std::ptr::null_mut(); count as usize];
    let code = unsafe { platform_ids(count, platforms.as_mut_ptr(), std::ptr::null_mut()) };
    if code != 0 {
        return Err(format!("clGetPlatformIDs returned OpenCL error {code}"));
    }
    let mut versions = Vec::new();
    for &platform in &platforms {
        let platform_name = info_string(platform_info, platform, CL_PLATFORM_NAME);
        let version = info_string(platform_info, platform, CL_PLATFORM_VERSION);
        versions.push(version.clone());
        let mut n = 0u32;
        let code = unsafe {
            device_ids(
                platform,
                CL_DEVICE_TYPE_ALL,
                0,
                std::ptr::null_mut(),
                &mut n,
            )
        };
        if code == CL_DEVICE_NOT_FOUND || n == 0 {
            probe
                .platforms
                .push(format!("{platform_name} ({version}): no devices"));
            continue;
        }
        if code != 0 {
            return Err(format!(
                "clGetDeviceIDs on {platform_name} returned OpenCL error {code}"
            ));
        }
        let mut devices: Vec<Handle> = vec![std::ptr::null_mut(); n as usize];
        let code = unsafe {
            device_ids(
                platform,
                CL_DEVICE_TYPE_ALL,
                n,
                devices.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        if code != 0 {
            return Err(format!(
                "clGetDeviceIDs on {platform_name} returned OpenCL error {code}"
            ));
        }
        probe.platforms.push(format!(
            "{platform_name} ({version}): {} device(s)",
            devices.len()
        ));
        for &device in &devices {
            let kind = info_u64(device, CL_DEVICE_TYPE);
            let device_version = info_string(device_info, device, CL_DEVICE_VERSION);
            let extensions = info_string(device_info, device, CL_DEVICE_EXTENSIONS);
            let (usable, notes) = opencl_usability(
                &device_version,
                info_bool(device, CL_DEVICE_AVAILABLE),
                info_bool(device, CL_DEVICE_COMPILER_AVAILABLE),
                &extensions,
            );
            probe.devices.push(ProbedDevice {
                name: info_string(device_info, device, CL_DEVICE_NAME),
                kind: opencl_kind(kind).into(),
                platform: Some(platform_name.clone()),
                memory_bytes: info_u64(device, CL_DEVICE_GLOBAL_MEM_SIZE),
                usable,
                notes,
            });
        }
    }
    probe.devices.sort_by_key(|d| preference_rank(&d.kind));
    probe.driver_version = Some(versions.join("; "));
    if probe.devices.is_empty() {
        return Err(format!("{} platform(s) but no devices", platforms.len()));
    }
    Ok(())
}

/// Whether gpumst's OpenCL kernels can run on a device, and what it works around.
fn opencl_usability(
    version: &str,
    available: bool,
    compiler: bool,
    extensions: &str,
) -> (bool, Vec<String>) {
    let has = |ext: &str| extensions.split_whitespace().any(|x| x == ext);
    let parsed = version
        .strip_prefix("OpenCL ")
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.split_once('.'))
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)));
    let mut notes = Vec::new();
    if !available {
        notes.push("not usable: the device reports itself unavailable".to_string());
    }
    if !compiler {
        notes.push("not usable: the platform has no OpenCL C compiler for it".to_string());
    }
    if !parsed.is_some_and(|v| v >= (1, 2)) {
        notes.push(format!("not usable: '{version}' (gpumst needs OpenCL 1.2)"));
    }
    let usable = notes.is_empty();
    if usable {
        if !has("cl_khr_fp64") {
            notes.push("no cl_khr_fp64: f64 primitives run on the CPU tier".to_string());
        }
        if !(has("cl_khr_int64_base_atomics") && has("cl_khr_int64_extended_atomics")) {
            notes.push("no 64-bit atomics: MSF uses 32-bit atomic passes".to_string());
        }
    }
    (usable, notes)
}

/// The kind of an OpenCL device from its CL_DEVICE_TYPE bits.
pub(crate) fn opencl_kind(type_bits: u64) -> &'static str {
    const CPU: u64 = 1 << 1;
    const GPU: u64 = 1 << 2;
    const ACCELERATOR: u64 = 1 << 3;
    match type_bits {
        k if k & GPU != 0 => "gpu",
        k if k & ACCELERATOR != 0 => "accelerator",
        k if k & CPU != 0 => "cpu",
        _ => "other",
    }
}

/// The order `device_index` counts devices in: GPUs, accelerators, CPU devices, others.
pub(crate) fn preference_rank(kind: &str) -> u8 {
    match kind {
        "gpu" => 0,
        "accelerator" => 1,
        "cpu" => 2,
        _ => 3,
    }
}
