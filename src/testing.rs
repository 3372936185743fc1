//! Failures on demand, for tests: the N-th input-sized allocation (see `alloc.rs`), or
//! the N-th driver call of a GPU tier, fails. Compiled in only with the
//! `fault-injection` feature; without it the hooks are empty and inlined away.

/// The error a GPU tier's injected driver call fails with (each tier maps it to its
/// own driver's code and name, and handles it as it would the real one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverFault {
    /// CUDA_ERROR_OUT_OF_MEMORY; OpenCL CL_MEM_OBJECT_ALLOCATION_FAILURE.
    OutOfMemory,
    /// CUDA_ERROR_LAUNCH_FAILED (sticky: the CUDA context is lost); OpenCL
    /// CL_OUT_OF_RESOURCES (what drivers report for a failed kernel).
    LaunchFailed,
    /// CUDA_ERROR_ILLEGAL_ADDRESS (sticky); OpenCL CL_INVALID_COMMAND_QUEUE (the queue
    /// is gone).
    ContextLost,
}

#[cfg(feature = "fault-injection")]
mod hooks {
    use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU8, Ordering::SeqCst};

    use super::DriverFault;
    use crate::{Error, Result, Status};

    /// Events to let through before the failing one (negative: disarmed), and counts
    /// since the last arming.
    struct Countdown {
        left: AtomicI64,
        seen: AtomicU64,
        failed: AtomicU64,
    }

    impl Countdown {
        const fn new() -> Self {
            Countdown {
                left: AtomicI64::new(-1),
                seen: AtomicU64::new(0),
                failed: AtomicU64::new(0),
            }
        }

        fn arm(&self, n: Option<u64>) {
            self.seen.store(0, SeqCst);
            self.failed.store(0, SeqCst);
            self.left
                .store(n.map_or(-1, |n| n.min(i64::MAX as u64) as i64), SeqCst);
        }

        /// Whether this event is the one to fail (exactly one caller sees it).
        fn fire(&self) -> bool {
            self.seen.fetch_add(1, SeqCst);
            let previous = self
                .left
                .fetch_update(SeqCst, SeqCst, |c| (c >= 0).then(|| c - 1));
            let fire = previous == Ok(0);
            if fire {
                self.failed.fetch_add(1, SeqCst);
            }
            fire
        }
    }

    static ALLOCATIONS: Countdown = Countdown::new();
    static DRIVER_CALLS: Countdown = Countdown::new();
    static DRIVER_FAULT: AtomicU8 = AtomicU8::new(0);

    /// Makes the `n`-th input-sized allocation from now (0 = the next) fail, process
    /// wide; `None` disarms. Resets [`allocations`] and [`failures`].
    pub fn fail_allocation_after(n: Option<u64>) {
        ALLOCATIONS.arm(n);
    }

    /// Input-sized allocations made (or refused) since the last arming.
    pub fn allocations() -> u64 {
        ALLOCATIONS.seen.load(SeqCst)
    }

    /// Allocations refused on purpose since the last arming (0 or 1).
    pub fn failures() -> u64 {
        ALLOCATIONS.failed.load(SeqCst)
    }

    /// Makes the `n`-th GPU driver call from now fail with `fault`, process wide;
    /// `None` disarms. Resets [`driver_calls`] and [`driver_failures`].
    pub fn fail_driver_call_after(n: Option<u64>, fault: DriverFault) {
        DRIVER_FAULT.store(fault as u8, SeqCst);
        DRIVER_CALLS.arm(n);
    }

    /// GPU driver calls made (or failed) since the last arming.
    pub fn driver_calls() -> u64 {
        DRIVER_CALLS.seen.load(SeqCst)
    }

    /// Driver calls failed on purpose since the last arming (0 or 1).
    pub fn driver_failures() -> u64 {
        DRIVER_CALLS.failed.load(SeqCst)
    }

    /// Device bytes gpumst's buffers hold now on `ctx`'s GPU tiers (buffers kept
    /// between calls included).
    pub fn device_bytes_held(ctx: &crate::Context) -> u64 {
        ctx.device_bytes_held()
    }

    pub(crate) fn allocation(what: &str, count: usize) -> Result<()> {
        if ALLOCATIONS.fire() {
            return Err(Error::new(
                Status::OutOfMemory,
                format!("injected allocation failure for {what} ({count} elements)"),
            ));
        }
        Ok(())
    }

    pub(crate) fn driver_fault() -> Option<DriverFault> {
        DRIVER_CALLS
            .fire()
            .then(|| match DRIVER_FAULT.load(SeqCst) {
                0 => DriverFault::OutOfMemory,
                1 => DriverFault::LaunchFailed,
                _ => DriverFault::ContextLost,
            })
    }
}

#[cfg(feature = "fault-injection")]
pub use hooks::*;

#[cfg(not(feature = "fault-injection"))]
mod hooks {
    #[inline(always)]
    pub(crate) fn allocation(_what: &str, _count: usize) -> crate::Result<()> {
        Ok(())
    }

    #[inline(always)]
    pub(crate) fn driver_fault() -> Option<super::DriverFault> {
        None
    }
}

#[cfg(not(feature = "fault-injection"))]
pub(crate) use hooks::*;
