//! Plain edge lists: one `u v` or `u v w` line per undirected edge, 0-based ids, `#` or
//! `%` comment lines and blank lines skipped. Either every edge has a weight or none has.

use super::arcs::{ArcList, WeightAcc};
use super::input::{
    fast_uints, first_byte, invalid_at, parse_number, parse_u64, show, LineReader, Number, Tokens,
};
use super::output::{put_u64, put_weight, Output};
use super::{arc_error, next_line, Parsed};
use crate::graph::EdgeListGraph;
use crate::Result;

pub(super) fn read(name: &str, lines: &mut LineReader<'_, '_>, budget: u64) -> Result<Parsed> {
    // No count is declared: guess from the file size (lines are rarely under 8 bytes).
    let reserve = (budget / 2).min(1 << 26) as usize;
    let mut edges = ArcList::new(reserve, WeightAcc::integers(reserve, true)?)?;
    // Whether the edges have weights, and the first edge line, once known.
    let mut shape: Option<(bool, u64)> = None;
    let mut max_id: Option<u32> = None;
    while let Some((ln, line)) = next_line(lines, name)? {
        match first_byte(line) {
            None | Some(b'#') | Some(b'%') => continue,
            Some(_) => {}
        }
        let mut f = [0u64; 3];
        let fast = fast_uints(line, &mut f).filter(|&k| k >= 2);
        let (u, v, ws) = match fast {
            Some(_) => (f[0], f[1], None),
            None => slow_fields(name, ln, line)?,
        };
        let weighted = fast.map_or(ws.is_some(), |k| k == 3);
        for x in [u, v] {
            if x > u32::MAX as u64 {
                return Err(invalid_at(
                    name,
                    ln,
                    format!("vertex id {x} is out of range (ids must be below 2^32)"),
                ));
            }
        }
        match shape {
            None => {
                if !weighted {
                    edges.weights = WeightAcc::none();
                }
                shape = Some((weighted, ln));
            }
            Some((first_weighted, first)) if first_weighted != weighted => {
                let (this, that) = if first_weighted {
                    ("no weight", "has one")
                } else {
                    ("a weight", "has none")
                };
                return Err(invalid_at(
                    name,
                    ln,
                    format!(
                        "this edge has {this}, but the first edge (line {first}) {that}: \
                         either every edge has a weight or none has"
                    ),
                ));
            }
            Some(_) => {}
        }
        if fast == Some(3) {
            edges
                .weights
                .push_int(ln, f[2] as i128)
                .map_err(|(l, m)| invalid_at(name, l, m))?;
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
            }
            .map_err(|(l, m)| invalid_at(name, l, m))?;
        }
        let (u, v) = (u as u32, v as u32);
        max_id = Some(max_id.map_or(u.max(v), |m| m.max(u).max(v)));
        edges.push(ln, u, v)?;
    }
    if shape.is_none() {
        edges.weights = WeightAcc::none();
    }
    let count = edges.len() as u64;
    let (u, v, weights) = edges
        .into_edges(false)
        .map_err(|e| arc_error(name, e, 0, "edge"))?;
    Ok(Parsed {
        graph: EdgeListGraph {
            num_vertices: max_id.map_or(0, |m| m as usize + 1),
            u,
            v,
            weights,
        },
        arcs_in_file: count,
    })
}

/// A line off the fast path: its ids and weight token, or why it is not `u v [w]`.
fn slow_fields<'l>(name: &str, ln: u64, line: &'l [u8]) -> Result<(u64, u64, Option<&'l [u8]>)> {
    let mut t = Tokens::new(line);
    let (Some(us), Some(vs)) = (t.next(), t.next()) else {
        return Err(invalid_at(
            name,
            ln,
            format!("expected 'u v' or 'u v w', found {}", show(line)),
        ));
    };
    let ws = t.next();
    if t.next().is_some() {
        return Err(invalid_at(
            name,
            ln,
            format!(
                "expected 'u v' or 'u v w', found more fields: {}",
                show(line)
            ),
        ));
    }
    let (Some(u), Some(v)) = (parse_u64(us), parse_u64(vs)) else {
        return Err(invalid_at(
            name,
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
