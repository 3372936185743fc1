//! Load (issue 18, "Reliability"): on each tier that opens, `GPUMST_STRESS_THREADS`
//! (16) threads issue a random mix of MSF calls (edge lists and CSR, every weight type
//! and unweighted, all five algorithms, labels and maximum on or off) and primitive
//! calls (scans, segmented scans by flags and by offsets, in place or not, argmin /
//! argmax and their segmented forms, every element type, random sizes) on ONE shared
//! context, while `GPUMST_STRESS_CHURN_THREADS` (2) threads create their own context,
//! run a small call on it and drop it, over and over, for `GPUMST_STRESS_SECONDS` per
//! tier. Every result is compared with the independent references of tests/common/;
//! any error, wrong answer or panic fails the test with the call's seed. The process's
//! resident memory is sampled every second and must stay flat after a warm-up.
//!
//! Environment:
//!   GPUMST_STRESS_SECONDS        seconds of load per tier (default 8)
//!   GPUMST_STRESS_THREADS        worker threads on the shared context (default 16)
//!   GPUMST_STRESS_CHURN_THREADS  threads creating and dropping contexts (default 2)
//!   GPUMST_STRESS_SEED           the run's seed (decimal or 0x hex; default from the
//!                                clock; printed either way)
//!   GPUMST_STRESS_REPLAY         SEED[:small|:large]: run one call (as printed by a
//!                                failure) on each selected tier, then stop
//!   GPUMST_STRESS_RSS_BOUND_MIB  allowed RSS growth after warm-up (default: see
//!                                `rss_bound`)
//!   GPUMST_TEST_TIERS            which tiers to use (as in the other suites)
//!   GPUMST_TEST_REQUIRE          tiers that must open (as in the Go tests): a listed
//!                                tier that does not open fails the test
//!
//! `bash scripts/stress.sh SECONDS` builds and runs it and prints the summary.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gpumst::{
    Algorithm, Context, Graph, MsfOptions, Options, ScanKind, ScanOp, Tier, TotalWeight, Weights,
    EMPTY_SEGMENT,
};

mod common;
use common::msf::{check_labels, reference, reference_total, Csr, RefWeight};
use common::primitives::{
    compare_arg, compare_scan, make_data, make_segments, ref_arg, ref_scan, sum_aux, DataPattern,
    Rng, SegPattern, TestElem,
};

/// The shared context is used by reference from many threads: it must be `Sync` (and
/// `Send`, to be dropped anywhere). This does not compile otherwise.
#[allow(dead_code)]
fn context_is_shareable() {
    fn check<T: Send + Sync>() {}
    check::<Context>();
}

// ---- configuration ----------------------------------------------------------------------

struct Config {
    seconds: f64,
    threads: usize,
    churn_threads: usize,
    seed: u64,
    /// The workers' calls: Large in runs of a minute or more.
    size: Size,
}

fn env_parse<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}='{v}' is not a valid value")),
        _ => default,
    }
}

fn parse_seed(text: &str) -> u64 {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.unwrap_or_else(|_| panic!("'{text}' is not a seed (decimal or 0x hex)"))
}

impl Config {
    fn from_env() -> Config {
        let seed = match std::env::var("GPUMST_STRESS_SEED") {
            Ok(s) if !s.trim().is_empty() => parse_seed(&s),
            _ => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                now.as_nanos() as u64 ^ (std::process::id() as u64) << 40
            }
        };
        let seconds = env_parse("GPUMST_STRESS_SECONDS", 8.0);
        Config {
            seconds,
            size: if seconds >= 60.0 {
                Size::Large
            } else {
                Size::Normal
            },
            threads: env_parse("GPUMST_STRESS_THREADS", 16),
            churn_threads: env_parse("GPUMST_STRESS_CHURN_THREADS", 2),
            seed,
        }
    }
}

/// Tiers named in `GPUMST_TEST_REQUIRE` (a comma list such as "cuda,opencl").
fn required(tier: Tier) -> bool {
    std::env::var("GPUMST_TEST_REQUIRE").is_ok_and(|list| {
        list.split(',')
            .any(|t| t.trim().eq_ignore_ascii_case(tier.name()))
    })
}

fn open(tier: Tier, cpu_threads: usize) -> gpumst::Result<Context> {
    Context::new(&Options {
        tier,
        cpu_threads,
        ..Options::default()
    })
}

// ---- one call -----------------------------------------------------------------------------

/// A draw from `0..=max`, log-uniform (sizes of every magnitude turn up).
fn log_size(rng: &mut Rng, max: usize) -> usize {
    let bits = usize::BITS - max.leading_zeros();
    let top = 1usize << rng.below(bits as usize + 1);
    rng.below(top.min(max) + 1)
}

/// A call that gave the right answer: its kind, what it was, and the library call's
/// own wall time (without the test's data generation and reference).
struct Done {
    kind: String,
    detail: String,
    call_s: f64,
}

type Outcome = Result<Done, String>;

/// How large the calls may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Size {
    /// Up to 2,000 elements or edges (the context churn threads).
    Small,
    /// Up to 2^17 elements or edges.
    Normal,
    /// Normal, and one call in 30-40 up to 3 Mi elements or 2^19 edges (runs of a
    /// minute or more: on 2 cores one such call among 16 threads takes seconds).
    Large,
}

impl Size {
    fn suffix(self) -> &'static str {
        match self {
            Size::Small => ":small",
            Size::Normal => "",
            Size::Large => ":large",
        }
    }
}

/// Runs one random call, everything drawn from `seed` and `size`. Returns the kind of
/// call, or what went wrong.
fn one_call(ctx: &Context, seed: u64, size: Size) -> Outcome {
    let mut rng = Rng(seed);
    let choice = rng.below(100);
    let prim_max = match size {
        Size::Small => 2_000,
        Size::Large if rng.one_in(40) => 3 << 20,
        _ => 1 << 17,
    };
    macro_rules! prim {
        ($t:ty) => {
            prim_call::<$t>(ctx, &mut rng, prim_max)
        };
    }
    match choice {
        0..=44 => msf_call(ctx, &mut rng, size),
        _ => match rng.below(6) {
            0 => prim!(i32),
            1 => prim!(u32),
            2 => prim!(i64),
            3 => prim!(u64),
            4 => prim!(f32),
            _ => prim!(f64),
        },
    }
}

/// A weight type the stress test draws graphs with.
trait StressWeight: RefWeight + Send + Sync + 'static {
    const NAME: &'static str;
    fn wrap(w: &[Self]) -> Weights<'_>;
    /// `ties`: a handful of values (many equal weights); otherwise wide values with
    /// the type's extremes, and for floats ±0.0, ±inf and negatives.
    fn draw(rng: &mut Rng, ties: bool) -> Self;
}

macro_rules! int_weight {
    ($t:ty, $variant:ident) => {
        impl StressWeight for $t {
            const NAME: &'static str = stringify!($t);
            fn wrap(w: &[Self]) -> Weights<'_> {
                Weights::$variant(w)
            }
            fn draw(rng: &mut Rng, ties: bool) -> Self {
                if ties {
                    rng.below(4) as $t
                } else if rng.one_in(50) {
                    rng.pick(&[<$t>::MIN, <$t>::MAX, 0 as $t])
                } else {
                    rng.next() as $t
                }
            }
        }
    };
}
int_weight!(i32, I32);
int_weight!(u32, U32);
int_weight!(i64, I64);
int_weight!(u64, U64);

macro_rules! float_weight {
    ($t:ty, $variant:ident) => {
        impl StressWeight for $t {
            const NAME: &'static str = stringify!($t);
            fn wrap(w: &[Self]) -> Weights<'_> {
                Weights::$variant(w)
            }
            fn draw(rng: &mut Rng, ties: bool) -> Self {
                if ties {
                    rng.pick(&[0.0, -0.0, 1.0, -1.5])
                } else if rng.one_in(50) {
                    rng.pick(&[
                        <$t>::INFINITY,
                        <$t>::NEG_INFINITY,
                        <$t>::MAX,
                        -<$t>::MAX,
                        0.0,
                        -0.0,
                    ])
                } else {
                    (rng.next() >> 11) as $t / (1u64 << 40) as $t - 1000.0
                }
            }
        }
    };
}
float_weight!(f32, F32);
float_weight!(f64, F64);

/// A random graph (edge list or CSR) with random weights of a random type, solved with
/// random options and checked against the reference Kruskal.
fn msf_call(ctx: &Context, rng: &mut Rng, size: Size) -> Outcome {
    let max_n = if size == Size::Small { 500 } else { 1 << 15 };
    let n = log_size(rng, max_n);
    // Edges per vertex from sparse forests (many components) to dense multigraphs.
    let max_m = match size {
        Size::Small => 2_000,
        Size::Large if rng.one_in(30) => 1 << 19,
        _ => 1 << 17,
    };
    let m = if n == 0 {
        0
    } else {
        (n * log_size(rng, 16) / 2).min(max_m)
    };
    let (u, v): (Vec<u32>, Vec<u32>) = (0..m)
        .map(|_| (rng.below(n) as u32, rng.below(n) as u32))
        .unzip();
    macro_rules! go {
        ($t:ty) => {
            msf_typed::<$t>(ctx, rng, n, &u, &v, true)
        };
    }
    match rng.below(7) {
        0 => msf_typed::<u32>(ctx, rng, n, &u, &v, false),
        1 => go!(i32),
        2 => go!(u32),
        3 => go!(i64),
        4 => go!(u64),
        5 => go!(f32),
        _ => go!(f64),
    }
}

fn msf_typed<W: StressWeight>(
    ctx: &Context,
    rng: &mut Rng,
    n: usize,
    u: &[u32],
    v: &[u32],
    weighted: bool,
) -> Outcome {
    let ties = rng.one_in(3);
    let w: Option<Vec<W>> = weighted.then(|| (0..u.len()).map(|_| W::draw(rng, ties)).collect());
    let csr = rng.one_in(3);
    let options = MsfOptions {
        algorithm: rng.pick(&Algorithm::ALL),
        labels: rng.one_in(2),
        unweighted: weighted && rng.one_in(8),
        maximum: rng.one_in(2),
    };
    let what = format!(
        "msf {} n={n} m={} weights={} ties={ties} {options:?}",
        if csr { "csr" } else { "edge-list" },
        u.len(),
        if weighted { W::NAME } else { "none" },
    );
    // The weights the reference orders by: none when the call ignores them.
    let ref_w = w.as_deref().filter(|_| !options.unweighted);
    let (forest, expected, components, total, ends, call_s) = if csr {
        let csr = Csr::new(n, u, v, w.as_deref());
        let graph = Graph::Csr {
            offsets: &csr.offsets,
            targets: &csr.targets,
            weights: csr.weights.as_deref().map(W::wrap),
        };
        let began = Instant::now();
        let forest = ctx.msf(&graph, &options);
        let call_s = began.elapsed().as_secs_f64();
        let csr_ref = Csr::new(n, u, v, ref_w);
        let (expected, components, total) = csr_ref.reference(options.maximum);
        // Per CSR position, its source vertex: the ends of CSR edge ids.
        let mut sources = vec![0u32; csr.targets.len()];
        for x in 0..n {
            sources[csr.offsets[x] as usize..csr.offsets[x + 1] as usize].fill(x as u32);
        }
        let ends = (sources, csr.targets.clone());
        (forest, expected, components, total, ends, call_s)
    } else {
        let graph = Graph::EdgeList {
            num_vertices: n,
            u,
            v,
            weights: w.as_deref().map(W::wrap),
        };
        let began = Instant::now();
        let forest = ctx.msf(&graph, &options);
        let call_s = began.elapsed().as_secs_f64();
        let (expected, components) = reference(n, u, v, ref_w, options.maximum);
        let total = reference_total(&expected, ref_w);
        (
            forest,
            expected,
            components,
            total,
            (u.to_vec(), v.to_vec()),
            call_s,
        )
    };
    let forest = forest.map_err(|e| format!("{what}: unexpected error: {e}"))?;
    if forest.edges != expected {
        let first = forest
            .edges
            .iter()
            .zip(&expected)
            .position(|(a, b)| a != b)
            .unwrap_or(forest.edges.len().min(expected.len()));
        return Err(format!(
            "{what}: forest differs from Kruskal ({} edges, want {}; first difference at \
             position {first})",
            forest.edges.len(),
            expected.len()
        ));
    }
    if forest.num_components != components || forest.num_vertices != n {
        return Err(format!(
            "{what}: {} components of {} vertices, want {components} of {n}",
            forest.num_components, forest.num_vertices
        ));
    }
    // +inf and -inf in one forest sum to NaN, on both sides.
    let same_total = match (forest.total_weight, total) {
        (TotalWeight::Float(a), TotalWeight::Float(b)) => {
            a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
        }
        (a, b) => a == b,
    };
    if !same_total {
        return Err(format!(
            "{what}: total weight {:?}, want {total:?}",
            forest.total_weight
        ));
    }
    if options.labels {
        check_labels(&what, n, &ends.0, &ends.1, &forest);
    } else if forest.labels.is_some() {
        return Err(format!("{what}: labels that were not asked for"));
    }
    Ok(Done {
        kind: format!(
            "msf {} {}",
            if csr { "csr" } else { "edges" },
            options.algorithm
        ),
        detail: what,
        call_s,
    })
}

/// A random primitive call of element type T on up to `max_n` elements.
fn prim_call<T: TestElem>(ctx: &Context, rng: &mut Rng, max_n: usize) -> Outcome {
    let n = log_size(rng, max_n);
    let pattern = rng.pick(&DataPattern::ALL);
    let (data, check) = make_data::<T>(pattern, n, rng);
    let seg_pattern = rng.pick(&SegPattern::ALL);
    let seg = make_segments(seg_pattern, n, rng.one_in(2), rng);
    let base = format!(
        "{} n={n} data={pattern:?} segments={seg_pattern:?}",
        T::NAME
    );
    match rng.below(10) {
        0..=5 => {
            let op = rng.pick(&ScanOp::ALL);
            let kind = rng.pick(&ScanKind::ALL);
            let in_place = rng.one_in(2);
            let api = rng.below(3);
            let name = ["scan", "segmented scan (flags)", "segmented scan (offsets)"][api];
            let what = format!("{name} {op:?} {kind:?} in_place={in_place} {base}");
            let mut out = if in_place {
                data.clone()
            } else {
                vec![T::garbage(); n]
            };
            let began = Instant::now();
            let result = match (api, in_place) {
                (0, false) => ctx.scan(&data, &mut out, op, kind),
                (0, true) => ctx.scan_in_place(&mut out, op, kind),
                (1, false) => ctx.segmented_scan_flags(&data, &mut out, &seg.flags, op, kind),
                (1, true) => ctx.segmented_scan_flags_in_place(&mut out, &seg.flags, op, kind),
                (_, false) => ctx.segmented_scan_offsets(&data, &mut out, &seg.offsets, op, kind),
                (_, true) => ctx.segmented_scan_offsets_in_place(&mut out, &seg.offsets, op, kind),
            };
            let call_s = began.elapsed().as_secs_f64();
            result.map_err(|e| format!("{what}: unexpected error: {e}"))?;
            let one_segment: Vec<bool>;
            let heads = if api == 0 {
                one_segment = (0..n).map(|i| i == 0).collect();
                &one_segment
            } else {
                &seg.heads
            };
            let want = ref_scan(&data, heads, op, kind);
            let aux = (T::IS_FLOAT && op == ScanOp::Sum).then(|| sum_aux(&data, heads, kind));
            compare_scan(&out, &want, op, check, aux.as_ref())
                .map_err(|e| format!("{what}: {e}"))?;
            Ok(Done {
                kind: name.to_string(),
                detail: what,
                call_s,
            })
        }
        6 | 7 => {
            let min = rng.one_in(2);
            let name = if min { "argmin" } else { "argmax" };
            let began = Instant::now();
            let got = if min {
                ctx.argmin(&data)
            } else {
                ctx.argmax(&data)
            }
            .map_err(|e| format!("{name} {base}: unexpected error: {e}"))?;
            let call_s = began.elapsed().as_secs_f64();
            compare_arg(got, ref_arg(&data, min)).map_err(|e| format!("{name} {base}: {e}"))?;
            Ok(Done {
                kind: name.to_string(),
                detail: format!("{name} {base}"),
                call_s,
            })
        }
        _ => {
            let min = rng.one_in(2);
            let name = if min {
                "segmented argmin"
            } else {
                "segmented argmax"
            };
            let what = format!("{name} {base} ({} segments)", seg.offsets.len() - 1);
            let segments = seg.offsets.len() - 1;
            let mut values = vec![T::garbage(); segments];
            let mut indices = vec![0x5A5A_5A5Au64; segments];
            let began = Instant::now();
            if min {
                ctx.segmented_argmin(&data, &seg.offsets, &mut values, &mut indices)
            } else {
                ctx.segmented_argmax(&data, &seg.offsets, &mut values, &mut indices)
            }
            .map_err(|e| format!("{what}: unexpected error: {e}"))?;
            let call_s = began.elapsed().as_secs_f64();
            let empty = if min {
                T::MIN_IDENTITY
            } else {
                T::MAX_IDENTITY
            };
            for (s, w) in seg.offsets.windows(2).enumerate() {
                let (start, end) = (w[0] as usize, w[1] as usize);
                let (wv, wi) = match ref_arg(&data[start..end], min) {
                    Some((v, i)) => (v, (start + i) as u64),
                    None => (empty, EMPTY_SEGMENT),
                };
                if values[s].bits() != wv.bits() || indices[s] != wi {
                    return Err(format!(
                        "{what}: segment {s} ({start}..{end}): got ({:?}, {}), want ({wv:?}, {wi})",
                        values[s], indices[s]
                    ));
                }
            }
            Ok(Done {
                kind: name.to_string(),
                detail: what,
                call_s,
            })
        }
    }
}

/// [`one_call`], with a panic (a failed check in a shared helper, or one from the
/// library) turned into a failure too.
fn checked_call(ctx: &Context, seed: u64, size: Size) -> Outcome {
    match catch_unwind(AssertUnwindSafe(|| one_call(ctx, seed, size))) {
        Ok(result) => result,
        Err(payload) => Err(format!(
            "panicked: {}",
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "(no message)".into())
        )),
    }
}

// ---- memory -------------------------------------------------------------------------------

/// Gives the allocator's free memory back to the system (glibc's malloc_trim: the free
/// tops of the heaps, and the free whole pages inside every arena), so that what stays
/// resident is memory in use, not what 16 threads' arenas happened to keep; a leak
/// cannot be trimmed. Elsewhere a no-op.
fn trim_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim takes the allocator's locks itself; any thread may call it.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// The process's resident set in bytes (Linux /proc/self/statm; None elsewhere).
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size())
}

fn page_size() -> u64 {
    extern "C" {
        fn sysconf(name: i32) -> i64;
    }
    const SC_PAGESIZE: i32 = 30; // Linux
                                 // SAFETY: sysconf only reads a configuration value.
    let size = unsafe { sysconf(SC_PAGESIZE) };
    if size > 0 {
        size as u64
    } else {
        4096
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// How much the RSS may grow from the first post-warm-up sample to the last one.
///
/// The samples are taken under load, after trimming the allocator: each worker thread
/// holds at most one call's inputs, outputs and references at a time (a Large call: up
/// to 2^19 edges, a few tens of MiB with the library's own working arrays, or 3 Mi
/// elements of 8 bytes, about 100 MiB with the reference's copies), so two samples
/// minutes apart differ by whatever calls happen to be in flight, and the GPU drivers
/// build their caches during the first minute (PoCL's RSS rose for about 25 s here).
/// That noise is bounded by what the threads can hold at once, not by time; a leak
/// grows with the number of calls. The bound is 128 MiB + 25 % of the first
/// post-warm-up sample: a leak of 512 bytes per call fails a 10-minute CPU run
/// (about 3,000 calls a second on 2 cores), and the printed slope shows smaller
/// trends.
fn rss_bound(first: u64) -> u64 {
    match std::env::var("GPUMST_STRESS_RSS_BOUND_MIB") {
        Ok(v) if !v.trim().is_empty() => {
            (v.trim()
                .parse::<f64>()
                .expect("GPUMST_STRESS_RSS_BOUND_MIB")
                * MIB) as u64
        }
        _ => 128 * 1024 * 1024 + first / 4,
    }
}

/// Least-squares slope of (seconds, bytes) in MiB per minute.
fn slope_mib_per_min(samples: &[(f64, u64)]) -> f64 {
    let n = samples.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let mx = samples.iter().map(|s| s.0).sum::<f64>() / n;
    let my = samples.iter().map(|s| s.1 as f64).sum::<f64>() / n;
    let sxy: f64 = samples.iter().map(|s| (s.0 - mx) * (s.1 as f64 - my)).sum();
    let sxx: f64 = samples.iter().map(|s| (s.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        0.0
    } else {
        sxy / sxx * 60.0 / MIB
    }
}

// ---- one tier -----------------------------------------------------------------------------

/// The worker call whose library call took longest (wall time, waits for the shared
/// context's threads or device included).
#[derive(Default)]
struct Slowest {
    seconds: f64,
    detail: String,
    seed: u64,
}

impl Slowest {
    fn note(&mut self, done: &Done, seed: u64) {
        if done.call_s > self.seconds {
            *self = Slowest {
                seconds: done.call_s,
                detail: done.detail.clone(),
                seed,
            };
        }
    }
}

struct TierRun {
    counts: BTreeMap<String, u64>,
    slowest: Slowest,
    failures: Vec<String>,
    /// (seconds since start, RSS bytes), one a second.
    /// (seconds since start, RSS bytes after trimming the allocator), one a second.
    rss: Vec<(f64, u64)>,
    /// The RSS just before each trim.
    rss_raw: Vec<u64>,
    rss_after: Option<u64>,
    elapsed: f64,
    warmup: f64,
}

/// Seed of call `k` of thread `t` (distinct streams per thread and tier).
fn call_seed(run_seed: u64, tier: Tier, thread: usize, k: u64) -> u64 {
    let mut r = Rng(run_seed ^ (tier as u64) << 56 ^ (thread as u64) << 40 ^ k);
    r.next()
}

/// A churn context's CPU threads: 1 to 4 (0 would be all cores).
fn churn_cpu_threads(seed: u64) -> usize {
    1 + (seed % 4) as usize
}

fn stress_tier(ctx: &Context, tier: Tier, config: &Config) -> TierRun {
    let stop = AtomicBool::new(false);
    let failures = Mutex::new(Vec::<String>::new());
    let fail = |message: String| {
        stop.store(true, Ordering::SeqCst);
        eprintln!("stress: FAILURE on the {tier} tier: {message}");
        failures.lock().unwrap().push(message);
    };
    let duration = Duration::from_secs_f64(config.seconds);
    // A quarter of the run, at least 2 s and at most 60 s, fills the allocator's arenas
    // and the tiers' caches before the memory samples count.
    let warmup = (config.seconds / 4.0).clamp(2.0_f64.min(config.seconds), 60.0);
    let start = Instant::now();
    let mut counts = BTreeMap::<String, u64>::new();
    let mut slowest = Slowest::default();
    let mut rss = Vec::new();
    let mut rss_raw = Vec::new();
    let done_calls = AtomicU64::new(0);
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for t in 0..config.threads {
            let (stop, fail, done_calls) = (&stop, &fail, &done_calls);
            handles.push(scope.spawn(move || {
                let mut counts = BTreeMap::<String, u64>::new();
                let mut slowest = Slowest::default();
                let mut k = 0u64;
                while !stop.load(Ordering::Relaxed) && start.elapsed() < duration {
                    let seed = call_seed(config.seed, tier, t, k);
                    k += 1;
                    match checked_call(ctx, seed, config.size) {
                        Ok(done) => {
                            done_calls.fetch_add(1, Ordering::Relaxed);
                            slowest.note(&done, seed);
                            *counts.entry(done.kind).or_default() += 1
                        }
                        Err(e) => fail(format!(
                            "thread {t}, call {k}: {e}\n    replay: GPUMST_TEST_TIERS={tier} \
                             GPUMST_STRESS_REPLAY={seed:#x}{} (run seed {:#x})",
                            config.size.suffix(),
                            config.seed
                        )),
                    }
                }
                (counts, slowest)
            }));
        }
        for t in 0..config.churn_threads {
            let (stop, fail) = (&stop, &fail);
            handles.push(scope.spawn(move || {
                let mut counts = BTreeMap::<String, u64>::new();
                let mut k = 0u64;
                while !stop.load(Ordering::Relaxed) && start.elapsed() < duration {
                    let seed = call_seed(config.seed, tier, 1000 + t, k);
                    k += 1;
                    let own = match open(tier, churn_cpu_threads(seed)) {
                        Ok(own) => own,
                        Err(e) => {
                            fail(format!("churn thread {t}, context {k}: Context::new: {e}"));
                            break;
                        }
                    };
                    match checked_call(&own, seed, Size::Small) {
                        Ok(_) => *counts.entry("context new+call+drop".into()).or_default() += 1,
                        Err(e) => fail(format!(
                            "churn thread {t}, context {k}: {e}\n    replay: GPUMST_TEST_TIERS={tier} \
                             GPUMST_STRESS_REPLAY={seed:#x}:small (run seed {:#x})",
                            config.seed
                        )),
                    }
                    drop(own);
                }
                (counts, Slowest::default())
            }));
        }
        // The memory sampler: this thread, once a second until the workers stop.
        let mut next = Duration::ZERO;
        while handles.iter().any(|h| !h.is_finished()) {
            let now = start.elapsed();
            if now >= next {
                let raw = rss_bytes();
                trim_allocator();
                if let (Some(raw), Some(bytes)) = (raw, rss_bytes()) {
                    rss.push((now.as_secs_f64(), bytes));
                    rss_raw.push(raw);
                    // A line a minute, so that a run cut short still says how it went.
                    if rss.len() % 60 == 0 {
                        eprintln!(
                            "stress: {tier}: progress at {:.0} s: {} worker calls checked, \
                             RSS {:.1} MiB ({:.1} untrimmed)",
                            now.as_secs_f64(),
                            done_calls.load(Ordering::Relaxed),
                            bytes as f64 / MIB,
                            raw as f64 / MIB
                        );
                    }
                }
                next += Duration::from_secs(1);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for handle in handles {
            match handle.join() {
                Ok((c, s)) => {
                    for (kind, n) in c {
                        *counts.entry(kind).or_default() += n;
                    }
                    if s.seconds > slowest.seconds {
                        slowest = s;
                    }
                }
                Err(_) => fail("a worker thread panicked outside a call".into()),
            }
        }
    });
    let elapsed = start.elapsed().as_secs_f64();
    TierRun {
        counts,
        slowest,
        failures: failures.into_inner().unwrap(),
        rss,
        rss_raw,
        rss_after: {
            trim_allocator();
            rss_bytes()
        },
        elapsed,
        warmup,
    }
}

/// Prints the tier's summary; returns what is wrong with its memory, if anything.
fn report(tier: Tier, device: &str, config: &Config, run: &TierRun) -> Option<String> {
    let total: u64 = run.counts.values().sum();
    eprintln!(
        "stress: {tier} tier ({device}): {:.1} s, {} worker threads on one context + {} \
         context churn threads, seed {:#x}",
        run.elapsed, config.threads, config.churn_threads, config.seed
    );
    eprintln!(
        "stress: {tier}: {total} calls checked ({:.1}/s), {} failure(s)",
        total as f64 / run.elapsed.max(1e-9),
        run.failures.len()
    );
    for (kind, n) in &run.counts {
        eprintln!("stress: {tier}:   {n:>9}  {kind}");
    }
    eprintln!(
        "stress: {tier}: slowest library call {:.2} s: {} (seed {:#x}{})",
        run.slowest.seconds,
        run.slowest.detail,
        run.slowest.seed,
        config.size.suffix()
    );
    let Some(&(_, first_any)) = run.rss.first() else {
        eprintln!("stress: {tier}: no RSS samples (no /proc/self/statm): memory not checked");
        return None;
    };
    let max = run.rss.iter().map(|s| s.1).max().unwrap_or(0);
    // Under load: the samples up to the deadline (after it, the workers finish their last
    // calls one by one).
    let loaded: Vec<(f64, u64)> = run
        .rss
        .iter()
        .copied()
        .filter(|s| s.0 <= config.seconds)
        .collect();
    let last = loaded.last().map_or(first_any, |s| s.1);
    let after: Vec<(f64, u64)> = loaded
        .iter()
        .copied()
        .filter(|s| s.0 >= run.warmup)
        .collect();
    eprintln!(
        "stress: {tier}: RSS MiB (allocator trimmed): start {:.1}, max {:.1}, end {:.1} (under \
         load), {:.1} after the workers stopped; {} samples",
        first_any as f64 / MIB,
        max as f64 / MIB,
        last as f64 / MIB,
        run.rss_after.unwrap_or(0) as f64 / MIB,
        run.rss.len()
    );
    eprintln!(
        "stress: {tier}: RSS MiB untrimmed: start {:.1}, max {:.1}, end {:.1}",
        run.rss_raw.first().copied().unwrap_or(0) as f64 / MIB,
        run.rss_raw.iter().copied().max().unwrap_or(0) as f64 / MIB,
        run.rss_raw.last().copied().unwrap_or(0) as f64 / MIB,
    );
    let (Some(&(t0, first)), Some(&(t1, end))) = (after.first(), after.last()) else {
        eprintln!(
            "stress: {tier}: no sample after the {:.0} s warm-up",
            run.warmup
        );
        return None;
    };
    let bound = rss_bound(first);
    let growth = end as i64 - first as i64;
    eprintln!(
        "stress: {tier}: RSS after the {:.0} s warm-up: {:.1} MiB at {t0:.0} s -> {:.1} MiB \
         at {t1:.0} s: {:+.1} MiB (bound {:.1} MiB), slope {:+.2} MiB/min",
        run.warmup,
        first as f64 / MIB,
        end as f64 / MIB,
        growth as f64 / MIB,
        bound as f64 / MIB,
        slope_mib_per_min(&after)
    );
    let series: Vec<String> = run
        .rss
        .iter()
        .step_by((run.rss.len() / 40).max(1))
        .map(|s| format!("{:.0}", s.1 as f64 / MIB))
        .collect();
    eprintln!(
        "stress: {tier}: RSS MiB series (trimmed, <= 40 samples): {}",
        series.join(" ")
    );
    (growth > bound as i64).then(|| {
        format!(
            "{tier}: RSS grew {:.1} MiB after warm-up, more than the bound {:.1} MiB",
            growth as f64 / MIB,
            bound as f64 / MIB
        )
    })
}

#[test]
fn stress_every_tier() {
    let config = Config::from_env();
    let tiers: Vec<Tier> = [Tier::Cpu, Tier::OpenCl, Tier::Cuda]
        .into_iter()
        .filter(|&t| {
            let selected = common::tier_selected(t);
            if !selected {
                eprintln!("stress: {t} tier SKIPPED: not in GPUMST_TEST_TIERS");
                assert!(
                    !required(t),
                    "{t} is in GPUMST_TEST_REQUIRE but not in GPUMST_TEST_TIERS"
                );
            }
            selected
        })
        .collect();

    if let Ok(replay) = std::env::var("GPUMST_STRESS_REPLAY") {
        let (seed, size) = match replay.split_once(':') {
            Some((seed, "small")) => (parse_seed(seed), Size::Small),
            Some((seed, "large")) => (parse_seed(seed), Size::Large),
            _ => (parse_seed(&replay), Size::Normal),
        };
        for tier in tiers {
            // The churn threads' contexts have 1 to 4 CPU threads.
            let threads = if size == Size::Small {
                churn_cpu_threads(seed)
            } else {
                0
            };
            let ctx = open(tier, threads).unwrap_or_else(|e| panic!("{tier}: {e}"));
            match checked_call(&ctx, seed, size) {
                Ok(done) => eprintln!(
                    "stress: replay {seed:#x} on {tier}: {}: ok, the call took {:.3} s",
                    done.detail, done.call_s
                ),
                Err(e) => panic!("replay {seed:#x} on {tier}: {e}"),
            }
        }
        return;
    }

    eprintln!(
        "stress: seed {:#x} (GPUMST_STRESS_SEED), {} s per tier, {} + {} threads",
        config.seed, config.seconds, config.threads, config.churn_threads
    );
    let mut ran = Vec::new();
    let mut problems = Vec::new();
    for tier in tiers {
        let ctx = match open(tier, 0) {
            Ok(ctx) => ctx,
            Err(e) => {
                eprintln!(
                    "stress: {tier} tier SKIPPED: it does not open: {}",
                    e.message()
                );
                if required(tier) {
                    problems.push(format!(
                        "{tier} is required (GPUMST_TEST_REQUIRE) but does not open: {e}"
                    ));
                }
                continue;
            }
        };
        let device = ctx.device_name();
        eprintln!(
            "stress: {tier} tier: {device}: {} s of load",
            config.seconds
        );
        let run = stress_tier(&ctx, tier, &config);
        drop(ctx);
        if let Some(memory) = report(tier, &device, &config, &run) {
            problems.push(memory);
        }
        problems.extend(run.failures.iter().map(|f| format!("{tier}: {f}")));
        if run.counts.is_empty() && run.failures.is_empty() {
            problems.push(format!("{tier}: no call completed"));
        }
        ran.push(tier);
    }
    assert!(
        !ran.is_empty(),
        "stress: no tier ran (the CPU tier always opens unless GPUMST_TEST_TIERS leaves it out)"
    );
    eprintln!(
        "stress: tiers run: {}",
        ran.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
    );
    assert!(
        problems.is_empty(),
        "stress: {} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}
