//! Benchmark of a GPU tier, for the device machine (`scripts/device.sh bench` builds it
//! here and runs it there). In one run it prints:
//!
//! - u32 scan, argmin and segmented argmin (segments of 1, 16, 256, 4096) on resident
//!   buffers, 2^min..2^max elements, each beside a device-to-device copy of the same
//!   array: scan as a fraction of the copy's time, argmin as a fraction of read
//!   bandwidth (half the copy's time), segmented argmin against the time the copy's
//!   bandwidth needs for the bytes it must move (data, offsets, results);
//! - MSF device time (kernels only) and end-to-end time (host arrays in, forest out) for
//!   NY, BAY, RMAT scale 22 x 16, random 2^22 / 2^25 and grid 2048 x 2048 (`auto`,
//!   `boruvka`, `strut`; `prim` on the road graphs), with the peak device memory per
//!   edge (B/edge: the most bytes the call's device buffers held at once, per
//!   undirected edge), beside the CPU tier's `auto` on every core of the machine,
//!   checking that the forests are identical.
//!
//! Times are medians after a warm-up. The primitives are timed with CUDA events on the
//! CUDA tier (the device time from a call's first command to its last) and with the
//! host clock on OpenCL; MSF times with the host clock. Every gpumst call waits for its
//! result (clFinish / cuStreamSynchronize or a blocking read), so the times include
//! reading results back and any gap in which the device waits for the host.
//!
//! Usage: device [--tier opencl] [--min-log2 20] [--max-log2 28] [--repeat 21]
//!               [--msf-repeat 7] [--data DIR] [--skip-primitives] [--skip-msf]

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use gpumst::graph::generate::{self, WeightSpec};
use gpumst::graph::io::{read_graph, Format};
use gpumst::{Algorithm, Context, EdgeListGraph, MsfOptions, Options, ScanKind, ScanOp, Tier};

#[derive(Parser)]
struct Args {
    /// The GPU tier to measure.
    #[arg(long, default_value = "opencl")]
    tier: Tier,
    #[arg(long, default_value_t = 20)]
    min_log2: u32,
    #[arg(long, default_value_t = 28)]
    max_log2: u32,
    /// Timed runs per primitive measurement.
    #[arg(long, default_value_t = 21)]
    repeat: usize,
    /// Timed runs per MSF measurement.
    #[arg(long, default_value_t = 7)]
    msf_repeat: usize,
    /// Where NY.gr.xz and BAY.gr.xz are.
    #[arg(long, default_value = "../shared/data")]
    data: PathBuf,
    #[arg(long)]
    skip_primitives: bool,
    #[arg(long)]
    skip_msf: bool,
    /// Only these MSF algorithms (comma-separated names; default all).
    #[arg(long, value_delimiter = ',')]
    algorithms: Vec<String>,
    /// Only these graphs (comma-separated: NY, BAY, rmat-22-16, random-22-25, grid-2048).
    #[arg(long, value_delimiter = ',')]
    graphs: Vec<String>,
    /// Ignored (cargo bench passes it).
    #[arg(long, hide = true)]
    bench: bool,
}

/// Median milliseconds of `repeat` runs of `f` after one warm-up run, by the device's
/// clock where the tier keeps one (CUDA events), else by the host's; and which.
fn median_device_ms(ctx: &Context, repeat: usize, mut f: impl FnMut()) -> (f64, &'static str) {
    f();
    let mut clock = "device events";
    let mut times: Vec<f64> = (0..repeat.max(1))
        .map(|_| {
            let t = Instant::now();
            let ((), device) = ctx
                .device_time_ms(|| {
                    f();
                    Ok(())
                })
                .expect("timed run");
            device.unwrap_or_else(|| {
                clock = "host clock";
                t.elapsed().as_secs_f64() * 1e3
            })
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], clock)
}

/// Median milliseconds of `repeat` runs of `f`, after one warm-up run.
fn median_ms(repeat: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut times: Vec<f64> = (0..repeat.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let args = Args::parse();
    let gpu = Context::new(&Options {
        tier: args.tier,
        ..Options::default()
    })
    .unwrap_or_else(|e| panic!("cannot open the {} tier: {e}", args.tier));
    let cpu = Context::new(&Options {
        tier: Tier::Cpu,
        ..Options::default()
    })
    .expect("the CPU tier opens");
    println!("gpumst {} device benchmark", gpumst::VERSION);
    println!("{} tier: {}", gpu.tier(), gpu.device_name());
    println!("cpu tier: {}", cpu.device_name());
    if !args.skip_primitives {
        primitives(&gpu, &args);
    }
    if !args.skip_msf {
        msf(&gpu, &cpu, &args);
    }
}

fn primitives(ctx: &Context, args: &Args) {
    println!();
    println!("primitives, u32, resident buffers (ratio: 1.0 = as fast as the copy allows)");
    println!(
        "{:>6} {:>9} {:>8} | {:>9} {:>6} | {:>9} {:>6} | segmented argmin ms (ratio) for segments of 1, 16, 256, 4096",
        "log2n", "copy ms", "GB/s", "scan ms", "ratio", "argmin ms", "ratio"
    );
    for log2 in (args.min_log2..=args.max_log2).step_by(2) {
        let n = 1usize << log2;
        let data: Vec<u32> = (0..n as u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as u32)
            .collect();
        let source = ctx.upload(&data).expect("upload");
        let mut target = ctx.upload(&data).expect("upload");
        let (copy_ms, clock) = median_device_ms(ctx, args.repeat, || {
            ctx.copy_buffer(&source, &mut target).expect("copy")
        });
        if log2 == args.min_log2 {
            println!("(times: medians by {clock}; each call waits for its result)");
        }
        let bytes = (n * 4) as f64;
        let copy_bandwidth = 2.0 * bytes / (copy_ms * 1e-3); // read + write, bytes/s
        let (scan_ms, _) = median_device_ms(ctx, args.repeat, || {
            ctx.scan_buffer(&mut target, ScanOp::Sum, ScanKind::Exclusive)
                .expect("scan")
        });
        let (argmin_ms, _) = median_device_ms(ctx, args.repeat, || {
            ctx.argmin_buffer(&source).expect("argmin");
        });
        let mut line = format!(
            "{log2:>6} {copy_ms:>9.3} {:>8.1} | {scan_ms:>9.3} {:>6.2} | {argmin_ms:>9.3} {:>6.2} |",
            copy_bandwidth / 1e9,
            copy_ms / scan_ms,
            (bytes / copy_bandwidth * 1e3) / argmin_ms,
        );
        drop(target);
        for length in [1usize, 16, 256, 4096] {
            let segments = n / length;
            let offsets: Vec<u64> = (0..=segments as u64).map(|s| s * length as u64).collect();
            let offsets = ctx.upload(&offsets).expect("upload offsets");
            let mut values = ctx.upload(&vec![0u32; segments]).expect("alloc");
            let mut indices = ctx.upload(&vec![0u64; segments]).expect("alloc");
            let (ms, _) = median_device_ms(ctx, args.repeat, || {
                ctx.segmented_argmin_buffer(&source, &offsets, &mut values, &mut indices)
                    .expect("segmented argmin")
            });
            let moved = bytes + ((segments + 1) * 8 + segments * 12) as f64;
            let floor_ms = moved / copy_bandwidth * 1e3;
            line += &format!(" {ms:.3} ({:.2})", floor_ms / ms);
        }
        println!("{line}");
    }
}

/// Published marks (DESIGN.md, best published GPU code on an H200), device ms.
fn mark_ms(name: &str) -> Option<f64> {
    match name {
        "NY" | "BAY" => Some(1.3),
        "random-22-25" => Some(9.4),
        "rmat-22-16" => Some(23.0),
        _ => None,
    }
}

fn msf(gpu: &Context, cpu: &Context, args: &Args) {
    println!();
    println!(
        "MSF: {} tier device time (from the first command after the upload to the last, by CUDA events where the tier has them, else the host clock) and end to end (host arrays in, forest out), CPU tier end to end",
        gpu.tier()
    );
    let weights = WeightSpec::UniformInt {
        low: 1,
        high: 1 << 20,
    };
    let mut graphs: Vec<(String, Box<dyn Fn() -> EdgeListGraph>)> = Vec::new();
    for name in ["NY", "BAY"] {
        let path = args.data.join(format!("{name}.gr.xz"));
        graphs.push((
            name.into(),
            Box::new(move || {
                read_graph(&path, Format::Auto, None)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                    .graph
            }),
        ));
    }
    graphs.push((
        "rmat-22-16".into(),
        Box::new(move || generate::rmat(22, 16, 1, &weights)),
    ));
    graphs.push((
        "random-22-25".into(),
        Box::new(move || generate::random(1 << 22, 1 << 25, 2, &weights)),
    ));
    graphs.push((
        "grid-2048".into(),
        Box::new(move || generate::grid(2048, 2048, 3, &weights)),
    ));
    println!(
        "{:<13} {:>9} {:>10} | {:<8} {:>10} {:>8} {:>6} {:>10} | {:>9} {:>8} | {:>7} {:>9}",
        "graph",
        "vertices",
        "edges",
        "algo",
        "device ms",
        "Garcs/s",
        "B/edge",
        "e2e ms",
        "cpu ms",
        "e2e/cpu",
        "mark ms",
        "dev/mark"
    );
    graphs.retain(|(name, _)| args.graphs.is_empty() || args.graphs.contains(name));
    for (name, make) in &graphs {
        let graph = make();
        let view = graph.view();
        let m = graph.num_edges();
        let mut cpu_forest = None;
        let cpu_ms = median_ms(args.msf_repeat, || {
            cpu_forest = Some(cpu.msf(&view, &MsfOptions::default()).expect("cpu msf"));
        });
        let cpu_forest = cpu_forest.expect("ran");
        // Prim adds one vertex per step in one work-group: road graphs only.
        let mut algorithms = vec![Algorithm::Auto, Algorithm::Boruvka, Algorithm::Strut];
        if graph.num_vertices < 1 << 20 {
            algorithms.push(Algorithm::Prim);
        }
        algorithms.retain(|a| {
            args.algorithms.is_empty() || args.algorithms.iter().any(|x| x == a.name())
        });
        for algorithm in algorithms {
            let options = MsfOptions {
                algorithm,
                ..MsfOptions::default()
            };
            let mut device_times = Vec::new();
            let mut peak_bytes = 0;
            let mut same = true;
            let e2e_ms = median_ms(args.msf_repeat, || {
                let forest = gpu.msf(&view, &options).expect("device msf");
                // By the device's clock where the tier keeps one (CUDA events).
                device_times.push(
                    forest
                        .device_timings
                        .map_or(f64::NAN, |t| t.compute_device_ms.unwrap_or(t.compute_ms)),
                );
                peak_bytes = forest.device_timings.map_or(0, |t| t.peak_device_bytes);
                same &= forest == cpu_forest;
            });
            device_times.sort_by(f64::total_cmp);
            let device_ms = device_times[device_times.len() / 2];
            let mark = mark_ms(name);
            println!(
                "{name:<13} {:>9} {m:>10} | {:<8} {device_ms:>10.2} {:>8.2} {:>6.1} {e2e_ms:>10.1} | {cpu_ms:>9.1} {:>8.2} | {:>7} {:>9}{}",
                graph.num_vertices,
                algorithm.name(),
                2.0 * m as f64 / (device_ms * 1e-3) / 1e9,
                peak_bytes as f64 / m as f64,
                e2e_ms / cpu_ms,
                mark.map_or("-".into(), |x| format!("{x}")),
                mark.map_or("-".into(), |x| format!("{:.2}", device_ms / x)),
                if same { "" } else { "  FOREST DIFFERS FROM THE CPU TIER" }
            );
        }
    }
}
