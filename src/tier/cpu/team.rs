//! A team: every thread of the current rayon pool running one closure at once, the
//! members waiting for each other at barriers between phases (SPMD; a waiter spins,
//! then naps), for algorithms made of many short passes (Borůvka's rounds on a road
//! graph).
//!
//! Why not one rayon pass per phase: an idle rayon thread goes to sleep within
//! microseconds, and each pass wakes the pool again. On the 16-core Xeon VM of the
//! benchmarks a pass over almost nothing cost 21 µs with threads awake and 56-60 µs
//! after a 100 µs gap, against 3 µs for a spin barrier; a road graph's rounds make
//! about thirty passes, and the slow wake-ups of sleeping cores made its 16-thread times
//! swing between 8 and 100 ms. A team wakes the pool once and keeps it awake until the
//! work is done.
//!
//! One team runs at a time in the process. A member waits at a barrier until every
//! other member arrives, so two teams sharing threads could each hold a thread the
//! other waits for; a call that finds a team running gets a team of one (its caller's
//! thread alone, same code, same answer) instead of waiting.

use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Set while a team runs anywhere in the process.
static TEAM_RUNNING: AtomicBool = AtomicBool::new(false);

/// Spins at a barrier before sleeping between checks. A member that waits longer lets
/// its core go: where threads outnumber cores the member being waited for may need it,
/// and on a virtual machine's cores a spinning (or yielding) waiter slowed the members
/// still working (road graphs at 16 threads 7.7 against 10.0 ms, docs/performance-log.md,
/// fifteenth session), as PBBS's idle workers sleep between steal attempts.
const SPINS_BEFORE_SLEEPING: u32 = 1 << 12;
/// The sleep asked for between later checks (the kernel's timer slack makes it tens of
/// microseconds).
const NAP: std::time::Duration = std::time::Duration::from_micros(1);

/// One thread's view of its team.
pub(crate) struct Member<'a> {
    index: usize,
    size: usize,
    shared: &'a Shared,
    /// How many times this member has called [`Member::agree`].
    agreements: Cell<usize>,
    #[cfg(feature = "phase-profile")]
    laps: laps::Laps,
}

/// What the members share: the barrier and the flags.
struct Shared {
    arrived: AtomicUsize,
    generation: AtomicUsize,
    /// The first [`Member::agree`] (counting from 1) at which a member gave up (an
    /// error), `usize::MAX` while none has: every member learns it there.
    failed_at: AtomicUsize,
    /// A member panicked: the others stop waiting and panic too.
    panicked: AtomicBool,
    #[cfg(feature = "phase-profile")]
    records: std::sync::Mutex<Vec<laps::Record>>,
}

impl Member<'_> {
    /// This member's index, `0..size`.
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// How many members the team has.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Waits until every member has called `sync` as often as this one. Whatever a
    /// member wrote before its call is visible to every member after theirs.
    pub(crate) fn sync(&self) {
        if self.size == 1 {
            return;
        }
        #[cfg(feature = "phase-profile")]
        self.laps.arrive();
        self.wait();
        #[cfg(feature = "phase-profile")]
        self.laps.leave();
    }

    fn wait(&self) {
        let shared = self.shared;
        let generation = shared.generation.load(Ordering::Acquire);
        if shared.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.size {
            // The last to arrive opens the next barrier before releasing this one:
            // nobody arrives at the next until they see the new generation.
            shared.arrived.store(0, Ordering::Relaxed);
            shared.generation.store(generation + 1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while shared.generation.load(Ordering::Acquire) == generation {
            if shared.panicked.load(Ordering::Relaxed) {
                panic!("another member of the team panicked");
            }
            if spins < SPINS_BEFORE_SLEEPING {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::sleep(NAP);
            }
        }
    }

    /// True when every member passes `ok == true`; a barrier. Once any member has
    /// passed false, every later call answers false too.
    pub(crate) fn agree(&self, ok: bool) -> bool {
        let this = self.agreements.get() + 1;
        self.agreements.set(this);
        if !ok {
            self.shared.failed_at.fetch_min(this, Ordering::Relaxed);
        }
        self.sync();
        // A member already past this barrier may give up at its next agreement before
        // this member reads: that counts for the next one, not this.
        self.shared.failed_at.load(Ordering::Relaxed) > this
    }
}

/// Runs `body` on every thread of the current rayon pool at once (one team member each),
/// or on this thread alone where the pool has one thread or another team is running;
/// the members' results in member order. A panic in one member reaches every member
/// (at its next barrier) and then the caller.
pub(crate) fn run<R: Send>(body: impl Fn(&Member<'_>) -> R + Sync) -> Vec<R> {
    let shared = Shared {
        arrived: AtomicUsize::new(0),
        generation: AtomicUsize::new(0),
        failed_at: AtomicUsize::new(usize::MAX),
        panicked: AtomicBool::new(false),
        #[cfg(feature = "phase-profile")]
        records: Default::default(),
    };
    #[cfg(feature = "phase-profile")]
    let called = std::time::Instant::now();
    let threads = rayon::current_num_threads();
    let claimed = threads > 1
        && TEAM_RUNNING
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
    if !claimed {
        return vec![body(&Member {
            index: 0,
            size: 1,
            shared: &shared,
            agreements: Cell::new(0),
            #[cfg(feature = "phase-profile")]
            laps: laps::Laps::start(called),
        })];
    }
    /// Lets the next team start however this one ends.
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            TEAM_RUNNING.store(false, Ordering::Release);
        }
    }
    let _release = Release;
    let results = rayon::broadcast(|context| {
        let member = Member {
            index: context.index(),
            size: context.num_threads(),
            shared: &shared,
            agreements: Cell::new(0),
            #[cfg(feature = "phase-profile")]
            laps: laps::Laps::start(called),
        };
        match catch_unwind(AssertUnwindSafe(|| body(&member))) {
            Ok(result) => {
                #[cfg(feature = "phase-profile")]
                member.laps.finish(&shared.records);
                result
            }
            Err(panic) => {
                shared.panicked.store(true, Ordering::Relaxed);
                resume_unwind(panic)
            }
        }
    });
    #[cfg(feature = "phase-profile")]
    laps::report(
        shared
            .records
            .into_inner()
            .unwrap_or_else(|e| e.into_inner()),
    );
    results
}

/// Where a team's members spend their time (feature `phase-profile`): each member's
/// work between barriers, in wall and CPU time, its waits, and the kernel's involuntary
/// switches of its thread; summed into the phase profile as `team: ...` entries.
#[cfg(feature = "phase-profile")]
mod laps {
    use std::cell::{Cell, RefCell};
    use std::sync::Mutex;
    use std::time::Instant;

    pub(super) struct Laps {
        /// How long after the team's caller called this member began (ms); when its
        /// lap began, and the thread's CPU time (ms) then.
        started_ms: f64,
        lap: Cell<(Instant, f64)>,
        /// Each lap's work: (wall, CPU) in ms.
        work: RefCell<Vec<(f64, f64)>>,
        /// Each lap's page faults, and the thread's count at the lap's start.
        lap_faults: RefCell<Vec<i64>>,
        faults_then: Cell<i64>,
        waited: Cell<f64>,
        /// The thread's involuntary switches when the member began.
        switches: i64,
    }

    pub(super) struct Record {
        started_ms: f64,
        work: Vec<(f64, f64)>,
        lap_faults: Vec<i64>,
        waited_ms: f64,
        switches: i64,
    }

    fn ms(from: Instant, to: Instant) -> f64 {
        (to - from).as_secs_f64() * 1e3
    }

    /// This thread's CPU time in ms.
    fn thread_cpu_ms() -> f64 {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec for the call to fill.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
    }

    /// The thread's involuntary switches and page faults so far.
    fn switches_and_faults() -> (i64, i64) {
        crate::profile::usage(libc::RUSAGE_THREAD)
    }

    impl Laps {
        pub(super) fn start(called: Instant) -> Self {
            let now = Instant::now();
            Laps {
                started_ms: ms(called, now),
                lap: Cell::new((now, thread_cpu_ms())),
                work: RefCell::default(),
                waited: Cell::new(0.0),
                switches: switches_and_faults().0,
                lap_faults: RefCell::default(),
                faults_then: Cell::new(switches_and_faults().1),
            }
        }

        /// At a barrier: the lap's work ends.
        pub(super) fn arrive(&self) {
            let (began, cpu) = self.lap.get();
            let (now, cpu_now) = (Instant::now(), thread_cpu_ms());
            self.work.borrow_mut().push((ms(began, now), cpu_now - cpu));
            let faults = switches_and_faults().1;
            self.lap_faults
                .borrow_mut()
                .push(faults - self.faults_then.get());
            self.faults_then.set(faults);
            self.lap.set((now, cpu_now));
        }

        /// Past a barrier: the next lap begins.
        pub(super) fn leave(&self) {
            let (arrived, _) = self.lap.get();
            let now = Instant::now();
            self.waited.set(self.waited.get() + ms(arrived, now));
            self.lap.set((now, thread_cpu_ms()));
        }

        pub(super) fn finish(&self, records: &Mutex<Vec<Record>>) {
            self.arrive();
            let record = Record {
                started_ms: self.started_ms,
                work: self.work.take(),
                lap_faults: self.lap_faults.take(),
                waited_ms: self.waited.get(),
                switches: switches_and_faults().0 - self.switches,
            };
            records
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(record);
        }
    }

    pub(super) fn report(records: Vec<Record>) {
        if std::env::var_os("GPUMST_TEAM_LAPS").is_some() {
            print_laps(&records);
        }
        let add = crate::profile::add;
        let members = records.len() as f64;
        let laps = records.iter().map(|r| r.work.len()).min().unwrap_or(0);
        let max = |f: &dyn Fn(&Record) -> f64| records.iter().map(f).fold(0.0, f64::max);
        let mean = |f: &dyn Fn(&Record) -> f64| records.iter().map(f).sum::<f64>() / members;
        add("team: members (count)", members);
        add("team: laps (count)", laps as f64);
        add("team: last member's start", max(&|r| r.started_ms));
        add(
            "team: slowest member's work, summed over laps",
            (0..laps).map(|k| max(&|r| r.work[k].0)).sum(),
        );
        add(
            "team: a member's work, mean",
            mean(&|r| r.work.iter().map(|w| w.0).sum()),
        );
        add(
            "team: a member's work off its core (wall - CPU), mean",
            mean(&|r| r.work.iter().map(|w| w.0 - w.1).sum()),
        );
        add("team: a member's waits, mean", mean(&|r| r.waited_ms));
        add(
            "team: involuntary switches, all members (count)",
            records.iter().map(|r| r.switches as f64).sum(),
        );
        add(
            "team: minor page faults, all members (count)",
            records.iter().flat_map(|r| &r.lap_faults).sum::<i64>() as f64,
        );
    }

    /// Each lap's slowest, mean and fastest member's work in µs, on stderr.
    fn print_laps(records: &[Record]) {
        let laps = records.iter().map(|r| r.work.len()).min().unwrap_or(0);
        let line: Vec<String> = (0..laps)
            .map(|k| {
                let work = records.iter().map(|r| r.work[k].0 * 1e3);
                let (max, min) = work
                    .clone()
                    .fold((0.0, f64::MAX), |(a, b), w| (w.max(a), w.min(b)));
                let mean = work.sum::<f64>() / records.len() as f64;
                let faults: i64 = records.iter().map(|r| r.lap_faults[k]).sum();
                format!("{max:.0}/{mean:.0}/{min:.0}({faults})")
            })
            .collect();
        let faults: i64 = records.iter().flat_map(|r| &r.lap_faults).sum();
        eprintln!(
            "team laps (µs, slowest/mean/fastest member; {faults} page faults): {}",
            line.join(" ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// `run` on a pool of `threads`, again until it forms a whole team: other tests of
    /// this binary run teams of their own at the same time, and then a team is one.
    fn whole_team<R: Send>(threads: usize, body: impl Fn(&Member<'_>) -> R + Sync) -> Vec<R> {
        let pool = pool(threads);
        for _ in 0..10_000 {
            let results = pool.install(|| run(&body));
            if results.len() == threads {
                return results;
            }
            std::thread::yield_now();
        }
        panic!("no team of {threads} formed in 10,000 tries");
    }

    /// Each phase reads what every member wrote in the phase before: a barrier that let
    /// a member through early would show it a stale value.
    #[test]
    fn barriers_order_the_phases() {
        for threads in [1, 2, 3, 5] {
            let cells: Vec<AtomicUsize> = (0..threads).map(|_| AtomicUsize::new(0)).collect();
            let seen = whole_team(threads, |me| {
                let mut seen: Vec<usize> = Vec::new();
                for phase in 1..=200 {
                    cells[me.index()].store(phase * (me.index() + 1), Ordering::Relaxed);
                    me.sync();
                    seen.push(cells.iter().map(|c| c.load(Ordering::Relaxed)).sum());
                    me.sync();
                }
                (me.size(), seen)
            });
            let expected: Vec<usize> = (1..=200)
                .map(|phase| phase * threads * (threads + 1) / 2)
                .collect();
            for (size, seen) in seen {
                assert_eq!(size, threads);
                assert_eq!(seen, expected, "{threads} threads");
            }
        }
    }

    #[test]
    fn one_member_failing_stops_every_member() {
        let answers = whole_team(4, |me| {
            let first = me.agree(true);
            let second = me.agree(me.index() != 2);
            let third = me.agree(true);
            (first, second, third)
        });
        assert_eq!(answers, vec![(true, false, false); 4]);
    }

    /// A team asked for while one runs is a team of one.
    #[test]
    fn a_second_team_at_once_runs_alone() {
        let inner = whole_team(3, |me| {
            let inside = pool(2).install(|| run(|m| (m.index(), m.size())));
            me.sync();
            inside
        });
        assert_eq!(inner, vec![vec![(0, 1)]; 3]);
    }

    /// The panic reaches the caller, and the next team forms (the flag was freed).
    #[test]
    fn a_panic_reaches_the_caller_and_frees_the_team() {
        let pool = pool(3);
        for _ in 0..10_000 {
            let formed = AtomicBool::new(false);
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                pool.install(|| {
                    run(|me| {
                        formed.store(me.size() == 3, Ordering::Relaxed);
                        me.sync();
                        if me.index() == 1 || me.size() == 1 {
                            panic!("member 1 fails");
                        }
                        me.sync();
                    })
                })
            }));
            assert!(outcome.is_err(), "the panic was lost");
            if formed.load(Ordering::Relaxed) {
                assert_eq!(whole_team(3, |me| me.size()), vec![3; 3]);
                return;
            }
        }
        panic!("no team of 3 formed in 10,000 tries");
    }
}
