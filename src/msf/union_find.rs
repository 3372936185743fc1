//! Disjoint sets over vertex ids.

/// Sequential union-find with union by size and path halving.
pub(crate) struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    pub fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u64).map(|x| x as u32).collect(),
            size: vec![1; n],
        }
    }

    /// Representative of `x`, shortening the path on the way.
    #[inline]
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grandparent = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grandparent;
            x = grandparent;
        }
        x
    }

    /// Representative of `x` without modifying anything (safe to run from many
    /// threads on a shared borrow).
    #[inline]
    pub fn find_shared(&self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            x = self.parent[x as usize];
        }
        x
    }

    /// Points every element straight at its root, so later shared finds take one step.
    pub fn flatten(&mut self) {
        let roots: Vec<u32> = {
            use rayon::prelude::*;
            let shared = &*self;
            (0..self.parent.len() as u32)
                .into_par_iter()
                .map(|x| shared.find_shared(x))
                .collect()
        };
        self.parent = roots;
    }

    /// Joins the sets of `a` and `b`; false if they were already one.
    #[inline]
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (mut ra, mut rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        if self.size[ra as usize] < self.size[rb as usize] {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb as usize] = ra;
        self.size[ra as usize] += self.size[rb as usize];
        true
    }
}
