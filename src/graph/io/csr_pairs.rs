//! Pairing a CSR file's arcs (`.egr`) without sorting all of them.
//!
//! In a CSR the arcs of vertex `x` come before those of every later vertex, so the first
//! arc of an edge `{x, y}` with `x < y` is always in `x`'s row. When every row's arcs
//! towards later vertices are matched, group by group (same two ends), by arcs back with
//! the same multiset of weights, [`pair_arcs`](super::arcs::pair_arcs) would pair each
//! forward arc with a backward one and keep the forward arcs, in file order, as the
//! edges. So that is checked directly: each row is copied and sorted on its own (rows
//! are short, and sorting them is cheap next to one sort of every arc), and each row's
//! backward arcs are compared with the forward arcs into it: found by binary search in
//! the other end's row where ends are near ([`match_by_search`]), or bucketed by target
//! first where they are far apart ([`match_by_buckets`]). Self-loop arcs pair among themselves, by weight, in file order, as `pair_arcs` pairs
//! them. Any mismatch is left to the general pairing, so that the error names the arc
//! exactly as before.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use super::arcs::Edges;
use crate::graph::WeightVec;
use crate::{alloc, Result};

/// Row `x` of the file: `offsets[x]..offsets[x + 1]`.
fn row(offsets: &[i32], x: usize) -> std::ops::Range<usize> {
    offsets[x] as usize..offsets[x + 1] as usize
}

/// Whether most arcs join vertices whose rows lie close together (road networks
/// numbered along the map, grids), judged from a sample. The search reads the other
/// end's row for every group of arcs, a cache miss or two per edge where ends are far
/// apart (random and R-MAT graphs), where the buckets' scatter is cheaper; where ends
/// are near, the search is. Load times on the 2-core machine, search / buckets: NY 18 /
/// 26 ms, a 1024² grid 57 / 84-99 ms, a random graph of 2^23 edges 0.76 / 0.43-0.46 s,
/// R-MAT scale 20 4.1 / 0.84 s.
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

/// `data` cut into consecutive pieces of these lengths (they must not sum past it).
fn split_by_lengths<T>(mut data: &mut [T], lengths: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut pieces = Vec::new();
    for len in lengths {
        let (piece, rest) = std::mem::take(&mut data).split_at_mut(len);
        pieces.push(piece);
        data = rest;
    }
    pieces
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
    pair_csr_checking(offsets, targets, weights, mostly_local(offsets, targets))
}

/// [`pair_csr`], its groups checked by binary search or by buckets.
fn pair_csr_checking(
    offsets: &[i32],
    targets: &[i32],
    weights: Option<&[i32]>,
    by_search: bool,
) -> Result<Option<Edges>> {
    let m = targets.len();
    let ranges = vertex_ranges(offsets);
    // Each arc as `target << 32 | weight bits`, each row sorted.
    let mut sorted: Vec<u64> = alloc::zeroed(m, "the rows sorted for pairing")?;
    let pieces = split_by_lengths(
        &mut sorted,
        ranges
            .iter()
            .map(|r| (offsets[r.end] - offsets[r.start]) as usize),
    );
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
    let matched = if by_search {
        match_by_search(offsets, &sorted, &ranges)
    } else {
        match_by_buckets(offsets, &sorted, &ranges)?
    };
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
    let counts = || scanned.iter().map(|s| s.0 + s.2.len());
    let u_parts = split_by_lengths(&mut u, counts());
    let v_parts = split_by_lengths(&mut v, counts());
    let w_parts = split_by_lengths(
        &mut w,
        counts().map(|c| if weights.is_some() { c } else { 0 }),
    );
    u_parts
        .into_par_iter()
        .zip(v_parts)
        .zip(w_parts)
        .zip(scanned.par_iter().map(|s| &s.2[..]))
        .zip(&ranges)
        .for_each(|((((u, v), w), mut loop_edges), r)| {
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

/// Every group of backward arcs (row y, target x < y) against x's arcs towards y,
/// found by binary search in x's sorted row: cheap where x's row is near y's.
fn match_by_search(offsets: &[i32], sorted: &[u64], ranges: &[std::ops::Range<usize>]) -> bool {
    let sorted_row = |x: usize| &sorted[row(offsets, x)];
    let target_of = |key: u64| (key >> 32) as usize;
    ranges.par_iter().all(|r| {
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
    })
}

/// Every row's backward arcs against the forward arcs into it, which are bucketed by
/// target first: a scatter, cheaper than a search per group where ends are far apart.
fn match_by_buckets(
    offsets: &[i32],
    sorted: &[u64],
    ranges: &[std::ops::Range<usize>],
) -> Result<bool> {
    // Each bucket is sorted and compared with the start of the sorted row, which holds
    // the backward arcs as the same `vertex << 32 | weight bits` keys.
    let n = offsets.len() - 1;
    let sorted_row = |x: usize| &sorted[row(offsets, x)];
    let target_of = |key: u64| (key >> 32) as usize;
    let backward_len = |y: usize| sorted_row(y).partition_point(|&k| target_of(k) < y);
    // Slots fit 32 bits: an `.egr` file holds fewer than 2^31 arcs.
    let mut bucket_start: Vec<u32> = alloc::zeroed(n + 1, "the pairing's buckets")?;
    bucket_start[1..]
        .par_iter_mut()
        .enumerate()
        .for_each(|(y, len)| *len = backward_len(y) as u32);
    for y in 0..n {
        bucket_start[y + 1] += bucket_start[y];
    }
    let bucket = |y: usize| bucket_start[y] as usize..bucket_start[y + 1] as usize;
    // The next free slot of each bucket.
    let next: Vec<AtomicU32> = alloc::collect(
        bucket_start[..n].iter().map(|&s| AtomicU32::new(s)),
        "the pairing's buckets",
    )?;
    let mut buckets: Vec<AtomicU64> =
        alloc::zeroed(bucket_start[n] as usize, "the forward arcs by target")?;
    let overflow = AtomicBool::new(false);
    ranges.par_iter().for_each(|r| {
        for x in r.clone() {
            let keys = sorted_row(x);
            let later = keys.partition_point(|&k| target_of(k) <= x);
            for &k in &keys[later..] {
                let y = target_of(k);
                let slot = next[y].fetch_add(1, Relaxed) as usize;
                if slot >= bucket(y).end {
                    overflow.store(true, Relaxed);
                    return;
                }
                buckets[slot].store((x as u64) << 32 | (k & 0xFFFF_FFFF), Relaxed);
            }
        }
    });
    // With no bucket overfull and as many forward arcs as backward ones (checked
    // above), every bucket is exactly full.
    if overflow.into_inner() {
        return Ok(false);
    }
    // SAFETY: AtomicU64 has the memory layout of u64, and the scatter is over: the
    // view is the only access to the buckets from here on.
    let buckets = unsafe {
        std::slice::from_raw_parts_mut(buckets.as_mut_ptr().cast::<u64>(), buckets.len())
    };
    let pieces = split_by_lengths(
        buckets,
        ranges
            .iter()
            .map(|r| (bucket_start[r.end] - bucket_start[r.start]) as usize),
    );
    Ok(pieces.into_par_iter().zip(ranges).all(|(piece, r)| {
        let base = bucket_start[r.start] as usize;
        r.clone().all(|y| {
            let bucket = &mut piece[bucket(y).start - base..bucket(y).end - base];
            bucket.sort_unstable();
            *bucket == sorted_row(y)[..bucket.len()]
        })
    }))
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
                for by_search in [true, false] {
                    match pair_csr_checking(&offsets, &targets, weights, by_search).unwrap() {
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
        }
        assert!(
            fast > 2000 && declined > 500,
            "fast {fast}, declined {declined}"
        );
    }
}
