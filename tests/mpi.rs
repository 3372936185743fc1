//! `Context::msf_mpi` (feature `mpi`): a graph's edges spread over the ranks of
//! MPI_COMM_WORLD must give, on every rank, the forest of the whole graph, edge for
//! edge with the sequential reference; failures must reach every rank, naming the
//! rank, and leave none waiting.
//!
//! Not a libtest harness: MPI is initialised once per process, and the program is run
//! as `mpirun -np P <binary>` for several P by scripts/test.sh (plain `cargo test
//! --features mpi` runs it as one rank). It exits non-zero on the first failed check.

use gpumst::distributed::{DistributedForest, LocalEdges};
use gpumst::{Algorithm, Context, MsfOptions, Options, Status, Tier, Weights};
use mpi::traits::*;

mod common;
use common::msf::{random_graph, reference, reference_total, RefWeight, Stream};

/// Rank `rank` of `size`'s share of `0..m` under `layout`, as positions of the whole
/// edge list (the share's order: ascending, or reversed to test unsorted ids).
fn share(m: usize, rank: usize, size: usize, layout: Layout) -> Vec<usize> {
    match layout {
        Layout::Blocks => {
            let (start, end) = (m * rank / size, m * (rank + 1) / size);
            (start..end).collect()
        }
        Layout::RoundRobinReversed => (0..m).filter(|i| i % size == rank).rev().collect(),
    }
}

#[derive(Clone, Copy, Debug)]
enum Layout {
    /// Contiguous blocks in rank order, with implicit ids.
    Blocks,
    /// Edge i on rank i mod p, in descending order, with explicit ids.
    RoundRobinReversed,
}

fn pick<T: Copy>(all: &[T], positions: &[usize]) -> Vec<T> {
    positions.iter().map(|&p| all[p]).collect()
}

struct Checks<'c, C: Communicator> {
    comm: &'c C,
    ctx: Context,
    passed: usize,
}

impl<C: Communicator> Checks<'_, C> {
    fn rank(&self) -> usize {
        self.comm.rank() as usize
    }
    fn size(&self) -> usize {
        self.comm.size() as usize
    }

    /// One distributed call on a graph every rank generated alike, compared with the
    /// reference on the ranks that get the forest.
    #[allow(clippy::too_many_arguments)]
    fn forest_matches<W: RefWeight + Copy>(
        &mut self,
        what: &str,
        n: usize,
        u: &[u32],
        v: &[u32],
        w: Option<&[W]>,
        as_weights: impl Fn(&[W]) -> Weights<'_>,
        options: MsfOptions,
        layout: Layout,
        root: Option<i32>,
    ) {
        let mine = share(u.len(), self.rank(), self.size(), layout);
        let (lu, lv) = (pick(u, &mine), pick(v, &mine));
        let lw = w.map(|w| pick(w, &mine));
        let ids: Vec<u64> = mine.iter().map(|&p| p as u64).collect();
        let local = LocalEdges {
            num_vertices: n,
            u: &lu,
            v: &lv,
            weights: lw.as_deref().map(&as_weights),
            ids: match layout {
                Layout::Blocks => None,
                Layout::RoundRobinReversed => Some(&ids),
            },
        };
        let what = format!(
            "{what} ({layout:?}, root {root:?}, {:?})",
            options.algorithm
        );
        let out: DistributedForest = self
            .ctx
            .msf_mpi(self.comm, &local, &options, root)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let expected_rounds = self.size().next_power_of_two().trailing_zeros() as usize;
        assert_eq!(out.rounds.len(), expected_rounds, "{what}: merge rounds");
        let senders: usize = out.rounds.iter().map(|r| r.senders).sum();
        assert_eq!(
            senders,
            self.size() - 1,
            "{what}: every rank but 0 sends once"
        );
        let gets_forest = root.map_or(true, |r| r as usize == self.rank());
        assert_eq!(
            out.forest.is_some(),
            gets_forest,
            "{what}: who gets the forest"
        );
        if let Some(forest) = out.forest {
            let weights = w.filter(|_| !options.unweighted);
            let (edges, components) = reference(n, u, v, weights, options.maximum);
            assert_eq!(forest.edges, edges, "{what}: edges");
            assert_eq!(forest.num_components, components, "{what}: components");
            assert_eq!(forest.num_vertices, n, "{what}: vertices");
            assert_eq!(
                forest.total_weight,
                reference_total(&edges, weights),
                "{what}: total weight"
            );
            let whole = gpumst::Graph::EdgeList {
                num_vertices: n,
                u,
                v,
                weights: weights.map(&as_weights),
            };
            let single = self
                .ctx
                .msf(&whole, &options)
                .expect("single-process forest");
            assert_eq!(forest, single, "{what}: the single-process forest");
        }
        self.passed += 1;
    }

    /// A call that must fail on every rank with `status` and a message naming the
    /// failing rank and containing `says`.
    fn fails_everywhere(&mut self, what: &str, local: &LocalEdges<'_>, status: Status, says: &str) {
        let err = self
            .ctx
            .msf_mpi(self.comm, local, &MsfOptions::default(), None)
            .expect_err(what);
        assert_eq!(err.status(), status, "{what}: {err}");
        assert!(err.message().contains(says), "{what}: {err}");
        self.passed += 1;
    }
}

fn main() {
    let universe = mpi::initialize().expect("MPI initialises once");
    let world = universe.world();
    // One thread per rank: the ranks share this machine's cores.
    let ctx = Context::new(&Options {
        tier: Tier::Cpu,
        cpu_threads: 1,
        ..Options::default()
    })
    .expect("a CPU context");
    let mut checks = Checks {
        comm: &world,
        ctx,
        passed: 0,
    };
    let (rank, size) = (checks.rank(), checks.size());

    // Weighted multigraphs with self-loops and many tied weights (ties fall to ids), in
    // a size where every rank has edges and one where some have none.
    for (n, m, seed) in [(300, 2_000, 1), (50, 3, 2), (2_000, 12_000, 3)] {
        let (u, v) = random_graph(n, m, seed);
        let mut s = Stream(seed * 7 + 1);
        let w32: Vec<u32> = (0..m).map(|_| s.below(20)).collect();
        let wf: Vec<f64> = (0..m).map(|_| s.below(1000) as f64 / 8.0 - 40.0).collect();
        for layout in [Layout::Blocks, Layout::RoundRobinReversed] {
            for root in [None, Some(0), Some(size as i32 - 1)] {
                let what = format!("u32 weights, n {n}, m {m}");
                let options = MsfOptions::default();
                checks.forest_matches(
                    &what,
                    n,
                    &u,
                    &v,
                    Some(&w32),
                    |w| Weights::U32(w),
                    options,
                    layout,
                    root,
                );
            }
            let what = format!("f64 weights, maximum, labels, n {n}, m {m}");
            let options = MsfOptions {
                maximum: true,
                labels: true,
                ..MsfOptions::default()
            };
            checks.forest_matches(
                &what,
                n,
                &u,
                &v,
                Some(&wf),
                |w| Weights::F64(w),
                options,
                layout,
                None,
            );
            let what = format!("unweighted, n {n}, m {m}");
            let options = MsfOptions {
                unweighted: true,
                algorithm: Algorithm::Boruvka,
                ..MsfOptions::default()
            };
            checks.forest_matches(
                &what,
                n,
                &u,
                &v,
                Some(&w32),
                |w| Weights::U32(w),
                options,
                layout,
                None,
            );
        }
    }

    // Failures reach every rank. The last rank passes an end out of range.
    let last = size - 1;
    let (u, v) = (vec![0u32, 1], vec![1u32, if rank == last { 9 } else { 2 }]);
    let local = LocalEdges {
        num_vertices: 5,
        u: &u,
        v: &v,
        weights: None,
        ids: None,
    };
    checks.fails_everywhere(
        "an end out of range on the last rank",
        &local,
        Status::InvalidGraph,
        &format!("rank {last}: edge 1: v = 9 is out of range for 5 vertices"),
    );
    // Mismatched lengths.
    let short = if rank == last { &v[..1] } else { &v[..] };
    let local = LocalEdges {
        v: short,
        num_vertices: 10,
        ..local
    };
    checks.fails_everywhere(
        "lengths that differ on the last rank",
        &local,
        Status::InvalidArgument,
        "u has 2 entries but v has",
    );
    // A repeated id within one rank's share.
    let ids = [4u64, 4];
    let local = LocalEdges {
        v: &v,
        num_vertices: 10,
        ids: Some(&ids),
        ..local
    };
    checks.fails_everywhere(
        "a repeated id",
        &local,
        Status::InvalidArgument,
        "edges 0 and 1 both have id 4",
    );
    if size > 1 {
        // Ranks that disagree on the vertex count.
        let local = LocalEdges {
            num_vertices: 10 + rank,
            ids: None,
            ..local
        };
        checks.fails_everywhere(
            "vertex counts that differ",
            &local,
            Status::InvalidArgument,
            "the ranks disagree on num_vertices",
        );
        // Every rank gives its one edge the same id: the first merge sees it twice.
        let (u, v, ids) = ([0u32], [1u32], [7u64]);
        let local = LocalEdges {
            num_vertices: 2,
            u: &u,
            v: &v,
            weights: None,
            ids: Some(&ids),
        };
        checks.fails_everywhere(
            "one id on two ranks",
            &local,
            Status::InvalidArgument,
            "edge id 7 is given on two ranks",
        );
    }
    // The context still works after every failure.
    let (u, v) = random_graph(100, 400, 9);
    checks.forest_matches::<u32>(
        "after the failures",
        100,
        &u,
        &v,
        None,
        |w| Weights::U32(w),
        MsfOptions::default(),
        Layout::Blocks,
        None,
    );

    let passed = checks.passed;
    world.barrier();
    if rank == 0 {
        println!("mpi: {passed} checks passed on each of {size} rank(s)");
    }
}
