//! The MSF conformance suite, written once and run against every tier this machine
//! has: every algorithm must return, edge for edge, the forest of an independent
//! sequential Kruskal under the (weight, edge id) order.

use gpumst::{
    Algorithm, Context, Forest, Graph, MsfOptions, Options, Status, Tier, TotalWeight, Weights,
};

mod common;
use common::msf::{check_labels, random_graph, reference, reference_total, Csr, RefWeight, Stream};

/// Contexts for every tier present; the absent ones are reported as skipped.
fn tiers() -> Vec<Context> {
    let mut contexts = Vec::new();
    for tier in [Tier::Cpu, Tier::OpenCl, Tier::Cuda] {
        if !common::tier_selected(tier) {
            eprintln!("conformance: {tier} tier skipped: not in GPUMST_TEST_TIERS");
            continue;
        }
        match Context::new(&Options {
            tier,
            ..Options::default()
        }) {
            Ok(c) => contexts.push(c),
            Err(e) => eprintln!("conformance: {tier} tier skipped: {}", e.message()),
        }
        if tier == Tier::Cpu {
            // One thread too: some steps take a sequential path there.
            let one_thread = Options {
                tier,
                cpu_threads: 1,
                ..Options::default()
            };
            contexts.push(Context::new(&one_thread).expect("a one-thread CPU context opens"));
            // And eight: `auto` links light edges by Borůvka rounds (run by a team of
            // every thread) from 4 threads and by reservations from 8, which this
            // machine's default may not reach (threads beyond the cores wait by
            // sleeping, so the suite stays quick on two cores).
            let eight_threads = Options {
                tier,
                cpu_threads: 8,
                ..Options::default()
            };
            contexts.push(Context::new(&eight_threads).expect("an eight-thread CPU context opens"));
        }
    }
    assert!(
        !contexts.is_empty(),
        "no tier opened (the CPU tier always does unless GPUMST_TEST_TIERS leaves it out)"
    );
    contexts
}

/// Runs one MSF; `None` (reported as skipped) when the tier does not implement the
/// algorithm yet. Every other error fails the test.
fn solve(ctx: &Context, graph: &Graph<'_>, options: &MsfOptions, what: &str) -> Option<Forest> {
    match ctx.msf(graph, options) {
        Ok(forest) => {
            // A GPU tier reports its timings and the device memory its buffers held.
            let on_device = ctx.tier() != Tier::Cpu
                && options.algorithm != Algorithm::Kruskal
                && !forest.edges.is_empty();
            if let (true, Some(t)) = (on_device, forest.device_timings) {
                assert!(
                    t.peak_device_bytes > 0,
                    "{what} {} on {}: no device memory counted",
                    options.algorithm,
                    ctx.tier()
                );
            }
            Some(forest)
        }
        Err(e)
            if e.status() == Status::BackendUnavailable
                && e.message().contains("does not implement") =>
        {
            eprintln!("SKIPPED {what}: {}", e.message());
            None
        }
        Err(e) => panic!("{what} {} on {}: {e}", options.algorithm, ctx.tier()),
    }
}

/// Checks every algorithm on every tier against the reference, minimum and maximum
/// forests, on an edge list and on the equivalent CSR.
fn check<W: RefWeight + 'static>(
    name: &str,
    n: usize,
    u: &[u32],
    v: &[u32],
    w: Option<&[W]>,
    wrap: fn(&[W]) -> Weights<'_>,
) {
    for maximum in [false, true] {
        check_order(name, n, u, v, w, wrap, maximum);
    }
}

fn check_order<W: RefWeight + 'static>(
    name: &str,
    n: usize,
    u: &[u32],
    v: &[u32],
    w: Option<&[W]>,
    wrap: fn(&[W]) -> Weights<'_>,
    maximum: bool,
) {
    let name = &format!("{name}{}", if maximum { " (maximum)" } else { "" });
    let (expected, components) = reference(n, u, v, w, maximum);
    let expected_total = reference_total(&expected, w);
    let edge_list = Graph::EdgeList {
        num_vertices: n,
        u,
        v,
        weights: w.map(wrap),
    };
    for ctx in tiers() {
        for algorithm in Algorithm::ALL {
            let options = MsfOptions {
                algorithm,
                labels: true,
                maximum,
                ..MsfOptions::default()
            };
            let Some(forest) = solve(&ctx, &edge_list, &options, name) else {
                continue;
            };
            assert_eq!(
                forest.edges,
                expected,
                "{name}: {algorithm} on {} differs from Kruskal",
                ctx.tier()
            );
            assert_eq!(forest.tier, ctx.tier(), "{name} {algorithm}: tier");
            assert_eq!(forest.num_components, components, "{name} {algorithm}");
            assert_eq!(forest.total_weight, expected_total, "{name} {algorithm}");
            check_labels(name, n, u, v, &forest);
        }
    }
    check_csr(name, n, u, v, w, wrap, maximum);
}

/// The same graph as a symmetric CSR (self-loops dropped): CSR ids are positions of
/// the u < v entries, so map them back to edge-list ids before comparing.
fn check_csr<W: RefWeight + 'static>(
    name: &str,
    n: usize,
    u: &[u32],
    v: &[u32],
    w: Option<&[W]>,
    wrap: fn(&[W]) -> Weights<'_>,
    maximum: bool,
) {
    let (expected, _) = reference(n, u, v, w, maximum);
    let csr = Csr::new(n, u, v, w);
    let graph = Graph::Csr {
        offsets: &csr.offsets,
        targets: &csr.targets,
        weights: csr.weights.as_deref().map(wrap),
    };
    let (expected_csr, _, _) = csr.reference(maximum);
    assert_eq!(
        expected_csr.len(),
        expected.len(),
        "{name}: CSR and edge-list forests differ in size"
    );
    for ctx in tiers() {
        for algorithm in Algorithm::ALL {
            let options = MsfOptions {
                algorithm,
                maximum,
                ..MsfOptions::default()
            };
            let Some(forest) = solve(&ctx, &graph, &options, &format!("{name} CSR")) else {
                continue;
            };
            assert_eq!(
                forest.edges,
                expected_csr,
                "{name}: CSR {algorithm} on {}",
                ctx.tier()
            );
        }
    }
}

fn u32s(w: &[u32]) -> Weights<'_> {
    Weights::U32(w)
}

#[test]
fn random_graphs_every_type() {
    for (n, m, seed) in [
        (2, 1, 1),
        (17, 40, 2),
        (500, 2000, 3),
        (2000, 30_000, 4),
        (4000, 3000, 5),
    ] {
        let (u, v) = random_graph(n, m, seed);
        let mut s = Stream(seed * 7 + 1);
        let raw: Vec<u64> = (0..m).map(|_| s.next()).collect();
        let name = format!("random n={n} m={m}");
        let w: Vec<u32> = raw.iter().map(|&x| (x % 100) as u32).collect();
        check(&name, n, &u, &v, Some(&w), u32s);
        let w: Vec<i32> = raw.iter().map(|&x| (x % 201) as i32 - 100).collect();
        check(&name, n, &u, &v, Some(&w), |w| Weights::I32(w));
        let w: Vec<u64> = raw.iter().map(|&x| x >> (x % 64)).collect();
        check(&name, n, &u, &v, Some(&w), |w| Weights::U64(w));
        let w: Vec<i64> = raw.iter().map(|&x| x as i64).collect();
        check(&name, n, &u, &v, Some(&w), |w| Weights::I64(w));
        let w: Vec<f32> = raw
            .iter()
            .map(|&x| (x % 1000) as f32 / 8.0 - 60.0)
            .collect();
        check(&name, n, &u, &v, Some(&w), |w| Weights::F32(w));
        let w: Vec<f64> = raw.iter().map(|&x| (x >> 11) as f64 * 1e-9 - 4e6).collect();
        check(&name, n, &u, &v, Some(&w), |w| Weights::F64(w));
    }
}

#[test]
fn grids_and_skewed_graphs() {
    // A grid with random weights.
    let (rows, cols) = (40usize, 70usize);
    let (mut u, mut v) = (Vec::new(), Vec::new());
    for r in 0..rows {
        for c in 0..cols {
            let x = (r * cols + c) as u32;
            if c + 1 < cols {
                u.push(x);
                v.push(x + 1);
            }
            if r + 1 < rows {
                u.push(x);
                v.push(x + cols as u32);
            }
        }
    }
    let mut s = Stream(99);
    let w: Vec<u32> = (0..u.len()).map(|_| s.below(1000)).collect();
    check("grid 40x70", rows * cols, &u, &v, Some(&w), u32s);
    // A power-law-ish graph: endpoints drawn with heavy skew (R-MAT style bits).
    let n = 1 << 12;
    let (mut u, mut v) = (Vec::new(), Vec::new());
    for _ in 0..40_000 {
        let (mut a, mut b) = (0u32, 0u32);
        for _ in 0..12 {
            let r = s.below(100);
            let (da, db) = if r < 57 {
                (0, 0)
            } else if r < 76 {
                (0, 1)
            } else if r < 95 {
                (1, 0)
            } else {
                (1, 1)
            };
            a = a << 1 | da;
            b = b << 1 | db;
        }
        u.push(a);
        v.push(b);
    }
    let w: Vec<u32> = (0..u.len()).map(|_| s.below(64)).collect();
    check("rmat-like scale 12", n, &u, &v, Some(&w), u32s);
}

#[test]
fn special_weights_and_shapes() {
    // Disconnected, isolated vertices, multi-edges, self-loops.
    let u = [0, 0, 1, 3, 3, 3, 5, 7, 7, 2];
    let v = [1, 1, 0, 4, 3, 4, 6, 8, 7, 2];
    let w = [5u32, 3, 3, 1, 0, 1, 9, 2, 1, 4];
    check("disconnected multigraph", 11, &u, &v, Some(&w), u32s);
    // All-equal weights: the forest of lowest ids.
    let (u, v) = random_graph(300, 1500, 11);
    let w = vec![7u32; u.len()];
    check("all equal", 300, &u, &v, Some(&w), u32s);
    check::<u32>("unweighted", 300, &u, &v, None, u32s);
    // Negative, infinite and signed-zero weights.
    let u = [0, 1, 2, 3, 0, 1, 2, 4, 5, 5];
    let v = [1, 2, 3, 0, 2, 3, 4, 5, 0, 3];
    let w = [
        -0.0,
        0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -3.5,
        0.0,
        -0.0,
        f64::INFINITY,
        1e300,
        -1e-300,
    ];
    check("signed zeros and infinities", 6, &u, &v, Some(&w), |w| {
        Weights::F64(w)
    });
    let wf: Vec<f32> = w.iter().map(|&x| x as f32).collect();
    check("f32 zeros and infinities", 6, &u, &v, Some(&wf), |w| {
        Weights::F32(w)
    });
    let wi = [i64::MIN, i64::MAX, -1, 0, i64::MIN, 5, i64::MAX, 3, -7, 1];
    check("i64 extremes", 6, &u, &v, Some(&wi), |w| Weights::I64(w));
    let wu = [u64::MAX, 0, u64::MAX, 1, 2, u64::MAX - 1, 0, 9, 9, u64::MAX];
    check("u64 extremes", 6, &u, &v, Some(&wu), |w| Weights::U64(w));
    // Mostly isolated vertices (the vertex-centric algorithms and the GPU tiers
    // renumber the touched ones): 3000 edges scattered over 300000 vertices (through
    // a sorted list of the touched vertices), and 30000 (through a bitmap of them).
    for (edges, seed) in [(3000, 12), (30_000, 13)] {
        let (u, v) = random_graph(300_000, edges, seed);
        let w: Vec<u32> = (0..u.len() as u32).map(|i| i % 17).collect();
        check("mostly isolated vertices", 300_000, &u, &v, Some(&w), u32s);
    }
    // Empty graphs.
    check::<u32>("n=0", 0, &[], &[], Some(&[]), u32s);
    check::<u32>("m=0", 5, &[], &[], Some(&[]), u32s);
    check::<u32>("one self-loop", 1, &[0], &[0], Some(&[1]), u32s);
}

#[test]
fn totals_are_exact_for_wide_integers() {
    let ctx = Context::new(&Options::default()).unwrap();
    let (u, v) = ([0u32, 1, 2], [1u32, 2, 3]);
    let w = [u64::MAX, u64::MAX, u64::MAX];
    let forest = ctx
        .msf(
            &Graph::EdgeList {
                num_vertices: 4,
                u: &u,
                v: &v,
                weights: Some(Weights::U64(&w)),
            },
            &MsfOptions::default(),
        )
        .unwrap();
    assert_eq!(forest.total_weight, TotalWeight::Int(3 * u64::MAX as i128));
}

#[test]
fn bad_graphs_name_the_offending_index() {
    let ctx = Context::new(&Options::default()).unwrap();
    let msf = |g: Graph| ctx.msf(&g, &MsfOptions::default()).unwrap_err();
    let e = msf(Graph::EdgeList {
        num_vertices: 3,
        u: &[0, 1, 5],
        v: &[1, 2, 0],
        weights: None,
    });
    assert_eq!(e.status(), Status::InvalidGraph);
    assert!(
        e.message().contains("edge 2") && e.message().contains("u = 5"),
        "{e}"
    );
    // Found by fuzzing: a NaN on a CSR self-loop entry (which becomes no edge).
    let e = msf(Graph::Csr {
        offsets: &[0, 3, 4],
        targets: &[0, 1, 0, 0],
        weights: Some(Weights::F32(&[f32::NAN, 1.0, 1.0, 1.0])),
    });
    assert_eq!(e.status(), Status::InvalidGraph);
    assert!(e.message().contains("CSR entry 0 has a NaN weight"), "{e}");
    let e = msf(Graph::EdgeList {
        num_vertices: 3,
        u: &[0, 1],
        v: &[1, 3],
        weights: None,
    });
    assert!(
        e.message().contains("edge 1") && e.message().contains("v = 3"),
        "{e}"
    );
    let e = msf(Graph::EdgeList {
        num_vertices: 3,
        u: &[0, 1],
        v: &[1],
        weights: None,
    });
    assert_eq!(e.status(), Status::InvalidArgument);
    let e = msf(Graph::EdgeList {
        num_vertices: 3,
        u: &[0, 1],
        v: &[1, 2],
        weights: Some(Weights::F32(&[1.0])),
    });
    assert_eq!(e.status(), Status::InvalidArgument, "{e}");
    let e = msf(Graph::EdgeList {
        num_vertices: 3,
        u: &[0, 1, 0],
        v: &[1, 2, 2],
        weights: Some(Weights::F64(&[1.0, f64::NAN, 2.0])),
    });
    assert_eq!(e.status(), Status::InvalidGraph);
    assert!(e.message().contains("edge 1 has a NaN"), "{e}");
    // CSR: offsets not monotone, wrong end, target out of range, asymmetric, NaN.
    let e = msf(Graph::Csr {
        offsets: &[0, 2, 1, 2],
        targets: &[1, 2],
        weights: None,
    });
    assert!(e.message().contains("offsets[2] = 1"), "{e}");
    let e = msf(Graph::Csr {
        offsets: &[0, 1, 2, 3],
        targets: &[1, 0],
        weights: None,
    });
    assert!(e.message().contains("offsets[3] = 3"), "{e}");
    let e = msf(Graph::Csr {
        offsets: &[0, 1, 2],
        targets: &[1, 7],
        weights: None,
    });
    assert!(e.message().contains("targets[1] = 7"), "{e}");
    let e = msf(Graph::Csr {
        offsets: &[0, 1, 2, 2],
        targets: &[1, 2],
        weights: None,
    });
    assert_eq!(e.status(), Status::InvalidGraph);
    assert!(e.message().contains("not symmetric"), "{e}");
    let e = msf(Graph::Csr {
        offsets: &[0, 1, 2],
        targets: &[1, 0],
        weights: Some(Weights::I32(&[4, 5])),
    });
    assert!(
        e.message().contains("not symmetric") && e.message().contains("entry"),
        "{e}"
    );
    let e = msf(Graph::Csr {
        offsets: &[0, 1, 2],
        targets: &[1, 0],
        weights: Some(Weights::F32(&[f32::NAN, f32::NAN])),
    });
    assert!(e.message().contains("NaN"), "{e}");
    let e = msf(Graph::Csr {
        offsets: &[],
        targets: &[],
        weights: None,
    });
    assert_eq!(e.status(), Status::InvalidArgument);
}

#[test]
fn concurrent_calls_on_one_context_agree() {
    // DESIGN invariant 6: any function may be called concurrently on one context.
    let (u, v) = random_graph(20_000, 150_000, 77);
    let mut s = Stream(5);
    let w: Vec<u32> = (0..u.len()).map(|_| s.below(5000)).collect();
    let (expected, _) = reference(20_000, &u, &v, Some(&w), false);
    let graph = Graph::EdgeList {
        num_vertices: 20_000,
        u: &u,
        v: &v,
        weights: Some(Weights::U32(&w)),
    };
    for ctx in tiers() {
        std::thread::scope(|scope| {
            let handles: Vec<_> = Algorithm::ALL
                .iter()
                .chain(Algorithm::ALL.iter())
                .map(|&algorithm| {
                    let (ctx, graph) = (&ctx, &graph);
                    scope.spawn(move || {
                        let options = MsfOptions {
                            algorithm,
                            ..MsfOptions::default()
                        };
                        let what = format!("concurrent on {}", ctx.tier());
                        (
                            algorithm,
                            solve(ctx, graph, &options, &what).map(|f| f.edges),
                        )
                    })
                })
                .collect();
            for handle in handles {
                let (algorithm, edges) = handle.join().unwrap();
                if let Some(edges) = edges {
                    assert_eq!(
                        edges,
                        expected,
                        "{algorithm} run concurrently on {}",
                        ctx.tier()
                    );
                }
            }
        });
    }
}

/// Graphs and arrays beyond the device's memory give OutOfMemory with a message, never
/// a crash, and the context stays usable (run by scripts/test.sh and scripts/device.sh
/// with a small GPUMST_OPENCL_MEMORY_LIMIT / GPUMST_CUDA_MEMORY_LIMIT; without one there
/// is nothing to test on that tier).
#[test]
fn out_of_device_memory_is_a_clear_status() {
    for (tier, variable) in [
        (Tier::OpenCl, "GPUMST_OPENCL_MEMORY_LIMIT"),
        (Tier::Cuda, "GPUMST_CUDA_MEMORY_LIMIT"),
    ] {
        let Ok(limit) = std::env::var(variable) else {
            eprintln!("SKIPPED out-of-memory test on the {tier} tier: {variable} is not set");
            continue;
        };
        let ctx = match Context::new(&Options {
            tier,
            ..Options::default()
        }) {
            Ok(ctx) => ctx,
            Err(e) => {
                eprintln!(
                    "SKIPPED out-of-memory test on the {tier} tier: {}",
                    e.message()
                );
                continue;
            }
        };
        out_of_memory_on(&ctx, limit.parse().unwrap());
        eprintln!("out-of-memory test passed on the {tier} tier");
    }
}

fn out_of_memory_on(ctx: &Context, limit: usize) {
    // Edges far beyond the limit (at least 9 bytes each are needed) over few vertices:
    // solved a partition at a time, the one-call forest.
    let m = limit;
    let (u, v) = random_graph(1000, m, 3);
    let graph = Graph::EdgeList {
        num_vertices: 1000,
        u: &u,
        v: &v,
        weights: None,
    };
    let (expected, _) = reference::<u32>(1000, &u, &v, None, false);
    for algorithm in [Algorithm::Auto, Algorithm::Boruvka] {
        let options = MsfOptions {
            algorithm,
            ..MsfOptions::default()
        };
        let forest = ctx.msf(&graph, &options).unwrap();
        assert_eq!(forest.edges, expected, "{algorithm} in partitions");
    }
    // Vertices whose own arrays exceed the limit (32 bytes each at least): a clear status.
    let n = limit / 4;
    let (u, v) = random_graph(n, n / 2, 5);
    let graph = Graph::EdgeList {
        num_vertices: n,
        u: &u,
        v: &v,
        weights: None,
    };
    for algorithm in [Algorithm::Auto, Algorithm::Boruvka] {
        let options = MsfOptions {
            algorithm,
            ..MsfOptions::default()
        };
        let err = ctx.msf(&graph, &options).unwrap_err();
        assert_eq!(err.status(), Status::OutOfMemory, "{err}");
        assert!(err.message().contains("bytes"), "{err}");
    }
    let data = vec![1u64; limit];
    let mut out = vec![0u64; limit];
    let err = ctx
        .scan(
            &data,
            &mut out,
            gpumst::ScanOp::Sum,
            gpumst::ScanKind::Inclusive,
        )
        .unwrap_err();
    assert_eq!(err.status(), Status::OutOfMemory, "{err}");
    // Still usable for what fits.
    let small = [3u32, 1, 2];
    assert_eq!(ctx.argmin(&small).unwrap(), Some((1, 1)));
    let (u, v) = random_graph(100, 300, 4);
    let graph = Graph::EdgeList {
        num_vertices: 100,
        u: &u,
        v: &v,
        weights: None,
    };
    let (expected, _) = reference::<u32>(100, &u, &v, None, false);
    assert_eq!(
        ctx.msf(&graph, &MsfOptions::default()).unwrap().edges,
        expected
    );
}

#[test]
fn road_graphs_match_the_published_answers_on_every_tier() {
    // GPUMST_DATA_DIR points elsewhere (the device machine runs this binary away from
    // the checkout it was built in).
    let data = std::env::var_os("GPUMST_DATA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    for (name, forest_edges, total) in [
        ("NY", 264_345usize, 27_253_492_594i128),
        ("BAY", 321_269, 44_047_422_157),
    ] {
        let path = data.join(format!("{name}.gr.xz"));
        if !path.exists() {
            eprintln!("SKIPPED {name}: {} not found", path.display());
            continue;
        }
        let loaded =
            gpumst::graph::io::read_graph(&path, gpumst::graph::io::Format::Auto, None).unwrap();
        let graph = loaded.graph.view();
        for ctx in tiers() {
            let reference = ctx
                .msf(
                    &graph,
                    &MsfOptions {
                        algorithm: Algorithm::Kruskal,
                        ..MsfOptions::default()
                    },
                )
                .unwrap();
            assert_eq!(
                reference.edges.len(),
                forest_edges,
                "{name} on {}",
                ctx.tier()
            );
            assert_eq!(
                reference.total_weight,
                TotalWeight::Int(total),
                "{name} on {}",
                ctx.tier()
            );
            assert_eq!(reference.num_components, 1);
            for algorithm in Algorithm::ALL {
                let options = MsfOptions {
                    algorithm,
                    ..MsfOptions::default()
                };
                let Some(forest) = solve(&ctx, &graph, &options, name) else {
                    continue;
                };
                assert_eq!(
                    forest.edges,
                    reference.edges,
                    "{name}: {algorithm} on {}",
                    ctx.tier()
                );
            }
        }
    }
}
