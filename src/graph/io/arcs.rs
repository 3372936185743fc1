//! What the readers collect: arcs with their source lines, weights of a type chosen by
//! the values seen, and the pairing of the two arcs of each undirected edge.

use std::collections::VecDeque;

use rayon::prelude::*;

use crate::graph::WeightVec;
use crate::{alloc, Error};

pub(crate) use super::input::LineError;

/// Edges as `(u, v, weights)`.
pub(crate) type Edges = (Vec<u32>, Vec<u32>, Option<WeightVec>);

enum Store {
    None,
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F64(Vec<f64>),
}

/// Weights collected in the narrowest type that holds every value seen so far:
/// `u32`, then `i64`, then `u64`; `f64` as soon as a real literal appears (where the
/// format allows one).
pub(crate) struct WeightAcc {
    store: Store,
    allow_real: bool,
    saw_real: bool,
    /// The first negative integer and its line.
    first_negative: Option<(u64, i128)>,
    /// The first integer above `i64::MAX` and its line.
    first_above_i64: Option<(u64, i128)>,
    /// An integer no integer type could hold together with the others, tolerated while
    /// the file may still turn out to be real-valued.
    pending_int_error: Option<LineError>,
    /// A refused allocation while widening the store, reported by the next
    /// [`ArcList::push`] (every weight is followed by its arc's push).
    memory_error: Option<Error>,
}

const WEIGHTS: &str = "the weights read";

impl WeightAcc {
    /// No weights at all.
    pub(crate) fn none() -> Self {
        WeightAcc {
            store: Store::None,
            allow_real: false,
            saw_real: false,
            first_negative: None,
            first_above_i64: None,
            pending_int_error: None,
            memory_error: None,
        }
    }

    /// Integer weights; with `allow_real`, a real literal turns the whole file to `f64`.
    pub(crate) fn integers(capacity: usize, allow_real: bool) -> crate::Result<Self> {
        Ok(WeightAcc {
            store: Store::U32(alloc::with_capacity(capacity, WEIGHTS)?),
            allow_real,
            ..Self::none()
        })
    }

    /// Real weights (`f64`) whatever the literals look like.
    pub(crate) fn reals(capacity: usize) -> crate::Result<Self> {
        Ok(WeightAcc {
            store: Store::F64(alloc::with_capacity(capacity, WEIGHTS)?),
            allow_real: true,
            saw_real: true,
            ..Self::none()
        })
    }

    /// Makes room for the next weight (so that the pushes never grow the store).
    fn reserve_next(&mut self) -> crate::Result<()> {
        if let Some(e) = self.memory_error.take() {
            return Err(e);
        }
        match &mut self.store {
            Store::None => Ok(()),
            Store::U32(w) => alloc::reserve(w, 1, WEIGHTS),
            Store::I64(w) => alloc::reserve(w, 1, WEIGHTS),
            Store::U64(w) => alloc::reserve(w, 1, WEIGHTS),
            Store::F64(w) => alloc::reserve(w, 1, WEIGHTS),
        }
    }

    /// The store converted element by element, or `None` (with the error kept for
    /// [`Self::reserve_next`]) when its room could not be allocated.
    fn widened<A: Copy, B>(&mut self, w: &[A], convert: impl Fn(A) -> B) -> Option<Vec<B>> {
        // One spare slot: the value being pushed.
        match alloc::with_capacity(w.len() + 1, WEIGHTS) {
            Ok(mut wide) => {
                wide.extend(w.iter().map(|&x| convert(x)));
                Some(wide)
            }
            Err(e) => {
                self.memory_error = Some(e);
                None
            }
        }
    }

    /// Adds an integer weight from line `line`.
    #[inline]
    pub(crate) fn push_int(&mut self, line: u64, v: i128) -> Result<(), LineError> {
        match &mut self.store {
            Store::U32(w) if (0..=u32::MAX as i128).contains(&v) => w.push(v as u32),
            Store::I64(w) if (i64::MIN as i128..=i64::MAX as i128).contains(&v) => {
                w.push(v as i64);
                if v < 0 && self.first_negative.is_none() {
                    self.first_negative = Some((line, v));
                }
            }
            Store::U64(w) if (0..=u64::MAX as i128).contains(&v) => {
                w.push(v as u64);
                if v > i64::MAX as i128 && self.first_above_i64.is_none() {
                    self.first_above_i64 = Some((line, v));
                }
            }
            Store::F64(w) => {
                w.push(v as f64);
                self.note_int(line, v);
            }
            _ => return self.push_int_slow(line, v),
        }
        Ok(())
    }

    /// Notes `v` if it is the first negative integer or the first above `i64::MAX`.
    #[inline]
    fn note_int(&mut self, line: u64, v: i128) {
        let fits_i64 = (i64::MIN as i128..=i64::MAX as i128).contains(&v);
        let fits_u64 = (0..=u64::MAX as i128).contains(&v);
        if fits_i64 && v < 0 && self.first_negative.is_none() {
            self.first_negative = Some((line, v));
        }
        if fits_u64 && !fits_i64 && self.first_above_i64.is_none() {
            self.first_above_i64 = Some((line, v));
        }
    }

    #[cold]
    fn push_int_slow(&mut self, line: u64, v: i128) -> Result<(), LineError> {
        let fits_i64 = (i64::MIN as i128..=i64::MAX as i128).contains(&v);
        let fits_u64 = (0..=u64::MAX as i128).contains(&v);
        self.note_int(line, v);
        match &mut self.store {
            Store::None => {
                return Err((line, "internal: weight pushed to a weightless list".into()))
            }
            Store::U32(w) if fits_i64 => {
                let w = std::mem::take(w);
                if let Some(mut wide) = self.widened(&w, |x| x as i64) {
                    wide.push(v as i64);
                    self.store = Store::I64(wide);
                }
            }
            Store::U32(w) if fits_u64 => {
                let w = std::mem::take(w);
                if let Some(mut wide) = self.widened(&w, |x| x as u64) {
                    wide.push(v as u64);
                    self.store = Store::U64(wide);
                }
            }
            Store::I64(w) if fits_u64 && self.first_negative.is_none() => {
                let w = std::mem::take(w);
                if let Some(wide) = self.widened(&w, |x| x as u64) {
                    self.store = Store::U64(wide);
                    self.push_int(line, v)?;
                }
            }
            _ => {
                let message = if fits_i64 || fits_u64 {
                    mixed_signs_message(v)
                } else {
                    format!("weight {v} is outside the 64-bit integer range")
                };
                return self.int_conflict(line, message, v as f64);
            }
        }
        Ok(())
    }

    /// The first weight of `later` (read after every weight of `self`, its lines
    /// numbered `offset` before the file's) that no integer type holds together with
    /// the weights of `self`: a negative one after one above `i64::MAX`, or the reverse.
    fn first_conflict(&self, later: &WeightAcc, offset: u64) -> Option<(u64, i128)> {
        let mut first = None;
        if self.first_negative.is_some() {
            first = earlier(first, later.first_above_i64);
        }
        if self.first_above_i64.is_some() {
            first = earlier(first, later.first_negative);
        }
        first.map(|(line, v)| (line + offset, v))
    }

    /// The error a sequential reading would have stopped at when `later` follows `self`,
    /// for formats whose weights cannot turn real (those that can keep such a conflict
    /// pending, see [`Self::append`]).
    pub(crate) fn hard_conflict(&self, later: &WeightAcc, offset: u64) -> Option<LineError> {
        if self.allow_real {
            return None;
        }
        self.first_conflict(later, offset)
            .map(|(line, v)| (line, mixed_signs_message(v)))
    }

    /// Appends the weights of `later`, read after those of `self` and numbered `offset`
    /// lines before the file's lines, as if they had been pushed one by one: the store
    /// becomes the narrowest type for both, and a conflict between them is kept pending
    /// as [`Self::push_int`] would (check [`Self::hard_conflict`] first).
    pub(crate) fn append(&mut self, mut later: WeightAcc, offset: u64) -> crate::Result<()> {
        if let Some(e) = self.memory_error.take().or(later.memory_error.take()) {
            return Err(e);
        }
        let conflict = self.first_conflict(&later, offset);
        let shift = |o: Option<(u64, i128)>| o.map(|(line, v)| (line + offset, v));
        let pending = [
            self.pending_int_error.take(),
            conflict.map(|(line, v)| (line, mixed_signs_message(v))),
            later.pending_int_error.map(|(line, m)| (line + offset, m)),
        ];
        self.pending_int_error = pending.into_iter().flatten().min_by_key(|e| e.0);
        self.first_negative = self.first_negative.or(shift(later.first_negative));
        self.first_above_i64 = self.first_above_i64.or(shift(later.first_above_i64));
        self.saw_real |= later.saw_real;
        if later.store.len() == 0 {
            // A piece without weights (say, of comments) widens nothing.
            return Ok(());
        }
        let kind = if conflict.is_some() {
            Kind::F64
        } else {
            self.store.kind().max(later.store.kind())
        };
        if (self.store.kind() == Kind::None) != (later.store.kind() == Kind::None) {
            return Err(Error::internal("weighted and weightless arcs joined"));
        }
        let store = std::mem::replace(&mut self.store, Store::None);
        let mut store = store.converted(kind)?;
        match &mut store {
            Store::None => {}
            Store::U32(w) => extend_from_store(w, &later.store)?,
            Store::I64(w) => extend_from_store(w, &later.store)?,
            Store::U64(w) => extend_from_store(w, &later.store)?,
            Store::F64(w) => extend_from_store(w, &later.store)?,
        }
        self.store = store;
        Ok(())
    }

    /// Adds an integer literal too large for any 64-bit type (`approx` is its value).
    pub(crate) fn push_int_out_of_range(
        &mut self,
        line: u64,
        text: &[u8],
        approx: f64,
    ) -> Result<(), LineError> {
        let message = format!(
            "weight {} is outside the 64-bit integer range",
            String::from_utf8_lossy(text)
        );
        self.int_conflict(line, message, approx)
    }

    fn int_conflict(&mut self, line: u64, message: String, approx: f64) -> Result<(), LineError> {
        if !self.allow_real {
            return Err((line, message));
        }
        if self.pending_int_error.is_none() {
            self.pending_int_error = Some((line, message));
        }
        self.make_real();
        if let Store::F64(w) = &mut self.store {
            w.push(approx);
        }
        Ok(())
    }

    /// Adds a real weight (`f64` for the whole file from here on).
    #[inline]
    pub(crate) fn push_real(&mut self, line: u64, x: f64) -> Result<(), LineError> {
        if x.is_nan() {
            return Err((line, "NaN weights are not allowed".into()));
        }
        if !self.allow_real {
            return Err((line, format!("expected an integer weight, found {x}")));
        }
        self.saw_real = true;
        if !matches!(self.store, Store::F64(_)) {
            self.make_real();
        }
        if let Store::F64(w) = &mut self.store {
            w.push(x);
        }
        Ok(())
    }

    /// Turns the store to `f64` (on a refused allocation the store is left empty and
    /// the error kept for [`Self::reserve_next`]).
    fn make_real(&mut self) {
        let reals: Option<Vec<f64>> = match std::mem::replace(&mut self.store, Store::None) {
            Store::None => Some(Vec::new()),
            Store::U32(w) => self.widened(&w, |x| x as f64),
            Store::I64(w) => self.widened(&w, |x| x as f64),
            Store::U64(w) => self.widened(&w, |x| x as f64),
            Store::F64(w) => Some(w),
        };
        if let Some(reals) = reals {
            self.store = Store::F64(reals);
        }
    }

    /// The collected weights, or the first integer that did not fit when the file turned
    /// out to have no real literal after all.
    pub(crate) fn finish(self) -> Result<Option<WeightVec>, ArcError> {
        if let Some(e) = self.memory_error {
            return Err(ArcError::Memory(e));
        }
        if let Some(e) = self.pending_int_error {
            if !self.saw_real {
                return Err(ArcError::Weight(e));
            }
        }
        Ok(match self.store {
            Store::None => None,
            Store::U32(w) => Some(WeightVec::U32(w)),
            Store::I64(w) => Some(WeightVec::I64(w)),
            Store::U64(w) => Some(WeightVec::U64(w)),
            Store::F64(w) => Some(WeightVec::F64(w)),
        })
    }
}

fn mixed_signs_message(v: i128) -> String {
    format!(
        "weight {v} does not fit one integer type with the earlier weights \
         (i64 cannot hold values above 2^63-1, u64 cannot hold negative ones)"
    )
}

/// The one of two noted values on the earlier line.
fn earlier(a: Option<(u64, i128)>, b: Option<(u64, i128)>) -> Option<(u64, i128)> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 < x.0 { y } else { x }),
        (x, y) => x.or(y),
    }
}

/// The type of a store, narrowest first; a later kind holds every value of an
/// earlier one, except that `U64` holds no negative `I64` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    None,
    U32,
    I64,
    U64,
    F64,
}

impl Store {
    fn kind(&self) -> Kind {
        match self {
            Store::None => Kind::None,
            Store::U32(_) => Kind::U32,
            Store::I64(_) => Kind::I64,
            Store::U64(_) => Kind::U64,
            Store::F64(_) => Kind::F64,
        }
    }

    fn len(&self) -> usize {
        match self {
            Store::None => 0,
            Store::U32(w) => w.len(),
            Store::I64(w) => w.len(),
            Store::U64(w) => w.len(),
            Store::F64(w) => w.len(),
        }
    }

    /// The store as `kind` (not narrower than its own), values converted with `as`.
    fn converted(self, kind: Kind) -> crate::Result<Store> {
        if self.kind() == kind {
            return Ok(self);
        }
        fn to<T: FromStored>(from: &Store) -> crate::Result<Vec<T>> {
            let mut w = alloc::with_capacity(from.len(), WEIGHTS)?;
            extend_from_store(&mut w, from)?;
            Ok(w)
        }
        Ok(match kind {
            Kind::None => Store::None,
            Kind::U32 => Store::U32(to(&self)?),
            Kind::I64 => Store::I64(to(&self)?),
            Kind::U64 => Store::U64(to(&self)?),
            Kind::F64 => Store::F64(to(&self)?),
        })
    }
}

/// A weight type a store's values convert to with `as`.
trait FromStored: Copy {
    fn from_u32(x: u32) -> Self;
    fn from_i64(x: i64) -> Self;
    fn from_u64(x: u64) -> Self;
    fn from_f64(x: f64) -> Self;
}

macro_rules! from_stored {
    ($($t:ty),*) => {$(
        impl FromStored for $t {
            fn from_u32(x: u32) -> Self { x as $t }
            fn from_i64(x: i64) -> Self { x as $t }
            fn from_u64(x: u64) -> Self { x as $t }
            fn from_f64(x: f64) -> Self { x as $t }
        }
    )*};
}
from_stored!(u32, i64, u64, f64);

/// Appends the values of `from` to `w`, converted with `as`.
fn extend_from_store<T: FromStored>(w: &mut Vec<T>, from: &Store) -> crate::Result<()> {
    alloc::reserve(w, from.len(), WEIGHTS)?;
    match from {
        Store::None => {}
        Store::U32(x) => w.extend(x.iter().map(|&x| T::from_u32(x))),
        Store::I64(x) => w.extend(x.iter().map(|&x| T::from_i64(x))),
        Store::U64(x) => w.extend(x.iter().map(|&x| T::from_u64(x))),
        Store::F64(x) => w.extend(x.iter().map(|&x| T::from_f64(x))),
    }
    Ok(())
}

/// Arcs (or edges) in file order, with the lines they came from.
pub(crate) struct ArcList {
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub weights: WeightAcc,
    /// `(arc index, line)` wherever the line numbers of consecutive arcs are not consecutive.
    marks: Vec<(u64, u64)>,
    next_line: u64,
}

/// Why arcs could not become edges.
pub(crate) enum ArcError {
    /// A weight problem found at the end (see [`WeightAcc::finish`]).
    Weight(LineError),
    /// The earliest arc without a partner: its line (or entry index) and endpoints (0-based).
    Unpaired { line: u64, src: u32, dst: u32 },
    /// A refused allocation.
    Memory(Error),
}

/// Why [`pair_arcs`] failed.
pub(crate) enum PairError {
    /// `(arc, src, dst)`: the earliest arc left without a partner.
    Unpaired(usize, u32, u32),
    Memory(Error),
}

impl From<Error> for PairError {
    fn from(e: Error) -> Self {
        PairError::Memory(e)
    }
}

const ARCS: &str = "the arcs read";

impl ArcList {
    pub(crate) fn new(capacity: usize, weights: WeightAcc) -> crate::Result<Self> {
        Ok(ArcList {
            src: alloc::with_capacity(capacity, ARCS)?,
            dst: alloc::with_capacity(capacity, ARCS)?,
            weights,
            marks: Vec::new(),
            next_line: 0,
        })
    }

    /// A list without arcs or weights that allocates nothing.
    pub(crate) fn empty() -> Self {
        ArcList {
            src: Vec::new(),
            dst: Vec::new(),
            weights: WeightAcc::none(),
            marks: Vec::new(),
            next_line: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.src.len()
    }

    /// Adds an arc read from `line` (the weight goes to [`Self::weights`] separately).
    /// Also makes room for the next weight, and reports a refused allocation from
    /// the weight just pushed.
    #[inline]
    pub(crate) fn push(&mut self, line: u64, s: u32, d: u32) -> crate::Result<()> {
        if line != self.next_line {
            alloc::reserve(&mut self.marks, 1, "the line numbers read")?;
            self.marks.push((self.src.len() as u64, line));
        }
        self.next_line = line + 1;
        alloc::reserve(&mut self.src, 1, ARCS)?;
        alloc::reserve(&mut self.dst, 1, ARCS)?;
        self.src.push(s);
        self.dst.push(d);
        self.weights.reserve_next()
    }

    /// The line (or entry index) arc `arc` came from.
    pub(crate) fn line_of(&self, arc: usize) -> u64 {
        line_of(&self.marks, arc)
    }

    /// Whether the weights cannot follow those of `self` (see [`WeightAcc::hard_conflict`]).
    pub(crate) fn hard_conflict(&self, later: &ArcList, offset: u64) -> Option<LineError> {
        self.weights.hard_conflict(&later.weights, offset)
    }

    /// Appends the arcs of `later`, read after those of `self`, whose lines are numbered
    /// `offset` before the file's lines.
    pub(crate) fn append(&mut self, later: ArcList, offset: u64) -> crate::Result<()> {
        let first_arc = self.src.len() as u64;
        alloc::reserve(&mut self.src, later.len(), ARCS)?;
        alloc::reserve(&mut self.dst, later.len(), ARCS)?;
        alloc::reserve(&mut self.marks, later.marks.len(), "the line numbers read")?;
        self.src.extend_from_slice(&later.src);
        self.dst.extend_from_slice(&later.dst);
        self.marks.extend(
            later
                .marks
                .iter()
                .map(|&(arc, line)| (arc + first_arc, line + offset)),
        );
        if later.len() > 0 {
            self.next_line = later.next_line + offset;
        }
        self.weights.append(later.weights, offset)
    }

    /// The edges: every arc as its own edge, or (with `paired`) arcs matched with their
    /// reverse arcs, see [`pair_arcs`].
    pub(crate) fn into_edges(self, paired: bool) -> Result<Edges, ArcError> {
        crate::profile::span("load.edges", || self.edges(paired))
    }

    fn edges(self, paired: bool) -> Result<Edges, ArcError> {
        let ArcList {
            src,
            dst,
            weights,
            marks,
            ..
        } = self;
        let weights = weights.finish()?;
        if !paired {
            let (mut src, mut dst, mut weights) = (src, dst, weights);
            src.shrink_to_fit();
            dst.shrink_to_fit();
            shrink(&mut weights);
            return Ok((src, dst, weights));
        }
        pair_arcs(src, dst, weights).map_err(|e| match e {
            PairError::Unpaired(arc, s, d) => ArcError::Unpaired {
                line: line_of(&marks, arc),
                src: s,
                dst: d,
            },
            PairError::Memory(e) => ArcError::Memory(e),
        })
    }
}

/// The line of arc `arc`, given the marks where line numbering jumps (none: the line is
/// the arc's index, as for binary formats).
fn line_of(marks: &[(u64, u64)], arc: usize) -> u64 {
    let arc = arc as u64;
    let k = marks.partition_point(|m| m.0 <= arc);
    if k == 0 {
        arc
    } else {
        let (a0, l0) = marks[k - 1];
        l0 + (arc - a0)
    }
}

/// The pairing key of a weight: equal weights give equal keys (`-0.0` equals `+0.0`).
#[inline]
fn weight_key(w: Option<&WeightVec>, i: usize) -> u64 {
    match w {
        None => 0,
        Some(WeightVec::I32(w)) => w[i] as u32 as u64,
        Some(WeightVec::U32(w)) => w[i] as u64,
        Some(WeightVec::I64(w)) => w[i] as u64,
        Some(WeightVec::U64(w)) => w[i],
        Some(WeightVec::F32(w)) => (w[i] + 0.0).to_bits() as u64,
        Some(WeightVec::F64(w)) => (w[i] + 0.0).to_bits(),
    }
}

trait PairKey: Ord + Send + Sync + Copy {
    /// `(lo << 32 | hi, weight key)`: arcs pair within a group.
    fn group(&self) -> (u64, u64);
    /// The arc's position in the file.
    fn idx(&self) -> usize;
    /// Whether the arc runs from `lo` to `hi` (self-loops: always).
    fn forward(&self) -> bool;
}

/// `lo:32 | hi:32 | weight:32 | idx:31 | forward:1`, for 32-bit weight keys and fewer
/// than 2^31 arcs.
impl PairKey for u128 {
    #[inline]
    fn group(&self) -> (u64, u64) {
        ((self >> 64) as u64, (self >> 32) as u32 as u64)
    }
    #[inline]
    fn idx(&self) -> usize {
        (*self as u32 >> 1) as usize
    }
    #[inline]
    fn forward(&self) -> bool {
        *self & 1 == 1
    }
}

/// `(lo << 32 | hi, weight key, idx << 1 | forward)`.
impl PairKey for (u64, u64, u64) {
    #[inline]
    fn group(&self) -> (u64, u64) {
        (self.0, self.1)
    }
    #[inline]
    fn idx(&self) -> usize {
        (self.2 >> 1) as usize
    }
    #[inline]
    fn forward(&self) -> bool {
        self.2 & 1 == 1
    }
}

/// An edge found by the pairing: `idx << 64 | u << 32 | v`, so that edges sort by the
/// position of their first arc.
type Opener = u128;

#[inline]
fn opener<K: PairKey>(k: &K) -> Opener {
    let (lohi, _) = k.group();
    let (lo, hi) = (lohi >> 32, lohi & 0xffff_ffff);
    let (u, v) = if k.forward() { (lo, hi) } else { (hi, lo) };
    (k.idx() as u128) << 64 | (u as u128) << 32 | v as u128
}

/// Matches every arc `u→v` (weight `w`) with an arc `v→u` of the same weight. Arcs are
/// taken in file order; an arc pairs with the earliest still-unpaired reverse arc, so
/// parallel edges pair one-to-one. A self-loop arc pairs with the next self-loop arc on
/// the same vertex with the same weight; a self-loop arc left over is its own edge.
///
/// The edges are numbered by their first arc's position and keep its direction and
/// weight. `Unpaired(arc, src, dst)` names the earliest arc left without a partner.
///
/// Sorting keys that carry endpoints, weight key, position and direction keeps every
/// pass sequential: no random access to the arc arrays.
pub(crate) fn pair_arcs(
    src: Vec<u32>,
    dst: Vec<u32>,
    weights: Option<WeightVec>,
) -> Result<Edges, PairError> {
    const KEYS: &str = "the arcs' pairing keys";
    let n = src.len();
    let narrow_weights = matches!(
        weights,
        None | Some(WeightVec::U32(_)) | Some(WeightVec::I32(_)) | Some(WeightVec::F32(_))
    );
    let w = weights.as_ref();
    let found = if narrow_weights && n < 1 << 31 {
        let mut keys: Vec<u128> = alloc::par_collect(
            (0..n).into_par_iter().map(|i| {
                let (s, d) = (src[i], dst[i]);
                let (lo, hi) = (s.min(d), s.max(d));
                (lo as u128) << 96
                    | (hi as u128) << 64
                    | (weight_key(w, i) as u128) << 32
                    | (i as u128) << 1
                    | (s <= d) as u128
            }),
            KEYS,
        )?;
        drop((src, dst));
        keys.par_sort_unstable();
        scan_parallel(&keys)
    } else {
        let mut keys: Vec<(u64, u64, u64)> = alloc::par_collect(
            (0..n).into_par_iter().map(|i| {
                let (s, d) = (src[i], dst[i]);
                let (lo, hi) = (s.min(d), s.max(d));
                (
                    (lo as u64) << 32 | hi as u64,
                    weight_key(w, i),
                    (i as u64) << 1 | (s <= d) as u64,
                )
            }),
            KEYS,
        )?;
        drop((src, dst));
        keys.par_sort_unstable();
        scan_parallel(&keys)
    };
    let mut openers = found?;
    openers.par_sort_unstable();
    const EDGES: &str = "the edges paired";
    let u: Vec<u32> = alloc::par_collect(openers.par_iter().map(|&o| (o >> 32) as u32), EDGES)?;
    let v: Vec<u32> = alloc::par_collect(openers.par_iter().map(|&o| o as u32), EDGES)?;
    let at = |o: &Opener| (o >> 64) as usize;
    let weights = match weights {
        None => None,
        Some(WeightVec::I32(w)) => Some(WeightVec::I32(alloc::par_collect(
            openers.par_iter().map(|o| w[at(o)]),
            EDGES,
        )?)),
        Some(WeightVec::U32(w)) => Some(WeightVec::U32(alloc::par_collect(
            openers.par_iter().map(|o| w[at(o)]),
            EDGES,
        )?)),
        Some(WeightVec::I64(w)) => Some(WeightVec::I64(alloc::par_collect(
            openers.par_iter().map(|o| w[at(o)]),
            EDGES,
        )?)),
        Some(WeightVec::U64(w)) => Some(WeightVec::U64(alloc::par_collect(
            openers.par_iter().map(|o| w[at(o)]),
            EDGES,
        )?)),
        Some(WeightVec::F32(w)) => Some(WeightVec::F32(alloc::par_collect(
            openers.par_iter().map(|o| w[at(o)]),
            EDGES,
        )?)),
        Some(WeightVec::F64(w)) => Some(WeightVec::F64(alloc::par_collect(
            openers.par_iter().map(|o| w[at(o)]),
            EDGES,
        )?)),
    };
    Ok((u, v, weights))
}

/// Runs [`scan`] on pieces of `keys` cut at group boundaries: the openers in key order,
/// or the earliest unpaired arc.
fn scan_parallel<K: PairKey>(keys: &[K]) -> Result<Vec<Opener>, PairError> {
    let pieces = (rayon::current_num_threads() * 4).max(1);
    let mut cuts = vec![0];
    for p in 1..pieces {
        let mut c = (keys.len() * p / pieces).max(*cuts.last().unwrap());
        while c > 0 && c < keys.len() && keys[c].group() == keys[c - 1].group() {
            c += 1;
        }
        cuts.push(c);
    }
    cuts.push(keys.len());
    // A few pieces per thread.
    let results: Vec<(Vec<Opener>, Option<K>)> = cuts
        .windows(2)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|w| scan(&keys[w[0]..w[1]]))
        .collect::<crate::Result<_>>()?;
    if let Some(k) = results.iter().filter_map(|r| r.1).min_by_key(|k| k.idx()) {
        let o = opener(&k);
        return Err(PairError::Unpaired(k.idx(), (o >> 32) as u32, o as u32));
    }
    let total = results.iter().map(|r| r.0.len()).sum();
    let mut all = alloc::with_capacity(total, "the edges paired")?;
    for (openers, _) in results {
        all.extend_from_slice(&openers);
    }
    Ok(all)
}

fn shrink(w: &mut Option<WeightVec>) {
    match w {
        None => {}
        Some(WeightVec::I32(w)) => w.shrink_to_fit(),
        Some(WeightVec::U32(w)) => w.shrink_to_fit(),
        Some(WeightVec::I64(w)) => w.shrink_to_fit(),
        Some(WeightVec::U64(w)) => w.shrink_to_fit(),
        Some(WeightVec::F32(w)) => w.shrink_to_fit(),
        Some(WeightVec::F64(w)) => w.shrink_to_fit(),
    }
}

/// Pairs the arcs of whole groups (same endpoints and weight key, in file order): the
/// openers, and the earliest arc left unpaired, if any.
fn scan<K: PairKey>(keys: &[K]) -> crate::Result<(Vec<Opener>, Option<K>)> {
    const OPENERS: &str = "the edges paired";
    let mut openers = alloc::with_capacity(keys.len() / 2 + 1, OPENERS)?;
    let mut pending: VecDeque<K> = VecDeque::new();
    let mut first_unpaired: Option<K> = None;
    let mut note = |k: K| {
        if first_unpaired.map_or(true, |f| k.idx() < f.idx()) {
            first_unpaired = Some(k);
        }
    };
    let mut i = 0;
    while i < keys.len() {
        let g = keys[i].group();
        let mut j = i + 1;
        while j < keys.len() && keys[j].group() == g {
            j += 1;
        }
        // Room for this group's openers (at most one per arc).
        alloc::reserve(&mut openers, j - i, OPENERS)?;
        if g.0 >> 32 == g.0 & 0xffff_ffff {
            // Self-loops: consecutive arcs pair; a last odd one stands alone.
            openers.extend(keys[i..j].iter().step_by(2).map(opener));
        } else if j == i + 2 && keys[i].forward() != keys[i + 1].forward() {
            // The common case: one arc each way.
            openers.push(opener(&keys[i]));
        } else if j == i + 1 {
            note(keys[i]);
        } else {
            pending.clear();
            for k in &keys[i..j] {
                match pending.front() {
                    Some(p) if p.forward() != k.forward() => {
                        pending.pop_front();
                    }
                    _ => {
                        pending.push_back(*k);
                        openers.push(opener(k));
                    }
                }
            }
            if let Some(&k) = pending.front() {
                note(k);
            }
        }
        i = j;
    }
    Ok((openers, first_unpaired))
}
