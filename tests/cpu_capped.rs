//! The CPU tier under a memory cap (`Options::device_memory_limit` on a CPU context):
//! the forest is the uncapped one edge for edge, and the call's allocations, counted by
//! this test's global allocator, never go over the cap.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

use gpumst::{Algorithm, Context, Forest, Graph, MsfOptions, Options, Status, Tier, Weights};

mod common;
use common::msf::{check_labels, random_graph, reference, reference_total, Csr, Stream};

/// Bytes allocated now, and the most since the last [`Counting::start`].
struct Counting {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl Counting {
    fn start(&self) -> usize {
        let now = self.now.load(Relaxed);
        self.peak.store(now, Relaxed);
        now
    }
}

// SAFETY: every call is passed on to the system allocator unchanged; the counters only
// observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on as it is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = self.now.fetch_add(layout.size(), Relaxed) + layout.size();
            self.peak.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            let now = self.now.fetch_add(layout.size(), Relaxed) + layout.size();
            self.peak.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        self.now.fetch_sub(layout.size(), Relaxed);
        // SAFETY: `p` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(p, layout) }
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; `new_size` is the caller's, passed on.
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            self.now.fetch_sub(layout.size(), Relaxed);
            let now = self.now.fetch_add(new_size, Relaxed) + new_size;
            self.peak.fetch_max(now, Relaxed);
        }
        q
    }
}

#[global_allocator]
static COUNTING: Counting = Counting {
    now: AtomicUsize::new(0),
    peak: AtomicUsize::new(0),
};

/// One test at a time: the harness runs tests on several threads, and another test's
/// allocations would count in this one's calls.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Vertices and edges of the random graphs: at this cap, the whole graph's working
/// arrays do not fit for any algorithm (checked below), a part of the edges does.
const N: usize = 2000;
const M: usize = 120_000;
const LIMIT: u64 = 700_000;

/// The forest of `graph` on a fresh CPU context capped at `limit` (0: none), and the
/// most bytes allocated during the call. A fresh context per call: no working arrays
/// kept from an earlier call lower the count.
fn measured(graph: &Graph<'_>, options: &MsfOptions, limit: u64) -> (gpumst::Result<Forest>, u64) {
    measured_on(2, graph, options, limit)
}

/// [`measured`] on `threads` threads.
fn measured_on(
    threads: usize,
    graph: &Graph<'_>,
    options: &MsfOptions,
    limit: u64,
) -> (gpumst::Result<Forest>, u64) {
    let ctx = Context::new(&Options {
        tier: Tier::Cpu,
        cpu_threads: threads,
        device_memory_limit: limit,
        ..Options::default()
    })
    .expect("a CPU context");
    let before = COUNTING.start();
    let forest = ctx.msf(graph, options);
    let peak = COUNTING.peak.load(Relaxed) - before;
    // The forest itself is the caller's, not working memory; it was counted, and is
    // small beside the cap.
    (forest, peak as u64)
}

fn options(algorithm: Algorithm, maximum: bool) -> MsfOptions {
    MsfOptions {
        algorithm,
        maximum,
        labels: true,
        ..MsfOptions::default()
    }
}

#[test]
fn every_algorithm_gives_the_uncapped_forest_within_the_cap() {
    let _one = one_at_a_time();
    let (u, v) = random_graph(N, M, 21);
    let mut s = Stream(77);
    // Few distinct weights: many ties, which the parts must break as one call does.
    let w: Vec<u32> = (0..M).map(|_| s.below(100)).collect();
    let graph = Graph::EdgeList {
        num_vertices: N,
        u: &u,
        v: &v,
        weights: Some(Weights::U32(&w)),
    };
    // Threads take working memory of their own in some algorithms (`auto` counts 32
    // KiB a thread): 16 of them need a larger cap.
    for (threads, maximum, limit) in [
        (2, false, LIMIT),
        (2, true, LIMIT),
        (1, false, LIMIT),
        (16, true, 900_000),
    ] {
        let (edges, components) = reference(N, &u, &v, Some(&w), maximum);
        for algorithm in Algorithm::ALL {
            let what = format!("{algorithm}, maximum {maximum}, {threads} threads");
            let opts = options(algorithm, maximum);
            let (uncapped, uncapped_peak) = measured_on(threads, &graph, &opts, 0);
            let uncapped = uncapped.expect("uncapped");
            assert!(
                uncapped_peak > limit,
                "{what}: the uncapped call took {uncapped_peak} bytes, within the cap: this test would not stream"
            );
            let (capped, peak) = measured_on(threads, &graph, &opts, limit);
            let capped = capped.unwrap_or_else(|e| panic!("{what}: {}", e.message()));
            assert!(
                peak <= limit,
                "{what}: the capped call took {peak} bytes, over its cap of {limit}"
            );
            println!("{what}: {uncapped_peak} bytes uncapped, {peak} under the cap");
            assert_eq!(capped.edges, edges, "{what}: edges");
            assert_eq!(capped.num_components, components, "{what}: components");
            assert_eq!(
                capped.total_weight,
                reference_total(&edges, Some(&w)),
                "{what}: total"
            );
            assert_eq!(capped, uncapped, "{what}: the uncapped call's forest");
            check_labels(&what, N, &u, &v, &capped);
        }
    }
}

/// Unweighted, wide (64-bit keys spanning more than 2^32) and float weights.
#[test]
fn other_weights_give_the_uncapped_forest_within_the_cap() {
    let _one = one_at_a_time();
    let (u, v) = random_graph(N, M, 22);
    let mut s = Stream(78);
    let wide: Vec<i64> = (0..M)
        .map(|_| (s.next() >> 20) as i64 - (1 << 42))
        .collect();
    let floats: Vec<f64> = (0..M).map(|_| s.below(1000) as f64 / 7.0).collect();
    let cases: [(&str, Option<Weights<'_>>); 3] = [
        ("unweighted", None),
        ("wide i64", Some(Weights::I64(&wide))),
        ("f64", Some(Weights::F64(&floats))),
    ];
    for (name, weights) in cases {
        let graph = Graph::EdgeList {
            num_vertices: N,
            u: &u,
            v: &v,
            weights,
        };
        for algorithm in [Algorithm::Auto, Algorithm::Kruskal, Algorithm::Boruvka] {
            let what = format!("{name}, {algorithm}");
            let opts = options(algorithm, false);
            let (uncapped, _) = measured(&graph, &opts, 0);
            let (capped, peak) = measured(&graph, &opts, LIMIT);
            let capped = capped.unwrap_or_else(|e| panic!("{what}: {}", e.message()));
            assert!(peak <= LIMIT, "{what}: {peak} bytes, over the cap");
            assert_eq!(capped, uncapped.expect("uncapped"), "{what}");
        }
    }
}

/// A CSR graph: the same forest (its CSR ids) under the cap, the symmetry check and the
/// edge list made of the CSR (16 bytes an edge) within it.
#[test]
fn a_csr_graph_gives_the_uncapped_forest_within_the_cap() {
    let _one = one_at_a_time();
    let (u, v) = random_graph(N, M, 23);
    let mut s = Stream(79);
    let w: Vec<u32> = (0..M).map(|_| s.below(50)).collect();
    let csr = Csr::new(N, &u, &v, Some(&w));
    let graph = Graph::Csr {
        offsets: &csr.offsets,
        targets: &csr.targets,
        weights: csr.weights.as_deref().map(Weights::U32),
    };
    let (edges, components, total) = csr.reference(false);
    let limit = LIMIT + 16 * (csr.forward.len() as u64);
    for algorithm in [Algorithm::Auto, Algorithm::Prim, Algorithm::Strut] {
        let (uncapped, uncapped_peak) = measured(&graph, &options(algorithm, false), 0);
        uncapped.unwrap_or_else(|e| panic!("{algorithm} uncapped: {}", e.message()));
        assert!(
            uncapped_peak > limit,
            "{algorithm}: the uncapped call took {uncapped_peak} bytes, within the cap: this test would not stream"
        );
        let (capped, peak) = measured(&graph, &options(algorithm, false), limit);
        let capped = capped.unwrap_or_else(|e| panic!("{algorithm}: {}", e.message()));
        assert_eq!(capped.edges, edges, "{algorithm}");
        assert_eq!(capped.num_components, components, "{algorithm}");
        assert_eq!(capped.total_weight, total, "{algorithm}");
        assert!(
            peak <= limit,
            "{algorithm}: the capped call took {peak} bytes, over its cap of {limit}"
        );
        println!("CSR {algorithm}: {uncapped_peak} bytes uncapped, {peak} under the cap");
    }
    // Below the edge list made of the CSR: refused with the sizes.
    let small = 16 * csr.forward.len() as u64 - 1;
    let (refused, _) = measured(&graph, &options(Algorithm::Auto, false), small);
    let refused = refused.expect_err("a cap below the CSR's edge list");
    assert_eq!(
        refused.status(),
        Status::OutOfMemory,
        "{}",
        refused.message()
    );
    assert!(
        refused.message().contains("CSR graph") && refused.message().contains("16 an edge"),
        "{}",
        refused.message()
    );
}

/// A CSR graph that is not symmetric is named as uncapped under a cap whose symmetry
/// check runs in several parts: the least entry without a partner, wherever its part.
#[test]
fn an_asymmetric_csr_is_named_as_uncapped_under_the_cap() {
    let _one = one_at_a_time();
    let (u, v) = random_graph(N, M, 25);
    let w: Vec<u32> = (0..M as u32).map(|e| e % 1000).collect();
    let csr = Csr::new(N, &u, &v, Some(&w));
    let limit = LIMIT + 16 * (csr.forward.len() as u64);
    let entries = csr.targets.len();
    // Three entries lose their partners (one weight changed each), in different rows.
    for changed in [
        [entries / 5, entries / 2, entries - 3],
        [entries - 3, 7, entries / 3],
    ] {
        let mut weights = csr.weights.clone().expect("weights");
        for &p in &changed {
            weights[p] += 5000;
        }
        let graph = Graph::Csr {
            offsets: &csr.offsets,
            targets: &csr.targets,
            weights: Some(Weights::U32(&weights)),
        };
        let (uncapped, _) = measured(&graph, &options(Algorithm::Auto, false), 0);
        let uncapped = uncapped.expect_err("an asymmetric CSR");
        assert_eq!(
            uncapped.status(),
            Status::InvalidGraph,
            "{}",
            uncapped.message()
        );
        let (capped, _) = measured(&graph, &options(Algorithm::Auto, false), limit);
        let capped = capped.expect_err("an asymmetric CSR under the cap");
        assert_eq!(capped.status(), uncapped.status());
        assert_eq!(capped.message(), uncapped.message(), "changed {changed:?}");
    }
}

/// A NaN is named as the uncapped call names it, wherever its part falls; a cap too
/// small for the vertices is refused with the sizes.
#[test]
fn bad_weights_and_small_caps_are_refused_as_uncapped() {
    let _one = one_at_a_time();
    let (u, v) = random_graph(N, M, 24);
    let mut floats: Vec<f32> = (0..M).map(|i| (i % 97) as f32).collect();
    floats[M - 5] = f32::NAN;
    floats[M - 2] = f32::NAN;
    let graph = Graph::EdgeList {
        num_vertices: N,
        u: &u,
        v: &v,
        weights: Some(Weights::F32(&floats)),
    };
    for algorithm in [Algorithm::Auto, Algorithm::Kruskal] {
        let opts = options(algorithm, false);
        let uncapped = measured(&graph, &opts, 0).0.expect_err("a NaN weight");
        let capped = measured(&graph, &opts, LIMIT).0.expect_err("a NaN weight");
        assert_eq!(capped.status(), Status::InvalidGraph, "{algorithm}");
        assert_eq!(capped.message(), uncapped.message(), "{algorithm}");
        assert!(
            capped.message().contains(&(M - 5).to_string()),
            "{}",
            capped.message()
        );
    }
    let small = measured(&graph, &options(Algorithm::Auto, false), 100_000)
        .0
        .expect_err("a cap below the vertices' arrays");
    assert_eq!(small.status(), Status::OutOfMemory);
    assert!(
        small.message().contains("memory cap of 100000 bytes")
            && small.message().contains("2000 vertices"),
        "{}",
        small.message()
    );
}

/// Sparser graphs, where the vertices' arrays are a larger share of the cap.
#[test]
fn sparse_graphs_stay_within_the_cap() {
    let _one = one_at_a_time();
    let (n, m, limit) = (20_000, 200_000, 5_000_000);
    let (u, v) = random_graph(n, m, 25);
    let mut s = Stream(80);
    let w: Vec<u32> = (0..m).map(|_| s.below(1000)).collect();
    let graph = Graph::EdgeList {
        num_vertices: n,
        u: &u,
        v: &v,
        weights: Some(Weights::U32(&w)),
    };
    for algorithm in Algorithm::ALL {
        let opts = options(algorithm, false);
        let (uncapped, uncapped_peak) = measured(&graph, &opts, 0);
        let (capped, peak) = measured(&graph, &opts, limit);
        let capped = capped.unwrap_or_else(|e| panic!("{algorithm}: {}", e.message()));
        println!("sparse {algorithm}: {uncapped_peak} bytes uncapped, {peak} under the cap");
        assert!(
            peak <= limit,
            "{algorithm}: {peak} bytes, over the cap of {limit}"
        );
        assert_eq!(capped, uncapped.expect("uncapped"), "{algorithm}");
    }
}
