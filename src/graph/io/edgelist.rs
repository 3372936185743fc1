//! Plain edge lists: one `u v` or `u v w` line per undirected edge, 0-based ids, `#` or
//! `%` comment lines and blank lines skipped. Either every edge has a weight or none has.

use super::arcs::{ArcList, LineError, WeightAcc};
use super::input::{
    fast_uints, first_byte, parse_number, parse_u64, show, LineReader, Number, Tokens,
};
use super::output::{put_u64, put_weight, Output};
use super::text_body::{parse_body, LineFailure, Split, TextBody};
use super::{arc_error, Parsed};
use crate::graph::EdgeListGraph;
use crate::Result;

pub(super) fn read(
    name: &str,
    lines: LineReader<'_, '_>,
    budget: u64,
    split: Split,
) -> Result<Parsed> {
    // No count is declared: guess from the file size (lines are rarely under 8 bytes).
    let reserve = (budget / 2).min(1 << 26) as usize;
    let edges = ArcList::new(reserve, WeightAcc::integers(reserve, true)?)?;
    let body = parse_body(name, lines, &EdgeLines, edges, Shape::default(), split)?;
    let mut edges = body.arcs;
    if body.extra.first.is_none() {
        edges.weights = WeightAcc::none();
    }
    let count = edges.len() as u64;
    let (u, v, weights) = edges
        .into_edges(false)
        .map_err(|e| arc_error(name, e, 0, "edge"))?;
    Ok(Parsed {
        graph: EdgeListGraph {
            num_vertices: body.extra.max_id.map_or(0, |m| m as usize + 1),
            u,
            v,
            weights,
        },
        arcs_in_file: count,
    })
}

/// Every line of an edge list.
struct EdgeLines;

/// What the lines of an edge list say beyond their edges.
#[derive(Default)]
struct Shape {
    /// Whether the first edge has a weight, and its line.
    first: Option<(bool, u64)>,
    /// The first edge line whose weight (or its absence) differs from the first edge's.
    mismatch: Option<u64>,
    max_id: Option<u32>,
}

/// The error of an edge at `line` that has a weight when the first edge (at
/// `first_line`) has none, or the reverse.
fn mismatch_error(line: u64, first_weighted: bool, first_line: u64) -> LineError {
    let (this, that) = if first_weighted {
        ("no weight", "has one")
    } else {
        ("a weight", "has none")
    };
    (
        line,
        format!(
            "this edge has {this}, but the first edge (line {first_line}) {that}: \
             either every edge has a weight or none has"
        ),
    )
}

impl TextBody for EdgeLines {
    type Extra = Shape;

    fn new_arcs(&self, capacity: usize) -> Result<ArcList> {
        ArcList::new(capacity, WeightAcc::integers(capacity, true)?)
    }

    #[inline]
    fn parse_line(
        &self,
        edges: &mut ArcList,
        shape: &mut Shape,
        ln: u64,
        line: &[u8],
    ) -> std::result::Result<(), LineFailure> {
        match first_byte(line) {
            None | Some(b'#') | Some(b'%') => return Ok(()),
            Some(_) => {}
        }
        let mut f = [0u64; 3];
        let fast = fast_uints(line, &mut f).filter(|&k| k >= 2);
        let (u, v, ws) = match fast {
            Some(_) => (f[0], f[1], None),
            None => slow_fields(ln, line)?,
        };
        let weighted = fast.map_or(ws.is_some(), |k| k == 3);
        for x in [u, v] {
            if x > u32::MAX as u64 {
                return Err(LineFailure::Line((
                    ln,
                    format!("vertex id {x} is out of range (ids must be below 2^32)"),
                )));
            }
        }
        match shape.first {
            None => {
                if !weighted {
                    edges.weights = WeightAcc::none();
                }
                shape.first = Some((weighted, ln));
            }
            Some((first_weighted, _)) if first_weighted != weighted => {
                // Said when the piece is joined to the file, whose first edge may be
                // another; this line is left out.
                shape.mismatch.get_or_insert(ln);
                return Ok(());
            }
            Some(_) => {}
        }
        if fast == Some(3) {
            edges.weights.push_int(ln, f[2] as i128)?;
        } else if let Some(wt) = ws {
            match parse_number(wt) {
                Number::Int(w) => edges.weights.push_int(ln, w),
                Number::Real(x) => edges.weights.push_real(ln, x),
                Number::IntOutOfRange => {
                    let x = String::from_utf8_lossy(wt)
                        .parse::<f64>()
                        .unwrap_or(f64::INFINITY);
                    edges.weights.push_int_out_of_range(ln, wt, x)
                }
                Number::Bad => Err((
                    ln,
                    format!("expected a number as the weight, found {}", show(line)),
                )),
            }?;
        }
        let (u, v) = (u as u32, v as u32);
        shape.max_id = Some(shape.max_id.map_or(u.max(v), |m| m.max(u).max(v)));
        edges.push(ln, u, v)?;
        Ok(())
    }

    fn join(
        &self,
        file: &mut Shape,
        file_edges: &mut ArcList,
        piece: Shape,
        offset: u64,
    ) -> Option<LineError> {
        file.max_id = file.max_id.max(piece.max_id);
        let (weighted, line) = piece.first.map(|(w, line)| (w, line + offset))?;
        let (file_weighted, file_line) = *file.first.get_or_insert((weighted, line));
        if file_line == line && !weighted {
            file_edges.weights = WeightAcc::none();
        }
        if weighted != file_weighted {
            return Some(mismatch_error(line, file_weighted, file_line));
        }
        piece
            .mismatch
            .map(|m| mismatch_error(m + offset, file_weighted, file_line))
    }
}

/// A line off the fast path: its ids and weight token, or why it is not `u v [w]`.
fn slow_fields(ln: u64, line: &[u8]) -> std::result::Result<(u64, u64, Option<&[u8]>), LineError> {
    let mut t = Tokens::new(line);
    let (Some(us), Some(vs)) = (t.next(), t.next()) else {
        return Err((
            ln,
            format!("expected 'u v' or 'u v w', found {}", show(line)),
        ));
    };
    let ws = t.next();
    if t.next().is_some() {
        return Err((
            ln,
            format!(
                "expected 'u v' or 'u v w', found more fields: {}",
                show(line)
            ),
        ));
    }
    let (Some(u), Some(v)) = (parse_u64(us), parse_u64(vs)) else {
        return Err((
            ln,
            format!(
                "expected 'u v [w]' with non-negative integer vertex ids, found {}",
                show(line)
            ),
        ));
    };
    Ok((u, v, ws))
}

/// A comment line, then one `u v [w]` line per edge.
pub(super) fn write(out: &mut Output, graph: &EdgeListGraph) -> Result<()> {
    let header = format!(
        "# written by gpumst {}: {} vertices, {} undirected edges, u v{}\n",
        crate::VERSION,
        graph.num_vertices,
        graph.num_edges(),
        if graph.weights.is_some() { " w" } else { "" }
    );
    out.write_all(header.as_bytes())?;
    out.write_items(graph.num_edges(), |i, buf| {
        put_u64(buf, graph.u[i] as u64);
        buf.push(b' ');
        put_u64(buf, graph.v[i] as u64);
        if let Some(w) = &graph.weights {
            buf.push(b' ');
            put_weight(buf, w, i, true);
        }
        buf.push(b'\n');
    })
}
