//! Turning caller pointers into slices, after checking everything that can be checked.

use std::ffi::{c_char, c_void};

use crate::{Error, Result};

/// Checks that `ptr` may back a slice of `n` elements of `T` and returns the length.
fn checked_len<T>(ptr: *const T, n: u64, name: &str) -> Result<usize> {
    if n == 0 {
        return Ok(0);
    }
    if ptr.is_null() {
        return Err(Error::invalid_argument(format!(
            "{name} is NULL but its length is {n}"
        )));
    }
    let size = std::mem::size_of::<T>() as u64;
    let len = usize::try_from(n)
        .ok()
        .filter(|_| {
            n.checked_mul(size)
                .is_some_and(|bytes| bytes <= isize::MAX as u64)
        })
        .ok_or_else(|| {
            Error::invalid_argument(format!("{name}: length {n} is larger than memory"))
        })?;
    let align = std::mem::align_of::<T>();
    if (ptr as usize) % align != 0 {
        return Err(Error::invalid_argument(format!(
            "{name} ({ptr:p}) is not aligned to {align} bytes, as its element type requires"
        )));
    }
    Ok(len)
}

/// A read-only view of `n` elements at `ptr` (NULL allowed when `n == 0`).
///
/// # Safety
/// When `n > 0`, `ptr` must point to `n` initialized elements of `T` that nobody
/// writes during the call — the C API's documented contract, which cannot be checked.
pub(crate) unsafe fn input_slice<'a, T>(ptr: *const T, n: u64, name: &str) -> Result<&'a [T]> {
    let len = checked_len(ptr, n, name)?;
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: non-NULL, aligned, size fits isize (checked above); validity of the
    // memory is the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// A writable view of `n` elements at `ptr` (NULL allowed when `n == 0`).
///
/// # Safety
/// As [`input_slice`], writable, and not overlapping any other view alive during the
/// call (callers check this with [`Region::disjoint_from`] first).
pub(crate) unsafe fn output_slice<'a, T>(ptr: *mut T, n: u64, name: &str) -> Result<&'a mut [T]> {
    let len = checked_len(ptr, n, name)?;
    if len == 0 {
        return Ok(&mut []);
    }
    // SAFETY: as input_slice, plus exclusivity by the caller's overlap check.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// A named byte range of a caller argument, for overlap checks.
pub(crate) struct Region {
    name: &'static str,
    start: usize,
    bytes: usize,
}

impl Region {
    pub(crate) fn of<T>(name: &'static str, slice: &[T]) -> Region {
        Region {
            name,
            start: slice.as_ptr() as usize,
            bytes: std::mem::size_of_val(slice),
        }
    }

    pub(crate) fn raw(
        name: &'static str,
        ptr: *const c_void,
        n: u64,
        element_size: usize,
    ) -> Region {
        Region {
            name,
            start: ptr as usize,
            bytes: (n as usize).saturating_mul(element_size),
        }
    }

    /// An error naming both arguments if the ranges share a byte.
    pub(crate) fn disjoint_from(&self, other: &Region) -> Result<()> {
        let overlap = self.bytes > 0
            && other.bytes > 0
            && self.start < other.start.saturating_add(other.bytes)
            && other.start < self.start.saturating_add(self.bytes);
        if overlap {
            return Err(Error::invalid_argument(format!(
                "{} overlaps {} (only identical input and output pointers mean in place)",
                self.name, other.name
            )));
        }
        Ok(())
    }
}

/// Writes `text` NUL-terminated into `buffer`, truncated to `capacity - 1` bytes at a
/// character boundary.
///
/// # Safety
/// `buffer` must be writable for `capacity > 0` bytes.
pub(crate) unsafe fn write_string(text: &str, buffer: *mut c_char, capacity: usize) {
    let mut len = text.len().min(capacity - 1);
    while !text.is_char_boundary(len) {
        len -= 1;
    }
    // SAFETY: `len + 1 <= capacity` bytes are written, within the caller's buffer;
    // the source is a live &str that cannot overlap caller memory we write.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buffer.cast::<u8>(), len);
        *buffer.add(len) = 0;
    }
}
