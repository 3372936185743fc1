//! Tier selection through the library: forced tiers never fall back, every tier runs
//! every operation, buffers round-trip (the command-line side is cli/tests/tiers.rs).

use gpumst::{Context, Operation, Options, Status, Tier};

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

    // Segmented by resident head flags: any nonzero byte starts a segment, index 0
    // always does; an exclusive sum against a running sum written out here.
    let flags: Vec<u8> = (0..data.len())
        .map(|i| match i % 1009 {
            0 if i > 0 => 1,
            500 => 255,
            _ => u8::from(i % 4099 == 7),
        })
        .collect();
    let device_flags = ctx.upload_flags::<i64>(&flags).unwrap();
    assert_eq!(
        (device_flags.len(), device_flags.tier()),
        (data.len(), tier)
    );
    let mut segmented = ctx.upload(&data).unwrap();
    ctx.segmented_scan_flags_buffer(
        &mut segmented,
        &device_flags,
        gpumst::ScanOp::Sum,
        gpumst::ScanKind::Exclusive,
    )
    .unwrap();
    ctx.download(&segmented, &mut back).unwrap();
    let mut running = 0i64;
    for (i, x) in data.iter().enumerate() {
        if flags[i] != 0 {
            running = 0;
        }
        assert_eq!(back[i], running, "{tier}: segmented prefix {i}");
        running += x;
    }
    let mut flags_back = vec![0u8; flags.len()];
    ctx.download(&device_flags, &mut flags_back).unwrap();
    assert_eq!(flags_back, flags, "{tier}: the flags are read, not written");
    // Flags that do not number the elements: the host call's message.
    let few = ctx.upload_flags::<i64>(&flags[..10]).unwrap();
    let on_tier = ctx
        .segmented_scan_flags_buffer(
            &mut segmented,
            &few,
            gpumst::ScanOp::Sum,
            gpumst::ScanKind::Inclusive,
        )
        .unwrap_err();
    let on_host = ctx
        .segmented_scan_flags_in_place(
            &mut back,
            &flags[..10],
            gpumst::ScanOp::Sum,
            gpumst::ScanKind::Inclusive,
        )
        .unwrap_err();
    assert_eq!(on_tier.status(), Status::InvalidArgument);
    assert_eq!(on_tier.message(), on_host.message());
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
