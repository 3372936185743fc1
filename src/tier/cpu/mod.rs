//! The CPU tier: every primitive on a rayon pool owned by the context.

#[cfg(target_arch = "x86_64")]
mod extreme_blocks;
mod reduce;
mod scan;
mod segments;
pub(crate) mod team;

use crate::types::{with_monoid, Element, Extreme, ScanKind, ScanOp};
use crate::{Error, Result};
use segments::{HeadFlags, Offsets, Unsegmented};

pub(crate) struct CpuTier {
    pool: rayon::ThreadPool,
    /// The most bytes a minimum spanning forest's working arrays may take (0: no cap).
    memory_limit: u64,
    /// Working arrays are kept between calls while this tier lives.
    _kept: crate::kept::Holder,
}

impl CpuTier {
    /// `threads == 0` uses rayon's default (all cores, or `RAYON_NUM_THREADS`);
    /// `memory_limit == 0` leaves memory uncapped.
    pub(crate) fn new(threads: usize, memory_limit: u64) -> Result<Self> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("gpumst-cpu-{i}"))
            .build()
            .map_err(|e| Error::internal(format!("could not start {threads} CPU threads: {e}")))?;
        Ok(CpuTier {
            pool,
            memory_limit,
            _kept: crate::kept::Holder::new(),
        })
    }

    /// Runs `f` with this context's threads as rayon's current pool.
    pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    pub(crate) fn memory_limit(&self) -> u64 {
        self.memory_limit
    }

    pub(crate) fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    pub(crate) fn device_name(&self) -> String {
        let model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, name)| name.trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        format!("{model} ({} threads)", self.threads())
    }

    /// Total system memory in bytes, 0 when the platform does not say.
    pub(crate) fn memory_bytes(&self) -> u64 {
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| {
                let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
                let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
                Some(kib * 1024)
            })
            .unwrap_or(0)
    }

    pub(crate) fn scan<T: Element>(
        &self,
        src: Option<&[T]>,
        dst: &mut [T],
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        with_monoid!(op, M => scan::scan::<T, M>(&self.pool, src, dst, kind, &Unsegmented))
    }

    pub(crate) fn segmented_scan_flags<T: Element>(
        &self,
        src: Option<&[T]>,
        dst: &mut [T],
        flags: &[u8],
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        let seg = HeadFlags(flags);
        with_monoid!(op, M => scan::scan::<T, M>(&self.pool, src, dst, kind, &seg))
    }

    pub(crate) fn segmented_scan_offsets<T: Element>(
        &self,
        src: Option<&[T]>,
        dst: &mut [T],
        offsets: &[u64],
        op: ScanOp,
        kind: ScanKind,
    ) -> Result<()> {
        let seg = Offsets(offsets);
        with_monoid!(op, M => scan::scan::<T, M>(&self.pool, src, dst, kind, &seg))
    }

    pub(crate) fn arg_extreme<T: Element>(
        &self,
        data: &[T],
        extreme: Extreme,
    ) -> Option<(T, usize)> {
        reduce::arg_extreme(&self.pool, data, extreme)
    }

    pub(crate) fn segmented_arg_extreme<T: Element>(
        &self,
        data: &[T],
        offsets: &[u64],
        extreme: Extreme,
        values: &mut [T],
        indices: &mut [u64],
    ) -> Result<()> {
        reduce::segmented_arg_extreme(&self.pool, data, offsets, extreme, values, indices)
    }
}
