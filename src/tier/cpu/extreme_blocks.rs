//! The block kernel of float minimum and maximum scans, on SSE registers (part of every
//! x86_64 CPU).
//!
//! Element by element, a running float minimum is a serial chain of NaN-aware compares,
//! several cycles per element. Here each block of four registers is scanned on its own:
//! within each register in log2(lanes) shift-and-compare steps, then across the block's
//! registers; neither depends on the running value, so blocks overlap in the pipeline.
//! Only the last step, combining the block with the running value, is serial: once per
//! block instead of once per element.
//!
//! MINPS/MAXPS compute `a < b ? a : b` (`>`): with `b` the earlier value, ties keep the
//! earlier one and a NaN running value stays, exactly as `MinOp`/`MaxOp` combine. A NaN
//! inside a block would not stick that way, so a block holding one is left to the
//! caller's element-by-element loop.

use std::arch::x86_64::{
    __m128, __m128d, _mm_castps_si128, _mm_castsi128_ps, _mm_cmpunord_pd, _mm_cmpunord_ps,
    _mm_loadu_pd, _mm_loadu_ps, _mm_max_pd, _mm_max_ps, _mm_min_pd, _mm_min_ps, _mm_move_ss,
    _mm_movelh_ps, _mm_movemask_pd, _mm_movemask_ps, _mm_or_pd, _mm_or_ps, _mm_set1_pd,
    _mm_set1_ps, _mm_shuffle_ps, _mm_slli_si128, _mm_storeu_pd, _mm_storeu_ps, _mm_unpackhi_pd,
    _mm_unpacklo_pd,
};

use crate::types::{DType, Element};

/// Registers per block.
const REGS: usize = 4;

/// Bytes per block: the caller scans a block holding a NaN element by element.
pub(super) const BLOCK_BYTES: usize = REGS * 16;

/// One SSE register of `f32` or `f64` lanes, with what the block scan needs.
trait Lanes: Copy {
    type Elem: Element;
    const LANES: usize;
    /// Lanes `src[..LANES]`.
    fn load(src: &[Self::Elem]) -> Self;
    /// Into `dst[..LANES]`.
    fn store(self, dst: &mut [Self::Elem]);
    fn splat(x: Self::Elem) -> Self;
    /// `later < earlier ? later : earlier` per lane (`>` with `MAX`).
    fn pick<const MAX: bool>(later: Self, earlier: Self) -> Self;
    /// Whether any lane of the block is a NaN.
    fn any_nan(block: &[Self; REGS]) -> bool;
    /// `[first[0], self[0], .., self[LANES - 2]]`.
    fn shift_in(self, first: Self) -> Self;
    /// The inclusive scan of the lanes, `fill` holding the identity in every lane.
    fn prefix<const MAX: bool>(self, fill: Self) -> Self;
    /// The last lane in every lane.
    fn last(self) -> Self;
    #[inline(always)]
    fn first(self) -> Self::Elem {
        // Room for the widest register's lanes (four).
        let mut lanes = [Self::Elem::ZERO; 4];
        self.store(&mut lanes);
        lanes[0]
    }
}

// SAFETY (every block below): SSE and SSE2 are part of x86_64, so the intrinsics run on
// any CPU this code is compiled for (Rust from 1.87 calls them safe; the blocks are for
// older compilers); loads and stores check their slice's length first.

/// The methods whose intrinsics differ only by their type suffix (`_ps`, `_pd`).
macro_rules! same_shape_lanes {
    ($elem:ty, $lanes:expr, $load:ident, $store:ident, $set1:ident, $max:ident, $min:ident,
     $or:ident, $unord:ident, $movemask:ident) => {
        type Elem = $elem;
        const LANES: usize = $lanes;
        #[inline(always)]
        fn load(src: &[$elem]) -> Self {
            assert!(src.len() >= $lanes);
            #[allow(unused_unsafe)]
            unsafe {
                $load(src.as_ptr())
            }
        }
        #[inline(always)]
        fn store(self, dst: &mut [$elem]) {
            assert!(dst.len() >= $lanes);
            #[allow(unused_unsafe)]
            unsafe {
                $store(dst.as_mut_ptr(), self)
            }
        }
        #[inline(always)]
        fn splat(x: $elem) -> Self {
            #[allow(unused_unsafe)]
            unsafe {
                $set1(x)
            }
        }
        #[inline(always)]
        fn pick<const MAX: bool>(later: Self, earlier: Self) -> Self {
            #[allow(unused_unsafe)]
            unsafe {
                if MAX {
                    $max(later, earlier)
                } else {
                    $min(later, earlier)
                }
            }
        }
        #[inline(always)]
        fn any_nan(b: &[Self; REGS]) -> bool {
            // A lane compares unordered when either operand's lane is a NaN.
            #[allow(unused_unsafe)]
            unsafe {
                $movemask($or($unord(b[0], b[1]), $unord(b[2], b[3]))) != 0
            }
        }
    };
}

impl Lanes for __m128 {
    same_shape_lanes!(
        f32,
        4,
        _mm_loadu_ps,
        _mm_storeu_ps,
        _mm_set1_ps,
        _mm_max_ps,
        _mm_min_ps,
        _mm_or_ps,
        _mm_cmpunord_ps,
        _mm_movemask_ps
    );
    #[inline(always)]
    fn shift_in(self, first: Self) -> Self {
        #[allow(unused_unsafe)]
        unsafe {
            _mm_move_ss(
                _mm_castsi128_ps(_mm_slli_si128(_mm_castps_si128(self), 4)),
                first,
            )
        }
    }
    #[inline(always)]
    fn prefix<const MAX: bool>(self, fill: Self) -> Self {
        let by_one = Self::pick::<MAX>(self, self.shift_in(fill));
        // [fill, fill, by_one[0], by_one[1]]
        #[allow(unused_unsafe)]
        let by_two = unsafe { _mm_movelh_ps(fill, by_one) };
        Self::pick::<MAX>(by_one, by_two)
    }
    #[inline(always)]
    fn last(self) -> Self {
        #[allow(unused_unsafe)]
        unsafe {
            _mm_shuffle_ps(self, self, 0xFF)
        }
    }
}

impl Lanes for __m128d {
    same_shape_lanes!(
        f64,
        2,
        _mm_loadu_pd,
        _mm_storeu_pd,
        _mm_set1_pd,
        _mm_max_pd,
        _mm_min_pd,
        _mm_or_pd,
        _mm_cmpunord_pd,
        _mm_movemask_pd
    );
    #[inline(always)]
    fn shift_in(self, first: Self) -> Self {
        #[allow(unused_unsafe)]
        unsafe {
            _mm_unpacklo_pd(first, self)
        }
    }
    #[inline(always)]
    fn prefix<const MAX: bool>(self, fill: Self) -> Self {
        Self::pick::<MAX>(self, self.shift_in(fill))
    }
    #[inline(always)]
    fn last(self) -> Self {
        #[allow(unused_unsafe)]
        unsafe {
            _mm_unpackhi_pd(self, self)
        }
    }
}

/// Scans whole blocks of `input` (or of `out` itself when `None`) into `out` from the
/// start, entering with `acc`, until fewer than a block's elements are left or a block
/// holds a NaN. Returns how many elements were scanned and the running value after
/// them. Only for `f32` and `f64` (`T::DTYPE`); any other type scans nothing.
pub(super) fn scan_blocks<T: Element, const MAX: bool>(
    input: Option<&[T]>,
    out: &mut [T],
    acc: T,
    inclusive: bool,
) -> (usize, T) {
    // SAFETY: `DType::F32` and `DType::F64` are `f32`'s and `f64`'s alone (`Element`
    // is sealed), so `T` is the register's element type.
    match T::DTYPE {
        DType::F32 => unsafe { blocks_of::<T, __m128, MAX>(input, out, acc, inclusive) },
        DType::F64 => unsafe { blocks_of::<T, __m128d, MAX>(input, out, acc, inclusive) },
        _ => (0, acc),
    }
}

/// [`blocks`] over slices of `T`, which is `L::Elem` under another name.
///
/// # Safety
/// `T` and `L::Elem` must be the same type.
#[inline(always)]
unsafe fn blocks_of<T: Element, L: Lanes, const MAX: bool>(
    input: Option<&[T]>,
    out: &mut [T],
    acc: T,
    inclusive: bool,
) -> (usize, T) {
    // SAFETY: the slices are reinterpreted as their own type (the caller's promise).
    let (input, out) = unsafe { (input.map(|s| same_type(s)), same_type_mut(out)) };
    let acc = L::Elem::from_bits64(acc.to_bits64());
    let (done, acc) = blocks::<L, MAX>(input, out, acc, inclusive);
    (done, T::from_bits64(acc.to_bits64()))
}

/// `s` as a slice of `U`.
///
/// # Safety
/// `T` and `U` must be the same type.
unsafe fn same_type<T, U>(s: &[T]) -> &[U] {
    std::slice::from_raw_parts(s.as_ptr().cast(), s.len())
}

/// `s` as a mutable slice of `U`.
///
/// # Safety
/// `T` and `U` must be the same type.
unsafe fn same_type_mut<T, U>(s: &mut [T]) -> &mut [U] {
    std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len())
}

#[inline(always)]
fn blocks<L: Lanes, const MAX: bool>(
    input: Option<&[L::Elem]>,
    out: &mut [L::Elem],
    acc: L::Elem,
    inclusive: bool,
) -> (usize, L::Elem) {
    let block = REGS * L::LANES;
    let fill = L::splat(if MAX {
        L::Elem::LOWEST
    } else {
        L::Elem::HIGHEST
    });
    let mut running = L::splat(acc);
    let mut done = 0;
    while out.len() - done >= block {
        let src = match input {
            Some(input) => &input[done..done + block],
            None => &out[done..done + block],
        };
        let x: [L; REGS] = std::array::from_fn(|r| L::load(&src[r * L::LANES..]));
        if L::any_nan(&x) {
            break;
        }
        let mut scanned = x.map(|x| x.prefix::<MAX>(fill));
        for r in 1..REGS {
            scanned[r] = L::pick::<MAX>(scanned[r], scanned[r - 1].last());
        }
        let dst = &mut out[done..done + block];
        let mut before = running;
        for (r, scanned) in scanned.into_iter().enumerate() {
            let value = L::pick::<MAX>(scanned, running);
            let written = if inclusive {
                value
            } else {
                value.shift_in(before)
            };
            written.store(&mut dst[r * L::LANES..]);
            before = value.last();
        }
        running = before;
        done += block;
    }
    (done, running.first())
}
