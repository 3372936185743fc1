//! ECL's binary `.egr` CSR files (little-endian int32): `n`, `m`, `offsets[n+1]`,
//! `targets[m]`, then optionally `weights[m]`. Every undirected edge appears in both
//! directions; entries are paired into edges like DIMACS arcs, in CSR order.

use std::io;

use super::arcs::{pair_arcs, Edges, PairError};
use super::csr_pairs::pair_csr;
use super::input::{invalid, read_failure, Progress};
use super::output::{weight_type_name, Output};
use super::words::{write_words, BinaryInput};
use super::{unwritable, Parsed};
use crate::graph::{EdgeListGraph, WeightVec};
use crate::{alloc, Result};

/// What the int32 arrays are called in an out-of-memory message.
const ARRAYS: &str = "the int32 arrays read";

pub(super) fn read(
    name: &str,
    input: &mut BinaryInput<'_>,
    progress: &mut Progress<'_>,
    budget: u64,
) -> Result<Parsed> {
    let failed = |e: io::Error| invalid(name, read_failure(&e));
    let mut head = [0u8; 8];
    let got = input.fill(&mut head).map_err(failed)?;
    if got < 8 {
        return Err(invalid(
            name,
            format!("the file has {got} bytes, too few for the int32 header n, m"),
        ));
    }
    let n = i32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let m = i32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if n < 0 || m < 0 {
        return Err(invalid(
            name,
            format!("the header gives n = {n} and m = {m}; both must be non-negative"),
        ));
    }
    let (n, m) = (n as u64, m as u64);
    if let Some(size) = input.plain_size() {
        let without = 4 * (2 + n + 1 + m);
        let with = without + 4 * m;
        if size != without && size != with {
            return Err(invalid(
                name,
                format!(
                    "the file has {size} bytes, but n = {n} and m = {m} need {without} bytes \
                     (without weights) or {with} (with weights)"
                ),
            ));
        }
    }
    let (offsets, _) = input.read_words::<i32>(n + 1, budget, progress, &failed, ARRAYS)?;
    if (offsets.len() as u64) < n + 1 {
        return Err(invalid(
            name,
            format!(
                "the file ends after {} of the n + 1 = {} offsets",
                offsets.len(),
                n + 1
            ),
        ));
    }
    if offsets[0] != 0 {
        return Err(invalid(
            name,
            format!("offsets[0] is {}; it must be 0", offsets[0]),
        ));
    }
    if let Some(x) = (1..offsets.len()).find(|&x| offsets[x] < offsets[x - 1]) {
        return Err(invalid(
            name,
            format!(
                "offsets[{x}] = {} is less than offsets[{}] = {}: offsets must not decrease",
                offsets[x],
                x - 1,
                offsets[x - 1]
            ),
        ));
    }
    if offsets[n as usize] as u64 != m {
        return Err(invalid(
            name,
            format!(
                "offsets[n] = offsets[{n}] is {}, but m is {m}",
                offsets[n as usize]
            ),
        ));
    }
    let (targets, _) = input.read_words::<i32>(m, budget, progress, &failed, ARRAYS)?;
    if (targets.len() as u64) < m {
        return Err(invalid(
            name,
            format!(
                "the file ends after {} of the m = {m} targets",
                targets.len()
            ),
        ));
    }
    let first_out_of_range = alloc::par_position_first(targets.len(), |r| {
        targets[r].iter().position(|&t| t < 0 || t as u64 >= n)
    });
    if let Some(p) = first_out_of_range {
        return Err(invalid(
            name,
            format!("targets[{p}] = {} is out of range 0..{n}", targets[p]),
        ));
    }
    let weights = if m == 0 {
        None
    } else {
        let (w, partial) = input.read_words::<i32>(m, budget, progress, &failed, ARRAYS)?;
        if w.is_empty() && partial == 0 {
            None
        } else if (w.len() as u64) < m {
            return Err(invalid(
                name,
                format!(
                    "{} bytes follow the targets; expected none (no weights) or {} (m int32 weights)",
                    w.len() * 4 + partial,
                    4 * m
                ),
            ));
        } else {
            Some(WeightVec::I32(w))
        }
    };
    let mut extra = [0u8; 1];
    if input.fill(&mut extra).map_err(failed)? > 0 {
        return Err(invalid(
            name,
            "the file goes on after the last array (weights, or targets when m = 0)",
        ));
    }

    let weight_slice = match &weights {
        Some(WeightVec::I32(w)) => Some(&w[..]),
        _ => None,
    };
    let paired = match pair_csr(&offsets, &targets, weight_slice)? {
        Some((edges, scratch)) => {
            // The file's arrays and the pairing's go back to the system on a thread
            // of their own.
            let bytes = 4 * (offsets.len() + targets.len() + weight_slice.map_or(0, <[_]>::len))
                + scratch.bytes();
            alloc::free_in_background((offsets, targets, weights, scratch), bytes);
            edges
        }
        None => pair_all_arcs(name, offsets, targets, weights)?,
    };
    let (u, v, weights) = paired;
    Ok(Parsed {
        graph: EdgeListGraph {
            num_vertices: n as usize,
            u,
            v,
            weights,
        },
        arcs_in_file: m,
    })
}

/// The general pairing (any arc order), which also names an arc left without its
/// reverse.
fn pair_all_arcs(
    name: &str,
    offsets: Vec<i32>,
    targets: Vec<i32>,
    weights: Option<WeightVec>,
) -> Result<Edges> {
    let (n, m) = (offsets.len() - 1, targets.len());
    let mut src: Vec<u32> = alloc::zeroed(m, "the arcs' sources")?;
    for x in 0..n {
        src[offsets[x] as usize..offsets[x + 1] as usize].fill(x as u32);
    }
    drop(offsets);
    let dst: Vec<u32> = alloc::collect(targets.into_iter().map(|t| t as u32), "the arcs' targets")?;
    pair_arcs(src, dst, weights).map_err(|e| match e {
        PairError::Unpaired(a, s, d) => invalid(
            name,
            format!(
                "entry {a} (arc {s} -> {d}) has no reverse arc {d} -> {s} with the same weight \
                 (an .egr file lists every undirected edge in both directions)"
            ),
        ),
        PairError::Memory(e) => e,
    })
}

/// The weight of edge `i` as the `i32` an `.egr` file holds, if it fits.
fn weight_i32(w: &WeightVec, i: usize) -> Option<i32> {
    match w {
        WeightVec::I32(w) => Some(w[i]),
        WeightVec::U32(w) => i32::try_from(w[i]).ok(),
        WeightVec::I64(w) => i32::try_from(w[i]).ok(),
        WeightVec::U64(w) => i32::try_from(w[i]).ok(),
        WeightVec::F32(_) | WeightVec::F64(_) => None,
    }
}

pub(super) fn check_writable(graph: &EdgeListGraph) -> Result<()> {
    if graph.num_vertices > i32::MAX as usize || graph.num_edges() > (i32::MAX / 2) as usize {
        return Err(unwritable(format!(
            ".egr files hold int32 counts: {} vertices and {} arcs do not fit",
            graph.num_vertices,
            2 * graph.num_edges() as u64
        )));
    }
    if let Some(w) = &graph.weights {
        if matches!(w, WeightVec::F32(_) | WeightVec::F64(_)) {
            return Err(unwritable(format!(
                ".egr files hold int32 weights; this graph has {} weights",
                weight_type_name(w)
            )));
        }
        if let Some(i) = (0..w.len()).find(|&i| weight_i32(w, i).is_none()) {
            let mut text = Vec::new();
            super::output::put_weight(&mut text, w, i, true);
            return Err(unwritable(format!(
                ".egr files hold int32 weights; edge {i} weighs {}",
                String::from_utf8_lossy(&text)
            )));
        }
    }
    Ok(())
}

/// A CSR with both directions of every edge: row `x` lists, in edge order, the edges at
/// `x` (a self-loop twice).
pub(super) fn write(out: &mut Output, graph: &EdgeListGraph) -> Result<()> {
    check_writable(graph)?;
    let n = graph.num_vertices;
    let m = 2 * graph.num_edges();
    let mut offsets = vec![0i32; n + 1];
    for i in 0..graph.num_edges() {
        offsets[graph.u[i] as usize + 1] += 1;
        offsets[graph.v[i] as usize + 1] += 1;
    }
    for x in 0..n {
        offsets[x + 1] += offsets[x];
    }
    let mut next: Vec<i32> = offsets[..n].to_vec();
    let mut targets = vec![0i32; m];
    let mut weights = graph.weights.as_ref().map(|_| vec![0i32; m]);
    for i in 0..graph.num_edges() {
        let (u, v) = (graph.u[i] as usize, graph.v[i] as usize);
        let w = graph.weights.as_ref().and_then(|w| weight_i32(w, i));
        for (a, b) in [(u, v), (v, u)] {
            let p = next[a] as usize;
            next[a] += 1;
            targets[p] = b as i32;
            if let (Some(ws), Some(w)) = (&mut weights, w) {
                ws[p] = w;
            }
        }
    }
    write_words(out, &[n as i32, m as i32])?;
    write_words(out, &offsets)?;
    write_words(out, &targets)?;
    if let Some(w) = &weights {
        write_words(out, w)?;
    }
    Ok(())
}
