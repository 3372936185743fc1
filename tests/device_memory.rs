//! Graphs and primitives in device memory (`Context::msf_on_device`,
//! `Context::wrap_device`), on every GPU tier this machine has (OpenCL on PoCL in CI,
//! CUDA on the device machine): forests edge for edge against the reference and
//! against the host path, and the host path's error messages.

use gpumst::msf::{DeviceGraph, DeviceOutput};
use gpumst::{
    Algorithm, Buffer, Context, DType, Element, Graph, MsfOptions, Options, ScanKind, ScanOp,
    Status, Tier, Weights,
};

mod common;
use common::msf::{random_graph, reference, reference_total, Csr, RefWeight, Stream};
use common::on_device::{CsrOnDevice, OnDevice};

/// Contexts of the GPU tiers present; absent ones are reported as skipped.
fn gpu_tiers() -> Vec<Context> {
    common::gpu_contexts("device memory", Options::default())
}

/// Every algorithm that takes device graphs, minimum and maximum, on every GPU tier:
/// ids, component count and total weight against the reference.
fn check<W: Element + RefWeight>(name: &str, n: usize, u: &[u32], v: &[u32], w: Option<&[W]>) {
    for ctx in gpu_tiers() {
        let graph = OnDevice::new(&ctx, n, u, v, w);
        for maximum in [false, true] {
            let (expected, components) = reference(n, u, v, w, maximum);
            let total = reference_total(&expected, w);
            for algorithm in Algorithm::ALL {
                if algorithm == Algorithm::Kruskal {
                    continue;
                }
                let options = MsfOptions {
                    algorithm,
                    maximum,
                    ..MsfOptions::default()
                };
                let what = format!("{name} {algorithm} maximum={maximum} on {}", ctx.tier());
                let forest = graph
                    .solve(&ctx, &options)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(forest.tier, ctx.tier(), "{what}");
                assert_eq!(graph.ids(&ctx, forest.num_edges), expected, "{what}");
                assert_eq!(forest.num_components, components, "{what}");
                assert_eq!(forest.total_weight, Some(total), "{what}");
            }
        }
    }
}

#[test]
fn forests_match_the_reference_for_every_weight_type() {
    // The last graph is dense enough for the light phases (m >= 4n and 4 * 4096).
    for (n, m, seed) in [(2, 1, 1), (17, 40, 2), (500, 2000, 3), (3000, 40_000, 4)] {
        let (u, v) = random_graph(n, m, seed);
        let mut s = Stream(seed * 11 + 5);
        let raw: Vec<u64> = (0..m).map(|_| s.next()).collect();
        let name = format!("random n={n} m={m}");
        let w: Vec<u32> = raw.iter().map(|&x| (x % 100) as u32).collect();
        check(&name, n, &u, &v, Some(&w));
        let w: Vec<i32> = raw.iter().map(|&x| (x % 201) as i32 - 100).collect();
        check(&name, n, &u, &v, Some(&w));
        let w: Vec<u64> = raw.iter().map(|&x| x >> (x % 64)).collect();
        check(&name, n, &u, &v, Some(&w));
        let w: Vec<i64> = raw.iter().map(|&x| x as i64).collect();
        check(&name, n, &u, &v, Some(&w));
        // Signed zeros are one weight; infinities order as on the host.
        let w: Vec<f32> = raw
            .iter()
            .map(|&x| match x % 50 {
                0 => -0.0,
                1 => f32::INFINITY,
                2 => f32::NEG_INFINITY,
                _ => (x % 1000) as f32 / 8.0 - 60.0,
            })
            .collect();
        check(&name, n, &u, &v, Some(&w));
        let w: Vec<f64> = raw.iter().map(|&x| (x >> 11) as f64 * 1e-9 - 4e6).collect();
        check(&name, n, &u, &v, Some(&w));
        check::<u32>(&name, n, &u, &v, None);
    }
}

/// The forest's ids over many blocks of 4096 edges (a work-group's, with 256 work-items):
/// more blocks than a work-group has items (the one-launch ids, rs_ids_one_pass, then
/// read the earlier blocks' counts in several steps), and more than its 1024 (the
/// count, scan and write then take a launch each). The one launch is taken where the
/// single-pass scan is (CUDA; NVIDIA OpenCL; PoCL with GPUMST_OPENCL_SCAN=single-pass).
#[test]
fn forest_ids_over_many_blocks() {
    for (n, m, seed) in [(300_000, 1_100_001, 31), (1_000_000, 4096 * 1024 + 1, 32)] {
        let (u, v) = random_graph(n, m, seed);
        let mut s = Stream(seed);
        let w: Vec<u32> = (0..m).map(|_| (s.next() % 100_000) as u32).collect();
        let (expected, components) = reference(n, &u, &v, Some(&w), false);
        for ctx in gpu_tiers() {
            let graph = OnDevice::new(&ctx, n, &u, &v, Some(&w));
            let what = format!("random n={n} m={m} on {}", ctx.tier());
            let forest = graph
                .solve(&ctx, &MsfOptions::default())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(forest.num_components, components, "{what}");
            assert_eq!(graph.ids(&ctx, forest.num_edges), expected, "{what}");
        }
    }
}

#[test]
fn device_forests_equal_host_forests_with_isolated_vertices_and_self_loops() {
    // Many isolated vertices (the host path renumbers them away; the device path
    // keeps them) and self-loops.
    let n = 100_000;
    let (mut u, mut v) = random_graph(300, 5000, 9);
    for e in (0..u.len()).step_by(7) {
        v[e] = u[e];
    }
    u.iter_mut().for_each(|x| *x *= 300);
    v.iter_mut().for_each(|x| *x *= 300);
    let w: Vec<f32> = (0..u.len()).map(|e| ((e * 7919) % 211) as f32).collect();
    for ctx in gpu_tiers() {
        let host = ctx
            .msf(
                &Graph::EdgeList {
                    num_vertices: n,
                    u: &u,
                    v: &v,
                    weights: Some(Weights::F32(&w)),
                },
                &MsfOptions::default(),
            )
            .unwrap();
        let graph = OnDevice::new(&ctx, n, &u, &v, Some(&w));
        let forest = graph.solve(&ctx, &MsfOptions::default()).unwrap();
        assert_eq!(graph.ids(&ctx, forest.num_edges), host.edges);
        assert_eq!(forest.num_components, host.num_components);
        assert_eq!(forest.total_weight, Some(host.total_weight));
    }
}

/// The device path's error for `u`, `v`, `w` is the host path's, word for word.
fn same_error<W: Element>(
    ctx: &Context,
    n: usize,
    u: &[u32],
    v: &[u32],
    w: &[W],
    wrap: fn(&[W]) -> Weights<'_>,
) {
    let host = ctx
        .msf(
            &Graph::EdgeList {
                num_vertices: n,
                u,
                v,
                weights: Some(wrap(w)),
            },
            &MsfOptions::default(),
        )
        .unwrap_err();
    let device = OnDevice::new(ctx, n, u, v, Some(w))
        .solve(ctx, &MsfOptions::default())
        .unwrap_err();
    assert_eq!(device.status(), host.status(), "{device} / {host}");
    assert_eq!(device.message(), host.message());
}

#[test]
fn invalid_graphs_give_the_host_paths_errors() {
    for ctx in gpu_tiers() {
        let w = [1u32, 2, 3, 4];
        // The first bad u wins over an earlier bad v, as on the host.
        same_error(&ctx, 4, &[0, 1, 9, 7], &[5, 2, 0, 1], &w, |w| {
            Weights::U32(w)
        });
        same_error(&ctx, 4, &[0, 1, 2, 3], &[1, 2, 4, 8], &w, |w| {
            Weights::U32(w)
        });
        let nan = [1.0f32, 2.0, f32::NAN, f32::NAN];
        same_error(&ctx, 4, &[0, 1, 2, 3], &[1, 2, 3, 0], &nan, |w| {
            Weights::F32(w)
        });
        let nan = [f64::NAN, 2.0, 1.0, 0.5];
        same_error(&ctx, 4, &[0, 1, 2, 3], &[1, 2, 3, 0], &nan, |w| {
            Weights::F64(w)
        });
        // A range error comes before a NaN, as on the host.
        same_error(&ctx, 4, &[0, 1, 2, 3], &[1, 2, 4, 0], &nan, |w| {
            Weights::F64(w)
        });
        same_error(&ctx, 0, &[0], &[0], &[1i64], |w| Weights::I64(w));
    }
}

#[test]
fn bad_calls_are_refused_with_a_reason() {
    let cpu = Context::new(&Options {
        tier: Tier::Cpu,
        ..Options::default()
    })
    .unwrap();
    let graph = DeviceGraph {
        num_vertices: 2,
        num_edges: 1,
        u: 0x1000,
        v: 0x2000,
        weights: None,
    };
    let output = DeviceOutput {
        edge_ids: 0x3000,
        queue: 0,
        total_weight: false,
    };
    // SAFETY: refused before any address is used (the context has no GPU tier).
    let e = unsafe { cpu.msf_on_device(&graph, &MsfOptions::default(), &output) }.unwrap_err();
    assert_eq!(e.status(), Status::BackendUnavailable, "{e}");
    assert!(
        e.message().contains("device memory needs a GPU tier"),
        "{e}"
    );
    assert!(cpu.native_handles().is_none());

    for ctx in gpu_tiers() {
        let (tier, handles) = ctx.native_handles().expect("a GPU tier");
        assert_eq!(tier, ctx.tier());
        assert!(!handles.context.is_null() && !handles.queue.is_null());
        let (u, v) = random_graph(10, 30, 3);
        let small = OnDevice::<u32>::new(&ctx, 10, &u, &v, None);
        let refuse = |graph: DeviceGraph, options: MsfOptions, ids: &Buffer<u64>| {
            let output = DeviceOutput {
                edge_ids: ids.device_address().unwrap(),
                queue: 0,
                total_weight: false,
            };
            // SAFETY: addresses of live buffers of ctx's tier; sizes are what the
            // checks below are about, and the driver is asked before any kernel runs.
            unsafe { ctx.msf_on_device(&graph, &options, &output) }.unwrap_err()
        };
        let labels = MsfOptions {
            labels: true,
            ..MsfOptions::default()
        };
        let e = refuse(small.graph(), labels, &small.ids);
        assert_eq!(e.status(), Status::InvalidArgument, "{e}");
        assert!(e.message().contains("labels"), "{e}");
        let kruskal = MsfOptions {
            algorithm: Algorithm::Kruskal,
            ..MsfOptions::default()
        };
        let e = refuse(small.graph(), kruskal, &small.ids);
        assert!(e.message().contains("kruskal"), "{e}");
        // Room for fewer ids than a forest of 10 vertices may have.
        let short = ctx.upload(&[0u64; 8]).unwrap();
        let e = refuse(small.graph(), MsfOptions::default(), &short);
        assert_eq!(e.status(), Status::InvalidArgument, "{e}");
        assert!(e.message().contains("the forest's edge ids"), "{e}");
        // More edges than the arrays hold.
        let mut long = small.graph();
        long.num_edges = 31;
        let e = refuse(long, MsfOptions::default(), &small.ids);
        assert!(e.message().starts_with("u:"), "{e}");
        // An empty graph reads no array: null addresses are fine, as for host arrays.
        let empty = DeviceGraph {
            num_vertices: 5,
            num_edges: 0,
            u: 0,
            v: 0,
            weights: Some((0, DType::F32)),
        };
        let output = DeviceOutput {
            edge_ids: 0,
            queue: 0,
            total_weight: true,
        };
        // SAFETY: no address is read for a graph without edges.
        let forest = unsafe { ctx.msf_on_device(&empty, &MsfOptions::default(), &output) }.unwrap();
        assert_eq!((forest.num_edges, forest.num_components), (0, 5));
        assert_eq!(forest.total_weight, Some(gpumst::TotalWeight::Float(0.0)));
        let mut null = small.graph();
        null.v = 0;
        let e = refuse(null, MsfOptions::default(), &small.ids);
        assert!(e.message().contains("v is a null device address"), "{e}");
    }
}

#[test]
fn primitives_run_on_wrapped_device_memory() {
    for ctx in gpu_tiers() {
        let data: Vec<i64> = (0..100_000).map(|i| (i * 7919 % 1000) - 500).collect();
        let owned = ctx.upload(&data).unwrap();
        let address = owned.device_address().unwrap();
        // SAFETY: `owned` is a live buffer of ctx's tier of data.len() i64s, and
        // outlives the wrapper.
        let mut wrapped = unsafe { ctx.wrap_device::<i64>(address, data.len()) }.unwrap();
        assert_eq!(wrapped.tier(), ctx.tier());
        assert_eq!(
            ctx.argmin_buffer(&wrapped).unwrap(),
            ctx.argmin(&data).unwrap()
        );
        assert_eq!(
            ctx.argmax_buffer(&wrapped).unwrap(),
            ctx.argmax(&data).unwrap()
        );
        // Per segment (an empty one), every buffer on the device, against the host's.
        let arg_offsets = [0u64, 700, 700, 64_000, data.len() as u64];
        let segments = arg_offsets.len() - 1;
        let device_arg_offsets = ctx.upload(&arg_offsets).unwrap();
        let mut values = ctx.upload(&vec![0i64; segments]).unwrap();
        let mut indices = ctx.upload(&vec![0u64; segments]).unwrap();
        for maximum in [false, true] {
            let (mut want_values, mut want_indices) = (vec![0i64; segments], vec![0u64; segments]);
            if maximum {
                ctx.segmented_argmax_buffer(
                    &wrapped,
                    &device_arg_offsets,
                    &mut values,
                    &mut indices,
                )
                .unwrap();
                ctx.segmented_argmax(&data, &arg_offsets, &mut want_values, &mut want_indices)
                    .unwrap();
            } else {
                ctx.segmented_argmin_buffer(
                    &wrapped,
                    &device_arg_offsets,
                    &mut values,
                    &mut indices,
                )
                .unwrap();
                ctx.segmented_argmin(&data, &arg_offsets, &mut want_values, &mut want_indices)
                    .unwrap();
            }
            let (mut got_values, mut got_indices) = (vec![0i64; segments], vec![0u64; segments]);
            ctx.download(&values, &mut got_values).unwrap();
            ctx.download(&indices, &mut got_indices).unwrap();
            assert_eq!(got_values, want_values, "maximum {maximum}");
            assert_eq!(got_indices, want_indices, "maximum {maximum}");
        }
        ctx.scan_buffer(&mut wrapped, ScanOp::Sum, ScanKind::Inclusive)
            .unwrap();
        drop(wrapped);
        // The scan wrote the caller's memory, which gpumst did not free.
        let mut scanned = vec![0i64; data.len()];
        ctx.download(&owned, &mut scanned).unwrap();
        let mut expected = vec![0i64; data.len()];
        ctx.scan(&data, &mut expected, ScanOp::Sum, ScanKind::Inclusive)
            .unwrap();
        assert_eq!(scanned, expected);
        assert_eq!(DType::I64, i64::DTYPE);

        // Segmented, offsets on the device too (an empty segment; then a bad one).
        let offsets = [0u64, 10, 10, 5000, 99_999, data.len() as u64];
        let device_offsets = ctx.upload(&offsets).unwrap();
        let mut segmented = ctx.upload(&data).unwrap();
        ctx.segmented_scan_buffer(
            &mut segmented,
            &device_offsets,
            ScanOp::Min,
            ScanKind::Exclusive,
        )
        .unwrap();
        let mut got = vec![0i64; data.len()];
        ctx.download(&segmented, &mut got).unwrap();
        ctx.segmented_scan_offsets(
            &data,
            &mut expected,
            &offsets,
            ScanOp::Min,
            ScanKind::Exclusive,
        )
        .unwrap();
        assert_eq!(got, expected);
        let bad = ctx.upload(&[0u64, 20, 10, data.len() as u64]).unwrap();
        let on_device = ctx
            .segmented_scan_buffer(&mut segmented, &bad, ScanOp::Sum, ScanKind::Inclusive)
            .unwrap_err();
        let on_host = ctx
            .segmented_scan_offsets_in_place(
                &mut got,
                &[0, 20, 10, data.len() as u64],
                ScanOp::Sum,
                ScanKind::Inclusive,
            )
            .unwrap_err();
        assert_eq!(on_device.message(), on_host.message());
    }
}

/// The algorithms that take device graphs (Kruskal is the host's reference).
fn device_algorithms() -> impl Iterator<Item = Algorithm> {
    Algorithm::ALL
        .into_iter()
        .filter(|&a| a != Algorithm::Kruskal)
}

/// A graph the device's checks reject still runs to the end (the algorithms read its
/// ends clamped to the vertex range, and the checks' findings are read only with the
/// forest's count): every algorithm gives the host path's error, leaves the caller's
/// ids as they were, and the context solves the next graph.
#[test]
fn rejected_graphs_leave_the_ids_and_the_context_as_they_were() {
    // Dense enough for the light phases (m >= 4 * 4096 and 2.5 n); m not a multiple
    // of 4, so the kernels' last vector is partial.
    let (n, m) = (3000, 40_001);
    let (u, v) = random_graph(n, m, 21);
    let w: Vec<f32> = (0..m).map(|e| ((e * 7919) % 1009) as f32).collect();
    let far = n as u32 + 5;
    /// What a case does to the graph: ends set at positions of u and v, NaN weights.
    type Damage<'a> = (&'a [(usize, u32)], &'a [(usize, u32)], &'a [usize]);
    let cases: [(&str, Damage); 5] = [
        ("u far out of range", (&[(m / 2, u32::MAX)], &[], &[])),
        (
            "the last v just out of range",
            (&[], &[(m - 1, n as u32)], &[]),
        ),
        (
            "an early v and a later u",
            (&[(900, far)], &[(30, far)], &[]),
        ),
        ("NaN weights", (&[], &[], &[m - 1, 7])),
        ("a bad end after a NaN", (&[(m - 2, far)], &[], &[5])),
    ];
    for ctx in gpu_tiers() {
        for (what, (bad_u, bad_v, nans)) in cases {
            let (mut u, mut v, mut w) = (u.clone(), v.clone(), w.clone());
            bad_u.iter().for_each(|&(e, x)| u[e] = x);
            bad_v.iter().for_each(|&(e, x)| v[e] = x);
            nans.iter().for_each(|&e| w[e] = f32::NAN);
            let graph = Graph::EdgeList {
                num_vertices: n,
                u: &u,
                v: &v,
                weights: Some(Weights::F32(&w)),
            };
            let on_device = OnDevice::new(&ctx, n, &u, &v, Some(&w));
            for algorithm in device_algorithms() {
                let options = MsfOptions {
                    algorithm,
                    ..MsfOptions::default()
                };
                let at = format!("{what}, {algorithm} on {}", ctx.tier());
                let host = ctx.msf(&graph, &options).unwrap_err();
                let device = on_device.solve(&ctx, &options).unwrap_err();
                assert_eq!(device.status(), host.status(), "{at}: {device} / {host}");
                assert_eq!(device.message(), host.message(), "{at}");
                let ids = on_device.ids(&ctx, on_device.ids.len());
                assert!(ids.iter().all(|&id| id == u64::MAX), "{at}: ids written");
            }
        }
        let (expected, components) = reference(n, &u, &v, Some(&w), false);
        let graph = OnDevice::new(&ctx, n, &u, &v, Some(&w));
        for algorithm in device_algorithms() {
            let options = MsfOptions {
                algorithm,
                ..MsfOptions::default()
            };
            let forest = graph.solve(&ctx, &options).unwrap();
            assert_eq!(graph.ids(&ctx, forest.num_edges), expected, "{algorithm}");
            assert_eq!(forest.num_components, components, "{algorithm}");
        }
    }
}

/// Caller arrays that do not start on 16 bytes (read one entry at a time where
/// aligned ones are read as vectors): the same forests and errors. CUDA only: an
/// OpenCL buffer's kernels always see its start, which the platform aligns.
#[test]
fn arrays_off_16_bytes_give_the_same_forests_and_errors() {
    let (n, m) = (3000, 40_001);
    let (mut u, mut v) = random_graph(n, m, 22);
    let w: Vec<i32> = (0..m).map(|e| ((e * 7919) % 2001) as i32 - 1000).collect();
    for ctx in gpu_tiers() {
        if ctx.tier() != Tier::Cuda {
            eprintln!(
                "arrays off 16 bytes: skipped on {}: a kernel sees an OpenCL buffer's start, which the platform aligns",
                ctx.tier()
            );
            continue;
        }
        // Each array one entry later than its buffer's start (4 bytes in).
        let shifted = |u: &[u32], v: &[u32], w: &[i32]| {
            let ahead = |a: &[u32]| [&[0u32][..], a].concat();
            OnDevice::new(
                &ctx,
                n,
                &ahead(u),
                &ahead(v),
                Some(&[&[0i32][..], w].concat()),
            )
        };
        let solve = |on: &OnDevice<i32>, algorithm| {
            let mut graph = on.graph();
            graph.num_edges = m;
            graph.u += 4;
            graph.v += 4;
            graph.weights = graph.weights.map(|(w, dtype)| (w + 4, dtype));
            let output = DeviceOutput {
                edge_ids: on.ids.device_address().unwrap(),
                queue: 0,
                total_weight: true,
            };
            let options = MsfOptions {
                algorithm,
                ..MsfOptions::default()
            };
            // SAFETY: addresses inside live buffers of ctx's tier, m entries after each.
            unsafe { ctx.msf_on_device(&graph, &options, &output) }
        };
        let (expected, components) = reference(n, &u, &v, Some(&w), false);
        let on = shifted(&u, &v, &w);
        for algorithm in device_algorithms() {
            let forest = solve(&on, algorithm).unwrap();
            assert_eq!(on.ids(&ctx, forest.num_edges), expected, "{algorithm}");
            assert_eq!(forest.num_components, components, "{algorithm}");
            assert_eq!(
                forest.total_weight,
                Some(reference_total(&expected, Some(&w[..]))),
                "{algorithm}"
            );
        }
        u[m - 1] = n as u32;
        v[3] = u32::MAX;
        let host = ctx
            .msf(
                &Graph::EdgeList {
                    num_vertices: n,
                    u: &u,
                    v: &v,
                    weights: Some(Weights::I32(&w)),
                },
                &MsfOptions::default(),
            )
            .unwrap_err();
        let device = solve(&shifted(&u, &v, &w), Algorithm::Auto).unwrap_err();
        assert_eq!(device.message(), host.message());
    }
}

// ---- symmetric CSR graphs in device memory -------------------------------------------

/// A symmetric CSR of `u`, `v`, `w` with every self-loop kept as an entry (the host
/// path skips them), rows in edge order or, with `sorted`, by target; `flip` gives the
/// second entry of each edge `flip(w)` (a float zero of the other sign).
fn csr_of<W: Copy>(
    n: usize,
    u: &[u32],
    v: &[u32],
    w: &[W],
    sorted: bool,
    flip: fn(W) -> W,
) -> (Vec<u64>, Vec<u32>, Vec<W>) {
    let mut entries: Vec<(u32, u32, usize, bool)> = Vec::new();
    for e in 0..u.len() {
        entries.push((u[e], v[e], e, false));
        if u[e] != v[e] {
            entries.push((v[e], u[e], e, true));
        }
    }
    match sorted {
        true => entries.sort_by_key(|&(a, b, e, _)| (a, b, e)),
        false => entries.sort_by_key(|&(a, _, e, _)| (a, e)),
    }
    let mut offsets = vec![0u64; n + 1];
    for &(a, ..) in &entries {
        offsets[a as usize + 1] += 1;
    }
    for x in 0..n {
        offsets[x + 1] += offsets[x];
    }
    let targets = entries.iter().map(|e| e.1).collect();
    let weights = entries
        .iter()
        .map(|&(_, _, e, second)| if second { flip(w[e]) } else { w[e] })
        .collect();
    (offsets, targets, weights)
}

/// The device's CSR forest against the host path's on the same arrays (every
/// algorithm, minimum and maximum), weighted and unweighted.
fn check_csr<W: Element>(
    name: &str,
    offsets: &[u64],
    targets: &[u32],
    w: &[W],
    wrap: fn(&[W]) -> Weights<'_>,
) {
    for ctx in gpu_tiers() {
        for weighted in [true, false] {
            let weights = weighted.then_some(w);
            let graph = CsrOnDevice::new(&ctx, offsets, targets, weights);
            let host_graph = Graph::Csr {
                offsets,
                targets,
                weights: weights.map(wrap),
            };
            for maximum in [false, true] {
                let host = ctx
                    .msf(
                        &host_graph,
                        &MsfOptions {
                            maximum,
                            ..MsfOptions::default()
                        },
                    )
                    .unwrap();
                for algorithm in device_algorithms() {
                    let options = MsfOptions {
                        algorithm,
                        maximum,
                        ..MsfOptions::default()
                    };
                    let what = format!(
                        "{name} weighted={weighted} {algorithm} maximum={maximum} on {}",
                        ctx.tier()
                    );
                    let forest = graph
                        .solve(&ctx, &options)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(graph.ids(&ctx, forest.num_edges), host.edges, "{what}");
                    assert_eq!(forest.num_components, host.num_components, "{what}");
                    assert_eq!(forest.total_weight, Some(host.total_weight), "{what}");
                }
            }
        }
    }
}

#[test]
fn csr_forests_in_device_memory_match_the_host_and_the_reference() {
    // The last graph is dense enough for the light phases (m >= 4n and 4 * 4096).
    for (n, m, seed) in [(2, 1, 1), (17, 40, 2), (500, 2000, 3), (3000, 40_000, 4)] {
        let (mut u, v) = random_graph(n, m, seed);
        for e in (0..m).step_by(13) {
            u[e] = v[e]; // self-loops, and with several edges per pair, multi-edges
        }
        let mut s = Stream(seed * 7 + 3);
        let raw: Vec<u64> = (0..m).map(|_| s.next()).collect();
        for sorted in [false, true] {
            let name = format!("random n={n} m={m} sorted rows={sorted}");
            let w: Vec<u32> = raw.iter().map(|&x| (x % 50) as u32).collect();
            let (offsets, targets, cw) = csr_of(n, &u, &v, &w, sorted, |x| x);
            check_csr(&name, &offsets, &targets, &cw, |w| Weights::U32(w));
            let w: Vec<i64> = raw.iter().map(|&x| x as i64).collect();
            let (offsets, targets, cw) = csr_of(n, &u, &v, &w, sorted, |x| x);
            check_csr(&name, &offsets, &targets, &cw, |w| Weights::I64(w));
            // -0 one way and +0 the other are one weight, as on the host.
            let w: Vec<f32> = raw
                .iter()
                .map(|&x| match x % 9 {
                    0 => 0.0,
                    1 => f32::INFINITY,
                    _ => (x % 1000) as f32 / 8.0 - 60.0,
                })
                .collect();
            let (offsets, targets, cw) =
                csr_of(n, &u, &v, &w, sorted, |x| if x == 0.0 { -x } else { x });
            let zeros = cw
                .iter()
                .filter(|x| **x == 0.0 && x.is_sign_negative())
                .count();
            assert!(n < 100 || zeros > 0, "{name}: the test has negative zeros");
            check_csr(&name, &offsets, &targets, &cw, |w| Weights::F32(w));
            let w: Vec<f64> = raw.iter().map(|&x| (x >> 11) as f64 * 1e-9).collect();
            let (offsets, targets, cw) = csr_of(n, &u, &v, &w, sorted, |x| x);
            check_csr(&name, &offsets, &targets, &cw, |w| Weights::F64(w));
        }
    }
    // Against the reference too (the test's own CSR: ids are its u < v positions).
    let (u, v) = random_graph(2000, 9000, 5);
    let w: Vec<i32> = (0..u.len())
        .map(|e| (e as i32 * 7919) % 401 - 200)
        .collect();
    let csr = Csr::new(2000, &u, &v, Some(&w));
    let (expected, components, total) = csr.reference(false);
    for ctx in gpu_tiers() {
        let weights = csr.weights.as_deref();
        let graph = CsrOnDevice::new(&ctx, &csr.offsets, &csr.targets, weights);
        let forest = graph.solve(&ctx, &MsfOptions::default()).unwrap();
        assert_eq!(graph.ids(&ctx, forest.num_edges), expected);
        assert_eq!(forest.num_components, components);
        assert_eq!(forest.total_weight, Some(total));
    }
}

/// The device's error for a CSR graph is the host path's, word for word.
fn same_csr_error<W: Element>(
    ctx: &Context,
    offsets: &[u64],
    targets: &[u32],
    w: &[W],
    wrap: fn(&[W]) -> Weights<'_>,
) {
    let host = ctx
        .msf(
            &Graph::Csr {
                offsets,
                targets,
                weights: Some(wrap(w)),
            },
            &MsfOptions::default(),
        )
        .unwrap_err();
    let graph = CsrOnDevice::new(ctx, offsets, targets, Some(w));
    let before = graph.ids(ctx, graph.ids.len());
    let device = graph.solve(ctx, &MsfOptions::default()).unwrap_err();
    assert_eq!(device.status(), host.status(), "{device} / {host}");
    assert_eq!(device.message(), host.message());
    assert_eq!(
        graph.ids(ctx, graph.ids.len()),
        before,
        "{host}: ids untouched"
    );
}

#[test]
fn invalid_csr_graphs_in_device_memory_give_the_host_paths_errors() {
    // 0-1 (weight 5), 1-2 (weight 7), a self-loop at 2.
    let offsets = [0u64, 1, 3, 5];
    let targets = [1u32, 0, 2, 1, 2];
    let w = [5u32, 5, 7, 7, 9];
    for ctx in gpu_tiers() {
        let wrap: fn(&[u32]) -> Weights<'_> = |w| Weights::U32(w);
        let valid = CsrOnDevice::new(&ctx, &offsets, &targets, Some(&w[..]));
        let forest = valid.solve(&ctx, &MsfOptions::default()).unwrap();
        assert_eq!(valid.ids(&ctx, forest.num_edges), [0, 2]);
        same_csr_error(&ctx, &[1, 1, 3, 5], &targets, &w, wrap);
        same_csr_error(&ctx, &[0, 3, 1, 5], &targets, &w, wrap);
        same_csr_error(&ctx, &[0, 1, 3, 4], &targets, &w, wrap);
        same_csr_error(&ctx, &[0, 1, 3, 6], &targets, &w, wrap);
        same_csr_error(&ctx, &offsets, &[1, 0, 3, 1, 2], &w, wrap);
        same_csr_error(&ctx, &offsets, &[1, 0, 2, 1, 7], &w, wrap);
        // A reverse entry missing, and one of another weight.
        same_csr_error(&ctx, &offsets, &[1, 0, 2, 0, 2], &w, wrap);
        same_csr_error(&ctx, &offsets, &targets, &[5, 5, 7, 8, 9], wrap);
        same_csr_error(&ctx, &offsets, &targets, &[5, 6, 7, 7, 9], wrap);
        // Rows sorted by target, with a multi-edge whose weights differ by direction.
        same_csr_error(&ctx, &[0, 2, 4], &[1, 1, 0, 0], &[3, 4, 4, 4], wrap);
        // Row 1 not sorted by target (the hashed check): valid, then reweighted, then
        // a multi-edge 0-2 whose weights differ by direction.
        let unsorted = CsrOnDevice::new(
            &ctx,
            &offsets,
            &[1, 2, 0, 1, 2],
            Some(&[5u32, 7, 5, 7, 9][..]),
        );
        let forest = unsorted.solve(&ctx, &MsfOptions::default()).unwrap();
        assert_eq!(unsorted.ids(&ctx, forest.num_edges), [0, 1]);
        same_csr_error(&ctx, &offsets, &[1, 2, 0, 1, 2], &[5, 8, 5, 7, 9], wrap);
        same_csr_error(
            &ctx,
            &[0, 3, 4, 6],
            &[2, 1, 2, 0, 0, 0],
            &[3, 1, 4, 1, 4, 4],
            wrap,
        );
        // A NaN weight (in both directions: symmetric, then refused as on the host).
        let nan = [1.0f64, 1.0, f64::NAN, f64::NAN, 2.0];
        same_csr_error(&ctx, &offsets, &targets, &nan, |w| Weights::F64(w));
        let nan = [1.0f32, 1.0, f32::NAN, 3.0, 2.0];
        same_csr_error(&ctx, &offsets, &targets, &nan, |w| Weights::F32(w));
        // On a self-loop's entry alone (no edge, but refused as on the host).
        let nan = [1.0f32, 1.0, 2.0, 2.0, f32::NAN];
        same_csr_error(&ctx, &offsets, &targets, &nan, |w| Weights::F32(w));
        let nan = [1.0f64, 1.0, 2.0, 2.0, -f64::NAN];
        same_csr_error(&ctx, &offsets, &targets, &nan, |w| Weights::F64(w));
        // No entries: every vertex its own component.
        let empty = CsrOnDevice::new(&ctx, &[0, 0, 0, 0], &[], Some(&[0u32; 0][..]));
        let forest = empty.solve(&ctx, &MsfOptions::default()).unwrap();
        assert_eq!((forest.num_edges, forest.num_components), (0, 3));
    }
}

/// Component labels of a device forest, on the device, against the host's labels:
/// edge lists and CSRs, many components; an id that is no edge is refused.
#[test]
fn forest_labels_in_device_memory_match_the_hosts() {
    use gpumst::msf::DeviceInput;
    let n = 3000;
    let (u, v) = random_graph(n, 2500, 21);
    let w: Vec<u32> = (0..u.len()).map(|e| (e as u32 * 7919) % 97).collect();
    let (offsets, targets, cw) = csr_of(n, &u, &v, &w, false, |x| x);
    for ctx in gpu_tiers() {
        let labelled = MsfOptions {
            labels: true,
            ..MsfOptions::default()
        };
        let host = ctx
            .msf(
                &Graph::EdgeList {
                    num_vertices: n,
                    u: &u,
                    v: &v,
                    weights: Some(Weights::U32(&w)),
                },
                &labelled,
            )
            .unwrap();
        let labels = ctx.upload(&vec![u32::MAX; n]).unwrap();
        let address = labels.device_address().unwrap();
        let read = |ctx: &Context| {
            let mut got = vec![0u32; n];
            ctx.download(&labels, &mut got).unwrap();
            got
        };
        let edge_list = OnDevice::new(&ctx, n, &u, &v, Some(&w));
        let forest = edge_list.solve(&ctx, &MsfOptions::default()).unwrap();
        let graph = edge_list.graph();
        let ids = edge_list.ids.device_address().unwrap();
        // SAFETY (each call): live buffers of ctx's tier of the lengths given.
        unsafe {
            ctx.forest_labels_on_device(
                DeviceInput::EdgeList(&graph),
                ids,
                forest.num_edges,
                address,
                0,
            )
        }
        .unwrap();
        assert_eq!(
            read(&ctx),
            host.labels.clone().unwrap(),
            "edge list on {}",
            ctx.tier()
        );
        let csr = CsrOnDevice::new(&ctx, &offsets, &targets, Some(&cw[..]));
        let forest = csr.solve(&ctx, &MsfOptions::default()).unwrap();
        let graph = csr.graph();
        let ids = csr.ids.device_address().unwrap();
        unsafe {
            ctx.forest_labels_on_device(DeviceInput::Csr(&graph), ids, forest.num_edges, address, 0)
        }
        .unwrap();
        assert_eq!(
            read(&ctx),
            host.labels.clone().unwrap(),
            "CSR on {}",
            ctx.tier()
        );
        // An id past the edges.
        let bad = ctx.upload(&[0u64, u.len() as u64]).unwrap();
        let graph = edge_list.graph();
        let e = unsafe {
            ctx.forest_labels_on_device(
                DeviceInput::EdgeList(&graph),
                bad.device_address().unwrap(),
                2,
                address,
                0,
            )
        }
        .unwrap_err();
        assert_eq!(e.status(), Status::InvalidArgument, "{e}");
        assert!(e.message().contains("edge_ids[1]"), "{e}");
    }
}
