//! Arrays of little-endian fixed-size numbers, as binary graph files store them: read
//! straight into vectors (no staging buffer) and written in large blocks.

use std::io::{self, Read};

use rayon::prelude::*;

use super::input::Progress;
use super::output::Output;
use crate::{alloc, Error, Result};

/// A number stored in a file as its little-endian bytes. Implemented only for the
/// primitive integers and floats, which have no padding and no invalid bit patterns.
pub(super) trait Word: Copy + Default + Send + Sync + alloc::Zeroable + 'static {
    const SIZE: usize;
    /// The value whose bytes, read as little-endian, are those of `self`.
    fn le_to_native(self) -> Self;
    fn to_le_bytes_into(self, out: &mut Vec<u8>);
}

macro_rules! int_word {
    ($($t:ty),*) => {$(
        impl Word for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn le_to_native(self) -> Self {
                <$t>::from_le(self)
            }
            fn to_le_bytes_into(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
int_word!(i32, u32, i64, u64);

macro_rules! float_word {
    ($($t:ty => $bits:ty),*) => {$(
        impl Word for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn le_to_native(self) -> Self {
                <$t>::from_bits(<$bits>::from_le(self.to_bits()))
            }
            fn to_le_bytes_into(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
float_word!(f32 => u32, f64 => u64);

/// Reads into `buf` until it is full or the stream ends; returns the bytes read.
pub(super) fn fill(stream: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match stream.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Up to `count` words; the vector is shorter when the stream ends first, and the second
/// value counts the bytes of an incomplete trailing word. At most `budget` words are
/// reserved ahead of the data (a header's count is not trusted for memory). The file's
/// bytes are read straight into the vector, 1 MiB at a time.
pub(super) fn read_words<T: Word>(
    stream: &mut dyn Read,
    count: u64,
    budget: u64,
    progress: &mut Progress<'_>,
    failed: &dyn Fn(io::Error) -> Error,
    what: &'static str,
) -> Result<(Vec<T>, usize)> {
    let step = ((1usize << 20) / T::SIZE).max(1);
    if count <= budget {
        // All of it at once, in pages the kernel zeroes when first touched: they are
        // touched on every core first (the page faults are most of a large read's cost
        // when the file is in the page cache), then filled by one sequential copy.
        let mut out: Vec<T> = alloc::zeroed(count as usize, what)?;
        out.par_chunks_mut((PAGE / T::SIZE).max(1))
            .with_min_len(64)
            .for_each(|page| page[0] = T::default());
        let mut start = 0;
        while start < out.len() {
            let want = step.min(out.len() - start);
            let got = fill_words(stream, &mut out[start..start + want]).map_err(failed)?;
            progress.tick();
            if got < T::SIZE * want {
                out.truncate(start + got / T::SIZE);
                return Ok((out, got % T::SIZE));
            }
            start += want;
        }
        return Ok((out, 0));
    }
    let mut out: Vec<T> = alloc::with_capacity(budget as usize, what)?;
    let mut left = count;
    while left > 0 {
        let want = left.min(step as u64) as usize;
        alloc::reserve(&mut out, want, what)?;
        let start = out.len();
        out.resize(start + want, T::default());
        let got = fill_words(stream, &mut out[start..]).map_err(failed)?;
        out.truncate(start + got / T::SIZE);
        progress.tick();
        if got < T::SIZE * want {
            return Ok((out, got % T::SIZE));
        }
        left -= want as u64;
    }
    Ok((out, 0))
}

/// Bytes per page touched ahead of a read (the smallest page size of common systems).
const PAGE: usize = 4096;

/// Reads into `words` until they are full or the stream ends, converting from the
/// file's little-endian order; returns the bytes read.
fn fill_words<T: Word>(stream: &mut dyn Read, words: &mut [T]) -> io::Result<usize> {
    // SAFETY: the bytes of initialised words of a primitive number type (`Word`), which
    // has no padding and for which every bit pattern is valid; the view ends here.
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(
            words.as_mut_ptr().cast::<u8>(),
            std::mem::size_of_val(words),
        )
    };
    let got = fill(stream, bytes)?;
    if cfg!(target_endian = "big") {
        for x in &mut words[..got / T::SIZE] {
            *x = x.le_to_native();
        }
    }
    Ok(got)
}

/// Writes `values` as little-endian words.
pub(super) fn write_words<T: Word>(out: &mut Output, values: &[T]) -> Result<()> {
    let mut buf = Vec::with_capacity(1 << 20);
    for chunk in values.chunks((1 << 20) / T::SIZE) {
        buf.clear();
        for &x in chunk {
            x.to_le_bytes_into(&mut buf);
        }
        out.write_all(&buf)?;
    }
    Ok(())
}
