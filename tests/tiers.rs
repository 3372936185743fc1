//! Tier selection: a machine without CUDA or OpenCL gets the CPU tier from `auto`, and
//! a clear error (never a silent fallback) from a forced GPU tier.
//!
//! The driver library names are replaced through GPUMST_CUDA_LIBRARY /
//! GPUMST_OPENCL_LIBRARY with paths that do not exist, so these tests mean "no GPU"
//! on any machine. They run the `gpumst` command in a child process because the
//! probe report is cached per process.

use std::process::{Command, Output};

use gpumst::{Context, Operation, Options, Status, Tier};

const MISSING_CUDA: &str = "/nonexistent/gpumst-test/libcuda.so.1";
const MISSING_OPENCL: &str = "/nonexistent/gpumst-test/libOpenCL.so.1";

fn gpumst_without_gpu(args: &[&str], backend: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gpumst"));
    command
        .args(args)
        .env("GPUMST_CUDA_LIBRARY", MISSING_CUDA)
        .env("GPUMST_OPENCL_LIBRARY", MISSING_OPENCL)
        .env_remove("GPUMST_BACKEND");
    if let Some(backend) = backend {
        command.env("GPUMST_BACKEND", backend);
    }
    command.output().expect("gpumst runs")
}

#[test]
fn auto_picks_the_cpu_without_gpu_drivers() {
    let out = gpumst_without_gpu(&["info", "--json"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("info --json is JSON");
    assert_eq!(report["selected"]["tier"], "cpu");
    assert!(report["selected"]["memory_bytes"].as_u64().unwrap() > 0);
    for (tier, path) in [("cuda", MISSING_CUDA), ("opencl", MISSING_OPENCL)] {
        let attempts = report["probe"][tier]["attempts"].as_array().unwrap();
        assert_eq!(
            attempts.len(),
            1,
            "{tier}: only the overriding path is tried"
        );
        assert_eq!(attempts[0]["path"], path);
        let why = attempts[0]["error"].as_str().unwrap();
        assert!(
            why.contains("No such file"),
            "{tier}: loader message kept: {why}"
        );
        assert!(report["probe"][tier]["library"].is_null());
    }
    let skipped = report["skipped"].as_array().unwrap();
    assert_eq!(
        skipped.len(),
        2,
        "both GPU tiers are reported as skipped: {skipped:?}"
    );
}

#[test]
fn forced_gpu_tier_without_a_driver_is_an_error_that_says_why() {
    for (backend, name, path) in [
        ("cuda", "CUDA", MISSING_CUDA),
        ("opencl", "OpenCL", MISSING_OPENCL),
    ] {
        let out = gpumst_without_gpu(&["info"], Some(backend));
        assert!(
            !out.status.success(),
            "GPUMST_BACKEND={backend} must not fall back to the CPU"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("backend unavailable"), "{stderr}");
        assert!(
            stderr.contains(&format!("the {name} tier is unavailable")),
            "{stderr}"
        );
        assert!(
            stderr.contains(path),
            "names the library it tried: {stderr}"
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("selected: cpu"), "{stdout}");
    }
}

#[test]
fn forced_cpu_and_bad_backend_values() {
    let out = gpumst_without_gpu(&["info"], Some("cpu"));
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("selected: cpu tier"));
    let out = gpumst_without_gpu(&["info"], Some("tpu"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("GPUMST_BACKEND='tpu'"), "{stderr}");
}

#[test]
fn cpu_context_runs_every_operation() {
    let ctx = Context::new(&Options {
        tier: Tier::Cpu,
        cpu_threads: 2,
        ..Options::default()
    })
    .unwrap();
    assert_eq!(ctx.tier(), Tier::Cpu);
    for op in [
        Operation::Scan,
        Operation::SegmentedScan,
        Operation::ArgReduce,
        Operation::SegmentedArgReduce,
    ] {
        assert_eq!(ctx.tier_for(op).unwrap(), Tier::Cpu);
    }
    assert!(
        ctx.device_name().contains("2 threads"),
        "{}",
        ctx.device_name()
    );
}

#[test]
fn forced_gpu_tier_in_options_never_falls_back() {
    // A forced GPU tier either opens as itself or fails with BackendUnavailable; it
    // never silently gives a CPU context.
    for tier in [Tier::Cuda, Tier::OpenCl] {
        match Context::new(&Options {
            tier,
            ..Options::default()
        }) {
            Ok(ctx) => {
                assert_eq!(ctx.tier(), tier);
                assert_eq!(ctx.tier_for(Operation::Msf).unwrap(), tier);
            }
            Err(err) => assert_eq!(err.status(), Status::BackendUnavailable, "{err}"),
        }
    }
}

#[test]
fn buffers_round_trip_through_every_tier() {
    for tier in [Tier::Cpu, Tier::OpenCl, Tier::Cuda] {
        match Context::new(&Options {
            tier,
            ..Options::default()
        }) {
            Ok(ctx) => buffers_round_trip(&ctx, tier),
            Err(e) => eprintln!("SKIPPED buffers on the {tier} tier: {}", e.message()),
        }
    }
}

fn buffers_round_trip(ctx: &Context, tier: Tier) {
    let data: Vec<i64> = (0..100_000).map(|i| (i * 7919) % 1013 - 500).collect();
    let mut buffer = ctx.upload(&data).unwrap();
    assert_eq!(buffer.len(), data.len());
    assert_eq!(buffer.tier(), tier);
    // A device copy, and a resident segmented argmin over segments of 0..999 elements.
    let mut copy = ctx.upload(&vec![0i64; data.len()]).unwrap();
    ctx.copy_buffer(&buffer, &mut copy).unwrap();
    let mut back = vec![0i64; data.len()];
    ctx.download(&copy, &mut back).unwrap();
    assert_eq!(back, data);
    let mut offsets = vec![0u64];
    while *offsets.last().unwrap() < data.len() as u64 {
        let next = offsets.last().unwrap() + (offsets.len() as u64 * 37) % 1000;
        offsets.push(next.min(data.len() as u64));
    }
    let device_offsets = ctx.upload(&offsets).unwrap();
    let segments = offsets.len() - 1;
    let mut values = ctx.upload(&vec![0i64; segments]).unwrap();
    let mut indices = ctx.upload(&vec![0u64; segments]).unwrap();
    ctx.segmented_argmin_buffer(&copy, &device_offsets, &mut values, &mut indices)
        .unwrap();
    let (mut got_v, mut got_i) = (vec![0i64; segments], vec![0u64; segments]);
    ctx.download(&values, &mut got_v).unwrap();
    ctx.download(&indices, &mut got_i).unwrap();
    let (mut want_v, mut want_i) = (vec![0i64; segments], vec![0u64; segments]);
    ctx.segmented_argmin(&data, &offsets, &mut want_v, &mut want_i)
        .unwrap();
    assert_eq!((got_v, got_i), (want_v, want_i), "{tier}");
    let mut bad = offsets.clone();
    bad[7] = bad[8] + 1;
    let bad = ctx.upload(&bad).unwrap();
    let err = ctx
        .segmented_argmin_buffer(&copy, &bad, &mut values, &mut indices)
        .unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument, "{err}");
    assert!(
        err.message().contains('8'),
        "names the offending index: {err}"
    );
    let (min, at) = ctx.argmin_buffer(&buffer).unwrap().unwrap();
    assert_eq!(min, *data.iter().min().unwrap());
    assert_eq!(at, data.iter().position(|&x| x == min).unwrap());
    ctx.scan_buffer(
        &mut buffer,
        gpumst::ScanOp::Sum,
        gpumst::ScanKind::Inclusive,
    )
    .unwrap();
    let mut back = vec![0i64; data.len()];
    ctx.download(&buffer, &mut back).unwrap();
    let mut running = 0i64;
    for (i, x) in data.iter().enumerate() {
        running += x;
        assert_eq!(back[i], running, "prefix {i}");
    }
    let mut short = vec![0i64; 3];
    assert_eq!(
        ctx.download(&buffer, &mut short).unwrap_err().status(),
        Status::InvalidArgument
    );
}

#[test]
fn device_time_comes_only_from_a_device_clock() {
    for tier in [Tier::Cpu, Tier::OpenCl, Tier::Cuda] {
        let ctx = match Context::new(&Options {
            tier,
            ..Options::default()
        }) {
            Ok(ctx) => ctx,
            Err(e) => {
                eprintln!("SKIPPED device time on the {tier} tier: {}", e.message());
                continue;
            }
        };
        let data: Vec<u32> = (0..10_000).rev().collect();
        let (found, ms) = ctx.device_time_ms(|| ctx.argmin(&data)).unwrap();
        assert_eq!(found, Some((0, 9_999)), "{tier}");
        match tier {
            // CUDA events on the context's stream.
            Tier::Cuda => assert!(ms.is_some_and(|ms| ms >= 0.0), "{tier}: {ms:?}"),
            // No device clock: the caller times with the host.
            _ => assert_eq!(ms, None, "{tier}"),
        }
        let err = ctx
            .device_time_ms(|| {
                ctx.argmin::<u32>(&[])
                    .and(Err::<(), _>(gpumst::Error::internal("x")))
            })
            .unwrap_err();
        assert_eq!(
            err.status(),
            Status::Internal,
            "{tier}: the work's error comes back"
        );
    }
}
