//! Wang, Huang and Guo's GPU Prim, on the CPU.
//!
//! Candidate arrays as in the paper: R1 holds each outside vertex's lightest known
//! edge into the tree (its priority also names the edge, R2), R3 marks tree vertices.
//! Each step a min-reduction over R1 picks the next vertex, which joins the tree, and
//! its neighbours' candidates are updated. The min-reduction is the paper's two-level
//! one — per-block minima, then the minimum of the blocks — with the block minima
//! kept between steps, so a step costs O(blocks + block size + degree) rather than
//! O(n). A forest restarts from the lowest vertex not yet reached. The neighbour update
//! and the block scan run on all threads when they are large enough to pay for it
//! (dense graphs, the paper's setting).

use rayon::prelude::*;

use super::adjacency::Adjacency;
use super::prepare::{Prepared, Priority};
use crate::{alloc, Result};

/// Work below which a step's loops stay on one thread.
const PARALLEL_WORK: usize = 1 << 15;

struct Candidates<P> {
    /// R1: lightest edge from each outside vertex into the tree (NONE if unknown).
    lightest: Vec<P>,
    /// R3: vertices already in the tree.
    in_tree: Vec<bool>,
    block_len: usize,
    /// Per block, the smallest R1 entry and its vertex.
    block_min: Vec<(P, u32)>,
}

impl<P: Priority> Candidates<P> {
    fn new(n: usize) -> Result<Self> {
        let block_len = ((n as f64).sqrt() as usize).max(64);
        Ok(Candidates {
            lightest: alloc::filled(n, P::NONE, "Prim's candidate edges")?,
            in_tree: alloc::zeroed(n, "Prim's tree flags")?,
            block_len,
            block_min: alloc::filled(n.div_ceil(block_len), (P::NONE, 0), "Prim's block minima")?,
        })
    }

    fn refresh_block(&mut self, block: usize) {
        let start = block * self.block_len;
        let end = (start + self.block_len).min(self.lightest.len());
        let (p, i) = self.lightest[start..end]
            .iter()
            .enumerate()
            .map(|(i, &p)| (p, i))
            .min()
            .expect("blocks are not empty");
        self.block_min[block] = (p, (start + i) as u32);
    }

    /// The two-level min-reduction: the smallest candidate and its vertex.
    fn minimum(&self) -> (P, u32) {
        if self.block_min.len() >= PARALLEL_WORK {
            *self.block_min.par_iter().min().expect("at least one block")
        } else {
            *self.block_min.iter().min().expect("at least one block")
        }
    }

    fn join(&mut self, x: u32) {
        self.in_tree[x as usize] = true;
        self.lightest[x as usize] = P::NONE;
        self.refresh_block(x as usize / self.block_len);
    }
}

pub(crate) fn prim<P: Priority>(graph: &Prepared<'_, P>) -> Result<Vec<usize>> {
    let n = graph.num_vertices;
    let priority = &graph.priority[..];
    let g = Adjacency::of_edges(n, &graph.u, &graph.v)?;
    // At most n - 1 edges: pushes below never grow it.
    let mut forest = super::new_forest(n, graph.u.len())?;
    if n == 0 {
        return Ok(forest);
    }
    let mut c = Candidates::<P>::new(n)?;
    let mut lowest_unreached = 0usize;
    loop {
        let (p, x) = c.minimum();
        let x = if p == P::NONE {
            // This tree is complete: restart from the lowest vertex not yet reached.
            while lowest_unreached < n && c.in_tree[lowest_unreached] {
                lowest_unreached += 1;
            }
            if lowest_unreached == n {
                break;
            }
            lowest_unreached as u32
        } else {
            forest.push(p.position());
            x
        };
        c.join(x);
        let neighbours = g.of(x as usize);
        if neighbours.len() >= PARALLEL_WORK {
            // Dense step: propose improvements in parallel, apply them after.
            let improved: Vec<(u32, P)> = alloc::par_collect_ranges(
                neighbours.len(),
                "Prim's improved candidates",
                |range, out| {
                    out.extend(
                        neighbours[range]
                            .iter()
                            .map(|&(y, e)| (y, priority[e as usize]))
                            .filter(|&(y, q)| !c.in_tree[y as usize] && q < c.lightest[y as usize]),
                    )
                },
            )?;
            for &(y, q) in &improved {
                if q < c.lightest[y as usize] {
                    c.lightest[y as usize] = q;
                }
            }
            let mut blocks: Vec<usize> = alloc::collect(
                improved.iter().map(|&(y, _)| y as usize / c.block_len),
                "Prim's changed blocks",
            )?;
            blocks.sort_unstable();
            blocks.dedup();
            for b in blocks {
                c.refresh_block(b);
            }
        } else {
            for &(y, e) in neighbours {
                let (y, q) = (y as usize, priority[e as usize]);
                if !c.in_tree[y] && q < c.lightest[y] {
                    c.lightest[y] = q;
                    let b = y / c.block_len;
                    if q < c.block_min[b].0 {
                        c.block_min[b] = (q, y as u32);
                    }
                }
            }
        }
    }
    Ok(forest)
}
