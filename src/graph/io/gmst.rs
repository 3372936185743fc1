//! gpumst's own binary edge list, `.gmst`: the arrays the library takes, stored as they
//! are in memory, so reading one is a copy from the page cache and a parallel check.
//!
//! Layout (all little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `GPUMSTEL` |
//! | 8..12 | format version, `u32`, 1 |
//! | 12..16 | weight type, `u32`: 0 none, 1 `i32`, 2 `u32`, 3 `i64`, 4 `u64`, 5 `f32`, 6 `f64` |
//! | 16..24 | vertex count `n`, `u64` (at most 2^32) |
//! | 24..32 | edge count `m`, `u64` |
//! | 32.. | `u[m]` (`u32`), then `v[m]` (`u32`), each zero-padded to a multiple of 8 bytes, then `weights[m]` |
//!
//! Edge `i` joins `u[i]` and `v[i]`: ids, directions and weights come back exactly as
//! written. A plain file must be exactly as long as its header says.

use std::io;

use super::input::{invalid, read_failure, Progress};
use super::output::Output;
use super::words::{write_words, BinaryInput, Word};
use super::{unwritable, Parsed};
use crate::graph::{EdgeListGraph, WeightVec};
use crate::{alloc, Result};

const MAGIC: &[u8; 8] = b"GPUMSTEL";
const VERSION: u32 = 1;
const HEADER: u64 = 32;
/// What the arrays are called in an out-of-memory message.
const ARRAYS: &str = "the arrays of a .gmst file";

/// The weight type codes of the header, in order from 1 (0 is "no weights").
const WEIGHT_TYPES: [&str; 6] = ["i32", "u32", "i64", "u64", "f32", "f64"];

fn weight_code(w: Option<&WeightVec>) -> u32 {
    match w {
        None => 0,
        Some(WeightVec::I32(_)) => 1,
        Some(WeightVec::U32(_)) => 2,
        Some(WeightVec::I64(_)) => 3,
        Some(WeightVec::U64(_)) => 4,
        Some(WeightVec::F32(_)) => 5,
        Some(WeightVec::F64(_)) => 6,
    }
}

fn weight_size(code: u32) -> u64 {
    match code {
        0 => 0,
        1 | 2 | 5 => 4,
        _ => 8,
    }
}

/// An array of `m` u32s with its padding to 8 bytes.
fn padded_ids(m: u64) -> u64 {
    (4 * m).next_multiple_of(8)
}

pub(super) fn read(
    name: &str,
    input: &mut BinaryInput<'_>,
    progress: &mut Progress<'_>,
    budget: u64,
) -> Result<Parsed> {
    let failed = |e: io::Error| invalid(name, read_failure(&e));
    let mut head = [0u8; HEADER as usize];
    let got = input.fill(&mut head).map_err(failed)?;
    if got < 8 || &head[..8] != MAGIC {
        return Err(invalid(
            name,
            "not a .gmst file: it does not start with the 8 bytes GPUMSTEL",
        ));
    }
    if got < head.len() {
        return Err(invalid(
            name,
            format!("the file has {got} bytes, too few for the 32-byte .gmst header"),
        ));
    }
    let word = |at: usize| u32::from_le_bytes(head[at..at + 4].try_into().unwrap());
    let long = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().unwrap());
    let (version, code, n, m) = (word(8), word(12), long(16), long(24));
    if version != VERSION {
        return Err(invalid(
            name,
            format!("format version {version}; this library reads version {VERSION}"),
        ));
    }
    if code as usize > WEIGHT_TYPES.len() {
        return Err(invalid(
            name,
            format!("weight type {code} is not one of 0 (none) to 6 (f64)"),
        ));
    }
    if n > 1 << 32 {
        return Err(invalid(
            name,
            format!("the header gives {n} vertices; vertex ids are u32, so at most 2^32"),
        ));
    }
    // Counts beyond what any file could hold would overflow the size below.
    if m > u64::MAX / 32 {
        return Err(invalid(name, format!("the header gives {m} edges")));
    }
    let size = HEADER + 2 * padded_ids(m) + m * weight_size(code);
    if let Some(actual) = input.plain_size().filter(|&actual| actual != size) {
        let weights = match code {
            0 => "no weights".to_string(),
            c => format!("{} weights", WEIGHT_TYPES[c as usize - 1]),
        };
        return Err(invalid(
            name,
            format!(
                "the header gives {n} vertices and {m} edges with {weights}, which take \
                 {size} bytes, but the file has {actual}"
            ),
        ));
    }
    let u = read_ids(name, input, m, budget, progress, "u")?;
    let v = read_ids(name, input, m, budget, progress, "v")?;
    let weights = match code {
        0 => None,
        1 => Some(WeightVec::I32(weights(name, input, m, budget, progress)?)),
        2 => Some(WeightVec::U32(weights(name, input, m, budget, progress)?)),
        3 => Some(WeightVec::I64(weights(name, input, m, budget, progress)?)),
        4 => Some(WeightVec::U64(weights(name, input, m, budget, progress)?)),
        5 => Some(WeightVec::F32(weights(name, input, m, budget, progress)?)),
        _ => Some(WeightVec::F64(weights(name, input, m, budget, progress)?)),
    };
    let mut extra = [0u8; 1];
    if input.fill(&mut extra).map_err(failed)? > 0 {
        return Err(invalid(name, "the file goes on after its last array"));
    }
    check_edges(name, n, &u, &v, weights.as_ref())?;
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

/// One array of `m` vertex ids and its padding.
fn read_ids(
    name: &str,
    input: &mut BinaryInput<'_>,
    m: u64,
    budget: u64,
    progress: &mut Progress<'_>,
    what: &str,
) -> Result<Vec<u32>> {
    let failed = |e: io::Error| invalid(name, read_failure(&e));
    let (ids, _) = input.read_words::<u32>(m, budget, progress, &failed, ARRAYS)?;
    if (ids.len() as u64) < m {
        return Err(invalid(
            name,
            format!(
                "the file ends after {} of the {m} values of {what}",
                ids.len()
            ),
        ));
    }
    let mut pad = [0u8; 8];
    let pad = &mut pad[..(padded_ids(m) - 4 * m) as usize];
    if input.fill(pad).map_err(failed)? < pad.len() {
        return Err(invalid(
            name,
            format!("the file ends in the padding after {what}"),
        ));
    }
    Ok(ids)
}

fn weights<T: Word>(
    name: &str,
    input: &mut BinaryInput<'_>,
    m: u64,
    budget: u64,
    progress: &mut Progress<'_>,
) -> Result<Vec<T>> {
    let failed = |e: io::Error| invalid(name, read_failure(&e));
    let (w, _) = input.read_words::<T>(m, budget, progress, &failed, ARRAYS)?;
    if (w.len() as u64) < m {
        return Err(invalid(
            name,
            format!("the file ends after {} of the {m} weights", w.len()),
        ));
    }
    Ok(w)
}

/// Every id below `n` and no NaN weight, checked on all cores; the first bad edge is
/// named, as a sequential check would.
fn check_edges(name: &str, n: u64, u: &[u32], v: &[u32], w: Option<&WeightVec>) -> Result<()> {
    let outside = |x: u32| x as u64 >= n;
    if let Some(i) = alloc::par_position_first(u.len(), |r| {
        let (us, vs) = (&u[r.clone()], &v[r]);
        us.iter()
            .zip(vs)
            .position(|(&a, &b)| outside(a) | outside(b))
    }) {
        let x = if outside(u[i]) { u[i] } else { v[i] };
        return Err(invalid(
            name,
            format!(
                "edge {i} ({} - {}): vertex {x} is out of range 0..{n}",
                u[i], v[i]
            ),
        ));
    }
    let nan = match w {
        Some(WeightVec::F32(w)) => {
            alloc::par_position_first(w.len(), |r| w[r].iter().position(|x| x.is_nan()))
        }
        Some(WeightVec::F64(w)) => {
            alloc::par_position_first(w.len(), |r| w[r].iter().position(|x| x.is_nan()))
        }
        _ => None,
    };
    if let Some(i) = nan {
        return Err(invalid(name, format!("edge {i} has a NaN weight")));
    }
    Ok(())
}

pub(super) fn check_writable(graph: &EdgeListGraph) -> Result<()> {
    if graph.num_vertices as u64 > 1 << 32 {
        return Err(unwritable(format!(
            ".gmst files hold u32 vertex ids: {} vertices do not fit",
            graph.num_vertices
        )));
    }
    Ok(())
}

pub(super) fn write(out: &mut Output, graph: &EdgeListGraph) -> Result<()> {
    check_writable(graph)?;
    let m = graph.num_edges() as u64;
    let mut head = Vec::with_capacity(HEADER as usize);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&weight_code(graph.weights.as_ref()).to_le_bytes());
    head.extend_from_slice(&(graph.num_vertices as u64).to_le_bytes());
    head.extend_from_slice(&m.to_le_bytes());
    out.write_all(&head)?;
    let pad = vec![0u8; (padded_ids(m) - 4 * m) as usize];
    for ids in [&graph.u, &graph.v] {
        write_words(out, ids)?;
        out.write_all(&pad)?;
    }
    match &graph.weights {
        None => Ok(()),
        Some(WeightVec::I32(w)) => write_words(out, w),
        Some(WeightVec::U32(w)) => write_words(out, w),
        Some(WeightVec::I64(w)) => write_words(out, w),
        Some(WeightVec::U64(w)) => write_words(out, w),
        Some(WeightVec::F32(w)) => write_words(out, w),
        Some(WeightVec::F64(w)) => write_words(out, w),
    }
}
