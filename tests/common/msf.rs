//! The MSF references, shared by tests/conformance.rs and tests/stress.rs: a naive
//! sequential Kruskal under the (weight, edge id) order, the labels' consistency check,
//! the symmetric CSR of an edge list with its own expected forest, and random graphs.

use gpumst::{Forest, TotalWeight};

/// A weight as the reference sees it: comparable (with -0.0 == +0.0), and summable.
pub trait RefWeight: Copy {
    fn cmp_weight(&self, other: &Self) -> std::cmp::Ordering;
    fn total(ws: &[Self]) -> TotalWeight;
}

macro_rules! int_ref {
    ($($t:ty),*) => {$(
        impl RefWeight for $t {
            fn cmp_weight(&self, other: &Self) -> std::cmp::Ordering { self.cmp(other) }
            fn total(ws: &[Self]) -> TotalWeight { TotalWeight::Int(ws.iter().map(|&w| w as i128).sum()) }
        }
    )*};
}
int_ref!(i32, u32, i64, u64);
macro_rules! float_ref {
    ($($t:ty),*) => {$(
        impl RefWeight for $t {
            fn cmp_weight(&self, other: &Self) -> std::cmp::Ordering {
                self.partial_cmp(other).expect("no NaN in valid graphs")
            }
            fn total(ws: &[Self]) -> TotalWeight { TotalWeight::Float(ws.iter().fold(0.0, |s, &w| s + w as f64)) }
        }
    )*};
}
float_ref!(f32, f64);

/// Naive sequential Kruskal: sort edge ids by (weight, id) — for a maximum forest by
/// (weight descending, id) — and union-find with path halving only (without it, long
/// chains made one 2^17-edge graph of tied weights take seconds). Returns the forest's
/// ids ascending and the component count.
pub fn reference<W: RefWeight>(
    n: usize,
    u: &[u32],
    v: &[u32],
    w: Option<&[W]>,
    maximum: bool,
) -> (Vec<u64>, usize) {
    let mut order: Vec<usize> = (0..u.len()).collect();
    if let Some(w) = w {
        order.sort_by(|&a, &b| {
            let by_weight = w[a].cmp_weight(&w[b]);
            let by_weight = if maximum {
                by_weight.reverse()
            } else {
                by_weight
            };
            by_weight.then(a.cmp(&b))
        });
    }
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut forest = Vec::new();
    for e in order {
        let (a, b) = (
            find(&mut parent, u[e] as usize),
            find(&mut parent, v[e] as usize),
        );
        if a != b {
            parent[a] = b;
            forest.push(e as u64);
        }
    }
    forest.sort_unstable();
    let components = n - forest.len();
    (forest, components)
}

/// The exact total weight of the forest `edges` (its edge count when unweighted).
pub fn reference_total<W: RefWeight>(edges: &[u64], w: Option<&[W]>) -> TotalWeight {
    match w {
        Some(w) => W::total(&edges.iter().map(|&e| w[e as usize]).collect::<Vec<_>>()),
        None => TotalWeight::Int(edges.len() as i128),
    }
}

/// Labels: the smallest vertex of each component, consistent with the forest.
pub fn check_labels(name: &str, n: usize, u: &[u32], v: &[u32], forest: &Forest) {
    let labels = forest.labels.as_ref().expect("labels were requested");
    assert_eq!(labels.len(), n);
    for (x, &l) in labels.iter().enumerate() {
        assert!(
            l as usize <= x,
            "{name}: label of {x} is {l}, not the smallest of its component"
        );
        assert_eq!(labels[l as usize], l, "{name}: a label is its own label");
    }
    for &e in &forest.edges {
        assert_eq!(
            labels[u[e as usize] as usize], labels[v[e as usize] as usize],
            "{name}: forest edge {e} spans two labels"
        );
    }
    let distinct = labels
        .iter()
        .enumerate()
        .filter(|&(x, &l)| l as usize == x)
        .count();
    assert_eq!(
        distinct, forest.num_components,
        "{name}: one label per component"
    );
}

/// An edge list as a symmetric CSR (self-loops dropped), with the CSR's own edges: CSR
/// ids are the positions of the u < v entries.
pub struct Csr<W> {
    pub offsets: Vec<u64>,
    pub targets: Vec<u32>,
    pub weights: Option<Vec<W>>,
    /// The CSR positions of the u < v entries, ascending: CSR edge `i` of the lists
    /// below has id `forward[i]`.
    pub forward: Vec<usize>,
    pub fu: Vec<u32>,
    pub fv: Vec<u32>,
    pub fw: Option<Vec<W>>,
}

impl<W: RefWeight> Csr<W> {
    pub fn new(n: usize, u: &[u32], v: &[u32], w: Option<&[W]>) -> Csr<W> {
        let mut entries: Vec<(u32, u32, usize)> = Vec::new();
        for e in 0..u.len() {
            if u[e] != v[e] {
                entries.push((u[e], v[e], e));
                entries.push((v[e], u[e], e));
            }
        }
        // Within a vertex, order entries by edge id so CSR positions keep the id order.
        entries.sort_by_key(|&(a, b, e)| (a, e, b));
        let mut offsets = vec![0u64; n + 1];
        for &(a, _, _) in &entries {
            offsets[a as usize + 1] += 1;
        }
        for x in 0..n {
            offsets[x + 1] += offsets[x];
        }
        let targets: Vec<u32> = entries.iter().map(|e| e.1).collect();
        let weights: Option<Vec<W>> = w.map(|w| entries.iter().map(|e| w[e.2]).collect());
        let forward: Vec<usize> = (0..entries.len())
            .filter(|&p| entries[p].0 < entries[p].1)
            .collect();
        let fu: Vec<u32> = forward.iter().map(|&p| entries[p].0).collect();
        let fv: Vec<u32> = forward.iter().map(|&p| entries[p].1).collect();
        let fw: Option<Vec<W>> = w.map(|w| forward.iter().map(|&p| w[entries[p].2]).collect());
        Csr {
            offsets,
            targets,
            weights,
            forward,
            fu,
            fv,
            fw,
        }
    }

    /// The reference forest over the CSR's own edges, as CSR ids, and its total weight.
    pub fn reference(&self, maximum: bool) -> (Vec<u64>, usize, TotalWeight) {
        let n = self.offsets.len() - 1;
        let (edges, components) = reference(n, &self.fu, &self.fv, self.fw.as_deref(), maximum);
        let total = reference_total(&edges, self.fw.as_deref());
        let ids = edges
            .iter()
            .map(|&i| self.forward[i as usize] as u64)
            .collect();
        (ids, components, total)
    }
}

/// Deterministic xorshift stream.
pub struct Stream(pub u64);
impl Stream {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u32 {
        (self.next() % n) as u32
    }
}

pub fn random_graph(n: usize, m: usize, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let mut s = Stream(seed | 1);
    let u = (0..m).map(|_| s.below(n as u64)).collect();
    let v = (0..m).map(|_| s.below(n as u64)).collect();
    (u, v)
}

/// A random graph with u32 weights below `range` (from seeded streams) and its
/// reference forest (edges, components) and total weight.
pub struct WeightedGraph {
    pub n: usize,
    pub u: Vec<u32>,
    pub v: Vec<u32>,
    pub w: Vec<u32>,
    pub expected: (Vec<u64>, usize),
    pub total: TotalWeight,
}

impl WeightedGraph {
    pub fn random(n: usize, m: usize, seed: u64, range: u64) -> WeightedGraph {
        let (u, v) = random_graph(n, m, seed);
        let mut s = Stream(seed.wrapping_mul(31) | 1);
        let w: Vec<u32> = (0..m).map(|_| s.below(range)).collect();
        let expected = reference(n, &u, &v, Some(&w), false);
        let total = reference_total(&expected.0, Some(&w));
        WeightedGraph {
            n,
            u,
            v,
            w,
            expected,
            total,
        }
    }

    pub fn graph(&self) -> gpumst::Graph<'_> {
        gpumst::Graph::EdgeList {
            num_vertices: self.n,
            u: &self.u,
            v: &self.v,
            weights: Some(gpumst::Weights::U32(&self.w)),
        }
    }
}
