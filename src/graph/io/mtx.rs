//! Matrix Market coordinate files: `%%MatrixMarket matrix coordinate FIELD SYMMETRY`,
//! `%` comments, a `rows cols entries` size line, then `i j [value]` entries (1-based).
//! `symmetric`: every entry is one undirected edge. `general`: both triangles are listed,
//! so entries are paired into edges like DIMACS arcs.

use super::arcs::{ArcList, LineError, WeightAcc};
use super::input::{
    fast_uints, first_byte, invalid_at, parse_number, parse_u64, show, LineReader, Number, Tokens,
};
use super::output::{put_u64, put_weight, Output};
use super::text_body::{parse_body, LineFailure, Split, TextBody};
use super::{arc_error, next_line, Parsed};
use crate::graph::{EdgeListGraph, WeightVec};
use crate::Result;

#[derive(Clone, Copy, PartialEq)]
enum Field {
    Real,
    Integer,
    Pattern,
}

struct Size {
    n: u64,
    entries: u64,
    line: u64,
    field: Field,
}

const BANNER: &str = "%%MatrixMarket matrix coordinate (real|integer|pattern) (general|symmetric)";

fn parse_banner(name: &str, ln: u64, line: &[u8]) -> Result<(Field, bool)> {
    let text = String::from_utf8_lossy(line).to_ascii_lowercase();
    let words: Vec<&str> = text.split_ascii_whitespace().collect();
    if words.first() != Some(&"%%matrixmarket") {
        return Err(invalid_at(
            name,
            ln,
            format!("expected the header '{BANNER}', found {}", show(line)),
        ));
    }
    if words.len() != 5 {
        return Err(invalid_at(
            name,
            ln,
            format!("expected the header '{BANNER}', found {}", show(line)),
        ));
    }
    if words[1] != "matrix" {
        return Err(invalid_at(
            name,
            ln,
            format!(
                "unsupported Matrix Market object '{}': only 'matrix' is a graph",
                words[1]
            ),
        ));
    }
    match words[2] {
        "coordinate" => {}
        "array" => {
            return Err(invalid_at(
                name,
                ln,
                "dense 'array' Matrix Market files are not supported: a graph must be in 'coordinate' format",
            ))
        }
        other => {
            return Err(invalid_at(
                name,
                ln,
                format!("unknown Matrix Market format '{other}' (expected 'coordinate')"),
            ))
        }
    }
    let field = match words[3] {
        "real" | "double" => Field::Real,
        "integer" => Field::Integer,
        "pattern" => Field::Pattern,
        "complex" => return Err(invalid_at(
            name,
            ln,
            "complex Matrix Market values are not supported (expected real, integer or pattern)",
        )),
        other => {
            return Err(invalid_at(
                name,
                ln,
                format!(
                    "unknown Matrix Market field '{other}' (expected real, integer or pattern)"
                ),
            ))
        }
    };
    let symmetric = match words[4] {
        "general" => false,
        "symmetric" => true,
        "skew-symmetric" | "hermitian" => {
            return Err(invalid_at(
                name,
                ln,
                format!(
                    "'{}' Matrix Market files are not supported: an undirected graph is 'symmetric' or 'general'",
                    words[4]
                ),
            ))
        }
        other => {
            return Err(invalid_at(
                name,
                ln,
                format!("unknown Matrix Market symmetry '{other}' (expected general or symmetric)"),
            ))
        }
    };
    Ok((field, symmetric))
}

pub(super) fn read(
    name: &str,
    mut lines: LineReader<'_, '_>,
    budget: u64,
    split: Split,
) -> Result<Parsed> {
    let (field, symmetric) = match next_line(&mut lines, name)? {
        Some((ln, line)) => parse_banner(name, ln, line)?,
        None => {
            return Err(invalid_at(
                name,
                1,
                format!("the file is empty; expected the header '{BANNER}'"),
            ))
        }
    };
    let size = loop {
        let Some((ln, line)) = next_line(&mut lines, name)? else {
            return Err(invalid_at(
                name,
                lines.lines_read(),
                "the file ends without the size line 'rows cols entries'",
            ));
        };
        match first_byte(line) {
            None | Some(b'%') => continue,
            Some(_) => break parse_size(name, ln, line, field)?,
        }
    };
    let reserve = size.entries.min(budget) as usize;
    let arcs = ArcList::new(reserve, size.new_weights(reserve)?)?;
    let body = parse_body(name, lines, &size, arcs, (), split)?;
    let count = body.arcs.len() as u64;
    if count < size.entries {
        return Err(invalid_at(
            name,
            body.last_line,
            format!(
                "the file ends after {count} entries but the header declares {}",
                size.entries
            ),
        ));
    }
    let (u, v, weights) = body
        .arcs
        .into_edges(!symmetric)
        .map_err(|e| arc_error(name, e, 1, "entry"))?;
    Ok(Parsed {
        graph: EdgeListGraph {
            num_vertices: size.n as usize,
            u,
            v,
            weights,
        },
        arcs_in_file: count,
    })
}

/// The `rows cols entries` line.
fn parse_size(name: &str, ln: u64, line: &[u8], field: Field) -> Result<Size> {
    let mut t = Tokens::new(line);
    let (Some(rs), Some(cs), Some(es), None) = (t.next(), t.next(), t.next(), t.next()) else {
        return Err(invalid_at(
            name,
            ln,
            format!(
                "expected the size line 'rows cols entries', found {}",
                show(line)
            ),
        ));
    };
    let (Some(rows), Some(cols), Some(entries)) = (parse_u64(rs), parse_u64(cs), parse_u64(es))
    else {
        return Err(invalid_at(
            name,
            ln,
            format!(
                "expected the size line 'rows cols entries' in integers, found {}",
                show(line)
            ),
        ));
    };
    if rows != cols {
        return Err(invalid_at(
            name,
            ln,
            format!("the matrix is {rows} x {cols}; a graph's adjacency matrix must be square"),
        ));
    }
    if rows > 1 << 32 {
        return Err(invalid_at(
            name,
            ln,
            format!("{rows} vertices do not fit 32-bit vertex ids (at most 2^32)"),
        ));
    }
    Ok(Size {
        n: rows,
        entries,
        line: ln,
        field,
    })
}

impl Size {
    fn new_weights(&self, capacity: usize) -> Result<WeightAcc> {
        match self.field {
            Field::Pattern => Ok(WeightAcc::none()),
            Field::Integer => WeightAcc::integers(capacity, false),
            Field::Real => WeightAcc::reals(capacity),
        }
    }
}

/// The lines after the size line: comments and entries.
impl TextBody for Size {
    type Extra = ();

    fn new_arcs(&self, capacity: usize) -> Result<ArcList> {
        ArcList::new(capacity, self.new_weights(capacity)?)
    }

    #[inline]
    fn parse_line(
        &self,
        arcs: &mut ArcList,
        _: &mut (),
        ln: u64,
        line: &[u8],
    ) -> std::result::Result<(), LineFailure> {
        match first_byte(line) {
            None | Some(b'%') => return Ok(()),
            Some(_) => {}
        }
        let field = self.field;
        let mut f = [0u64; 3];
        let fields = if field == Field::Pattern { 2 } else { 3 };
        let fast = fast_uints(line, &mut f) == Some(fields);
        let (i, j, value) = if fast {
            (f[0], f[1], None)
        } else {
            slow_entry(ln, line, field)?
        };
        for x in [i, j] {
            if x == 0 || x > self.n {
                return Err(LineFailure::Line((
                    ln,
                    format!(
                        "index {x} is out of range 1..={} declared by the size line",
                        self.n
                    ),
                )));
            }
        }
        if fast && field != Field::Pattern {
            match field {
                Field::Integer => arcs.weights.push_int(ln, f[2] as i128),
                _ => arcs.weights.push_real(ln, f[2] as f64),
            }?;
        } else if let Some(vt) = value {
            match (field, parse_number(vt)) {
                (Field::Integer, Number::Int(w)) => arcs.weights.push_int(ln, w),
                (Field::Integer, Number::IntOutOfRange) => Err((
                    ln,
                    format!(
                        "value {} is outside the 64-bit integer range",
                        String::from_utf8_lossy(vt)
                    ),
                )),
                (Field::Integer, _) => Err((
                    ln,
                    format!(
                        "expected an integer value (the header says 'integer'), found {}",
                        show(line)
                    ),
                )),
                (_, Number::Int(w)) => arcs.weights.push_real(ln, w as f64),
                (_, Number::Real(x)) => arcs.weights.push_real(ln, x),
                (_, Number::IntOutOfRange) => {
                    let x = String::from_utf8_lossy(vt)
                        .parse::<f64>()
                        .unwrap_or(f64::NAN);
                    arcs.weights.push_real(ln, x)
                }
                (_, Number::Bad) => {
                    Err((ln, format!("expected a real value, found {}", show(line))))
                }
            }?;
        }
        arcs.push(ln, (i - 1) as u32, (j - 1) as u32)?;
        Ok(())
    }

    fn declared_arcs(&self) -> Option<(u64, String)> {
        Some((
            self.entries,
            format!(
                "more entries than the {} declared by the size line (line {})",
                self.entries, self.line
            ),
        ))
    }
}

/// An entry off the fast path: its indices and value token, or why it is not one.
fn slow_entry(
    ln: u64,
    line: &[u8],
    field: Field,
) -> std::result::Result<(u64, u64, Option<&[u8]>), LineError> {
    let expected = if field == Field::Pattern {
        "'i j'"
    } else {
        "'i j value'"
    };
    let mut t = Tokens::new(line);
    let (Some(is), Some(js)) = (t.next(), t.next()) else {
        return Err((
            ln,
            format!("expected an entry {expected}, found {}", show(line)),
        ));
    };
    let value = t.next();
    if (value.is_some() != (field != Field::Pattern)) || t.next().is_some() {
        return Err((
            ln,
            format!("expected an entry {expected}, found {}", show(line)),
        ));
    }
    let (Some(i), Some(j)) = (parse_u64(is), parse_u64(js)) else {
        return Err((
            ln,
            format!(
                "expected an entry {expected} with integer indices, found {}",
                show(line)
            ),
        ));
    };
    Ok((i, j, value))
}

/// `general` coordinate file with both entries of every edge (`u v` then `v u`) in edge
/// order, so that reading it back gives the same edges in the same order.
pub(super) fn write(out: &mut Output, graph: &EdgeListGraph) -> Result<()> {
    let field = match &graph.weights {
        None => "pattern",
        Some(WeightVec::F32(_) | WeightVec::F64(_)) => "real",
        Some(_) => "integer",
    };
    let header = format!(
        "%%MatrixMarket matrix coordinate {field} general\n\
         % written by gpumst {}: {} undirected edges, each as entries (u, v) and (v, u)\n\
         {} {} {}\n",
        crate::VERSION,
        graph.num_edges(),
        graph.num_vertices,
        graph.num_vertices,
        2 * graph.num_edges() as u64
    );
    out.write_all(header.as_bytes())?;
    out.write_items(graph.num_edges(), |i, buf| {
        let (u, v) = (graph.u[i] as u64 + 1, graph.v[i] as u64 + 1);
        put_u64(buf, u);
        buf.push(b' ');
        put_u64(buf, v);
        let weight_start = buf.len();
        if let Some(w) = &graph.weights {
            buf.push(b' ');
            put_weight(buf, w, i, true);
        }
        buf.push(b'\n');
        let weight_end = buf.len();
        put_u64(buf, v);
        buf.push(b' ');
        put_u64(buf, u);
        buf.extend_from_within(weight_start..weight_end);
    })
}
