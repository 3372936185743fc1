//! Compute tiers and the choice among them.
//!
//! A tier is a place where operations run: the CPU (always present), or a GPU reached
//! through the CUDA driver or an OpenCL platform. GPU tiers are found by probing at run
//! time ([`probe`]); the context keeps the usable tiers in order of preference and
//! dispatches each operation to the first one that implements it.

pub(crate) mod cpu;
pub(crate) mod cuda;
pub(crate) mod gpu;
pub use gpu::NativeHandles;
pub(crate) mod opencl;
pub mod probe;

use std::fmt;
use std::str::FromStr;

use crate::types::DType;
use crate::{Error, Result};

/// Where operations run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// Choose: CUDA, then an OpenCL GPU, then the CPU, for each operation the first
    /// present tier that implements it.
    Auto = 0,
    Cpu = 1,
    OpenCl = 2,
    Cuda = 3,
}

impl Tier {
    pub fn name(self) -> &'static str {
        match self {
            Tier::Auto => "auto",
            Tier::Cpu => "cpu",
            Tier::OpenCl => "opencl",
            Tier::Cuda => "cuda",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Tier {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Tier::Auto),
            "cpu" => Ok(Tier::Cpu),
            "opencl" => Ok(Tier::OpenCl),
            "cuda" => Ok(Tier::Cuda),
            other => Err(Error::invalid_argument(format!(
                "unknown tier '{other}': expected auto, cpu, opencl or cuda"
            ))),
        }
    }
}

/// Operations a tier may or may not implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Scan,
    SegmentedScan,
    ArgReduce,
    SegmentedArgReduce,
    /// Minimum spanning forests (every algorithm).
    Msf,
}

/// An opened tier. Adding a GPU tier means adding a variant here and its arms in
/// [`crate::Context`]'s dispatch; the public API does not change.
pub(crate) enum Backend {
    Cpu(cpu::CpuTier),
    OpenCl(opencl::OpenClTier),
    Cuda(cuda::CudaTier),
}

impl Backend {
    pub(crate) fn tier(&self) -> Tier {
        match self {
            Backend::Cpu(_) => Tier::Cpu,
            Backend::OpenCl(_) => Tier::OpenCl,
            Backend::Cuda(_) => Tier::Cuda,
        }
    }

    /// Whether this tier runs `op` on elements of `dtype` (None: no element type).
    pub(crate) fn supports(&self, _op: Operation, dtype: Option<DType>) -> bool {
        match self {
            // Every tier runs every operation; OpenCL devices may lack f64.
            Backend::Cpu(_) => true,
            Backend::OpenCl(cl) => dtype.map_or(true, |d| cl.supports_dtype(d)),
            Backend::Cuda(cuda) => dtype.map_or(true, |d| cuda.supports_dtype(d)),
        }
    }

    pub(crate) fn device_name(&self) -> String {
        match self {
            Backend::Cpu(cpu) => cpu.device_name(),
            Backend::OpenCl(cl) => cl.device_name(),
            Backend::Cuda(cuda) => cuda.device_name(),
        }
    }

    pub(crate) fn memory_bytes(&self) -> u64 {
        match self {
            Backend::Cpu(cpu) => cpu.memory_bytes(),
            Backend::OpenCl(cl) => cl.memory_bytes(),
            Backend::Cuda(cuda) => cuda.memory_bytes(),
        }
    }
}

/// Settings for opening tiers.
#[derive(Clone, Copy)]
pub(crate) struct OpenSettings {
    pub device_index: u32,
    pub cpu_threads: usize,
    /// The caller's CUcontext for the CUDA tier (0: the device's primary context).
    pub cuda_context: usize,
    /// Caps the device memory a GPU tier assumes, and the CPU tier's working memory
    /// for a minimum spanning forest (0: no cap).
    pub device_memory_limit: u64,
}

/// Opens `tier` (never `Auto`), or says why it cannot be used.
pub(crate) fn open(tier: Tier, settings: &OpenSettings) -> Result<Backend> {
    let report = probe::report();
    let gpu = |driver: &probe::DriverProbe, label: &str| -> Result<()> {
        if !driver.found_devices() {
            return Err(Error::backend_unavailable(format!(
                "the {label} tier is unavailable: {}",
                driver.summary()
            )));
        }
        if settings.device_index as usize >= driver.devices.len() {
            return Err(Error::invalid_argument(format!(
                "device index {} is out of range: the {label} driver reports {} device(s)",
                settings.device_index,
                driver.devices.len()
            )));
        }
        Ok(())
    };
    match tier {
        Tier::Cpu => Ok(Backend::Cpu(cpu::CpuTier::new(
            settings.cpu_threads,
            settings.device_memory_limit,
        )?)),
        Tier::Cuda => {
            gpu(&report.cuda, "CUDA")?;
            let mut tier = cuda::open(settings.device_index, settings.cuda_context)?;
            tier.limit_memory(settings.device_memory_limit);
            Ok(Backend::Cuda(tier))
        }
        Tier::OpenCl => {
            gpu(&report.opencl, "OpenCL")?;
            let mut tier = opencl::open(settings.device_index)?;
            tier.limit_memory(settings.device_memory_limit);
            Ok(Backend::OpenCl(tier))
        }
        Tier::Auto => Err(Error::internal("tier::open called with Tier::Auto")),
    }
}

/// Opens `tier` (a GPU tier) once more for each device of `indices`, with the
/// settings otherwise as given: the further devices of a context.
pub(crate) fn open_more(
    tier: Tier,
    indices: &[u32],
    settings: &OpenSettings,
) -> Result<Vec<Backend>> {
    indices
        .iter()
        .map(|&device_index| {
            open(
                tier,
                &OpenSettings {
                    device_index,
                    ..*settings
                },
            )
        })
        .collect()
}

/// Every usable device of `tier` of the same kind as device `index` (a GPU tier),
/// `index` first, then the others in index order.
pub(crate) fn devices_like(tier: Tier, index: u32) -> Vec<u32> {
    let report = probe::report();
    // CUDA counts every device, OpenCL only the usable ones (see `open`).
    let (devices, counted): (&[probe::ProbedDevice], Vec<usize>) = match tier {
        Tier::Cuda => (
            &report.cuda.devices,
            (0..report.cuda.devices.len()).collect(),
        ),
        Tier::OpenCl => {
            let devices = &report.opencl.devices;
            (
                devices,
                (0..devices.len()).filter(|&i| devices[i].usable).collect(),
            )
        }
        Tier::Cpu | Tier::Auto => return vec![index],
    };
    let Some(&first) = counted.get(index as usize) else {
        return vec![index];
    };
    let mut like = vec![index];
    for (i, &d) in counted.iter().enumerate() {
        let same = devices[d].usable && devices[d].kind == devices[first].kind;
        if i != index as usize && same {
            like.push(i as u32);
        }
    }
    like
}

/// A tier `auto` passed over, and why.
pub(crate) type Skipped = (Tier, String);

/// Opens every usable tier in order of preference. The CPU tier is always last, so
/// every operation has somewhere to run. Returns the tiers and why others were skipped.
pub(crate) fn open_auto(settings: &OpenSettings) -> Result<(Vec<Backend>, Vec<Skipped>)> {
    let mut backends = Vec::new();
    let mut skipped = Vec::new();
    for tier in [Tier::Cuda, Tier::OpenCl] {
        if let Some(why) = leave_to_cpu(tier, settings) {
            skipped.push((tier, why));
            continue;
        }
        match open(tier, settings) {
            Ok(backend) => backends.push(backend),
            Err(e) => skipped.push((tier, e.message().to_string())),
        }
    }
    backends.push(open(Tier::Cpu, settings)?);
    Ok((backends, skipped))
}

/// Why `auto` should not use `tier` even though it may open: gpumst's own CPU tier beats
/// an OpenCL CPU device (such as PoCL's) on the same cores, so such a device is used only
/// when OpenCL is forced.
fn leave_to_cpu(tier: Tier, settings: &OpenSettings) -> Option<String> {
    if tier != Tier::OpenCl {
        return None;
    }
    let device = probe::report()
        .opencl
        .devices
        .iter()
        .filter(|d| d.usable)
        .nth(settings.device_index as usize)?;
    (device.kind == "cpu").then(|| {
        format!(
            "{} is a CPU device, where the CPU tier is faster (force it with {}=opencl)",
            device.name,
            crate::context::BACKEND_ENV
        )
    })
}

/// The devices of the GPU tiers, so that code generic over them finds their tier.
pub(crate) trait GpuKind: gpu::Device {
    const TIER: Tier;
    fn of(backend: &Backend) -> Option<&gpu::Gpu<Self>>;
}

impl GpuKind for opencl::OpenClDevice {
    const TIER: Tier = Tier::OpenCl;
    fn of(backend: &Backend) -> Option<&opencl::OpenClTier> {
        match backend {
            Backend::OpenCl(tier) => Some(tier),
            _ => None,
        }
    }
}

impl GpuKind for cuda::CudaDevice {
    const TIER: Tier = Tier::Cuda;
    fn of(backend: &Backend) -> Option<&cuda::CudaTier> {
        match backend {
            Backend::Cuda(tier) => Some(tier),
            _ => None,
        }
    }
}
