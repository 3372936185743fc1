//! Kruskal's algorithm, sequential: the reference every other algorithm must match.

use super::prepare::{Prepared, Priority};
use super::union_find::UnionFind;

/// Positions of the forest's edges.
pub(crate) fn kruskal<P: Priority>(graph: Prepared<'_, P>) -> Vec<usize> {
    let Prepared {
        num_vertices,
        u,
        v,
        priority: mut order,
    } = graph;
    order.sort_unstable();
    let mut sets = UnionFind::new(num_vertices);
    let mut forest = Vec::new();
    for p in order {
        let e = p.position();
        if sets.union(u[e], v[e]) {
            forest.push(e);
            if forest.len() + 1 == num_vertices {
                break;
            }
        }
    }
    forest
}
