//! Writing text and binary graph files: optional gzip / xz compression chosen by the
//! file name, and line formatting spread over all cores while the output stays in order.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use flate2::write::GzEncoder;
use rayon::prelude::*;
use xz2::write::XzEncoder;

use super::input::{strip_compression_suffix, Compression};
use crate::graph::WeightVec;
use crate::{Error, Result, Status};

enum Sink {
    Plain(BufWriter<File>),
    Gz(GzEncoder<BufWriter<File>>),
    Xz(XzEncoder<BufWriter<File>>),
}

/// An output file, compressed when its name ends in `.gz` or `.xz`.
pub(crate) struct Output {
    name: String,
    sink: Sink,
}

impl Output {
    pub(crate) fn create(path: &Path) -> Result<Self> {
        let name = path.display().to_string();
        let file = File::create(path).map_err(|e| {
            Error::new(
                Status::InvalidArgument,
                format!("cannot create {name}: {e}"),
            )
        })?;
        let file = BufWriter::with_capacity(1 << 20, file);
        let sink = match strip_compression_suffix(path).1 {
            Compression::None => Sink::Plain(file),
            Compression::Gzip => Sink::Gz(GzEncoder::new(file, flate2::Compression::default())),
            Compression::Xz => {
                let threads = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
                let stream = xz2::stream::MtStreamBuilder::new()
                    .preset(6)
                    .threads(threads)
                    .encoder()
                    .or_else(|_| {
                        xz2::stream::Stream::new_easy_encoder(6, xz2::stream::Check::Crc64)
                    })
                    .map_err(|e| {
                        Error::new(
                            Status::Internal,
                            format!("cannot start an xz encoder for {name}: {e}"),
                        )
                    })?;
                Sink::Xz(XzEncoder::new_stream(file, stream))
            }
        };
        Ok(Output { name, sink })
    }

    fn failed(&self, e: std::io::Error) -> Error {
        Error::new(
            Status::InvalidArgument,
            format!("cannot write {}: {e}", self.name),
        )
    }

    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let r = match &mut self.sink {
            Sink::Plain(w) => w.write_all(bytes),
            Sink::Gz(w) => w.write_all(bytes),
            Sink::Xz(w) => w.write_all(bytes),
        };
        r.map_err(|e| self.failed(e))
    }

    /// Flushes everything, writes compression trailers and syncs nothing further.
    pub(crate) fn finish(self) -> Result<()> {
        let r = match self.sink {
            Sink::Plain(w) => w.into_inner().map(drop).map_err(|e| e.into_error()),
            Sink::Gz(w) => w
                .finish()
                .and_then(|w| w.into_inner().map(drop).map_err(|e| e.into_error())),
            Sink::Xz(w) => w
                .finish()
                .and_then(|w| w.into_inner().map(drop).map_err(|e| e.into_error())),
        };
        r.map_err(|e| {
            Error::new(
                Status::InvalidArgument,
                format!("cannot write {}: {e}", self.name),
            )
        })
    }

    /// Writes `item(i, buf)` for `i` in `0..count`, in order, formatting chunks of items
    /// on all cores.
    pub(crate) fn write_items(
        &mut self,
        count: usize,
        item: impl Fn(usize, &mut Vec<u8>) + Sync,
    ) -> Result<()> {
        const PER_CHUNK: usize = 1 << 15;
        let chunks = count.div_ceil(PER_CHUNK);
        let batch = rayon::current_num_threads().max(1) * 4;
        let mut c = 0;
        while c < chunks {
            let end = (c + batch).min(chunks);
            let texts: Vec<Vec<u8>> = (c..end)
                .into_par_iter()
                .map(|k| {
                    let mut buf = Vec::with_capacity(PER_CHUNK * 24);
                    for i in k * PER_CHUNK..((k + 1) * PER_CHUNK).min(count) {
                        item(i, &mut buf);
                    }
                    buf
                })
                .collect();
            for t in &texts {
                self.write_all(t)?;
            }
            c = end;
        }
        Ok(())
    }
}

/// Appends `x` in decimal.
#[inline]
pub(crate) fn put_u64(buf: &mut Vec<u8>, mut x: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

#[inline]
pub(crate) fn put_i64(buf: &mut Vec<u8>, x: i64) {
    if x < 0 {
        buf.push(b'-');
    }
    put_u64(buf, x.unsigned_abs());
}

/// Appends a float so that it reads back exactly and never looks like an integer
/// (`3.0`, `1e300`, `inf`).
pub(crate) fn put_f64(buf: &mut Vec<u8>, x: f64) {
    // Writing to a Vec cannot fail.
    let _ = write!(buf, "{x:?}");
}

/// Appends weight `i`; `f32` weights are written as their exact `f64` value when
/// `exact_f32` is set (so that reading gives the same number back), else in their own
/// shortest form.
#[inline]
pub(crate) fn put_weight(buf: &mut Vec<u8>, w: &WeightVec, i: usize, exact_f32: bool) {
    match w {
        WeightVec::I32(w) => put_i64(buf, w[i] as i64),
        WeightVec::U32(w) => put_u64(buf, w[i] as u64),
        WeightVec::I64(w) => put_i64(buf, w[i]),
        WeightVec::U64(w) => put_u64(buf, w[i]),
        WeightVec::F32(w) => {
            if exact_f32 {
                put_f64(buf, w[i] as f64)
            } else {
                let _ = write!(buf, "{:?}", w[i]);
            }
        }
        WeightVec::F64(w) => put_f64(buf, w[i]),
    }
}

/// A name for a weight type in messages.
pub(crate) fn weight_type_name(w: &WeightVec) -> &'static str {
    match w {
        WeightVec::I32(_) => "i32",
        WeightVec::U32(_) => "u32",
        WeightVec::I64(_) => "i64",
        WeightVec::U64(_) => "u64",
        WeightVec::F32(_) => "f32",
        WeightVec::F64(_) => "f64",
    }
}
