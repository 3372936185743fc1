//! Every input-sized allocation can fail without taking the process down: with the
//! `fault-injection` feature, the N-th such allocation is refused, for every N over an
//! MSF (each algorithm, edge lists and CSR, labels on), the primitives and the graph
//! readers, on each tier that opens. Each refused call must return
//! `Status::OutOfMemory` naming the injected failure, and the same context must then
//! give the undisturbed answer.
//!
//! Run with: cargo test --release --features fault-injection --test alloc_failures
#![cfg(feature = "fault-injection")]

mod common;

use std::sync::Mutex;

use gpumst::graph::io::{read_graph, write_graph, Format};
use gpumst::{
    testing, Algorithm, Context, EdgeListGraph, Error, Graph, MsfOptions, Options, ScanKind,
    ScanOp, Status, Tier, WeightVec, Weights,
};

/// The knob is process wide: one test at a time.
static KNOB: Mutex<()> = Mutex::new(());

/// Runs `call` with the N-th allocation refused, for N = 0, 1, ... until a run makes
/// fewer than N + 1 allocations; checks each refusal and the recovery. Returns how
/// many allocation sites were walked.
fn walk<R: PartialEq + std::fmt::Debug>(what: &str, call: impl Fn() -> Result<R, Error>) -> u64 {
    let _guard = KNOB.lock().unwrap_or_else(|e| e.into_inner());
    testing::fail_allocation_after(None);
    let expected = call().unwrap_or_else(|e| panic!("{what}: the undisturbed call failed: {e}"));
    for n in 0.. {
        testing::fail_allocation_after(Some(n));
        let outcome = call();
        let failed = testing::failures();
        let made = testing::allocations();
        testing::fail_allocation_after(None);
        if failed == 0 {
            let got = outcome.unwrap_or_else(|e| panic!("{what}: no failure injected, yet: {e}"));
            assert_eq!(got, expected, "{what}: answer with {n} allocations allowed");
            assert!(
                made <= n,
                "{what}: {made} allocations but none refused at {n}"
            );
            return n;
        }
        match outcome {
            Ok(_) => panic!("{what}: allocation {n} was refused but the call succeeded"),
            Err(e) => {
                assert_eq!(
                    e.status(),
                    Status::OutOfMemory,
                    "{what}, allocation {n}: {e}"
                );
                assert!(
                    e.message().contains("injected allocation failure"),
                    "{what}: {e}"
                );
            }
        }
        let again = call().unwrap_or_else(|e| panic!("{what}: after failure {n}: {e}"));
        assert_eq!(again, expected, "{what}: the call after failure {n}");
    }
    unreachable!()
}

fn contexts() -> Vec<Context> {
    let mut out = Vec::new();
    for tier in [Tier::Cpu, Tier::OpenCl, Tier::Cuda] {
        match Context::new(&Options {
            tier,
            ..Options::default()
        }) {
            Ok(c) => out.push(c),
            Err(e) => eprintln!("alloc_failures: {tier} tier skipped: {}", e.message()),
        }
    }
    assert!(!out.is_empty(), "the CPU tier did not open");
    out
}

/// A random multigraph with weights below 100 (the shared test generator).
fn random_graph(n: u32, m: usize, seed: u64) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let (u, v) = common::msf::random_graph(n as usize, m, seed);
    let mut s = common::msf::Stream(seed ^ 0x5eed);
    let w = (0..m).map(|_| s.below(100)).collect();
    (u, v, w)
}

#[test]
fn msf_survives_every_refused_allocation() {
    let (n, m) = (1000u32, 3000usize);
    let (u, v, w) = random_graph(n, m, 7);
    let csr = common::msf::Csr::new(n as usize, &u, &v, Some(&w));
    let cw = csr.weights.clone().expect("weighted");
    let edge_list = Graph::EdgeList {
        num_vertices: n as usize,
        u: &u,
        v: &v,
        weights: Some(Weights::U32(&w)),
    };
    let csr = Graph::Csr {
        offsets: &csr.offsets,
        targets: &csr.targets,
        weights: Some(Weights::U32(&cw)),
    };
    for ctx in contexts() {
        for algorithm in Algorithm::ALL {
            for (shape, graph) in [("edge list", &edge_list), ("CSR", &csr)] {
                let options = MsfOptions {
                    algorithm,
                    labels: true,
                    ..MsfOptions::default()
                };
                let what = format!("{algorithm} on a {shape} on the {} tier", ctx.tier());
                let sites = walk(&what, || ctx.msf(graph, &options));
                assert!(sites > 0, "{what}: no allocation was counted");
                eprintln!("alloc_failures: {what}: {sites} allocations, each refused once");
            }
        }
    }
}

/// The CPU tier under a memory cap takes the edges a part at a time (filter, gather,
/// solve, labels): a refusal anywhere in those steps comes back as the call's error.
#[test]
fn capped_cpu_msf_survives_every_refused_allocation() {
    for algorithm in Algorithm::ALL {
        let options = MsfOptions {
            algorithm,
            labels: true,
            ..MsfOptions::default()
        };
        let what = format!("{algorithm} under a 400 KB cap (CPU)");
        walk_on_cpu(&what, (1000, 30_000, 17), 2, 400_000, &options);
    }
}

/// Walks every refused allocation of `auto` on a random graph on the CPU tier.
fn walk_auto_on_cpu(what: &str, n: u32, m: usize, seed: u64, cpu_threads: usize) {
    walk_on_cpu(what, (n, m, seed), cpu_threads, 0, &MsfOptions::default());
}

/// Walks every refused allocation of an MSF call on a random graph of `n` vertices and
/// `m` edges, on a CPU context of `cpu_threads` capped at `memory_limit` bytes.
fn walk_on_cpu(
    what: &str,
    (n, m, seed): (u32, usize, u64),
    cpu_threads: usize,
    memory_limit: u64,
    options: &MsfOptions,
) {
    let (u, v, w) = random_graph(n, m, seed);
    let graph = Graph::EdgeList {
        num_vertices: n as usize,
        u: &u,
        v: &v,
        weights: Some(Weights::U32(&w)),
    };
    let ctx = Context::new(&Options {
        tier: Tier::Cpu,
        cpu_threads,
        device_memory_limit: memory_limit,
        ..Options::default()
    })
    .expect("the CPU tier opens");
    let sites = walk(what, || ctx.msf(&graph, options));
    eprintln!("alloc_failures: {what}: {sites} allocations, each refused once");
}

#[test]
fn auto_msf_survives_refusals_on_a_graph_with_several_filter_rounds() {
    // Large enough for filter-Kruskal's sampled pivots and parallel filters.
    walk_auto_on_cpu("auto on 400k edges (CPU)", 1 << 15, 400_000, 11, 0);
}

/// A sparse graph on four threads: every edge is light, and `auto` links them by
/// Borůvka rounds run by a team of four, each member allocating its own buffers; a
/// refusal in one member must stop them all and come back as the call's error.
#[test]
fn auto_msf_survives_refusals_inside_its_teams_rounds() {
    walk_auto_on_cpu(
        "auto on a sparse graph, 4 threads (CPU)",
        40_000,
        60_000,
        13,
        4,
    );
}

#[test]
fn primitives_survive_every_refused_allocation() {
    let data: Vec<i64> = (0..300_000i64).map(|i| (i * 7919) % 1013 - 500).collect();
    let offsets: Vec<u64> = (0..=300u64).map(|s| s * 1000).collect();
    for ctx in contexts() {
        let tier = ctx.tier();
        walk(&format!("scan on the {tier} tier"), || {
            let mut out = vec![0i64; data.len()];
            ctx.scan(&data, &mut out, ScanOp::Sum, ScanKind::Exclusive)
                .map(|()| out)
        });
        walk(&format!("segmented argmin on the {tier} tier"), || {
            let mut values = vec![0i64; offsets.len() - 1];
            let mut indices = vec![0u64; offsets.len() - 1];
            ctx.segmented_argmin(&data, &offsets, &mut values, &mut indices)
                .map(|()| (values, indices))
        });
        walk(&format!("a buffer upload on the {tier} tier"), || {
            let buffer = ctx.upload(&data)?;
            let mut back = vec![0i64; data.len()];
            ctx.download(&buffer, &mut back).map(|()| back)
        });
    }
}

#[test]
fn graph_readers_survive_every_refused_allocation() {
    let (u, v, w) = random_graph(300, 1000, 5);
    let graph = EdgeListGraph {
        num_vertices: 300,
        u,
        v,
        weights: Some(WeightVec::U32(w)),
    };
    let dir = std::env::temp_dir().join(format!("gpumst-alloc-failures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["g.gr", "g.gr.gz", "g.mtx.xz", "g.txt", "g.egr"] {
        let path = dir.join(file);
        write_graph(&path, Format::Auto, &graph).unwrap();
        walk(&format!("reading {file}"), || {
            read_graph(&path, Format::Auto, None).map(|g| g.graph)
        });
    }
    std::fs::remove_dir_all(&dir).ok();
}
