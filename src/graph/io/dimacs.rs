//! 9th DIMACS Implementation Challenge (shortest paths) `.gr` files: `c` comments, one
//! `p sp N M` line (M = number of arc lines), then `a U V W` arcs, 1-based, integer `W`;
//! every undirected edge appears as two arcs.

use super::arcs::{ArcList, LineError, WeightAcc};
use super::input::{
    fast_uints, first_byte, invalid_at, parse_number, parse_u64, show, LineReader, Number, Tokens,
};
use super::output::{put_u64, put_weight, weight_type_name, Output};
use super::text_body::{parse_body, LineFailure, Split, TextBody};
use super::{arc_error, next_line, unwritable, Parsed};
use crate::graph::{EdgeListGraph, WeightVec};
use crate::Result;

struct Header {
    n: u64,
    m: u64,
    line: u64,
}

pub(super) fn read(
    name: &str,
    mut lines: LineReader<'_, '_>,
    budget: u64,
    split: Split,
) -> Result<Parsed> {
    let header = loop {
        let Some((ln, line)) = next_line(&mut lines, name)? else {
            break None;
        };
        match first_byte(line) {
            None | Some(b'c') => continue,
            Some(b'a') => return Err(invalid_at(name, ln, "arc before the 'p sp N M' line")),
            Some(b'p') => break Some(parse_header(name, ln, line)?),
            Some(_) => return Err(invalid_at(name, ln, unexpected_line(line))),
        }
    };
    let Some(h) = header else {
        return Err(invalid_at(
            name,
            lines.lines_read().max(1),
            "the file ends without a 'p sp N M' line",
        ));
    };
    let reserve = h.m.min(budget) as usize;
    let arcs = ArcList::new(reserve, WeightAcc::integers(reserve, false)?)?;
    let body = parse_body(name, lines, &h, arcs, (), split)?;
    let count = body.arcs.len() as u64;
    if count < h.m {
        return Err(invalid_at(
            name,
            body.last_line.max(1),
            format!(
                "the file ends after {count} arcs but the header declares {}",
                h.m
            ),
        ));
    }
    let (u, v, weights) = body
        .arcs
        .into_edges(true)
        .map_err(|e| arc_error(name, e, 1, "arc"))?;
    Ok(Parsed {
        graph: EdgeListGraph {
            num_vertices: h.n as usize,
            u,
            v,
            weights,
        },
        arcs_in_file: count,
    })
}

/// The `p sp N M` line.
fn parse_header(name: &str, ln: u64, line: &[u8]) -> Result<Header> {
    let mut t = Tokens::new(line);
    let (Some(b"p"), Some(b"sp"), Some(ns), Some(ms), None) =
        (t.next(), t.next(), t.next(), t.next(), t.next())
    else {
        return Err(invalid_at(
            name,
            ln,
            format!("expected 'p sp N M', found {}", show(line)),
        ));
    };
    let (Some(n), Some(m)) = (parse_u64(ns), parse_u64(ms)) else {
        return Err(invalid_at(
            name,
            ln,
            format!(
                "expected 'p sp N M' with integer N and M, found {}",
                show(line)
            ),
        ));
    };
    if n > 1 << 32 {
        return Err(invalid_at(
            name,
            ln,
            format!("{n} vertices do not fit 32-bit vertex ids (at most 2^32)"),
        ));
    }
    Ok(Header { n, m, line: ln })
}

fn unexpected_line(line: &[u8]) -> String {
    format!(
        "expected a 'c', 'p sp N M' or 'a U V W' line, found {}",
        show(line)
    )
}

/// The lines after the header: comments and arcs.
impl TextBody for Header {
    type Extra = ();

    fn new_arcs(&self, capacity: usize) -> Result<ArcList> {
        ArcList::new(capacity, WeightAcc::integers(capacity, false)?)
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
            None | Some(b'c') => return Ok(()),
            Some(b'a') => {}
            Some(b'p') => {
                return Err(LineFailure::Line((
                    ln,
                    format!("a second 'p' line (the first is line {})", self.line),
                )))
            }
            Some(_) => return Err(LineFailure::Line((ln, unexpected_line(line)))),
        }
        let mut f = [0u64; 3];
        let (u, v, w) = if line.len() > 1
            && line[0] == b'a'
            && matches!(line[1], b' ' | b'\t')
            && fast_uints(&line[1..], &mut f) == Some(3)
        {
            (f[0], f[1], f[2] as i128)
        } else {
            slow_arc(ln, line)?
        };
        for x in [u, v] {
            if x == 0 || x > self.n {
                return Err(LineFailure::Line((
                    ln,
                    format!(
                        "vertex id {x} is out of range 1..={} declared by the 'p' line",
                        self.n
                    ),
                )));
            }
        }
        arcs.weights.push_int(ln, w)?;
        arcs.push(ln, (u - 1) as u32, (v - 1) as u32)?;
        Ok(())
    }

    fn declared_arcs(&self) -> Option<(u64, String)> {
        Some((
            self.m,
            format!(
                "more arcs than the {} declared by the 'p' line (line {})",
                self.m, self.line
            ),
        ))
    }
}

/// An arc line off the fast path: `(U, V, W)` or the reason it is not `a U V W`.
fn slow_arc(ln: u64, line: &[u8]) -> std::result::Result<(u64, u64, i128), LineError> {
    let mut t = Tokens::new(line);
    let (Some(b"a"), Some(us), Some(vs), Some(ws), None) =
        (t.next(), t.next(), t.next(), t.next(), t.next())
    else {
        return Err((ln, format!("expected 'a U V W', found {}", show(line))));
    };
    let (Some(u), Some(v)) = (parse_u64(us), parse_u64(vs)) else {
        return Err((
            ln,
            format!(
                "expected 'a U V W' with integer vertex ids, found {}",
                show(line)
            ),
        ));
    };
    match parse_number(ws) {
        Number::Int(w) => Ok((u, v, w)),
        Number::IntOutOfRange => Err((
            ln,
            format!(
                "weight {} is outside the 64-bit integer range",
                String::from_utf8_lossy(ws)
            ),
        )),
        _ => Err((
            ln,
            format!(
                "expected an integer weight in 'a U V W', found {}",
                show(line)
            ),
        )),
    }
}

pub(super) fn check_writable(graph: &EdgeListGraph) -> Result<()> {
    match &graph.weights {
        Some(w @ (WeightVec::F32(_) | WeightVec::F64(_))) => Err(unwritable(format!(
            "DIMACS .gr files hold integer weights; this graph has {} weights",
            weight_type_name(w)
        ))),
        _ => Ok(()),
    }
}

/// `p sp N 2M`, then both arcs of every edge in edge order (weight 1 when weightless).
pub(super) fn write(out: &mut Output, graph: &EdgeListGraph) -> Result<()> {
    check_writable(graph)?;
    let header = format!(
        "c written by gpumst {}: {} vertices, {} undirected edges as arc pairs\np sp {} {}\n",
        crate::VERSION,
        graph.num_vertices,
        graph.num_edges(),
        graph.num_vertices,
        2 * graph.num_edges() as u64
    );
    out.write_all(header.as_bytes())?;
    out.write_items(graph.num_edges(), |i, buf| {
        let (u, v) = (graph.u[i] as u64 + 1, graph.v[i] as u64 + 1);
        buf.extend_from_slice(b"a ");
        put_u64(buf, u);
        buf.push(b' ');
        put_u64(buf, v);
        buf.push(b' ');
        let weight_start = buf.len();
        match &graph.weights {
            Some(w) => put_weight(buf, w, i, true),
            None => buf.push(b'1'),
        }
        buf.push(b'\n');
        let weight_end = buf.len();
        // The reverse arc, with the same weight text.
        buf.extend_from_slice(b"a ");
        put_u64(buf, v);
        buf.push(b' ');
        put_u64(buf, u);
        buf.push(b' ');
        buf.extend_from_within(weight_start..weight_end);
    })
}
