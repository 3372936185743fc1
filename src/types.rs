//! Element types, operators and their semantics, and the MSF algorithms by name, shared by every tier.
//!
//! Semantics (identical on every tier):
//! - `Sum` over integers wraps (two's complement); over floats it is IEEE addition
//!   (NaN propagates, inf + -inf = NaN). Float sums are computed in a fixed,
//!   thread-count-independent association order per tier, so they may differ from a
//!   strictly sequential sum by rounding, never between runs.
//! - `Min`/`Max` treat NaN as the extreme value: min(x, NaN) = max(x, NaN) = NaN, and
//!   once a NaN is seen a min/max scan stays NaN until its segment ends. Among equal
//!   values the earliest wins, so -0.0 and +0.0 (which compare equal) keep the sign of
//!   the first one seen.
//! - Identities: `Sum` 0; `Min` the type's maximum (+inf for floats); `Max` the type's
//!   minimum (-inf for floats). An exclusive scan starts each segment with the identity.
//! - Arg-reductions return the first index of the minimum (maximum); a NaN counts as
//!   the minimum for argmin and as the maximum for argmax, so the first NaN wins.

use std::fmt::{self, Debug};
use std::str::FromStr;

use crate::{Error, Result};

/// Numeric element types the primitives accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    I32 = 0,
    U32 = 1,
    I64 = 2,
    U64 = 3,
    F32 = 4,
    F64 = 5,
}

impl DType {
    pub const ALL: [DType; 6] = [
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::F32,
        DType::F64,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    pub fn size(self) -> usize {
        match self {
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }
}

/// Associative operator of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanOp {
    Sum = 0,
    Min = 1,
    Max = 2,
}

impl ScanOp {
    pub const ALL: [ScanOp; 3] = [ScanOp::Sum, ScanOp::Min, ScanOp::Max];
}

/// Inclusive: out[i] covers in[..=i]. Exclusive: out[i] covers in[..i] (identity first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanKind {
    Inclusive = 0,
    Exclusive = 1,
}

impl ScanKind {
    pub const ALL: [ScanKind; 2] = [ScanKind::Inclusive, ScanKind::Exclusive];
}

/// Which extreme an arg-reduction looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Extreme {
    Min,
    Max,
}

/// Index reported for an empty segment (and by the C API for an empty argmin).
pub const EMPTY_SEGMENT: u64 = u64::MAX;

mod sealed {
    pub trait Sealed {}
}

/// What a [`crate::Buffer`] holds: every [`Element`], and `u8` for a segmented scan's
/// head flags ([`crate::Context::upload_flags`]).
pub trait Stored: Copy + Default + Send + Sync + 'static + sealed::Sealed {
    /// The type's name in messages.
    const NAME: &'static str;
}

impl sealed::Sealed for u8 {}
impl Stored for u8 {
    const NAME: &'static str = "u8";
}

impl<T: Element> Stored for T {
    const NAME: &'static str = T::DTYPE.name();
}

/// A numeric element type: one of i32, u32, i64, u64, f32, f64.
pub trait Element:
    Copy + Send + Sync + PartialOrd + PartialEq + Debug + Default + 'static + sealed::Sealed
{
    const DTYPE: DType;
    const ZERO: Self;
    /// Largest value (+inf for floats): the identity of `Min`.
    const HIGHEST: Self;
    /// Smallest value (-inf for floats): the identity of `Max`.
    const LOWEST: Self;
    /// Wrapping for integers, IEEE for floats.
    fn add(self, other: Self) -> Self;
    fn is_nan(self) -> bool;
    /// Bit pattern widened to 64 bits (for lock-free publication between threads).
    fn to_bits64(self) -> u64;
    fn from_bits64(bits: u64) -> Self;
}

macro_rules! int_element {
    ($t:ty, $d:ident) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            const ZERO: Self = 0;
            const HIGHEST: Self = <$t>::MAX;
            const LOWEST: Self = <$t>::MIN;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
            #[inline(always)]
            fn to_bits64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_bits64(bits: u64) -> Self {
                bits as $t
            }
        }
    };
}

macro_rules! float_element {
    ($t:ty, $d:ident, $bits:ty) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            const ZERO: Self = 0.0;
            const HIGHEST: Self = <$t>::INFINITY;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self + other
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn to_bits64(self) -> u64 {
                self.to_bits() as u64
            }
            #[inline(always)]
            fn from_bits64(bits: u64) -> Self {
                <$t>::from_bits(bits as $bits)
            }
        }
    };
}

int_element!(i32, I32);
int_element!(u32, U32);
int_element!(i64, I64);
int_element!(u64, U64);
float_element!(f32, F32, u32);
float_element!(f64, F64, u64);

/// `candidate` replaces `current` as the running minimum (NaN is the minimum; ties keep `current`).
#[inline(always)]
pub fn beats_min<T: Element>(candidate: T, current: T) -> bool {
    !current.is_nan() && (candidate.is_nan() || candidate < current)
}

/// `candidate` replaces `current` as the running maximum (NaN is the maximum; ties keep `current`).
#[inline(always)]
pub fn beats_max<T: Element>(candidate: T, current: T) -> bool {
    !current.is_nan() && (candidate.is_nan() || candidate > current)
}

/// A scan operator as a type, so each (op, type) pair compiles to its own loop.
pub trait Monoid<T: Element>: Copy + Send + Sync + 'static {
    const IDENTITY: T;
    /// The extreme this operator keeps, for `Min` and `Max` (`None` for `Sum`).
    const EXTREME: Option<Extreme>;
    /// `earlier ⊕ later`; associative, not necessarily commutative (ties keep `earlier`).
    fn combine(earlier: T, later: T) -> T;
}

#[derive(Clone, Copy)]
pub struct SumOp;
#[derive(Clone, Copy)]
pub struct MinOp;
#[derive(Clone, Copy)]
pub struct MaxOp;

impl<T: Element> Monoid<T> for SumOp {
    const IDENTITY: T = T::ZERO;
    const EXTREME: Option<Extreme> = None;
    #[inline(always)]
    fn combine(earlier: T, later: T) -> T {
        earlier.add(later)
    }
}

impl<T: Element> Monoid<T> for MinOp {
    const IDENTITY: T = T::HIGHEST;
    const EXTREME: Option<Extreme> = Some(Extreme::Min);
    #[inline(always)]
    fn combine(earlier: T, later: T) -> T {
        if beats_min(later, earlier) {
            later
        } else {
            earlier
        }
    }
}

impl<T: Element> Monoid<T> for MaxOp {
    const IDENTITY: T = T::LOWEST;
    const EXTREME: Option<Extreme> = Some(Extreme::Max);
    #[inline(always)]
    fn combine(earlier: T, later: T) -> T {
        if beats_max(later, earlier) {
            later
        } else {
            earlier
        }
    }
}

/// The identity element of `op` for `T`.
pub fn identity<T: Element>(op: ScanOp) -> T {
    match op {
        ScanOp::Sum => <SumOp as Monoid<T>>::IDENTITY,
        ScanOp::Min => <MinOp as Monoid<T>>::IDENTITY,
        ScanOp::Max => <MaxOp as Monoid<T>>::IDENTITY,
    }
}

/// Runs `body` with the type-level operator matching `op` bound to `$m`.
macro_rules! with_monoid {
    ($op:expr, $m:ident => $body:expr) => {
        match $op {
            $crate::types::ScanOp::Sum => {
                type $m = $crate::types::SumOp;
                $body
            }
            $crate::types::ScanOp::Min => {
                type $m = $crate::types::MinOp;
                $body
            }
            $crate::types::ScanOp::Max => {
                type $m = $crate::types::MaxOp;
                $body
            }
        }
    };
}
pub(crate) use with_monoid;

/// Checks CSR-style segment offsets over `n` elements: `offsets[0] == 0`, non-decreasing,
/// `offsets[last] == n`. The error names the first offending index.
pub fn validate_offsets(offsets: &[u64], n: usize) -> crate::Result<()> {
    use crate::Error;
    let Some(&first) = offsets.first() else {
        return Err(Error::invalid_argument(
            "offsets is empty: segment offsets need num_segments + 1 entries (at least [0])",
        ));
    };
    if first != 0 {
        return Err(Error::invalid_argument(format!(
            "offsets[0] = {first}, expected 0"
        )));
    }
    // On all cores: for short segments the offsets are as large as the data.
    let decreasing = crate::alloc::par_position_first(offsets.len() - 1, |r| {
        offsets[r.start..r.end + 1]
            .windows(2)
            .position(|w| w[1] < w[0])
    });
    if let Some(i) = decreasing {
        return Err(Error::invalid_argument(format!(
            "offsets are not monotone: offsets[{}] = {} is less than offsets[{}] = {}",
            i + 1,
            offsets[i + 1],
            i,
            offsets[i]
        )));
    }
    let last = offsets[offsets.len() - 1];
    if last != n as u64 {
        return Err(Error::invalid_argument(format!(
            "offsets[{}] = {last} must equal the number of elements, {n}",
            offsets.len() - 1
        )));
    }
    Ok(())
}

/// Which MSF algorithm to run. Every algorithm returns the identical forest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// The fastest for the tier and graph.
    Auto = 0,
    /// Vineet et al.'s recursive Borůvka.
    Boruvka = 1,
    /// Wang et al.'s Prim on the min-reduction primitive.
    Prim = 2,
    /// Vasconcellos, Cáceres et al.'s strut algorithm on the edge-vertex graph.
    Strut = 3,
    /// Sequential Kruskal, the reference.
    Kruskal = 4,
}

impl Algorithm {
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Auto,
        Algorithm::Boruvka,
        Algorithm::Prim,
        Algorithm::Strut,
        Algorithm::Kruskal,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::Boruvka => "boruvka",
            Algorithm::Prim => "prim",
            Algorithm::Strut => "strut",
            Algorithm::Kruskal => "kruskal",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "unknown algorithm '{s}': expected auto, boruvka, prim, strut or kruskal"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip_for_every_type() {
        assert_eq!(i32::from_bits64((-5i32).to_bits64()), -5);
        assert_eq!(i64::from_bits64(i64::MIN.to_bits64()), i64::MIN);
        assert_eq!(u32::from_bits64(u32::MAX.to_bits64()), u32::MAX);
        assert_eq!(u64::from_bits64(u64::MAX.to_bits64()), u64::MAX);
        assert_eq!(
            f32::from_bits64((-0.0f32).to_bits64()).to_bits(),
            (-0.0f32).to_bits()
        );
        assert!(f64::from_bits64(f64::NAN.to_bits64()).is_nan());
    }

    #[test]
    fn min_keeps_the_earlier_of_equal_values() {
        let r = <MinOp as Monoid<f32>>::combine(-0.0, 0.0);
        assert!(r.is_sign_negative());
        let r = <MinOp as Monoid<f32>>::combine(0.0, -0.0);
        assert!(r.is_sign_positive());
        assert!(<MaxOp as Monoid<f64>>::combine(1.0, f64::NAN).is_nan());
        assert!(<MinOp as Monoid<f64>>::combine(f64::NAN, -1.0).is_nan());
    }

    #[test]
    fn offsets_errors_name_the_index() {
        assert!(validate_offsets(&[0, 2, 5], 5).is_ok());
        assert!(validate_offsets(&[0], 0).is_ok());
        let e = validate_offsets(&[0, 3, 2, 5], 5).unwrap_err();
        assert!(e.message().contains("offsets[2] = 2"), "{}", e.message());
        let e = validate_offsets(&[1, 5], 5).unwrap_err();
        assert!(e.message().contains("offsets[0] = 1"));
        let e = validate_offsets(&[0, 4], 5).unwrap_err();
        assert!(e.message().contains("offsets[1] = 4"));
        assert!(validate_offsets(&[], 0).is_err());
        // Long offsets are checked in parallel ranges: the first fault is still named,
        // including one that straddles two ranges (index 65,536 against 65,535).
        let n = 300_000u64;
        let mut long: Vec<u64> = (0..=n).collect();
        assert!(validate_offsets(&long, n as usize).is_ok());
        long[250_000] = 0;
        long[1 << 16] = 7;
        let e = validate_offsets(&long, n as usize).unwrap_err();
        assert!(
            e.message().contains("offsets[65536] = 7"),
            "{}",
            e.message()
        );
        long[1 << 16] = 1 << 16;
        let e = validate_offsets(&long, n as usize).unwrap_err();
        assert!(
            e.message().contains("offsets[250000] = 0"),
            "{}",
            e.message()
        );
    }
}
