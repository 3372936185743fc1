//! Opening graph files: compression detection (by name and magic bytes), streaming
//! decompression on a helper thread, progress counting, and a line reader that hands out
//! byte slices without allocating per line.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Arc;

use crate::{Error, Result, Status};

/// How the bytes of a file are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Xz,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const XZ_MAGIC: [u8; 6] = [0xfd, b'7', b'z', b'X', b'Z', 0x00];

/// Splits a trailing `.gz` / `.xz` (any case) off a file name.
pub(crate) fn strip_compression_suffix(path: &Path) -> (String, Compression) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".gz") {
        (name[..name.len() - 3].to_string(), Compression::Gzip)
    } else if lower.ends_with(".xz") {
        (name[..name.len() - 3].to_string(), Compression::Xz)
    } else {
        (name, Compression::None)
    }
}

/// Reports progress as bytes of the file consumed, at most once every [`STEP`] bytes.
pub(crate) struct Progress<'p> {
    callback: Option<&'p dyn Fn(u64, Option<u64>)>,
    consumed: Arc<AtomicU64>,
    total: Option<u64>,
    next: u64,
    last: Option<u64>,
}

/// Bytes of the file between two progress reports.
const STEP: u64 = 4 << 20;

impl Progress<'_> {
    /// A reporter that reports nothing.
    #[cfg(test)]
    pub(crate) fn none() -> Self {
        Progress {
            callback: None,
            consumed: Arc::new(AtomicU64::new(0)),
            total: None,
            next: 0,
            last: None,
        }
    }

    pub(crate) fn tick(&mut self) {
        if let Some(cb) = self.callback {
            let now = self.consumed.load(Ordering::Relaxed);
            if now >= self.next {
                self.next = now + STEP;
                self.last = Some(now);
                cb(now, self.total);
            }
        }
    }

    /// Counts bytes read from the file other than through the input's stream.
    pub(crate) fn consumed(&self, bytes: u64) {
        self.consumed.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn finish(&mut self) {
        if let Some(cb) = self.callback {
            let now = self.consumed.load(Ordering::Relaxed);
            let done = self.total.map_or(now, |t| t.max(now));
            if self.last != Some(done) {
                self.last = Some(done);
                cb(done, self.total);
            }
        }
    }
}

/// Counts the bytes read from the file itself (before decompression).
struct Counting<R> {
    inner: R,
    consumed: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// An opened input file: its display name, byte size, compression and progress reporter.
pub(crate) struct Input<'p> {
    pub name: String,
    /// Size of the file on disk (compressed bytes for `.gz`/`.xz`), when it is a regular file.
    pub file_size: Option<u64>,
    pub compression: Compression,
    pub progress: Progress<'p>,
    reader: BufReader<Counting<File>>,
}

impl<'p> Input<'p> {
    /// Opens `path`, detecting compression by magic bytes (xz always; gzip unless
    /// `sniff_gzip` is false, as for raw binary formats whose first bytes are data) and by
    /// a `.gz` / `.xz` suffix, which must then match the data.
    pub(crate) fn open(
        path: &Path,
        sniff_gzip: bool,
        progress: Option<&'p dyn Fn(u64, Option<u64>)>,
    ) -> Result<Self> {
        let name = path.display().to_string();
        let file = File::open(path)
            .map_err(|e| Error::new(Status::InvalidArgument, format!("cannot open {name}: {e}")))?;
        let metadata = file.metadata().ok();
        if metadata.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(Error::new(
                Status::InvalidArgument,
                format!("cannot read {name}: it is a directory"),
            ));
        }
        let file_size = metadata.filter(|m| m.is_file()).map(|m| m.len());
        let consumed = Arc::new(AtomicU64::new(0));
        let mut reader = BufReader::with_capacity(
            256 << 10,
            Counting {
                inner: file,
                consumed: consumed.clone(),
            },
        );
        let head = reader
            .fill_buf()
            .map_err(|e| invalid(&name, format!("cannot read: {e}")))?;
        let by_magic = if head.starts_with(&XZ_MAGIC) {
            Compression::Xz
        } else if sniff_gzip && head.starts_with(&GZIP_MAGIC) {
            Compression::Gzip
        } else {
            Compression::None
        };
        let (_, by_name) = strip_compression_suffix(path);
        let compression = match (by_name, by_magic) {
            (Compression::None, m) => m,
            (n, Compression::None) if n == Compression::Gzip && head.starts_with(&GZIP_MAGIC) => n,
            (n, Compression::None) => {
                let what = if n == Compression::Gzip { "gzip" } else { "xz" };
                return Err(invalid(
                    &name,
                    format!("the name says {what}, but the file does not start with the {what} magic bytes"),
                ));
            }
            (_, m) => m,
        };
        Ok(Input {
            name,
            file_size,
            compression,
            progress: Progress {
                callback: progress,
                consumed,
                total: file_size,
                next: 0,
                last: None,
            },
            reader,
        })
    }

    /// The file itself, a second handle, when it is a regular file read as it is
    /// (binary formats then read it by position, on all cores).
    pub(crate) fn plain_file(&self) -> Option<File> {
        if self.compression != Compression::None || self.file_size.is_none() {
            return None;
        }
        self.reader.get_ref().inner.try_clone().ok()
    }

    /// A budget for up-front reservations: a header may declare any count, but a file of
    /// `file_size` bytes cannot hold more than about this many records of
    /// `min_record_bytes` each (compressed data is allowed a generous expansion ratio;
    /// vectors still grow past the reservation when needed).
    pub(crate) fn reserve_budget(&self, min_record_bytes: u64) -> u64 {
        let bytes = self.file_size.unwrap_or(64 << 20);
        let bytes = match self.compression {
            Compression::None => bytes,
            _ => bytes.saturating_mul(16),
        };
        bytes / min_record_bytes.max(1) + 1024
    }

    /// Runs `body` on the decompressed byte stream. Compressed data is decoded on a helper
    /// thread so that decoding and parsing overlap.
    pub(crate) fn with_stream<T>(
        self,
        body: impl FnOnce(&mut dyn Read, &mut Progress<'p>) -> T,
    ) -> T {
        let Input {
            mut progress,
            reader,
            compression,
            ..
        } = self;
        let decoder: Box<dyn Read + Send> = match compression {
            Compression::None => {
                let mut r = reader;
                return body(&mut r, &mut progress);
            }
            Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(reader)),
            Compression::Xz => Box::new(xz2::bufread::XzDecoder::new_multi_decoder(reader)),
        };
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(4);
            let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<u8>>();
            scope.spawn(move || decode_loop(decoder, tx, recycle_rx));
            let mut stream = ChannelReader {
                rx,
                recycle: recycle_tx,
                current: Vec::new(),
                pos: 0,
                done: false,
            };
            let result = body(&mut stream, &mut progress);
            // Dropping the receiver stops the decoder thread at its next send.
            drop(stream);
            result
        })
    }
}

const CHUNK: usize = 1 << 20;

fn decode_loop(
    mut decoder: Box<dyn Read + Send>,
    tx: SyncSender<io::Result<Vec<u8>>>,
    recycle: Receiver<Vec<u8>>,
) {
    loop {
        let mut buf = recycle.try_recv().unwrap_or_default();
        buf.resize(CHUNK, 0);
        let mut filled = 0;
        let mut failure = None;
        while filled < CHUNK {
            match decoder.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        buf.truncate(filled);
        let last = filled < CHUNK;
        if filled > 0 && tx.send(Ok(buf)).is_err() {
            return;
        }
        if let Some(e) = failure {
            let _ = tx.send(Err(e));
            return;
        }
        if last {
            return;
        }
    }
}

/// The consuming end of the decoder thread.
struct ChannelReader {
    rx: Receiver<io::Result<Vec<u8>>>,
    recycle: Sender<Vec<u8>>,
    current: Vec<u8>,
    pos: usize,
    done: bool,
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.current.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    let old = std::mem::replace(&mut self.current, chunk);
                    let _ = self.recycle.send(old);
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = out.len().min(self.current.len() - self.pos);
        out[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// An error in the data of file `name` (no line number).
pub(crate) fn invalid(name: &str, message: impl std::fmt::Display) -> Error {
    Error::new(Status::InvalidGraph, format!("{name}: {message}"))
}

/// An error in the data of file `name` at 1-based line `line`.
pub(crate) fn invalid_at(name: &str, line: u64, message: impl std::fmt::Display) -> Error {
    Error::new(Status::InvalidGraph, format!("{name}:{line}: {message}"))
}

/// Describes a read failure (for compressed data usually corruption or truncation).
pub(crate) fn read_failure(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => format!("the compressed data ends early ({e})"),
        io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput | io::ErrorKind::Other => {
            format!("corrupt data ({e})")
        }
        _ => format!("read error ({e})"),
    }
}

/// A complaint about one line: its number and what is wrong.
pub(crate) type LineError = (u64, String);

/// The longest line the readers accept.
pub(crate) const MAX_LINE: usize = 64 << 20;

/// Splits a byte stream into lines (without `\n` or a trailing `\r`), numbered from 1.
pub(crate) struct LineReader<'a, 'p> {
    src: &'a mut dyn Read,
    progress: &'a mut Progress<'p>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// `buf[start..scanned]` holds no newline.
    scanned: usize,
    eof: bool,
    line: u64,
}

impl<'a, 'p> LineReader<'a, 'p> {
    pub(crate) fn new(src: &'a mut dyn Read, progress: &'a mut Progress<'p>) -> Self {
        LineReader {
            src,
            progress,
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            scanned: 0,
            eof: false,
            line: 0,
        }
    }

    /// The next line and its 1-based number; `Err((line, message))` when the stream fails.
    pub(crate) fn next_line(&mut self) -> std::result::Result<Option<(u64, &[u8])>, LineError> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.scanned..self.end]) {
                let nl = self.scanned + i;
                let s = self.start;
                self.start = nl + 1;
                self.scanned = self.start;
                self.line += 1;
                let e = if nl > s && self.buf[nl - 1] == b'\r' {
                    nl - 1
                } else {
                    nl
                };
                return Ok(Some((self.line, &self.buf[s..e])));
            }
            self.scanned = self.end;
            if self.eof {
                if self.start < self.end {
                    let s = self.start;
                    let mut e = self.end;
                    self.start = self.end;
                    self.line += 1;
                    if self.buf[e - 1] == b'\r' {
                        e -= 1;
                    }
                    return Ok(Some((self.line, &self.buf[s..e])));
                }
                return Ok(None);
            }
            self.refill()?;
        }
    }

    /// The number of lines handed out so far.
    pub(crate) fn lines_read(&self) -> u64 {
        self.line
    }

    /// Gives up the reader: the stream, the progress reporter, the bytes read but not yet
    /// handed out as lines, the number of lines handed out, and whether the stream ended.
    pub(crate) fn into_parts(self) -> LineReaderParts<'a, 'p> {
        let mut rest = self.buf;
        rest.copy_within(self.start..self.end, 0);
        rest.truncate(self.end - self.start);
        LineReaderParts {
            src: self.src,
            progress: self.progress,
            rest,
            lines: self.line,
            eof: self.eof,
        }
    }

    fn refill(&mut self) -> std::result::Result<(), LineError> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.scanned -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            if self.buf.len() >= MAX_LINE {
                return Err((
                    self.line + 1,
                    format!("line longer than {} MiB", MAX_LINE >> 20),
                ));
            }
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => {
                    self.end += n;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err((self.line + 1, read_failure(&e))),
            }
        }
        self.progress.tick();
        Ok(())
    }
}

/// What [`LineReader::into_parts`] returns.
pub(crate) struct LineReaderParts<'a, 'p> {
    pub src: &'a mut dyn Read,
    pub progress: &'a mut Progress<'p>,
    pub rest: Vec<u8>,
    pub lines: u64,
    pub eof: bool,
}

/// Whitespace-separated tokens of a line.
pub(crate) struct Tokens<'l> {
    s: &'l [u8],
    i: usize,
}

impl<'l> Tokens<'l> {
    pub(crate) fn new(s: &'l [u8]) -> Self {
        Tokens { s, i: 0 }
    }
}

impl<'l> Iterator for Tokens<'l> {
    type Item = &'l [u8];

    #[inline]
    fn next(&mut self) -> Option<&'l [u8]> {
        let s = self.s;
        let mut i = self.i;
        while i < s.len() && is_space(s[i]) {
            i += 1;
        }
        if i == s.len() {
            self.i = i;
            return None;
        }
        let start = i;
        while i < s.len() && !is_space(s[i]) {
            i += 1;
        }
        self.i = i;
        Some(&s[start..i])
    }
}

#[inline]
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// The first non-blank byte of a line, if any.
#[inline]
pub(crate) fn first_byte(line: &[u8]) -> Option<u8> {
    line.iter().copied().find(|&b| !is_space(b))
}

/// A decimal unsigned integer (digits only).
#[inline]
pub(crate) fn parse_u64(t: &[u8]) -> Option<u64> {
    if t.is_empty() {
        return None;
    }
    let mut x: u64 = 0;
    for &b in t {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        x = x.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(x)
}

/// Parses a line made only of up to three blank-separated decimal numbers of at most 19
/// digits each (so that none can overflow) into `out`, returning how many there are;
/// `None` for any other line, which callers then take through their general path.
#[inline]
pub(crate) fn fast_uints(s: &[u8], out: &mut [u64; 3]) -> Option<usize> {
    let mut i = 0;
    let mut k = 0;
    loop {
        while i < s.len() && matches!(s[i], b' ' | b'\t') {
            i += 1;
        }
        if i == s.len() {
            return Some(k);
        }
        if k == 3 {
            return None;
        }
        let start = i;
        let mut x = 0u64;
        while i < s.len() {
            let d = s[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            x = x.wrapping_mul(10).wrapping_add(d as u64);
            i += 1;
        }
        if i == start || i - start > 19 || (i < s.len() && !matches!(s[i], b' ' | b'\t')) {
            return None;
        }
        out[k] = x;
        k += 1;
    }
}

/// A weight token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Number {
    /// An integer literal (optional sign, digits) within [-2^64, 2^64).
    Int(i128),
    /// An integer literal outside that range.
    IntOutOfRange,
    /// Any other literal Rust parses as `f64` (`1.5`, `1e3`, `inf`, `nan`, ...).
    Real(f64),
    Bad,
}

#[inline]
pub(crate) fn parse_number(t: &[u8]) -> Number {
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
        return match parse_u64(digits) {
            Some(m) => Number::Int(if neg { -(m as i128) } else { m as i128 }),
            None => {
                if digits.iter().all(|&b| b == b'0') {
                    Number::Int(0)
                } else {
                    Number::IntOutOfRange
                }
            }
        };
    }
    match std::str::from_utf8(t)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
    {
        Some(x) => Number::Real(x),
        None => Number::Bad,
    }
}

/// A line for an error message: lossy UTF-8, shortened to about 80 characters.
pub(crate) fn show(line: &[u8]) -> String {
    let raw = String::from_utf8_lossy(line);
    // Control characters (a NUL or a tab from a binary file) are shown escaped.
    let mut text = String::new();
    for c in raw.trim().chars() {
        if c.is_control() {
            text.extend(c.escape_default());
        } else {
            text.push(c);
        }
    }
    let text = text.as_str();
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("'{cut}...'")
    } else {
        format!("'{text}'")
    }
}
