//! The primitives' references, shared by tests/primitives.rs and tests/stress.rs:
//! seeded data of many patterns, segmentations, the element types' test-side arithmetic,
//! and naive sequential scans and arg-reductions written independently of the crate's
//! own operators (the comparison rules are described in tests/primitives.rs).

use gpumst::{Element, ScanKind, ScanOp};

/// Elements per scan chunk of the CPU tier for 4-byte and 8-byte types, and elements per
/// parallel task of its arg-reductions: sizes below straddle these.
pub const CHUNK4: usize = 32 * 1024;
pub const CHUNK8: usize = 16 * 1024;
pub const TASK: usize = 1 << 16;

// ---- deterministic data ---------------------------------------------------------------

/// splitmix64: data are built from a seed so that proptest only shrinks the case shape.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability 1 / `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

// ---- element types --------------------------------------------------------------------

/// What the tests need of an element type, written independently of the crate's own
/// operator implementations.
pub trait TestElem: Element {
    const NAME: &'static str;
    const IS_FLOAT: bool;
    /// Machine epsilon (0 for integers).
    const EPS: f64;
    /// Identity of `Min`: the type's maximum, +inf for floats.
    const MIN_IDENTITY: Self;
    /// Identity of `Max`: the type's minimum, -inf for floats.
    const MAX_IDENTITY: Self;
    /// Wrapping (integers) or IEEE (floats) addition.
    fn plus(self, other: Self) -> Self;
    fn nan(self) -> bool;
    /// Exact bit pattern, for bitwise comparisons.
    fn bits(self) -> u64;
    fn as_f64(self) -> f64;
    /// A small integer (wrapping into unsigned types).
    fn small(v: i64) -> Self;
    /// Integers: any bit pattern. Floats: finite, sign random, magnitude 2^-20..2^20.
    fn random(rng: &mut Rng) -> Self;
    /// MIN/MAX and neighbours; for floats also ±MAX, ±inf, NaNs, ±0, subnormals.
    fn extremes() -> Vec<Self>;
    /// Values whose sums do not depend on association: integer MIN/MAX, float NaN/±inf/±0.
    fn sum_specials() -> Vec<Self>;
    /// A tiny set of values, so that extremes tie a lot (±0.0 for floats).
    fn ties() -> Vec<Self>;
    /// Values below 1 (the minimum of planted data; ±0.0 tie for floats).
    fn planted_low() -> Vec<Self>;
    /// Values above 8 (the maximum of planted data).
    fn planted_high() -> Vec<Self>;
    /// NaNs with distinct bit patterns (none for integers).
    fn nans() -> Vec<Self>;
    /// What output buffers are filled with before a call, to catch unwritten slots.
    fn garbage() -> Self;
}

macro_rules! int_elem {
    ($t:ty) => {
        impl TestElem for $t {
            const NAME: &'static str = stringify!($t);
            const IS_FLOAT: bool = false;
            const EPS: f64 = 0.0;
            const MIN_IDENTITY: Self = <$t>::MAX;
            const MAX_IDENTITY: Self = <$t>::MIN;
            fn plus(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            fn nan(self) -> bool {
                false
            }
            fn bits(self) -> u64 {
                self as u64
            }
            fn as_f64(self) -> f64 {
                self as f64
            }
            fn small(v: i64) -> Self {
                v as $t
            }
            fn random(rng: &mut Rng) -> Self {
                rng.next() as $t
            }
            fn extremes() -> Vec<Self> {
                vec![
                    <$t>::MIN,
                    <$t>::MIN.wrapping_add(1),
                    <$t>::MAX.wrapping_sub(1),
                    <$t>::MAX,
                    0,
                    1,
                    (-1i64) as $t,
                    2,
                ]
            }
            fn sum_specials() -> Vec<Self> {
                vec![<$t>::MIN, <$t>::MAX]
            }
            fn ties() -> Vec<Self> {
                vec![<$t>::MIN, 0, 1, <$t>::MAX]
            }
            fn planted_low() -> Vec<Self> {
                vec![<$t>::MIN, 0]
            }
            fn planted_high() -> Vec<Self> {
                vec![<$t>::MAX, 9]
            }
            fn nans() -> Vec<Self> {
                Vec::new()
            }
            fn garbage() -> Self {
                0x5A5A_5A5A_5A5A_5A5Au64 as $t
            }
        }
    };
}

macro_rules! float_elem {
    ($t:ty, $bits:ty, $neg_nan:expr, $payload_nan:expr) => {
        impl TestElem for $t {
            const NAME: &'static str = stringify!($t);
            const IS_FLOAT: bool = true;
            const EPS: f64 = <$t>::EPSILON as f64;
            const MIN_IDENTITY: Self = <$t>::INFINITY;
            const MAX_IDENTITY: Self = <$t>::NEG_INFINITY;
            fn plus(self, other: Self) -> Self {
                self + other
            }
            fn nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn as_f64(self) -> f64 {
                self as f64
            }
            fn small(v: i64) -> Self {
                v as $t
            }
            fn random(rng: &mut Rng) -> Self {
                let mantissa = 1.0 + (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
                let exponent = rng.below(41) as i32 - 20;
                let sign = if rng.one_in(2) { -1.0 } else { 1.0 };
                (sign * mantissa * 2f64.powi(exponent)) as $t
            }
            fn extremes() -> Vec<Self> {
                vec![
                    <$t>::MAX,
                    -<$t>::MAX,
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    <$t>::NAN,
                    <$t>::from_bits($neg_nan),
                    <$t>::from_bits($payload_nan),
                    0.0,
                    -0.0,
                    <$t>::MIN_POSITIVE,
                    -<$t>::MIN_POSITIVE,
                    <$t>::from_bits(1),
                    -<$t>::from_bits(1),
                    1.0,
                    -1.0,
                    <$t>::EPSILON,
                ]
            }
            fn sum_specials() -> Vec<Self> {
                vec![
                    <$t>::NAN,
                    <$t>::from_bits($neg_nan),
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    0.0,
                    -0.0,
                ]
            }
            fn ties() -> Vec<Self> {
                vec![0.0, -0.0, 1.0, -1.0]
            }
            fn planted_low() -> Vec<Self> {
                vec![0.0, -0.0]
            }
            fn planted_high() -> Vec<Self> {
                vec![<$t>::INFINITY, 9.0]
            }
            fn nans() -> Vec<Self> {
                vec![
                    <$t>::NAN,
                    <$t>::from_bits($neg_nan),
                    <$t>::from_bits($payload_nan),
                ]
            }
            fn garbage() -> Self {
                <$t>::from_bits(($payload_nan as $bits) ^ 0x5A)
            }
        }
    };
}

int_elem!(i32);
int_elem!(u32);
int_elem!(i64);
int_elem!(u64);
float_elem!(f32, u32, 0xFFC0_0000u32, 0x7FC0_0123u32);
float_elem!(f64, u64, 0xFFF8_0000_0000_0000u64, 0x7FF8_0000_0000_0123u64);

pub fn show<T: TestElem>(x: T) -> String {
    format!("{x:?} (bits {:#x})", x.bits())
}

// ---- references -----------------------------------------------------------------------

pub fn ref_identity<T: TestElem>(op: ScanOp) -> T {
    match op {
        ScanOp::Sum => T::small(0),
        ScanOp::Min => T::MIN_IDENTITY,
        ScanOp::Max => T::MAX_IDENTITY,
    }
}

/// `acc ⊕ x`: NaN is the extreme and sticks; among equal values the earlier stays.
pub fn ref_combine<T: TestElem>(op: ScanOp, acc: T, x: T) -> T {
    match op {
        ScanOp::Sum => acc.plus(x),
        ScanOp::Min => {
            if acc.nan() {
                acc
            } else if x.nan() || x < acc {
                x
            } else {
                acc
            }
        }
        ScanOp::Max => {
            if acc.nan() {
                acc
            } else if x.nan() || x > acc {
                x
            } else {
                acc
            }
        }
    }
}

/// Sequential segmented scan; `heads[i]` starts a segment at `i`.
pub fn ref_scan<T: TestElem>(data: &[T], heads: &[bool], op: ScanOp, kind: ScanKind) -> Vec<T> {
    assert_eq!(data.len(), heads.len());
    let mut out = Vec::with_capacity(data.len());
    let mut acc = ref_identity::<T>(op);
    for (&x, &head) in data.iter().zip(heads) {
        if head {
            acc = ref_identity::<T>(op);
        }
        match kind {
            ScanKind::Inclusive => {
                acc = ref_combine(op, acc, x);
                out.push(acc);
            }
            ScanKind::Exclusive => {
                out.push(acc);
                acc = ref_combine(op, acc, x);
            }
        }
    }
    out
}

/// Per output slot of a float sum scan: the sum of |x| and the count of the elements it
/// covers, and whether every association of those elements gives NaN.
pub struct SumAux {
    pub abs: Vec<f64>,
    pub count: Vec<f64>,
    pub forced_nan: Vec<bool>,
}

pub fn sum_aux<T: TestElem>(data: &[T], heads: &[bool], kind: ScanKind) -> SumAux {
    let n = data.len();
    let mut aux = SumAux {
        abs: Vec::with_capacity(n),
        count: Vec::with_capacity(n),
        forced_nan: Vec::with_capacity(n),
    };
    let (mut abs, mut count, mut nan, mut pos_inf, mut neg_inf) = (0.0, 0.0, false, false, false);
    for (&x, &head) in data.iter().zip(heads) {
        if head {
            (abs, count, nan, pos_inf, neg_inf) = (0.0, 0.0, false, false, false);
        }
        let mut push = |abs: f64, count: f64, forced: bool| {
            aux.abs.push(abs);
            aux.count.push(count);
            aux.forced_nan.push(forced);
        };
        if kind == ScanKind::Exclusive {
            push(abs, count, nan || (pos_inf && neg_inf));
        }
        let v = x.as_f64();
        nan |= v.is_nan();
        pos_inf |= v == f64::INFINITY;
        neg_inf |= v == f64::NEG_INFINITY;
        if v.is_finite() {
            abs += v.abs();
        }
        count += 1.0;
        if kind == ScanKind::Inclusive {
            push(abs, count, nan || (pos_inf && neg_inf));
        }
    }
    aux
}

/// How float sums are compared (integer sums and all min/max results are always exact).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SumCheck {
    /// Every association gives the same value (small integers, NaN, ±inf): `==`, NaN for NaN.
    Exact,
    /// Finite data of varied magnitude: within the rounding bound of two summation orders.
    Rounding,
    /// ±MAX present, so overflow depends on association: only forced NaNs are checked.
    NanOnly,
}

pub fn compare_scan<T: TestElem>(
    got: &[T],
    want: &[T],
    op: ScanOp,
    check: SumCheck,
    aux: Option<&SumAux>,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let float_sum = T::IS_FLOAT && op == ScanOp::Sum;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if !float_sum {
            g.bits() == w.bits()
        } else {
            let aux = aux.expect("float sums come with their rounding bounds");
            match check {
                SumCheck::Exact => {
                    if w.nan() {
                        g.nan()
                    } else {
                        g == w
                    }
                }
                SumCheck::Rounding => {
                    if w.nan() {
                        g.nan()
                    } else if w.as_f64().is_infinite() {
                        g == w
                    } else {
                        let bound = 2.0 * (aux.count[i] + 1.0) * T::EPS * aux.abs[i];
                        !g.nan() && (g.as_f64() - w.as_f64()).abs() <= bound
                    }
                }
                SumCheck::NanOnly => !aux.forced_nan[i] || g.nan(),
            }
        };
        if !ok {
            return Err(format!(
                "first mismatch at index {i}: got {}, want {}",
                show(g),
                show(w)
            ));
        }
    }
    Ok(())
}

/// First index of the minimum (maximum); the first NaN wins.
pub fn ref_arg<T: TestElem>(data: &[T], min: bool) -> Option<(T, usize)> {
    let mut best: Option<(T, usize)> = None;
    for (i, &x) in data.iter().enumerate() {
        best = match best {
            None => Some((x, i)),
            Some((b, _)) if b.nan() => break,
            Some((b, _)) if x.nan() || (min && x < b) || (!min && x > b) => Some((x, i)),
            keep => keep,
        };
    }
    best
}

// ---- case shapes ----------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataPattern {
    Random,
    SmallInt,
    AllEqual,
    Sorted,
    Reversed,
    Extremes,
    SparseSpecials,
    Ties,
    Planted,
    PlantedNan,
}

impl DataPattern {
    pub const ALL: [DataPattern; 10] = [
        DataPattern::Random,
        DataPattern::SmallInt,
        DataPattern::AllEqual,
        DataPattern::Sorted,
        DataPattern::Reversed,
        DataPattern::Extremes,
        DataPattern::SparseSpecials,
        DataPattern::Ties,
        DataPattern::Planted,
        DataPattern::PlantedNan,
    ];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegPattern {
    /// One segment (flags all zero, even at index 0; offsets `[0, n]`).
    NoHeads,
    /// Every element is its own segment.
    AllHeads,
    /// Heads with probability 1/2, 1/100, 1/30000.
    Dense,
    Sparse,
    VerySparse,
    /// Heads on and around chunk and block boundaries.
    ChunkEdges,
}

impl SegPattern {
    pub const ALL: [SegPattern; 6] = [
        SegPattern::NoHeads,
        SegPattern::AllHeads,
        SegPattern::Dense,
        SegPattern::Sparse,
        SegPattern::VerySparse,
        SegPattern::ChunkEdges,
    ];
}

/// A position, often right on or next to a block / chunk / task boundary.
pub fn boundary_position(rng: &mut Rng, n: usize) -> usize {
    if rng.one_in(2) {
        let unit = rng.pick(&[2048usize, CHUNK8, CHUNK4, TASK]);
        let k = n / unit;
        if k > 0 {
            let p = (1 + rng.below(k)) * unit;
            return (p + rng.below(3)).saturating_sub(1).min(n - 1);
        }
    }
    rng.below(n)
}

/// Builds data of `pattern` and says how float sums over it can be compared.
pub fn make_data<T: TestElem>(pattern: DataPattern, n: usize, rng: &mut Rng) -> (Vec<T>, SumCheck) {
    let float_check = |check: SumCheck| {
        if T::IS_FLOAT {
            check
        } else {
            SumCheck::Exact
        }
    };
    // Small enough that no float sum over `n` of them rounds.
    let small_range = if n > 2_000_000 { 1 } else { 8 };
    let small =
        |rng: &mut Rng| T::small(rng.below(2 * small_range + 1) as i64 - small_range as i64);
    match pattern {
        DataPattern::Random => (
            (0..n).map(|_| T::random(rng)).collect(),
            float_check(SumCheck::Rounding),
        ),
        DataPattern::SmallInt => ((0..n).map(|_| small(rng)).collect(), SumCheck::Exact),
        DataPattern::AllEqual => match rng.below(3) {
            0 => (vec![small(rng); n], SumCheck::Exact),
            1 => (vec![rng.pick(&T::sum_specials()); n], SumCheck::Exact),
            _ => (vec![T::random(rng); n], float_check(SumCheck::Rounding)),
        },
        DataPattern::Sorted | DataPattern::Reversed => {
            let mut data: Vec<T> = (0..n).map(|_| T::random(rng)).collect();
            data.sort_by(|a, b| a.partial_cmp(b).expect("random data hold no NaN"));
            if pattern == DataPattern::Reversed {
                data.reverse();
            }
            (data, float_check(SumCheck::Rounding))
        }
        DataPattern::Extremes => {
            let choices = T::extremes();
            (
                (0..n).map(|_| rng.pick(&choices)).collect(),
                float_check(SumCheck::NanOnly),
            )
        }
        DataPattern::SparseSpecials => {
            let specials = T::sum_specials();
            let rate = rng.pick(&[50usize, 3000]);
            let data = (0..n)
                .map(|_| {
                    if rng.one_in(rate) {
                        rng.pick(&specials)
                    } else {
                        small(rng)
                    }
                })
                .collect();
            (data, SumCheck::Exact)
        }
        DataPattern::Ties => {
            let choices = T::ties();
            (
                (0..n).map(|_| rng.pick(&choices)).collect(),
                SumCheck::Exact,
            )
        }
        DataPattern::Planted | DataPattern::PlantedNan => {
            let mut data: Vec<T> = (0..n).map(|_| T::small(1 + rng.below(8) as i64)).collect();
            if n > 0 {
                let nans = T::nans();
                let plants: Vec<Vec<T>> = if pattern == DataPattern::PlantedNan && !nans.is_empty()
                {
                    vec![nans]
                } else {
                    vec![T::planted_low(), T::planted_high()]
                };
                for values in plants {
                    for _ in 0..1 + rng.below(6) {
                        let p = boundary_position(rng, n);
                        data[p] = rng.pick(&values);
                    }
                }
            }
            (data, SumCheck::Exact)
        }
    }
}

/// Segment heads (`heads[0]` is always true), plus flags and offsets describing them.
pub struct Segmentation {
    pub heads: Vec<bool>,
    pub flags: Vec<u8>,
    pub offsets: Vec<u64>,
}

pub fn make_segments(pattern: SegPattern, n: usize, empties: bool, rng: &mut Rng) -> Segmentation {
    let mut heads = vec![false; n];
    match pattern {
        SegPattern::NoHeads => {}
        SegPattern::AllHeads => heads.fill(true),
        SegPattern::Dense | SegPattern::Sparse | SegPattern::VerySparse => {
            let rate = match pattern {
                SegPattern::Dense => 2,
                SegPattern::Sparse => 100,
                _ => 30_000,
            };
            for h in heads.iter_mut() {
                *h = rng.one_in(rate);
            }
        }
        SegPattern::ChunkEdges => {
            for unit in [2048usize, CHUNK8, CHUNK4, TASK] {
                let mut p = unit;
                while p < n + 1 {
                    for q in [p - 1, p, p + 1] {
                        if q < n && rng.one_in(3) {
                            heads[q] = true;
                        }
                    }
                    p += unit;
                }
            }
        }
    }
    let flags: Vec<u8> = heads
        .iter()
        .enumerate()
        .map(|(i, &h)| {
            let head = if i == 0 && pattern != SegPattern::AllHeads {
                // Index 0 starts a segment whatever its flag says.
                rng.one_in(2)
            } else {
                h
            };
            if head {
                1 + rng.below(255) as u8
            } else {
                0
            }
        })
        .collect();
    if n > 0 {
        heads[0] = true;
    }
    let mut offsets = Vec::new();
    if empties && rng.one_in(2) {
        offsets.push(0);
    }
    for (i, &h) in heads.iter().enumerate() {
        if h {
            offsets.push(i as u64);
            if empties && rng.one_in(8) {
                offsets.push(i as u64);
            }
        }
    }
    offsets.push(n as u64);
    if empties {
        for _ in 0..rng.below(3) {
            offsets.push(n as u64);
        }
    }
    Segmentation {
        heads,
        flags,
        offsets,
    }
}

// ---- comparisons -------------------------------------------------------------------

pub fn compare_arg<T: TestElem>(
    got: Option<(T, usize)>,
    want: Option<(T, usize)>,
) -> Result<(), String> {
    let same = match (got, want) {
        (None, None) => true,
        (Some((gv, gi)), Some((wv, wi))) => gv.bits() == wv.bits() && gi == wi,
        _ => false,
    };
    if same {
        Ok(())
    } else {
        let fmt = |x: Option<(T, usize)>| match x {
            None => "None".to_string(),
            Some((v, i)) => format!("({}, {i})", show(v)),
        };
        Err(format!("got {}, want {}", fmt(got), fmt(want)))
    }
}
