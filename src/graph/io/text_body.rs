//! The body of a text graph file (the lines after its header) parsed on all cores.
//!
//! The bytes are read in blocks; each block is cut at line ends into pieces that are
//! parsed at once, each into its own arcs, weights and line numbers counted from the
//! piece's start, while the next block is read. The pieces are then joined in file
//! order, which restores the file's line numbers and reports the error a sequential
//! reading would have stopped at: the earliest line that is wrong in itself, or wrong
//! given the lines before it (one arc more than the header declares, a weight no integer
//! type holds together with the earlier ones, an edge list that mixes weighted and
//! weightless lines).

use std::io::Read;

use rayon::prelude::*;

use super::arcs::{ArcList, LineError};
use super::input::{invalid_at, read_failure, LineReader, LineReaderParts, MAX_LINE};
use crate::{Error, Result};

/// Why a line could not be parsed.
pub(crate) enum LineFailure {
    /// Something wrong with the line: its number (within its piece) and what.
    Line(LineError),
    /// A refused allocation.
    Other(Error),
}

impl From<LineError> for LineFailure {
    fn from(e: LineError) -> Self {
        LineFailure::Line(e)
    }
}

impl From<Error> for LineFailure {
    fn from(e: Error) -> Self {
        LineFailure::Other(e)
    }
}

/// A text format's body lines.
pub(crate) trait TextBody: Sync {
    /// What a piece gathers besides its arcs (per-format state, such as the highest id).
    type Extra: Default + Send;

    /// An empty arc list for a piece, with the format's kind of weights.
    fn new_arcs(&self, capacity: usize) -> Result<ArcList>;

    /// Parses line `ln` (counted from the piece's first line, which is 1).
    fn parse_line(
        &self,
        arcs: &mut ArcList,
        extra: &mut Self::Extra,
        ln: u64,
        line: &[u8],
    ) -> std::result::Result<(), LineFailure>;

    /// Joins the `extra` of a piece whose lines are numbered `offset` before the file's
    /// to that of the lines before it (`file`, `file_arcs`): the earliest line of the
    /// piece that is wrong given the lines before it, if any. Formats without extras
    /// keep the default: nothing to join.
    fn join(
        &self,
        _file: &mut Self::Extra,
        _file_arcs: &mut ArcList,
        _piece: Self::Extra,
        _offset: u64,
    ) -> Option<LineError> {
        None
    }

    /// How many arcs the header declares, and what to say of a line that holds one more
    /// (none for formats without a declared count).
    fn declared_arcs(&self) -> Option<(u64, String)> {
        None
    }
}

/// How the body is cut: pieces of about `piece_bytes`, `pieces_per_thread` of them per
/// thread in each block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Split {
    pub piece_bytes: usize,
    pub pieces_per_thread: usize,
}

impl Split {
    /// Pieces large enough that their setup is lost in their parsing, and blocks small
    /// enough that a block's pieces cost little memory beside the file's arcs.
    pub(crate) const DEFAULT: Split = Split {
        piece_bytes: 4 << 20,
        pieces_per_thread: 2,
    };
}

/// A parsed body.
pub(crate) struct Body<X> {
    pub arcs: ArcList,
    pub extra: X,
    /// The number of the file's last line (the file's line count).
    pub last_line: u64,
}

/// A piece, parsed.
struct Piece<X> {
    arcs: ArcList,
    extra: X,
    /// Lines parsed (up to and without a failing one).
    lines: u64,
    failure: Option<LineFailure>,
}

/// Parses the rest of `lines` as the body of file `name`, appending to `arcs` and
/// `extra` (what the header left).
pub(crate) fn parse_body<F: TextBody>(
    name: &str,
    lines: LineReader<'_, '_>,
    body: &F,
    arcs: ArcList,
    extra: F::Extra,
    split: Split,
) -> Result<Body<F::Extra>> {
    let LineReaderParts {
        src,
        progress,
        rest,
        lines: header_lines,
        mut eof,
    } = lines.into_parts();
    let pieces_per_block = (rayon::current_num_threads() * split.pieces_per_thread).max(1);
    let block_bytes = pieces_per_block.saturating_mul(split.piece_bytes).max(1);
    let mut file = Body {
        arcs,
        extra,
        last_line: header_lines,
    };
    let mut buf = rest;
    let mut read_error = fill(src, &mut buf, block_bytes, &mut eof).err();
    let mut next = Vec::new();
    loop {
        // Whole lines only, but for the last bytes of the stream.
        let cut = if eof || read_error.is_some() {
            buf.len()
        } else {
            match memchr::memrchr(b'\n', &buf) {
                Some(i) => i + 1,
                None if buf.len() >= MAX_LINE => {
                    return Err(invalid_at(
                        name,
                        file.last_line + 1,
                        format!("line longer than {} MiB", MAX_LINE >> 20),
                    ));
                }
                None => {
                    let want = buf.len() + block_bytes;
                    read_error = fill(src, &mut buf, want, &mut eof).err();
                    continue;
                }
            }
        };
        if cut == 0 && (eof || read_error.is_some()) {
            break;
        }
        let (block, tail) = buf.split_at(cut);
        next.clear();
        next.extend_from_slice(tail);
        let reading = read_error.is_none() && !eof;
        let mut pieces = Vec::new();
        rayon::in_place_scope(|scope| {
            scope.spawn(|_| pieces = parse_block(body, block, pieces_per_block, split.piece_bytes));
            if reading {
                read_error = fill(src, &mut next, block_bytes, &mut eof).err();
            }
        });
        crate::profile::span("load.join", || join_pieces(name, body, &mut file, pieces))?;
        progress.tick();
        if !reading {
            break;
        }
        std::mem::swap(&mut buf, &mut next);
    }
    if let Some(e) = read_error {
        // The stream failed within the line after the last whole one.
        return Err(invalid_at(name, file.last_line + 1, read_failure(&e)));
    }
    Ok(file)
}

/// Reads from `src` until `buf` holds `want` bytes or the stream ends.
fn fill(src: &mut dyn Read, buf: &mut Vec<u8>, want: usize, eof: &mut bool) -> std::io::Result<()> {
    let missing = want.saturating_sub(buf.len());
    if missing == 0 || *eof {
        return Ok(());
    }
    let got = src.take(missing as u64).read_to_end(buf)?;
    if got < missing {
        *eof = true;
    }
    Ok(())
}

/// Cuts `block` (whole lines, but for a stream's last bytes) into up to `pieces` pieces
/// of at least `piece_bytes` at line ends and parses them at once.
fn parse_block<F: TextBody>(
    body: &F,
    block: &[u8],
    pieces: usize,
    piece_bytes: usize,
) -> Vec<Piece<F::Extra>> {
    let pieces = pieces.min(block.len().div_ceil(piece_bytes.max(1))).max(1);
    let mut cuts = vec![0];
    for p in 1..pieces {
        let at = (block.len() * p / pieces).max(*cuts.last().unwrap());
        let end = match memchr::memchr(b'\n', &block[at..]) {
            Some(i) => at + i + 1,
            None => block.len(),
        };
        cuts.push(end);
    }
    cuts.push(block.len());
    cuts.dedup();
    if cuts.len() == 2 {
        return vec![parse_piece(body, block)];
    }
    cuts.par_windows(2)
        .map(|w| parse_piece(body, &block[w[0]..w[1]]))
        .collect()
}

/// Parses the lines of `bytes` until the first that fails.
fn parse_piece<F: TextBody>(body: &F, bytes: &[u8]) -> Piece<F::Extra> {
    let mut extra = F::Extra::default();
    // Records take at least 4 bytes ("1 2\n").
    let mut arcs = match body.new_arcs(bytes.len() / 16) {
        Ok(arcs) => arcs,
        Err(e) => {
            return Piece {
                arcs: ArcList::empty(),
                extra,
                lines: 0,
                failure: Some(LineFailure::Other(e)),
            }
        }
    };
    let mut ln = 0;
    let mut rest = bytes;
    while !rest.is_empty() {
        let (mut line, after) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        if let Some((b'\r', body)) = line.split_last() {
            line = body;
        }
        ln += 1;
        if let Err(failure) = body.parse_line(&mut arcs, &mut extra, ln, line) {
            return Piece {
                arcs,
                extra,
                lines: ln - 1,
                failure: Some(failure),
            };
        }
        rest = after;
    }
    Piece {
        arcs,
        extra,
        lines: ln,
        failure: None,
    }
}

/// Joins a block's pieces to the file's lines before them, or reports the earliest line
/// that is wrong: each piece is checked in turn against the lines before it, then all
/// are appended at once.
fn join_pieces<F: TextBody>(
    name: &str,
    body: &F,
    file: &mut Body<F::Extra>,
    pieces: Vec<Piece<F::Extra>>,
) -> Result<()> {
    let mut arcs_before = file.arcs.len() as u64;
    let mut checked = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let offset = file.last_line;
        if let Some(LineFailure::Other(e)) = piece.failure {
            return Err(e);
        }
        // Of two complaints about one line, the first listed is the one a sequential
        // reading makes: the line's shape is checked before its weight is parsed.
        let mut wrong: Vec<LineError> = Vec::new();
        wrong.extend(body.join(&mut file.extra, &mut file.arcs, piece.extra, offset));
        if let Some(LineFailure::Line((line, message))) = piece.failure {
            wrong.push((line + offset, message));
        }
        wrong.extend(file.arcs.weights.note(&piece.arcs.weights, offset));
        if let Some((declared, message)) = body.declared_arcs() {
            if arcs_before + piece.arcs.len() as u64 > declared {
                let extra_arc = declared.saturating_sub(arcs_before) as usize;
                wrong.push((piece.arcs.line_of(extra_arc) + offset, message));
            }
        }
        if let Some((line, message)) = wrong.into_iter().min_by_key(|e| e.0) {
            return Err(invalid_at(name, line, message));
        }
        arcs_before += piece.arcs.len() as u64;
        file.last_line = offset + piece.lines;
        checked.push((piece.arcs, offset));
    }
    file.arcs.append_all(checked)
}

#[cfg(test)]
mod tests {
    //! Cutting a body into pieces changes nothing: any cut of a file gives the graph, or
    //! the error, that one piece gives.

    use proptest::prelude::*;

    use super::super::input::{LineReader, Progress};
    use super::super::{dimacs, edgelist, mtx, Format};
    use super::Split;
    use crate::graph::EdgeListGraph;

    /// The whole file as one piece.
    const WHOLE: Split = Split {
        piece_bytes: usize::MAX,
        pieces_per_thread: 1,
    };

    fn read(format: Format, text: &[u8], split: Split) -> Result<(EdgeListGraph, u64), String> {
        let mut stream = text;
        let mut progress = Progress::none();
        let lines = LineReader::new(&mut stream, &mut progress);
        let parsed = match format {
            Format::Dimacs => dimacs::read("f", lines, 1 << 20, split),
            Format::MatrixMarket => mtx::read("f", lines, 1 << 20, split),
            _ => edgelist::read("f", lines, 1 << 20, split),
        };
        parsed
            .map(|p| (p.graph, p.arcs_in_file))
            .map_err(|e| e.message().to_string())
    }

    /// A weight token: mostly small integers, sometimes one that widens the type, a
    /// real, or nonsense.
    fn weight() -> impl Strategy<Value = String> {
        prop_oneof![
            40 => (0u32..20).prop_map(|w| w.to_string()),
            2 => (0u64..3).prop_map(|w| ((1u64 << 32) + w).to_string()),
            2 => (1i64..3).prop_map(|w| (-w).to_string()),
            2 => (0u64..3).prop_map(|w| ((1u64 << 63) + w).to_string()),
            1 => Just("99999999999999999999999".to_string()),
            1 => Just("2.5".to_string()),
            1 => Just("nan".to_string()),
            1 => Just("x".to_string()),
        ]
    }

    /// Body lines: `pair` gives the two lines of one edge (`u v w` as the format writes
    /// it), `single` one line; comments, blank lines and junk in between.
    fn lines(
        n: u64,
        base: u64,
        pair: fn(u64, u64, &str) -> [String; 2],
        single: fn(u64, u64, &str) -> String,
        comment: &'static str,
    ) -> impl Strategy<Value = Vec<String>> {
        // Ids of the file's range (from `base`), now and then one outside it.
        let id = prop_oneof![30 => base..base + n, 1 => 0..n + 2];
        let item = prop_oneof![
            20 => (id.clone(), id.clone(), weight()).prop_map(move |(u, v, w)| pair(u, v, &w).to_vec()),
            2 => (id.clone(), id, weight()).prop_map(move |(u, v, w)| vec![single(u, v, &w)]),
            2 => Just(vec![comment.to_string()]),
            1 => Just(vec![String::new()]),
            1 => Just(vec!["  junk here".to_string()]),
        ];
        prop::collection::vec(item, 0..60).prop_map(|items| items.concat())
    }

    /// Joins lines with `\n` or `\r\n`, with or without a last line end.
    fn file(head: Vec<String>, body: Vec<String>, crlf: bool, last_end: bool) -> Vec<u8> {
        let end = if crlf { "\r\n" } else { "\n" };
        let mut text = head.into_iter().chain(body).collect::<Vec<_>>().join(end);
        if last_end {
            text.push_str(end);
        }
        text.into_bytes()
    }

    fn dimacs_file() -> impl Strategy<Value = Vec<u8>> {
        (1u64..6).prop_flat_map(|n| {
            let body = lines(
                n,
                1,
                |u, v, w| [format!("a {u} {v} {w}"), format!("a {v} {u} {w}")],
                |u, v, w| format!("a {u} {v} {w}"),
                "c comment",
            );
            (body, 0u64..3, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
                move |(body, slack, crlf, last_end, extra_p)| {
                    let arcs = body.iter().filter(|l| l.starts_with('a')).count() as u64;
                    // Mostly the right count; sometimes one short or one over.
                    let m = match slack {
                        0 => arcs.saturating_sub(1),
                        1 => arcs,
                        _ => arcs + 1,
                    };
                    let mut body = body;
                    if extra_p && !body.is_empty() {
                        let at = body.len() / 2;
                        body.insert(at, "p sp 1 1".to_string());
                    }
                    let head = vec!["c head".to_string(), format!("p sp {n} {m}")];
                    file(head, body, crlf, last_end)
                },
            )
        })
    }

    fn mtx_file() -> impl Strategy<Value = Vec<u8>> {
        let field = prop_oneof![Just("integer"), Just("real"), Just("pattern")];
        let symmetry = prop_oneof![Just("general"), Just("symmetric")];
        (1u64..6, field, symmetry).prop_flat_map(|(n, field, symmetry)| {
            let body = if field == "pattern" {
                lines(
                    n,
                    1,
                    |u, v, _| [format!("{u} {v}"), format!("{v} {u}")],
                    |u, v, _| format!("{u} {v}"),
                    "% comment",
                )
                .boxed()
            } else {
                lines(
                    n,
                    1,
                    |u, v, w| [format!("{u} {v} {w}"), format!("{v} {u} {w}")],
                    |u, v, w| format!("{u} {v} {w}"),
                    "% comment",
                )
                .boxed()
            };
            (body, 0u64..3, any::<bool>(), any::<bool>()).prop_map(
                move |(body, slack, crlf, last_end)| {
                    let entries = body
                        .iter()
                        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
                        .count() as u64;
                    let declared = (entries + slack).saturating_sub(1);
                    let head = vec![
                        format!("%%MatrixMarket matrix coordinate {field} {symmetry}"),
                        "% comment".to_string(),
                        format!("{n} {n} {declared}"),
                    ];
                    file(head, body, crlf, last_end)
                },
            )
        })
    }

    fn edge_list_file() -> impl Strategy<Value = Vec<u8>> {
        (1u64..6, any::<bool>()).prop_flat_map(|(n, weighted)| {
            let body = if weighted {
                lines(
                    n,
                    0,
                    |u, v, w| [format!("{u} {v} {w}"), format!("{v} {u} {w}")],
                    // A line without a weight now and then.
                    |u, v, _| format!("{u} {v}"),
                    "# comment",
                )
                .boxed()
            } else {
                lines(
                    n,
                    0,
                    |u, v, _| [format!("{u} {v}"), format!("{v} {u}")],
                    |u, v, w| format!("{u} {v} {w}"),
                    "% comment",
                )
                .boxed()
            };
            (body, any::<bool>(), any::<bool>())
                .prop_map(|(body, crlf, last_end)| file(Vec::new(), body, crlf, last_end))
        })
    }

    fn split() -> impl Strategy<Value = Split> {
        (1usize..24, 1usize..4).prop_map(|(piece_bytes, pieces_per_thread)| Split {
            piece_bytes,
            pieces_per_thread,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn dimacs_pieces_read_as_one(text in dimacs_file(), split in split()) {
            prop_assert_eq!(read(Format::Dimacs, &text, split), read(Format::Dimacs, &text, WHOLE));
        }

        #[test]
        fn matrix_market_pieces_read_as_one(text in mtx_file(), split in split()) {
            let one = read(Format::MatrixMarket, &text, WHOLE);
            prop_assert_eq!(read(Format::MatrixMarket, &text, split), one);
        }

        #[test]
        fn edge_list_pieces_read_as_one(text in edge_list_file(), split in split()) {
            prop_assert_eq!(read(Format::EdgeList, &text, split), read(Format::EdgeList, &text, WHOLE));
        }
    }
}
