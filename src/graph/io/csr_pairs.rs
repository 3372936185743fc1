//! Pairing a CSR file's arcs (`.egr`) without sorting all of them.
//!
//! In a CSR the arcs of vertex `x` come before those of every later vertex, so the first
//! arc of an edge `{x, y}` with `x < y` is always in `x`'s row. When every row's arcs
//! towards later vertices are matched, group by group (same two ends), by arcs back with
//! the same multiset of weights, [`pair_arcs`](super::arcs::pair_arcs) would pair each
//! forward arc with a backward one and keep the forward arcs, in file order, as the
//! edges. So that is checked directly: each row is copied and sorted on its own (rows
//! are short, and sorting them is cheap next to one sort of every arc), and each group
//! of backward arcs is compared with its forward group, found by binary search.
//! Self-loop arcs pair among themselves, by weight, in file order, as `pair_arcs` pairs
//! them. Any mismatch is left to the general pairing, so that the error names the arc
//! exactly as before.

use rayon::prelude::*;

use super::arcs::Edges;
use crate::graph::WeightVec;
use crate::{alloc, Result};

/// Row `x` of the file: `offsets[x]..offsets[x + 1]`.
fn row(offsets: &[i32], x: usize) -> std::ops::Range<usize> {
    offsets[x] as usize..offsets[x + 1] as usize
}

/// Whether most arcs join vertices whose rows lie close together (road networks
/// numbered along the map, grids), judged from a sample. The check reads the other
/// end's row for every group of arcs, a cache miss or two per edge where ends are far
/// apart (random and R-MAT graphs), where one sort of all arcs is faster: measured on
/// the 2-core machine, NY 35 -> 16 ms and a 1024² grid 172 -> 61 ms this way, but a
/// random graph of 2^23 edges 712 -> 760 ms and R-MAT scale 20 1.41 -> 4.1 s.
fn mostly_local(offsets: &[i32], targets: &[i32]) -> bool {
    const SAMPLES: usize = 1024;
    /// Ends at most this many vertices apart count as near.
    const NEAR: usize = 1 << 15;
    let m = targets.len();
    let samples = SAMPLES.min(m);
    let near = (0..samples)
        .filter(|&s| {
            let arc = s * m / samples;
            // The row holding the arc: the last with offsets[x] <= arc.
            let x = offsets.partition_point(|&o| o as usize <= arc) - 1;
            x.abs_diff(targets[arc] as usize) < NEAR
        })
        .count();
    4 * near >= 3 * samples
}

/// Vertex ranges of about equal arc counts, a few per thread (rows stay whole).
fn vertex_ranges(offsets: &[i32]) -> Vec<std::ops::Range<usize>> {
    let n = offsets.len() - 1;
    let m = offsets[n] as u64;
    let pieces = (rayon::current_num_threads() * 8).max(1) as u64;
    let mut cuts = vec![0usize];
    for k in 1..pieces {
        let arc = (m * k / pieces) as i32;
        let x = offsets[..n].partition_point(|&o| o < arc);
        if x > *cuts.last().expect("starts with 0") {
            cuts.push(x);
        }
    }
    if n > *cuts.last().expect("starts with 0") {
        cuts.push(n);
    }
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// The edges of a validated CSR (offsets from 0 to m, never decreasing; targets in
/// range) as `pair_arcs` pairs them, or `None` when arcs do not match (the general
/// pairing then finds the arc left alone and names it).
pub(super) fn pair_csr(
    offsets: &[i32],
    targets: &[i32],
    weights: Option<&[i32]>,
) -> Result<Option<Edges>> {
    if !mostly_local(offsets, targets) {
        return Ok(None);
    }
    let m = targets.len();
    let ranges = vertex_ranges(offsets);
    // Each arc as `target << 32 | weight bits`, each row sorted.
    let mut sorted: Vec<u64> = alloc::zeroed(m, "the rows sorted for pairing")?;
    let mut pieces = Vec::with_capacity(ranges.len());
    let mut rest = &mut sorted[..];
    for r in &ranges {
        let (piece, tail) = rest.split_at_mut((offsets[r.end] - offsets[r.start]) as usize);
        pieces.push(piece);
        rest = tail;
    }
    // Per range: its forward arcs, its self-loop arcs, and those of them that are edges.
    let scanned: Vec<(usize, usize, Vec<usize>)> = pieces
        .into_par_iter()
        .zip(&ranges)
        .map(|(piece, r)| {
            let base = offsets[r.start] as usize;
            let (mut forward, mut loops, mut loop_edges) = (0, 0, Vec::new());
            for x in r.clone() {
                let arcs = row(offsets, x);
                let keys = &mut piece[arcs.start - base..arcs.end - base];
                let mut has_loop = false;
                for (key, a) in keys.iter_mut().zip(arcs.clone()) {
                    let t = targets[a] as usize;
                    forward += (t > x) as usize;
                    has_loop |= t == x;
                    *key = (t as u64) << 32 | weights.map_or(0, |w| w[a] as u32 as u64);
                }
                keys.sort_unstable();
                if has_loop {
                    loops += self_loop_edges(x, arcs, targets, weights, &mut loop_edges);
                }
            }
            (forward, loops, loop_edges)
        })
        .collect();
    let forward: usize = scanned.iter().map(|s| s.0).sum();
    let loops: usize = scanned.iter().map(|s| s.1).sum();
    if 2 * forward + loops != m {
        return Ok(None);
    }
    // Every group of backward arcs (row y, target x < y) against x's arcs towards y.
    let sorted_row = |x: usize| &sorted[row(offsets, x)];
    let target_of = |key: u64| (key >> 32) as usize;
    let matched = ranges.par_iter().all(|r| {
        r.clone().all(|y| {
            let mut backward = sorted_row(y);
            while let Some(&first) = backward.first() {
                let x = target_of(first);
                if x > y {
                    break;
                }
                let len = backward.partition_point(|&k| target_of(k) == x);
                let (group, later) = backward.split_at(len);
                backward = later;
                let candidates = sorted_row(x);
                let start = candidates.partition_point(|&k| target_of(k) < y);
                let towards_y = &candidates[start..];
                let towards_y = &towards_y[..towards_y.partition_point(|&k| target_of(k) == y)];
                let weight_bits = |k: &u64| *k as u32;
                if !group
                    .iter()
                    .map(weight_bits)
                    .eq(towards_y.iter().map(weight_bits))
                {
                    return false;
                }
            }
            true
        })
    });
    if !matched {
        return Ok(None);
    }
    drop(sorted);
    // The forward arcs and the self-loop edges in file order, each range into its own
    // part of the result.
    const EDGES: &str = "the edges paired";
    let edges = scanned.iter().map(|s| s.0 + s.2.len()).sum();
    let mut u: Vec<u32> = alloc::zeroed(edges, EDGES)?;
    let mut v: Vec<u32> = alloc::zeroed(edges, EDGES)?;
    let mut w: Vec<i32> = alloc::zeroed(if weights.is_some() { edges } else { 0 }, EDGES)?;
    let mut parts = Vec::with_capacity(ranges.len());
    let (mut u_rest, mut v_rest, mut w_rest) = (&mut u[..], &mut v[..], &mut w[..]);
    for (forward, _, loop_edges) in &scanned {
        let count = forward + loop_edges.len();
        let (u_part, u_tail) = u_rest.split_at_mut(count);
        let (v_part, v_tail) = v_rest.split_at_mut(count);
        let (w_part, w_tail) = w_rest.split_at_mut(if weights.is_some() { count } else { 0 });
        parts.push((u_part, v_part, w_part, &loop_edges[..]));
        (u_rest, v_rest, w_rest) = (u_tail, v_tail, w_tail);
    }
    parts
        .into_par_iter()
        .zip(&ranges)
        .for_each(|((u, v, w, mut loop_edges), r)| {
            let mut at = 0;
            for x in r.clone() {
                for a in row(offsets, x) {
                    let t = targets[a] as usize;
                    let is_edge = t > x || (t == x && loop_edges.first() == Some(&a));
                    if t == x && is_edge {
                        loop_edges = &loop_edges[1..];
                    }
                    if is_edge {
                        u[at] = x as u32;
                        v[at] = t as u32;
                        if let Some(weights) = weights {
                            w[at] = weights[a];
                        }
                        at += 1;
                    }
                }
            }
        });
    Ok(Some((u, v, weights.map(|_| WeightVec::I32(w)))))
}

/// The self-loop arcs of row `x` that are edges, appended to `edges` in file order:
/// arcs of equal weight pair in file order, and each pair (or a last odd arc) is one
/// edge at its first arc. Returns the row's number of self-loop arcs.
fn self_loop_edges(
    x: usize,
    arcs: std::ops::Range<usize>,
    targets: &[i32],
    weights: Option<&[i32]>,
    edges: &mut Vec<usize>,
) -> usize {
    let mut loops: Vec<(i32, usize)> = arcs
        .filter(|&a| targets[a] as usize == x)
        .map(|a| (weights.map_or(0, |w| w[a]), a))
        .collect();
    loops.sort_unstable();
    let first = edges.len();
    let mut i = 0;
    while i < loops.len() {
        let j = i + loops[i..].partition_point(|l| l.0 == loops[i].0);
        edges.extend(loops[i..j].iter().step_by(2).map(|l| l.1));
        i = j;
    }
    edges[first..].sort_unstable();
    loops.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::io::arcs::pair_arcs;

    /// A CSR holding both arcs of `edges` (self-loops: as many arcs as listed), each
    /// row in an order picked by `shuffle`.
    fn csr(
        n: usize,
        arcs: &[(u32, u32, i32)],
        shuffle: &mut impl FnMut(usize) -> usize,
    ) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
        let mut rows: Vec<Vec<(i32, i32)>> = vec![Vec::new(); n];
        for &(x, y, w) in arcs {
            rows[x as usize].push((y as i32, w));
        }
        let (mut offsets, mut targets, mut weights) = (vec![0], Vec::new(), Vec::new());
        for row in &mut rows {
            for i in (1..row.len()).rev() {
                row.swap(i, shuffle(i + 1));
            }
            targets.extend(row.iter().map(|a| a.0));
            weights.extend(row.iter().map(|a| a.1));
            offsets.push(targets.len() as i32);
        }
        (offsets, targets, weights)
    }

    fn general(offsets: &[i32], targets: &[i32], weights: Option<&[i32]>) -> Option<Edges> {
        let src = (0..offsets.len() - 1)
            .flat_map(|x| std::iter::repeat_n(x as u32, (offsets[x + 1] - offsets[x]) as usize))
            .collect();
        let dst = targets.iter().map(|&t| t as u32).collect();
        pair_arcs(src, dst, weights.map(|w| WeightVec::I32(w.to_vec()))).ok()
    }

    #[test]
    fn pairs_as_the_general_pairing_does_or_declines() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        };
        let (mut fast, mut declined) = (0, 0);
        for case in 0..3000 {
            let n = 1 + next(12);
            let mut arcs = Vec::new();
            for _ in 0..next(3 * n + 1) {
                let (x, y, w) = (next(n) as u32, next(n) as u32, next(3) as i32 - 1);
                arcs.push((x, y, w));
                if x != y || next(2) == 0 {
                    arcs.push((y, x, w)); // a self-loop may have one arc or two
                }
            }
            match case % 4 {
                // Break the symmetry: one arc less, or one weight changed.
                1 if !arcs.is_empty() => {
                    arcs.remove(next(arcs.len()));
                }
                2 if !arcs.is_empty() => {
                    let i = next(arcs.len());
                    arcs[i].2 += 1;
                }
                _ => {}
            }
            let (offsets, targets, weights) = csr(n, &arcs, &mut next);
            for weights in [Some(&weights[..]), None] {
                let expected = general(&offsets, &targets, weights);
                match pair_csr(&offsets, &targets, weights).unwrap() {
                    Some(edges) => {
                        assert_eq!(Some(edges), expected, "case {case}: {arcs:?}");
                        fast += 1;
                    }
                    None => {
                        // Only for arcs the general pairing rejects.
                        assert!(expected.is_none(), "case {case} declined: {arcs:?}");
                        declined += 1;
                    }
                }
            }
        }
        assert!(
            fast > 2000 && declined > 500,
            "fast {fast}, declined {declined}"
        );
    }

    #[test]
    fn far_apart_ends_are_left_to_the_general_pairing() {
        // Every arc joins vertices 2^16 apart: not local, so declined though paired.
        let n = 1 << 17;
        let half = (n / 2) as u32;
        let arcs: Vec<(u32, u32, i32)> = (0..half)
            .flat_map(|x| [(x, x + half, 1), (x + half, x, 1)])
            .collect();
        let (offsets, targets, weights) = csr(n, &arcs, &mut |_| 0);
        assert!(pair_csr(&offsets, &targets, Some(&weights))
            .unwrap()
            .is_none());
        assert!(general(&offsets, &targets, Some(&weights)).is_some());
    }
}
