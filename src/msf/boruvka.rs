//! Vineet, Harish, Patidar and Narayanan's recursive Borůvka (HPG'09), on the CPU.
//!
//! Each level: the lightest edge of every vertex by a segmented min-reduction over its
//! CSR segment; successors, with 2-cycles broken at the smaller vertex; pointer
//! doubling to representatives; dense renumbering of supervertices by a scan;
//! contraction (self-edges dropped, parallel edges merged to the lightest by a sort);
//! a new CSR; recursion until no edge is left.

use rayon::prelude::*;

use super::contract::{
    lightest_per_pair, lightest_per_segment, offsets_of_sorted, pointer_doubling, renumber, Link,
};
use super::prepare::{Prepared, Priority};

pub(crate) fn boruvka<P: Priority>(graph: &Prepared<'_, P>) -> Vec<usize> {
    // Both directions of every edge that is not a self-loop.
    let links: Vec<Link<P>> = (0..graph.u.len())
        .into_par_iter()
        .filter(|&e| graph.u[e] != graph.v[e])
        .flat_map_iter(|e| {
            let (a, b, p) = (graph.u[e], graph.v[e], graph.priority[e]);
            [(a, b, p), (b, a, p)]
        })
        .collect();
    let mut links = lightest_per_pair(links);
    let mut n = graph.num_vertices;
    let mut forest = Vec::with_capacity(n.saturating_sub(1));
    while !links.is_empty() {
        let offsets = offsets_of_sorted(&links, n);
        // Lightest edge out of each vertex (segmented min-reduction).
        let lightest = lightest_per_segment(&offsets, |i| links[i].2);
        let successor: Vec<u32> = lightest
            .par_iter()
            .enumerate()
            .map(|(x, l)| l.map_or(x as u32, |i| links[i].1))
            .collect();
        // Break each 2-cycle (both ends chose the same edge) at the smaller vertex,
        // which becomes the representative; every other vertex contributes its edge.
        let successor: Vec<u32> = successor
            .par_iter()
            .enumerate()
            .map(|(x, &s)| {
                if successor[s as usize] as usize == x && x < s as usize {
                    x as u32
                } else {
                    s
                }
            })
            .collect();
        forest.par_extend(
            lightest
                .par_iter()
                .enumerate()
                .filter(|&(x, _)| successor[x] as usize != x)
                .map(|(_, l)| {
                    links[l.expect("a vertex with a successor has an edge")]
                        .2
                        .position()
                }),
        );
        let (supervertex, count) = renumber(&pointer_doubling(successor));
        // Contract: relabel both ends, drop edges inside a supervertex, keep the
        // lightest of parallel edges.
        let contracted: Vec<Link<P>> = links
            .into_par_iter()
            .filter_map(|(a, b, p)| {
                let (sa, sb) = (supervertex[a as usize], supervertex[b as usize]);
                (sa != sb).then_some((sa, sb, p))
            })
            .collect();
        links = lightest_per_pair(contracted);
        n = count;
    }
    forest
}
