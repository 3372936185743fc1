//! Vasconcellos, Cáceres et al.'s MST without list ranking (BSP/CGM), on the CPU.
//!
//! The graph is held as a bipartite graph: fragment vertices on one side, one
//! edge-vertex per edge on the other, each edge-vertex joined to its two endpoint
//! fragments. Each round every fragment picks its lightest incident edge-vertex (its
//! strut). Every edge-vertex picked at least once joins the forest; one picked from
//! both sides has "zero difference", and there is exactly one per tree of the strut
//! forest, so their count is the number of fragments after the round. The fragments
//! are merged, and the bipartite graph is compacted: edge-vertices inside a fragment
//! are dropped, parallel ones merged to the lightest, and both sides renumbered.

use rayon::prelude::*;

use super::adjacency::Grouped;
use super::contract::{
    merge_parallel_links, pointer_doubling, renumber, ByPriority, EdgeOrder, Link,
};
use super::prepare::{Prepared, Priority};
use crate::{alloc, Result};

pub(crate) fn strut<P: Priority>(graph: &Prepared<'_, P>) -> Result<Vec<usize>> {
    let order = ByPriority(&graph.priority[..]);
    strut_by(graph.num_vertices, &graph.u, &graph.v, &order)
}

/// The algorithm over edges `u[e]`-`v[e]` on `n` vertices in edge order `order` (one
/// compiled copy for every priority type).
fn strut_by(n: usize, u: &[u32], v: &[u32], order: &dyn EdgeOrder) -> Result<Vec<usize>> {
    // One edge-vertex per edge that is not a self-loop, joined to its two fragments.
    let mut edge_vertices: Vec<Link> =
        alloc::par_collect_ranges(u.len(), "the edge-vertices", |range, out| {
            out.extend(
                range
                    .filter(|&e| u[e] != v[e])
                    .map(|e| (u[e].min(v[e]), u[e].max(v[e]), e as u32)),
            )
        })?;
    let mut fragments = n;
    let mut forest = super::new_forest(fragments, u.len())?;
    while !edge_vertices.is_empty() {
        // The strut: each fragment's lightest incident edge-vertex, over each
        // fragment's incidence list (a counting scatter, as the paper's counting sort,
        // on all cores; the order inside a list does not matter: priorities are unique).
        let strut: Vec<Option<u32>> = {
            let incidence = Grouped::build(fragments, edge_vertices.len(), |i, emit| {
                let (a, b, _) = edge_vertices[i];
                emit(a, i as u32);
                emit(b, i as u32);
            })?;
            order.lightest_per_segment(&incidence.offsets, &incidence.entries, &edge_vertices)?
        };
        // Strut degree of each edge-vertex: how many of its two fragments picked it.
        let degree: Vec<u8> = alloc::par_collect(
            edge_vertices.par_iter().enumerate().map(|(i, &(a, b, _))| {
                (strut[a as usize] == Some(i as u32)) as u8
                    + (strut[b as usize] == Some(i as u32)) as u8
            }),
            "the strut degrees",
        )?;
        // A forest never has more than n - 1 edges, so this stays in its room.
        forest.extend(alloc::par_collect_ranges(
            edge_vertices.len(),
            "the forest's new edges",
            |range, out| {
                out.extend(
                    range
                        .filter(|&i| degree[i] > 0)
                        .map(|i| edge_vertices[i].2 as usize),
                )
            },
        )?);
        // Merge fragments along the strut: a fragment's successor is the other end of
        // its strut; a zero-difference edge-vertex is a 2-cycle, rooted at its smaller
        // fragment (its first end).
        let successor: Vec<u32> = alloc::par_collect(
            strut.par_iter().enumerate().map(|(f, s)| match *s {
                None => f as u32,
                Some(i) => {
                    let (a, b, _) = edge_vertices[i as usize];
                    let other = if a as usize == f { b } else { a };
                    if degree[i as usize] == 2 && (f as u32) == a {
                        f as u32
                    } else {
                        other
                    }
                }
            }),
            "the successors",
        )?;
        drop((strut, degree));
        let (fragment, count) = renumber(&pointer_doubling(successor)?)?;
        // Compaction: relabel, drop edge-vertices inside a fragment, merge parallel
        // ones to the lightest.
        edge_vertices.par_iter_mut().for_each(|link| {
            let (fa, fb) = (fragment[link.0 as usize], fragment[link.1 as usize]);
            *link = (fa.min(fb), fa.max(fb), link.2);
        });
        edge_vertices =
            alloc::par_filter(&edge_vertices, "the edge-vertices", |&(a, b, _)| a != b)?;
        merge_parallel_links(&mut edge_vertices, order)?;
        fragments = count;
    }
    Ok(forest)
}
