//! Minimum spanning forests split across several devices of a GPU tier
//! (`Options::devices`): the forest must be the one-device forest edge for edge, bad
//! edges must be named as one device names them, and the options must be checked. On
//! a machine with one GPU (and on PoCL in CI) the same device is listed several times:
//! each listing is a context of its own with its own queue, so the split, the
//! concurrent parts and the merges all run as on several GPUs.

use gpumst::{
    Algorithm, Context, Devices, Forest, Graph, MsfOptions, Options, Status, Tier, TotalWeight,
    Weights,
};

mod common;
use common::msf::{
    random_graph, reference, reference_total, Csr, RefWeight, Stream, WeightedGraph,
};

/// Graphs this small are split only below the library's default threshold (2^24
/// edges a device), which `GPUMST_SPLIT_MIN_EDGES` lowers. Every test of this file sets the same
/// value, so their threads racing to set it agree.
fn split_small_graphs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::env::set_var("GPUMST_SPLIT_MIN_EDGES", "1000"));
}

/// Contexts of the GPU tiers present on device 0 listed `copies` times (plus `extra`
/// options); absent tiers reported.
fn split_contexts(copies: usize, extra: Options) -> Vec<Context> {
    split_small_graphs();
    let options = Options {
        devices: Devices::List(vec![0; copies]),
        ..extra
    };
    let contexts = common::gpu_contexts("devices", options);
    for ctx in &contexts {
        assert_eq!(ctx.device_count(), copies, "{} device count", ctx.tier());
    }
    contexts
}

fn check<W: RefWeight>(
    what: &str,
    forest: &Forest,
    expected: &(Vec<u64>, usize),
    total: TotalWeight,
) {
    assert_eq!(forest.edges, expected.0, "{what}: edges");
    assert_eq!(forest.num_components, expected.1, "{what}: components");
    assert_eq!(forest.total_weight, total, "{what}: total weight");
}

fn msf(ctx: &Context, graph: &Graph<'_>, algorithm: Algorithm, maximum: bool) -> Forest {
    let options = MsfOptions {
        algorithm,
        maximum,
        labels: true,
        ..MsfOptions::default()
    };
    ctx.msf(graph, &options)
        .unwrap_or_else(|e| panic!("{algorithm}: {}", e.message()))
}

#[test]
fn split_edge_lists_give_the_one_device_forest() {
    // Two components (the upper half of the vertices is a graph of its own) and many
    // ties, which the ranges and merges must break as one call does.
    let (n, m) = (1000, 40_000);
    let (mut u, mut v) = random_graph(n / 2, m / 2, 7);
    let (u2, v2) = random_graph(n / 2, m / 2, 8);
    u.extend(u2.iter().map(|&x| x + n as u32 / 2));
    v.extend(v2.iter().map(|&x| x + n as u32 / 2));
    let mut s = Stream(99);
    let w32: Vec<u32> = (0..m).map(|_| s.below(40)).collect();
    let wf: Vec<f64> = w32.iter().map(|&x| x as f64 * 0.5 - 3.0).collect();
    let wi: Vec<i64> = w32.iter().map(|&x| i64::MIN + 5 * x as i64).collect();
    // Two devices (one merge), three (a forest carried to the second round), four.
    for copies in [2, 3, 4] {
        for ctx in split_contexts(copies, Options::default()) {
            let tier = ctx.tier();
            for algorithm in [Algorithm::Auto, Algorithm::Boruvka, Algorithm::Strut] {
                for maximum in [false, true] {
                    let graph = |weights| Graph::EdgeList {
                        num_vertices: n,
                        u: &u,
                        v: &v,
                        weights,
                    };
                    let what = format!("{tier} x{copies} {algorithm} maximum={maximum}");
                    let expected = reference(n, &u, &v, Some(&w32), maximum);
                    let total = reference_total(&expected.0, Some(&w32));
                    let forest = msf(&ctx, &graph(Some(Weights::U32(&w32))), algorithm, maximum);
                    check::<u32>(&format!("{what} u32"), &forest, &expected, total);
                    common::msf::check_labels(&what, n, &u, &v, &forest);

                    let expected = reference(n, &u, &v, Some(&wf), maximum);
                    let total = reference_total(&expected.0, Some(&wf));
                    let forest = msf(&ctx, &graph(Some(Weights::F64(&wf))), algorithm, maximum);
                    check::<f64>(&format!("{what} f64"), &forest, &expected, total);

                    let expected = reference(n, &u, &v, Some(&wi), maximum);
                    let total = reference_total(&expected.0, Some(&wi));
                    let forest = msf(&ctx, &graph(Some(Weights::I64(&wi))), algorithm, maximum);
                    check::<i64>(&format!("{what} i64"), &forest, &expected, total);
                }
            }
            let expected = reference::<u32>(n, &u, &v, None, false);
            let unweighted = Graph::EdgeList {
                num_vertices: n,
                u: &u,
                v: &v,
                weights: None,
            };
            let forest = msf(&ctx, &unweighted, Algorithm::Auto, false);
            let total = TotalWeight::Int(expected.0.len() as i128);
            check::<u32>(
                &format!("{tier} x{copies} unweighted"),
                &forest,
                &expected,
                total,
            );
        }
    }
}

/// A CSR graph is split as its edge list (each edge at its first entry's position):
/// the same forest, in CSR entries, and a NaN entry named as one device names it.
#[test]
fn split_csr_graphs_give_the_one_device_forest() {
    let (n, m) = (800, 30_000);
    let (u, v) = random_graph(n, m, 11);
    let mut s = Stream(5);
    let w: Vec<f32> = (0..m).map(|_| s.below(25) as f32 * 0.25).collect();
    let csr = Csr::new(n, &u, &v, Some(&w));
    let graph = Graph::Csr {
        offsets: &csr.offsets,
        targets: &csr.targets,
        weights: csr.weights.as_deref().map(Weights::F32),
    };
    let mut nan = csr.weights.clone().expect("weighted");
    let entry = nan.len() * 2 / 3;
    nan[entry] = f32::NAN;
    let bad = Graph::Csr {
        offsets: &csr.offsets,
        targets: &csr.targets,
        weights: Some(Weights::F32(&nan)),
    };
    let one = common::gpu_contexts("devices", Options::default());
    for copies in [2, 3] {
        for (ctx, one) in split_contexts(copies, Options::default()).iter().zip(&one) {
            for maximum in [false, true] {
                let (ids, components, total) = csr.reference(maximum);
                for algorithm in [Algorithm::Auto, Algorithm::Boruvka, Algorithm::Strut] {
                    let what =
                        format!("{} x{copies} CSR {algorithm} maximum={maximum}", ctx.tier());
                    let forest = msf(ctx, &graph, algorithm, maximum);
                    check::<f32>(&what, &forest, &(ids.clone(), components), total);
                }
            }
            let options = MsfOptions::default();
            let expected = one.msf(&bad, &options).unwrap_err();
            let got = ctx.msf(&bad, &options).unwrap_err();
            assert_eq!(
                got.message(),
                expected.message(),
                "x{copies} CSR with a NaN"
            );
        }
    }
}

/// Each device's range (and merge) larger than the memory it may use: partitions
/// inside the split, same forest, every device within the cap.
#[test]
fn split_graphs_larger_than_each_devices_cap_give_the_one_device_forest() {
    const LIMIT: u64 = 400_000;
    let (n, m) = (1000, 60_000);
    let (u, v) = random_graph(n, m, 17);
    let mut s = Stream(3);
    let w: Vec<u64> = (0..m).map(|_| s.below(1000) as u64 * 3).collect();
    let capped = Options {
        device_memory_limit: LIMIT,
        ..Options::default()
    };
    for ctx in split_contexts(2, capped) {
        let graph = Graph::EdgeList {
            num_vertices: n,
            u: &u,
            v: &v,
            weights: Some(Weights::U64(&w)),
        };
        let expected = reference(n, &u, &v, Some(&w), false);
        let total = reference_total(&expected.0, Some(&w));
        let forest = msf(&ctx, &graph, Algorithm::Auto, false);
        check::<u64>(&format!("{} capped", ctx.tier()), &forest, &expected, total);
        let peak = forest
            .device_timings
            .expect("GPU timings")
            .peak_device_bytes;
        assert!(peak > 0 && peak <= LIMIT, "peak {peak} bytes, cap {LIMIT}");
    }
}

/// Bad edges in any range are reported as one device reports them: the first bad u of
/// the whole list, then the first bad v, then the first NaN weight.
#[test]
fn bad_edges_are_named_as_on_one_device() {
    let (n, m) = (1000, 40_000);
    let (u, v) = random_graph(n, m, 3);
    let w: Vec<f64> = (0..m).map(|e| (e % 97) as f64).collect();
    let one = common::gpu_contexts("devices", Options::default());
    let mut late_u = u.clone();
    late_u[35_000] = n as u32 + 4;
    let mut early_v = v.clone();
    early_v[20_000] = n as u32;
    let mut early_nan = w.clone();
    early_nan[1_000] = f64::NAN;
    let mut late_nan = w.clone();
    late_nan[39_999] = f64::NAN;
    /// What is wrong, u, v, weights.
    type Case<'a> = (&'a str, &'a [u32], &'a [u32], &'a [f64]);
    let cases: [Case; 6] = [
        ("a late bad u and an earlier bad v", &late_u, &early_v, &w),
        ("a bad v", &u, &early_v, &w),
        ("a bad u in the last range", &late_u, &v, &w),
        (
            "a NaN in the first range, a bad end in a later one",
            &late_u,
            &v,
            &early_nan,
        ),
        ("a NaN in the last range", &u, &v, &late_nan),
        ("two NaN weights", &u, &v, &{
            let mut both = early_nan.clone();
            both[39_999] = f64::NAN;
            both
        }),
    ];
    for (ctx, one) in split_contexts(3, Options::default()).iter().zip(&one) {
        for (what, u, v, w) in cases {
            let graph = Graph::EdgeList {
                num_vertices: n,
                u,
                v,
                weights: Some(Weights::F64(w)),
            };
            let options = MsfOptions::default();
            let expected = one.msf(&graph, &options).unwrap_err();
            let got = ctx.msf(&graph, &options).unwrap_err();
            assert_eq!(got.status(), expected.status(), "{what}");
            assert_eq!(got.message(), expected.message(), "{what}");
        }
    }
}

#[test]
fn device_options_are_checked() {
    let empty = Context::new(&Options {
        devices: Devices::List(Vec::new()),
        ..Options::default()
    });
    let e = empty.err().expect("an empty device list is refused");
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(e.message().contains("empty list"), "{}", e.message());

    let adopted = Context::new(&Options {
        devices: Devices::All,
        cuda_context: 0x1234,
        ..Options::default()
    });
    let e = adopted
        .err()
        .expect("cuda_context with several devices is refused");
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(e.message().contains("cuda_context"), "{}", e.message());

    // The CPU tier has no devices to add.
    for devices in [Devices::All, Devices::List(vec![0, 3, 9])] {
        let cpu = Context::new(&Options {
            tier: Tier::Cpu,
            devices,
            ..Options::default()
        })
        .unwrap();
        assert_eq!(cpu.device_count(), 1);
    }

    for ctx in common::gpu_contexts("devices", Options::default()) {
        let tier = ctx.tier();
        // A device the tier does not have, anywhere in the list, is refused.
        let e = Context::new(&Options {
            tier,
            devices: Devices::List(vec![0, 1000]),
            ..Options::default()
        })
        .err()
        .expect("device 1000 does not exist");
        assert_eq!(
            e.status(),
            Status::InvalidArgument,
            "{tier}: {}",
            e.message()
        );
        assert!(e.message().contains("1000"), "{tier}: {}", e.message());
        // `All` takes at least the device itself.
        let all = Context::new(&Options {
            tier,
            devices: Devices::All,
            ..Options::default()
        })
        .unwrap();
        assert!(all.device_count() >= 1, "{tier}");
        eprintln!(
            "devices: {tier}: Devices::All opened {} device(s)",
            all.device_count()
        );
    }
}

/// Every device of the machine (two GPUs on the device machine's `-x2` kinds): the
/// split forest is the one-device forest. Skipped, saying so, with one device.
#[test]
fn split_across_every_device_gives_the_one_device_forest() {
    split_small_graphs();
    let (n, m) = (2000, 80_000);
    let (u, v) = random_graph(n, m, 23);
    let mut s = Stream(41);
    let w: Vec<f32> = (0..m).map(|_| s.below(300) as f32 - 100.0).collect();
    let graph = Graph::EdgeList {
        num_vertices: n,
        u: &u,
        v: &v,
        weights: Some(Weights::F32(&w)),
    };
    let expected = reference(n, &u, &v, Some(&w), false);
    let total = reference_total(&expected.0, Some(&w));
    let all = Options {
        devices: Devices::All,
        ..Options::default()
    };
    for ctx in common::gpu_contexts("devices", all) {
        let tier = ctx.tier();
        if ctx.device_count() < 2 {
            eprintln!("devices: {tier}: SKIPPED the test across every device: this machine has one device of the tier");
            continue;
        }
        for algorithm in [Algorithm::Auto, Algorithm::Boruvka, Algorithm::Strut] {
            let forest = msf(&ctx, &graph, algorithm, false);
            let what = format!("{tier} across {} devices, {algorithm}", ctx.device_count());
            check::<f32>(&what, &forest, &expected, total);
        }
    }
}

/// Splits from several threads at once, each thread with contexts of its own (every
/// device, and device 0 listed twice): every forest is the one-device forest. Each
/// call runs its devices' host copies on pools of threads of its own; on two GPUs a
/// pool thread shared between calls took another call's part while it waited inside a
/// copy, with that part's device context made current on it (the copy's next driver
/// call then failed).
#[test]
fn concurrent_splits_give_the_one_device_forest() {
    split_small_graphs();
    let dense = WeightedGraph::random(3000, 120_000, 29, 500);
    let (graph, expected, total) = (dense.graph(), &dense.expected, dense.total);
    let tiers: Vec<Tier> = common::gpu_contexts("devices", Options::default())
        .iter()
        .map(|ctx| ctx.tier())
        .collect();
    for tier in tiers {
        let options = |devices| Options {
            tier,
            devices,
            ..Options::default()
        };
        let contexts: Vec<Context> = (0..4)
            .map(|t| match t % 2 {
                0 => options(Devices::All),
                _ => options(Devices::List(vec![0, 0])),
            })
            .map(|o| Context::new(&o).expect("a context like the suite's"))
            .collect();
        std::thread::scope(|scope| {
            for (t, ctx) in contexts.iter().enumerate() {
                let graph = &graph;
                scope.spawn(move || {
                    for round in 0..4 {
                        let forest = msf(ctx, graph, Algorithm::Auto, false);
                        let what = format!(
                            "{tier} thread {t} ({} devices) round {round}",
                            ctx.device_count()
                        );
                        check::<u32>(&what, &forest, expected, total);
                    }
                });
            }
        });
    }
}
