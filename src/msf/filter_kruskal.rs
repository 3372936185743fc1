//! `auto` on the CPU: filter-Kruskal (Osipov, Sanders and Singler's idea) with radix
//! sorting and parallel filtering.
//!
//! Rather than sorting every edge, each round picks a pivot priority (from a sample)
//! below which about as many edges lie as the forest can still take, partitions the
//! live edges around it, radix-sorts only the light part and runs Kruskal on it. The
//! heavy part is then filtered in parallel: an edge whose ends are already in one
//! tree can never join the forest. What survives is the next round's input. On most
//! graphs one or two rounds see every useful edge and most edges are never sorted.

use rayon::prelude::*;

use super::prepare::{Prepared, Priority};
use super::radix::sort_by_weight;
use super::union_find::{find_shared, UnionFind};
use crate::{alloc, Result};

/// Live edge sets at most this large are simply sorted whole.
const SORT_WHOLE: usize = 1 << 17;
/// Sorted edges checked per parallel pre-filter block in the Kruskal pass.
const BLOCK: usize = 1 << 14;

pub(crate) fn filter_kruskal<P: Priority>(graph: Prepared<'_, P>) -> Result<Vec<usize>> {
    let Prepared {
        num_vertices,
        u,
        v,
        priority: mut live,
    } = graph;
    let (u, v) = (&u[..], &v[..]);
    let mut sets = UnionFind::new(num_vertices)?;
    // At most n - 1 edges: pushes below never grow it.
    let mut forest = super::new_forest(num_vertices, u.len())?;
    let wanted = num_vertices.saturating_sub(1);
    let mut round = 0u64;
    while !live.is_empty() && forest.len() < wanted {
        // The light part: everything when small, else the edges at or below a pivot.
        // Aim for twice as many light edges as the forest still lacks.
        let target = (2 * (wanted - forest.len())).max(SORT_WHOLE);
        let pivot = if target >= live.len() {
            P::NONE
        } else {
            sample_pivot(&live, target, round)
        };
        if pivot == P::NONE {
            kruskal_sorted(std::mem::take(&mut live), u, v, &mut sets, &mut forest)?;
            break;
        }
        kruskal_sorted(
            par_filter(&live, |&p| p <= pivot)?,
            u,
            v,
            &mut sets,
            &mut forest,
        )?;
        // The heavy part, less every edge that now lies inside one tree.
        sets.flatten()?;
        let parents = sets.parents();
        live = par_filter(&live, |&p| {
            let e = p.position();
            p > pivot && find_shared(parents, u[e]) != find_shared(parents, v[e])
        })?;
        round += 1;
    }
    Ok(forest)
}

/// Sorts `edges` and adds each that joins two trees. Blocks of sorted edges are
/// pre-filtered (edges already inside one tree dropped) on other threads while this
/// one links the survivors of the previous block, so the sequential unions only see
/// candidates and overlap the lookups of the next block.
fn kruskal_sorted<P: Priority>(
    mut edges: Vec<P>,
    u: &[u32],
    v: &[u32],
    sets: &mut UnionFind,
    forest: &mut Vec<usize>,
) -> Result<()> {
    sort_by_weight(&mut edges)?;
    let (parents, mut linker) = sets.split();
    // The survivors of a block; room for all of it is made first (blocks are small).
    let crossing = |block: &[P]| -> Result<Vec<usize>> {
        let mut out = alloc::with_capacity(block.len(), "a block of sorted edges")?;
        out.par_extend(block.par_iter().with_min_len(1024).filter_map(|p| {
            let e = p.position();
            (find_shared(parents, u[e]) != find_shared(parents, v[e])).then_some(e)
        }));
        Ok(out)
    };
    let mut blocks = edges.chunks(BLOCK);
    let mut candidates = blocks.next().map(crossing).transpose()?.unwrap_or_default();
    loop {
        let next = blocks.next();
        let link_all = |linker: &mut super::union_find::Linker<'_>, forest: &mut Vec<usize>| {
            for &e in &candidates {
                if linker.union(u[e], v[e]) {
                    forest.push(e);
                }
            }
        };
        match next {
            Some(block) => {
                let ((), following) =
                    rayon::join(|| link_all(&mut linker, forest), || crossing(block));
                candidates = following?;
            }
            None => {
                link_all(&mut linker, forest);
                break;
            }
        }
    }
    Ok(())
}

/// The elements of `data` that satisfy `keep`, in order.
fn par_filter<P: Priority>(data: &[P], keep: impl Fn(&P) -> bool + Sync) -> Result<Vec<P>> {
    alloc::par_collect_ranges(data.len(), "the live edges", |range, out| {
        out.extend(data[range].iter().copied().filter(|p| keep(p)))
    })
}

/// A priority with about `target` of `live` at or below it, estimated from a sample.
fn sample_pivot<P: Priority>(live: &[P], target: usize, round: u64) -> P {
    const SAMPLES: usize = 4096;
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ round.wrapping_mul(0xD1B5_4A32_D192_ED03);
    let mut sample: Vec<P> = (0..SAMPLES)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            live[(state % live.len() as u64) as usize]
        })
        .collect();
    sample.sort_unstable();
    let rank = ((target as f64 / live.len() as f64) * SAMPLES as f64) as usize;
    sample[rank.min(SAMPLES - 1)]
}
