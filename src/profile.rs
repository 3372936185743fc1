//! Wall-clock time per phase of an MSF call, to find what does not scale with threads
//! (feature `phase-profile`, for benchmarks). Without the feature, [`span`] is the bare
//! call and nothing is recorded.
//!
//! Phases are summed per name in one process-wide table, so a profile is only
//! meaningful when one call runs at a time. A team's members add `team: ...` entries
//! (`tier::cpu::team`: their work, waits and page faults). Two switches for digging
//! further: `GPUMST_PROFILE_FAULTS` counts the process's page faults per phase
//! ([`take_faults`]; the CLI prints them), and `GPUMST_TEAM_LAPS` prints each team's
//! laps (work between barriers, slowest / mean / fastest member, and page faults).
//! `GPUMST_PROFILE_TIMELINE` prints every span as it ends (thread, start and end in
//! ms since the process's first span), to see which thread waits on which
//! (`tools/timeline_summary.py` sums up a run's last call per thread and span).

/// Runs `f`, adding its wall time to the phase `name`.
#[cfg(not(feature = "phase-profile"))]
#[inline(always)]
pub(crate) fn span<T>(_name: &'static str, f: impl FnOnce() -> T) -> T {
    f()
}

#[cfg(feature = "phase-profile")]
pub(crate) use enabled::{add, span, usage};
#[cfg(feature = "phase-profile")]
pub use enabled::{take_faults, take_phases};

#[cfg(feature = "phase-profile")]
mod enabled {
    use std::sync::Mutex;
    use std::time::Instant;

    /// When the first span printed to the timeline began.
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

    /// (phase, milliseconds), in the order the phases first ran.
    static PHASES: Mutex<Vec<(&'static str, f64)>> = Mutex::new(Vec::new());

    pub(crate) fn span<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
        let faults = if std::env::var_os("GPUMST_PROFILE_FAULTS").is_some() {
            Some(process_faults())
        } else {
            None
        };
        let start = Instant::now();
        let out = f();
        add(name, start.elapsed().as_secs_f64() * 1e3);
        if std::env::var_os("GPUMST_PROFILE_TIMELINE").is_some() {
            let epoch = *EPOCH.get_or_init(|| start);
            let ms = |at: Instant| at.saturating_duration_since(epoch).as_secs_f64() * 1e3;
            eprintln!(
                "timeline {:?} {:.3} {:.3} {name}",
                std::thread::current().id(),
                ms(start),
                ms(Instant::now())
            );
        }
        if let Some(before) = faults {
            sum_into(&FAULTS, name, process_faults() - before);
        }
        out
    }

    /// Adds `value` to `name`'s entry of `table` (entries in the order they first came).
    fn sum_into<T: std::ops::AddAssign>(
        table: &Mutex<Vec<(&'static str, T)>>,
        name: &'static str,
        value: T,
    ) {
        // A poisoned table still holds valid numbers.
        let mut table = table.lock().unwrap_or_else(|e| e.into_inner());
        match table.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 += value,
            None => table.push((name, value)),
        }
    }

    /// (phase, page faults in it), when GPUMST_PROFILE_FAULTS is set.
    static FAULTS: Mutex<Vec<(&'static str, i64)>> = Mutex::new(Vec::new());

    /// The process's page faults served without I/O so far.
    fn process_faults() -> i64 {
        usage(libc::RUSAGE_SELF).1
    }

    /// `getrusage(who)`'s involuntary context switches and page faults served without
    /// I/O (first touches of fresh memory), so far.
    pub(crate) fn usage(who: libc::c_int) -> (i64, i64) {
        // SAFETY: an all-zero rusage is valid; the call fills it.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is a valid rusage for the call to fill.
        unsafe { libc::getrusage(who, &mut usage) };
        (usage.ru_nivcsw, usage.ru_minflt)
    }

    /// The page faults per phase since the last call, summed per phase (nested phases
    /// count in their parents too), and clears them.
    pub fn take_faults() -> Vec<(&'static str, i64)> {
        std::mem::take(&mut *FAULTS.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Adds `ms` to the phase `name` (a figure measured some other way).
    pub(crate) fn add(name: &'static str, ms: f64) {
        sum_into(&PHASES, name, ms);
    }

    /// The phases recorded since the last call, in milliseconds, and clears them.
    pub fn take_phases() -> Vec<(&'static str, f64)> {
        std::mem::take(&mut *PHASES.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
