//! `auto` on the CPU: Kruskal over radix-sorted priorities, where each block of
//! edges is first filtered in parallel (edges inside one current tree are dropped by
//! read-only finds) and only the survivors go through the sequential unions.

use rayon::prelude::*;

use super::prepare::{Prepared, Priority};
use super::radix::radix_sort;
use super::union_find::UnionFind;

/// Edges per filtered block.
const BLOCK: usize = 1 << 16;

pub(crate) fn filter_kruskal<P: Priority>(graph: Prepared<'_, P>) -> Vec<usize> {
    let Prepared {
        num_vertices,
        u,
        v,
        mut priority,
        ..
    } = graph;
    radix_sort(&mut priority);
    let mut sets = UnionFind::new(num_vertices);
    let mut forest = Vec::with_capacity(num_vertices.saturating_sub(1));
    let target = num_vertices.saturating_sub(1);
    for block in priority.chunks(BLOCK) {
        if forest.len() == target {
            break;
        }
        let shared = &sets;
        let crossing: Vec<usize> = block
            .par_iter()
            .with_min_len(4096)
            .filter_map(|p| {
                let e = p.position();
                (shared.find_shared(u[e]) != shared.find_shared(v[e])).then_some(e)
            })
            .collect();
        for e in crossing {
            if sets.union(u[e], v[e]) {
                forest.push(e);
            }
        }
    }
    forest
}
