//! Minimum spanning forests of graphs whose edges are spread over the ranks of an MPI
//! communicator (Cargo feature `mpi`), in the BSP/CGM model of the founding paper by
//! Vasconcellos and Cáceres: p processors, each holding its share of the edges, and a
//! constant amount of communication per round.
//!
//! Each rank reduces its share to that share's minimum spanning forest on its own
//! context's tier (at most n - 1 edges, whatever the share's size); then ceil(log2 p)
//! merge rounds halve the ranks holding a forest: in round k, rank r with
//! r mod 2^(k+1) = 2^k sends its forest to rank r - 2^k, which keeps the forest of the
//! union. Under the strict (weight, edge id) order MSF(A ∪ B) = MSF(MSF(A) ∪ MSF(B)),
//! so rank 0 ends with exactly the forest a single process would compute. Edge ids are
//! global throughout: every share and every merged forest is kept in ascending id
//! order, so the positions the local solver breaks ties by follow the global ids.
//!
//! A round moves at most (p / 2^(k+1)) forests of at most n - 1 edges each, of 16 bytes
//! plus one weight per edge: O(n p) bytes in all, independent of m (docs/mpi.md).
//!
//! Every rank returns the same outcome: a failure on any rank (a bad share, memory) is
//! reported on all of them, naming the rank, and no rank is left waiting.

use std::time::Instant;

use ::mpi::collective::SystemOperation;
use ::mpi::datatype::Equivalence;
use ::mpi::traits::*;
use rayon::prelude::*;

use crate::graph::{Graph, Weights};
use crate::msf::{self, Forest, MsfOptions};
use crate::{alloc, Context, Error, Operation, Result, Status};

/// One rank's share of a distributed graph.
#[derive(Debug, Clone, Copy)]
pub struct LocalEdges<'a> {
    /// The whole graph's vertex count (the same on every rank).
    pub num_vertices: usize,
    /// Edge `i` of this share joins `u[i]` and `v[i]` (global vertex ids).
    pub u: &'a [u32],
    pub v: &'a [u32],
    /// One weight per edge of the share, of the same type on every rank; `None` for an
    /// unweighted graph (on every rank).
    pub weights: Option<Weights<'a>>,
    /// The global id of each edge of the share, unique across all ranks. `None`: the
    /// edges are numbered in rank order, rank r's first edge taking the id after the
    /// last edge of rank r - 1 (as if the shares were concatenated).
    pub ids: Option<&'a [u64]>,
}

/// What one merge round moved.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeRound {
    /// Ranks that sent their forest this round.
    pub senders: usize,
    /// Forest edges sent, over all senders.
    pub edges_sent: u64,
    /// Bytes sent, over all senders (ends, ids and weights).
    pub bytes_sent: u64,
    /// Wall time of the round on the slowest rank (the transfers and the receivers'
    /// merges).
    pub seconds: f64,
    /// The longest time a rank spent in this round's sends and receives, waiting for
    /// its partner included: the round's communication.
    pub communication_seconds: f64,
}

/// The outcome of [`Context::msf_mpi`] on one rank.
#[derive(Debug, Clone)]
pub struct DistributedForest {
    /// The forest, with global edge ids; `None` on ranks other than the chosen root.
    pub forest: Option<Forest>,
    /// Wall time of the local reductions, on the slowest rank.
    pub local_seconds: f64,
    /// The merge rounds in order (the same on every rank).
    pub rounds: Vec<MergeRound>,
    /// Wall time of delivering the forest to the root or to every rank.
    pub delivery_seconds: f64,
}

/// A weight type that can travel between ranks.
trait RankWeight: Equivalence + Copy + Default + Send + Sync + alloc::Zeroable + 'static {
    fn as_weights(weights: &[Self]) -> Weights<'_>;
}

macro_rules! rank_weight {
    ($($t:ty => $variant:ident),*) => {$(
        impl RankWeight for $t {
            fn as_weights(weights: &[Self]) -> Weights<'_> {
                Weights::$variant(weights)
            }
        }
    )*};
}
rank_weight!(i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => F32, f64 => F64);

/// Edges with their global ids, in ascending id order; `weights` is empty for an
/// unweighted graph.
#[derive(Default)]
struct Edges<W> {
    u: Vec<u32>,
    v: Vec<u32>,
    weights: Vec<W>,
    ids: Vec<u64>,
}

/// Edges where they are (a caller's share, or [`Edges`]), in ascending id order.
#[derive(Clone, Copy)]
struct View<'a, W> {
    u: &'a [u32],
    v: &'a [u32],
    /// Empty for an unweighted graph.
    weights: &'a [W],
    ids: Ids<'a>,
}

/// The global id of each position of a [`View`].
#[derive(Clone, Copy)]
enum Ids<'a> {
    /// Consecutive ids from this one (a share numbered in rank order).
    From(u64),
    Listed(&'a [u64]),
}

impl Ids<'_> {
    #[inline]
    fn at(&self, position: usize) -> u64 {
        match self {
            Ids::From(first) => first + position as u64,
            Ids::Listed(ids) => ids[position],
        }
    }
}

impl<W: RankWeight> Edges<W> {
    fn len(&self) -> usize {
        self.ids.len()
    }

    fn bytes(&self) -> u64 {
        (self.len() * (4 + 4 + 8) + self.weights.len() * std::mem::size_of::<W>()) as u64
    }

    fn view(&self) -> View<'_, W> {
        View {
            u: &self.u,
            v: &self.v,
            weights: &self.weights,
            ids: Ids::Listed(&self.ids),
        }
    }

    /// Both edge sets in one, in id order; an id in both is an error. Merged on all
    /// cores: `self` is cut into blocks, each taking the ids of `other` below the next
    /// block's first id, and every block merges into its own part of the output.
    fn merge(self, other: Self) -> Result<Self> {
        self.merge_in_blocks(other, 1 << 16)
    }

    /// [`Edges::merge`] with `self` cut into blocks of `block` edges.
    fn merge_in_blocks(self, other: Self, block: usize) -> Result<Self> {
        const WHAT: &str = "two ranks' forests";
        let total = self.len() + other.len();
        let weighted = !self.weights.is_empty() || !other.weights.is_empty();
        let mut out = Edges {
            u: alloc::zeroed(total, WHAT)?,
            v: alloc::zeroed(total, WHAT)?,
            weights: alloc::zeroed(if weighted { total } else { 0 }, WHAT)?,
            ids: alloc::zeroed(total, WHAT)?,
        };
        // Block k merges mine[starts[k]..starts[k + 1]] with theirs[splits[k]..
        // splits[k + 1]]: the last block takes the rest of theirs. An id in both lists
        // falls in one block (theirs is cut before any id equal to a block's first).
        let starts: Vec<usize> = (0..self.len().div_ceil(block).max(1))
            .map(|k| k * block)
            .chain([self.len()])
            .collect();
        let splits: Vec<usize> = starts
            .iter()
            .enumerate()
            .map(|(k, &i)| match k {
                0 => 0,
                _ if i == self.len() => other.len(),
                _ => other.ids.partition_point(|&id| id < self.ids[i]),
            })
            .collect();
        let mut parts = Vec::with_capacity(starts.len() - 1);
        let mut rest = (
            &mut out.u[..],
            &mut out.v[..],
            &mut out.weights[..],
            &mut out.ids[..],
        );
        for k in 0..starts.len() - 1 {
            let len = (starts[k + 1] - starts[k]) + (splits[k + 1] - splits[k]);
            let (u, u_rest) = std::mem::take(&mut rest.0).split_at_mut(len);
            let (v, v_rest) = std::mem::take(&mut rest.1).split_at_mut(len);
            let (w, w_rest) =
                std::mem::take(&mut rest.2).split_at_mut(if weighted { len } else { 0 });
            let (ids, ids_rest) = std::mem::take(&mut rest.3).split_at_mut(len);
            rest = (u_rest, v_rest, w_rest, ids_rest);
            parts.push((
                starts[k]..starts[k + 1],
                splits[k]..splits[k + 1],
                u,
                v,
                w,
                ids,
            ));
        }
        // The smallest id found in both lists, if any (the same whatever the blocks).
        let repeated = parts
            .into_par_iter()
            .filter_map(|(mine, theirs, u, v, w, ids)| {
                let (mut i, mut j) = (mine.start, theirs.start);
                for o in 0..ids.len() {
                    let take_mine =
                        j == theirs.end || (i < mine.end && self.ids[i] <= other.ids[j]);
                    if take_mine && j < theirs.end && self.ids[i] == other.ids[j] {
                        return Some(other.ids[j]);
                    }
                    let (from, k) = if take_mine {
                        (&self, &mut i)
                    } else {
                        (&other, &mut j)
                    };
                    u[o] = from.u[*k];
                    v[o] = from.v[*k];
                    if weighted {
                        w[o] = from.weights[*k];
                    }
                    ids[o] = from.ids[*k];
                    *k += 1;
                }
                None
            })
            .min();
        if let Some(id) = repeated {
            return Err(Error::invalid_argument(format!(
                "edge id {id} is given on two ranks: ids must be unique across the communicator"
            )));
        }
        Ok(out)
    }

    fn send(&self, to: &impl Destination) {
        to.send(&self.u[..]);
        to.send(&self.v[..]);
        to.send(&self.weights[..]);
        to.send(&self.ids[..]);
    }

    fn receive(from: &impl Source) -> Self {
        Edges {
            u: from.receive_vec().0,
            v: from.receive_vec().0,
            weights: from.receive_vec().0,
            ids: from.receive_vec().0,
        }
    }
}

impl<W: RankWeight> View<'_, W> {
    fn graph(&self, num_vertices: usize) -> Graph<'_> {
        Graph::EdgeList {
            num_vertices,
            u: self.u,
            v: self.v,
            weights: (!self.weights.is_empty()).then(|| W::as_weights(self.weights)),
        }
    }

    /// The edges at `positions`, in that order (gathered on all cores).
    fn select(&self, positions: &[usize]) -> Result<Edges<W>> {
        const WHAT: &str = "a rank's edges";
        let at = |list: &[u32]| alloc::par_collect(positions.par_iter().map(|&p| list[p]), WHAT);
        Ok(Edges {
            u: at(self.u)?,
            v: at(self.v)?,
            weights: if self.weights.is_empty() {
                Vec::new()
            } else {
                alloc::par_collect(positions.par_iter().map(|&p| self.weights[p]), WHAT)?
            },
            ids: alloc::par_collect(positions.par_iter().map(|&p| self.ids.at(p)), WHAT)?,
        })
    }

    /// The minimum spanning forest of these edges, on `ctx`.
    fn reduce(&self, ctx: &Context, num_vertices: usize, options: &MsfOptions) -> Result<Edges<W>> {
        let local = MsfOptions {
            labels: false,
            ..*options
        };
        let forest = ctx.msf(&self.graph(num_vertices), &local)?;
        let positions: Vec<usize> = alloc::par_collect(
            forest.edges.par_iter().map(|&p| p as usize),
            "a rank's forest",
        )?;
        self.select(&positions)
    }
}

impl Context {
    /// The minimum spanning forest of a graph whose edges are spread over the ranks of
    /// `comm`, each rank passing its share (`local`); every rank of `comm` must call
    /// it, with the same vertex count, weight type and options. With `root: Some(r)`
    /// rank `r` receives the forest (the others `None`), with `None` every rank does.
    /// The forest is the one [`Context::msf`] gives for all the edges, ids as given.
    /// Each rank computes on its own context's tier.
    pub fn msf_mpi(
        &self,
        comm: &impl Communicator,
        local: &LocalEdges<'_>,
        options: &MsfOptions,
        root: Option<i32>,
    ) -> Result<DistributedForest> {
        let weight_code = match local.weights {
            None => 0,
            Some(w) => 1 + w.dtype() as u64,
        };
        let options_code = options.algorithm as u64 * 8
            + options.labels as u64
            + 2 * options.unweighted as u64
            + 4 * options.maximum as u64;
        let root_code = root.map_or(u64::MAX, |r| r as u64);
        agree(
            comm,
            check_same_everywhere(
                comm,
                &[
                    ("num_vertices", local.num_vertices as u64),
                    ("the weight type", weight_code),
                    ("the options", options_code),
                    ("the root", root_code),
                ],
            )
            .and_then(|()| match root {
                Some(r) if r < 0 || r >= comm.size() => Err(Error::invalid_argument(format!(
                    "root rank {r} is not a rank of this {}-rank communicator",
                    comm.size()
                ))),
                _ => Ok(()),
            }),
        )?;
        let weights = local.weights.filter(|_| !options.unweighted);
        match weights {
            None => distributed_msf::<u32>(self, comm, local, None, options, root),
            Some(Weights::I32(w)) => distributed_msf(self, comm, local, Some(w), options, root),
            Some(Weights::U32(w)) => distributed_msf(self, comm, local, Some(w), options, root),
            Some(Weights::I64(w)) => distributed_msf(self, comm, local, Some(w), options, root),
            Some(Weights::U64(w)) => distributed_msf(self, comm, local, Some(w), options, root),
            Some(Weights::F32(w)) => distributed_msf(self, comm, local, Some(w), options, root),
            Some(Weights::F64(w)) => distributed_msf(self, comm, local, Some(w), options, root),
        }
    }
}

fn distributed_msf<W: RankWeight>(
    ctx: &Context,
    comm: &impl Communicator,
    local: &LocalEdges<'_>,
    weights: Option<&[W]>,
    options: &MsfOptions,
    root: Option<i32>,
) -> Result<DistributedForest> {
    let n = local.num_vertices;
    let (rank, size) = (comm.rank(), comm.size());
    // Implicit ids continue from the ranks before this one.
    let mut first_id = 0u64;
    comm.exclusive_scan_into(
        &(local.u.len() as u64),
        &mut first_id,
        SystemOperation::sum(),
    );
    if rank == 0 {
        first_id = 0; // the exclusive scan leaves rank 0's result undefined
    }
    let started = Instant::now();
    // Host work runs on the context's CPU threads (the ranks of one host share its
    // cores), MPI calls on the caller's thread.
    let mut forest = agree(
        comm,
        ctx.on_cpu_threads(|| reduce_share(ctx, local, weights, first_id, options)),
    )?;
    let local_seconds = slowest(comm, started.elapsed().as_secs_f64());

    // Merge rounds. A rank that fails in a merge goes on taking part (sending what it
    // has), so that no rank waits forever; all learn of the failure at the end.
    let mut failure: Result<()> = Ok(());
    let mut rounds = Vec::new();
    let mut step = 1;
    while step < size {
        let started = Instant::now();
        let mut sent = (0u64, 0u64, 0u64);
        let mut communication = 0.0;
        if rank % (2 * step) == step {
            forest.send(&comm.process_at_rank(rank - step));
            communication = started.elapsed().as_secs_f64();
            sent = (1, forest.len() as u64, forest.bytes());
            forest = Edges::default();
        } else if rank % (2 * step) == 0 && rank + step < size {
            let theirs = Edges::<W>::receive(&comm.process_at_rank(rank + step));
            communication = started.elapsed().as_secs_f64();
            if failure.is_ok() {
                let mine = std::mem::take(&mut forest);
                let merged = ctx.on_cpu_threads(|| {
                    mine.merge(theirs)
                        .and_then(|both| both.view().reduce(ctx, n, options))
                });
                match merged {
                    Ok(f) => forest = f,
                    Err(e) => failure = Err(e),
                }
            }
        }
        let mut total = (0u64, 0u64, 0u64);
        for (mine, all) in [
            (sent.0, &mut total.0),
            (sent.1, &mut total.1),
            (sent.2, &mut total.2),
        ] {
            comm.all_reduce_into(&mine, all, SystemOperation::sum());
        }
        rounds.push(MergeRound {
            senders: total.0 as usize,
            edges_sent: total.1,
            bytes_sent: total.2,
            seconds: slowest(comm, started.elapsed().as_secs_f64()),
            communication_seconds: slowest(comm, communication),
        });
        step *= 2;
    }
    agree(comm, failure)?;

    // Rank 0 holds the forest: deliver it.
    let started = Instant::now();
    match root {
        Some(0) => {}
        Some(r) => {
            if rank == 0 {
                forest.send(&comm.process_at_rank(r));
            } else if rank == r {
                forest = Edges::receive(&comm.process_at_rank(0));
            }
        }
        None => broadcast(comm, &mut forest),
    }
    let delivery_seconds = slowest(comm, started.elapsed().as_secs_f64());
    let finished = match root {
        Some(r) if r != rank => Ok(None),
        // The merged edges are the forest (each merge is an MSF call): its totals and
        // labels come from its own edges, every position of them, as any MSF call
        // assembles its forest; the edges are then named by their ids.
        _ => ctx
            .on_cpu_threads(|| {
                let tier = ctx.tier_for(Operation::Msf)?;
                let positions = alloc::par_collect(
                    (0..forest.len()).into_par_iter().map(|p| p as u64),
                    "the forest's positions",
                )?;
                msf::forest_of(&forest.view().graph(n), options, positions, None, tier)
            })
            .map(|whole| {
                Some(Forest {
                    edges: std::mem::take(&mut forest.ids),
                    ..whole
                })
            }),
    };
    let forest = agree(comm, finished)?;
    Ok(DistributedForest {
        forest,
        local_seconds,
        rounds,
        delivery_seconds,
    })
}

/// The forest of this rank's share, with global ids. The share is used where it is
/// when its ids are implicit or ascending; otherwise a copy in id order is made.
fn reduce_share<W: RankWeight>(
    ctx: &Context,
    local: &LocalEdges<'_>,
    weights: Option<&[W]>,
    first_id: u64,
    options: &MsfOptions,
) -> Result<Edges<W>> {
    let m = local.u.len();
    let mismatch = |what: &str, len: usize| {
        Error::invalid_argument(format!(
            "this rank's share: u has {m} entries but {what} has {len}"
        ))
    };
    if local.v.len() != m {
        return Err(mismatch("v", local.v.len()));
    }
    if let Some(w) = weights.filter(|w| w.len() != m) {
        return Err(mismatch("weights", w.len()));
    }
    let share = View {
        u: local.u,
        v: local.v,
        weights: weights.unwrap_or(&[]),
        ids: match local.ids {
            None => Ids::From(first_id),
            Some(ids) if ids.len() != m => return Err(mismatch("ids", ids.len())),
            Some(ids) => Ids::Listed(ids),
        },
    };
    let ascending = match local.ids {
        None => true,
        Some(ids) => ids.par_windows(2).all(|w| w[0] < w[1]),
    };
    if ascending {
        return share.reduce(ctx, local.num_vertices, options);
    }
    let mut order: Vec<usize> = alloc::par_collect((0..m).into_par_iter(), "this rank's share")?;
    order.par_sort_unstable_by_key(|&i| share.ids.at(i));
    if let Some(w) = order
        .par_windows(2)
        .find_first(|w| share.ids.at(w[0]) == share.ids.at(w[1]))
    {
        return Err(Error::invalid_argument(format!(
            "this rank's share: edges {} and {} both have id {}",
            w[0].min(w[1]),
            w[0].max(w[1]),
            share.ids.at(w[0])
        )));
    }
    share
        .select(&order)?
        .view()
        .reduce(ctx, local.num_vertices, options)
}

/// The forest on rank 0 sent to every rank.
fn broadcast<W: RankWeight>(comm: &impl Communicator, forest: &mut Edges<W>) {
    let from = comm.process_at_rank(0);
    let mut lens = [forest.len() as u64, forest.weights.len() as u64];
    from.broadcast_into(&mut lens[..]);
    if comm.rank() != 0 {
        *forest = Edges {
            u: vec![0; lens[0] as usize],
            v: vec![0; lens[0] as usize],
            weights: vec![W::default(); lens[1] as usize],
            ids: vec![0; lens[0] as usize],
        };
    }
    from.broadcast_into(&mut forest.u[..]);
    from.broadcast_into(&mut forest.v[..]);
    from.broadcast_into(&mut forest.weights[..]);
    from.broadcast_into(&mut forest.ids[..]);
}

/// An error unless every rank passed the same values.
fn check_same_everywhere(comm: &impl Communicator, values: &[(&str, u64)]) -> Result<()> {
    for &(what, value) in values {
        let (mut least, mut most) = (0u64, 0u64);
        comm.all_reduce_into(&value, &mut least, SystemOperation::min());
        comm.all_reduce_into(&value, &mut most, SystemOperation::max());
        if least != most {
            return Err(Error::invalid_argument(format!(
                "the ranks disagree on {what} (values from {least} to {most}): every rank must pass the same"
            )));
        }
    }
    Ok(())
}

/// The same outcome on every rank: `mine` where no rank failed, else on every rank the
/// error of the lowest failing rank, naming it.
fn agree<T>(comm: &impl Communicator, mine: Result<T>) -> Result<T> {
    let me = if mine.is_err() { comm.rank() } else { i32::MAX };
    let mut first = i32::MAX;
    comm.all_reduce_into(&me, &mut first, SystemOperation::min());
    if first == i32::MAX {
        return mine;
    }
    let (mut status, mut message) = match &mine {
        Err(e) if comm.rank() == first => (e.status() as i32, e.message().as_bytes().to_vec()),
        _ => (0, Vec::new()),
    };
    let from = comm.process_at_rank(first);
    let mut len = message.len() as u64;
    from.broadcast_into(&mut status);
    from.broadcast_into(&mut len);
    message.resize(len as usize, 0);
    from.broadcast_into(&mut message[..]);
    let status = Status::ALL
        .get(status as usize)
        .copied()
        .unwrap_or(Status::Internal);
    Err(Error::new(
        status,
        format!("rank {first}: {}", String::from_utf8_lossy(&message)),
    ))
}

/// The largest of every rank's `seconds`.
fn slowest(comm: &impl Communicator, seconds: f64) -> f64 {
    let mut most = 0.0;
    comm.all_reduce_into(&seconds, &mut most, SystemOperation::max());
    most
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Edges with the given ids (ascending), each end and weight derived from its id.
    fn edges(ids: &[u64], weighted: bool) -> Edges<f64> {
        Edges {
            u: ids.iter().map(|&i| i as u32 * 3).collect(),
            v: ids.iter().map(|&i| i as u32 * 5 + 1).collect(),
            weights: match weighted {
                true => ids.iter().map(|&i| i as f64 * 0.5).collect(),
                false => Vec::new(),
            },
            ids: ids.to_vec(),
        }
    }

    #[test]
    fn merges_in_any_blocks_as_one_pass_does() {
        let mut s = 12345u64;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s >> 33
        };
        for case in 0..200 {
            // Two disjoint ascending id lists, interleaved, one side maybe empty.
            let (mut mine, mut theirs) = (Vec::new(), Vec::new());
            let count = next() % 60;
            for id in 0..count {
                match next() % 3 {
                    0 => mine.push(id * 2),
                    1 => theirs.push(id * 2),
                    _ => {}
                }
            }
            let mut all: Vec<u64> = mine.iter().chain(&theirs).copied().collect();
            all.sort_unstable();
            let weighted = case % 2 == 0;
            for block in [1, 2, 3, 7, 64] {
                let merged = edges(&mine, weighted)
                    .merge_in_blocks(edges(&theirs, weighted), block)
                    .expect("disjoint ids");
                let expected = edges(&all, weighted);
                assert_eq!(merged.ids, expected.ids, "case {case}, blocks of {block}");
                assert_eq!(merged.u, expected.u, "case {case}, blocks of {block}");
                assert_eq!(merged.v, expected.v, "case {case}, blocks of {block}");
                assert_eq!(merged.weights, expected.weights, "case {case}");
            }
            // The same id on both sides: the smallest such id is named, whatever the
            // blocks.
            if mine.len() > 2 && !theirs.is_empty() {
                let mut repeated = theirs.clone();
                repeated.extend([mine[1], mine[mine.len() - 1]]);
                repeated.sort_unstable();
                for block in [1, 2, 5, 64] {
                    let err = edges(&mine, weighted)
                        .merge_in_blocks(edges(&repeated, weighted), block)
                        .err()
                        .expect("an id on both sides");
                    let named = format!("edge id {} is given on two ranks", mine[1]);
                    assert!(err.message().contains(&named), "{}", err.message());
                }
            }
        }
    }
}
