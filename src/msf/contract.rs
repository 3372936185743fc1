//! Steps shared by the contracting algorithms (Borůvka, strut): resolving successor
//! pointers into trees, numbering the trees densely, and merging parallel edges.

use rayon::prelude::*;

use super::prepare::Priority;
use super::radix::radix_sort_by_key;
use crate::{alloc, Result};

/// Follows successor pointers until every vertex points at its root (a vertex that is
/// its own successor), doubling the distance covered each round.
pub(crate) fn pointer_doubling(mut successor: Vec<u32>) -> Result<Vec<u32>> {
    loop {
        let next: Vec<u32> = alloc::par_collect(
            successor.par_iter().map(|&s| successor[s as usize]),
            "the successors",
        )?;
        if next == successor {
            return Ok(next);
        }
        successor = next;
    }
}

/// Gives each root a dense new id (in vertex order) and every vertex its root's id.
/// Returns the labels and the number of roots.
pub(crate) fn renumber(root: &[u32]) -> Result<(Vec<u32>, usize)> {
    let is_root: Vec<bool> = alloc::par_collect(
        root.par_iter().enumerate().map(|(x, &r)| r as usize == x),
        "the root flags",
    )?;
    let mut new_id: Vec<u32> = alloc::zeroed(root.len(), "the new vertex ids")?;
    let mut count = 0u32;
    for (x, &flag) in is_root.iter().enumerate() {
        new_id[x] = count;
        count += flag as u32;
    }
    let labels = alloc::par_collect(
        root.par_iter().map(|&r| new_id[r as usize]),
        "the vertex labels",
    )?;
    Ok((labels, count as usize))
}

/// An edge between two fragments: (one end, the other end, edge position).
pub(crate) type Link = (u32, u32, u32);

/// Groups links by (a, b) — a radix sort on the endpoint pair — and keeps the one of
/// smallest priority of each pair, in place; the result is sorted by `a` and simple.
pub(crate) fn merge_parallel_links<P: Priority>(
    links: &mut Vec<Link>,
    priority: &[P],
) -> Result<()> {
    radix_sort_by_key(links, |&(a, b, _)| ((a as u64) << 32) | b as u64)?;
    let mut kept = 0;
    for i in 0..links.len() {
        let same_pair =
            kept > 0 && (links[kept - 1].0, links[kept - 1].1) == (links[i].0, links[i].1);
        if !same_pair {
            links[kept] = links[i];
            kept += 1;
        } else if priority[links[i].2 as usize] < priority[links[kept - 1].2 as usize] {
            links[kept - 1] = links[i];
        }
    }
    links.truncate(kept);
    Ok(())
}

/// Per CSR segment, the position of the entry with the smallest priority (None when
/// the segment is empty): the segmented min-reduction of the papers.
pub(crate) fn lightest_per_segment<P: Priority>(
    offsets: &[usize],
    priority: impl Fn(usize) -> P + Sync,
) -> Result<Vec<Option<usize>>> {
    alloc::par_collect(
        offsets
            .par_windows(2)
            .map(|w| (w[0]..w[1]).min_by_key(|&i| priority(i))),
        "the lightest entry of each segment",
    )
}
