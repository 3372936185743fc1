//! The bodies of the `cargo fuzz` targets in `fuzz/`, one plain function per target
//! taking the fuzzer's bytes. The fuzz targets include this file with `#[path]`, and
//! `tests/fuzz_corpus.rs` runs the same functions over the checked-in corpus
//! (`fuzz/corpus/<target>/` and `fuzz/regressions/<target>/`) on stable Rust, so every
//! input the fuzzers kept is an ordinary test in CI.
//!
//! A body returns normally when the library behaved as documented and panics when it
//! did not (a wrong forest, an unexpected status, a broken invariant of a result). The
//! library's own panics abort under the fuzzer (libfuzzer-sys's panic hook) and come
//! back as `GPUMST_INTERNAL` through the C API, which the bodies treat as failures.
//!
//! Every MSF here runs on the CPU tier with `GPUMST_FUZZ_THREADS` worker threads
//! (default 1, so that many fuzzing processes share the cores).
#![allow(dead_code)]

use std::cmp::Ordering;
use std::ffi::{c_char, c_void, CStr};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::OnceLock;

use gpumst::ffi;
use gpumst::graph::io::{self, Format, LoadedGraph};
use gpumst::{
    Algorithm, Context, Forest, Graph, MsfOptions, Options, Status, Tier, TotalWeight, WeightVec,
    Weights,
};

// ---- input decoding ------------------------------------------------------------------

/// A cursor over the fuzzer's bytes; reads past the end give zeros.
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0u8; N];
        for x in &mut a {
            *x = self.u8();
        }
        a
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.array())
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }

    /// The bytes not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = self.data.get(self.pos..).unwrap_or(&[]);
        self.pos = self.data.len();
        rest
    }

    /// An enum value: mostly -1..=6 (the valid codes of every gpumst enum and their
    /// neighbours), sometimes any i32.
    pub fn enum_value(&mut self) -> i32 {
        match self.u8() {
            t @ 0..=0xEF => (t % 8) as i32 - 1,
            _ => self.u32() as i32,
        }
    }
}

/// The CPU context every MSF body uses.
pub fn cpu_context() -> &'static Context {
    static CONTEXT: OnceLock<Context> = OnceLock::new();
    CONTEXT.get_or_init(|| {
        Context::new(&Options {
            tier: Tier::Cpu,
            device_index: 0,
            cpu_threads: fuzz_threads(),
            cuda_context: 0,
            device_memory_limit: 0,
            devices: gpumst::Devices::One,
        })
        .expect("the CPU tier always opens")
    })
}

fn fuzz_threads() -> usize {
    std::env::var("GPUMST_FUZZ_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// A fresh file name in the temporary directory (one per call, so that threads and
/// processes never share one).
fn temp_path(suffix: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let k = NEXT.fetch_add(1, AtomicOrdering::Relaxed);
    std::env::temp_dir().join(format!("gpumst-fuzz-{}-{k}{suffix}", std::process::id()))
}

/// Removes the file when dropped (also when a check panics).
struct TempFile(PathBuf);

impl TempFile {
    fn create(suffix: &str, contents: &[u8]) -> TempFile {
        let path = temp_path(suffix);
        std::fs::write(&path, contents).expect("cannot write a temporary file");
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// xz with a 4 KiB dictionary: cheap to set up for every input.
fn xz(data: &[u8]) -> Vec<u8> {
    let mut options = xz2::stream::LzmaOptions::new_preset(0).unwrap();
    options.dict_size(4096);
    let mut filters = xz2::stream::Filters::new();
    filters.lzma2(&options);
    let stream =
        xz2::stream::Stream::new_stream_encoder(&filters, xz2::stream::Check::Crc32).unwrap();
    let mut e = xz2::write::XzEncoder::new_stream(Vec::new(), stream);
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Whether the known, reported library issue `name` is to be tolerated: it is listed in
/// `GPUMST_FUZZ_KNOWN` (a comma list, which scripts/fuzz.sh sets so that long runs look
/// for new bugs). Unset (as in the corpus test), every documented rule is enforced;
/// the inputs that show the known issues wait in fuzz/known-crashes/.
fn tolerated(name: &str) -> bool {
    static KNOWN: OnceLock<Vec<String>> = OnceLock::new();
    KNOWN
        .get_or_init(|| {
            std::env::var("GPUMST_FUZZ_KNOWN")
                .unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_string())
                .collect()
        })
        .iter()
        .any(|k| k == name)
}

// ---- read_graph ------------------------------------------------------------------------

/// The graph-file readers. Byte 0 picks the format argument (bits 0-2: auto, dimacs,
/// mtx, edgelist, egr), the file name's extension (bits 3-4: .gr .mtx .txt .egr) and
/// the compression (bits 5-7: plain; gzip / xz encoded with a .gz / .xz name; gzip / xz
/// encoded under a plain name; the raw bytes under a .gz / .xz name; xz encoded and
/// cut in half). The other bytes are the file's (uncompressed) contents.
///
/// The reader must return a graph or an `InvalidGraph` error naming the file, never
/// panic or hang. A graph must satisfy the documented invariants, and must read back
/// unchanged after being written as a Matrix Market file.
pub fn read_graph(data: &[u8]) {
    let Some((&head, payload)) = data.split_first() else {
        return;
    };
    let format = Format::ALL[(head & 7) as usize % Format::ALL.len()];
    let ext = ["gr", "mtx", "txt", "egr"][((head >> 3) & 3) as usize];
    let (suffix, contents) = match head >> 5 {
        0 => ("", payload.to_vec()),
        1 => (".gz", gzip(payload)),
        2 => (".xz", xz(payload)),
        3 => ("", gzip(payload)),
        4 => ("", xz(payload)),
        5 => (".gz", payload.to_vec()),
        6 => (".xz", payload.to_vec()),
        _ => {
            let mut c = xz(payload);
            c.truncate(c.len() / 2);
            (".xz", c)
        }
    };
    let file = TempFile::create(&format!(".{ext}{suffix}"), &contents);
    let result = io::read_graph(&file.0, format, None);
    let name = file.0.display().to_string();
    match result {
        Err(e) => {
            assert_eq!(
                e.status(),
                Status::InvalidGraph,
                "malformed data must be an invalid-graph error: {e}"
            );
            assert!(
                e.message().starts_with(&format!("{name}:")),
                "the message must start with the file name: {e}"
            );
        }
        Ok(loaded) => {
            check_loaded(&loaded, format.resolve(&file.0));
            round_trip(&loaded);
        }
    }
}

/// The documented invariants of a graph read from a file.
fn check_loaded(loaded: &LoadedGraph, format: Format) {
    let g = &loaded.graph;
    let m = g.num_edges();
    assert_eq!(loaded.format, format, "the format read");
    assert_eq!(loaded.vertex_base, format.vertex_base(), "vertex base");
    assert_eq!(g.v.len(), m, "v has one entry per edge");
    if let Some(w) = &g.weights {
        assert_eq!(w.len(), m, "one weight per edge");
    }
    let n = g.num_vertices as u64;
    assert!(n <= 1 << 32, "{n} vertices: ids are 32-bit");
    for (i, (&a, &b)) in g.u.iter().zip(&g.v).enumerate() {
        assert!(
            (a as u64) < n && (b as u64) < n,
            "edge {i} ({a}, {b}) is outside the {n} vertices"
        );
    }
    let arcs = loaded.arcs_in_file;
    match format {
        Format::EdgeList => assert_eq!(arcs, m as u64, "an edge list has one line per edge"),
        _ => assert!(
            m as u64 <= arcs && arcs <= 2 * m as u64,
            "{arcs} arcs in the file for {m} edges"
        ),
    }
    if format == Format::Gmst {
        // Any weight type, exactly as written; still no NaN.
        let nan = match &g.weights {
            Some(WeightVec::F32(w)) => w.iter().any(|x| x.is_nan()),
            Some(WeightVec::F64(w)) => w.iter().any(|x| x.is_nan()),
            _ => false,
        };
        assert!(!nan, "NaN weights are rejected");
        return;
    }
    match &g.weights {
        None => assert!(
            matches!(
                format,
                Format::MatrixMarket | Format::EdgeList | Format::Egr
            ),
            "{format} files always have weights"
        ),
        Some(WeightVec::I32(_)) => assert_eq!(format, Format::Egr, "only .egr weights are i32"),
        Some(WeightVec::F32(_)) => panic!("no reader gives f32 weights"),
        Some(WeightVec::F64(w)) => {
            assert!(
                matches!(format, Format::MatrixMarket | Format::EdgeList),
                "{format} files hold integer weights"
            );
            assert!(w.iter().all(|x| !x.is_nan()), "NaN weights are rejected");
        }
        Some(WeightVec::U32(_)) => assert_ne!(format, Format::Egr, ".egr weights are i32"),
        Some(WeightVec::I64(w)) => {
            assert_ne!(format, Format::Egr, ".egr weights are i32");
            assert!(
                w.iter().any(|&x| !(0..1 << 32).contains(&x)),
                "i64 weights that all fit u32 (the narrowest type is documented)"
            );
        }
        Some(WeightVec::U64(w)) => {
            assert_ne!(format, Format::Egr, ".egr weights are i32");
            assert!(
                w.iter().any(|&x| x > i64::MAX as u64),
                "u64 weights that all fit i64 (the narrowest type is documented)"
            );
        }
    }
}

/// Weights for comparing across types: integers exactly, floats by value.
#[derive(Debug, PartialEq)]
enum Plain {
    None,
    Int(Vec<i128>),
    Float(Vec<f64>),
}

fn plain(w: &Option<WeightVec>) -> Plain {
    match w {
        None => Plain::None,
        Some(WeightVec::I32(w)) => Plain::Int(w.iter().map(|&x| x as i128).collect()),
        Some(WeightVec::U32(w)) => Plain::Int(w.iter().map(|&x| x as i128).collect()),
        Some(WeightVec::I64(w)) => Plain::Int(w.iter().map(|&x| x as i128).collect()),
        Some(WeightVec::U64(w)) => Plain::Int(w.iter().map(|&x| x as i128).collect()),
        Some(WeightVec::F32(w)) => Plain::Float(w.iter().map(|&x| x as f64).collect()),
        Some(WeightVec::F64(w)) => Plain::Float(w.clone()),
    }
}

/// "Writing gives a file that reads back as the same graph": through Matrix Market.
fn round_trip(loaded: &LoadedGraph) {
    let g = &loaded.graph;
    let path = TempFile(temp_path(".mtx"));
    io::write_graph(&path.0, Format::MatrixMarket, g)
        .unwrap_or_else(|e| panic!("writing a graph that was read: {e}"));
    let back = io::read_graph(&path.0, Format::MatrixMarket, None)
        .unwrap_or_else(|e| panic!("reading back a written graph: {e}"));
    let b = &back.graph;
    assert_eq!(b.num_vertices, g.num_vertices, "round trip: vertices");
    assert_eq!(b.u, g.u, "round trip: u");
    assert_eq!(b.v, g.v, "round trip: v");
    assert_eq!(plain(&b.weights), plain(&g.weights), "round trip: weights");
    if loaded.format == Format::Gmst {
        let path = TempFile(temp_path(".gmst"));
        io::write_graph(&path.0, Format::Gmst, g)
            .unwrap_or_else(|e| panic!("writing a .gmst graph that was read: {e}"));
        let back = io::read_graph(&path.0, Format::Gmst, None)
            .unwrap_or_else(|e| panic!("reading back a written .gmst graph: {e}"));
        assert_eq!(&back.graph, g, "round trip through .gmst");
    }
}

// ---- MSF reference ---------------------------------------------------------------------

/// A weight type as the fuzz bodies decode it and the reference compares it.
pub trait FuzzWeight: Copy + std::fmt::Debug + 'static {
    /// Its gpumst_dtype code.
    const DTYPE: i32;
    const FLOAT: bool;
    /// Mostly small values (many ties), sometimes any bit pattern or an extreme.
    fn decode(b: &mut Bytes) -> Self;
    fn is_nan(self) -> bool;
    /// The weight order (never called on NaN).
    fn order(self, other: Self) -> Ordering;
    /// Equality as CSR symmetry sees it (-0.0 == +0.0).
    fn key(self) -> u128;
    fn total(forest: impl Iterator<Item = Self>) -> TotalWeight;
    fn wrap(w: &[Self]) -> Weights<'_>;
}

macro_rules! int_weight {
    ($t:ty, $code:expr, $variant:ident) => {
        impl FuzzWeight for $t {
            const DTYPE: i32 = $code;
            const FLOAT: bool = false;
            fn decode(b: &mut Bytes) -> Self {
                match b.u8() {
                    t @ 0..=0xBF => ((t % 16) as i64 - if <$t>::MIN == 0 { 0 } else { 8 }) as $t,
                    0xC0..=0xEF => <$t>::from_le_bytes(b.array()),
                    t => [
                        <$t>::MIN,
                        <$t>::MAX,
                        0,
                        <$t>::MAX - 1,
                        <$t>::MIN + 1,
                        <$t>::MAX / 2,
                        <$t>::MAX / 2 + 1,
                        (1 as $t) << (<$t>::BITS - 2),
                    ][(t % 8) as usize],
                }
            }
            fn is_nan(self) -> bool {
                false
            }
            fn order(self, other: Self) -> Ordering {
                self.cmp(&other)
            }
            fn key(self) -> u128 {
                self as i128 as u128
            }
            fn total(forest: impl Iterator<Item = Self>) -> TotalWeight {
                TotalWeight::Int(forest.map(|w| w as i128).sum())
            }
            fn wrap(w: &[Self]) -> Weights<'_> {
                Weights::$variant(w)
            }
        }
    };
}
int_weight!(i32, 0, I32);
int_weight!(u32, 1, U32);
int_weight!(i64, 2, I64);
int_weight!(u64, 3, U64);

macro_rules! float_weight {
    ($t:ty, $code:expr, $variant:ident) => {
        impl FuzzWeight for $t {
            const DTYPE: i32 = $code;
            const FLOAT: bool = true;
            fn decode(b: &mut Bytes) -> Self {
                match b.u8() {
                    t @ 0..=0xBF => ((t % 16) as $t - 8.0) * 0.5,
                    0xC0..=0xEF => <$t>::from_le_bytes(b.array()),
                    t => [
                        <$t>::NAN,
                        <$t>::INFINITY,
                        <$t>::NEG_INFINITY,
                        -0.0,
                        0.0,
                        <$t>::MIN_POSITIVE,
                        <$t>::from_bits(1),
                        <$t>::MAX,
                    ][(t % 8) as usize],
                }
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn order(self, other: Self) -> Ordering {
                self.partial_cmp(&other).expect("no NaN in a valid graph")
            }
            fn key(self) -> u128 {
                (self + 0.0).to_bits() as u128
            }
            fn total(forest: impl Iterator<Item = Self>) -> TotalWeight {
                TotalWeight::Float(forest.fold(0.0, |s, w| s + w as f64))
            }
            fn wrap(w: &[Self]) -> Weights<'_> {
                Weights::$variant(w)
            }
        }
    };
}
float_weight!(f32, 4, F32);
float_weight!(f64, 5, F64);

/// Runs `$body` with `$t` bound to the weight type of gpumst_dtype `$code` (0..=5).
macro_rules! with_dtype {
    ($code:expr, $t:ident => $body:expr) => {
        match $code {
            0 => {
                type $t = i32;
                $body
            }
            1 => {
                type $t = u32;
                $body
            }
            2 => {
                type $t = i64;
                $body
            }
            3 => {
                type $t = u64;
                $body
            }
            4 => {
                type $t = f32;
                $body
            }
            _ => {
                type $t = f64;
                $body
            }
        }
    };
}

/// A graph's structure as the reference sees it.
#[derive(Debug, Clone, Copy)]
pub enum Shape<'a> {
    EdgeList {
        n: usize,
        u: &'a [u32],
        v: &'a [u32],
    },
    Csr {
        offsets: &'a [u64],
        targets: &'a [u32],
    },
}

/// What a correct MSF call returns.
#[derive(Debug)]
pub struct Expected {
    pub edges: Vec<u64>,
    pub num_vertices: usize,
    pub components: usize,
    pub total: TotalWeight,
    pub labels: Vec<u32>,
}

/// The documented validation (in the library's order, so that the status of the first
/// violation is known), then an independent Kruskal: edge ids sorted by (weight, id),
/// or (weight descending, id) for a maximum forest, or by id alone when unweighted.
pub fn expect<T: FuzzWeight>(
    shape: Shape<'_>,
    weights: Option<&[T]>,
    unweighted: bool,
    maximum: bool,
) -> Result<Expected, Status> {
    let w = weights.filter(|_| !unweighted);
    // Edges as (u, v, id, weight position).
    let mut edges: Vec<(u32, u32, u64)> = Vec::new();
    let n = match shape {
        Shape::EdgeList { n, u, v } => {
            if n as u64 > 1 << 32 || u.len() != v.len() {
                return Err(Status::InvalidArgument);
            }
            if w.is_some_and(|w| w.len() != u.len()) {
                return Err(Status::InvalidArgument);
            }
            if u.iter().chain(v).any(|&x| x as usize >= n) {
                return Err(Status::InvalidGraph);
            }
            if w.is_some_and(|w| w.iter().any(|x| x.is_nan())) {
                return Err(Status::InvalidGraph);
            }
            for i in 0..u.len() {
                edges.push((u[i], v[i], i as u64));
            }
            n
        }
        Shape::Csr { offsets, targets } => {
            let Some(n) = offsets.len().checked_sub(1) else {
                return Err(Status::InvalidArgument);
            };
            if n as u64 > 1 << 32 {
                return Err(Status::InvalidArgument);
            }
            if offsets[0] != 0
                || offsets.windows(2).any(|p| p[1] < p[0])
                || offsets[n] != targets.len() as u64
            {
                return Err(Status::InvalidGraph);
            }
            if w.is_some_and(|w| w.len() != targets.len()) {
                return Err(Status::InvalidArgument);
            }
            if targets.iter().any(|&x| x as usize >= n) {
                return Err(Status::InvalidGraph);
            }
            let key = |p: usize| w.map_or(0, |w| w[p].key());
            let (mut forward, mut backward) = (Vec::new(), Vec::new());
            for x in 0..n {
                let (start, end) = (offsets[x] as usize, offsets[x + 1] as usize);
                for (p, &b) in targets.iter().enumerate().take(end).skip(start) {
                    let a = x as u32;
                    match a.cmp(&b) {
                        Ordering::Less => {
                            forward.push((a, b, key(p)));
                            edges.push((a, b, p as u64));
                        }
                        Ordering::Greater => backward.push((b, a, key(p))),
                        Ordering::Equal => {}
                    }
                }
            }
            forward.sort_unstable();
            backward.sort_unstable();
            if forward != backward {
                return Err(Status::InvalidGraph);
            }
            // "No NaN weight": every entry, self-loops included (known issue
            // csr-nan-self-loop: the library checks only the u < v entries, and the
            // reverse ones through symmetry, so a NaN on a self-loop entry passes).
            let self_loop = |p: usize| {
                let x = offsets.partition_point(|&o| o <= p as u64) - 1;
                targets[p] as usize == x
            };
            if w.is_some_and(|w| {
                (0..w.len())
                    .any(|p| w[p].is_nan() && !(tolerated("csr-nan-self-loop") && self_loop(p)))
            }) {
                return Err(Status::InvalidGraph);
            }
            n
        }
    };
    let mut order: Vec<usize> = (0..edges.len()).collect();
    if let Some(w) = w {
        order.sort_by(|&a, &b| {
            let by_weight = w[edges[a].2 as usize].order(w[edges[b].2 as usize]);
            let by_weight = if maximum {
                by_weight.reverse()
            } else {
                by_weight
            };
            by_weight.then(edges[a].2.cmp(&edges[b].2))
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
        let (a, b, id) = edges[e];
        let (ra, rb) = (find(&mut parent, a as usize), find(&mut parent, b as usize));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
            forest.push(id);
        }
    }
    forest.sort_unstable();
    // The smallest vertex of each component: roots are the smallest of their set
    // (unions keep the smaller root), so the label of x is its root.
    let labels: Vec<u32> = (0..n).map(|x| find(&mut parent, x) as u32).collect();
    let total = match w {
        None => TotalWeight::Int(forest.len() as i128),
        Some(w) => T::total(forest.iter().map(|&id| w[id as usize])),
    };
    Ok(Expected {
        components: n - forest.len(),
        num_vertices: n,
        edges: forest,
        total,
        labels,
    })
}

fn same_total(a: TotalWeight, b: TotalWeight) -> bool {
    match (a, b) {
        (TotalWeight::Int(x), TotalWeight::Int(y)) => x == y,
        (TotalWeight::Float(x), TotalWeight::Float(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        _ => false,
    }
}

/// Runs every algorithm on the CPU tier and compares with `expected`.
fn check_all_algorithms(
    graph: &Graph<'_>,
    expected: &Result<Expected, Status>,
    flags: u8,
    what: &dyn Fn() -> String,
) {
    let ctx = cpu_context();
    for algorithm in Algorithm::ALL {
        let options = MsfOptions {
            algorithm,
            labels: flags & 1 != 0,
            maximum: flags & 2 != 0,
            unweighted: flags & 4 != 0,
        };
        let result = ctx.msf(graph, &options);
        match (expected, result) {
            (Err(status), Err(e)) => assert_eq!(
                e.status(),
                *status,
                "{algorithm}: {e}, expected status {status:?}; {}",
                what()
            ),
            (Err(status), Ok(f)) => panic!(
                "{algorithm}: accepted an invalid graph (expected {status:?}), gave {:?}; {}",
                f.edges,
                what()
            ),
            (Ok(_), Err(e)) => panic!("{algorithm}: rejected a valid graph: {e}; {}", what()),
            (Ok(x), Ok(f)) => compare_forest(&f, x, options.labels, &|| {
                format!("{algorithm}: {}", what())
            }),
        }
    }
}

fn compare_forest(f: &Forest, x: &Expected, labels: bool, what: &dyn Fn() -> String) {
    assert_eq!(
        f.edges,
        x.edges,
        "forest edges differ from Kruskal; {}",
        what()
    );
    assert_eq!(f.num_vertices, x.num_vertices, "vertices; {}", what());
    assert_eq!(f.num_components, x.components, "components; {}", what());
    assert!(
        same_total(f.total_weight, x.total),
        "total weight {:?}, expected {:?}; {}",
        f.total_weight,
        x.total,
        what()
    );
    assert_eq!(f.tier, Tier::Cpu, "tier; {}", what());
    if labels {
        assert_eq!(f.labels.as_ref(), Some(&x.labels), "labels; {}", what());
    } else {
        assert!(f.labels.is_none(), "labels not asked for; {}", what());
    }
}

/// A vertex id: mostly below `n`, sometimes `n`, `u32::MAX` or a byte past `n`.
fn vertex(b: &mut Bytes, n: usize) -> u32 {
    let clip = |x: u64| x.min(u32::MAX as u64) as u32;
    match b.u8() {
        t @ 0..=0xFB => (t as usize % n.max(1)) as u32,
        0xFC => clip(n as u64),
        0xFD => u32::MAX,
        0xFE => clip(n as u64 + b.u8() as u64),
        _ => b.u8() as u32,
    }
}

// ---- msf_edge_list ----------------------------------------------------------------------

/// Edge-list validation and MSF. Byte 0: bit 0 labels, bit 1 maximum, bit 2 the
/// unweighted option, bit 3 no weights at all, bits 4-6 the weight type (mod 6), bit 7
/// a length fault (byte 2 says which). Byte 1: the vertex count mod 64 (0xFF: 2^32 + 1).
/// Then edges, each `u`, `v`, weight (at most 256).
pub fn msf_edge_list(data: &[u8]) {
    let mut b = Bytes::new(data);
    let flags = b.u8();
    let n = match b.u8() {
        0xFF => (1usize << 32) + 1,
        x => (x % 64) as usize,
    };
    let fault = if flags & 0x80 != 0 { b.u8() % 3 + 1 } else { 0 };
    with_dtype!(((flags >> 4) & 7) % 6, T => edge_list_typed::<T>(&mut b, n, flags, fault))
}

fn edge_list_typed<T: FuzzWeight>(b: &mut Bytes, n: usize, flags: u8, fault: u8) {
    let (mut u, mut v, mut w) = (Vec::new(), Vec::new(), Vec::<T>::new());
    while !b.is_empty() && u.len() < 256 {
        u.push(vertex(b, n));
        v.push(vertex(b, n));
        w.push(T::decode(b));
    }
    match fault {
        1 => u.push(0),
        2 if v.pop().is_none() => v.push(0),
        3 if w.pop().is_none() => w.push(T::decode(b)),
        _ => {}
    }
    let weights = (flags & 8 == 0).then_some(&w[..]);
    let expected = expect(
        Shape::EdgeList { n, u: &u, v: &v },
        weights,
        flags & 4 != 0,
        flags & 2 != 0,
    );
    let graph = Graph::EdgeList {
        num_vertices: n,
        u: &u,
        v: &v,
        weights: weights.map(T::wrap),
    };
    let what = || format!("edge list n={n} u={u:?} v={v:?} w={weights:?} flags={flags:#x}");
    check_all_algorithms(&graph, &expected, flags, &what);
}

// ---- msf_csr -------------------------------------------------------------------------------

/// CSR validation and MSF. Byte 0 as for [`msf_edge_list`] (bit 7: one weight too many
/// or too few). Byte 1: bit 0 raw (arbitrary degrees and targets) or symmetric (built
/// from an edge list, self-loops once or twice, entries of a vertex in a fuzzed order);
/// bits 1-3 the number of mutations (a target, a weight, an offset, a dropped target,
/// offsets[0], two weights swapped); 0xFF: no offsets at all. Byte 2: the vertex count
/// mod 48.
pub fn msf_csr(data: &[u8]) {
    let mut b = Bytes::new(data);
    let flags = b.u8();
    let mode = b.u8();
    let n = (b.u8() % 48) as usize;
    with_dtype!(((flags >> 4) & 7) % 6, T => csr_typed::<T>(&mut b, n, flags, mode))
}

fn csr_typed<T: FuzzWeight>(b: &mut Bytes, n: usize, flags: u8, mode: u8) {
    let mut offsets = vec![0u64; n + 1];
    let mut targets = Vec::new();
    let mut w = Vec::<T>::new();
    if mode & 1 != 0 {
        for x in 0..n {
            offsets[x + 1] = offsets[x] + (b.u8() % 6) as u64;
        }
        for _ in 0..offsets[n] {
            targets.push(vertex(b, n));
            w.push(T::decode(b));
        }
    } else if n > 0 {
        // (source, order key, target, weight)
        let mut entries = Vec::new();
        let count = b.u8() % 64;
        for _ in 0..count {
            let (x, y, weight) = (b.u8() as usize % n, b.u8() as usize % n, T::decode(b));
            let (kx, ky) = (b.u8(), b.u8());
            entries.push((x as u32, kx, y as u32, weight));
            if x != y || ky & 1 != 0 {
                entries.push((y as u32, ky, x as u32, weight));
            }
        }
        entries.sort_by_key(|e| (e.0, e.1));
        for e in &entries {
            offsets[e.0 as usize + 1] += 1;
            targets.push(e.2);
            w.push(e.3);
        }
        for x in 0..n {
            offsets[x + 1] += offsets[x];
        }
    }
    for _ in 0..(mode >> 1) & 7 {
        let k = b.u8();
        let at = b.u8() as usize;
        match k % 6 {
            0 if !targets.is_empty() => {
                let p = at % targets.len();
                targets[p] = vertex(b, n);
            }
            1 if !w.is_empty() => {
                let p = at % w.len();
                w[p] = T::decode(b);
            }
            2 => {
                let p = at % offsets.len();
                offsets[p] = offsets[p].wrapping_add(b.u8() as u64).wrapping_sub(2);
            }
            3 => {
                targets.pop();
                w.pop();
            }
            4 => offsets[0] = 1,
            5 if !w.is_empty() => {
                let (p, q) = (at % w.len(), b.u8() as usize % w.len());
                w.swap(p, q);
            }
            _ => {}
        }
    }
    if mode == 0xFF {
        offsets.clear();
    }
    if flags & 0x80 != 0 {
        if b.u8() & 1 == 0 || w.is_empty() {
            w.push(T::decode(b));
        } else {
            w.pop();
        }
    }
    let weights = (flags & 8 == 0).then_some(&w[..]);
    let expected = expect(
        Shape::Csr {
            offsets: &offsets,
            targets: &targets,
        },
        weights,
        flags & 4 != 0,
        flags & 2 != 0,
    );
    let graph = Graph::Csr {
        offsets: &offsets,
        targets: &targets,
        weights: weights.map(T::wrap),
    };
    let what =
        || format!("CSR offsets={offsets:?} targets={targets:?} w={weights:?} flags={flags:#x}");
    check_all_algorithms(&graph, &expected, flags, &what);
}

// ---- c_api ------------------------------------------------------------------------------

/// Bytes of the caller buffer every pointer of [`c_api`] points into.
const ARENA: usize = 4096;

/// A pointer argument of a C call: NULL or a place in the arena, with the number of
/// elements the call is told it holds.
#[derive(Clone, Copy, Debug)]
struct Arg {
    ptr: *mut u8,
    count: u64,
    size: usize,
}

impl Arg {
    const NULL: Arg = Arg {
        ptr: std::ptr::null_mut(),
        count: 0,
        size: 1,
    };

    /// What the library must refuse: NULL or misaligned with a non-zero count.
    fn bad(&self) -> bool {
        self.count > 0 && (self.ptr.is_null() || self.ptr as usize % self.size != 0)
    }

    fn bytes(&self) -> usize {
        (self.count as usize).saturating_mul(self.size)
    }

    fn overlaps(&self, other: &Arg) -> bool {
        let (a, b) = (self.ptr as usize, other.ptr as usize);
        self.bytes() > 0
            && other.bytes() > 0
            && a < b.saturating_add(other.bytes())
            && b < a.saturating_add(self.bytes())
    }

    fn c<T>(&self) -> *mut T {
        self.ptr.cast()
    }

    /// Element `i` as an i128 of dtype `dtype` (an integer type).
    unsafe fn int_at(&self, dtype: i32, i: usize) -> i128 {
        let p = unsafe { self.ptr.add(i * self.size) };
        unsafe {
            match dtype {
                0 => p.cast::<i32>().read_unaligned() as i128,
                1 => p.cast::<u32>().read_unaligned() as i128,
                2 => p.cast::<i64>().read_unaligned() as i128,
                _ => p.cast::<u64>().read_unaligned() as i128,
            }
        }
    }

    /// The `count` elements as a slice (only for good, aligned arguments).
    unsafe fn slice<'a, T>(&self) -> &'a [T] {
        if self.count == 0 {
            return &[];
        }
        assert!(!self.bad());
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<T>(), self.count as usize) }
    }

    unsafe fn write<T: Copy>(&self, values: &[T]) {
        if self.ptr.is_null() {
            return;
        }
        for (i, &x) in values.iter().enumerate().take(self.count as usize) {
            unsafe {
                self.ptr
                    .add(i * std::mem::size_of::<T>())
                    .cast::<T>()
                    .write_unaligned(x)
            };
        }
    }
}

struct Caller<'a, 'b> {
    b: &'b mut Bytes<'a>,
    base: *mut u8,
}

impl Caller<'_, '_> {
    /// An argument of `count` elements of `size` bytes in the arena window
    /// `[lo, hi)`, usually aligned, sometimes not, sometimes NULL.
    fn place(&mut self, count: u64, size: usize, lo: usize, hi: usize) -> Arg {
        let sel = self.b.u8();
        let bytes = count as usize * size;
        if sel == 0xFF || bytes > hi - lo {
            return Arg {
                ptr: std::ptr::null_mut(),
                count,
                size,
            };
        }
        let mut off = lo + self.b.u16() as usize % (hi - lo - bytes + 1);
        if sel & 1 == 0 {
            off -= (off - lo) % size;
        }
        Arg {
            // SAFETY: off + bytes <= ARENA.
            ptr: unsafe { self.base.add(off) },
            count,
            size,
        }
    }

    /// A text buffer: NULL (capacity 0 or any), or a place in the arena.
    fn text(&mut self) -> (*mut c_char, usize) {
        match self.b.u8() % 4 {
            0 => (std::ptr::null_mut(), 0),
            1 => (std::ptr::null_mut(), self.b.u16() as usize),
            _ => {
                let off = self.b.u16() as usize % ARENA;
                let cap = self.b.u8() as usize % (ARENA - off + 1);
                // SAFETY: off < ARENA.
                (unsafe { self.base.add(off) }.cast(), cap)
            }
        }
    }

    /// An element count: mostly small; 0xFF then any (only with NULL arrays).
    fn count(&mut self, max: u8) -> (u64, bool) {
        match self.b.u8() {
            0xFF => (self.b.u64() | 1 << 40, true),
            x => ((x % max) as u64, false),
        }
    }

    /// Valid CSR-style offsets over `n` elements for `segments` segments.
    fn offsets(&mut self, segments: u64, n: u64) -> Vec<u64> {
        let mut cuts: Vec<u64> = (1..segments)
            .map(|_| self.b.u8() as u64 % (n + 1))
            .collect();
        cuts.sort_unstable();
        let mut o = vec![0];
        o.extend(cuts);
        if segments > 0 {
            o.push(n);
        }
        o
    }
}

/// The text a call wrote into `(ptr, cap)`: NUL-terminated within `cap`, and a prefix
/// of `full` (cut at a character boundary) when that is known.
unsafe fn check_text(ptr: *const c_char, cap: usize, full: Option<&str>, what: &str) {
    if ptr.is_null() || cap == 0 {
        return;
    }
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), cap) };
    let len = bytes
        .iter()
        .position(|&c| c == 0)
        .unwrap_or_else(|| panic!("{what}: no NUL within the capacity {cap}"));
    if let Some(mut full) = full {
        // Known issue error-message-nul: messages quote file bytes, NULs included, so a
        // C caller sees the message cut at the first NUL.
        if tolerated("error-message-nul") {
            full = &full[..full.find('\0').unwrap_or(full.len())];
        }
        let mut want = full.len().min(cap - 1);
        while !full.is_char_boundary(want) {
            want -= 1;
        }
        assert_eq!(&bytes[..len], &full.as_bytes()[..want], "{what}: text");
    }
}

fn dtype_size(dtype: i32) -> usize {
    match dtype {
        0 | 1 | 4 => 4,
        _ => 8,
    }
}

fn valid(code: i32, max: i32) -> bool {
    (0..=max).contains(&code)
}

/// The integer dtype's limits as i128: (min, max).
fn int_limits(dtype: i32) -> (i128, i128) {
    match dtype {
        0 => (i32::MIN as i128, i32::MAX as i128),
        1 => (0, u32::MAX as i128),
        2 => (i64::MIN as i128, i64::MAX as i128),
        _ => (0, u64::MAX as i128),
    }
}

fn wrap_int(x: i128, dtype: i32) -> i128 {
    match dtype {
        0 => x as i32 as i128,
        1 => x as u32 as i128,
        2 => x as i64 as i128,
        _ => x as u64 as i128,
    }
}

/// A naive scan of integers: `starts[i]` begins a segment.
fn ref_scan(input: &[i128], starts: &[bool], dtype: i32, op: i32, exclusive: bool) -> Vec<i128> {
    let (lo, hi) = int_limits(dtype);
    let identity = [0, hi, lo][op as usize];
    let combine = |a: i128, b: i128| match op {
        0 => wrap_int(a + b, dtype),
        1 => a.min(b),
        _ => a.max(b),
    };
    let mut acc = identity;
    let mut out = Vec::with_capacity(input.len());
    for (i, &x) in input.iter().enumerate() {
        if starts[i] {
            acc = identity;
        }
        if exclusive {
            out.push(acc);
            acc = combine(acc, x);
        } else {
            acc = combine(acc, x);
            out.push(acc);
        }
    }
    out
}

fn offsets_valid(offsets: &[u64], n: u64) -> bool {
    offsets.first() == Some(&0)
        && offsets.windows(2).all(|w| w[0] <= w[1])
        && offsets.last() == Some(&n)
}

fn auto_is_cpu() -> bool {
    static CPU: OnceLock<bool> = OnceLock::new();
    *CPU.get_or_init(|| std::env::var("GPUMST_BACKEND").is_ok_and(|v| v.trim() == "cpu"))
}

/// The C context of [`c_api`]: the CPU tier, `GPUMST_FUZZ_THREADS` threads.
fn c_context() -> *mut ffi::gpumst_context {
    static CONTEXT: OnceLock<usize> = OnceLock::new();
    *CONTEXT.get_or_init(|| {
        let mut options = std::mem::MaybeUninit::<ffi::gpumst_options>::uninit();
        unsafe {
            assert_eq!(
                ffi::gpumst_options_init(options.as_mut_ptr()),
                ffi::GPUMST_OK
            );
            let mut options = options.assume_init();
            options.tier = ffi::GPUMST_TIER_CPU;
            options.cpu_threads = fuzz_threads() as u32;
            let mut ctx = std::ptr::null_mut();
            let status = ffi::gpumst_context_create(&options, &mut ctx, std::ptr::null_mut(), 0);
            assert_eq!(status, ffi::GPUMST_OK);
            ctx as usize
        }
    }) as *mut ffi::gpumst_context
}

/// The C API fed arbitrary arguments: up to 12 calls, each picked by a byte, with
/// enum values in and out of range, flags, NULL pointers, and aligned or misaligned
/// pointers into one caller buffer (the "arena", filled with the input's bytes) whose
/// lengths always fit the buffer. Every status must be the one the contract in
/// `include/gpumst.h` implies (never GPUMST_INTERNAL), texts NUL-terminated within
/// their capacity, and results right: integer scans and arg-reductions against naive
/// loops, forests against the reference Kruskal, files against the Rust reader.
pub fn c_api(data: &[u8]) {
    let mut arena = vec![0u64; ARENA / 8];
    let base = arena.as_mut_ptr().cast::<u8>();
    if !data.is_empty() {
        for i in 0..ARENA {
            // SAFETY: i < ARENA.
            unsafe { *base.add(i) = data[i % data.len()] };
        }
    }
    let mut b = Bytes::new(data);
    let mut calls = 0;
    while !b.is_empty() && calls < 12 {
        calls += 1;
        let mut c = Caller { b: &mut b, base };
        // SAFETY: every pointer passed below is NULL or points into `arena` with room
        // for the count passed with it (Caller::place).
        unsafe {
            match c.b.u8() % 11 {
                0 => c_strings(&mut c),
                1 => c_context_create(&mut c),
                2 => c_context_queries(&mut c),
                3..=5 => c_scan(&mut c),
                6 => c_argminmax(&mut c),
                7 => c_segmented_arg(&mut c),
                8 | 9 => c_msf(&mut c),
                _ => c_graph_file(&mut c),
            }
        }
    }
    drop(arena);
}

fn ctx_or_null(c: &mut Caller) -> *mut ffi::gpumst_context {
    if c.b.u8() == 0xFF {
        std::ptr::null_mut()
    } else {
        c_context()
    }
}

unsafe fn c_str(p: *const c_char) -> String {
    assert!(!p.is_null(), "a static string is never NULL");
    unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string()
}

unsafe fn c_strings(c: &mut Caller) {
    unsafe {
        assert_eq!(c_str(ffi::gpumst_version()), gpumst::VERSION);
        let s = c.b.enum_value();
        let name = c_str(ffi::gpumst_status_string(s));
        let expected = Status::ALL
            .iter()
            .find(|x| **x as i32 == s)
            .map_or("unknown status", |x| x.name());
        assert_eq!(name, expected, "gpumst_status_string({s})");
        let t = c.b.enum_value();
        let name = c_str(ffi::gpumst_tier_name(t));
        let expected = ["auto", "cpu", "opencl", "cuda"]
            .get(t as usize)
            .filter(|_| t >= 0)
            .copied()
            .unwrap_or("unknown");
        assert_eq!(name, expected, "gpumst_tier_name({t})");
        assert_eq!(
            ffi::gpumst_options_init(std::ptr::null_mut()),
            ffi::GPUMST_INVALID_ARGUMENT
        );
        // The accessors of a NULL forest and file.
        let null_forest = std::ptr::null();
        assert_eq!(ffi::gpumst_forest_num_edges(null_forest), 0);
        assert!(ffi::gpumst_forest_edges(null_forest).is_null());
        assert_eq!(ffi::gpumst_forest_tier(null_forest), ffi::GPUMST_TIER_AUTO);
        assert_eq!(ffi::gpumst_forest_num_vertices(null_forest), 0);
        assert_eq!(ffi::gpumst_forest_num_components(null_forest), 0);
        assert!(ffi::gpumst_forest_labels(null_forest).is_null());
        let mut total = std::mem::MaybeUninit::<ffi::gpumst_total_weight>::uninit();
        assert_eq!(
            ffi::gpumst_forest_total_weight(null_forest, total.as_mut_ptr()),
            ffi::GPUMST_INVALID_ARGUMENT
        );
        let (buf, cap) = c.text();
        let mut length = 0usize;
        assert_eq!(
            ffi::gpumst_forest_total_weight_string(null_forest, buf, cap, &mut length),
            ffi::GPUMST_INVALID_ARGUMENT
        );
        ffi::gpumst_forest_free(std::ptr::null_mut());
        ffi::gpumst_graph_file_free(std::ptr::null_mut());
        ffi::gpumst_context_destroy(std::ptr::null_mut());
        assert_eq!(
            ffi::gpumst_graph_file_format(std::ptr::null()),
            ffi::GPUMST_FORMAT_AUTO
        );
        assert_eq!(ffi::gpumst_graph_file_vertex_base(std::ptr::null()), 0);
        let (buf, cap) = c.text();
        let with_length = c.b.u8() & 1 != 0;
        let mut length = usize::MAX;
        let status = ffi::gpumst_probe_report(
            buf,
            cap,
            if with_length {
                &mut length
            } else {
                std::ptr::null_mut()
            },
        );
        if buf.is_null() && cap > 0 {
            assert_eq!(status, ffi::GPUMST_INVALID_ARGUMENT, "probe report");
        } else {
            assert_eq!(status, ffi::GPUMST_OK, "probe report");
            check_text(buf, cap, None, "probe report");
            if with_length {
                assert_ne!(length, usize::MAX, "probe report length");
            }
        }
    }
}

unsafe fn c_context_create(c: &mut Caller) {
    let sel = c.b.u8();
    let size = std::mem::size_of::<ffi::gpumst_options>();
    let mut tier = c.b.enum_value();
    // GPU tiers would open real devices on a machine that has them; auto only when
    // GPUMST_BACKEND=cpu makes it the CPU tier.
    if tier == ffi::GPUMST_TIER_OPENCL
        || tier == ffi::GPUMST_TIER_CUDA
        || (tier == ffi::GPUMST_TIER_AUTO && !auto_is_cpu())
    {
        tier = ffi::GPUMST_TIER_CPU;
    }
    let options = ffi::gpumst_options {
        struct_size: match c.b.u8() % 8 {
            0 => 0,
            1 => size - 1,
            2 => size + 8,
            3 => c.b.u64() as usize,
            _ => size,
        },
        tier,
        device_index: c.b.u32(),
        cpu_threads: match c.b.u8() {
            0xFF => 0,
            x => 1 + (x & 1) as u32,
        },
        // A made-up CUcontext would be dereferenced by the driver: never fuzzed.
        cuda_context: std::ptr::null_mut(),
        // The CPU tier (the only one opened here) ignores it; any value is accepted.
        device_memory_limit: c.b.u64(),
        // A list of devices must be readable; the CPU tier ignores it otherwise. Made-up
        // addresses are never fuzzed.
        devices: std::ptr::null(),
        device_count: match c.b.u8() % 4 {
            0 => ffi::GPUMST_ALL_DEVICES,
            1 => 1 + c.b.u8() as u32,
            _ => 0,
        },
    };
    let null_options = sel & 1 != 0 && auto_is_cpu();
    let null_device_list =
        options.device_count != 0 && options.device_count != ffi::GPUMST_ALL_DEVICES;
    let null_out = sel & 2 != 0;
    let (error, cap) = c.text();
    let mut out = std::ptr::NonNull::<ffi::gpumst_context>::dangling().as_ptr();
    let status = unsafe {
        ffi::gpumst_context_create(
            if null_options {
                std::ptr::null()
            } else {
                &options
            },
            if null_out {
                std::ptr::null_mut()
            } else {
                &mut out
            },
            error,
            cap,
        )
    };
    let expected = if null_out
        || (!null_options
            && (options.struct_size < size || !valid(options.tier, 3) || null_device_list))
    {
        ffi::GPUMST_INVALID_ARGUMENT
    } else {
        ffi::GPUMST_OK
    };
    assert_eq!(
        status, expected,
        "gpumst_context_create: struct_size {} tier {} null options {null_options} null out {null_out}",
        options.struct_size, options.tier
    );
    unsafe {
        check_text(
            error,
            cap,
            (status == ffi::GPUMST_OK).then_some(""),
            "error",
        )
    };
    if !null_out {
        assert_eq!(
            out.is_null(),
            status != ffi::GPUMST_OK,
            "*out is NULL exactly on failure"
        );
        if !out.is_null() {
            let mut t = -1;
            assert_eq!(
                unsafe { ffi::gpumst_context_tier(out, &mut t) },
                ffi::GPUMST_OK
            );
            assert_eq!(t, ffi::GPUMST_TIER_CPU);
            unsafe { ffi::gpumst_context_destroy(out) };
        }
    }
}

unsafe fn c_context_queries(c: &mut Caller) {
    let ctx = ctx_or_null(c);
    let sel = c.b.u8();
    let null = |bit: u8| sel & bit != 0;
    unsafe {
        let mut tier = -1;
        let status = ffi::gpumst_context_tier(
            ctx,
            if null(1) {
                std::ptr::null_mut()
            } else {
                &mut tier
            },
        );
        if ctx.is_null() || null(1) {
            assert_eq!(status, ffi::GPUMST_INVALID_ARGUMENT, "gpumst_context_tier");
        } else {
            assert_eq!(status, ffi::GPUMST_OK);
            assert_eq!(tier, ffi::GPUMST_TIER_CPU);
        }
        let mut bytes = 0u64;
        let status = ffi::gpumst_context_device_memory(
            ctx,
            if null(2) {
                std::ptr::null_mut()
            } else {
                &mut bytes
            },
        );
        let expected = if ctx.is_null() || null(2) {
            ffi::GPUMST_INVALID_ARGUMENT
        } else {
            ffi::GPUMST_OK
        };
        assert_eq!(status, expected, "gpumst_context_device_memory");
        let mut count = 0u32;
        let status = ffi::gpumst_context_device_count(
            ctx,
            if null(3) {
                std::ptr::null_mut()
            } else {
                &mut count
            },
        );
        let expected = if ctx.is_null() || null(3) {
            ffi::GPUMST_INVALID_ARGUMENT
        } else {
            ffi::GPUMST_OK
        };
        assert_eq!(status, expected, "gpumst_context_device_count");
        if status == ffi::GPUMST_OK {
            assert_eq!(count, 1, "the CPU tier counts one device");
        }
        let (buf, cap) = c.text();
        let mut length = usize::MAX;
        let status = ffi::gpumst_context_device_name(
            ctx,
            buf,
            cap,
            if null(4) {
                std::ptr::null_mut()
            } else {
                &mut length
            },
        );
        if ctx.is_null() || (buf.is_null() && cap > 0) {
            assert_eq!(status, ffi::GPUMST_INVALID_ARGUMENT, "device name");
        } else {
            assert_eq!(status, ffi::GPUMST_OK, "device name");
            let name = cpu_context().device_name();
            check_text(buf, cap, Some(&name), "device name");
            if !null(4) {
                assert_eq!(length, name.len(), "device name length");
            }
        }
        let (buf, cap) = c.text();
        let len = ffi::gpumst_context_last_error(ctx, buf, cap);
        if ctx.is_null() {
            assert_eq!(len, "context is NULL".len());
            check_text(buf, cap, Some("context is NULL"), "last error");
        } else {
            // Other threads may fail calls on the same context: only the form.
            check_text(buf, cap, None, "last error");
        }
    }
}

/// gpumst_scan and the segmented scans (flags, offsets).
unsafe fn c_scan(c: &mut Caller) {
    let which = c.b.u8() % 3;
    let ctx = ctx_or_null(c);
    let (dtype, op, kind) = (c.b.enum_value(), c.b.enum_value(), c.b.enum_value());
    let size = dtype_size(dtype);
    let (n, huge) = c.count(200);
    let layout = c.b.u8() % 4;
    let none = |n, size| Arg {
        ptr: std::ptr::null_mut(),
        count: n,
        size,
    };
    let (input, output) = if huge {
        (none(n, size), none(n, size))
    } else {
        match layout {
            0 => (
                c.place(n, size, 0, ARENA / 2),
                c.place(n, size, ARENA / 2, ARENA),
            ),
            1 => {
                let a = c.place(n, size, 0, ARENA);
                (a, a)
            }
            _ => (c.place(n, size, 0, ARENA), c.place(n, size, 0, ARENA)),
        }
    };
    let mut flags = Arg::NULL;
    let mut offsets = Arg {
        size: 8,
        ..Arg::NULL
    };
    let mut segments = 0;
    match which {
        1 => {
            flags = if huge {
                none(n, 1)
            } else {
                c.place(n, 1, 0, ARENA)
            };
        }
        2 => {
            segments = match c.b.u8() {
                0xFF => u64::MAX,
                x => (x % 16) as u64,
            };
            offsets = if segments > 255 {
                none(segments.wrapping_add(1), 8)
            } else {
                c.place(segments + 1, 8, 0, ARENA)
            };
            if c.b.u8() & 1 == 0 && !huge && segments <= 255 {
                let o = c.offsets(segments, n);
                unsafe { offsets.write(&o) };
            }
        }
        _ => {}
    }
    let in_place = n > 0 && input.ptr == output.ptr;
    let mut invalid = ctx.is_null()
        || !valid(dtype, 5)
        || !valid(op, 2)
        || !valid(kind, 1)
        || flags.bad()
        || segments == u64::MAX
        || offsets.bad()
        || output.bad()
        || output.overlaps(&flags)
        || output.overlaps(&offsets)
        || (!in_place && (input.bad() || output.overlaps(&input)));
    if which == 2 && !invalid {
        invalid = !offsets_valid(unsafe { offsets.slice::<u64>() }, n);
    }
    // The expected result of integer scans, from the arguments before the call.
    let reference = (!invalid && dtype <= 3).then(|| {
        let values: Vec<i128> = (0..n as usize)
            .map(|i| unsafe { input.int_at(dtype, i) })
            .collect();
        let mut starts = vec![false; n as usize];
        match which {
            1 => {
                let f = unsafe { flags.slice::<u8>() };
                for i in 0..n as usize {
                    starts[i] = f[i] != 0;
                }
            }
            2 => {
                for &o in unsafe { offsets.slice::<u64>() } {
                    if o < n {
                        starts[o as usize] = true;
                    }
                }
            }
            _ => {}
        }
        if n > 0 {
            starts[0] = true;
        }
        ref_scan(&values, &starts, dtype, op, kind == 1)
    });
    let status = unsafe {
        let (i, o) = (input.c::<c_void>(), output.c::<c_void>());
        match which {
            0 => ffi::gpumst_scan(ctx, dtype, op, kind, i, o, n),
            1 => ffi::gpumst_segmented_scan_flags(ctx, dtype, op, kind, i, o, flags.c(), n),
            _ => ffi::gpumst_segmented_scan_offsets(
                ctx,
                dtype,
                op,
                kind,
                i,
                o,
                n,
                offsets.c(),
                segments,
            ),
        }
    };
    let what = || {
        format!(
            "scan {which}: dtype {dtype} op {op} kind {kind} n {n} input {input:?} output {output:?} flags {flags:?} offsets {offsets:?} segments {segments}"
        )
    };
    let expected = if invalid {
        ffi::GPUMST_INVALID_ARGUMENT
    } else {
        ffi::GPUMST_OK
    };
    assert_eq!(status, expected, "{}", what());
    if let Some(reference) = reference {
        for (i, &r) in reference.iter().enumerate() {
            assert_eq!(
                unsafe { output.int_at(dtype, i) },
                r,
                "element {i}: {}",
                what()
            );
        }
    }
}

unsafe fn c_argminmax(c: &mut Caller) {
    let ctx = ctx_or_null(c);
    let max = c.b.u8() & 1 != 0;
    let dtype = c.b.enum_value();
    let size = dtype_size(dtype);
    let (n, huge) = c.count(250);
    let input = if huge {
        Arg {
            ptr: std::ptr::null_mut(),
            count: n,
            size,
        }
    } else {
        c.place(n, size, 0, ARENA)
    };
    let value = c.place(1, size, 0, ARENA);
    let index = c.place(1, 8, 0, ARENA);
    let invalid = ctx.is_null()
        || !valid(dtype, 5)
        || input.bad()
        || value.bad()
        || index.bad()
        || value.overlaps(&index)
        || value.overlaps(&input)
        || index.overlaps(&input);
    let values: Vec<i128> = if !invalid && dtype <= 3 {
        (0..n as usize)
            .map(|i| unsafe { input.int_at(dtype, i) })
            .collect()
    } else {
        Vec::new()
    };
    let status = unsafe {
        let f = if max {
            ffi::gpumst_argmax
        } else {
            ffi::gpumst_argmin
        };
        f(ctx, dtype, input.c(), n, value.c(), index.c())
    };
    let what = || {
        format!("arg max={max} dtype {dtype} n {n} input {input:?} value {value:?} index {index:?}")
    };
    let expected = if invalid {
        ffi::GPUMST_INVALID_ARGUMENT
    } else {
        ffi::GPUMST_OK
    };
    assert_eq!(status, expected, "{}", what());
    if !invalid && dtype <= 3 {
        let (lo, hi) = int_limits(dtype);
        let best = best_index(&values, max);
        let got_index = unsafe { index.c::<u64>().read() };
        let got_value = unsafe { value.int_at(dtype, 0) };
        match best {
            None => {
                assert_eq!(got_index, u64::MAX, "{}", what());
                assert_eq!(got_value, if max { lo } else { hi }, "{}", what());
            }
            Some(i) => {
                assert_eq!(got_index, i as u64, "{}", what());
                assert_eq!(got_value, values[i], "{}", what());
            }
        }
    }
}

/// The first index of the minimum (maximum) of `values`.
fn best_index(values: &[i128], max: bool) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &x) in values.iter().enumerate() {
        let better = match best {
            None => true,
            Some(j) => {
                if max {
                    x > values[j]
                } else {
                    x < values[j]
                }
            }
        };
        if better {
            best = Some(i);
        }
    }
    best
}

unsafe fn c_segmented_arg(c: &mut Caller) {
    let ctx = ctx_or_null(c);
    let max = c.b.u8() & 1 != 0;
    let dtype = c.b.enum_value();
    let size = dtype_size(dtype);
    let (n, huge) = c.count(200);
    let input = if huge {
        Arg {
            ptr: std::ptr::null_mut(),
            count: n,
            size,
        }
    } else {
        c.place(n, size, 0, ARENA)
    };
    let segments = match c.b.u8() {
        0xFF => u64::MAX,
        x => (x % 24) as u64,
    };
    let (offsets, values, indices) = if segments == u64::MAX {
        let none = |size| Arg {
            ptr: std::ptr::null_mut(),
            count: segments,
            size,
        };
        (none(8), none(size), none(8))
    } else {
        let offsets = c.place(segments + 1, 8, 0, ARENA);
        if c.b.u8() & 1 == 0 && !huge {
            let o = c.offsets(segments, n);
            unsafe { offsets.write(&o) };
        }
        (
            offsets,
            c.place(segments, size, 0, ARENA),
            c.place(segments, 8, 0, ARENA),
        )
    };
    let mut invalid = ctx.is_null()
        || !valid(dtype, 5)
        || input.bad()
        || segments == u64::MAX
        || offsets.bad()
        || values.bad()
        || indices.bad()
        || [&values, &indices]
            .iter()
            .any(|out| out.overlaps(&input) || out.overlaps(&offsets))
        || values.overlaps(&indices);
    if !invalid {
        invalid = !offsets_valid(unsafe { offsets.slice::<u64>() }, n);
    }
    let reference: Option<(Vec<i128>, Vec<u64>)> = (!invalid && dtype <= 3).then(|| {
        let o = unsafe { offsets.slice::<u64>() }.to_vec();
        let data: Vec<i128> = (0..n as usize)
            .map(|i| unsafe { input.int_at(dtype, i) })
            .collect();
        let (lo, hi) = int_limits(dtype);
        o.windows(2)
            .map(|w| {
                let seg = &data[w[0] as usize..w[1] as usize];
                match best_index(seg, max) {
                    None => (if max { lo } else { hi }, u64::MAX),
                    Some(i) => (seg[i], w[0] + i as u64),
                }
            })
            .unzip()
    });
    let status = unsafe {
        let f = if max {
            ffi::gpumst_segmented_argmax
        } else {
            ffi::gpumst_segmented_argmin
        };
        f(
            ctx,
            dtype,
            input.c(),
            n,
            offsets.c(),
            segments,
            values.c(),
            indices.c(),
        )
    };
    let what = || {
        format!(
            "segmented arg max={max} dtype {dtype} n {n} input {input:?} offsets {offsets:?} segments {segments} values {values:?} indices {indices:?}"
        )
    };
    let expected = if invalid {
        ffi::GPUMST_INVALID_ARGUMENT
    } else {
        ffi::GPUMST_OK
    };
    assert_eq!(status, expected, "{}", what());
    if let Some((ref_values, ref_indices)) = reference {
        for s in 0..segments as usize {
            assert_eq!(
                unsafe { values.int_at(dtype, s) },
                ref_values[s],
                "{}",
                what()
            );
            assert_eq!(
                unsafe { indices.c::<u64>().add(s).read() },
                ref_indices[s],
                "{}",
                what()
            );
        }
    }
}

/// gpumst_msf on a gpumst_graph made by gpumst_graph_init_edge_list or _csr (or not
/// made at all), then the forest's accessors.
unsafe fn c_msf(c: &mut Caller) {
    let sel = c.b.u8();
    let weight_type = c.b.enum_value();
    with_dtype!(if valid(weight_type, 5) { weight_type } else { 1 }, T => unsafe { c_msf_typed::<T>(c, sel, weight_type) })
}

unsafe fn c_msf_typed<T: FuzzWeight>(c: &mut Caller, sel: u8, weight_type: i32) {
    let csr = sel & 1 != 0;
    let structured = sel & 2 != 0;
    let weighted = sel & 4 != 0;
    let null_graph = sel & 8 != 0 && sel & 0x30 == 0x30;
    let null_forest = sel & 0x40 != 0 && sel & 0x80 != 0;
    let wsize = dtype_size(weight_type);
    let n: u64 = match c.b.u8() {
        0xFF => (1 << 32) + 1,
        0xFE => u64::MAX,
        x => (x % 24) as u64,
    };
    let small_n = n < 1 << 32;
    // Logical arrays (written into the arena when `structured`).
    let (mut u, mut v, mut offsets, mut targets, mut w) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::<T>::new(),
    );
    let m: u64;
    if structured && small_n {
        let pairs = c.b.u8() % 24;
        if csr {
            let mut entries = Vec::new();
            for _ in 0..pairs {
                let (x, y) = (vertex(c.b, n as usize), vertex(c.b, n as usize));
                let weight = T::decode(c.b);
                entries.push((x, c.b.u8(), y, weight));
                if x != y {
                    entries.push((y, c.b.u8(), x, weight));
                }
            }
            entries.sort_by_key(|e| (e.0, e.1));
            offsets = vec![0u64; n as usize + 1];
            for e in &entries {
                if (e.0 as u64) < n {
                    offsets[e.0 as usize + 1] += 1;
                }
            }
            for x in 0..n as usize {
                offsets[x + 1] += offsets[x];
            }
            targets = entries.iter().map(|e| e.2).collect();
            w = entries.iter().map(|e| e.3).collect();
            m = targets.len() as u64;
        } else {
            for _ in 0..pairs {
                u.push(vertex(c.b, n as usize));
                v.push(vertex(c.b, n as usize));
                w.push(T::decode(c.b));
            }
            m = pairs as u64;
        }
    } else {
        m = (c.b.u8() % 48) as u64;
    }
    let (arr_u, arr_v, arr_offsets, arr_targets) = if csr {
        let offsets_arg = if n < 512 {
            c.place(n + 1, 8, 0, ARENA)
        } else {
            Arg {
                ptr: std::ptr::null_mut(),
                count: n.wrapping_add(1),
                size: 8,
            }
        };
        (Arg::NULL, Arg::NULL, offsets_arg, c.place(m, 4, 0, ARENA))
    } else {
        (
            c.place(m, 4, 0, ARENA),
            c.place(m, 4, 0, ARENA),
            Arg::NULL,
            Arg::NULL,
        )
    };
    let arr_w = if weighted {
        let a = c.place(m, wsize, 0, ARENA);
        if a.ptr.is_null() {
            // A NULL weights pointer means unweighted, whatever the count.
            Arg::NULL
        } else {
            a
        }
    } else {
        Arg::NULL
    };
    if structured {
        unsafe {
            arr_u.write(&u);
            arr_v.write(&v);
            arr_offsets.write(&offsets);
            arr_targets.write(&targets);
            if valid(weight_type, 5) {
                arr_w.write(&w);
            }
        }
    }
    let mut graph = std::mem::MaybeUninit::<ffi::gpumst_graph>::uninit();
    let init_null = sel & 0x10 != 0 && sel & 0x20 == 0 && sel & 8 != 0;
    let init_status = unsafe {
        let g = if init_null {
            std::ptr::null_mut()
        } else {
            graph.as_mut_ptr()
        };
        if csr {
            ffi::gpumst_graph_init_csr(
                g,
                n,
                m,
                arr_offsets.c(),
                arr_targets.c(),
                weight_type,
                arr_w.ptr.cast(),
            )
        } else {
            ffi::gpumst_graph_init_edge_list(
                g,
                n,
                m,
                arr_u.c(),
                arr_v.c(),
                weight_type,
                arr_w.ptr.cast(),
            )
        }
    };
    if init_null {
        assert_eq!(init_status, ffi::GPUMST_INVALID_ARGUMENT);
        return;
    }
    assert_eq!(init_status, ffi::GPUMST_OK);
    let mut graph = unsafe { graph.assume_init() };
    let size = std::mem::size_of::<ffi::gpumst_graph>();
    let tweak = c.b.u8();
    match tweak % 16 {
        0 => graph.struct_size = c.b.u8() as usize % size,
        1 => graph.struct_size = size + c.b.u8() as usize,
        2 => graph.kind = c.b.enum_value(),
        _ => {}
    }
    let algorithm = c.b.enum_value();
    let flags = match c.b.u8() {
        0xFF => c.b.u32(),
        x => (x % 8) as u32,
    };
    // The arrays as the library will see them, by the graph's kind.
    let seen = |ptr: *const u32, count: u64| Arg {
        ptr: ptr as *mut u8,
        count,
        size: 4,
    };
    let (seen_u, seen_v) = (seen(graph.u, m), seen(graph.v, m));
    let seen_offsets = Arg {
        ptr: graph.offsets as *mut u8,
        count: n.wrapping_add(1),
        size: 8,
    };
    let seen_targets = seen(graph.targets, m);
    // The statuses the C layer gives before the library looks at the data.
    let c_invalid = null_forest
        || null_graph
        || flags > 7
        || graph.struct_size < size
        || (!arr_w.ptr.is_null() && (!valid(weight_type, 5) || arr_w.bad()))
        || !valid(graph.kind, 1)
        || (graph.kind == ffi::GPUMST_GRAPH_EDGE_LIST && (seen_u.bad() || seen_v.bad()))
        || (graph.kind == ffi::GPUMST_GRAPH_CSR
            && (n == u64::MAX || seen_offsets.bad() || seen_targets.bad()))
        || !valid(algorithm, 4);
    let (unweighted, maximum) = (flags & 2 != 0, flags & 4 != 0);
    let expected: Result<Expected, Status> = if c_invalid {
        Err(Status::InvalidArgument)
    } else {
        let weights = (!arr_w.ptr.is_null()).then(|| unsafe { arr_w.slice::<T>() });
        let shape = if graph.kind == ffi::GPUMST_GRAPH_CSR {
            Shape::Csr {
                offsets: unsafe { seen_offsets.slice() },
                targets: unsafe { seen_targets.slice() },
            }
        } else {
            Shape::EdgeList {
                n: n as usize,
                u: unsafe { seen_u.slice() },
                v: unsafe { seen_v.slice() },
            }
        };
        expect(shape, weights, unweighted, maximum)
    };
    let mut forest = std::ptr::NonNull::<ffi::gpumst_forest>::dangling().as_ptr();
    let status = unsafe {
        ffi::gpumst_msf(
            c_context(),
            if null_graph { std::ptr::null() } else { &graph },
            algorithm,
            flags,
            if null_forest {
                std::ptr::null_mut()
            } else {
                &mut forest
            },
        )
    };
    let what = || {
        format!(
            "gpumst_msf csr={csr} n={n} m={m} kind={} struct_size={} weight_type={weight_type} u={arr_u:?} v={arr_v:?} offsets={arr_offsets:?} targets={arr_targets:?} w={arr_w:?} algorithm={algorithm} flags={flags:#x} null_graph={null_graph} null_forest={null_forest}",
            graph.kind, graph.struct_size
        )
    };
    let expected = match expected {
        Err(s) => {
            assert_eq!(status, s as i32, "{}", what());
            if !null_forest {
                assert!(forest.is_null(), "*forest is NULL on failure");
            }
            return;
        }
        Ok(x) => x,
    };
    assert_eq!(status, ffi::GPUMST_OK, "{}", what());
    unsafe {
        let count = ffi::gpumst_forest_num_edges(forest);
        let edges = std::slice::from_raw_parts(ffi::gpumst_forest_edges(forest), count as usize);
        assert_eq!(edges, &expected.edges[..], "forest edges: {}", what());
        assert_eq!(ffi::gpumst_forest_tier(forest), ffi::GPUMST_TIER_CPU);
        assert_eq!(
            ffi::gpumst_forest_num_vertices(forest),
            expected.num_vertices as u64
        );
        assert_eq!(
            ffi::gpumst_forest_num_components(forest),
            expected.components as u64
        );
        let labels = ffi::gpumst_forest_labels(forest);
        if flags & 1 != 0 {
            let labels = std::slice::from_raw_parts(labels, expected.num_vertices);
            assert_eq!(labels, &expected.labels[..], "labels: {}", what());
        } else {
            assert!(labels.is_null());
        }
        let mut total = std::mem::MaybeUninit::<ffi::gpumst_total_weight>::uninit();
        assert_eq!(
            ffi::gpumst_forest_total_weight(forest, total.as_mut_ptr()),
            ffi::GPUMST_OK
        );
        let total = total.assume_init();
        match expected.total {
            TotalWeight::Int(x) => {
                assert_eq!(total.is_float, 0);
                assert_eq!(
                    (total.exact_high, total.exact_low),
                    ((x >> 64) as i64, x as u64)
                );
                assert_eq!(total.value.to_bits(), (x as f64).to_bits());
            }
            TotalWeight::Float(x) => {
                assert_eq!(total.is_float, 1);
                assert!(same_total(
                    TotalWeight::Float(total.value),
                    TotalWeight::Float(x)
                ));
            }
        }
        let (buf, cap) = c.text();
        let mut length = 0usize;
        let status = ffi::gpumst_forest_total_weight_string(forest, buf, cap, &mut length);
        if buf.is_null() && cap > 0 {
            assert_eq!(status, ffi::GPUMST_INVALID_ARGUMENT);
        } else {
            assert_eq!(status, ffi::GPUMST_OK);
            let text = expected.total.to_string();
            assert_eq!(length, text.len());
            check_text(buf, cap, Some(&text), "total weight");
        }
        ffi::gpumst_forest_free(forest);
    }
}

/// gpumst_graph_file_read (and the file's accessors) on a small file, against the Rust
/// reader.
unsafe fn c_graph_file(c: &mut Caller) {
    let sel = c.b.u8();
    let len = c.b.u8() as usize % 96;
    let contents: Vec<u8> = (0..len).map(|_| c.b.u8()).collect();
    let (suffix, contents) = match sel & 3 {
        0 | 1 => ("", contents),
        2 => (".gz", gzip(&contents)),
        _ => (".xz", xz(&contents)),
    };
    let ext = ["gr", "mtx", "txt", "egr"][((sel >> 2) & 3) as usize];
    let file = TempFile::create(&format!(".{ext}{suffix}"), &contents);
    let format = c.b.enum_value();
    let (null_path, null_out) = (sel & 0x30 == 0x30, sel & 0xC0 == 0xC0);
    let path = std::ffi::CString::new(file.0.as_os_str().as_encoded_bytes()).unwrap();
    let (error, cap) = c.text();
    let mut out = std::ptr::NonNull::<ffi::gpumst_graph_file>::dangling().as_ptr();
    let status = unsafe {
        ffi::gpumst_graph_file_read(
            if null_path {
                std::ptr::null()
            } else {
                path.as_ptr()
            },
            format,
            if null_out {
                std::ptr::null_mut()
            } else {
                &mut out
            },
            error,
            cap,
        )
    };
    let what = || {
        format!(
            "gpumst_graph_file_read({file:?}, format {format}) = {status}",
            file = file.0
        )
    };
    if null_out || null_path || !valid(format, Format::ALL.len() as i32 - 1) {
        assert_eq!(status, ffi::GPUMST_INVALID_ARGUMENT, "{}", what());
        unsafe { check_text(error, cap, None, "error") };
        return;
    }
    let rust_format = Format::ALL[format as usize];
    let rust = io::read_graph(&file.0, rust_format, None);
    match rust {
        Err(e) => {
            assert_eq!(status, e.status() as i32, "{}", what());
            assert!(out.is_null(), "*out is NULL on failure");
            unsafe { check_text(error, cap, Some(e.message()), "error") };
        }
        Ok(loaded) => unsafe {
            assert_eq!(status, ffi::GPUMST_OK, "{}", what());
            check_text(error, cap, Some(""), "error");
            let g = &loaded.graph;
            let resolved = rust_format.resolve(&file.0);
            assert_eq!(
                ffi::gpumst_graph_file_format(out),
                Format::ALL.iter().position(|f| *f == resolved).unwrap() as i32
            );
            assert_eq!(
                ffi::gpumst_graph_file_vertex_base(out),
                resolved.vertex_base()
            );
            assert_eq!(
                ffi::gpumst_graph_file_view(out, std::ptr::null_mut()),
                ffi::GPUMST_INVALID_ARGUMENT
            );
            let mut view = std::mem::MaybeUninit::<ffi::gpumst_graph>::uninit();
            assert_eq!(
                ffi::gpumst_graph_file_view(std::ptr::null(), view.as_mut_ptr()),
                ffi::GPUMST_INVALID_ARGUMENT
            );
            assert_eq!(
                ffi::gpumst_graph_file_view(out, view.as_mut_ptr()),
                ffi::GPUMST_OK
            );
            let view = view.assume_init();
            assert_eq!(view.struct_size, std::mem::size_of::<ffi::gpumst_graph>());
            assert_eq!(view.kind, ffi::GPUMST_GRAPH_EDGE_LIST);
            assert_eq!(view.num_vertices, g.num_vertices as u64);
            assert_eq!(view.num_edges, g.num_edges() as u64);
            let m = g.num_edges();
            if m > 0 {
                assert_eq!(std::slice::from_raw_parts(view.u, m), &g.u[..]);
                assert_eq!(std::slice::from_raw_parts(view.v, m), &g.v[..]);
            }
            match &g.weights {
                None => assert!(view.weights.is_null()),
                Some(w) => {
                    assert_eq!(view.weight_type, w.as_weights().dtype() as i32);
                    assert!(m == 0 || !view.weights.is_null());
                }
            }
            ffi::gpumst_graph_file_free(out);
        },
    }
}
