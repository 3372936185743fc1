//! Reading and writing graph files.
//!
//! | format | `Format` | names (`Auto`) | ids | weights |
//! |---|---|---|---|---|
//! | 9th DIMACS challenge shortest paths (`p sp N M`, `a U V W`) | [`Format::Dimacs`] | `*.gr` | 1-based | integers |
//! | Matrix Market coordinate (`general` / `symmetric`; `integer` / `real` / `pattern`) | [`Format::MatrixMarket`] | `*.mtx` | 1-based | integers, reals or none |
//! | plain edge list (`u v [w]` lines, `#` / `%` comments) | [`Format::EdgeList`] | anything else | 0-based | integers, reals or none |
//! | ECL binary CSR (int32 `n`, `m`, `offsets[n+1]`, `targets[m]`, optional `weights[m]`) | [`Format::Egr`] | `*.egr` | 0-based | `i32` or none |
//! | gpumst binary edge list (header, `u[m]`, `v[m]`, optional `weights[m]`; see `gmst.rs`) | [`Format::Gmst`] | `*.gmst` | 0-based | any of the six types, or none |
//!
//! Each may be compressed with gzip (`.gz`) or xz (`.xz`); compressed input is recognised
//! by its magic bytes as well as by its name, and decoded as a stream (on a helper
//! thread). Text formats are parsed on all cores of the calling thread's rayon pool:
//! after the header, blocks of lines are cut into pieces parsed at once (see
//! `text_body.rs`); the graph, and the first error, are those of a sequential reading.
//!
//! **Edges and their ids.** An undirected edge is numbered by its first appearance in the
//! file. Edge lists and `symmetric` Matrix Market files list every edge once: each line
//! (entry) is an edge. DIMACS, `.egr` and `general` Matrix Market files list every edge as
//! two arcs, `u→v` and `v→u` with the same weight: the reader pairs each arc with the
//! earliest still-unpaired reverse arc of equal weight (so parallel edges pair up one to
//! one), and the edge keeps the first arc's direction (`u` = its source) and weight. An
//! arc left without a partner is an error naming its line (for `.egr`, its entry index).
//! A self-loop arc `u→u` pairs with the next `u→u` arc of the same weight; a self-loop
//! arc left over is accepted as an edge of its own (some files list loops once).
//!
//! **Weight types.** Integer weights come back in the narrowest of `u32` (all in
//! `[0, 2^32)`), `i64` and `u64`; real literals (`real` Matrix Market files, or any
//! non-integer token such as `1.5`, `1e3` or `inf` in an edge list) make the whole file
//! `f64`. NaN is rejected. `.egr` weights stay `i32`; `.gmst` weights keep the type they
//! were written with. Matrix Market `pattern` files and edge lists without
//! weights give `weights: None`.
//!
//! **Errors.** Malformed data gives [`Status::InvalidGraph`] with a message that starts
//! with `FILE:LINE:` (for `.egr`, `FILE:` and the offending entry); a file that cannot be
//! opened gives [`Status::InvalidArgument`]. Header counts are never trusted for memory:
//! reservations are capped by what the file's size could hold.
//!
//! **Writing** ([`write_graph`]) gives a file that reads back as the same graph: DIMACS
//! and Matrix Market (`general`) files list both arcs of every edge, `u→v` then `v→u`, in
//! edge order, so ids, directions and weights come back unchanged (integer weights in the
//! narrowest type that holds them; `f32` as the equal `f64`). Edge lists come back the
//! same except that vertices after the highest one used are lost. An `.egr` file is a CSR,
//! which orders arcs by source vertex: reading it back numbers the edges in CSR order,
//! each as `(min, max)` of its endpoints.

mod arcs;
mod csr_pairs;
mod dimacs;
mod edgelist;
mod egr;
mod gmst;
mod input;
mod mtx;
mod output;
mod text_body;
mod words;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use self::arcs::ArcError;
use self::input::{invalid_at, strip_compression_suffix, Compression, Input, LineReader};
use self::output::{put_u64, put_weight, Output};
use self::text_body::Split;
use self::words::BinaryInput;
use super::{EdgeListGraph, WeightVec};
use crate::{Error, Result, Status};

/// A graph file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Chosen from the file name: `.gr` → DIMACS, `.mtx` → Matrix Market, `.egr` → ECL
    /// binary, `.gmst` → gpumst binary, anything else → edge list (a trailing `.gz` /
    /// `.xz` is looked through).
    Auto,
    Dimacs,
    MatrixMarket,
    EdgeList,
    Egr,
    /// gpumst's binary edge list: the library's arrays as they are in memory.
    Gmst,
}

impl Format {
    /// Every format, in the order of their command-line names.
    pub const ALL: [Format; 6] = [
        Format::Auto,
        Format::Dimacs,
        Format::MatrixMarket,
        Format::EdgeList,
        Format::Egr,
        Format::Gmst,
    ];

    /// The command-line name: `auto`, `dimacs`, `mtx`, `edgelist`, `egr` or `gmst`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Dimacs => "dimacs",
            Format::MatrixMarket => "mtx",
            Format::EdgeList => "edgelist",
            Format::Egr => "egr",
            Format::Gmst => "gmst",
        }
    }

    /// The format [`Format::Auto`] picks for `path` (never `Auto`).
    pub fn from_path(path: &Path) -> Format {
        let (name, _) = strip_compression_suffix(path);
        let ext = Path::new(&name)
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "gr" => Format::Dimacs,
            "mtx" => Format::MatrixMarket,
            "egr" => Format::Egr,
            "gmst" => Format::Gmst,
            _ => Format::EdgeList,
        }
    }

    /// `self`, or for `Auto` the format named by `path`.
    pub fn resolve(self, path: &Path) -> Format {
        match self {
            Format::Auto => Format::from_path(path),
            f => f,
        }
    }

    /// Whether file ids start at 1 (DIMACS, Matrix Market) rather than 0.
    pub fn vertex_base(self) -> u32 {
        match self {
            Format::Dimacs | Format::MatrixMarket => 1,
            _ => 0,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = Error;

    fn from_str(s: &str) -> Result<Format> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Format::Auto),
            "dimacs" | "gr" => Ok(Format::Dimacs),
            "mtx" | "matrixmarket" | "mm" => Ok(Format::MatrixMarket),
            "edgelist" | "el" | "edges" | "txt" => Ok(Format::EdgeList),
            "egr" => Ok(Format::Egr),
            "gmst" => Ok(Format::Gmst),
            _ => Err(Error::invalid_argument(format!(
                "unknown graph format '{s}' (expected auto, dimacs, mtx, edgelist, egr or gmst)"
            ))),
        }
    }
}

/// A graph read from a file, with what is needed to speak of it in the file's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedGraph {
    pub graph: EdgeListGraph,
    /// The format the file was read as (never [`Format::Auto`]).
    pub format: Format,
    /// What to add to a 0-based vertex id to get the file's id: 1 for DIMACS and Matrix
    /// Market, 0 for edge lists and `.egr`.
    pub vertex_base: u32,
    /// Lines (entries) read that carried an arc or edge: for DIMACS, `.egr` and `general`
    /// Matrix Market twice the edge count (less lone self-loops).
    pub arcs_in_file: u64,
}

/// Reads a graph file, parsing text formats and pairing arcs on the rayon pool it is
/// called from (the global pool, all cores, unless called inside another pool's
/// `install`). `progress`, if given, is called with the bytes of the file
/// consumed so far (compressed bytes for compressed files) and the file size, at most
/// once every few MB and once at the end.
pub fn read_graph(
    path: &Path,
    format: Format,
    progress: Option<&dyn Fn(u64, Option<u64>)>,
) -> Result<LoadedGraph> {
    let format = format.resolve(path);
    let binary = matches!(format, Format::Egr | Format::Gmst);
    let input = Input::open(path, !binary, progress)?;
    let name = input.name.clone();
    // The shortest records are 4 bytes: an int32, or "1 2\n".
    let budget = input.reserve_budget(4);
    let plain_size = match input.compression {
        Compression::None => input.file_size,
        _ => None,
    };
    let plain_file = input.plain_file();
    let parsed = input.with_stream(|stream, progress| {
        let binary = |stream| BinaryInput::new(stream, plain_file, plain_size);
        let parsed = match format {
            Format::Egr => egr::read(&name, &mut binary(stream), progress, budget),
            Format::Gmst => gmst::read(&name, &mut binary(stream), progress, budget),
            text => {
                let lines = LineReader::new(stream, progress);
                let split = Split::DEFAULT;
                match text {
                    Format::Dimacs => dimacs::read(&name, lines, budget, split),
                    Format::MatrixMarket => mtx::read(&name, lines, budget, split),
                    _ => edgelist::read(&name, lines, budget, split),
                }
            }
        };
        if parsed.is_ok() {
            progress.finish();
        }
        parsed
    })?;
    Ok(LoadedGraph {
        graph: parsed.graph,
        format,
        vertex_base: format.vertex_base(),
        arcs_in_file: parsed.arcs_in_file,
    })
}

/// What a format reader returns.
pub(crate) struct Parsed {
    graph: EdgeListGraph,
    arcs_in_file: u64,
}

/// The next line, with stream failures turned into errors naming the line.
fn next_line<'r>(lines: &'r mut LineReader<'_, '_>, name: &str) -> Result<Option<(u64, &'r [u8])>> {
    lines
        .next_line()
        .map_err(|(line, m)| invalid_at(name, line, m))
}

/// Turns a pairing or weight failure of a text format into an error naming the line;
/// `base` is added to the vertex ids shown, `what` names a record ("arc", "entry").
fn arc_error(name: &str, e: ArcError, base: u32, what: &str) -> Error {
    match e {
        ArcError::Weight((line, message)) => invalid_at(name, line, message),
        ArcError::Memory(e) => e,
        ArcError::Unpaired { line, src, dst } => {
            let (s, d) = (src as u64 + base as u64, dst as u64 + base as u64);
            invalid_at(
                name,
                line,
                format!(
                    "{what} {s} -> {d} has no partner {d} -> {s} with the same weight \
                     (this format lists every undirected edge in both directions)"
                ),
            )
        }
    }
}

/// Writes `graph` to `path` in `format` (`Auto`: from the file name), compressed when the
/// name ends in `.gz` or `.xz`. DIMACS needs integer weights (a weightless graph is
/// written with weight 1); `.egr` needs weights that fit `i32` and fewer than 2^31 arcs.
pub fn write_graph(path: &Path, format: Format, graph: &EdgeListGraph) -> Result<()> {
    check_graph(graph)?;
    let format = format.resolve(path);
    // Check what the format can hold before creating the file.
    match format {
        Format::Dimacs => dimacs::check_writable(graph)?,
        Format::Egr => egr::check_writable(graph)?,
        Format::Gmst => gmst::check_writable(graph)?,
        _ => {}
    }
    let mut out = Output::create(path)?;
    match format {
        Format::Dimacs => dimacs::write(&mut out, graph)?,
        Format::MatrixMarket => mtx::write(&mut out, graph)?,
        Format::Egr => egr::write(&mut out, graph)?,
        Format::Gmst => gmst::write(&mut out, graph)?,
        _ => edgelist::write(&mut out, graph)?,
    }
    out.finish()
}

fn check_graph(graph: &EdgeListGraph) -> Result<()> {
    let m = graph.u.len();
    if graph.v.len() != m || graph.weights.as_ref().is_some_and(|w| w.len() != m) {
        return Err(Error::invalid_argument(format!(
            "graph arrays differ in length: u has {}, v has {}, weights have {}",
            m,
            graph.v.len(),
            graph.weights.as_ref().map_or(m, |w| w.len())
        )));
    }
    let nan = match &graph.weights {
        Some(WeightVec::F32(w)) => w.iter().position(|x| x.is_nan()),
        Some(WeightVec::F64(w)) => w.iter().position(|x| x.is_nan()),
        _ => None,
    };
    if let Some(i) = nan {
        return Err(Error::invalid_argument(format!(
            "edge {i} has a NaN weight; graph files cannot hold NaN weights"
        )));
    }
    let n = graph.num_vertices as u64;
    if let Some(i) = (0..m).find(|&i| graph.u[i] as u64 >= n || graph.v[i] as u64 >= n) {
        return Err(Error::invalid_argument(format!(
            "edge {i} ({} - {}) has an endpoint outside the {n} vertices",
            graph.u[i], graph.v[i]
        )));
    }
    Ok(())
}

/// Writes the edges `edge_ids` of `loaded` (in the given order), one `u v w` line each in
/// the file's own numbering (`vertex_base` added), or `u v` for a weightless graph.
/// Compressed when the name ends in `.gz` or `.xz`.
pub fn write_forest_edges(path: &Path, loaded: &LoadedGraph, edge_ids: &[u64]) -> Result<()> {
    let g = &loaded.graph;
    let m = g.num_edges() as u64;
    if let Some(&bad) = edge_ids.iter().find(|&&e| e >= m) {
        return Err(Error::invalid_argument(format!(
            "edge id {bad} is out of range: the graph has {m} edges"
        )));
    }
    let base = loaded.vertex_base as u64;
    let mut out = Output::create(path)?;
    out.write_items(edge_ids.len(), |k, buf| {
        let e = edge_ids[k] as usize;
        put_u64(buf, g.u[e] as u64 + base);
        buf.push(b' ');
        put_u64(buf, g.v[e] as u64 + base);
        if let Some(w) = &g.weights {
            buf.push(b' ');
            put_weight(buf, w, e, false);
        }
        buf.push(b'\n');
    })?;
    out.finish()
}

/// An error for a graph a format cannot hold.
fn unwritable(message: impl Into<String>) -> Error {
    Error::new(Status::InvalidArgument, message)
}
