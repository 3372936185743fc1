//! Kruskal's algorithm, sequential: the reference every other algorithm must match.

use super::prepare::{Prepared, Priority};
use super::union_find::UnionFind;

/// Positions of the forest's edges.
pub(crate) fn kruskal<P: Priority>(graph: &Prepared<P>) -> Vec<usize> {
    let mut order = graph.priority.clone();
    order.sort_unstable();
    let mut sets = UnionFind::new(graph.num_vertices);
    let mut forest = Vec::new();
    for p in order {
        let e = p.position();
        if sets.union(graph.u[e], graph.v[e]) {
            forest.push(e);
            if forest.len() + 1 == graph.num_vertices {
                break;
            }
        }
    }
    forest
}
