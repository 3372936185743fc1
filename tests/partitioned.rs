//! Minimum spanning forests of graphs larger than the device memory a GPU tier may use
//! (`Options::device_memory_limit`), solved a partition of the edges at a time: the
//! forest must be the in-memory one edge for edge (the reference and the CPU tier), on
//! every GPU tier this machine has (OpenCL on PoCL in CI, CUDA on the device machine).

use gpumst::{
    Algorithm, Context, Element, Forest, Graph, MsfOptions, Options, Status, Tier, TotalWeight,
    Weights,
};

mod common;
use common::msf::{
    random_graph, reference, reference_total, Csr, RefWeight, Stream, WeightedGraph,
};
use common::on_device::OnDevice;

/// Device memory the capped contexts may use: the vertices' arrays of these graphs fit
/// many times, their edges' working sets do not.
const LIMIT: u64 = 400_000;

/// Contexts of the GPU tiers present, capped at `limit` bytes; absent ones reported.
fn capped_gpu_tiers(limit: u64) -> Vec<Context> {
    let options = Options {
        device_memory_limit: limit,
        ..Options::default()
    };
    common::gpu_contexts("partitioned", options)
}

/// The forest must be the reference's and must have been computed within the cap.
fn check<W: RefWeight>(
    what: &str,
    forest: &Forest,
    expected: &(Vec<u64>, usize),
    total: TotalWeight,
    limit: u64,
) {
    assert_eq!(forest.edges, expected.0, "{what}: edges");
    assert_eq!(forest.num_components, expected.1, "{what}: components");
    assert_eq!(forest.total_weight, total, "{what}: total weight");
    let peak = forest
        .device_timings
        .expect("a GPU tier reports its timings")
        .peak_device_bytes;
    assert!(
        peak > 0 && peak <= limit,
        "{what}: the device held {peak} bytes at most, the cap is {limit}"
    );
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
fn edge_lists_larger_than_the_cap_give_the_in_memory_forest() {
    let (n, m) = (1000, 40_000);
    let (u, v) = random_graph(n, m, 7);
    let mut s = Stream(99);
    // Few distinct weights: many ties, which partitions must break as one call does.
    let w32: Vec<u32> = (0..m).map(|_| s.below(40)).collect();
    let wf: Vec<f64> = w32.iter().map(|&x| x as f64 * 0.5 - 3.0).collect();
    let wi: Vec<i64> = w32.iter().map(|&x| i64::MIN + 5 * x as i64).collect();
    for ctx in capped_gpu_tiers(LIMIT) {
        let tier = ctx.tier();
        for algorithm in [
            Algorithm::Auto,
            Algorithm::Boruvka,
            Algorithm::Strut,
            Algorithm::Prim,
        ] {
            for maximum in [false, true] {
                let graph = |weights| Graph::EdgeList {
                    num_vertices: n,
                    u: &u,
                    v: &v,
                    weights,
                };
                let what = format!("{tier} {algorithm} maximum={maximum}");
                let expected = reference(n, &u, &v, Some(&w32), maximum);
                let total = reference_total(&expected.0, Some(&w32));
                let forest = msf(&ctx, &graph(Some(Weights::U32(&w32))), algorithm, maximum);
                check::<u32>(&format!("{what} u32"), &forest, &expected, total, LIMIT);
                common::msf::check_labels(&what, n, &u, &v, &forest);

                let expected = reference(n, &u, &v, Some(&wf), maximum);
                let total = reference_total(&expected.0, Some(&wf));
                let forest = msf(&ctx, &graph(Some(Weights::F64(&wf))), algorithm, maximum);
                check::<f64>(&format!("{what} f64"), &forest, &expected, total, LIMIT);

                let expected = reference(n, &u, &v, Some(&wi), maximum);
                let total = reference_total(&expected.0, Some(&wi));
                let forest = msf(&ctx, &graph(Some(Weights::I64(&wi))), algorithm, maximum);
                check::<i64>(&format!("{what} i64"), &forest, &expected, total, LIMIT);
            }
            let expected = reference::<u32>(n, &u, &v, None, false);
            let unweighted = Graph::EdgeList {
                num_vertices: n,
                u: &u,
                v: &v,
                weights: None,
            };
            let forest = msf(&ctx, &unweighted, algorithm, false);
            let total = TotalWeight::Int(expected.0.len() as i128);
            check::<u32>(
                &format!("{tier} {algorithm} unweighted"),
                &forest,
                &expected,
                total,
                LIMIT,
            );
        }
    }
}

/// Partitions large enough for `auto`'s light phases (a sample of 4,096 keys needs
/// 16,384 edges), which partitions take from one edge per vertex.
#[test]
fn partitions_with_light_phases_give_the_in_memory_forest() {
    let (n, m) = (4000, 160_000);
    let (u, v) = random_graph(n, m, 23);
    let mut s = Stream(41);
    let w: Vec<u32> = (0..m).map(|_| s.below(1000)).collect();
    // About 40,000 edges per partition; one call would need 7.2 MB.
    const CAP: u64 = 2_200_000;
    for ctx in capped_gpu_tiers(CAP) {
        let graph = Graph::EdgeList {
            num_vertices: n,
            u: &u,
            v: &v,
            weights: Some(Weights::U32(&w)),
        };
        for maximum in [false, true] {
            let what = format!("{} auto maximum={maximum}", ctx.tier());
            let expected = reference(n, &u, &v, Some(&w), maximum);
            let total = reference_total(&expected.0, Some(&w));
            let forest = msf(&ctx, &graph, Algorithm::Auto, maximum);
            check::<u32>(&what, &forest, &expected, total, CAP);
        }
    }
}

#[test]
fn csr_graphs_larger_than_the_cap_give_the_in_memory_forest() {
    let (n, m) = (800, 30_000);
    let (u, v) = random_graph(n, m, 11);
    let mut s = Stream(5);
    let w: Vec<f32> = (0..m).map(|_| s.below(25) as f32 * 0.25).collect();
    let csr = Csr::new(n, &u, &v, Some(&w));
    for ctx in capped_gpu_tiers(LIMIT) {
        let graph = Graph::Csr {
            offsets: &csr.offsets,
            targets: &csr.targets,
            weights: csr.weights.as_deref().map(Weights::F32),
        };
        let (ids, components, total) = csr.reference(false);
        let expected = (ids, components);
        for algorithm in [Algorithm::Auto, Algorithm::Prim] {
            let forest = msf(&ctx, &graph, algorithm, false);
            let what = format!("{} CSR {algorithm}", ctx.tier());
            check::<f32>(&what, &forest, &expected, total, LIMIT);
        }
    }
}

/// The CPU tier's context: the in-memory reference for error messages.
fn cpu_context() -> Context {
    Context::new(&Options {
        tier: Tier::Cpu,
        ..Options::default()
    })
    .unwrap()
}

/// `got` must be the error `expected` is, status and message (`what` names the case).
fn same_error(what: &str, got: &gpumst::Error, expected: &gpumst::Error) {
    assert_eq!(got.status(), expected.status(), "{what}");
    assert_eq!(got.message(), expected.message(), "{what}");
}

/// Bad edges in a later partition are reported as the in-memory call reports them: the
/// first bad u of the whole list before any bad v, then the first NaN.
#[test]
fn bad_edges_are_named_as_in_memory() {
    let (n, m) = (1000, 40_000);
    let (u, v) = random_graph(n, m, 3);
    let w: Vec<f64> = (0..m).map(|e| (e % 97) as f64).collect();
    let cpu = cpu_context();
    let mut bad_u = u.clone();
    bad_u[35_000] = n as u32 + 4;
    let mut bad_v = v.clone();
    bad_v[20_000] = n as u32;
    let mut late_bad_v = v.clone();
    late_bad_v[38_000] = n as u32 + 1;
    let mut nan = w.clone();
    nan[30_000] = f64::NAN;
    /// What is wrong, u, v, weights.
    type Case<'a> = (&'a str, &'a [u32], &'a [u32], &'a [f64]);
    let cases: [Case; 4] = [
        ("a late bad u and an earlier bad v", &bad_u, &bad_v, &w),
        ("a late bad v and an earlier NaN", &u, &late_bad_v, &nan),
        ("a bad v", &u, &bad_v, &w),
        ("a NaN weight", &u, &v, &nan),
    ];
    for ctx in capped_gpu_tiers(LIMIT) {
        for (what, u, v, w) in cases {
            let graph = Graph::EdgeList {
                num_vertices: n,
                u,
                v,
                weights: Some(Weights::F64(w)),
            };
            let options = MsfOptions::default();
            let expected = cpu.msf(&graph, &options).unwrap_err();
            let got = ctx.msf(&graph, &options).unwrap_err();
            same_error(what, &got, &expected);
        }
    }
}

/// A graph whose vertices alone do not leave room for partitions is refused with the
/// sizes, as before there were partitions.
#[test]
fn too_many_vertices_for_the_cap_is_out_of_memory() {
    let (n, m) = (200_000, 30_000);
    let (u, v) = random_graph(n, m, 1);
    for ctx in capped_gpu_tiers(LIMIT) {
        let graph = Graph::EdgeList {
            num_vertices: n,
            u: &u,
            v: &v,
            weights: None,
        };
        let e = ctx.msf(&graph, &MsfOptions::default()).unwrap_err();
        assert_eq!(e.status(), Status::OutOfMemory, "{}", e.message());
        assert!(
            e.message().contains("needs about"),
            "the message gives the sizes: {}",
            e.message()
        );
    }
}

/// A graph of many edges a vertex whose vertices alone do not leave room for partitions
/// under the cap is refused with the least memory partitions would need; under a cap
/// of that many bytes it is solved in partitions, within the cap.
#[test]
fn a_cap_too_small_for_partitions_names_the_least_that_would_do() {
    let many = WeightedGraph::random(20_000, 200_000, 31, 1000);
    let (graph, expected, total) = (many.graph(), &many.expected, many.total);
    for ctx in capped_gpu_tiers(LIMIT) {
        let tier = ctx.tier();
        let e = ctx.msf(&graph, &MsfOptions::default()).unwrap_err();
        assert_eq!(e.status(), Status::OutOfMemory, "{}", e.message());
        let least: u64 = e
            .message()
            .split("in partitions it would need at least ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|bytes| bytes.parse().ok())
            .unwrap_or_else(|| panic!("{tier}: no least size in: {}", e.message()));
        assert!(least > LIMIT, "{tier}: {least} bytes, the cap is {LIMIT}");
        let capped = Context::new(&Options {
            tier,
            device_memory_limit: least,
            ..Options::default()
        })
        .unwrap();
        let forest = msf(&capped, &graph, Algorithm::Auto, false);
        check::<u32>(
            &format!("{tier} at {least} bytes"),
            &forest,
            expected,
            total,
            least,
        );
    }
}

/// The cap of the device-memory tests: the caller's arrays count against it, so it
/// leaves about as much beside them as `LIMIT` leaves the host arrays' partitions.
const DEVICE_LIMIT: u64 = 1_000_000;

/// A graph in device memory whose working set exceeds the cap beside it is solved in
/// partitions copied on the device, and gives the in-memory forest.
fn check_on_device<W: Element + RefWeight>(
    what: &str,
    ctx: &Context,
    n: usize,
    u: &[u32],
    v: &[u32],
    w: Option<&[W]>,
) {
    let graph = OnDevice::new(ctx, n, u, v, w);
    let room = DEVICE_LIMIT - graph.bytes();
    for algorithm in [
        Algorithm::Auto,
        Algorithm::Boruvka,
        Algorithm::Strut,
        Algorithm::Prim,
    ] {
        for maximum in [false, true] {
            let what = format!("{} {what} {algorithm} maximum={maximum}", ctx.tier());
            let options = MsfOptions {
                algorithm,
                maximum,
                ..MsfOptions::default()
            };
            let (expected, components) = reference(n, u, v, w, maximum);
            let total = match w {
                Some(_) => reference_total(&expected, w),
                None => TotalWeight::Int(expected.len() as i128),
            };
            let forest = graph
                .solve(ctx, &options)
                .unwrap_or_else(|e| panic!("{what}: {}", e.message()));
            assert_eq!(graph.ids(ctx, forest.num_edges), expected, "{what}: edges");
            assert_eq!(forest.num_components, components, "{what}: components");
            assert_eq!(forest.total_weight, Some(total), "{what}: total weight");
            let peak = forest.device_timings.peak_device_bytes;
            assert!(
                peak > 0 && peak <= room,
                "{what}: gpumst held {peak} bytes at most; the cap leaves {room} beside the caller's arrays"
            );
        }
    }
}

#[test]
fn graphs_in_device_memory_larger_than_the_cap_give_the_in_memory_forest() {
    let (n, m) = (1000, 40_000);
    let (u, v) = random_graph(n, m, 17);
    let mut s = Stream(31);
    let w32: Vec<u32> = (0..m).map(|_| s.below(40)).collect();
    let wf: Vec<f64> = w32.iter().map(|&x| x as f64 * 0.5 - 3.0).collect();
    for ctx in capped_gpu_tiers(DEVICE_LIMIT) {
        // One call would need 1.8 MB or more: without partitions these are refused.
        check_on_device("u32", &ctx, n, &u, &v, Some(&w32));
        check_on_device("f64", &ctx, n, &u, &v, Some(&wf));
        check_on_device::<u32>("unweighted", &ctx, n, &u, &v, None);
    }
}

/// Bad edges of a graph in device memory, solved in partitions, are named as one call
/// on host arrays names them (a later partition may hold the first bad u).
#[test]
fn bad_edges_in_device_memory_are_named_as_in_memory() {
    let (n, m) = (1000, 40_000);
    let (u, v) = random_graph(n, m, 5);
    let w: Vec<f32> = (0..m).map(|e| (e % 89) as f32).collect();
    let cpu = cpu_context();
    let mut bad_u = u.clone();
    bad_u[36_000] = n as u32 + 2;
    let mut bad_v = v.clone();
    bad_v[21_000] = n as u32;
    let mut late_bad_v = v.clone();
    late_bad_v[39_999] = u32::MAX;
    let mut nan = w.clone();
    nan[25_000] = f32::NAN;
    nan[33_000] = f32::NAN;
    /// What is wrong, u, v, weights.
    type Case<'a> = (&'a str, &'a [u32], &'a [u32], &'a [f32]);
    let cases: [Case; 4] = [
        ("a late bad u and an earlier bad v", &bad_u, &bad_v, &w),
        ("a late bad v and earlier NaNs", &u, &late_bad_v, &nan),
        ("a bad v", &u, &bad_v, &w),
        ("two NaN weights", &u, &v, &nan),
    ];
    for ctx in capped_gpu_tiers(DEVICE_LIMIT) {
        for (what, u, v, w) in cases {
            let host = Graph::EdgeList {
                num_vertices: n,
                u,
                v,
                weights: Some(Weights::F32(w)),
            };
            let options = MsfOptions::default();
            let expected = cpu.msf(&host, &options).unwrap_err();
            let got = OnDevice::new(&ctx, n, u, v, Some(w))
                .solve(&ctx, &options)
                .unwrap_err();
            same_error(what, &got, &expected);
        }
    }
}
