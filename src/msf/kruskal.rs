//! Kruskal's algorithm, sequential: the reference every other algorithm must match.

use super::prepare::{Prepared, Priority};
use super::union_find::UnionFind;
use crate::Result;

/// Positions of the forest's edges.
pub(crate) fn kruskal<P: Priority>(graph: Prepared<'_, P>) -> Result<Vec<usize>> {
    let Prepared {
        num_vertices,
        u,
        v,
        priority: mut order,
    } = graph;
    order.sort_unstable();
    let mut sets = UnionFind::new(num_vertices, u.len())?;
    // At most n - 1 edges: pushes below never grow it.
    let mut forest = super::new_forest(num_vertices, u.len())?;
    for p in order {
        let e = p.position();
        if sets.union(u[e], v[e]) {
            forest.push(e);
            if forest.len() + 1 == num_vertices {
                break;
            }
        }
    }
    Ok(forest)
}
