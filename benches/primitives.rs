//! Times every CPU-tier primitive beside a parallel memory copy of the same bytes, in
//! one run, and prints the ratio of their bandwidths.
//!
//!     cargo bench --bench primitives -- --threads 2 --min-log2 20 --max-log2 28
//!
//! Bandwidth counts the bytes an operation must read and write (a scan: input + output;
//! an argmin: input only; a segmented argmin: input + offsets + results). The copy moves
//! input-sized bytes (read + write), so `ratio` = op GB/s ÷ copy GB/s.

use std::time::Instant;

use clap::Parser;
use gpumst::{Context, Element, Options, ScanKind, ScanOp, Tier};
use rayon::prelude::*;

#[derive(Parser)]
struct Args {
    /// CPU threads for gpumst and for the copy baseline (0 = all cores).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    #[arg(long, default_value_t = 20)]
    min_log2: u32,
    #[arg(long, default_value_t = 28)]
    max_log2: u32,
    /// Timed repetitions per measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Element types to run: any of i32,u32,i64,u64,f32,f64.
    #[arg(long, default_value = "u32", value_delimiter = ',')]
    types: Vec<String>,
    /// Only run measurements whose name contains this text ("copy" always runs).
    #[arg(long, default_value = "")]
    filter: String,
    /// Ignored (cargo bench passes it).
    #[arg(long, hide = true)]
    bench: bool,
}

fn median_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm-up: page faults, pool start
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Deterministic pseudo-random data (xorshift), converted to `T`.
fn data<T: Element>(n: usize, convert: fn(u64) -> T) -> Vec<T> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            convert(x)
        })
        .collect()
}

/// Times and prints one measurement of a size, against that size's copy bandwidth.
struct Row<'a> {
    args: &'a Args,
    n: usize,
    copy_gbs: f64,
}

impl Row<'_> {
    fn run(&self, name: &str, bytes: f64, f: impl FnMut()) {
        if !name.contains(&self.args.filter) {
            return;
        }
        let ms = median_ms(self.args.reps, f);
        let gbs = bytes / ms / 1e6;
        println!(
            "{name:<28} n=2^{:<2} {ms:>10.3} ms {gbs:>8.2} GB/s  ratio {:>5.2}",
            self.n.trailing_zeros(),
            gbs / self.copy_gbs
        );
    }
}

fn bench_type<T: Element>(
    args: &Args,
    ctx: &Context,
    pool: &rayon::ThreadPool,
    convert: fn(u64) -> T,
) {
    let size = std::mem::size_of::<T>() as f64;
    println!("== {} ==", T::DTYPE.name());
    for log2 in args.min_log2..=args.max_log2 {
        let n = 1usize << log2;
        let input = data::<T>(n, convert);
        let mut output = vec![T::default(); n];
        let copy_ms = median_ms(args.reps, || {
            pool.install(|| {
                output
                    .par_chunks_mut(1 << 16)
                    .zip(input.par_chunks(1 << 16))
                    .for_each(|(o, i)| o.copy_from_slice(i))
            })
        });
        let copy_bytes = 2.0 * size * n as f64;
        let copy_gbs = copy_bytes / copy_ms / 1e6;
        println!(
            "{:<28} n=2^{log2:<2} {copy_ms:>10.3} ms {copy_gbs:>8.2} GB/s  ratio  1.00",
            "copy"
        );
        let row = Row { args, n, copy_gbs };
        for (name, op, kind) in [
            ("scan sum inclusive", ScanOp::Sum, ScanKind::Inclusive),
            ("scan sum exclusive", ScanOp::Sum, ScanKind::Exclusive),
            ("scan min inclusive", ScanOp::Min, ScanKind::Inclusive),
            ("scan max exclusive", ScanOp::Max, ScanKind::Exclusive),
        ] {
            row.run(name, copy_bytes, || {
                ctx.scan(&input, &mut output, op, kind).unwrap()
            });
        }
        row.run("scan sum in place", copy_bytes, || {
            ctx.scan_in_place(&mut output, ScanOp::Sum, ScanKind::Inclusive)
                .unwrap()
        });

        let flags: Vec<u8> = (0..n).map(|i| (i % 256 == 0) as u8).collect();
        row.run("segscan flags (seg 256)", copy_bytes + n as f64, || {
            ctx.segmented_scan_flags(
                &input,
                &mut output,
                &flags,
                ScanOp::Sum,
                ScanKind::Inclusive,
            )
            .unwrap()
        });
        let offsets: Vec<u64> = (0..=n as u64 / 256).map(|s| s * 256).collect();
        row.run(
            "segscan offsets (seg 256)",
            copy_bytes + offsets.len() as f64 * 8.0,
            || {
                ctx.segmented_scan_offsets(
                    &input,
                    &mut output,
                    &offsets,
                    ScanOp::Sum,
                    ScanKind::Inclusive,
                )
                .unwrap()
            },
        );

        row.run("argmin", size * n as f64, || {
            std::hint::black_box(ctx.argmin(&input).unwrap());
        });
        for seg in [1usize, 16, 256, 4096] {
            let name = format!("segmented argmin (seg {seg})");
            if !name.contains(&args.filter) {
                continue;
            }
            let segments = n / seg;
            let offsets: Vec<u64> = (0..=segments as u64).map(|s| s * seg as u64).collect();
            let mut values = vec![T::default(); segments];
            let mut indices = vec![0u64; segments];
            let bytes = size * n as f64 + segments as f64 * (8.0 + 8.0 + size);
            row.run(&name, bytes, || {
                ctx.segmented_argmin(&input, &offsets, &mut values, &mut indices)
                    .unwrap()
            });
        }
    }
}

fn main() {
    let args = Args::parse();
    let options = Options {
        tier: Tier::Cpu,
        cpu_threads: args.threads,
        ..Options::default()
    };
    let ctx = Context::new(&options).expect("CPU tier opens");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
        .expect("copy pool");
    println!(
        "gpumst {} CPU tier: {} | copy baseline on {} threads | median of {}",
        gpumst::VERSION,
        ctx.device_name(),
        pool.current_num_threads(),
        args.reps
    );
    for t in &args.types {
        match t.as_str() {
            "i32" => bench_type::<i32>(&args, &ctx, &pool, |x| x as i32),
            "u32" => bench_type::<u32>(&args, &ctx, &pool, |x| x as u32),
            "i64" => bench_type::<i64>(&args, &ctx, &pool, |x| x as i64),
            "u64" => bench_type::<u64>(&args, &ctx, &pool, |x| x),
            "f32" => bench_type::<f32>(&args, &ctx, &pool, |x| (x >> 40) as f32 / 1024.0),
            "f64" => bench_type::<f64>(&args, &ctx, &pool, |x| (x >> 11) as f64 / 1024.0),
            other => eprintln!("unknown type {other}, skipped"),
        }
    }
}
