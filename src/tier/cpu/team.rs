//! A team: the threads of the current rayon pool running one closure at once, the
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
//! Who plays: every pool thread is asked, and the team is whoever answers before it
//! forms (see [`Enrolment`]). A barrier waits for every member, so a member that
//! cannot get a core (another process busy on its CPU) would hold up every phase of
//! the call: a thread that answers long after the others is left out instead, and the
//! members' work never depends on how many they are (the same forest either way).
//!
//! One team runs at a time in the process. A member waits at a barrier until every
//! other member arrives, so two teams sharing threads could each hold a thread the
//! other waits for; a call that finds a team running gets a team of one (its caller's
//! thread alone, same code, same answer) instead of waiting.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Set while a team runs anywhere in the process.
static TEAM_RUNNING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set while this thread plays in a team: a rayon call inside the team's work may
    /// run this thread's own invitation, which must not join a second time.
    static PLAYING: Cell<bool> = const { Cell::new(false) };
}

/// Spins at a barrier before sleeping between checks. A member that waits longer lets
/// its core go: where threads outnumber cores the member being waited for may need it,
/// and on a virtual machine's cores a spinning (or yielding) waiter slowed the members
/// still working (road graphs at 16 threads 7.7 against 10.0 ms, docs/performance-log.md,
/// fifteenth session), as PBBS's idle workers sleep between steal attempts.
const SPINS_BEFORE_SLEEPING: u32 = 1 << 12;
/// The sleep asked for between later checks (the kernel's timer slack makes it tens of
/// microseconds).
const NAP: Duration = Duration::from_micros(1);

/// The least the team waits for another thread once most of the pool has joined.
/// Waking the pool's threads one after another took about 15 µs a thread on the
/// benchmarks' VM (the last of 16 began 0.24 ms after the call), with gaps between two
/// threads of over 100 µs now and then (a grace of 100 µs formed teams of 11-15 of 16
/// on a quiet machine); a thread whose CPU another process holds answers milliseconds
/// later, and as a member would make every barrier wait for its turn on that CPU.
/// Waiting costs only a member that reaches its first barrier before the team forms.
const LEAST_GRACE: Duration = Duration::from_micros(300);
/// The most it waits: a long team (a grid's rounds, 74 ms at 16 threads) loses more
/// by leaving out a thread that was late once (its virtual CPU taken by the host for
/// a moment: teams of 14-15 of 16 on a quiet machine) than by waiting for it.
const MOST_GRACE: Duration = Duration::from_millis(2);

/// How long a team whose work takes about `work` on one thread waits for a late
/// thread: an eighth of a member's share, within [`LEAST_GRACE`]..=[`MOST_GRACE`].
fn grace_for(work: Duration, threads: usize) -> Duration {
    (work / (8 * threads.max(1) as u32)).clamp(LEAST_GRACE, MOST_GRACE)
}

/// Waits until `done()`, spinning first, then napping.
fn wait_until(mut done: impl FnMut() -> bool) {
    let mut spins = 0u32;
    while !done() {
        if spins < SPINS_BEFORE_SLEEPING {
            spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::sleep(NAP);
        }
    }
}

/// Who plays in a team: threads join in the order they answer until the team forms,
/// when every pool thread has joined, or when more than half have and nobody has for
/// its grace ([`grace_for`]). Members start working as they join; only a barrier (or
/// [`Member::size`]) waits for the team to form. Shared with the invitations, which
/// may run after the call has ended (and then join nothing).
struct Enrolment {
    /// How many have joined, with [`Enrolment::FORMED`] set once no more may.
    state: AtomicUsize,
    /// When the last member joined, in ns after `opened`.
    last_join_ns: AtomicU64,
    opened: Instant,
    /// The pool's threads.
    seats: usize,
    grace: Duration,
    /// Members that have finished their part (counted after their part returns, here
    /// and not in the call's frame, which may end as soon as the count is full).
    finished: AtomicUsize,
}

impl Enrolment {
    const FORMED: usize = 1 << (usize::BITS - 1);

    fn new(seats: usize, grace: Duration) -> Self {
        Enrolment {
            state: AtomicUsize::new(0),
            last_join_ns: AtomicU64::new(0),
            opened: Instant::now(),
            seats,
            grace,
            finished: AtomicUsize::new(0),
        }
    }

    fn now_ns(&self) -> u64 {
        self.opened.elapsed().as_nanos() as u64
    }

    /// This thread's member index, or `None` when the team has formed, may now form
    /// (then it does), or this thread already plays.
    fn join(&self) -> Option<usize> {
        if PLAYING.get() {
            return None;
        }
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & Self::FORMED != 0 || self.try_to_form(state) {
                return None;
            }
            match self.state.compare_exchange_weak(
                state,
                state + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.last_join_ns
                        .fetch_max(self.now_ns(), Ordering::Relaxed);
                    return Some(state);
                }
                Err(now) => state = now,
            }
        }
    }

    /// Forms the team of `state` members if it may form and nobody has joined since
    /// `state` was read; whether it did.
    fn try_to_form(&self, state: usize) -> bool {
        let quiet = self
            .now_ns()
            .saturating_sub(self.last_join_ns.load(Ordering::Relaxed));
        let may_form = state == self.seats
            || (2 * state > self.seats && u128::from(quiet) >= self.grace.as_nanos());
        // A join in between changes the state and fails this exchange.
        may_form
            && self
                .state
                .compare_exchange(
                    state,
                    state | Self::FORMED,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
    }

    /// The team's size once it has formed, if it has (forming it if it may).
    fn formed(&self) -> Option<usize> {
        let state = self.state.load(Ordering::Acquire);
        if state & Self::FORMED != 0 || self.try_to_form(state) {
            return Some(state & !Self::FORMED);
        }
        None
    }

    /// Waits until the team has formed; its size.
    fn size(&self) -> usize {
        let mut size = 0;
        wait_until(|| self.formed().map(|s| size = s).is_some());
        size
    }
}

/// One thread's view of its team.
pub(crate) struct Member<'a> {
    index: usize,
    /// The team's size once known (0 before).
    size: Cell<usize>,
    enrolment: &'a Enrolment,
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

    /// How many members the team has. Waits until the team has formed: members start
    /// their first phase as they join, before anyone knows how many will.
    pub(crate) fn size(&self) -> usize {
        if self.size.get() == 0 {
            self.size.set(self.enrolment.size());
        }
        self.size.get()
    }

    /// Waits until every member has called `sync` as often as this one. Whatever a
    /// member wrote before its call is visible to every member after theirs.
    pub(crate) fn sync(&self) {
        if self.size() == 1 {
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
        if shared.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.size() {
            // The last to arrive opens the next barrier before releasing this one:
            // nobody arrives at the next until they see the new generation.
            shared.arrived.store(0, Ordering::Relaxed);
            shared.generation.store(generation + 1, Ordering::Release);
            return;
        }
        wait_until(|| {
            if shared.panicked.load(Ordering::Relaxed) {
                panic!("another member of the team panicked");
            }
            shared.generation.load(Ordering::Acquire) != generation
        });
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

/// A member's part of a call, as the invitations see it: `play(index)`. A raw pointer,
/// since an invitation may outlive the call (it then finds the team formed and never
/// reads it).
struct Part(*const (dyn Fn(usize) + Sync));

// SAFETY: the pointee is `Sync`, and is called only by threads that joined the team,
// which `run` waits for before its frame (the pointee's home) ends.
unsafe impl Send for Part {}
// SAFETY: as for `Send`.
unsafe impl Sync for Part {}

/// Runs `body` on the threads of the current rayon pool at once (one team member each:
/// the threads that answer before the team forms, see [`Enrolment`]), or on this
/// thread alone where the pool has one thread or another team is running; the
/// members' results in member order. A panic in one member reaches every member (at
/// its next barrier) and then the caller. `work`: about how long the whole team's work
/// would take on one thread (it sets how long the team waits for late threads).
pub(crate) fn run<R: Send>(work: Duration, body: impl Fn(&Member<'_>) -> R + Sync) -> Vec<R> {
    run_with_grace(grace_for(work, rayon::current_num_threads()), body)
}

/// [`run`], the team forming once most of the pool has joined and nobody has for
/// `grace` (tests wait for every thread).
fn run_with_grace<R: Send>(grace: Duration, body: impl Fn(&Member<'_>) -> R + Sync) -> Vec<R> {
    let shared = Shared {
        arrived: AtomicUsize::new(0),
        generation: AtomicUsize::new(0),
        failed_at: AtomicUsize::new(usize::MAX),
        panicked: AtomicBool::new(false),
        #[cfg(feature = "phase-profile")]
        records: Default::default(),
    };
    #[cfg(feature = "phase-profile")]
    let called = Instant::now();
    let threads = rayon::current_num_threads();
    let claimed = threads > 1
        && TEAM_RUNNING
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
    if !claimed {
        let alone = Enrolment::new(1, grace);
        return vec![body(&Member {
            index: 0,
            size: Cell::new(1),
            enrolment: &alone,
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
    let enrolment = Arc::new(Enrolment::new(threads, grace));
    let results: Vec<Mutex<Option<R>>> = (0..threads).map(|_| Mutex::new(None)).collect();
    let panicked: Mutex<Option<Box<dyn Any + Send>>> = Mutex::new(None);
    let play = |index: usize| {
        PLAYING.set(true);
        let member = Member {
            index,
            size: Cell::new(0),
            enrolment: &enrolment,
            shared: &shared,
            agreements: Cell::new(0),
            #[cfg(feature = "phase-profile")]
            laps: laps::Laps::start(called),
        };
        match catch_unwind(AssertUnwindSafe(|| body(&member))) {
            Ok(result) => {
                #[cfg(feature = "phase-profile")]
                member.laps.finish(&shared.records);
                *results[index].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            }
            Err(panic) => {
                shared.panicked.store(true, Ordering::Relaxed);
                panicked
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(panic);
            }
        }
        PLAYING.set(false);
    };
    let part: *const (dyn Fn(usize) + Sync + '_) = &play;
    // SAFETY: only the lifetime bound changes; the pointer is read only while `play`
    // lives (see `Part`).
    let part = Part(unsafe {
        std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync)>(
            part,
        )
    });
    // A pool thread calling plays too (its own invitation finds it playing, or the
    // team formed).
    let caller = rayon::current_thread_index().and_then(|_| enrolment.join());
    {
        let enrolment = Arc::clone(&enrolment);
        rayon::spawn_broadcast(move |_| {
            let part = &part;
            if let Some(index) = enrolment.join() {
                // SAFETY: this thread joined, so `run` has not returned: it waits
                // below until every member has counted itself finished.
                unsafe { (*part.0)(index) };
                enrolment.finished.fetch_add(1, Ordering::Release);
            }
        });
    }
    if let Some(index) = caller {
        play(index);
        enrolment.finished.fetch_add(1, Ordering::Release);
    }
    // Nobody joins once the team has formed, and no member uses `play` or what it
    // borrows once counted finished.
    let size = enrolment.size();
    wait_until(|| enrolment.finished.load(Ordering::Acquire) == size);
    if let Some(panic) = panicked.into_inner().unwrap_or_else(|e| e.into_inner()) {
        resume_unwind(panic);
    }
    #[cfg(feature = "phase-profile")]
    laps::report(
        shared
            .records
            .into_inner()
            .unwrap_or_else(|e| e.into_inner()),
    );
    results
        .into_iter()
        .take(size)
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every member left its result")
        })
        .collect()
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
            "team of {}, laps (µs, slowest/mean/fastest member; {faults} page faults): {}",
            records.len(),
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

    /// `run` on a pool of `threads`, waiting for every thread, again until it forms a
    /// whole team: other tests of this binary run teams of their own at the same time,
    /// and then a team is one.
    fn whole_team<R: Send>(threads: usize, body: impl Fn(&Member<'_>) -> R + Sync) -> Vec<R> {
        whole_team_of(&pool(threads), body)
    }

    /// [`whole_team`] on `pool`.
    fn whole_team_of<R: Send>(
        pool: &rayon::ThreadPool,
        body: impl Fn(&Member<'_>) -> R + Sync,
    ) -> Vec<R> {
        let threads = pool.current_num_threads();
        for _ in 0..10_000 {
            let results = pool.install(|| run_with_grace(Duration::MAX, &body));
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

    /// A pool thread busy with other work does not hold the team up: the others form
    /// it without that thread, and the barriers still order their phases.
    #[test]
    fn a_team_forms_without_a_busy_thread() {
        let pool = pool(4);
        let (started, wait_started) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        pool.spawn(move || {
            started.send(()).unwrap();
            // Busy until the team below has ended (or 60 s, so a failure cannot hang).
            let _ = released.recv_timeout(std::time::Duration::from_secs(60));
        });
        wait_started.recv().unwrap();
        let began = std::time::Instant::now();
        let cells: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
        let seen = pool.install(|| {
            run(Duration::ZERO, |me| {
                cells[me.index()].store(me.index() + 1, Ordering::Relaxed);
                me.sync();
                let sum: usize = cells.iter().map(|c| c.load(Ordering::Relaxed)).sum();
                (me.index(), me.size(), sum)
            })
        });
        let took = began.elapsed();
        release.send(()).unwrap();
        // Other tests' teams may take the flag (then a team of one) or the free
        // threads may answer slowly on a loaded machine (then fewer members): either
        // way not the busy thread, and every member sees every member's write.
        assert!(seen.len() < 4, "the busy thread joined: {seen:?}");
        for (k, &(index, size, sum)) in seen.iter().enumerate() {
            assert_eq!((index, size), (k, seen.len()));
            assert_eq!(sum, size * (size + 1) / 2);
        }
        assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
        // The busy thread, free again, finds its invitation to the ended team and
        // leaves it: the next team of the pool forms with every thread.
        assert_eq!(whole_team_of(&pool, |me| me.size()), vec![4; 4]);
    }

    #[test]
    fn a_longer_team_waits_longer_for_late_threads() {
        assert_eq!(grace_for(Duration::ZERO, 16), LEAST_GRACE);
        // NY's rounds: about 55 ms of one thread's work.
        assert_eq!(
            grace_for(Duration::from_millis(64), 16),
            Duration::from_micros(500)
        );
        assert_eq!(grace_for(Duration::from_secs(10), 16), MOST_GRACE);
        assert_eq!(grace_for(Duration::from_secs(1), 0), MOST_GRACE);
    }

    /// A team asked for while one runs is a team of one.
    #[test]
    fn a_second_team_at_once_runs_alone() {
        let inner = whole_team(3, |me| {
            let inside = pool(2).install(|| run(Duration::ZERO, |m| (m.index(), m.size())));
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
                    run_with_grace(Duration::MAX, |me| {
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
