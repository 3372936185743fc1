//! `Context::msf_mpi` timed (feature `mpi`): run under `mpirun -np P` (benches/mpi.sh
//! runs P = 1, 2, 4). Every rank makes the same graph (`gpumst generate`'s generators,
//! fixed seed) and passes its contiguous block of edges; rank 0 prints one JSON line:
//! the median total time of `--repeat` calls after a warm one, the local reduction's
//! share, each merge round's edges, bytes and time (the communication), the delivery
//! to every rank, and the single-process time of the same context on the whole graph
//! (rank 0 alone, before the distributed calls). The forest is checked against it.
//!
//! Usage: mpirun -np P mpi [--graph random|rmat|grid] [--log2-vertices 20]
//!                         [--edge-factor 8] [--threads 1] [--repeat 5] [--tier cpu]

use std::time::Instant;

use clap::Parser;
use gpumst::distributed::LocalEdges;
use gpumst::graph::generate::{self, WeightSpec};
use gpumst::{Context, MsfOptions, Options, Tier};
use mpi::traits::*;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value = "random")]
    graph: String,
    #[arg(long, default_value_t = 20)]
    log2_vertices: u32,
    /// Edges per vertex (random and RMAT).
    #[arg(long, default_value_t = 8)]
    edge_factor: u32,
    /// CPU threads per rank.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    #[arg(long, default_value = "cpu")]
    tier: Tier,
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let args = Args::parse();
    let universe = mpi::initialize().expect("MPI initialises once");
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let weights = WeightSpec::UniformInt {
        low: 1,
        high: 1_000_000,
    };
    let n = 1usize << args.log2_vertices;
    let graph = match args.graph.as_str() {
        "random" => generate::random(n, n * args.edge_factor as usize, 1, &weights),
        "rmat" => generate::rmat(args.log2_vertices, args.edge_factor, 1, &weights),
        "grid" => {
            let side = 1usize << args.log2_vertices.div_ceil(2);
            generate::grid(side, side, 1, &weights)
        }
        other => panic!("--graph {other}: random, rmat or grid"),
    };
    let ctx = Context::new(&Options {
        tier: args.tier,
        cpu_threads: args.threads,
        ..Options::default()
    })
    .expect("a context");
    let options = MsfOptions::default();
    let m = graph.num_edges();
    let whole = graph.view();

    let mut single_ms = 0.0;
    let mut expected = Vec::new();
    if rank == 0 {
        let mut times = Vec::new();
        for _ in 0..=args.repeat {
            let started = Instant::now();
            expected = ctx.msf(&whole, &options).expect("the forest").edges;
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        times.remove(0);
        single_ms = median(times);
    }
    world.barrier();

    let (lo, hi) = (m * rank / size, m * (rank + 1) / size);
    let weights = graph.weights.as_ref().map(|w| w.as_weights().slice(lo..hi));
    let local = LocalEdges {
        num_vertices: graph.num_vertices,
        u: &graph.u[lo..hi],
        v: &graph.v[lo..hi],
        weights,
        ids: None,
    };
    let mut runs = Vec::new();
    for _ in 0..=args.repeat {
        world.barrier();
        let started = Instant::now();
        let out = ctx
            .msf_mpi(&world, &local, &options, None)
            .expect("the distributed forest");
        let total = started.elapsed().as_secs_f64() * 1e3;
        let mut slowest = 0.0f64;
        world.all_reduce_into(
            &total,
            &mut slowest,
            mpi::collective::SystemOperation::max(),
        );
        if rank == 0 {
            let forest = out.forest.as_ref().expect("every rank gets the forest");
            assert_eq!(forest.edges, expected, "the single-process forest");
        }
        runs.push((slowest, out));
    }
    runs.remove(0);
    if rank == 0 {
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (total_ms, out) = &runs[runs.len() / 2];
        let rounds: Vec<String> = out
            .rounds
            .iter()
            .map(|r| {
                format!(
                    "{{\"senders\": {}, \"edges\": {}, \"bytes\": {}, \"ms\": {:.3}, \"communication_ms\": {:.3}}}",
                    r.senders,
                    r.edges_sent,
                    r.bytes_sent,
                    r.seconds * 1e3,
                    r.communication_seconds * 1e3
                )
            })
            .collect();
        let merge_ms = out.rounds.iter().fold(0.0, |t, r| t + r.seconds * 1e3);
        let communication_ms = out
            .rounds
            .iter()
            .fold(0.0, |t, r| t + r.communication_seconds * 1e3);
        println!(
            "{{\"graph\": \"{}\", \"vertices\": {}, \"edges\": {m}, \"ranks\": {size}, \"threads_per_rank\": {}, \"tier\": \"{}\", \"single_process_ms\": {single_ms:.3}, \"total_ms\": {total_ms:.3}, \"local_ms\": {:.3}, \"merge_ms\": {merge_ms:.3}, \"communication_ms\": {communication_ms:.3}, \"delivery_ms\": {:.3}, \"rounds\": [{}]}}",
            args.graph,
            graph.num_vertices,
            args.threads,
            ctx.tier().name(),
            out.local_seconds * 1e3,
            out.delivery_seconds * 1e3,
            rounds.join(", ")
        );
    }
}
