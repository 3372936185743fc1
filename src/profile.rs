//! Wall-clock time per phase of an MSF call, to find what does not scale with threads
//! (feature `phase-profile`, for benchmarks). Without the feature, [`span`] is the bare
//! call and nothing is recorded.
//!
//! Phases are summed per name in one process-wide table, so a profile is only
//! meaningful when one call runs at a time.

/// Runs `f`, adding its wall time to the phase `name`.
#[cfg(not(feature = "phase-profile"))]
#[inline(always)]
pub(crate) fn span<T>(_name: &'static str, f: impl FnOnce() -> T) -> T {
    f()
}

#[cfg(feature = "phase-profile")]
pub use enabled::take_phases;
#[cfg(feature = "phase-profile")]
pub(crate) use enabled::{add, span};

#[cfg(feature = "phase-profile")]
mod enabled {
    use std::sync::Mutex;
    use std::time::Instant;

    /// (phase, milliseconds), in the order the phases first ran.
    static PHASES: Mutex<Vec<(&'static str, f64)>> = Mutex::new(Vec::new());

    pub(crate) fn span<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        add(name, start.elapsed().as_secs_f64() * 1e3);
        out
    }

    /// Adds `ms` to the phase `name` (a figure measured some other way).
    pub(crate) fn add(name: &'static str, ms: f64) {
        // A poisoned table still holds valid numbers.
        let mut phases = PHASES.lock().unwrap_or_else(|e| e.into_inner());
        match phases.iter_mut().find(|(n, _)| *n == name) {
            Some(phase) => phase.1 += ms,
            None => phases.push((name, ms)),
        }
    }

    /// The phases recorded since the last call, in milliseconds, and clears them.
    pub fn take_phases() -> Vec<(&'static str, f64)> {
        std::mem::take(&mut *PHASES.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
