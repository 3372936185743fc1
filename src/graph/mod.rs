//! Graphs: views over caller memory (edge lists and symmetric CSR), their validation,
//! owned graphs loaded from files or generated, and the normalized edge arrays the MSF
//! algorithms run on.

pub mod generate;
pub mod io;

use crate::types::DType;

/// Edge weights borrowed from the caller, one per edge (or per CSR entry).
#[derive(Debug, Clone, Copy)]
pub enum Weights<'a> {
    I32(&'a [i32]),
    U32(&'a [u32]),
    I64(&'a [i64]),
    U64(&'a [u64]),
    F32(&'a [f32]),
    F64(&'a [f64]),
}

impl Weights<'_> {
    pub fn len(&self) -> usize {
        match self {
            Weights::I32(w) => w.len(),
            Weights::U32(w) => w.len(),
            Weights::I64(w) => w.len(),
            Weights::U64(w) => w.len(),
            Weights::F32(w) => w.len(),
            Weights::F64(w) => w.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The weights of the edges in `range` (a rank's share, a partition).
    pub fn slice(&self, range: std::ops::Range<usize>) -> Self {
        match self {
            Weights::I32(w) => Weights::I32(&w[range]),
            Weights::U32(w) => Weights::U32(&w[range]),
            Weights::I64(w) => Weights::I64(&w[range]),
            Weights::U64(w) => Weights::U64(&w[range]),
            Weights::F32(w) => Weights::F32(&w[range]),
            Weights::F64(w) => Weights::F64(&w[range]),
        }
    }

    pub fn dtype(&self) -> DType {
        match self {
            Weights::I32(_) => DType::I32,
            Weights::U32(_) => DType::U32,
            Weights::I64(_) => DType::I64,
            Weights::U64(_) => DType::U64,
            Weights::F32(_) => DType::F32,
            Weights::F64(_) => DType::F64,
        }
    }
}

/// Owned edge weights (what file readers and generators produce).
#[derive(Debug, Clone, PartialEq)]
pub enum WeightVec {
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl WeightVec {
    pub fn as_weights(&self) -> Weights<'_> {
        match self {
            WeightVec::I32(w) => Weights::I32(w),
            WeightVec::U32(w) => Weights::U32(w),
            WeightVec::I64(w) => Weights::I64(w),
            WeightVec::U64(w) => Weights::U64(w),
            WeightVec::F32(w) => Weights::F32(w),
            WeightVec::F64(w) => Weights::F64(w),
        }
    }

    pub fn len(&self) -> usize {
        self.as_weights().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A graph as the library takes it: views over caller memory, never kept after a call.
#[derive(Debug, Clone, Copy)]
pub enum Graph<'a> {
    /// Undirected edge `i` joins `u[i]` and `v[i]` with weight `weights[i]`; its id is `i`.
    /// Self-loops are ignored; parallel edges are allowed.
    EdgeList {
        num_vertices: usize,
        u: &'a [u32],
        v: &'a [u32],
        /// `None`: unweighted (every edge weighs the same).
        weights: Option<Weights<'a>>,
    },
    /// Symmetric CSR: the neighbours of `x` are `targets[offsets[x]..offsets[x + 1]]`.
    /// Each undirected edge appears once in each direction with the same weight; its id
    /// is the CSR position of its `u < v` entry.
    Csr {
        offsets: &'a [u64],
        targets: &'a [u32],
        weights: Option<Weights<'a>>,
    },
}

impl Graph<'_> {
    pub fn num_vertices(&self) -> usize {
        match self {
            Graph::EdgeList { num_vertices, .. } => *num_vertices,
            Graph::Csr { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }
}

/// An owned undirected edge-list graph, as loaded from a file or generated.
/// Edge `i` joins `u[i]` and `v[i]` (0-based) and weighs `weights[i]`.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeListGraph {
    pub num_vertices: usize,
    pub u: Vec<u32>,
    pub v: Vec<u32>,
    /// `None` for formats without weights (Matrix Market `pattern`, weightless lists).
    pub weights: Option<WeightVec>,
}

impl EdgeListGraph {
    pub fn num_edges(&self) -> usize {
        self.u.len()
    }

    /// A view for the library's calls.
    pub fn view(&self) -> Graph<'_> {
        Graph::EdgeList {
            num_vertices: self.num_vertices,
            u: &self.u,
            v: &self.v,
            weights: self.weights.as_ref().map(WeightVec::as_weights),
        }
    }
}
