//! The context: chosen tiers, and the one place where operations are validated and
//! dispatched to a tier.

use crate::buffer::{Buffer, Storage};
use crate::graph::Graph;
use crate::msf::{self, Forest, MsfOptions, Solver};
use crate::tier::gpu::{Gpu, NativeHandles};
use crate::tier::{self, probe, Backend, GpuKind, OpenSettings, Operation, Tier};
use crate::types::{validate_offsets, DType, Element, Extreme, ScanKind, ScanOp, Stored};
use crate::{Error, Result};

/// How to open a context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `Auto` honours `GPUMST_BACKEND`; any other value is used as given.
    pub tier: Tier,
    /// Which device of the chosen GPU tier (ignored by the CPU tier).
    pub device_index: u32,
    /// CPU worker threads; 0 means all cores (or `RAYON_NUM_THREADS`).
    pub cpu_threads: usize,
    /// A `CUcontext` (its handle's value) for the CUDA tier to use instead of the
    /// device's primary context, for applications that made their own; its device is
    /// used and `device_index` is ignored by the CUDA tier. 0: the primary context. The
    /// caller keeps it alive while this context lives.
    pub cuda_context: usize,
    /// The most device memory (bytes) a GPU tier may use for one call's buffers; 0: the
    /// device's. A minimum spanning forest whose working set exceeds it is computed a
    /// partition of the edges at a time (same forest), where the vertices' own arrays
    /// fit; primitives larger than it fail with `OutOfMemory`. On the CPU tier: the
    /// most memory a minimum spanning forest's working arrays may take beside the
    /// caller's graph (0: no cap); a larger one is computed a part of the edges at a
    /// time (same forest).
    pub device_memory_limit: u64,
    /// The GPUs of the chosen tier the context opens. Everything runs on the first; a
    /// minimum spanning forest of an edge list or CSR graph is split across them (same
    /// forest) where `GPUMST_SPLIT_MIN_EDGES` asks for it (measured so far, a split was
    /// slower than one device).
    pub devices: Devices,
}

/// Which devices of the chosen GPU tier a context uses (the CPU tier ignores this).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Devices {
    /// `Options::device_index` alone.
    #[default]
    One,
    /// These devices, the first being the one that runs everything but the split
    /// forests. A device may be listed twice: it then gets two parts at once, each on
    /// its own queue (which is how the tests split a graph on one device).
    List(Vec<u32>),
    /// Every usable device of the tier of the same kind as `device_index`'s (CUDA:
    /// every GPU; OpenCL: GPUs with GPUs, accelerators with accelerators), starting
    /// with `device_index`'s.
    All,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tier: Tier::Auto,
            device_index: 0,
            cpu_threads: 0,
            cuda_context: 0,
            device_memory_limit: 0,
            devices: Devices::One,
        }
    }
}

/// The environment variable that forces a tier when the options say `Auto`.
pub const BACKEND_ENV: &str = "GPUMST_BACKEND";

/// How a segmented scan is cut.
#[derive(Clone, Copy)]
pub(crate) enum Segments<'a> {
    None,
    Flags(&'a [u8]),
    Offsets(&'a [u64]),
}

/// An opened library context. Every method may be called from many threads at once.
pub struct Context {
    backends: Vec<Backend>,
    /// Further devices of the first backend's GPU tier (`Options::devices`), for
    /// forests split across devices (`msf/across_devices.rs`).
    more_devices: Vec<Backend>,
    skipped: Vec<(Tier, String)>,
    forced: bool,
}

impl Context {
    /// Opens a context. A forced tier (in `options` or through `GPUMST_BACKEND`) that
    /// cannot be used is an error saying why; it never falls back silently.
    pub fn new(options: &Options) -> Result<Context> {
        let device_index = match &options.devices {
            Devices::List(list) => *list.first().ok_or_else(|| {
                Error::invalid_argument("options.devices is an empty list of devices")
            })?,
            Devices::One | Devices::All => options.device_index,
        };
        if options.cuda_context != 0 && options.devices != Devices::One {
            return Err(Error::invalid_argument(
                "options.cuda_context names one device: it cannot be combined with several devices",
            ));
        }
        let settings = OpenSettings {
            device_index,
            cpu_threads: options.cpu_threads,
            cuda_context: options.cuda_context,
            device_memory_limit: options.device_memory_limit,
        };
        let requested = match options.tier {
            Tier::Auto => match std::env::var(BACKEND_ENV) {
                Ok(value) if !value.trim().is_empty() => value.parse::<Tier>().map_err(|_| {
                    Error::invalid_argument(format!(
                        "{BACKEND_ENV}='{value}' is not one of auto, cpu, opencl, cuda"
                    ))
                })?,
                _ => Tier::Auto,
            },
            tier => tier,
        };
        let (backends, skipped, forced) = if requested == Tier::Auto {
            let (backends, skipped) = tier::open_auto(&settings)?;
            (backends, skipped, false)
        } else {
            (vec![tier::open(requested, &settings)?], Vec::new(), true)
        };
        // The further devices are of the first tier's kind; the CPU tier has none.
        let first = backends[0].tier();
        let more = match (&options.devices, first) {
            (_, Tier::Cpu) | (Devices::One, _) => Vec::new(),
            (Devices::List(list), _) => tier::open_more(first, &list[1..], &settings)?,
            (Devices::All, _) => tier::open_more(
                first,
                &tier::devices_like(first, device_index)[1..],
                &settings,
            )?,
        };
        Ok(Context {
            backends,
            more_devices: more,
            skipped,
            forced,
        })
    }

    /// How many devices the preferred tier uses (1 on the CPU tier).
    pub fn device_count(&self) -> usize {
        1 + self.more_devices.len()
    }

    /// The preferred tier of this context (the one most operations run on).
    pub fn tier(&self) -> Tier {
        self.backends[0].tier()
    }

    /// The tier that would run `op`, or why none can.
    pub fn tier_for(&self, op: Operation) -> Result<Tier> {
        self.backend_for(op, None).map(Backend::tier)
    }

    /// A human-readable name of the preferred tier's device.
    pub fn device_name(&self) -> String {
        self.backends[0].device_name()
    }

    /// Memory of the preferred tier's device in bytes (system memory for the CPU).
    pub fn device_memory(&self) -> u64 {
        self.backends[0].memory_bytes()
    }

    /// Runs `work` and, where the preferred tier keeps a device clock (CUDA events on
    /// this context's stream), also returns the device time from the first command
    /// `work` issues to its last, in milliseconds; `None` on other tiers. For
    /// benchmarks: gpumst's calls wait for their results, so the time still includes
    /// the gaps in which the device waits for the host.
    #[doc(hidden)]
    pub fn device_time_ms<R>(&self, work: impl FnOnce() -> Result<R>) -> Result<(R, Option<f64>)> {
        match &self.backends[0] {
            Backend::Cuda(cuda) => cuda.time(work),
            Backend::OpenCl(cl) => cl.time(work),
            Backend::Cpu(_) => Ok((work()?, None)),
        }
    }

    /// Tiers `Auto` passed over, with the reason for each.
    pub fn skipped_tiers(&self) -> &[(Tier, String)] {
        &self.skipped
    }

    /// What the run-time probe of GPU drivers found.
    pub fn probe_report(&self) -> &'static probe::ProbeReport {
        probe::report()
    }

    /// The first tier that runs `op` on elements of `dtype`.
    fn backend_for(&self, op: Operation, dtype: Option<DType>) -> Result<&Backend> {
        self.backends
            .iter()
            .find(|b| b.supports(op, dtype))
            .ok_or_else(|| {
                let tier = self.backends[0].tier();
                let how = if self.forced { "forced" } else { "chosen" };
                let on = dtype
                    .map(|d| format!(" on {} elements", d.name()))
                    .unwrap_or_default();
                Error::backend_unavailable(format!(
                    "the {how} {tier} tier ({}) does not implement {op:?}{on}",
                    self.backends[0].device_name()
                ))
            })
    }

    // ---- scans -------------------------------------------------------------------

    /// `output[i]` = `op` over `input[..=i]` (inclusive) or `input[..i]` (exclusive).
    pub fn scan<T: Element>(
        &self,
        input: &[T],
        output: &mut [T],
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        self.run_scan(Some(input), output, Segments::None, op, kind)
    }

    /// [`Context::scan`] overwriting its input.
    pub fn scan_in_place<T: Element>(
        &self,
        data: &mut [T],
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        self.run_scan(None, data, Segments::None, op, kind)
    }

    /// Scan restarting wherever `flags[i] != 0` (index 0 always starts a segment).
    pub fn segmented_scan_flags<T: Element>(
        &self,
        input: &[T],
        output: &mut [T],
        flags: &[u8],
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        self.run_scan(Some(input), output, Segments::Flags(flags), op, kind)
    }

    /// [`Context::segmented_scan_flags`] overwriting its input.
    pub fn segmented_scan_flags_in_place<T: Element>(
        &self,
        data: &mut [T],
        flags: &[u8],
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        self.run_scan(None, data, Segments::Flags(flags), op, kind)
    }

    /// Scan of each segment `offsets[s]..offsets[s + 1]` (CSR offsets: `offsets[0] == 0`,
    /// non-decreasing, last == `input.len()`; empty segments allowed).
    pub fn segmented_scan_offsets<T: Element>(
        &self,
        input: &[T],
        output: &mut [T],
        offsets: &[u64],
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        self.run_scan(Some(input), output, Segments::Offsets(offsets), op, kind)
    }

    /// [`Context::segmented_scan_offsets`] overwriting its input.
    pub fn segmented_scan_offsets_in_place<T: Element>(
        &self,
        data: &mut [T],
        offsets: &[u64],
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        self.run_scan(None, data, Segments::Offsets(offsets), op, kind)
    }

    fn run_scan<T: Element>(
        &self,
        src: Option<&[T]>,
        dst: &mut [T],
        segments: Segments<'_>,
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        let n = dst.len();
        if let Some(src) = src {
            if src.len() != n {
                return Err(Error::invalid_argument(format!(
                    "output has {n} elements but input has {}",
                    src.len()
                )));
            }
        }
        let operation = match segments {
            Segments::None => Operation::Scan,
            Segments::Flags(flags) => {
                if flags.len() != n {
                    return Err(flags_length(flags.len(), n));
                }
                Operation::SegmentedScan
            }
            Segments::Offsets(offsets) => {
                validate_offsets(offsets, n)?;
                Operation::SegmentedScan
            }
        };
        match self.backend_for(operation, Some(T::DTYPE))? {
            Backend::Cpu(cpu) => match segments {
                Segments::None => cpu.scan(src, dst, op, kind),
                Segments::Flags(flags) => cpu.segmented_scan_flags(src, dst, flags, op, kind),
                Segments::Offsets(offsets) => {
                    cpu.segmented_scan_offsets(src, dst, offsets, op, kind)
                }
            }?,
            Backend::OpenCl(cl) => cl.scan(src, dst, segments, op, kind)?,
            Backend::Cuda(cuda) => cuda.scan(src, dst, segments, op, kind)?,
        }
        Ok(())
    }

    // ---- arg-reductions ----------------------------------------------------------

    /// The minimum and the first index holding it; `None` for empty input.
    pub fn argmin<T: Element>(&self, data: &[T]) -> Result<Option<(T, usize)>> {
        self.run_arg_extreme(data, Extreme::Min)
    }

    /// The maximum and the first index holding it; `None` for empty input.
    pub fn argmax<T: Element>(&self, data: &[T]) -> Result<Option<(T, usize)>> {
        self.run_arg_extreme(data, Extreme::Max)
    }

    fn run_arg_extreme<T: Element>(
        &self,
        data: &[T],
        extreme: Extreme,
    ) -> Result<Option<(T, usize)>> {
        match self.backend_for(Operation::ArgReduce, Some(T::DTYPE))? {
            Backend::Cpu(cpu) => Ok(cpu.arg_extreme(data, extreme)),
            Backend::OpenCl(cl) => cl.arg_extreme(data, extreme),
            Backend::Cuda(cuda) => cuda.arg_extreme(data, extreme),
        }
    }

    /// Per segment of CSR `offsets`, the minimum and its first index into `data`.
    /// Empty segments get value `T::HIGHEST` and index [`crate::EMPTY_SEGMENT`].
    pub fn segmented_argmin<T: Element>(
        &self,
        data: &[T],
        offsets: &[u64],
        values: &mut [T],
        indices: &mut [u64],
    ) -> Result<()> {
        self.run_segmented_arg_extreme(data, offsets, Extreme::Min, values, indices)
    }

    /// Per segment of CSR `offsets`, the maximum and its first index into `data`.
    /// Empty segments get value `T::LOWEST` and index [`crate::EMPTY_SEGMENT`].
    pub fn segmented_argmax<T: Element>(
        &self,
        data: &[T],
        offsets: &[u64],
        values: &mut [T],
        indices: &mut [u64],
    ) -> Result<()> {
        self.run_segmented_arg_extreme(data, offsets, Extreme::Max, values, indices)
    }

    fn run_segmented_arg_extreme<T: Element>(
        &self,
        data: &[T],
        offsets: &[u64],
        extreme: Extreme,
        values: &mut [T],
        indices: &mut [u64],
    ) -> Result<()> {
        validate_offsets(offsets, data.len())?;
        let segments = offsets.len() - 1;
        if values.len() != segments || indices.len() != segments {
            return Err(Error::invalid_argument(format!(
                "{segments} segments need {segments} values and indices, got {} and {}",
                values.len(),
                indices.len()
            )));
        }
        match self.backend_for(Operation::SegmentedArgReduce, Some(T::DTYPE))? {
            Backend::Cpu(cpu) => {
                cpu.segmented_arg_extreme(data, offsets, extreme, values, indices)?
            }
            Backend::OpenCl(cl) => {
                cl.segmented_arg_extreme(data, offsets, extreme, values, indices)?
            }
            Backend::Cuda(cuda) => {
                cuda.segmented_arg_extreme(data, offsets, extreme, values, indices)?
            }
        }
        Ok(())
    }

    // ---- minimum spanning forests -----------------------------------------------

    /// The minimum spanning forest of `graph` under the (weight, edge id) order.
    /// The graph is validated first; an error names the first offending index.
    pub fn msf(&self, graph: &Graph<'_>, options: &MsfOptions) -> Result<Forest> {
        match self.backend_for(Operation::Msf, None)? {
            Backend::Cpu(cpu) => {
                let solver = Solver::Cpu {
                    memory_limit: cpu.memory_limit(),
                };
                cpu.install(|| msf::minimum_spanning_forest(graph, options, solver))
            }
            // Validation and result assembly run on the CPU tier's threads when the
            // context has one (auto), else on rayon's global pool.
            Backend::OpenCl(cl) => {
                let gpus = self.with_more_devices(cl);
                self.on_cpu_threads(|| {
                    msf::minimum_spanning_forest(graph, options, Solver::OpenCl(&gpus))
                })
            }
            Backend::Cuda(cuda) => {
                let gpus = self.with_more_devices(cuda);
                self.on_cpu_threads(|| {
                    msf::minimum_spanning_forest(graph, options, Solver::Cuda(&gpus))
                })
            }
        }
    }

    /// The minimum spanning forest of a graph already in device memory, written to
    /// device memory (see [`msf::DeviceGraph`] and [`msf::DeviceOutput`]), on the
    /// context's first GPU tier. Validation runs on the device and fails with the
    /// messages [`Context::msf`] gives; a device call moves only a few words between
    /// host and device (plus the forest's weights when a total is asked for).
    ///
    /// # Safety
    /// Every address in `graph` and `output` is live memory of that tier (for OpenCL,
    /// a valid `cl_mem` of the context in [`Context::native_handles`]) holding what
    /// the fields say, not written by other work during the call; `output.queue` is
    /// null or a live queue of the same context.
    pub unsafe fn msf_on_device(
        &self,
        graph: &msf::DeviceGraph,
        options: &MsfOptions,
        output: &msf::DeviceOutput,
    ) -> Result<msf::DeviceForest> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.msf_of_device_input(msf::DeviceInput::EdgeList(graph), options, output) }
    }

    /// [`Context::msf_on_device`] for a symmetric CSR graph in device memory (see
    /// [`msf::DeviceCsrGraph`]): the offsets, the targets' range and the symmetry are
    /// checked on the device, a rejected graph's arrays are copied to the host so
    /// that the error names what [`Context::msf`] names, and the forest's ids are CSR
    /// positions (of the entries with source < target), as for a host CSR graph.
    ///
    /// # Safety
    /// As [`Context::msf_on_device`].
    pub unsafe fn msf_csr_on_device(
        &self,
        graph: &msf::DeviceCsrGraph,
        options: &MsfOptions,
        output: &msf::DeviceOutput,
    ) -> Result<msf::DeviceForest> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.msf_of_device_input(msf::DeviceInput::Csr(graph), options, output) }
    }

    /// Writes the component labels of a forest of `graph` (its `count` edge ids, u64
    /// at device address `ids`) to device memory `labels` (one u32 per vertex): per
    /// vertex the smallest vertex of its component, as [`Forest::labels`] gives them
    /// for host graphs. The work follows what the caller issued to `queue` (0: none)
    /// and is complete when the call returns.
    ///
    /// # Safety
    /// As [`Context::msf_on_device`], for `graph`, `ids` (`count` u64) and `labels`.
    pub unsafe fn forest_labels_on_device(
        &self,
        graph: msf::DeviceInput<'_>,
        ids: usize,
        count: usize,
        labels: usize,
        queue: usize,
    ) -> Result<()> {
        // SAFETY (both arms): the caller's promise, passed on.
        match self.gpu_backend()? {
            Backend::OpenCl(cl) => self.on_cpu_threads(|| unsafe {
                msf::forest_labels_on_device(cl, graph, ids, count, labels, queue)
            }),
            Backend::Cuda(cuda) => self.on_cpu_threads(|| unsafe {
                msf::forest_labels_on_device(cuda, graph, ids, count, labels, queue)
            }),
            Backend::Cpu(_) => unreachable!("gpu_backend returns GPU tiers"),
        }
    }

    /// # Safety
    /// As [`Context::msf_on_device`].
    unsafe fn msf_of_device_input(
        &self,
        graph: msf::DeviceInput<'_>,
        options: &MsfOptions,
        output: &msf::DeviceOutput,
    ) -> Result<msf::DeviceForest> {
        // SAFETY (both arms): the caller's promise, passed on.
        match self.gpu_backend()? {
            Backend::OpenCl(cl) => self.on_cpu_threads(|| unsafe {
                msf::minimum_spanning_forest_on_device(cl, Tier::OpenCl, graph, options, output)
            }),
            Backend::Cuda(cuda) => self.on_cpu_threads(|| unsafe {
                msf::minimum_spanning_forest_on_device(cuda, Tier::Cuda, graph, options, output)
            }),
            Backend::Cpu(_) => unreachable!("gpu_backend returns GPU tiers"),
        }
    }

    /// The context's first GPU tier and its native handles (context, queue, device),
    /// for callers that allocate the device memory they pass in: OpenCL buffers must
    /// be made in this `cl_context`. None when the context has no GPU tier.
    pub fn native_handles(&self) -> Option<(Tier, NativeHandles)> {
        match self.gpu_backend().ok()? {
            Backend::OpenCl(cl) => Some((Tier::OpenCl, cl.native_handles())),
            Backend::Cuda(cuda) => Some((Tier::Cuda, cuda.native_handles())),
            Backend::Cpu(_) => None,
        }
    }

    /// The caller's device memory (`len` elements at `address`) as a [`Buffer`] of the
    /// context's first GPU tier, for the `*_buffer` primitives; gpumst never frees it.
    ///
    /// # Safety
    /// `address` is live memory of that tier (as in [`Context::msf_on_device`]) holding
    /// `len` elements of T, and stays so while the buffer lives.
    pub unsafe fn wrap_device<T: Stored>(&self, address: usize, len: usize) -> Result<Buffer<T>> {
        // SAFETY (both arms): the caller's promise, passed on.
        match self.gpu_backend()? {
            Backend::OpenCl(cl) => Ok(Buffer::from_storage(
                Tier::OpenCl,
                Storage::OpenCl(unsafe { cl.wrap(address, len, "the device buffer")? }),
            )),
            Backend::Cuda(cuda) => Ok(Buffer::from_storage(
                Tier::Cuda,
                Storage::Cuda(unsafe { cuda.wrap(address, len, "the device buffer")? }),
            )),
            Backend::Cpu(_) => unreachable!("gpu_backend returns GPU tiers"),
        }
    }

    /// Orders the context's next device work after what the caller issued so far to
    /// `queue` (a `CUstream` or `cl_command_queue` handle's value; 0: nothing), for the
    /// `*_buffer` primitives on wrapped memory ([`Context::msf_on_device`] takes its
    /// queue itself). Nothing to do on a context without a GPU tier.
    ///
    /// # Safety
    /// A non-zero `queue` is a live queue of the context in [`Context::native_handles`].
    pub unsafe fn follow_queue(&self, queue: usize) -> Result<()> {
        // SAFETY (both arms): the caller's promise, passed on.
        match self.gpu_backend() {
            Ok(Backend::OpenCl(cl)) => unsafe { cl.follow(queue as *mut std::ffi::c_void) },
            Ok(Backend::Cuda(cuda)) => unsafe { cuda.follow(queue as *mut std::ffi::c_void) },
            _ => Ok(()),
        }
    }

    /// The first GPU tier of the context (in preference order).
    fn gpu_backend(&self) -> Result<&Backend> {
        self.backends
            .iter()
            .find(|b| !matches!(b, Backend::Cpu(_)))
            .ok_or_else(|| {
                Error::backend_unavailable(format!(
                    "device memory needs a GPU tier, and this context has only the {} tier ({}){}",
                    self.backends[0].tier(),
                    self.backends[0].device_name(),
                    if self.skipped_tiers().is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; skipped: {}",
                            self.skipped_tiers()
                                .iter()
                                .map(|(t, why)| format!("{t}: {why}"))
                                .collect::<Vec<_>>()
                                .join("; ")
                        )
                    }
                ))
            })
    }

    /// `first` followed by the context's further devices of its tier.
    fn with_more_devices<'a, D: GpuKind>(&'a self, first: &'a Gpu<D>) -> Vec<&'a Gpu<D>> {
        std::iter::once(first)
            .chain(self.more_devices.iter().filter_map(D::of))
            .collect()
    }

    /// Runs `work` on the CPU tier's threads when the context has one (auto), else on
    /// rayon's global pool.
    pub(crate) fn on_cpu_threads<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        match self.cpu() {
            Some(cpu) => cpu.install(work),
            None => work(),
        }
    }

    fn cpu(&self) -> Option<&crate::tier::cpu::CpuTier> {
        self.backends.iter().find_map(|b| match b {
            Backend::Cpu(cpu) => Some(cpu),
            _ => None,
        })
    }

    // ---- buffers -----------------------------------------------------------------

    /// Copies `data` into a buffer resident on the preferred tier (the first one that
    /// handles this element type).
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buffer<T>> {
        self.upload_for(T::DTYPE, data, "the buffer")
    }

    /// Copies a segmented scan's head flags (nonzero starts a segment) into a buffer
    /// on the tier [`Context::upload`] picks for `T`, for
    /// [`Context::segmented_scan_flags_buffer`] on a `Buffer<T>`.
    pub fn upload_flags<T: Element>(&self, flags: &[u8]) -> Result<Buffer<u8>> {
        self.upload_for(T::DTYPE, flags, "the flags")
    }

    fn upload_for<S: Stored>(&self, dtype: DType, data: &[S], what: &str) -> Result<Buffer<S>> {
        match self.backend_for(Operation::Scan, Some(dtype))? {
            Backend::Cpu(_) => Ok(Buffer::from_storage(
                Tier::Cpu,
                Storage::Host(crate::alloc::collect(data.iter().copied(), what)?),
            )),
            Backend::OpenCl(cl) => Ok(Buffer::from_storage(
                Tier::OpenCl,
                Storage::OpenCl(cl.upload_buffer(data)?),
            )),
            Backend::Cuda(cuda) => Ok(Buffer::from_storage(
                Tier::Cuda,
                Storage::Cuda(cuda.upload_buffer(data)?),
            )),
        }
    }

    /// Device bytes gpumst's buffers hold now on this context's GPU tiers.
    #[cfg(feature = "fault-injection")]
    pub(crate) fn device_bytes_held(&self) -> u64 {
        self.backends
            .iter()
            .chain(&self.more_devices)
            .map(|backend| match backend {
                Backend::Cpu(_) => 0,
                Backend::OpenCl(gpu) => gpu.meter.live(),
                Backend::Cuda(gpu) => gpu.meter.live(),
            })
            .sum()
    }

    /// The GPU tier of this context that holds buffers of device kind D.
    fn gpu_of<D: GpuKind>(&self) -> Result<&Gpu<D>> {
        self.backends.iter().find_map(D::of).ok_or_else(|| {
            Error::invalid_argument(format!(
                "this buffer lives on the {} tier, which this context does not use",
                D::TIER
            ))
        })
    }

    /// Copies `buffer` back into `out`, which must have the buffer's length.
    pub fn download<T: Stored>(&self, buffer: &Buffer<T>, out: &mut [T]) -> Result<()> {
        if out.len() != buffer.len() {
            return Err(Error::invalid_argument(format!(
                "download target has {} elements, the buffer {}",
                out.len(),
                buffer.len()
            )));
        }
        match &buffer.storage {
            Storage::Host(data) => out.copy_from_slice(data),
            Storage::OpenCl(device) => self.gpu_of()?.download_buffer(device, out)?,
            Storage::Cuda(device) => self.gpu_of()?.download_buffer(device, out)?,
        }
        Ok(())
    }

    /// Scans a resident buffer in place, without moving it to the host.
    pub fn scan_buffer<T: Element>(
        &self,
        buffer: &mut Buffer<T>,
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        match &mut buffer.storage {
            Storage::Host(data) => self.scan_in_place(data, op, kind),
            Storage::OpenCl(device) => self.gpu_of()?.scan_resident(device, None, op, kind),
            Storage::Cuda(device) => self.gpu_of()?.scan_resident(device, None, op, kind),
        }
    }

    /// Scans each segment `offsets[s]..offsets[s + 1]` of a resident buffer in place
    /// ([`Context::segmented_scan_offsets`] where the data and offsets live).
    pub fn segmented_scan_buffer<T: Element>(
        &self,
        buffer: &mut Buffer<T>,
        offsets: &Buffer<u64>,
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        let tiers = (buffer.tier(), offsets.tier());
        match (&mut buffer.storage, &offsets.storage) {
            (Storage::Host(d), Storage::Host(o)) => {
                self.segmented_scan_offsets_in_place(d, o, op, kind)
            }
            (Storage::OpenCl(d), Storage::OpenCl(o)) => {
                self.gpu_of()?.segmented_scan_resident(d, o, op, kind)
            }
            (Storage::Cuda(d), Storage::Cuda(o)) => {
                self.gpu_of()?.segmented_scan_resident(d, o, op, kind)
            }
            _ => Err(mixed_tiers(tiers.0, tiers.1)),
        }
    }

    /// Scans a resident buffer in place, restarting wherever the resident `flags` are
    /// nonzero (index 0 always starts a segment): [`Context::segmented_scan_flags`]
    /// where the data and flags live.
    pub fn segmented_scan_flags_buffer<T: Element>(
        &self,
        buffer: &mut Buffer<T>,
        flags: &Buffer<u8>,
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        if flags.len() != buffer.len() {
            return Err(flags_length(flags.len(), buffer.len()));
        }
        let tiers = (buffer.tier(), flags.tier());
        match (&mut buffer.storage, &flags.storage) {
            (Storage::Host(d), Storage::Host(f)) => {
                self.segmented_scan_flags_in_place(d, f, op, kind)
            }
            (Storage::OpenCl(d), Storage::OpenCl(f)) => {
                self.gpu_of()?.scan_resident(d, Some(f), op, kind)
            }
            (Storage::Cuda(d), Storage::Cuda(f)) => {
                self.gpu_of()?.scan_resident(d, Some(f), op, kind)
            }
            _ => Err(mixed_tiers(tiers.0, tiers.1)),
        }
    }

    /// Copies resident `source` into resident `target` of the same length, where they
    /// live (device to device on a GPU).
    pub fn copy_buffer<T: Element>(
        &self,
        source: &Buffer<T>,
        target: &mut Buffer<T>,
    ) -> Result<()> {
        if source.len() != target.len() {
            return Err(Error::invalid_argument(format!(
                "copy of {} elements into a buffer of {}",
                source.len(),
                target.len()
            )));
        }
        match (&source.storage, &mut target.storage) {
            (Storage::Host(s), Storage::Host(t)) => t.copy_from_slice(s),
            (Storage::OpenCl(s), Storage::OpenCl(t)) => self.gpu_of()?.copy_resident(s, t)?,
            (Storage::Cuda(s), Storage::Cuda(t)) => self.gpu_of()?.copy_resident(s, t)?,
            _ => return Err(mixed_tiers(source.tier(), target.tier())),
        }
        Ok(())
    }

    /// [`Context::segmented_argmin`] on resident buffers of one tier: per segment of
    /// `offsets`, the minimum of `data` into `values` and its first index into `indices`.
    pub fn segmented_argmin_buffer<T: Element>(
        &self,
        data: &Buffer<T>,
        offsets: &Buffer<u64>,
        values: &mut Buffer<T>,
        indices: &mut Buffer<u64>,
    ) -> Result<()> {
        self.segmented_arg_extreme_buffer(data, offsets, Extreme::Min, values, indices)
    }

    /// [`Context::segmented_argmax`] on resident buffers of one tier: per segment of
    /// `offsets`, the maximum of `data` into `values` and its first index into `indices`.
    pub fn segmented_argmax_buffer<T: Element>(
        &self,
        data: &Buffer<T>,
        offsets: &Buffer<u64>,
        values: &mut Buffer<T>,
        indices: &mut Buffer<u64>,
    ) -> Result<()> {
        self.segmented_arg_extreme_buffer(data, offsets, Extreme::Max, values, indices)
    }

    fn segmented_arg_extreme_buffer<T: Element>(
        &self,
        data: &Buffer<T>,
        offsets: &Buffer<u64>,
        extreme: Extreme,
        values: &mut Buffer<T>,
        indices: &mut Buffer<u64>,
    ) -> Result<()> {
        let segments = offsets.len().saturating_sub(1);
        if values.len() != segments || indices.len() != segments {
            return Err(Error::invalid_argument(format!(
                "{segments} segments need {segments} values and indices, got {} and {}",
                values.len(),
                indices.len()
            )));
        }
        match (
            &data.storage,
            &offsets.storage,
            &mut values.storage,
            &mut indices.storage,
        ) {
            (Storage::Host(d), Storage::Host(o), Storage::Host(v), Storage::Host(i)) => {
                self.run_segmented_arg_extreme(d, o, extreme, v, i)
            }
            (Storage::OpenCl(d), Storage::OpenCl(o), Storage::OpenCl(v), Storage::OpenCl(i)) => {
                self.gpu_of()?
                    .checked_segmented_arg_extreme_resident(d, o, extreme, v, i)
            }
            (Storage::Cuda(d), Storage::Cuda(o), Storage::Cuda(v), Storage::Cuda(i)) => self
                .gpu_of()?
                .checked_segmented_arg_extreme_resident(d, o, extreme, v, i),
            _ => Err(mixed_tiers(data.tier(), offsets.tier())),
        }
    }

    /// Arg-minimum of a resident buffer.
    pub fn argmin_buffer<T: Element>(&self, buffer: &Buffer<T>) -> Result<Option<(T, usize)>> {
        self.arg_extreme_buffer(buffer, Extreme::Min)
    }

    /// Arg-maximum of a resident buffer.
    pub fn argmax_buffer<T: Element>(&self, buffer: &Buffer<T>) -> Result<Option<(T, usize)>> {
        self.arg_extreme_buffer(buffer, Extreme::Max)
    }

    fn arg_extreme_buffer<T: Element>(
        &self,
        buffer: &Buffer<T>,
        extreme: Extreme,
    ) -> Result<Option<(T, usize)>> {
        match &buffer.storage {
            Storage::Host(data) => self.run_arg_extreme(data, extreme),
            Storage::OpenCl(device) => self.gpu_of()?.arg_extreme_resident(device, extreme),
            Storage::Cuda(device) => self.gpu_of()?.arg_extreme_resident(device, extreme),
        }
    }
}

/// Head flags must number the data's elements (host and resident scans alike).
fn flags_length(flags: usize, n: usize) -> Error {
    Error::invalid_argument(format!(
        "flags has {flags} entries but the data has {n} elements"
    ))
}

fn mixed_tiers(a: Tier, b: Tier) -> Error {
    Error::invalid_argument(format!(
        "the buffers live on different tiers ({a} and {b}); download and upload to move them"
    ))
}
