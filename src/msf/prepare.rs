//! Validation of a caller's graph and its translation into what every MSF algorithm
//! runs on: endpoint arrays and one unique priority per edge.
//!
//! The priority of an edge packs an order-preserving integer image of its weight above
//! its position, so comparing priorities compares (weight, edge id) — the strict order
//! under which the minimum spanning forest is unique (DESIGN invariant 1). Positions
//! are numbered in ascending edge-id order, so a tie on weight falls to the lower id.

use std::borrow::Cow;
use std::fmt::Debug;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::graph::{Graph, Weights};
use crate::tier::gpu::msf::DeviceKeys;
use crate::{alloc, Error, Result, Status};

/// A unique, totally ordered edge priority: weight image in the high bits, edge
/// position in the low bits.
pub(crate) trait Priority: Copy + Ord + Send + Sync + Debug + 'static {
    /// Larger than every edge's priority.
    const NONE: Self;
    /// Where the weight image starts (the bits below hold the position).
    const KEY_SHIFT: u32;
    /// A cell for the lightest of many edges offered at once (Borůvka's rounds).
    type Least: super::light_boruvka::LeastCell<Self>;
    fn new(key: u64, position: usize) -> Self;
    fn position(self) -> usize;
    /// The representation shifted right by `shift`, truncated to 64 bits.
    fn shifted(self, shift: u32) -> u64;
}

/// 32-bit weight image and 32-bit position.
impl Priority for u64 {
    const NONE: Self = u64::MAX;
    type Least = super::light_boruvka::LeastPriority;
    const KEY_SHIFT: u32 = 32;
    #[inline(always)]
    fn new(key: u64, position: usize) -> Self {
        (key << 32) | position as u64
    }
    #[inline(always)]
    fn position(self) -> usize {
        (self & 0xFFFF_FFFF) as usize
    }
    #[inline(always)]
    fn shifted(self, shift: u32) -> u64 {
        self >> shift
    }
}

/// 64-bit weight image and 64-bit position.
impl Priority for u128 {
    const NONE: Self = u128::MAX;
    type Least = super::light_boruvka::LeastIndex;
    const KEY_SHIFT: u32 = 64;
    #[inline(always)]
    fn new(key: u64, position: usize) -> Self {
        ((key as u128) << 64) | position as u128
    }
    #[inline(always)]
    fn position(self) -> usize {
        self as u64 as usize
    }
    #[inline(always)]
    fn shifted(self, shift: u32) -> u64 {
        (self >> shift) as u64
    }
}

/// Order-preserving unsigned images of weights (NaN rejected before; -0.0 == +0.0).
pub(crate) trait WeightKey: Copy + Send + Sync {
    /// Whether every image fits in 32 bits.
    const NARROW: bool;
    /// Whether totals are summed as floats.
    const FLOAT: bool = false;
    fn key(self) -> u64;
    fn is_nan(self) -> bool {
        false
    }
    /// Exact value (integers only).
    fn as_i128(self) -> i128 {
        0
    }
    fn as_f64(self) -> f64 {
        0.0
    }
    /// `weights` themselves where each is its own ascending key and the keys are
    /// narrow (`u32`): a device can take the caller's array as it is.
    fn as_narrow_keys(_weights: &[Self]) -> Option<&[u32]> {
        None
    }
    /// The same for wide keys (`u64`).
    fn as_wide_keys(_weights: &[Self]) -> Option<&[u64]> {
        None
    }
    /// The slice as the library's weight enum.
    fn as_weights(weights: &[Self]) -> Weights<'_>;
}

/// The conversions every integer weight shares.
macro_rules! int_weight_values {
    () => {
        fn as_i128(self) -> i128 {
            self as i128
        }
    };
}

impl WeightKey for u32 {
    fn as_weights(weights: &[Self]) -> Weights<'_> {
        Weights::U32(weights)
    }
    const NARROW: bool = true;
    int_weight_values!();
    fn key(self) -> u64 {
        self as u64
    }
    fn as_narrow_keys(weights: &[u32]) -> Option<&[u32]> {
        Some(weights)
    }
}
impl WeightKey for i32 {
    fn as_weights(weights: &[Self]) -> Weights<'_> {
        Weights::I32(weights)
    }
    const NARROW: bool = true;
    int_weight_values!();
    fn key(self) -> u64 {
        ((self as u32) ^ 0x8000_0000) as u64
    }
}
impl WeightKey for u64 {
    fn as_weights(weights: &[Self]) -> Weights<'_> {
        Weights::U64(weights)
    }
    const NARROW: bool = false;
    int_weight_values!();
    fn key(self) -> u64 {
        self
    }
    fn as_wide_keys(weights: &[u64]) -> Option<&[u64]> {
        Some(weights)
    }
}
impl WeightKey for i64 {
    fn as_weights(weights: &[Self]) -> Weights<'_> {
        Weights::I64(weights)
    }
    const NARROW: bool = false;
    int_weight_values!();
    fn key(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
}
impl WeightKey for f32 {
    fn as_weights(weights: &[Self]) -> Weights<'_> {
        Weights::F32(weights)
    }
    const NARROW: bool = true;
    const FLOAT: bool = true;
    fn as_f64(self) -> f64 {
        self as f64
    }
    fn key(self) -> u64 {
        let bits = if self == 0.0 { 0 } else { self.to_bits() };
        (if bits >> 31 == 1 {
            !bits
        } else {
            bits | 0x8000_0000
        }) as u64
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}
impl WeightKey for f64 {
    fn as_weights(weights: &[Self]) -> Weights<'_> {
        Weights::F64(weights)
    }
    const NARROW: bool = false;
    const FLOAT: bool = true;
    fn as_f64(self) -> f64 {
        self
    }
    fn key(self) -> u64 {
        let bits = if self == 0.0 { 0 } else { self.to_bits() };
        if bits >> 63 == 1 {
            !bits
        } else {
            bits | (1 << 63)
        }
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

/// Which way weights are ordered: ascending for a minimum spanning forest, descending
/// for a maximum one. Either way, equal weights fall to the lower edge id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyOrder {
    Ascending,
    Descending,
}

impl KeyOrder {
    pub(crate) fn of(options: &crate::msf::MsfOptions) -> KeyOrder {
        if options.maximum {
            KeyOrder::Descending
        } else {
            KeyOrder::Ascending
        }
    }

    /// The key the algorithms compare for `w`: its order-preserving image, or for a
    /// descending order that image complemented within its width (32 bits for narrow
    /// types, so it still fits the narrow priorities).
    #[inline(always)]
    fn key<W: WeightKey>(self, w: W) -> u64 {
        match (self, W::NARROW) {
            (KeyOrder::Ascending, _) => w.key(),
            (KeyOrder::Descending, true) => !w.key() & 0xFFFF_FFFF,
            (KeyOrder::Descending, false) => !w.key(),
        }
    }
}

/// Edges ready for an algorithm, in ascending edge-id order. Self-loops are kept
/// (algorithms skip them) so positions stay aligned with the caller's ids.
pub(crate) struct Prepared<'a, P> {
    pub num_vertices: usize,
    pub u: Cow<'a, [u32]>,
    pub v: Cow<'a, [u32]>,
    pub priority: Vec<P>,
}

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidGraph, message)
}

/// The endpoints and per-position weight slice of a validated graph, before priorities.
pub(crate) struct Endpoints<'a> {
    pub num_vertices: usize,
    pub u: Cow<'a, [u32]>,
    pub v: Cow<'a, [u32]>,
    /// CSR position of each edge (None for edge lists, where position = id).
    pub ids: Option<Vec<u64>>,
    /// Whether every end was checked against the vertex count here (false where
    /// `endpoints` was told a device checks them).
    pub ends_checked: bool,
}

impl Endpoints<'_> {
    /// The same edges over only the vertices they touch, renumbered densely in vertex
    /// order, when most declared vertices are isolated (vertex-centric algorithms and
    /// device buffers would otherwise pay per declared vertex). Edge positions, and so
    /// the forest, do not change; the order of vertices is kept.
    pub fn without_isolated_vertices(self) -> Result<Self> {
        let (n, m) = (self.num_vertices, self.u.len());
        if keeps_vertex_numbers(n, m) {
            return Ok(self);
        }
        // A bitmap of the touched vertices while it is small beside the edges; else (and
        // for unchecked ends, which might not fit it) their sorted list.
        let touched = match self.ends_checked && n / 64 <= m {
            true => TouchedVertices::bitmap(n, &self.u, &self.v)?,
            false => TouchedVertices::sorted(&self.u, &self.v)?,
        };
        let renumber = |ends: &[u32]| {
            alloc::par_collect(
                ends.par_iter().map(|&x| touched.rank(x)),
                "the renumbered ends",
            )
        };
        Ok(Endpoints {
            num_vertices: touched.count(),
            u: Cow::Owned(renumber(&self.u)?),
            v: Cow::Owned(renumber(&self.v)?),
            ids: self.ids,
            ends_checked: self.ends_checked,
        })
    }
}

/// The vertices some edge touches; a vertex's new number is its rank among them.
enum TouchedVertices {
    /// A bit per vertex, and each 64-vertex word's count of touched vertices before
    /// it: two passes over the ends and one over the words, where sorting the ends and
    /// a binary search per end took 1.0-1.5 s for 4M edges over 2^26 vertices on two
    /// cores (56-464 ms so).
    Bitmap {
        words: Vec<AtomicU64>,
        before: Vec<u32>,
        count: usize,
    },
    /// Sorted, without repeats.
    Sorted(Vec<u32>),
}

impl TouchedVertices {
    /// `u` and `v` hold vertices below `n` (checked).
    fn bitmap(n: usize, u: &[u32], v: &[u32]) -> Result<TouchedVertices> {
        let words: Vec<AtomicU64> = alloc::zeroed(n.div_ceil(64), "the touched vertices")?;
        for ends in [u, v] {
            ends.par_iter().for_each(|&x| {
                let (word, bit) = (&words[x as usize / 64], 1u64 << (x % 64));
                // Most ends of a vertex find its bit set already: no write then.
                if word.load(Ordering::Relaxed) & bit == 0 {
                    word.fetch_or(bit, Ordering::Relaxed);
                }
            });
        }
        let mut before: Vec<u32> = alloc::zeroed(words.len(), "the touched vertices' ranks")?;
        let mut count = 0usize;
        for (rank, word) in before.iter_mut().zip(&words) {
            *rank = count as u32;
            count += word.load(Ordering::Relaxed).count_ones() as usize;
        }
        Ok(TouchedVertices::Bitmap {
            words,
            before,
            count,
        })
    }

    fn sorted(u: &[u32], v: &[u32]) -> Result<TouchedVertices> {
        let mut touched: Vec<u32> =
            alloc::with_capacity(u.len() + v.len(), "the vertices with edges")?;
        touched.extend_from_slice(u);
        touched.extend_from_slice(v);
        touched.par_sort_unstable();
        touched.dedup();
        Ok(TouchedVertices::Sorted(touched))
    }

    fn count(&self) -> usize {
        match self {
            TouchedVertices::Bitmap { count, .. } => *count,
            TouchedVertices::Sorted(list) => list.len(),
        }
    }

    /// The new number of touched vertex `x`.
    fn rank(&self, x: u32) -> u32 {
        match self {
            TouchedVertices::Bitmap { words, before, .. } => {
                let (k, bit) = (x as usize / 64, x % 64);
                let word = words[k].load(Ordering::Relaxed);
                before[k] + (word & ((1u64 << bit) - 1)).count_ones()
            }
            TouchedVertices::Sorted(list) => {
                list.binary_search(&x)
                    .expect("every end is among the touched vertices") as u32
            }
        }
    }
}

/// Whether [`Endpoints::without_isolated_vertices`] leaves a graph of `n` vertices and
/// `m` edges as it is.
pub(crate) fn keeps_vertex_numbers(n: usize, m: usize) -> bool {
    n <= 4 * m + (1 << 16)
}

/// Bytes an edge of the edge list made of a CSR graph takes (its id, u and v; each
/// list counted before it is written, so no more while it is made).
pub(crate) const CSR_EDGE_BYTES: u64 = 16;

/// Validates the structure of `graph` (lengths, ids, CSR shape and symmetry) and
/// returns its edges in ascending id order. `check_ends: false` leaves an edge list's
/// ends unchecked, for a caller whose device checks them. `memory_limit` (0: none)
/// bounds what a CSR's check and edge list take.
pub(crate) fn endpoints<'a>(
    graph: &Graph<'a>,
    ignore_weights: bool,
    check_ends: bool,
    memory_limit: u64,
) -> Result<Endpoints<'a>> {
    match *graph {
        Graph::EdgeList {
            num_vertices,
            u,
            v,
            weights,
        } => {
            check_vertex_count(num_vertices)?;
            if u.len() != v.len() {
                return Err(Error::invalid_argument(format!(
                    "edge list: u has {} entries but v has {}",
                    u.len(),
                    v.len()
                )));
            }
            if let Some(w) = weights.filter(|_| !ignore_weights) {
                if w.len() != u.len() {
                    return Err(Error::invalid_argument(format!(
                        "edge list: {} edges but {} weights",
                        u.len(),
                        w.len()
                    )));
                }
            }
            if check_ends {
                check_edge_list_ends(u, v, num_vertices)?;
            }
            Ok(Endpoints {
                num_vertices,
                u: Cow::Borrowed(u),
                v: Cow::Borrowed(v),
                ids: None,
                ends_checked: check_ends,
            })
        }
        Graph::Csr {
            offsets,
            targets,
            weights,
        } => {
            let Some(num_vertices) = offsets.len().checked_sub(1) else {
                return Err(Error::invalid_argument(
                    "CSR offsets is empty: it needs num_vertices + 1 entries (at least [0])",
                ));
            };
            check_vertex_count(num_vertices)?;
            if offsets[0] != 0 {
                return Err(invalid(format!(
                    "CSR offsets[0] = {}, expected 0",
                    offsets[0]
                )));
            }
            if let Some(i) = offsets.par_windows(2).position_first(|w| w[1] < w[0]) {
                return Err(invalid(format!(
                    "CSR offsets are not monotone: offsets[{}] = {} is less than offsets[{i}] = {}",
                    i + 1,
                    offsets[i + 1],
                    offsets[i]
                )));
            }
            if offsets[num_vertices] != targets.len() as u64 {
                return Err(invalid(format!(
                    "CSR offsets[{num_vertices}] = {} but there are {} targets",
                    offsets[num_vertices],
                    targets.len()
                )));
            }
            if let Some(w) = weights.filter(|_| !ignore_weights) {
                if w.len() != targets.len() {
                    return Err(Error::invalid_argument(format!(
                        "CSR: {} targets but {} weights",
                        targets.len(),
                        w.len()
                    )));
                }
            }
            if let Some(p) = first_out_of_range(targets, num_vertices) {
                return Err(invalid(format!(
                    "CSR targets[{p}] = {} is out of range for {num_vertices} vertices",
                    targets[p]
                )));
            }
            let weights = weights.filter(|_| !ignore_weights);
            // Under a cap, the edge list made of the CSR must fit it (the parts' solves
            // then take what it leaves), and the symmetry check runs in parts that do.
            let mut parts = 1;
            if memory_limit > 0 {
                const RANGE: usize = 1 << 16;
                let (edges, entries) = (0..targets.len().div_ceil(RANGE))
                    .into_par_iter()
                    .map(|r| {
                        let (mut edges, mut entries) = (0, 0);
                        let range = r * RANGE..targets.len().min((r + 1) * RANGE);
                        with_sources(offsets, range, |x, p| {
                            edges += (x < targets[p]) as usize;
                            entries += (x != targets[p]) as u64;
                        });
                        (edges, entries)
                    })
                    .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
                let need = edges as u64 * CSR_EDGE_BYTES;
                if need > memory_limit {
                    return Err(Error::new(
                        Status::OutOfMemory,
                        format!(
                            "a memory cap of {memory_limit} bytes is too small for a CSR graph of {edges} edges: the edge list made of it takes {need} bytes ({CSR_EDGE_BYTES} an edge); pass an edge list or raise the cap"
                        ),
                    ));
                }
                // At most 3 parts for a symmetric CSR (2 entries an edge); more only
                // where most entries have no partner, which the check then names.
                parts = (entries * ENTRY_BYTES)
                    .div_ceil(memory_limit)
                    .clamp(1, MOST_PARTS);
            }
            check_symmetric(offsets, targets, weights, parts)?;
            // The entries x -> y with x < y, in position order: their positions (the
            // edges' ids) and ends.
            let ids =
                alloc::par_collect_counted(targets.len(), "the CSR edges' ids", |range, push| {
                    with_sources(offsets, range, |x, p| {
                        if x < targets[p] {
                            push(p as u64)
                        }
                    })
                })?;
            let u = alloc::par_collect_counted(
                targets.len(),
                "the CSR edges' first ends",
                |range, push| {
                    with_sources(offsets, range, |x, p| {
                        if x < targets[p] {
                            push(x)
                        }
                    })
                },
            )?;
            let v = alloc::par_collect(
                ids.par_iter().map(|&p| targets[p as usize]),
                "the CSR edges' second ends",
            )?;
            Ok(Endpoints {
                num_vertices,
                u: Cow::Owned(u),
                v: Cow::Owned(v),
                ids: Some(ids),
                ends_checked: true,
            })
        }
    }
}

/// Every end of an edge list below `n`: the first of u, then of v, that is not is
/// the error.
pub(crate) fn check_edge_list_ends(u: &[u32], v: &[u32], n: usize) -> Result<()> {
    for (name, ends) in [("u", u), ("v", v)] {
        if let Some(i) = first_out_of_range(ends, n) {
            return Err(end_out_of_range(name, i, ends[i], n));
        }
    }
    Ok(())
}

/// The first id that is not below `n`. The common, valid case costs one vectorized
/// parallel maximum; the index is searched for only when something is wrong.
fn first_out_of_range(ids: &[u32], n: usize) -> Option<usize> {
    let max = ids
        .par_chunks(1 << 16)
        .map(|c| c.iter().copied().max().unwrap_or(0))
        .max()?;
    if (max as usize) < n {
        return None;
    }
    ids.iter().position(|&x| x as usize >= n)
}

pub(crate) fn check_vertex_count(n: usize) -> Result<()> {
    if n as u64 > 1 << 32 {
        return Err(Error::invalid_argument(format!(
            "{n} vertices: vertex ids are 32-bit, so at most 2^32 vertices"
        )));
    }
    Ok(())
}

/// The source vertex of CSR position `p`: the last row starting at or before it.
pub(crate) fn source_of(offsets: &[u64], p: usize) -> usize {
    offsets.partition_point(|&o| o <= p as u64) - 1
}

/// Calls `f(x, p)` for every CSR position `p` of `range`, in order, with its source
/// vertex `x` (no array of sources: 4 bytes an entry).
fn with_sources(offsets: &[u64], range: Range<usize>, mut f: impl FnMut(u32, usize)) {
    if range.is_empty() {
        return;
    }
    let mut x = source_of(offsets, range.start);
    for p in range {
        while offsets[x + 1] <= p as u64 {
            x += 1;
        }
        f(x as u32, p);
    }
}

/// A CSR entry as the symmetry check sorts it: its low end, high end, weight key and
/// position.
type Entry = (u32, u32, u64, usize);

/// Bytes an [`Entry`] takes in the check (its lists are counted before they are
/// written and sorted in place), with room for the counts and the sort's stack.
const ENTRY_BYTES: u64 = std::mem::size_of::<Entry>() as u64 + 8;

/// Parts of the symmetry check at most (each a pass over the whole CSR): past that a
/// CSR whose entries mostly lack partners goes over the cap while it is named.
const MOST_PARTS: u64 = 64;

/// Every CSR entry x→y (x ≠ y) must have a reverse entry y→x of equal weight, one for
/// one. Sorts both directions by (low end, high end, weight) and compares, in `parts`
/// parts (passes over the CSR): entries go to a part by a hash of that triple, so an
/// entry and its partner meet, and the entry named where several parts find one
/// without a partner is the one the whole comparison would name (the least).
fn check_symmetric(
    offsets: &[u64],
    targets: &[u32],
    weights: Option<Weights>,
    parts: u64,
) -> Result<()> {
    let key_of = |p: usize| -> u64 { weights.map_or(0, |w| weight_key_at(w, p)) };
    let part_of = |e: &Entry| {
        // SplitMix64's finalizer over the triple: parts of even sizes whatever the ids.
        let mut h = (e.0 as u64) << 32 | e.1 as u64;
        h ^= e.2.rotate_left(17);
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d049bb133111eb);
        (h ^ (h >> 31)) % parts
    };
    let mut lonely: Option<Entry> = None;
    for part in 0..parts {
        let collect = |forward: bool, what| {
            alloc::par_collect_counted(targets.len(), what, |range, push| {
                with_sources(offsets, range, |x, p| {
                    let y = targets[p];
                    if x != y && (x < y) == forward {
                        let entry: Entry = (x.min(y), x.max(y), key_of(p), p);
                        if parts == 1 || part_of(&entry) == part {
                            push(entry);
                        }
                    }
                })
            })
        };
        let mut forward = collect(true, "the CSR forward entries")?;
        let mut backward = collect(false, "the CSR backward entries")?;
        forward.par_sort_unstable();
        backward.par_sort_unstable();
        if let Some(entry) = without_partner(&forward, &backward) {
            let triple = |e: &Entry| (e.0, e.1, e.2);
            if lonely.map_or(true, |l| triple(&entry) < triple(&l)) {
                lonely = Some(entry);
            }
        }
    }
    match lonely {
        None => Ok(()),
        Some((_, _, _, p)) => {
            let (x, y) = (source_of(offsets, p), targets[p]);
            Err(invalid(format!(
                "CSR is not symmetric: entry {p} ({x} -> {y}) has no reverse entry {y} -> {x} of the same weight"
            )))
        }
    }
}

/// The first entry of sorted `forward` or `backward` without a partner in the other:
/// where they first differ, whichever sorts first.
fn without_partner(forward: &[Entry], backward: &[Entry]) -> Option<Entry> {
    let triple = |e: &Entry| (e.0, e.1, e.2);
    if let Some(i) = forward
        .par_iter()
        .zip(backward.par_iter())
        .position_first(|(a, b)| triple(a) != triple(b))
    {
        let (a, b) = (forward[i], backward[i]);
        return Some(if triple(&a) < triple(&b) { a } else { b });
    }
    match forward.len().cmp(&backward.len()) {
        std::cmp::Ordering::Greater => Some(forward[backward.len()]),
        std::cmp::Ordering::Less => Some(backward[forward.len()]),
        std::cmp::Ordering::Equal => None,
    }
}

/// The order key of the weight at CSR position / edge `p` (only for comparisons of
/// equality during validation; NaN is checked separately).
fn weight_key_at(weights: Weights, p: usize) -> u64 {
    match weights {
        Weights::I32(w) => w[p].key(),
        Weights::U32(w) => w[p].key(),
        Weights::I64(w) => w[p].key(),
        Weights::U64(w) => w[p].key(),
        Weights::F32(w) => w[p].key(),
        Weights::F64(w) => w[p].key(),
    }
}

/// Builds the priority of every position from `weights` (indexed by edge id for edge
/// lists, by CSR position for CSR), rejecting NaN. Compiled once per priority type, not
/// per weight type: the weights' type is matched per edge, a branch that always goes
/// the same way.
pub(crate) fn priorities<P: Priority>(
    weights: Option<Weights<'_>>,
    ids: Option<&[u64]>,
    num_edges: usize,
    order: KeyOrder,
    least_key: u64,
) -> Result<Vec<P>> {
    reject_nan_in(weights, ids, num_edges)?;
    let source = PrioritySource::new(weights, ids, order, least_key);
    alloc::par_collect(
        (0..num_edges).into_par_iter().map(|i| source.at(i)),
        "the edge priorities",
    )
}

/// The priority of the edge at each position, computed from the weights when asked for
/// (as [`priorities`] stores them; the caller has rejected NaN). One type for every
/// weight type, so that the algorithm taking it is compiled once per priority type.
#[derive(Clone, Copy)]
pub(crate) struct PrioritySource<'w> {
    weights: Option<Weights<'w>>,
    ids: Option<&'w [u64]>,
    order: KeyOrder,
    least_key: u64,
}

impl<'w> PrioritySource<'w> {
    pub(crate) fn new(
        weights: Option<Weights<'w>>,
        ids: Option<&'w [u64]>,
        order: KeyOrder,
        least_key: u64,
    ) -> Self {
        PrioritySource {
            weights,
            ids,
            order,
            least_key,
        }
    }

    #[inline(always)]
    pub(crate) fn at<P: Priority>(&self, i: usize) -> P {
        let p = self.ids.map_or(i, |ids| ids[i] as usize);
        let key = match self.weights {
            None => return P::new(0, i),
            Some(Weights::I32(w)) => self.order.key(w[p]),
            Some(Weights::U32(w)) => self.order.key(w[p]),
            Some(Weights::I64(w)) => self.order.key(w[p]),
            Some(Weights::U64(w)) => self.order.key(w[p]),
            Some(Weights::F32(w)) => self.order.key(w[p]),
            Some(Weights::F64(w)) => self.order.key(w[p]),
        };
        P::new(key - self.least_key, i)
    }
}

/// The least key of `weights` under `order`, when every key minus it fits in 32 bits
/// (so priorities can be 64-bit); `None` when the keys span more. Every entry counts
/// (for CSR both directions and self-loops too), which can only widen the span.
pub(crate) fn narrow_key_offset<W: WeightKey>(weights: &[W], order: KeyOrder) -> Option<u64> {
    match super::radix::key_range(weights, |&w| order.key(w)) {
        None => Some(0),
        Some((least, most)) => (most - least <= u32::MAX as u64).then_some(least),
    }
}

/// An error naming the first edge (in position order) with a NaN weight.
pub(crate) fn reject_nan<W: WeightKey>(
    weights: &[W],
    ids: Option<&[u64]>,
    num_edges: usize,
) -> Result<()> {
    let weight_of = |i: usize| weights[ids.map_or(i, |ids| ids[i] as usize)];
    // The common, valid case is one parallel scan; the index is searched for only when
    // there is a NaN.
    let any_nan = weights
        .par_chunks(1 << 16)
        .any(|c| c.iter().any(|w| w.is_nan()));
    if !any_nan {
        return Ok(());
    }
    // Edge lists: the first edge. CSR: the first entry behind an edge, else the first
    // entry at all (a self-loop entry, which becomes no edge but is still invalid).
    let id = match (0..num_edges).position(|i| weight_of(i).is_nan()) {
        Some(i) => ids.map_or(i as u64, |ids| ids[i]),
        None => weights.iter().position(|w| w.is_nan()).unwrap_or(0) as u64,
    };
    Err(nan_weight(ids.is_some(), id))
}

/// [`reject_nan`] for weights of any type (only floats can hold NaN).
pub(crate) fn reject_nan_in(
    weights: Option<Weights<'_>>,
    ids: Option<&[u64]>,
    num_edges: usize,
) -> Result<()> {
    match weights {
        Some(Weights::F32(w)) => reject_nan(w, ids, num_edges),
        Some(Weights::F64(w)) => reject_nan(w, ids, num_edges),
        _ => Ok(()),
    }
}

/// The error for edge `edge` of an edge list whose end `name` (u or v) is `value`, not
/// below `n` (host and device checks report it alike).
pub(crate) fn end_out_of_range(name: &str, edge: usize, value: u32, n: usize) -> Error {
    invalid(format!(
        "edge {edge}: {name} = {value} is out of range for {n} vertices"
    ))
}

/// The error for a NaN weight at edge `id` (or CSR entry, for `csr`).
pub(crate) fn nan_weight(csr: bool, id: u64) -> Error {
    let what = if csr { "CSR entry" } else { "edge" };
    invalid(format!("{what} {id} has a NaN weight"))
}

pub(crate) fn device_keys<'a, W: WeightKey>(
    weights: Option<&'a [W]>,
    ids: Option<&[u64]>,
    num_edges: usize,
    order: KeyOrder,
) -> Result<Option<DeviceKeys<'a>>> {
    let Some(weights) = weights else {
        return Ok(None);
    };
    reject_nan(weights, ids, num_edges)?;
    // Unsigned weights of an edge list are their own ascending keys: no copy.
    if let (KeyOrder::Ascending, None) = (order, ids) {
        if let Some(keys) = W::as_narrow_keys(weights) {
            return Ok(Some(DeviceKeys::Narrow(Cow::Borrowed(keys))));
        }
        if let Some(keys) = W::as_wide_keys(weights) {
            return Ok(Some(DeviceKeys::Wide(Cow::Borrowed(keys))));
        }
    }
    let key_of = |i: usize| order.key(weights[ids.map_or(i, |ids| ids[i] as usize)]);
    const WHAT: &str = "the edges' weight keys";
    let all = (0..num_edges).into_par_iter();
    Ok(Some(if W::NARROW {
        DeviceKeys::Narrow(Cow::Owned(alloc::par_collect(
            all.map(|i| key_of(i) as u32),
            WHAT,
        )?))
    } else {
        DeviceKeys::Wide(Cow::Owned(alloc::par_collect(all.map(key_of), WHAT)?))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The touched vertices' bitmap numbers them as the sorted list does: densely, in
    /// vertex order (the unchecked ends take the sorted list).
    #[test]
    fn isolated_vertices_drop_alike_by_bitmap_and_by_sorting() {
        let n = 1_000_000usize;
        let mut x = 12345u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as u32
        };
        let (mut u, mut v): (Vec<u32>, Vec<u32>) = (0..20_000).map(|_| (next(), next())).unzip();
        u.extend([0, 7, 7, n as u32 - 1]);
        v.extend([n as u32 - 1, 7, 64, 63]);
        let renumbered = |checked: bool| {
            let ends = Endpoints {
                num_vertices: n,
                u: Cow::Borrowed(&u[..]),
                v: Cow::Borrowed(&v[..]),
                ids: None,
                ends_checked: checked,
            };
            let ends = ends.without_isolated_vertices().unwrap();
            (ends.num_vertices, ends.u.into_owned(), ends.v.into_owned())
        };
        let (by_bitmap, by_sorting) = (renumbered(true), renumbered(false));
        assert_eq!(by_bitmap, by_sorting);
        let mut touched: Vec<u32> = u.iter().chain(&v).copied().collect();
        touched.sort_unstable();
        touched.dedup();
        assert_eq!(by_bitmap.0, touched.len());
        assert_eq!(
            (by_bitmap.1[u.len() - 4], by_bitmap.2[u.len() - 4]),
            (0, touched.len() as u32 - 1)
        );
    }

    #[test]
    fn keys_preserve_order() {
        let f = [
            f32::NEG_INFINITY,
            -3.5,
            -0.0,
            0.0,
            1e-30,
            2.0,
            f32::INFINITY,
        ];
        for w in f.windows(2) {
            assert!(w[0].key() <= w[1].key(), "{} {}", w[0], w[1]);
        }
        assert_eq!((-0.0f32).key(), 0.0f32.key());
        assert_eq!((-0.0f64).key(), 0.0f64.key());
        let i = [i64::MIN, -1, 0, 1, i64::MAX];
        for w in i.windows(2) {
            assert!(w[0].key() < w[1].key());
        }
        assert!((-1i32).key() < 0i32.key());
        assert!(i32::MIN.key() < i32::MAX.key());
    }

    #[test]
    fn descending_keys_reverse_the_order_within_their_width() {
        let d = KeyOrder::Descending;
        assert!(d.key(5u32) < d.key(4u32));
        assert!(d.key(u32::MAX) < d.key(0u32));
        assert!(d.key(0u32) <= 0xFFFF_FFFF, "narrow keys stay 32-bit");
        assert!(d.key(1.5f32) < d.key(-2.0f32));
        assert_eq!(d.key(-0.0f64), d.key(0.0f64));
        assert!(d.key(f64::INFINITY) < d.key(f64::NEG_INFINITY));
        assert!(d.key(i64::MAX) < d.key(i64::MIN));
    }

    #[test]
    fn priorities_tie_break_on_position() {
        let a = <u64 as Priority>::new(5, 3);
        let b = <u64 as Priority>::new(5, 4);
        let c = <u64 as Priority>::new(4, 100);
        assert!(c < a && a < b);
        assert_eq!(b.position(), 4);
        assert_eq!(<u128 as Priority>::new(u64::MAX, 7).position(), 7);
    }
}
