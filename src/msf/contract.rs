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
/// Returns the labels and the number of roots. Ranges of vertices count their roots,
/// then number them from their range's first id, in parallel.
pub(crate) fn renumber(root: &[u32]) -> Result<(Vec<u32>, usize)> {
    const RANGE: usize = 1 << 16;
    let is_root = |x: usize| root[x] as usize == x;
    let ranges = root.len().div_ceil(RANGE);
    let range = |r: usize| r * RANGE..root.len().min((r + 1) * RANGE);
    let roots_in: Vec<u32> = alloc::par_collect(
        (0..ranges)
            .into_par_iter()
            .map(|r| range(r).filter(|&x| is_root(x)).count() as u32),
        "the root counts",
    )?;
    let mut first_id: Vec<u32> = alloc::with_capacity(ranges, "the first root ids")?;
    let mut count = 0u32;
    for &roots in &roots_in {
        first_id.push(count);
        count += roots;
    }
    let mut new_id: Vec<u32> = alloc::zeroed(root.len(), "the new vertex ids")?;
    new_id
        .par_chunks_mut(RANGE)
        .zip(first_id.par_iter())
        .enumerate()
        .for_each(|(r, (ids, &first))| {
            let mut next = first;
            for (id, x) in ids.iter_mut().zip(range(r)) {
                *id = next;
                next += is_root(x) as u32;
            }
        });
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
    let sorted = &links[..];
    let pair = |link: &Link| (link.0, link.1);
    // Each run of one pair is reduced by the index that starts it (priorities are
    // unique, so the lightest is one link).
    let merged = alloc::par_filter_map_indices(sorted.len(), "the merged links", |i| {
        if i > 0 && pair(&sorted[i - 1]) == pair(&sorted[i]) {
            return None;
        }
        let lightest = sorted[i..]
            .iter()
            .take_while(|link| pair(link) == pair(&sorted[i]))
            .min_by_key(|link| priority[link.2 as usize]);
        lightest.copied()
    })?;
    *links = merged;
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
