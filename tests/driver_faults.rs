//! GPU driver failures: with the `fault-injection` feature, the N-th driver call of a
//! GPU tier fails with a chosen error, for every N over an MSF (each algorithm), a
//! scan and a segmented argmin, on each GPU tier that opens. The call must return
//! `DeviceError` or `OutOfMemory` naming the driver's error, hold no more device
//! memory than before, and the context must then either give the undisturbed answer
//! (recoverable errors) or refuse every later call, saying it must be recreated
//! (errors that lose the context).
//!
//! Run with: cargo test --release --features fault-injection --test driver_faults
#![cfg(feature = "fault-injection")]

mod common;

use std::sync::Mutex;

use gpumst::msf::{DeviceGraph, DeviceOutput};
use gpumst::testing::{self, DriverFault};
use gpumst::{
    Algorithm, Context, DType, Devices, Error, Graph, MsfOptions, Options, ScanKind, ScanOp,
    Status, Tier, Weights,
};

static KNOB: Mutex<()> = Mutex::new(());

const FAULTS: [DriverFault; 3] = [
    DriverFault::OutOfMemory,
    DriverFault::LaunchFailed,
    DriverFault::ContextLost,
];

/// The driver's name for the injected error on `tier`, as the message must show it.
fn driver_name(tier: Tier, fault: DriverFault) -> &'static str {
    match (tier, fault) {
        (Tier::Cuda, DriverFault::OutOfMemory) => "CUDA_ERROR_OUT_OF_MEMORY",
        (Tier::Cuda, DriverFault::LaunchFailed) => "CUDA_ERROR_LAUNCH_FAILED",
        (Tier::Cuda, DriverFault::ContextLost) => "CUDA_ERROR_ILLEGAL_ADDRESS",
        (_, DriverFault::OutOfMemory) => "CL_MEM_OBJECT_ALLOCATION_FAILURE",
        (_, DriverFault::LaunchFailed) => "CL_OUT_OF_RESOURCES",
        (_, DriverFault::ContextLost) => "CL_INVALID_COMMAND_QUEUE",
    }
}

/// Whether the real error behind `fault` leaves the tier's context unusable.
fn loses_context(tier: Tier, fault: DriverFault) -> bool {
    match fault {
        DriverFault::OutOfMemory => false,
        DriverFault::LaunchFailed => tier == Tier::Cuda,
        DriverFault::ContextLost => true,
    }
}

/// A context of `tier` that may use `device_memory_limit` bytes (0: the device's).
fn open(tier: Tier, device_memory_limit: u64) -> Context {
    open_with(&Options {
        tier,
        device_memory_limit,
        ..Options::default()
    })
}

fn open_with(options: &Options) -> Context {
    Context::new(options)
        .unwrap_or_else(|e| panic!("{} opened before and not now: {e}", options.tier))
}

/// Walks every driver call of `call` with `fault`; returns how many there were.
fn walk<R: PartialEq + std::fmt::Debug>(
    tier: Tier,
    fault: DriverFault,
    what: &str,
    call: impl Fn(&Context) -> Result<R, Error>,
) -> u64 {
    walk_capped(tier, 0, fault, what, call)
}

/// [`walk`] on contexts capped at `device_memory_limit` bytes.
fn walk_capped<R: PartialEq + std::fmt::Debug>(
    tier: Tier,
    device_memory_limit: u64,
    fault: DriverFault,
    what: &str,
    call: impl Fn(&Context) -> Result<R, Error>,
) -> u64 {
    let options = Options {
        tier,
        device_memory_limit,
        ..Options::default()
    };
    walk_with(&options, fault, what, call)
}

/// [`walk`] on contexts opened with `options`.
fn walk_with<R: PartialEq + std::fmt::Debug>(
    options: &Options,
    fault: DriverFault,
    what: &str,
    call: impl Fn(&Context) -> Result<R, Error>,
) -> u64 {
    let tier = options.tier;
    let _guard = KNOB.lock().unwrap_or_else(|e| e.into_inner());
    let mut ctx = open_with(options);
    testing::fail_driver_call_after(None, fault);
    let expected = call(&ctx).unwrap_or_else(|e| panic!("{what}: undisturbed call: {e}"));
    for n in 0.. {
        let held_before = testing::device_bytes_held(&ctx);
        testing::fail_driver_call_after(Some(n), fault);
        let outcome = call(&ctx);
        let failed = testing::driver_failures();
        testing::fail_driver_call_after(None, fault);
        if failed == 0 {
            let got = outcome.unwrap_or_else(|e| panic!("{what}: nothing injected, yet: {e}"));
            assert_eq!(got, expected, "{what}");
            return n;
        }
        let e = match outcome {
            Ok(_) => panic!("{what}: driver call {n} failed but the call succeeded"),
            Err(e) => e,
        };
        assert!(
            matches!(e.status(), Status::DeviceError | Status::OutOfMemory),
            "{what}, call {n}: {e}"
        );
        let name = driver_name(tier, fault);
        assert!(
            e.message().contains(name),
            "{what}, call {n}: {e} (wanted {name})"
        );
        assert!(e.message().contains("(injected)"), "{what}, call {n}: {e}");
        let held_after = testing::device_bytes_held(&ctx);
        assert!(
            held_after <= held_before,
            "{what}, call {n}: {held_after} device bytes held after the failure, {held_before} before"
        );
        if loses_context(tier, fault) {
            let later = call(&ctx).expect_err("a lost context must refuse later calls");
            assert_eq!(later.status(), Status::DeviceError, "{what}: {later}");
            assert!(
                later.message().contains("create a new one") && later.message().contains(name),
                "{what}: {later}"
            );
            ctx = open_with(options);
        }
        let again = call(&ctx).unwrap_or_else(|e| panic!("{what}: after failure {n}: {e}"));
        assert_eq!(again, expected, "{what}: the call after failure {n}");
    }
    unreachable!()
}

fn gpu_tiers() -> Vec<Tier> {
    // Opening a context calls the driver: not while another test injects failures.
    let _guard = KNOB.lock().unwrap_or_else(|e| e.into_inner());
    // GPUMST_TEST_TIERS narrows the tiers, e.g. to CUDA alone under compute-sanitizer.
    let tiers: Vec<Tier> = [Tier::OpenCl, Tier::Cuda]
        .into_iter()
        .filter(|&tier| common::tier_selected(tier))
        .filter(|&tier| {
            match Context::new(&Options {
                tier,
                ..Options::default()
            }) {
                Ok(_) => true,
                Err(e) => {
                    eprintln!("driver_faults: {tier} tier skipped: {}", e.message());
                    false
                }
            }
        })
        .collect();
    if let Ok(required) = std::env::var("GPUMST_TEST_REQUIRE") {
        for name in required.split(',').filter(|s| !s.is_empty()) {
            assert!(
                tiers.iter().any(|t| t.name() == name.trim()),
                "GPUMST_TEST_REQUIRE names {name}, which did not open"
            );
        }
    }
    if tiers.is_empty() {
        eprintln!("driver_faults: SKIPPED: no GPU tier on this machine (nothing was tested)");
    }
    tiers
}

#[test]
fn msf_survives_every_failed_driver_call() {
    let (n, m) = (2000u32, 8000usize);
    let (u, v) = common::msf::random_graph(n as usize, m, 0x2545_F491_4F6C_DD1D);
    let mut s = common::msf::Stream(17);
    let w: Vec<u32> = (0..m).map(|_| s.below(1000)).collect();
    let graph = Graph::EdgeList {
        num_vertices: n as usize,
        u: &u,
        v: &v,
        weights: Some(Weights::U32(&w)),
    };
    for tier in gpu_tiers() {
        for fault in FAULTS {
            for algorithm in [
                Algorithm::Auto,
                Algorithm::Boruvka,
                Algorithm::Prim,
                Algorithm::Strut,
            ] {
                let options = MsfOptions {
                    algorithm,
                    ..MsfOptions::default()
                };
                let what = format!("{algorithm} on {tier} with {fault:?}");
                let calls = walk(tier, fault, &what, |ctx| ctx.msf(&graph, &options));
                assert!(calls > 0, "{what}: no driver call was counted");
                eprintln!("driver_faults: {what}: {calls} driver calls, each failed once");
            }
        }
    }
}

/// A graph over the cap, solved in partitions that carry the forest in device memory
/// from one to the next: a failure in any partition frees what was carried.
#[test]
fn partitions_survive_every_failed_driver_call() {
    let (n, m) = (300usize, 3000usize);
    let (u, v) = common::msf::random_graph(n, m, 0x9E37_79B9_7F4A_7C15);
    let mut s = common::msf::Stream(23);
    let w: Vec<f64> = (0..m).map(|_| s.below(100) as f64 * 0.5).collect();
    let graph = Graph::EdgeList {
        num_vertices: n,
        u: &u,
        v: &v,
        weights: Some(Weights::F64(&w)),
    };
    // Room for the vertices' arrays and about a third of the edges' working set.
    const LIMIT: u64 = 80_000;
    for tier in gpu_tiers() {
        // The knob is process-wide: these calls wait while another test injects.
        let guard = KNOB.lock().unwrap_or_else(|e| e.into_inner());
        let forest = open(tier, LIMIT)
            .msf(&graph, &MsfOptions::default())
            .expect("the capped call");
        let peak = forest
            .device_timings
            .expect("device timings")
            .peak_device_bytes;
        assert!(
            peak <= LIMIT,
            "{tier}: {peak} bytes held under a cap of {LIMIT}"
        );
        let uncapped = open(tier, 0).msf(&graph, &MsfOptions::default());
        assert_eq!(Ok(&forest), uncapped.as_ref(), "{tier}: the capped forest");
        drop(guard);
        for fault in FAULTS {
            let what = format!("partitions on {tier} with {fault:?}");
            let calls = walk_capped(tier, LIMIT, fault, &what, |ctx| {
                ctx.msf(&graph, &MsfOptions::default())
            });
            eprintln!("driver_faults: {what}: {calls} driver calls, each failed once");
        }
    }
}

/// A graph in device memory over the cap, solved in partitions copied from the
/// caller's arrays: a failure in any partition frees what gpumst held.
#[test]
fn device_partitions_survive_every_failed_driver_call() {
    let (n, m) = (300usize, 3000usize);
    let (u, v) = common::msf::random_graph(n, m, 0x2F0F_5A5A_1234_4321);
    let mut s = common::msf::Stream(29);
    let w: Vec<f64> = (0..m).map(|_| s.below(100) as f64 * 0.25).collect();
    // The caller's arrays (51 KB) and about a third of the edges' working set (one
    // call would need 178 KB: without partitions the capped call is refused).
    const LIMIT: u64 = 120_000;
    // The call, the forest's ids and its total weight (failures of the uploads and
    // the read-back count too).
    let call = |ctx: &Context| {
        let (du, dv, dw) = (ctx.upload(&u)?, ctx.upload(&v)?, ctx.upload(&w)?);
        let ids = ctx.upload(&vec![0u64; n - 1])?;
        let address = |b: Option<usize>| b.expect("a device buffer");
        let graph = DeviceGraph {
            num_vertices: n,
            num_edges: m,
            u: address(du.device_address()),
            v: address(dv.device_address()),
            weights: Some((address(dw.device_address()), DType::F64)),
        };
        let output = DeviceOutput {
            edge_ids: address(ids.device_address()),
            queue: 0,
            total_weight: true,
        };
        // SAFETY: every address is a live buffer of ctx's tier made above, of the
        // lengths the graph states.
        let forest = unsafe { ctx.msf_on_device(&graph, &MsfOptions::default(), &output)? };
        let mut host = vec![0u64; n - 1];
        ctx.download(&ids, &mut host)?;
        host.truncate(forest.num_edges);
        Ok((host, forest.total_weight))
    };
    let graph = Graph::EdgeList {
        num_vertices: n,
        u: &u,
        v: &v,
        weights: Some(Weights::F64(&w)),
    };
    for tier in gpu_tiers() {
        let guard = KNOB.lock().unwrap_or_else(|e| e.into_inner());
        let (ids, total) = call(&open(tier, LIMIT)).expect("the capped call");
        let uncapped = open(tier, 0)
            .msf(&graph, &MsfOptions::default())
            .expect("the uncapped call");
        assert_eq!(ids, uncapped.edges, "{tier}: the capped forest");
        assert_eq!(total, Some(uncapped.total_weight), "{tier}: its weight");
        drop(guard);
        for fault in FAULTS {
            let what = format!("device partitions on {tier} with {fault:?}");
            let calls = walk_capped(tier, LIMIT, fault, &what, call);
            eprintln!("driver_faults: {what}: {calls} driver calls, each failed once");
        }
    }
}

#[test]
fn primitives_survive_every_failed_driver_call() {
    let data: Vec<i32> = (0..100_000i32).map(|i| (i * 7919) % 1013 - 500).collect();
    let offsets: Vec<u64> = (0..=100u64).map(|s| s * 1000).collect();
    for tier in gpu_tiers() {
        for fault in FAULTS {
            let calls = walk(
                tier,
                fault,
                &format!("scan on {tier} with {fault:?}"),
                |ctx| {
                    let mut out = vec![0i32; data.len()];
                    ctx.scan(&data, &mut out, ScanOp::Sum, ScanKind::Inclusive)
                        .map(|()| out)
                },
            );
            eprintln!("driver_faults: scan on {tier} with {fault:?}: {calls} driver calls");
            let what = format!("segmented argmin on {tier} with {fault:?}");
            let calls = walk(tier, fault, &what, |ctx| {
                let mut values = vec![0i32; offsets.len() - 1];
                let mut indices = vec![0u64; offsets.len() - 1];
                ctx.segmented_argmin(&data, &offsets, &mut values, &mut indices)
                    .map(|()| (values, indices))
            });
            eprintln!("driver_faults: {what}: {calls} driver calls");
        }
    }
}

/// A graph split across two listings of one device (each a context of its own): a
/// failure in either device's range, in the forest's hand-over or in the merge frees
/// what was held, and no device's thread waits for a forest that never comes.
#[test]
fn split_forests_survive_every_failed_driver_call() {
    let (n, m) = (300usize, 3000usize);
    let (u, v) = common::msf::random_graph(n, m, 0x511D_5EED);
    let mut s = common::msf::Stream(31);
    let w: Vec<u32> = (0..m).map(|_| s.below(50)).collect();
    let graph = Graph::EdgeList {
        num_vertices: n,
        u: &u,
        v: &v,
        weights: Some(Weights::U32(&w)),
    };
    // Split from 1,000 edges a device (the default is far larger); no other test of
    // this file has graphs of that many edges on several devices.
    std::env::set_var("GPUMST_SPLIT_MIN_EDGES", "1000");
    for tier in gpu_tiers() {
        // Two listings of device 0: the failed call may be either's, from either
        // device's thread.
        let options = Options {
            tier,
            devices: Devices::List(vec![0, 0]),
            ..Options::default()
        };
        for fault in FAULTS {
            let what = format!("a split on {tier} with {fault:?}");
            let calls = walk_with(&options, fault, &what, |ctx| {
                ctx.msf(&graph, &MsfOptions::default())
            });
            eprintln!("driver_faults: {what}: {calls} driver calls, each failed once");
        }
    }
}

/// A graph whose upload takes several chunks of the CUDA tier's transfer buffers
/// (`cuda/chunks.rs`): a failure of the wait for a buffer, of a chunk's device copy or
/// of its event frees what the call held. CUDA only (the other tiers copy no such way;
/// the small graphs above go up in one piece).
#[test]
fn chunked_uploads_survive_every_failed_driver_call() {
    // 38 MB of edges: more than a transfer buffer (32 MiB), so chunks of a quarter.
    let (n, m) = (1usize << 20, 3usize << 20);
    let (u, v) = common::msf::random_graph(n, m, 0x7EA4_C0B1);
    let mut s = common::msf::Stream(37);
    let w: Vec<u32> = (0..m).map(|_| s.below(1 << 20)).collect();
    let graph = Graph::EdgeList {
        num_vertices: n,
        u: &u,
        v: &v,
        weights: Some(Weights::U32(&w)),
    };
    let tiers: Vec<Tier> = gpu_tiers()
        .into_iter()
        .filter(|&tier| tier == Tier::Cuda)
        .collect();
    if tiers.is_empty() {
        eprintln!("driver_faults: chunked uploads SKIPPED: the CUDA tier did not open here");
    }
    for tier in tiers {
        for fault in FAULTS {
            let what = format!("a chunked upload on {tier} with {fault:?}");
            let calls = walk(tier, fault, &what, |ctx| {
                ctx.msf(&graph, &MsfOptions::default())
            });
            eprintln!("driver_faults: {what}: {calls} driver calls, each failed once");
        }
    }
}
