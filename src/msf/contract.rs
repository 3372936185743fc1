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

/// The steps of a contraction that compare edges by priority, compiled once per priority
/// type; the rest of the algorithm holds them as a trait object, so it is compiled once.
pub(crate) trait EdgeOrder: Sync {
    /// Per CSR segment of `entries` (each an index into `links`), the entry whose link's
    /// edge is the lightest (None when the segment is empty): the segmented
    /// min-reduction of the papers.
    fn lightest_per_segment(
        &self,
        offsets: &[usize],
        entries: &[u32],
        links: &[Link],
    ) -> Result<Vec<Option<u32>>>;

    /// Of each run of links with the same ends in `sorted`, the lightest, in order.
    fn lightest_of_runs(&self, sorted: &[Link]) -> Result<Vec<Link>>;
}

/// Groups links by (a, b) — a radix sort on the endpoint pair — and keeps the lightest
/// of each pair; the result is sorted by `a` and simple.
pub(crate) fn merge_parallel_links(links: &mut Vec<Link>, order: &dyn EdgeOrder) -> Result<()> {
    radix_sort_by_key(links, |&(a, b, _)| ((a as u64) << 32) | b as u64)?;
    *links = order.lightest_of_runs(links)?;
    Ok(())
}

/// Edges ordered by their priorities, indexed by edge position.
pub(crate) struct ByPriority<'a, P>(pub &'a [P]);

impl<P: Priority> EdgeOrder for ByPriority<'_, P> {
    fn lightest_per_segment(
        &self,
        offsets: &[usize],
        entries: &[u32],
        links: &[Link],
    ) -> Result<Vec<Option<u32>>> {
        alloc::par_collect(
            offsets.par_windows(2).map(|w| {
                let segment = entries[w[0]..w[1]].iter().copied();
                segment.min_by_key(|&i| self.0[links[i as usize].2 as usize])
            }),
            "the lightest entry of each segment",
        )
    }

    fn lightest_of_runs(&self, sorted: &[Link]) -> Result<Vec<Link>> {
        let pair = |link: &Link| (link.0, link.1);
        // Each run is reduced by the index that starts it (priorities are unique, so
        // the lightest is one link).
        alloc::par_filter_map_indices(sorted.len(), "the merged links", |i| {
            if i > 0 && pair(&sorted[i - 1]) == pair(&sorted[i]) {
                return None;
            }
            let run = sorted[i..]
                .iter()
                .take_while(|link| pair(link) == pair(&sorted[i]));
            run.min_by_key(|link| self.0[link.2 as usize]).copied()
        })
    }
}
