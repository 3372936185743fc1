//! What the readers collect: arcs with their source lines, weights of a type chosen by
//! the values seen, and the pairing of the two arcs of each undirected edge.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use crate::graph::WeightVec;
use crate::{alloc, profile, Error};

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
    /// Whether weights noted from different pieces conflict (see [`Self::note`]): the
    /// store turns `f64` when they are appended.
    conflicted: bool,
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
            conflicted: false,
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

    /// Takes note of the weights of `later`, read after every weight noted so far, whose
    /// lines are numbered `offset` before the file's: what they say of the file's type
    /// (a conflict between them and the earlier weights is kept pending, as
    /// [`Self::push_int`] would keep it), for [`Self::append_all`]. For formats whose
    /// weights cannot turn real, such a conflict is the error a sequential reading would
    /// have stopped at, and is returned instead.
    pub(crate) fn note(&mut self, later: &WeightAcc, offset: u64) -> Option<LineError> {
        let conflict = self.first_conflict(later, offset);
        if let (Some((line, v)), false) = (conflict, self.allow_real) {
            return Some((line, mixed_signs_message(v)));
        }
        let shift = |o: Option<(u64, i128)>| o.map(|(line, v)| (line + offset, v));
        let pending = [
            self.pending_int_error.take(),
            conflict.map(|(line, v)| (line, mixed_signs_message(v))),
            later
                .pending_int_error
                .as_ref()
                .map(|(line, m)| (line + offset, m.clone())),
        ];
        self.pending_int_error = pending.into_iter().flatten().min_by_key(|e| e.0);
        self.first_negative = self.first_negative.or(shift(later.first_negative));
        self.first_above_i64 = self.first_above_i64.or(shift(later.first_above_i64));
        self.saw_real |= later.saw_real;
        self.conflicted |= conflict.is_some();
        None
    }

    /// Appends the weights of `later`, each noted first ([`Self::note`]), in order, as
    /// if they had been pushed one by one: the store becomes the narrowest type for
    /// all, and the values are copied in parallel.
    pub(crate) fn append_all(&mut self, later: Vec<WeightAcc>) -> crate::Result<()> {
        if let Some(e) = self.memory_error.take() {
            return Err(e);
        }
        // Pieces without weights (say, of comments) widen nothing.
        let mut parts = Vec::with_capacity(later.len());
        for mut w in later {
            if let Some(e) = w.memory_error.take() {
                return Err(e);
            }
            if w.store.len() > 0 {
                parts.push(w.store);
            }
        }
        let kind = if self.conflicted {
            Kind::F64
        } else {
            parts
                .iter()
                .map(Store::kind)
                .fold(self.store.kind(), Kind::max)
        };
        if parts.is_empty() || kind == self.store.kind() && parts.iter().all(|p| p.kind() == kind) {
            return append_stores(&mut self.store, parts);
        }
        if self.store.kind() == Kind::None || parts.iter().any(|p| p.kind() == Kind::None) {
            return Err(Error::internal("weighted and weightless arcs joined"));
        }
        let store = std::mem::replace(&mut self.store, Store::None);
        self.store = store.converted(kind)?;
        let parts = parts
            .into_par_iter()
            .map(|p| p.converted(kind))
            .collect::<crate::Result<Vec<Store>>>()?;
        append_stores(&mut self.store, parts)
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

/// Appends the values of `parts`, all of the kind of `store`, to it in parallel.
fn append_stores(store: &mut Store, parts: Vec<Store>) -> crate::Result<()> {
    macro_rules! append {
        ($w:ident, $variant:ident) => {{
            let slices: Vec<&[_]> = parts
                .iter()
                .map(|p| match p {
                    Store::$variant(x) => x.as_slice(),
                    _ => &[],
                })
                .collect();
            alloc::par_append($w, &slices, |&x| x, WEIGHTS)
        }};
    }
    if parts.iter().any(|p| p.kind() != store.kind()) {
        return Err(Error::internal("weights of another type appended"));
    }
    match store {
        Store::None => Ok(()),
        Store::U32(w) => append!(w, U32),
        Store::I64(w) => append!(w, I64),
        Store::U64(w) => append!(w, U64),
        Store::F64(w) => append!(w, F64),
    }
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

    /// Appends the arcs of `later`, each with the offset of its line numbers to the
    /// file's, read in this order after those of `self`, whose weights were noted
    /// ([`WeightAcc::note`]). The arrays are copied in parallel.
    pub(crate) fn append_all(&mut self, later: Vec<(ArcList, u64)>) -> crate::Result<()> {
        let mut first_arc = self.src.len() as u64;
        let marks: usize = later.iter().map(|(a, _)| a.marks.len()).sum();
        alloc::reserve(&mut self.marks, marks, "the line numbers read")?;
        for (arcs, offset) in &later {
            self.marks.extend(
                arcs.marks
                    .iter()
                    .map(|&(arc, line)| (arc + first_arc, line + offset)),
            );
            if arcs.len() > 0 {
                self.next_line = arcs.next_line + offset;
            }
            first_arc += arcs.len() as u64;
        }
        let src: Vec<&[u32]> = later.iter().map(|(a, _)| a.src.as_slice()).collect();
        alloc::par_append(&mut self.src, &src, |&x| x, ARCS)?;
        let dst: Vec<&[u32]> = later.iter().map(|(a, _)| a.dst.as_slice()).collect();
        alloc::par_append(&mut self.dst, &dst, |&x| x, ARCS)?;
        drop((src, dst));
        self.weights
            .append_all(later.into_iter().map(|(a, _)| a.weights).collect())
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

/// Matches every arc `u→v` (weight `w`) with an arc `v→u` of the same weight. Arcs are
/// taken in file order; an arc pairs with the earliest still-unpaired reverse arc, so
/// parallel edges pair one-to-one. A self-loop arc pairs with the next self-loop arc on
/// the same vertex with the same weight; a self-loop arc left over is its own edge.
///
/// The edges are numbered by their first arc's position and keep its direction and
/// weight. `Unpaired(arc, src, dst)` names the earliest arc left without a partner.
///
/// One sort of keys that carry endpoints, weight key, position and direction brings
/// the arcs of each group (same ends, same weight) together in file order; each group's
/// first arcs are marked in a bit set by position, which lists the edges in position
/// order without a second sort.
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
    let first_arcs: Vec<AtomicU64> = alloc::par_collect(
        (0..n.div_ceil(64))
            .into_par_iter()
            .map(|_| AtomicU64::new(0)),
        "the arcs' pairing marks",
    )?;
    let unpaired = if narrow_weights && n < 1 << 31 {
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
        profile::span("load.pair_sort", || keys.par_sort_unstable());
        scan_parallel(&keys, &first_arcs)
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
        profile::span("load.pair_sort", || keys.par_sort_unstable());
        scan_parallel(&keys, &first_arcs)
    };
    if let Some(arc) = unpaired {
        return Err(PairError::Unpaired(arc, src[arc], dst[arc]));
    }
    const EDGES: &str = "the edges paired";
    // The marked positions, in order.
    let firsts: Vec<usize> =
        alloc::par_collect_ranges_n(first_arcs.len(), 64, EDGES, |words, out| {
            for k in words {
                let mut bits = first_arcs[k].load(Relaxed);
                while bits != 0 {
                    out.push(k * 64 + bits.trailing_zeros() as usize);
                    bits &= bits - 1;
                }
            }
        })?;
    drop(first_arcs);
    let u: Vec<u32> = alloc::par_collect(firsts.par_iter().map(|&i| src[i]), EDGES)?;
    drop(src);
    let v: Vec<u32> = alloc::par_collect(firsts.par_iter().map(|&i| dst[i]), EDGES)?;
    drop(dst);
    let weights = match weights {
        None => None,
        Some(WeightVec::I32(w)) => Some(WeightVec::I32(gather(&w, &firsts)?)),
        Some(WeightVec::U32(w)) => Some(WeightVec::U32(gather(&w, &firsts)?)),
        Some(WeightVec::I64(w)) => Some(WeightVec::I64(gather(&w, &firsts)?)),
        Some(WeightVec::U64(w)) => Some(WeightVec::U64(gather(&w, &firsts)?)),
        Some(WeightVec::F32(w)) => Some(WeightVec::F32(gather(&w, &firsts)?)),
        Some(WeightVec::F64(w)) => Some(WeightVec::F64(gather(&w, &firsts)?)),
    };
    Ok((u, v, weights))
}

/// `data[i]` for each `i` of `at`.
fn gather<T: Copy + Send + Sync>(data: &[T], at: &[usize]) -> crate::Result<Vec<T>> {
    alloc::par_collect(at.par_iter().map(|&i| data[i]), "the edges paired")
}

/// Runs [`scan`] on pieces of `keys` cut at group boundaries, marking the first arcs
/// of edges in `first_arcs`: the earliest unpaired arc, if any.
fn scan_parallel<K: PairKey>(keys: &[K], first_arcs: &[AtomicU64]) -> Option<usize> {
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
    cuts.par_windows(2)
        .filter_map(|w| scan(&keys[w[0]..w[1]], first_arcs))
        .min()
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

/// Pairs the arcs of whole groups (same endpoints and weight key, in file order),
/// marking the first arc of each edge in `first_arcs`: the position of the earliest arc
/// left unpaired, if any.
fn scan<K: PairKey>(keys: &[K], first_arcs: &[AtomicU64]) -> Option<usize> {
    let open = |k: &K| {
        let i = k.idx();
        first_arcs[i / 64].fetch_or(1 << (i % 64), Relaxed);
    };
    let mut pending: VecDeque<K> = VecDeque::new();
    let mut first_unpaired: Option<usize> = None;
    let mut note =
        |k: &K| first_unpaired = Some(first_unpaired.map_or(k.idx(), |f| f.min(k.idx())));
    let mut i = 0;
    while i < keys.len() {
        let g = keys[i].group();
        let mut j = i + 1;
        while j < keys.len() && keys[j].group() == g {
            j += 1;
        }
        if g.0 >> 32 == g.0 & 0xffff_ffff {
            // Self-loops: consecutive arcs pair; a last odd one stands alone.
            keys[i..j].iter().step_by(2).for_each(open);
        } else if j == i + 2 && keys[i].forward() != keys[i + 1].forward() {
            // The common case: one arc each way.
            open(&keys[i]);
        } else if j == i + 1 {
            note(&keys[i]);
        } else {
            pending.clear();
            for k in &keys[i..j] {
                match pending.front() {
                    Some(p) if p.forward() != k.forward() => {
                        pending.pop_front();
                    }
                    _ => {
                        pending.push_back(*k);
                        open(k);
                    }
                }
            }
            if let Some(k) = pending.front() {
                note(k);
            }
        }
        i = j;
    }
    first_unpaired
}
