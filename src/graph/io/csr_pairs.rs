//! Pairing a CSR file's arcs (`.egr`) without sorting all of them.
//!
//! In a CSR the arcs of vertex `x` come before those of every later vertex, so the first
//! arc of an edge `{x, y}` with `x < y` is always in `x`'s row. When, for every vertex
//! `y`, the forward arcs into it (from rows `x < y`) and the backward arcs of its own
//! row (towards `x < y`) hold the same `(x, weight)` pairs as multisets,
//! [`pair_arcs`](super::arcs::pair_arcs) would pair each forward arc with a backward one
//! and keep the forward arcs, in file order, as the edges. So that is checked directly,
//! in three passes over the rows, each on all cores:
//!
//! 1. each range of rows counts its forward arcs by target group (consecutive vertices,
//!    a few thousand arcs' worth) and pairs its self-loops;
//! 2. each range writes its edges (forward arcs and self-loop edges, in file order) to
//!    its part of the result, and its forward arcs to its slots of their target group:
//!    a scatter into a few hundred places, each written in order, rather than a random
//!    one per arc;
//! 3. each group, small enough for a core's cache, orders its arcs by target (a
//!    counting sort) and compares each vertex's with the backward arcs of its row:
//!    equal as they stand where rows are sorted by target, else after sorting both.
//!
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
) -> Result<Option<(Edges, Scratch)>> {
    let m = targets.len();
    let ranges = vertex_ranges(offsets);
    let groups = TargetGroups::new(offsets.len() - 1, m);
    let key = |x: usize, a: usize| (x as u64) << 32 | weights.map_or(0, |w| w[a] as u32 as u64);
    // Per range: its forward arcs by target group, and its self-loop edges.
    let counted: Vec<RangeCount> = ranges
        .par_iter()
        .map(|r| {
            let mut count = RangeCount {
                by_group: vec![0; groups.count],
                loop_arcs: 0,
                loop_edges: Vec::new(),
            };
            for x in r.clone() {
                let arcs = row(offsets, x);
                let mut has_loop = false;
                for &t in &targets[arcs.clone()] {
                    let t = t as usize;
                    if t > x {
                        count.by_group[groups.of(t)] += 1;
                    }
                    has_loop |= t == x;
                }
                if has_loop {
                    count.loop_arcs +=
                        self_loop_edges(x, arcs, targets, weights, &mut count.loop_edges);
                }
            }
            count
        })
        .collect();
    let forward_in = |c: &RangeCount| c.by_group.iter().map(|&k| k as usize).sum::<usize>();
    let forward: usize = counted.iter().map(forward_in).sum();
    let loop_arcs: usize = counted.iter().map(|c| c.loop_arcs).sum();
    if 2 * forward + loop_arcs != m {
        return Ok(None);
    }

    // The forward arcs as `source << 32 | weight bits` keys with their targets, group
    // after group; within a group, range after range, so in file order.
    const FORWARD: &str = "the forward arcs by target";
    let mut keys: Vec<u64> = alloc::zeroed(forward, FORWARD)?;
    let mut ends: Vec<u32> = alloc::zeroed(forward, FORWARD)?;
    let piece_lengths: Vec<usize> = (0..groups.count)
        .flat_map(|g| counted.iter().map(move |c| c.by_group[g] as usize))
        .collect();
    let mut key_slots = by_range(
        split_by_lengths(&mut keys, piece_lengths.iter().copied()),
        ranges.len(),
    );
    let mut end_slots = by_range(
        split_by_lengths(&mut ends, piece_lengths.iter().copied()),
        ranges.len(),
    );
    // The edges: the forward arcs and the self-loop edges in file order, each range
    // into its own part of the result.
    const EDGES: &str = "the edges paired";
    let edges = counted
        .iter()
        .map(|c| forward_in(c) + c.loop_edges.len())
        .sum();
    let mut u: Vec<u32> = alloc::zeroed(edges, EDGES)?;
    let mut v: Vec<u32> = alloc::zeroed(edges, EDGES)?;
    let mut w: Vec<i32> = alloc::zeroed(if weights.is_some() { edges } else { 0 }, EDGES)?;
    let per_range = || counted.iter().map(|c| forward_in(c) + c.loop_edges.len());
    let u_parts = split_by_lengths(&mut u, per_range());
    let v_parts = split_by_lengths(&mut v, per_range());
    let w_parts = split_by_lengths(
        &mut w,
        per_range().map(|c| if weights.is_some() { c } else { 0 }),
    );
    key_slots
        .par_iter_mut()
        .zip(end_slots.par_iter_mut())
        .zip(u_parts)
        .zip(v_parts)
        .zip(w_parts)
        .zip(&counted)
        .zip(&ranges)
        .for_each(|((((((key_slots, end_slots), u), v), w), count), r)| {
            let mut filled = vec![0usize; groups.count];
            let mut loop_edges = &count.loop_edges[..];
            let mut at = 0;
            for x in r.clone() {
                for a in row(offsets, x) {
                    let t = targets[a] as usize;
                    let is_edge = t > x || (t == x && loop_edges.first() == Some(&a));
                    if t > x {
                        let g = groups.of(t);
                        key_slots[g][filled[g]] = key(x, a);
                        end_slots[g][filled[g]] = t as u32;
                        filled[g] += 1;
                    } else if is_edge {
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
    drop((key_slots, end_slots));

    // Each group's forward arcs against the backward arcs of its vertices' rows, vertex
    // by vertex.
    let group_lengths: Vec<usize> = (0..groups.count)
        .map(|g| counted.iter().map(|c| c.by_group[g] as usize).sum())
        .collect();
    let key_groups = split_by_lengths(&mut keys, group_lengths.iter().copied());
    let end_groups = split_by_lengths(&mut ends, group_lengths.iter().copied());
    let n = offsets.len() - 1;
    let matched = key_groups
        .into_par_iter()
        .zip(end_groups)
        .enumerate()
        .map_init(GroupScratch::default, |scratch, (g, (keys, ends))| {
            let vertices = groups.vertices(g, n);
            scratch.match_group(vertices, keys, ends, |y, backward| {
                backward.extend(
                    row(offsets, y)
                        .filter(|&a| (targets[a] as usize) < y)
                        .map(|a| key(targets[a] as usize, a)),
                )
            })
        })
        .all(|ok| ok);
    if !matched {
        return Ok(None);
    }
    let edges = (u, v, weights.map(|_| WeightVec::I32(w)));
    Ok(Some((edges, Scratch { keys, ends })))
}

/// The pairing's own large arrays, handed back so that the caller can free them with
/// its own (see [`alloc::free_in_background`]).
pub(super) struct Scratch {
    keys: Vec<u64>,
    ends: Vec<u32>,
}

impl Scratch {
    pub(super) fn bytes(&self) -> usize {
        std::mem::size_of_val(&self.keys[..]) + std::mem::size_of_val(&self.ends[..])
    }
}

/// What a range of rows holds, counted before anything is moved.
struct RangeCount {
    /// Its forward arcs (towards later vertices) in each target group.
    by_group: Vec<u32>,
    /// Its self-loop arcs.
    loop_arcs: usize,
    /// The positions of its self-loop edges, in file order.
    loop_edges: Vec<usize>,
}

/// Consecutive vertices, `2^shift` per group: the forward arcs are moved group by
/// group (a scatter into a few hundred places, each written in order), so that each
/// group's arcs fit a core's cache when they are sorted by target.
struct TargetGroups {
    shift: u32,
    count: usize,
}

impl TargetGroups {
    /// Forward arcs per group aimed at: 2^15 keys of 8 bytes, 256 KB.
    const ARCS_PER_GROUP: usize = 1 << 15;
    const MAX_GROUPS: usize = 4096;

    fn new(n: usize, arcs: usize) -> Self {
        let wanted = (arcs / 2 / Self::ARCS_PER_GROUP).clamp(1, Self::MAX_GROUPS);
        let per_group = n.div_ceil(wanted).max(1).next_power_of_two();
        let shift = per_group.trailing_zeros();
        TargetGroups {
            shift,
            count: (n >> shift) + 1,
        }
    }

    fn of(&self, vertex: usize) -> usize {
        vertex >> self.shift
    }

    fn vertices(&self, group: usize, n: usize) -> std::ops::Range<usize> {
        (group << self.shift).min(n)..((group + 1) << self.shift).min(n)
    }
}

/// `pieces`, laid out group-major (group 0 of every range, then group 1, ...), handed
/// to each range as its list of pieces by group.
fn by_range<T>(pieces: Vec<&mut [T]>, ranges: usize) -> Vec<Vec<&mut [T]>> {
    let mut lists: Vec<Vec<&mut [T]>> = (0..ranges).map(|_| Vec::new()).collect();
    for (i, piece) in pieces.into_iter().enumerate() {
        lists[i % ranges].push(piece);
    }
    lists
}

/// A worker's buffers for matching groups, kept from one group to the next.
#[derive(Default)]
struct GroupScratch {
    /// The group's forward arcs ordered by target (stable: file order within one).
    by_target: Vec<u64>,
    /// Where each vertex's forward arcs start in `by_target`.
    starts: Vec<usize>,
    backward: Vec<u64>,
}

impl GroupScratch {
    /// Whether every vertex `y` of `vertices` has as backward arcs (`backward_of`
    /// appends them) the forward arcs into it, as `source << 32 | weight` keys, with
    /// the same multiset of weights per source.
    fn match_group(
        &mut self,
        vertices: std::ops::Range<usize>,
        keys: &[u64],
        ends: &[u32],
        mut backward_of: impl FnMut(usize, &mut Vec<u64>),
    ) -> bool {
        let first = vertices.start;
        self.starts.clear();
        self.starts.resize(vertices.len() + 1, 0);
        for &y in ends {
            self.starts[y as usize - first + 1] += 1;
        }
        for i in 0..vertices.len() {
            self.starts[i + 1] += self.starts[i];
        }
        self.by_target.clear();
        self.by_target.resize(keys.len(), 0);
        let mut next = self.starts.clone();
        for (&k, &y) in keys.iter().zip(ends) {
            let slot = &mut next[y as usize - first];
            self.by_target[*slot] = k;
            *slot += 1;
        }
        vertices.clone().all(|y| {
            let i = y - first;
            let forward = &mut self.by_target[self.starts[i]..self.starts[i + 1]];
            self.backward.clear();
            backward_of(y, &mut self.backward);
            if forward.len() != self.backward.len() {
                return false;
            }
            // Rows sorted by target (most CSR files) already agree, arc for arc; else
            // the two multisets are compared sorted.
            if *forward == self.backward[..] {
                return true;
            }
            forward.sort_unstable();
            self.backward.sort_unstable();
            *forward == self.backward[..]
        })
    }
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
                    Some((edges, _)) => {
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
            fast > 1000 && declined > 250,
            "fast {fast}, declined {declined}"
        );
    }
}
