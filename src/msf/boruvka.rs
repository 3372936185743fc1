//! Vineet, Harish, Patidar and Narayanan's recursive Borůvka (HPG'09), on the CPU.
//!
//! Each level: the lightest edge of every vertex by a segmented min-reduction over its
//! adjacency segment; successors, with 2-cycles broken at the smaller vertex; pointer
//! doubling to representatives; dense renumbering of supervertices by a scan;
//! contraction (self-edges dropped, parallel edges merged to the lightest); new
//! adjacency lists; recursion until no edge is left.

use rayon::prelude::*;

use super::adjacency::Adjacency;
use super::contract::{pointer_doubling, renumber};
use super::prepare::{Prepared, Priority};
use crate::{alloc, Result};

pub(crate) fn boruvka<P: Priority>(graph: &Prepared<'_, P>) -> Result<Vec<usize>> {
    let priority = &graph.priority[..];
    let mut g = Adjacency::of_edges(graph.num_vertices, &graph.u, &graph.v)?
        .merge_parallel_edges(priority)?;
    let mut forest = super::new_forest(graph.num_vertices, graph.u.len())?;
    while !g.entries.is_empty() {
        // Everything per vertex lives in this block, so it is freed before the next
        // level's lists are built.
        let (supervertex, count) = {
            // Lightest edge out of each vertex (segmented min-reduction).
            let lightest: Vec<Option<(u32, u32)>> = alloc::par_collect(
                (0..g.num_vertices()).into_par_iter().map(|x| {
                    g.of(x)
                        .iter()
                        .copied()
                        .min_by_key(|&(_, e)| priority[e as usize])
                }),
                "each vertex's lightest edge",
            )?;
            // Successors; each 2-cycle (both ends chose the same edge) is broken at
            // the smaller vertex, which becomes the representative; every other
            // vertex contributes its edge.
            let successor: Vec<u32> = alloc::par_collect(
                (0..lightest.len())
                    .into_par_iter()
                    .map(|x| match lightest[x] {
                        None => x as u32,
                        Some((s, _)) => match lightest[s as usize] {
                            Some((back, _)) if back as usize == x && x < s as usize => x as u32,
                            _ => s,
                        },
                    }),
                "the successors",
            )?;
            // A forest never has more than n - 1 edges, so this stays in its room.
            forest.extend(alloc::par_collect_ranges(
                lightest.len(),
                "the forest's new edges",
                |range, out| {
                    out.extend(range.filter(|&x| successor[x] as usize != x).map(|x| {
                        lightest[x]
                            .expect("a vertex with a successor has an edge")
                            .1 as usize
                    }))
                },
            )?);
            drop(lightest);
            renumber(&pointer_doubling(successor)?)?
        };
        // Contract: relabel both ends, drop edges inside a supervertex, keep the
        // lightest of parallel edges.
        let old = &g;
        g = Adjacency::build(count, old.num_vertices(), |x, emit| {
            let sx = supervertex[x];
            for &(t, e) in old.of(x) {
                let st = supervertex[t as usize];
                if sx != st {
                    emit(sx, (st, e));
                }
            }
        })?
        .merge_parallel_edges(priority)?;
    }
    Ok(forest)
}
