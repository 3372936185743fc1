//! Steps shared by the contracting algorithms (Borůvka, strut): resolving successor
//! pointers into trees, numbering the trees densely, and merging parallel edges.

use rayon::prelude::*;

use super::prepare::Priority;
use super::radix::radix_sort_by;

/// Follows successor pointers until every vertex points at its root (a vertex that is
/// its own successor), doubling the distance covered each round.
pub(crate) fn pointer_doubling(mut successor: Vec<u32>) -> Vec<u32> {
    loop {
        let next: Vec<u32> = successor
            .par_iter()
            .map(|&s| successor[s as usize])
            .collect();
        if next == successor {
            return next;
        }
        successor = next;
    }
}

/// Gives each root a dense new id (in vertex order) and every vertex its root's id.
/// Returns the labels and the number of roots.
pub(crate) fn renumber(root: &[u32]) -> (Vec<u32>, usize) {
    let is_root: Vec<bool> = root
        .par_iter()
        .enumerate()
        .map(|(x, &r)| r as usize == x)
        .collect();
    let mut new_id = vec![0u32; root.len()];
    let mut count = 0u32;
    for (x, &flag) in is_root.iter().enumerate() {
        new_id[x] = count;
        count += flag as u32;
    }
    let labels = root.par_iter().map(|&r| new_id[r as usize]).collect();
    (labels, count as usize)
}

/// An edge between two (super)vertices with its priority.
pub(crate) type Link<P> = (u32, u32, P);

/// Groups links by (a, b) — a radix sort on the endpoint pair — and keeps the
/// lightest of each pair, so the result is sorted by `a` (CSR order) and simple.
pub(crate) fn lightest_per_pair<P: Priority>(mut links: Vec<Link<P>>) -> Vec<Link<P>> {
    radix_sort_by(&mut links, 0, 64, |&(a, b, _), shift| {
        (((a as u64) << 32) | b as u64) >> shift
    });
    // Runs of equal (a, b): keep the first link holding the run's minimum.
    let starts: Vec<usize> = (0..links.len())
        .into_par_iter()
        .filter(|&i| i == 0 || (links[i - 1].0, links[i - 1].1) != (links[i].0, links[i].1))
        .collect();
    (0..starts.len())
        .into_par_iter()
        .map(|r| {
            let end = starts.get(r + 1).copied().unwrap_or(links.len());
            *links[starts[r]..end]
                .iter()
                .min_by_key(|l| l.2)
                .expect("runs are not empty")
        })
        .collect()
}

/// Per CSR segment, the position of the entry with the smallest priority (None when
/// the segment is empty): the segmented min-reduction of the papers.
pub(crate) fn lightest_per_segment<P: Priority>(
    offsets: &[usize],
    priority: impl Fn(usize) -> P + Sync,
) -> Vec<Option<usize>> {
    offsets
        .par_windows(2)
        .map(|w| (w[0]..w[1]).min_by_key(|&i| priority(i)))
        .collect()
}
