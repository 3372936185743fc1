//! Synthetic graphs: R-MAT (Graph500 parameters), uniformly random, and 2-D grids.
//!
//! Every generator is deterministic for a seed whatever the number of threads: the edges
//! are made in fixed-size chunks on all cores, each chunk from its own random stream
//! (xoshiro256++ seeded through splitmix64 from the seed, the chunk index and a stream
//! number). Topology and weights come from separate streams, so the same seed gives the
//! same edges whatever the [`WeightSpec`].

use rayon::prelude::*;

use super::{EdgeListGraph, WeightVec};
use crate::{Error, Result};

/// How generated edges are weighed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WeightSpec {
    /// Uniform integers in `[low, high]` (both included): `U32` weights when
    /// `0 <= low` and `high < 2^32`, else `I64`.
    UniformInt { low: i64, high: i64 },
    /// Uniform reals in `[low, high)` (`F64`); `low == high` gives that constant.
    UniformFloat { low: f64, high: f64 },
    /// Every edge weighs `c` (`U32`).
    Constant(u32),
    /// No weights (`weights: None`).
    None,
}

impl WeightSpec {
    /// Checks the bounds: `low <= high`, and finite bounds for reals.
    pub fn validate(&self) -> Result<()> {
        match *self {
            WeightSpec::UniformInt { low, high } if low > high => Err(Error::invalid_argument(
                format!("weight range {low}..={high} is empty (low > high)"),
            )),
            WeightSpec::UniformFloat { low, high } if !(low.is_finite() && high.is_finite()) => {
                Err(Error::invalid_argument(format!(
                    "weight range [{low}, {high}) must have finite bounds"
                )))
            }
            WeightSpec::UniformFloat { low, high } if low > high => Err(Error::invalid_argument(
                format!("weight range [{low}, {high}) is empty (low > high)"),
            )),
            _ => Ok(()),
        }
    }
}

/// Edges made by one random stream.
const CHUNK: usize = 1 << 16;

const TOPOLOGY_STREAM: u64 = 1;
const WEIGHT_STREAM: u64 = 2;
const SCRAMBLE_STREAM: u64 = 3;

/// The splitmix64 output function.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// xoshiro256++.
struct Rng {
    s: [u64; 4],
}

impl Rng {
    fn new(seed: u64, stream: u64, chunk: u64) -> Rng {
        let mut x = mix(seed ^ mix(stream.wrapping_add(0x5851_f42d_4c95_7f2d)));
        x = mix(x ^ mix(chunk.wrapping_add(0x2545_f491_4f6c_dd1d)));
        let mut s = [0u64; 4];
        for w in &mut s {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            *w = mix(x);
        }
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    #[inline]
    fn next(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..n` (`n > 0`), without bias (Lemire's method).
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        let mut m = self.next() as u128 * n as u128;
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = self.next() as u128 * n as u128;
            }
        }
        (m >> 64) as u64
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    #[inline]
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Fills `u` and `v` chunk by chunk in parallel, chunk `k` from its own stream.
fn fill_edges(
    m: usize,
    seed: u64,
    edge: impl Fn(&mut Rng) -> (u32, u32) + Sync,
) -> (Vec<u32>, Vec<u32>) {
    let mut u = vec![0u32; m];
    let mut v = vec![0u32; m];
    u.par_chunks_mut(CHUNK)
        .zip(v.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(k, (uc, vc))| {
            let mut rng = Rng::new(seed, TOPOLOGY_STREAM, k as u64);
            for (a, b) in uc.iter_mut().zip(vc.iter_mut()) {
                (*a, *b) = edge(&mut rng);
            }
        });
    (u, v)
}

fn fill<T: Send + Copy + Default>(
    m: usize,
    seed: u64,
    value: impl Fn(&mut Rng) -> T + Sync,
) -> Vec<T> {
    let mut w = vec![T::default(); m];
    w.par_chunks_mut(CHUNK).enumerate().for_each(|(k, c)| {
        let mut rng = Rng::new(seed, WEIGHT_STREAM, k as u64);
        for x in c {
            *x = value(&mut rng);
        }
    });
    w
}

/// `m` weights drawn per `spec`.
///
/// # Panics
/// If `spec` fails [`WeightSpec::validate`].
pub fn random_weights(m: usize, seed: u64, spec: &WeightSpec) -> Option<WeightVec> {
    if let Err(e) = spec.validate() {
        panic!("{}", e.message());
    }
    match *spec {
        WeightSpec::None => None,
        WeightSpec::Constant(c) => Some(WeightVec::U32(vec![c; m])),
        WeightSpec::UniformInt { low, high } if low >= 0 && high <= u32::MAX as i64 => {
            let span = (high - low) as u64 + 1;
            Some(WeightVec::U32(fill(m, seed, |r| {
                (low as u64 + r.below(span)) as u32
            })))
        }
        WeightSpec::UniformInt { low, high } => {
            // The span is at most 2^64; 2^64 means every i64.
            let span = (high as i128 - low as i128 + 1) as u128;
            Some(WeightVec::I64(fill(m, seed, |r| {
                if span > u64::MAX as u128 {
                    r.next() as i64
                } else {
                    low.wrapping_add(r.below(span as u64) as i64)
                }
            })))
        }
        WeightSpec::UniformFloat { low, high } => {
            let width = high - low;
            Some(WeightVec::F64(fill(m, seed, |r| {
                if low == high {
                    low
                } else if width.is_finite() {
                    (low + width * r.unit()).min(high)
                } else {
                    let t = r.unit();
                    low * (1.0 - t) + high * t
                }
            })))
        }
    }
}

/// An R-MAT graph with the Graph500 parameters a = 0.57, b = 0.19, c = 0.19, d = 0.05:
/// `2^scale` vertices and `edge_factor * 2^scale` edges, self-loops and duplicates kept.
/// As in Graph500, vertex ids are then scrambled by a seed-dependent bijection of
/// `0..2^scale`, so that the high-degree vertices are not simply the low ids.
///
/// # Panics
/// If `scale > 32`, the edge count overflows `usize`, or `weights` is invalid.
pub fn rmat(scale: u32, edge_factor: u32, seed: u64, weights: &WeightSpec) -> EdgeListGraph {
    assert!(
        scale <= 32,
        "R-MAT scale {scale} is above 32 (vertex ids are 32-bit)"
    );
    let n = 1usize << scale;
    let m = n
        .checked_mul(edge_factor as usize)
        .expect("R-MAT edge count overflows usize");
    // Quadrant thresholds on a 32-bit uniform draw.
    const fn threshold(p: f64) -> u64 {
        (p * 4_294_967_296.0) as u64
    }
    const T1: u64 = threshold(0.57);
    const T2: u64 = threshold(0.57 + 0.19);
    const T3: u64 = threshold(0.57 + 0.19 + 0.19);
    let mask: u64 = (n as u64).wrapping_sub(1);
    let mut keys = Rng::new(seed, SCRAMBLE_STREAM, 0);
    let (k1, k2, k3) = (keys.next() | 1, keys.next(), keys.next() | 1);
    let half = scale.div_ceil(2).max(1);
    // A bijection of 0..2^scale: odd multiplications and xor-shifts, all mod 2^scale.
    let scramble = move |x: u64| -> u32 {
        let mut y = x.wrapping_mul(k1).wrapping_add(k2) & mask;
        y ^= y >> half;
        y = y.wrapping_mul(k3) & mask;
        y ^= y >> half;
        y as u32
    };
    let (u, v) = fill_edges(m, seed, |rng| {
        let (mut a, mut b) = (0u64, 0u64);
        let mut level = 0;
        while level < scale {
            let r = rng.next();
            for draw in [r & 0xffff_ffff, r >> 32] {
                if level == scale {
                    break;
                }
                let row = (draw >= T2) as u64;
                let col = ((draw >= T1) ^ (draw >= T2) ^ (draw >= T3)) as u64;
                a = a << 1 | row;
                b = b << 1 | col;
                level += 1;
            }
        }
        (scramble(a), scramble(b))
    });
    EdgeListGraph {
        num_vertices: n,
        u,
        v,
        weights: random_weights(m, seed, weights),
    }
}

/// `num_edges` edges with both endpoints uniform over `num_vertices` vertices
/// (self-loops and duplicates kept).
///
/// # Panics
/// If `num_vertices > 2^32`, if there are edges but no vertices, or `weights` is invalid.
pub fn random(
    num_vertices: usize,
    num_edges: usize,
    seed: u64,
    weights: &WeightSpec,
) -> EdgeListGraph {
    assert!(
        num_vertices as u64 <= 1 << 32,
        "{num_vertices} vertices do not fit 32-bit ids"
    );
    assert!(
        num_vertices > 0 || num_edges == 0,
        "{num_edges} edges need at least one vertex"
    );
    let n = num_vertices as u64;
    let (u, v) = fill_edges(num_edges, seed, |rng| {
        (rng.below(n) as u32, rng.below(n) as u32)
    });
    EdgeListGraph {
        num_vertices,
        u,
        v,
        weights: random_weights(num_edges, seed, weights),
    }
}

/// A `rows` x `cols` grid, vertex `r * cols + c` at row `r`, column `c`, joined to its
/// right and lower neighbours. Edges are in row-major order of their first vertex: for
/// each vertex, the edge to the right (if any), then the edge down (if any). The seed
/// only affects the weights.
///
/// # Panics
/// If the grid has more than 2^32 vertices, or `weights` is invalid.
pub fn grid(rows: usize, cols: usize, seed: u64, weights: &WeightSpec) -> EdgeListGraph {
    let n = rows.checked_mul(cols).filter(|&n| n as u64 <= 1 << 32);
    let n =
        n.unwrap_or_else(|| panic!("a {rows} x {cols} grid has too many vertices for 32-bit ids"));
    if n == 0 {
        return EdgeListGraph {
            num_vertices: 0,
            u: Vec::new(),
            v: Vec::new(),
            weights: random_weights(0, seed, weights),
        };
    }
    let m = rows * (cols - 1) + (rows - 1) * cols;
    let per_row = 2 * cols - 1;
    let mut u = vec![0u32; m];
    let mut v = vec![0u32; m];
    if m > 0 {
        u.par_chunks_mut(per_row)
            .zip(v.par_chunks_mut(per_row))
            .enumerate()
            .for_each(|(r, (uc, vc))| {
                let mut k = 0;
                for c in 0..cols {
                    let x = (r * cols + c) as u32;
                    if c + 1 < cols {
                        (uc[k], vc[k]) = (x, x + 1);
                        k += 1;
                    }
                    if r + 1 < rows {
                        (uc[k], vc[k]) = (x, x + cols as u32);
                        k += 1;
                    }
                }
                debug_assert_eq!(k, uc.len());
            });
    }
    EdgeListGraph {
        num_vertices: n,
        u,
        v,
        weights: random_weights(m, seed, weights),
    }
}
