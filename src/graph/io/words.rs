//! Arrays of little-endian fixed-size numbers, as binary graph files store them: read
//! straight into vectors (no staging buffer) and written in large blocks.

use std::fs::File;
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

/// The bytes of a binary graph file, in order: from the file by position on all cores
/// where it is a plain file (one thread's copy out of the page cache moves a fraction
/// of what the memory can), else from the (decompressed) stream.
pub(super) struct BinaryInput<'s> {
    stream: &'s mut dyn Read,
    /// The file's size when it is read as it is (not decompressed).
    size: Option<u64>,
    plain: Option<PlainFile>,
}

/// A plain file read by position: where the next byte is, and how many there are.
struct PlainFile {
    file: File,
    at: u64,
    size: u64,
}

impl<'s> BinaryInput<'s> {
    /// `file`, when given, is the file `stream` reads, uncompressed, from its start;
    /// `size` its size.
    pub(super) fn new(stream: &'s mut dyn Read, file: Option<File>, size: Option<u64>) -> Self {
        let plain = match (file, size) {
            (Some(file), Some(size)) if cfg!(unix) => Some(PlainFile { file, at: 0, size }),
            _ => None,
        };
        BinaryInput {
            stream,
            size,
            plain,
        }
    }

    /// The file's size, when it is read as it is: the header's counts must match it.
    pub(super) fn plain_size(&self) -> Option<u64> {
        self.size
    }

    /// Reads into `buf` until it is full or the input ends; returns the bytes read.
    pub(super) fn fill(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.plain {
            Some(plain) => {
                let got = plain.bytes_left().min(buf.len() as u64) as usize;
                plain.read_exact_at(&mut buf[..got])?;
                Ok(got)
            }
            None => fill(self.stream, buf),
        }
    }

    /// Up to `count` words, as [`read_words`] reads them from a stream.
    pub(super) fn read_words<T: Word>(
        &mut self,
        count: u64,
        budget: u64,
        progress: &mut Progress<'_>,
        failed: &dyn Fn(io::Error) -> Error,
        what: &'static str,
    ) -> Result<(Vec<T>, usize)> {
        let Some(plain) = &mut self.plain else {
            return read_words(self.stream, count, budget, progress, failed, what);
        };
        // The file's size bounds what is allocated, as the budget does for streams.
        let bytes = plain.bytes_left().min(count.saturating_mul(T::SIZE as u64));
        let mut out: Vec<T> = alloc::zeroed((bytes / T::SIZE as u64) as usize, what)?;
        // In blocks, so that progress is reported as the file is read; each block in
        // pieces read by all cores, which also take the pages' first-touch faults.
        const BLOCK: usize = 64 << 20;
        const PIECE: usize = 4 << 20;
        for block in out.chunks_mut((BLOCK / T::SIZE).max(1)) {
            let start = plain.at;
            block
                .par_chunks_mut((PIECE / T::SIZE).max(1))
                .enumerate()
                .try_for_each(|(i, words)| {
                    let at = start + (i * PIECE / T::SIZE * T::SIZE) as u64;
                    read_words_at(&plain.file, at, words)
                })
                .map_err(failed)?;
            let block_bytes = std::mem::size_of_val(block) as u64;
            plain.at += block_bytes;
            progress.consumed(block_bytes);
            progress.tick();
        }
        // The bytes of an incomplete last word are read and dropped, as from a stream.
        let partial = (bytes % T::SIZE as u64) as usize;
        plain.at += partial as u64;
        progress.consumed(partial as u64);
        Ok((out, partial))
    }
}

impl PlainFile {
    fn bytes_left(&self) -> u64 {
        self.size.saturating_sub(self.at)
    }

    fn read_exact_at(&mut self, buf: &mut [u8]) -> io::Result<()> {
        read_exact_at(&self.file, buf, self.at)?;
        self.at += buf.len() as u64;
        Ok(())
    }
}

/// Fills `words` from the file's bytes at `at`, converting from little-endian.
fn read_words_at<T: Word>(file: &File, at: u64, words: &mut [T]) -> io::Result<()> {
    read_exact_at(file, as_bytes_mut(words), at)?;
    if cfg!(target_endian = "big") {
        for x in words {
            *x = x.le_to_native();
        }
    }
    Ok(())
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(not(unix))]
fn read_exact_at(_: &File, _: &mut [u8], _: u64) -> io::Result<()> {
    unreachable!("BinaryInput::new reads plain files by position only on unix")
}

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
fn read_words<T: Word>(
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
    let got = fill(stream, as_bytes_mut(words))?;
    if cfg!(target_endian = "big") {
        for x in &mut words[..got / T::SIZE] {
            *x = x.le_to_native();
        }
    }
    Ok(got)
}

/// The bytes of `words`, to be overwritten.
fn as_bytes_mut<T: Word>(words: &mut [T]) -> &mut [u8] {
    // SAFETY: the bytes of initialised words of a primitive number type (`Word`), which
    // has no padding and for which every bit pattern is valid, borrowed for as long as
    // the words are.
    unsafe {
        std::slice::from_raw_parts_mut(
            words.as_mut_ptr().cast::<u8>(),
            std::mem::size_of_val(words),
        )
    }
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
