//! Disjoint sets over vertex ids.
//!
//! Parents are atomics so that other threads may look up representatives while one
//! thread links sets (Kruskal's pipelined pre-filter). That is safe because a lookup
//! only follows parent pointers, which always stay inside a set, and sets only ever
//! merge: two lookups that meet at one vertex prove the ends are connected, and a
//! stale lookup can only miss a connection, never invent one.
//!
//! Roots are linked by index (the larger under the smaller) with path halving: one
//! array and no rank, which measured faster than union by rank on every benchmark
//! graph because each union touches less memory. So a set built by `union` alone has
//! its smallest vertex as root (component labels rely on that); Borůvka's [`hook`]s
//! join roots in any order.
//!
//! Each slot stores `parent ^ vertex`, so that all-zero memory is n singletons: the
//! array comes from `calloc`-like memory and only the pages of vertices that edges
//! touch are ever written (a huge declared vertex count with few edges costs address
//! space, not memory).

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use crate::{alloc, kept, Result};

pub(crate) struct UnionFind {
    parent: Vec<AtomicU32>,
    /// Whether the parents go back to `kept` when dropped (see `Drop`).
    keep: bool,
}

/// Representative of `x`, without modifying anything (any thread, any time).
#[inline]
pub(crate) fn find_shared(parent: &[AtomicU32], mut x: u32) -> u32 {
    loop {
        let p = parent_of(parent, x);
        if p == x {
            return x;
        }
        x = p;
    }
}

impl UnionFind {
    /// `n` singletons (4 bytes per vertex, written only when linked), for a graph of
    /// `edges` edges.
    pub fn new(n: usize, edges: usize) -> Result<Self> {
        Ok(UnionFind {
            parent: kept::zeroed(n, "the union-find parents")?,
            // Clearing the parents for the next call reads all of them: worth it where
            // the edges can touch most vertices, not for a huge declared vertex count
            // that few edges touch.
            keep: n <= edges.saturating_mul(2),
        })
    }

    /// The parent array, for lookups from other threads with [`find_shared`].
    pub fn parents(&self) -> &[AtomicU32] {
        &self.parent
    }

    /// Joins the sets of `a` and `b`; false if they were already one.
    #[inline]
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        link(&self.parent, a, b)
    }

    /// Splits into the shared parents (for lookups elsewhere) and the one linker.
    pub fn split(&mut self) -> (&[AtomicU32], Linker<'_>) {
        (
            &self.parent,
            Linker {
                parent: &self.parent,
            },
        )
    }

    /// Points every element straight at its root, so later lookups take one step, and
    /// returns every element's root (one read where a lookup takes two).
    pub fn flatten(&mut self) -> Result<Vec<u32>> {
        let parent = &self.parent;
        let roots: Vec<u32> = alloc::par_collect(
            (0..parent.len() as u32)
                .into_par_iter()
                .map(|x| find_shared(parent, x)),
            "the union-find roots",
        )?;
        roots
            .par_iter()
            .enumerate()
            .for_each(|(x, &r)| set_parent(parent, x as u32, r));
        Ok(roots)
    }
}

impl Drop for UnionFind {
    /// The parents are kept for the next call (`kept`), all singletons again, where
    /// `new` chose to keep them; only the slots that were written are written back.
    fn drop(&mut self) {
        if !self.keep {
            return;
        }
        kept::keep_cleared(std::mem::take(&mut self.parent), |parents| {
            parents.par_chunks_mut(1 << 14).for_each(|slots| {
                for slot in slots {
                    if *slot.get_mut() != 0 {
                        *slot.get_mut() = 0;
                    }
                }
            })
        });
    }
}

/// The one thread allowed to link sets while others look up representatives (it
/// borrows the union-find mutably, so there is never a second one).
pub(crate) struct Linker<'a> {
    parent: &'a [AtomicU32],
}

impl Linker<'_> {
    #[inline]
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        link(self.parent, a, b)
    }
}

/// Representative of `x`, halving the path on the way. It writes only to non-roots,
/// each time an ancestor of the element, so concurrent lookups stay valid; and while no
/// thread links, any number of threads may halve paths at once (Borůvka's passes).
#[inline]
pub(crate) fn find_halving(parent: &[AtomicU32], mut x: u32) -> u32 {
    loop {
        let p = parent_of(parent, x);
        if p == x {
            return x;
        }
        let grandparent = parent_of(parent, p);
        if grandparent == p {
            // No write where nothing would change: a store takes the cache line
            // from every other core reading it.
            return p;
        }
        set_parent(parent, x, grandparent);
        x = grandparent;
    }
}

/// Makes the root `tree` a child of `joins`, for Borůvka's hooks: many threads may
/// hook at once, as long as each hooks a different root, no hook closes a cycle, and
/// nothing looks up representatives meanwhile.
#[inline]
pub(crate) fn hook(parent: &[AtomicU32], tree: u32, joins: u32) {
    set_parent(parent, tree, joins)
}

/// Points `x` straight at its root, for Borůvka's hooked trees once every hook of a
/// round is in place: while nothing links, any number of threads may do this at once
/// (every write, here and in the halving, stores an ancestor, and roots stay roots).
#[inline]
pub(crate) fn point_at_root(parent: &[AtomicU32], x: u32) {
    let p = parent_of(parent, x);
    let root = find_halving(parent, p);
    if root != p {
        set_parent(parent, x, root)
    }
}

#[inline(always)]
fn parent_of(parent: &[AtomicU32], x: u32) -> u32 {
    parent[x as usize].load(Relaxed) ^ x
}

#[inline(always)]
fn set_parent(parent: &[AtomicU32], x: u32, p: u32) {
    parent[x as usize].store(p ^ x, Relaxed)
}

#[inline]
fn link(parent: &[AtomicU32], a: u32, b: u32) -> bool {
    let (ra, rb) = (find_halving(parent, a), find_halving(parent, b));
    if ra == rb {
        return false;
    }
    let (low, high) = (ra.min(rb), ra.max(rb));
    set_parent(parent, high, low);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A union-find's parents are kept when it goes, and the next one made from them
    /// is all singletons again.
    #[test]
    fn a_dropped_union_find_comes_back_as_singletons() {
        let _holder = kept::Holder::new();
        let n = 4321;
        let mut sets = UnionFind::new(n, n).unwrap();
        for x in (0..n as u32 - 7).step_by(3) {
            sets.union(x, x + 7);
        }
        assert_ne!(
            find_shared(sets.parents(), 4000),
            4000,
            "some links were made"
        );
        let at = sets.parents().as_ptr();
        drop(sets);
        assert!(kept::holds(at), "the parents were kept");
        let again = UnionFind::new(n, n).unwrap();
        let parents = again.parents();
        assert!((0..n as u32).all(|x| find_shared(parents, x) == x));
    }

    /// A huge declared vertex count that few edges touch is not read through to clear
    /// its parents: they are freed, not kept.
    #[test]
    fn sparse_parents_are_not_kept() {
        let _holder = kept::Holder::new();
        let mut sets = UnionFind::new(1 << 20, 3).unwrap();
        sets.union(5, 9);
        let at = sets.parents().as_ptr();
        drop(sets);
        assert!(!kept::holds(at));
    }
}
