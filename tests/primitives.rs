//! Property tests of the primitives against naive sequential references.
//!
//! Every primitive (scan, segmented scan by flags and by offsets, argmin/argmax and their
//! segmented forms) is run for every operator, direction, element type, in place and out
//! of place, on the CPU tier with 1, 2 and 3 worker threads (one thread takes the
//! sequential path, more take the chunked parallel path) and on the OpenCL tier when this
//! machine has one (reported as skipped otherwise), and compared with a plain loop
//! written here.
//!
//! Data come from a seed (so proptest shrinks sizes and patterns, not megabytes of
//! elements): random, small exact integers, all equal, sorted, reversed, type extremes,
//! NaN / ±inf / ±0.0, heavy ties, and planted extremes near chunk and task boundaries.
//!
//! Comparison rules follow `gpumst::types`: min/max results and arg-reduction values are
//! compared bit for bit (the sign of a zero and a NaN's payload must be the ones of the
//! element kept); integer sums wrap and are compared exactly; float sums are compared
//! exactly when every association gives the same result (small integers, NaN, ±inf),
//! within a rounding bound otherwise, and only for forced NaNs when ±MAX can overflow.

use std::sync::OnceLock;

use gpumst::{Context, Options, ScanKind, ScanOp, Status, Tier, EMPTY_SEGMENT};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

mod common;
use common::primitives::*;

/// Worker-thread counts every check runs with.
const THREADS: [usize; 3] = [1, 2, 3];

/// Threads from which the CPU tier streams a large out-of-place scan's output.
const STREAMING_THREADS: usize = 8;

/// Every CPU thread count a test may ask [`ctx`] for.
const CONTEXT_THREADS: [usize; 4] = [1, 2, 3, STREAMING_THREADS];

/// Sizes that sit on and around powers of two, chunk and task boundaries, and primes.
const INTERESTING_SIZES: &[usize] = &[
    0,
    1,
    2,
    3,
    4,
    5,
    7,
    8,
    9,
    13,
    31,
    32,
    33,
    63,
    64,
    65,
    127,
    128,
    129,
    2039,
    2047,
    2048,
    2049,
    4093,
    8191,
    16381,
    CHUNK8 - 1,
    CHUNK8,
    CHUNK8 + 1,
    2 * CHUNK8 + 1,
    32749,
    CHUNK4 - 1,
    CHUNK4,
    CHUNK4 + 1,
    49157,
    65521,
    TASK - 1,
    TASK,
    TASK + 1,
    69997,
];

/// Largest size a proptest case draws (sizes are kept moderate for debug-build CI).
const MAX_PROPTEST_N: usize = 70_000;

/// The slots of the GPU tiers among the thread counts a check runs with (no CPU
/// context has 0 or usize::MAX threads).
const OPENCL: usize = 0;
const CUDA: usize = usize::MAX;

/// The context of GPU tier `tier`, if this machine has it (opened once).
fn gpu(tier: Tier) -> Option<&'static Context> {
    static CONTEXTS: OnceLock<[Option<Context>; 2]> = OnceLock::new();
    let open = |tier: Tier| {
        if !common::tier_selected(tier) {
            eprintln!("SKIPPED the {tier} tier: not in GPUMST_TEST_TIERS");
            return None;
        }
        Context::new(&Options {
            tier,
            ..Default::default()
        })
        .map_err(|e| eprintln!("SKIPPED the {tier} tier: {}", e.message()))
        .ok()
    };
    let contexts = CONTEXTS.get_or_init(|| [open(Tier::OpenCl), open(Tier::Cuda)]);
    contexts[(tier == Tier::Cuda) as usize].as_ref()
}

/// `threads`, plus the GPU tiers this machine has when the check covers every CPU
/// thread count.
fn with_gpus(threads: &[usize]) -> Vec<usize> {
    let mut all = threads.to_vec();
    if threads == THREADS {
        if gpu(Tier::OpenCl).is_some() {
            all.push(OPENCL);
        }
        if gpu(Tier::Cuda).is_some() {
            all.push(CUDA);
        }
    }
    all
}

fn ctx(threads: usize) -> &'static Context {
    match threads {
        OPENCL => return gpu(Tier::OpenCl).expect("the OpenCL slot is used only when it opened"),
        CUDA => return gpu(Tier::Cuda).expect("the CUDA slot is used only when it opened"),
        _ => {}
    }
    static CONTEXTS: OnceLock<Vec<Context>> = OnceLock::new();
    let all = CONTEXTS.get_or_init(|| {
        CONTEXT_THREADS
            .iter()
            .map(|&t| {
                Context::new(&Options {
                    tier: Tier::Cpu,
                    cpu_threads: t,
                    ..Default::default()
                })
                .unwrap_or_else(|e| panic!("CPU context with {t} threads: {e}"))
            })
            .collect()
    });
    let i = CONTEXT_THREADS
        .iter()
        .position(|&t| t == threads)
        .expect("thread count is one of CONTEXT_THREADS");
    &all[i]
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

#[derive(Debug, Clone, Copy)]
struct Case {
    n: usize,
    seed: u64,
    data: DataPattern,
    seg: SegPattern,
    /// Add empty segments to the offsets (at the start, inside and at the end).
    empties: bool,
}

fn case_strategy() -> impl Strategy<Value = Case> {
    let sizes = prop_oneof![
        3 => prop::sample::select(INTERESTING_SIZES.to_vec()),
        1 => 0..=MAX_PROPTEST_N,
    ];
    (
        sizes,
        any::<u64>(),
        prop::sample::select(DataPattern::ALL.to_vec()),
        prop::sample::select(SegPattern::ALL.to_vec()),
        any::<bool>(),
    )
        .prop_map(|(n, seed, data, seg, empties)| Case {
            n,
            seed,
            data,
            seg,
            empties,
        })
}

// ---- running the primitives -----------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Scan,
    Flags,
    Offsets,
}

#[allow(clippy::too_many_arguments)]
fn run_scan<T: TestElem>(
    ctx: &Context,
    api: Api,
    in_place: bool,
    data: &[T],
    flags: &[u8],
    offsets: &[u64],
    op: ScanOp,
    kind: ScanKind,
) -> Result<Vec<T>, String> {
    let result = if in_place {
        let mut buf = data.to_vec();
        match api {
            Api::Scan => ctx.scan_in_place(&mut buf, op, kind),
            Api::Flags => ctx.segmented_scan_flags_in_place(&mut buf, flags, op, kind),
            Api::Offsets => ctx.segmented_scan_offsets_in_place(&mut buf, offsets, op, kind),
        }
        .map(|()| buf)
    } else {
        let mut out = vec![T::garbage(); data.len()];
        match api {
            Api::Scan => ctx.scan(data, &mut out, op, kind),
            Api::Flags => ctx.segmented_scan_flags(data, &mut out, flags, op, kind),
            Api::Offsets => ctx.segmented_scan_offsets(data, &mut out, offsets, op, kind),
        }
        .map(|()| out)
    };
    result.map_err(|e| format!("unexpected error: {e}"))
}

/// Which scan variants [`check_scans`] runs.
struct Plan<'a> {
    ops: &'a [ScanOp],
    kinds: &'a [ScanKind],
    threads: &'a [usize],
    in_place: &'a [bool],
    apis: &'a [Api],
}

/// Every operator, direction, thread count, placement and API.
const FULL: Plan<'static> = Plan {
    ops: &ScanOp::ALL,
    kinds: &ScanKind::ALL,
    threads: &THREADS,
    in_place: &[false, true],
    apis: &[Api::Scan, Api::Flags, Api::Offsets],
};

/// Runs the scan variants of `plan` over `data` and compares them with the reference.
fn check_scans<T: TestElem>(
    data: &[T],
    seg: &Segmentation,
    check: SumCheck,
    plan: &Plan<'_>,
) -> Result<(), String> {
    let n = data.len();
    let one_segment: Vec<bool> = (0..n).map(|i| i == 0).collect();
    let unsegmented = plan.apis.contains(&Api::Scan);
    let segmented = plan.apis.iter().any(|&api| api != Api::Scan);
    for &op in plan.ops {
        for &kind in plan.kinds {
            let float_sum = T::IS_FLOAT && op == ScanOp::Sum;
            let reference = |wanted: bool, heads: &[bool]| {
                if wanted {
                    let aux = float_sum.then(|| sum_aux(data, heads, kind));
                    (ref_scan(data, heads, op, kind), aux)
                } else {
                    (Vec::new(), None)
                }
            };
            let (plain, plain_aux) = reference(unsegmented, &one_segment);
            let (segs, segs_aux) = reference(segmented, &seg.heads);
            for threads in with_gpus(plan.threads) {
                for &in_place in plan.in_place {
                    for &api in plan.apis {
                        let got = run_scan(
                            ctx(threads),
                            api,
                            in_place,
                            data,
                            &seg.flags,
                            &seg.offsets,
                            op,
                            kind,
                        );
                        let (want, aux) = match api {
                            Api::Scan => (&plain, plain_aux.as_ref()),
                            _ => (&segs, segs_aux.as_ref()),
                        };
                        got.and_then(|got| compare_scan(&got, want, op, check, aux))
                            .map_err(|e| {
                                format!(
                                    "{} {op:?} {kind:?} {api:?} in_place={in_place} \
                                     threads={threads} (0 = OpenCL) n={n}: {e}",
                                    T::NAME
                                )
                            })?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Runs argmin/argmax and their segmented forms over `data` and compares them with the
/// reference.
fn check_args<T: TestElem>(data: &[T], offsets: &[u64], threads: &[usize]) -> Result<(), String> {
    let n = data.len();
    let segments = offsets.len() - 1;
    for min in [true, false] {
        let name = if min { "argmin" } else { "argmax" };
        let want = ref_arg(data, min);
        let empty = if min {
            T::MIN_IDENTITY
        } else {
            T::MAX_IDENTITY
        };
        let want_segments: Vec<(T, u64)> = offsets
            .windows(2)
            .map(|w| {
                let (start, end) = (w[0] as usize, w[1] as usize);
                match ref_arg(&data[start..end], min) {
                    Some((v, i)) => (v, (start + i) as u64),
                    None => (empty, EMPTY_SEGMENT),
                }
            })
            .collect();
        for threads in with_gpus(threads) {
            let c = ctx(threads);
            let context = |e: String| {
                format!(
                    "{} {name} threads={threads} (0 = OpenCL) n={n}: {e}",
                    T::NAME
                )
            };
            let got = if min { c.argmin(data) } else { c.argmax(data) }
                .map_err(|e| context(format!("unexpected error: {e}")))?;
            compare_arg(got, want).map_err(context)?;

            let mut values = vec![T::garbage(); segments];
            let mut indices = vec![0x5A5A_5A5Au64; segments];
            if min {
                c.segmented_argmin(data, offsets, &mut values, &mut indices)
            } else {
                c.segmented_argmax(data, offsets, &mut values, &mut indices)
            }
            .map_err(|e| context(format!("segmented: unexpected error: {e}")))?;
            for (s, &(wv, wi)) in want_segments.iter().enumerate() {
                if values[s].bits() != wv.bits() || indices[s] != wi {
                    return Err(context(format!(
                        "segmented, segment {s} ({}..{}): got ({}, {}), want ({}, {wi})",
                        offsets[s],
                        offsets[s + 1],
                        show(values[s]),
                        indices[s],
                        show(wv)
                    )));
                }
            }
        }
    }
    Ok(())
}

fn scan_case<T: TestElem>(case: &Case) -> Result<(), TestCaseError> {
    let mut rng = Rng(case.seed);
    let (data, check) = make_data::<T>(case.data, case.n, &mut rng);
    let seg = make_segments(case.seg, case.n, case.empties, &mut rng);
    check_scans(&data, &seg, check, &FULL).map_err(TestCaseError::fail)
}

fn arg_case<T: TestElem>(case: &Case) -> Result<(), TestCaseError> {
    let mut rng = Rng(case.seed);
    let (data, _) = make_data::<T>(case.data, case.n, &mut rng);
    let seg = make_segments(case.seg, case.n, case.empties, &mut rng);
    check_args(&data, &seg.offsets, &THREADS).map_err(TestCaseError::fail)
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn scans_i32(case in case_strategy()) { scan_case::<i32>(&case)?; }
    #[test]
    fn scans_u32(case in case_strategy()) { scan_case::<u32>(&case)?; }
    #[test]
    fn scans_i64(case in case_strategy()) { scan_case::<i64>(&case)?; }
    #[test]
    fn scans_u64(case in case_strategy()) { scan_case::<u64>(&case)?; }
    #[test]
    fn scans_f32(case in case_strategy()) { scan_case::<f32>(&case)?; }
    #[test]
    fn scans_f64(case in case_strategy()) { scan_case::<f64>(&case)?; }
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn arg_reductions_i32(case in case_strategy()) { arg_case::<i32>(&case)?; }
    #[test]
    fn arg_reductions_u32(case in case_strategy()) { arg_case::<u32>(&case)?; }
    #[test]
    fn arg_reductions_i64(case in case_strategy()) { arg_case::<i64>(&case)?; }
    #[test]
    fn arg_reductions_u64(case in case_strategy()) { arg_case::<u64>(&case)?; }
    #[test]
    fn arg_reductions_f32(case in case_strategy()) { arg_case::<f32>(&case)?; }
    #[test]
    fn arg_reductions_f64(case in case_strategy()) { arg_case::<f64>(&case)?; }
}

// ---- hand-written examples ------------------------------------------------------------

fn cpu(threads: usize) -> &'static Context {
    let c = ctx(threads);
    assert_eq!(c.tier(), Tier::Cpu);
    c
}

fn bits_of<T: TestElem>(xs: &[T]) -> Vec<u64> {
    xs.iter().map(|x| x.bits()).collect()
}

#[test]
fn identities_are_the_documented_ones() {
    fn check<T: TestElem>() {
        assert_eq!(T::HIGHEST.bits(), T::MIN_IDENTITY.bits(), "{}", T::NAME);
        assert_eq!(T::LOWEST.bits(), T::MAX_IDENTITY.bits(), "{}", T::NAME);
        assert_eq!(T::ZERO.bits(), T::small(0).bits(), "{}", T::NAME);
        for threads in THREADS {
            for op in ScanOp::ALL {
                // The exclusive scan of one element is the identity alone.
                let mut out = [T::garbage()];
                cpu(threads)
                    .scan(&[T::small(5)], &mut out, op, ScanKind::Exclusive)
                    .unwrap();
                assert_eq!(
                    out[0].bits(),
                    ref_identity::<T>(op).bits(),
                    "{} {op:?}",
                    T::NAME
                );
            }
        }
    }
    check::<i32>();
    check::<u32>();
    check::<i64>();
    check::<u64>();
    check::<f32>();
    check::<f64>();
}

#[test]
fn documented_examples() {
    for threads in THREADS {
        let c = cpu(threads);
        let mut out = [0u32; 4];
        c.scan(&[1, 2, 3, 4], &mut out, ScanOp::Sum, ScanKind::Exclusive)
            .unwrap();
        assert_eq!(out, [0, 1, 3, 6]);
        c.scan(&[1, 2, 3, 4], &mut out, ScanOp::Sum, ScanKind::Inclusive)
            .unwrap();
        assert_eq!(out, [1, 3, 6, 10]);
        assert_eq!(c.argmin(&[3.0f32, -1.0, -1.0]).unwrap(), Some((-1.0, 1)));
        assert_eq!(c.argmax(&[3i64, 7, 7, -1]).unwrap(), Some((7, 1)));
        assert_eq!(c.argmin::<u64>(&[]).unwrap(), None);
        assert_eq!(c.argmax::<f64>(&[]).unwrap(), None);

        // Integer sums wrap.
        let mut out = [0i32; 3];
        c.scan(
            &[i32::MAX, 1, -1],
            &mut out,
            ScanOp::Sum,
            ScanKind::Inclusive,
        )
        .unwrap();
        assert_eq!(out, [i32::MAX, i32::MIN, i32::MAX]);
        let mut out = [0u64; 2];
        c.scan(&[u64::MAX, 2], &mut out, ScanOp::Sum, ScanKind::Inclusive)
            .unwrap();
        assert_eq!(out, [u64::MAX, 1]);

        // NaN is the extreme of both min and max and sticks until the segment ends.
        let data = [2.0f64, f64::NAN, -5.0, 7.0, 1.0];
        let flags = [0u8, 0, 0, 1, 0];
        let mut out = [0.0f64; 5];
        c.segmented_scan_flags(&data, &mut out, &flags, ScanOp::Min, ScanKind::Inclusive)
            .unwrap();
        assert_eq!(out[0], 2.0);
        assert!(out[1].is_nan() && out[2].is_nan());
        assert_eq!(out[3..], [7.0, 1.0]);
        c.segmented_scan_offsets(
            &data,
            &mut out,
            &[0, 3, 5],
            ScanOp::Max,
            ScanKind::Exclusive,
        )
        .unwrap();
        assert_eq!(out[0], f64::NEG_INFINITY);
        assert_eq!(out[1], 2.0);
        assert!(out[2].is_nan());
        assert_eq!(out[3..], [f64::NEG_INFINITY, 7.0]);

        // Float sums: NaN propagates, inf + -inf = NaN.
        let mut out = [0.0f32; 4];
        c.scan(
            &[1.0f32, f32::INFINITY, 2.0, f32::NEG_INFINITY],
            &mut out,
            ScanOp::Sum,
            ScanKind::Inclusive,
        )
        .unwrap();
        assert_eq!(out[..3], [1.0, f32::INFINITY, f32::INFINITY]);
        assert!(out[3].is_nan());

        // Ties keep the earlier value: the sign of the first zero survives.
        let mut out = [0.0f32; 3];
        c.scan(
            &[0.0f32, -0.0, -0.0],
            &mut out,
            ScanOp::Min,
            ScanKind::Inclusive,
        )
        .unwrap();
        assert_eq!(bits_of(&out), bits_of(&[0.0f32, 0.0, 0.0]));
        c.scan(
            &[-0.0f32, 0.0, 1.0],
            &mut out,
            ScanOp::Max,
            ScanKind::Inclusive,
        )
        .unwrap();
        assert_eq!(bits_of(&out), bits_of(&[-0.0f32, -0.0, 1.0]));
        assert_eq!(
            c.argmin(&[1.0f64, -0.0, 0.0])
                .unwrap()
                .map(|(v, i)| (v.to_bits(), i)),
            Some(((-0.0f64).to_bits(), 1))
        );
        assert_eq!(
            c.argmax(&[0.0f32, -0.0])
                .unwrap()
                .map(|(v, i)| (v.to_bits(), i)),
            Some((0.0f32.to_bits(), 0))
        );

        // The first NaN wins an arg-reduction, whatever its sign or payload.
        let neg_nan = f32::from_bits(0xFFC0_0000);
        let got = c
            .argmax(&[1.0f32, neg_nan, f32::INFINITY, f32::NAN])
            .unwrap();
        assert_eq!(got.map(|(v, i)| (v.to_bits(), i)), Some((0xFFC0_0000, 1)));
        let got = c.argmin(&[f32::NEG_INFINITY, f32::NAN]).unwrap();
        assert_eq!(
            got.map(|(v, i)| (v.to_bits(), i)),
            Some((f32::NAN.to_bits(), 1))
        );

        // Empty segments: identity value, EMPTY_SEGMENT index.
        let data = [4i32, -2, 9];
        let offsets = [0u64, 0, 2, 2, 3, 3];
        let mut values = [0i32; 5];
        let mut indices = [0u64; 5];
        c.segmented_argmin(&data, &offsets, &mut values, &mut indices)
            .unwrap();
        assert_eq!(values, [i32::MAX, -2, i32::MAX, 9, i32::MAX]);
        assert_eq!(indices, [EMPTY_SEGMENT, 1, EMPTY_SEGMENT, 2, EMPTY_SEGMENT]);
        c.segmented_argmax(&data, &offsets, &mut values, &mut indices)
            .unwrap();
        assert_eq!(values, [i32::MIN, 4, i32::MIN, 9, i32::MIN]);
        assert_eq!(indices, [EMPTY_SEGMENT, 0, EMPTY_SEGMENT, 2, EMPTY_SEGMENT]);
    }
}

#[test]
fn empty_inputs() {
    for threads in THREADS {
        let c = cpu(threads);
        for op in ScanOp::ALL {
            for kind in ScanKind::ALL {
                let mut out: [f32; 0] = [];
                c.scan(&[], &mut out, op, kind).unwrap();
                c.scan_in_place(&mut out, op, kind).unwrap();
                c.segmented_scan_flags(&[], &mut out, &[], op, kind)
                    .unwrap();
                c.segmented_scan_flags_in_place(&mut out, &[], op, kind)
                    .unwrap();
                for offsets in [&[0u64][..], &[0, 0, 0]] {
                    c.segmented_scan_offsets(&[], &mut out, offsets, op, kind)
                        .unwrap();
                    c.segmented_scan_offsets_in_place(&mut out, offsets, op, kind)
                        .unwrap();
                }
            }
        }
        assert_eq!(c.argmin::<i32>(&[]).unwrap(), None);
        let (mut values, mut indices) = ([7i64; 2], [7u64; 2]);
        c.segmented_argmax::<i64>(&[], &[0, 0, 0], &mut values, &mut indices)
            .unwrap();
        assert_eq!(values, [i64::MIN; 2]);
        assert_eq!(indices, [EMPTY_SEGMENT; 2]);
        c.segmented_argmin::<i64>(&[], &[0], &mut [], &mut [])
            .unwrap();
    }
}

// ---- large sizes ----------------------------------------------------------------------

/// Builds `pattern` data and `seg` segments of `n` elements from `seed`.
fn large_case<T: TestElem>(
    n: usize,
    seed: u64,
    pattern: DataPattern,
    seg: SegPattern,
) -> (Vec<T>, SumCheck, Segmentation) {
    let mut rng = Rng(seed);
    let (data, check) = make_data::<T>(pattern, n, &mut rng);
    let segments = make_segments(seg, n, true, &mut rng);
    (data, check, segments)
}

/// Every small interesting size (0, 1, 2, 2^k - 1, 2^k, 2^k + 1, primes) for every type
/// and every variant, whatever proptest happens to draw.
#[test]
fn every_small_size_for_every_type() {
    fn run<T: TestElem>() {
        for (k, &n) in INTERESTING_SIZES.iter().filter(|&&n| n <= 4096).enumerate() {
            let pattern = DataPattern::ALL[k % DataPattern::ALL.len()];
            let seg = SegPattern::ALL[k % SegPattern::ALL.len()];
            let (data, check, segments) = large_case::<T>(n, k as u64, pattern, seg);
            check_scans(&data, &segments, check, &FULL)
                .unwrap_or_else(|e| panic!("{pattern:?} {seg:?}: {e}"));
            check_args(&data, &segments.offsets, &THREADS)
                .unwrap_or_else(|e| panic!("{pattern:?} {seg:?}: {e}"));
        }
    }
    run::<i32>();
    run::<u32>();
    run::<i64>();
    run::<u64>();
    run::<f32>();
    run::<f64>();
}

/// Sizes around the type's scan chunk and the arg-reduction task, for every type, on the
/// parallel path.
#[test]
fn chunk_boundary_sizes_for_every_type() {
    fn run<T: TestElem>(seed: u64) {
        let plan = Plan {
            threads: &[2],
            in_place: &[false],
            apis: &[Api::Scan, Api::Offsets],
            ..FULL
        };
        let chunk = if std::mem::size_of::<T>() == 4 {
            CHUNK4
        } else {
            CHUNK8
        };
        let sizes = [
            chunk - 1,
            chunk,
            chunk + 1,
            2 * chunk + 1,
            65521,
            TASK - 1,
            TASK + 1,
        ];
        for (k, &n) in sizes.iter().enumerate() {
            let pattern = DataPattern::ALL[(k + seed as usize) % DataPattern::ALL.len()];
            let seg = SegPattern::ALL[k % SegPattern::ALL.len()];
            let (data, check, segments) = large_case::<T>(n, seed + k as u64, pattern, seg);
            check_scans(&data, &segments, check, &plan)
                .unwrap_or_else(|e| panic!("{pattern:?} {seg:?}: {e}"));
            check_args(&data, &segments.offsets, &[2])
                .unwrap_or_else(|e| panic!("{pattern:?} {seg:?}: {e}"));
        }
    }
    run::<i32>(100);
    run::<u32>(200);
    run::<i64>(300);
    run::<u64>(400);
    run::<f32>(500);
    run::<f64>(600);
}

/// Sizes around several chunks and tasks, every type, every scan variant.
#[test]
fn scans_straddling_many_chunks() {
    fn run<T: TestElem>(n: usize, seed: u64, pattern: DataPattern, seg: SegPattern) {
        let (data, check, segments) = large_case::<T>(n, seed, pattern, seg);
        check_scans(&data, &segments, check, &FULL)
            .unwrap_or_else(|e| panic!("{pattern:?} {seg:?}: {e}"));
    }
    run::<i32>(100_003, 1, DataPattern::Random, SegPattern::ChunkEdges);
    run::<u32>(4 * CHUNK4 + 1, 2, DataPattern::Ties, SegPattern::VerySparse);
    run::<i64>(99_991, 3, DataPattern::Extremes, SegPattern::Sparse);
    run::<u64>(
        8 * CHUNK8 - 1,
        4,
        DataPattern::Planted,
        SegPattern::ChunkEdges,
    );
    run::<f32>(
        100_003,
        5,
        DataPattern::SparseSpecials,
        SegPattern::VerySparse,
    );
    run::<f64>(131_071, 6, DataPattern::PlantedNan, SegPattern::ChunkEdges);
    run::<f32>(5 * CHUNK4 + 7, 7, DataPattern::Random, SegPattern::NoHeads);
    run::<f64>(100_003, 8, DataPattern::Extremes, SegPattern::Dense);
}

/// 2^20 elements: 32 chunks of 4-byte and 64 chunks of 8-byte elements, 16 arg tasks.
#[test]
fn scans_of_a_million() {
    let n = 1 << 20;
    let (data, check, seg) = large_case::<i32>(n, 11, DataPattern::Random, SegPattern::VerySparse);
    let plan = Plan {
        in_place: &[false],
        ..FULL
    };
    check_scans(&data, &seg, check, &plan).unwrap();
    let (data, check, seg) =
        large_case::<f64>(n + 1, 12, DataPattern::SmallInt, SegPattern::ChunkEdges);
    let plan = Plan {
        ops: &[ScanOp::Sum, ScanOp::Max],
        in_place: &[true],
        ..FULL
    };
    check_scans(&data, &seg, check, &plan).unwrap();
    let (data, check, seg) = large_case::<f32>(n - 1, 13, DataPattern::Ties, SegPattern::Sparse);
    let plan = Plan {
        ops: &[ScanOp::Min],
        in_place: &[false],
        ..FULL
    };
    check_scans(&data, &seg, check, &plan).unwrap();
    let (data, check, seg) = large_case::<u64>(n, 14, DataPattern::Extremes, SegPattern::NoHeads);
    let plan = Plan {
        ops: &[ScanOp::Sum],
        kinds: &[ScanKind::Exclusive],
        apis: &[Api::Scan, Api::Offsets],
        ..FULL
    };
    check_scans(&data, &seg, check, &plan).unwrap();
}

/// Out-of-place scans of 64 MiB and more on 8 threads, which the CPU tier writes with
/// streaming stores in 1,024-element pieces: every operator, direction and API for u32;
/// segmented f64 minima; and an output that starts off its 16-byte alignment.
#[test]
fn streamed_scans_past_64_mib() {
    let n = (1 << 24) + 7;
    let (data, check, seg) = large_case::<u32>(n, 15, DataPattern::Random, SegPattern::Sparse);
    let plan = Plan {
        threads: &[STREAMING_THREADS],
        in_place: &[false],
        ..FULL
    };
    check_scans(&data, &seg, check, &plan).unwrap();
    let (data, check, seg) =
        large_case::<f64>((1 << 23) + 5, 16, DataPattern::Ties, SegPattern::ChunkEdges);
    let plan = Plan {
        ops: &[ScanOp::Min, ScanOp::Max],
        threads: &[STREAMING_THREADS],
        in_place: &[false],
        apis: &[Api::Offsets],
        ..FULL
    };
    check_scans(&data, &seg, check, &plan).unwrap();

    let (data, _) = make_data::<u32>(DataPattern::SmallInt, n, &mut Rng(17));
    let one_segment: Vec<bool> = (0..n).map(|i| i == 0).collect();
    let want = ref_scan(&data, &one_segment, ScanOp::Sum, ScanKind::Exclusive);
    let mut out = vec![u32::garbage(); n + 1];
    ctx(STREAMING_THREADS)
        .scan(&data, &mut out[1..], ScanOp::Sum, ScanKind::Exclusive)
        .unwrap();
    assert_eq!(
        out[0],
        u32::garbage(),
        "the slot before the output was written"
    );
    if let Some(i) = (0..n).find(|&i| out[i + 1] != want[i]) {
        panic!(
            "misaligned output, element {i}: got {}, want {}",
            out[i + 1],
            want[i]
        );
    }
}

#[test]
fn arg_reductions_of_a_million() {
    let n = (1 << 20) + 1;
    for (seed, pattern, seg) in [
        (21, DataPattern::Planted, SegPattern::NoHeads),
        (22, DataPattern::PlantedNan, SegPattern::VerySparse),
        (23, DataPattern::Ties, SegPattern::NoHeads),
        (24, DataPattern::AllEqual, SegPattern::VerySparse),
    ] {
        let (data, _, segments) = large_case::<f32>(n, seed, pattern, seg);
        check_args(&data, &segments.offsets, &THREADS).unwrap();
        let (data, _, segments) = large_case::<i64>(n, seed, pattern, seg);
        check_args(&data, &segments.offsets, &THREADS).unwrap();
    }
    let (data, _, segments) = large_case::<u32>(n, 25, DataPattern::Reversed, SegPattern::Sparse);
    check_args(&data, &segments.offsets, &THREADS).unwrap();
    let (data, _, segments) = large_case::<f64>(n, 26, DataPattern::Sorted, SegPattern::NoHeads);
    check_args(&data, &segments.offsets, &THREADS).unwrap();
}

/// More segments than elements per arg-reduction task: mostly empty segments over few
/// elements, one segment per element, and many short segments with empty ones between.
#[test]
fn segmented_arg_reductions_with_many_segments() {
    let mut rng = Rng(51);
    let (data, _) = make_data::<i32>(DataPattern::Random, 1000, &mut rng);
    let mut offsets: Vec<u64> = (0..150_000).map(|_| rng.below(1001) as u64).collect();
    offsets.push(0);
    offsets.push(1000);
    offsets.sort_unstable();
    check_args(&data, &offsets, &THREADS).unwrap();
    let (data, _) = make_data::<f32>(DataPattern::Ties, 1000, &mut rng);
    check_args(&data, &offsets, &THREADS).unwrap();

    let (data, _, segments) =
        large_case::<f64>(200_003, 52, DataPattern::Extremes, SegPattern::AllHeads);
    check_args(&data, &segments.offsets, &THREADS).unwrap();
    let (data, _, segments) = large_case::<u32>(300_007, 53, DataPattern::Ties, SegPattern::Dense);
    check_args(&data, &segments.offsets, &THREADS).unwrap();
    let (data, _, segments) =
        large_case::<i64>(TASK + 1, 54, DataPattern::Planted, SegPattern::ChunkEdges);
    check_args(&data, &segments.offsets, &THREADS).unwrap();
}

/// Segments of every length from 0 to 300, then lengths around the sequential
/// reduction's block (2,048 elements, the last block taking up to 15 more), for every
/// type and data pattern: the CPU tier reduces short segments with lane folds whose
/// chunk, tail and first-match handling change at 16 and 128 elements.
#[test]
fn segmented_arg_reductions_of_every_short_length() {
    fn run<T: TestElem>(seed: u64) {
        let long = [
            2047, 2048, 2049, 2063, 2064, 2065, 4095, 4096, 4111, 4112, 4113,
        ];
        let mut offsets = vec![0u64];
        for len in (0..=300).chain(long) {
            offsets.push(offsets.last().unwrap() + len as u64);
        }
        let n = *offsets.last().unwrap() as usize;
        for (k, &pattern) in DataPattern::ALL.iter().enumerate() {
            let mut rng = Rng(seed + k as u64);
            let (data, _) = make_data::<T>(pattern, n, &mut rng);
            check_args(&data, &offsets, &[1, 2]).unwrap_or_else(|e| panic!("{pattern:?}: {e}"));
        }
    }
    run::<i32>(700);
    run::<u32>(710);
    run::<i64>(720);
    run::<u64>(730);
    run::<f32>(740);
    run::<f64>(750);
}

/// 10^7 elements, for a few (type, operator) pairs only (the run is in a debug build).
#[test]
fn ten_million() {
    let n = 10_000_000;
    let (data, check, seg) = large_case::<i32>(n, 31, DataPattern::Random, SegPattern::VerySparse);
    let plan = Plan {
        ops: &[ScanOp::Sum],
        kinds: &[ScanKind::Inclusive],
        threads: &[1, 3],
        in_place: &[false],
        apis: &[Api::Scan, Api::Flags],
    };
    check_scans(&data, &seg, check, &plan).unwrap();
    let (data, check, seg) =
        large_case::<f32>(n, 32, DataPattern::PlantedNan, SegPattern::ChunkEdges);
    let plan = Plan {
        ops: &[ScanOp::Max],
        kinds: &[ScanKind::Exclusive],
        threads: &[2],
        in_place: &[true],
        apis: &[Api::Offsets],
    };
    check_scans(&data, &seg, check, &plan).unwrap();
    let (data, check, seg) = large_case::<f64>(n, 33, DataPattern::SmallInt, SegPattern::NoHeads);
    let plan = Plan {
        ops: &[ScanOp::Sum],
        kinds: &[ScanKind::Exclusive],
        threads: &[2],
        in_place: &[false],
        apis: &[Api::Scan],
    };
    check_scans(&data, &seg, check, &plan).unwrap();
    let (data, _, seg) = large_case::<u64>(n, 34, DataPattern::Planted, SegPattern::VerySparse);
    check_args(&data, &seg.offsets, &[1, 2]).unwrap();
}

/// "Every method may be called from many threads at once": several callers share each
/// context's pool at the same time.
#[test]
fn concurrent_calls_on_one_context() {
    let n = 3 * CHUNK4 + 11;
    let (data, check, seg) = large_case::<i64>(n, 61, DataPattern::Random, SegPattern::Sparse);
    let want: Vec<Vec<i64>> = ScanOp::ALL
        .iter()
        .map(|&op| ref_scan(&data, &seg.heads, op, ScanKind::Inclusive))
        .collect();
    std::thread::scope(|scope| {
        for caller in 0..4 {
            let (data, seg, want) = (&data, &seg, &want);
            scope.spawn(move || {
                for round in 0..3 {
                    let threads = THREADS[(caller + round) % THREADS.len()];
                    for (op, want) in ScanOp::ALL.into_iter().zip(want) {
                        let got = run_scan(
                            ctx(threads),
                            Api::Offsets,
                            caller % 2 == 0,
                            data,
                            &seg.flags,
                            &seg.offsets,
                            op,
                            ScanKind::Inclusive,
                        )
                        .unwrap();
                        compare_scan(&got, want, op, check, None).unwrap_or_else(|e| {
                            panic!("caller {caller} {op:?} threads={threads}: {e}")
                        });
                    }
                    let got = ctx(threads).argmax(data).unwrap();
                    compare_arg(got, ref_arg(data, false)).unwrap();
                }
            });
        }
    });
}

/// The buffer entry points run the same primitives on resident data.
#[test]
fn buffers_scan_and_argmin_like_slices() {
    let (data, _, _) =
        large_case::<f32>(CHUNK4 + 3, 71, DataPattern::PlantedNan, SegPattern::NoHeads);
    let heads: Vec<bool> = (0..data.len()).map(|i| i == 0).collect();
    for threads in THREADS {
        let c = cpu(threads);
        let mut buffer = c.upload(&data).unwrap();
        assert_eq!(buffer.len(), data.len());
        c.scan_buffer(&mut buffer, ScanOp::Min, ScanKind::Exclusive)
            .unwrap();
        let mut got = vec![f32::garbage(); data.len()];
        c.download(&buffer, &mut got).unwrap();
        let want = ref_scan(&data, &heads, ScanOp::Min, ScanKind::Exclusive);
        compare_scan(&got, &want, ScanOp::Min, SumCheck::Exact, None).unwrap();
        let buffer = c.upload(&data).unwrap();
        compare_arg(c.argmin_buffer(&buffer).unwrap(), ref_arg(&data, true)).unwrap();
        let mut short = vec![0.0f32; data.len() - 1];
        let e = c.download(&buffer, &mut short).unwrap_err();
        assert_eq!(e.status(), Status::InvalidArgument);
    }
}

// ---- float sums: association fixed per tier -------------------------------------------

/// Runs an out-of-place float sum scan of random data twice with each of `threads`
/// (the two runs must agree bit for bit) and returns the first pair of thread counts
/// whose results differ, with the first differing index and both values.
fn float_sum_disagreement<T: TestElem>(
    n: usize,
    seed: u64,
    seg: SegPattern,
    threads: &[usize],
) -> Option<String> {
    let (data, _, segments) = large_case::<T>(n, seed, DataPattern::Random, seg);
    for api in [Api::Scan, Api::Flags, Api::Offsets] {
        for kind in ScanKind::ALL {
            let run = |t: usize| {
                let out = run_scan(
                    ctx(t),
                    api,
                    false,
                    &data,
                    &segments.flags,
                    &segments.offsets,
                    ScanOp::Sum,
                    kind,
                )
                .unwrap();
                bits_of(&out)
            };
            let results: Vec<Vec<u64>> = threads
                .iter()
                .map(|&t| {
                    let first = run(t);
                    assert!(
                        first == run(t),
                        "{} {api:?} {kind:?} threads={t}: two runs differ",
                        T::NAME
                    );
                    first
                })
                .collect();
            for (k, result) in results.iter().enumerate().skip(1) {
                if let Some(i) = result.iter().zip(&results[0]).position(|(a, b)| a != b) {
                    return Some(format!(
                        "{} {api:?} {kind:?} n={n}: out[{i}] = {} with {} thread(s) but {} \
                         with {} threads",
                        T::NAME,
                        show(T::from_bits64(results[0][i])),
                        threads[0],
                        show(T::from_bits64(result[i])),
                        threads[k],
                    ));
                }
            }
        }
    }
    None
}

/// `types.rs`: float sums use a fixed, thread-count-independent association order, so
/// they "may differ from a strictly sequential sum by rounding, never between runs".
/// Holds among parallel runs (2 and 3 threads).
#[test]
fn float_sums_agree_between_parallel_thread_counts() {
    let failures: Vec<String> = [
        float_sum_disagreement::<f32>(3 * CHUNK4 + 5, 41, SegPattern::VerySparse, &[2, 3]),
        float_sum_disagreement::<f64>(3 * CHUNK8 + 5, 42, SegPattern::NoHeads, &[2, 3]),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same promise between one thread and several, over more than two chunks.
///
/// Fails with gpumst 0.1.0: with one thread (or `n` within one chunk) `scan` runs
/// `scan_chunk` over the whole input, a strictly sequential association, while with
/// more threads each chunk's carry is `carry(k-1) + sum(chunk k-1)`, the chunk summed
/// on its own; from the third chunk on (index 2 * chunk) the float sums then differ in
/// the last bits between one thread and several.
#[test]
fn float_sums_agree_between_one_and_several_threads() {
    let failures: Vec<String> = [
        float_sum_disagreement::<f32>(3 * CHUNK4 + 5, 41, SegPattern::VerySparse, &[1, 2]),
        float_sum_disagreement::<f64>(3 * CHUNK8 + 5, 42, SegPattern::NoHeads, &[1, 3]),
        float_sum_disagreement::<f32>(3 * CHUNK4 + 5, 43, SegPattern::ChunkEdges, &[1, 3]),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---- errors ---------------------------------------------------------------------------

/// Whether `message` contains `number` as a whole number (not as part of a longer one).
fn mentions_number(message: &str, number: u64) -> bool {
    message
        .split(|c: char| !c.is_ascii_digit())
        .any(|word| word == number.to_string())
}

fn expect_invalid(result: gpumst::Result<()>, needles: &[&str], numbers: &[u64]) {
    let e = result.expect_err("the call should have been refused");
    assert_eq!(e.status(), Status::InvalidArgument, "{e}");
    for needle in needles {
        assert!(
            e.message().contains(needle),
            "message {:?} should mention {needle:?}",
            e.message()
        );
    }
    for &number in numbers {
        assert!(
            mentions_number(e.message(), number),
            "message {:?} should mention {number}",
            e.message()
        );
    }
}

#[test]
fn mismatched_lengths_are_invalid_arguments() {
    let c = cpu(2);
    let data = [1i64, 2, 3];
    let mut short = [0i64; 2];
    for op in ScanOp::ALL {
        for kind in ScanKind::ALL {
            expect_invalid(c.scan(&data, &mut short, op, kind), &[], &[2, 3]);
            expect_invalid(c.scan(&data[..2], &mut [0; 3], op, kind), &[], &[2, 3]);
            expect_invalid(
                c.segmented_scan_flags(&data, &mut short, &[1, 0, 0], op, kind),
                &[],
                &[2, 3],
            );
            expect_invalid(
                c.segmented_scan_offsets(&data, &mut short, &[0, 3], op, kind),
                &[],
                &[2, 3],
            );
            // Flags of the wrong length, in place and not.
            for flags in [&[1u8, 0][..], &[1, 0, 0, 0], &[]] {
                let len = flags.len() as u64;
                expect_invalid(
                    c.segmented_scan_flags(&data, &mut [0; 3], flags, op, kind),
                    &["flags"],
                    &[len, 3],
                );
                expect_invalid(
                    c.segmented_scan_flags_in_place(&mut [1i64, 2, 3], flags, op, kind),
                    &["flags"],
                    &[len, 3],
                );
            }
        }
    }
    // Segmented arg-reductions need one value and one index per segment.
    let offsets = [0u64, 1, 3];
    for (values, indices) in [(1, 2), (2, 1), (3, 2), (0, 0)] {
        let mut v = vec![0i64; values];
        let mut i = vec![0u64; indices];
        expect_invalid(
            c.segmented_argmin(&data, &offsets, &mut v, &mut i),
            &[],
            &[2, values as u64, indices as u64],
        );
        expect_invalid(
            c.segmented_argmax(&data, &offsets, &mut v, &mut i),
            &[],
            &[2, values as u64, indices as u64],
        );
    }
}

#[test]
fn bad_offsets_are_invalid_arguments_naming_the_index() {
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    // (offsets, the index the message must name, numbers it must mention)
    let cases: &[(&[u64], &str, &[u64])] = &[
        (&[1, 5], "offsets[0]", &[1]),
        (&[2, 2, 5], "offsets[0]", &[2]),
        (&[0, 3, 2, 5], "offsets[2]", &[2]),
        (&[0, 2, 2, 1, 5], "offsets[3]", &[1]),
        (&[0, 6, 5], "offsets[2]", &[5]),
        (&[0, 4], "offsets[1]", &[4, 5]),
        (&[0, 6], "offsets[1]", &[6, 5]),
        (&[0, 1, 2], "offsets[2]", &[2, 5]),
        (&[0], "offsets[0]", &[]),
        (&[0, u64::MAX], "offsets[1]", &[u64::MAX, 5]),
        (&[0, 5, u64::MAX], "offsets[2]", &[u64::MAX, 5]),
    ];
    for threads in THREADS {
        let c = cpu(threads);
        for &(offsets, index, numbers) in cases {
            for op in ScanOp::ALL {
                for kind in ScanKind::ALL {
                    let mut out = [0.0f32; 5];
                    expect_invalid(
                        c.segmented_scan_offsets(&data, &mut out, offsets, op, kind),
                        &[index],
                        numbers,
                    );
                    expect_invalid(
                        c.segmented_scan_offsets_in_place(&mut out, offsets, op, kind),
                        &[index],
                        numbers,
                    );
                }
            }
            let segments = offsets.len() - 1;
            let (mut values, mut indices) = (vec![0.0f32; segments], vec![0u64; segments]);
            expect_invalid(
                c.segmented_argmin(&data, offsets, &mut values, &mut indices),
                &[index],
                numbers,
            );
            expect_invalid(
                c.segmented_argmax(&data, offsets, &mut values, &mut indices),
                &[index],
                numbers,
            );
        }
        // No offsets at all: not even the leading 0.
        let mut out = [0.0f32; 5];
        expect_invalid(
            c.segmented_scan_offsets(&data, &mut out, &[], ScanOp::Sum, ScanKind::Inclusive),
            &["offsets"],
            &[],
        );
        expect_invalid(
            c.segmented_scan_offsets_in_place::<f32>(
                &mut [],
                &[],
                ScanOp::Min,
                ScanKind::Exclusive,
            ),
            &["offsets"],
            &[],
        );
        expect_invalid(
            c.segmented_argmin(&data, &[], &mut [], &mut []),
            &["offsets"],
            &[],
        );
    }
}

/// Reference validity of CSR offsets over `n` elements: `None` when valid, else the first
/// offending index (`Some(None)` for empty offsets).
fn offsets_error(offsets: &[u64], n: usize) -> Option<Option<usize>> {
    match offsets.first() {
        None => return Some(None),
        Some(&first) if first != 0 => return Some(Some(0)),
        _ => {}
    }
    if let Some(i) = (1..offsets.len()).find(|&i| offsets[i] < offsets[i - 1]) {
        return Some(Some(i));
    }
    if offsets[offsets.len() - 1] != n as u64 {
        return Some(Some(offsets.len() - 1));
    }
    None
}

fn offsets_strategy() -> impl Strategy<Value = (usize, Vec<u64>)> {
    (0usize..12, prop::collection::vec(0u64..15, 0..8), 0u8..4).prop_map(|(n, mut raw, how)| {
        if how > 0 {
            // Mostly valid: sorted, from 0 to n, then maybe one entry disturbed.
            raw.retain(|&o| o <= n as u64);
            raw.sort_unstable();
            raw.insert(0, 0);
            raw.push(n as u64);
            if how == 1 {
                let i = (n * 7 + raw.len()) % raw.len();
                raw[i] = raw[i].wrapping_add(if n % 2 == 0 { 1 } else { u64::MAX });
            }
        }
        (n, raw)
    })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn offsets_are_validated_like_the_reference((n, offsets) in offsets_strategy()) {
        let c = cpu(2);
        let data: Vec<u32> = (0..n as u32).collect();
        let mut out = vec![0u32; n];
        let scan = c.segmented_scan_offsets(&data, &mut out, &offsets, ScanOp::Sum, ScanKind::Inclusive);
        let segments = offsets.len().saturating_sub(1);
        let (mut values, mut indices) = (vec![0u32; segments], vec![0u64; segments]);
        let arg = c.segmented_argmax(&data, &offsets, &mut values, &mut indices);
        for result in [scan, arg] {
            match offsets_error(&offsets, n) {
                None => prop_assert!(result.is_ok(), "{offsets:?} over {n}: {result:?}"),
                Some(index) => {
                    let e = result.expect_err("invalid offsets must be refused");
                    prop_assert_eq!(e.status(), Status::InvalidArgument);
                    let needle = index.map_or("offsets".to_string(), |i| format!("offsets[{i}]"));
                    prop_assert!(
                        e.message().contains(&needle),
                        "{:?} over {}: message {:?} should name {}", offsets, n, e.message(), needle
                    );
                }
            }
        }
    }

    #[test]
    fn flags_of_the_wrong_length_are_refused(n in 0usize..40, len in 0usize..40) {
        prop_assume!(n != len);
        let c = cpu(3);
        let flags = vec![1u8; len];
        let mut data = vec![1.5f64; n];
        let r = c.segmented_scan_flags_in_place(&mut data, &flags, ScanOp::Max, ScanKind::Inclusive);
        let e = r.expect_err("flags of the wrong length must be refused");
        prop_assert_eq!(e.status(), Status::InvalidArgument);
        prop_assert!(mentions_number(e.message(), n as u64) && mentions_number(e.message(), len as u64), "{}", e.message());
    }
}
