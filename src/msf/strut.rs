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

use super::contract::{lightest_per_pair, lightest_per_segment, pointer_doubling, renumber, Link};
use super::prepare::{Prepared, Priority};

/// The bipartite graph of a round: edge-vertices (their two fragments and priority)
/// and, per fragment, the incident edge-vertices (CSR by counting sort on fragments).
struct Bipartite<P> {
    fragments: usize,
    edge_vertices: Vec<Link<P>>,
    offsets: Vec<usize>,
    incident: Vec<u32>,
}

impl<P: Priority> Bipartite<P> {
    fn new(fragments: usize, edge_vertices: Vec<Link<P>>) -> Self {
        let mut degree = vec![0usize; fragments + 1];
        for &(a, b, _) in &edge_vertices {
            degree[a as usize + 1] += 1;
            degree[b as usize + 1] += 1;
        }
        for f in 0..fragments {
            degree[f + 1] += degree[f];
        }
        let offsets = degree;
        let mut cursor = offsets.clone();
        let mut incident = vec![0u32; offsets[fragments]];
        for (i, &(a, b, _)) in edge_vertices.iter().enumerate() {
            for end in [a, b] {
                incident[cursor[end as usize]] = i as u32;
                cursor[end as usize] += 1;
            }
        }
        Bipartite {
            fragments,
            edge_vertices,
            offsets,
            incident,
        }
    }
}

pub(crate) fn strut<P: Priority>(graph: &Prepared<'_, P>) -> Vec<usize> {
    let edge_vertices: Vec<Link<P>> = (0..graph.u.len())
        .into_par_iter()
        .filter(|&e| graph.u[e] != graph.v[e])
        .map(|e| {
            let (a, b) = (graph.u[e].min(graph.v[e]), graph.u[e].max(graph.v[e]));
            (a, b, graph.priority[e])
        })
        .collect();
    let mut h = Bipartite::new(graph.num_vertices, lightest_per_pair(edge_vertices));
    let mut forest = Vec::with_capacity(graph.num_vertices.saturating_sub(1));
    while !h.edge_vertices.is_empty() {
        // The strut: each fragment's lightest incident edge-vertex.
        let strut: Vec<Option<u32>> =
            lightest_per_segment(&h.offsets, |i| h.edge_vertices[h.incident[i] as usize].2)
                .into_par_iter()
                .map(|i| i.map(|i| h.incident[i]))
                .collect();
        // Strut degree of each edge-vertex: how many of its two fragments picked it.
        let degree: Vec<u8> = h
            .edge_vertices
            .par_iter()
            .enumerate()
            .map(|(i, &(a, b, _))| {
                (strut[a as usize] == Some(i as u32)) as u8
                    + (strut[b as usize] == Some(i as u32)) as u8
            })
            .collect();
        forest.par_extend(
            h.edge_vertices
                .par_iter()
                .zip(&degree)
                .filter(|&(_, &d)| d > 0)
                .map(|(&(_, _, p), _)| p.position()),
        );
        // Merge fragments along the strut: a fragment's successor is the other end of
        // its strut; a zero-difference edge-vertex is a 2-cycle, rooted at its smaller
        // fragment (its first end).
        let successor: Vec<u32> = strut
            .par_iter()
            .enumerate()
            .map(|(f, s)| match *s {
                None => f as u32,
                Some(i) => {
                    let (a, b, _) = h.edge_vertices[i as usize];
                    let other = if a as usize == f { b } else { a };
                    if degree[i as usize] == 2 && (f as u32) == a {
                        f as u32
                    } else {
                        other
                    }
                }
            })
            .collect();
        let (fragment, count) = renumber(&pointer_doubling(successor));
        // Compaction.
        let survivors: Vec<Link<P>> = h
            .edge_vertices
            .into_par_iter()
            .filter_map(|(a, b, p)| {
                let (fa, fb) = (fragment[a as usize], fragment[b as usize]);
                (fa != fb).then(|| (fa.min(fb), fa.max(fb), p))
            })
            .collect();
        debug_assert!(count <= h.fragments);
        h = Bipartite::new(count, lightest_per_pair(survivors));
    }
    forest
}
