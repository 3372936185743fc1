//! Graph files and generators: every format from small files (plain, gzip and xz), edge
//! pairing and ids, every malformed-input error with its line, headers that lie about
//! sizes, write→read round trips, deterministic generators, and the real road network
//! from shared/data when it is there.

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use gpumst::graph::generate::{self, WeightSpec};
use gpumst::graph::io::{read_graph, write_forest_edges, write_graph, Format, LoadedGraph};
use gpumst::graph::{EdgeListGraph, WeightVec};
use gpumst::Status;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A fresh scratch directory for one test.
fn scratch() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "io-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn read(path: &Path) -> LoadedGraph {
    read_graph(path, Format::Auto, None)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Reads text written to a scratch file `name` and returns the error message, checking
/// that it is an InvalidGraph error that names the file and `FILE:LINE:`.
fn error_of(name: &str, text: &str, line: Option<u64>) -> String {
    let dir = scratch();
    let path = write_file(&dir, name, text.as_bytes());
    error_at(&path, line)
}

fn error_at(path: &Path, line: Option<u64>) -> String {
    let e = match read_graph(path, Format::Auto, None) {
        Ok(g) => panic!("{} was accepted: {:?}", path.display(), g.graph),
        Err(e) => e,
    };
    assert_eq!(e.status(), Status::InvalidGraph, "{e}");
    let message = e.message().to_string();
    let name = path.display().to_string();
    match line {
        Some(l) => assert!(
            message.starts_with(&format!("{name}:{l}: ")),
            "expected '{name}:{l}: ...', got: {message}"
        ),
        None => assert!(message.starts_with(&name), "{message}"),
    }
    message
}

fn edges(g: &EdgeListGraph) -> Vec<(u32, u32)> {
    g.u.iter().copied().zip(g.v.iter().copied()).collect()
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

// ---------------------------------------------------------------------------------------
// Formats

#[test]
fn format_names_and_extensions() {
    for (s, f) in [
        ("auto", Format::Auto),
        ("dimacs", Format::Dimacs),
        ("mtx", Format::MatrixMarket),
        ("edgelist", Format::EdgeList),
        ("egr", Format::Egr),
        ("EGR", Format::Egr),
        ("gmst", Format::Gmst),
    ] {
        assert_eq!(s.parse::<Format>().unwrap(), f);
    }
    for f in Format::ALL {
        assert_eq!(f.name().parse::<Format>().unwrap(), f);
        assert_eq!(f.to_string(), f.name());
    }
    let e = "csv".parse::<Format>().unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(e.message().contains("csv"), "{e}");
    for (name, f) in [
        ("a.gr", Format::Dimacs),
        ("a.gr.gz", Format::Dimacs),
        ("dir/A.GR.XZ", Format::Dimacs),
        ("a.mtx", Format::MatrixMarket),
        ("a.mtx.xz", Format::MatrixMarket),
        ("a.egr", Format::Egr),
        ("a.egr.gz", Format::Egr),
        ("a.gmst", Format::Gmst),
        ("a.GMST.xz", Format::Gmst),
        ("a.txt", Format::EdgeList),
        ("a.el.gz", Format::EdgeList),
        ("a.edges", Format::EdgeList),
        ("graph", Format::EdgeList),
    ] {
        assert_eq!(Format::from_path(Path::new(name)), f, "{name}");
    }
}

fn check_small_gr(g: &LoadedGraph) {
    assert_eq!(g.format, Format::Dimacs);
    assert_eq!(g.vertex_base, 1);
    assert_eq!(g.arcs_in_file, 12);
    assert_eq!(g.graph.num_vertices, 5);
    // Edges by first appearance; parallel arcs pair one to one, first unpaired first.
    assert_eq!(
        edges(&g.graph),
        [(0, 1), (1, 2), (0, 1), (3, 3), (1, 0), (4, 2)]
    );
    assert_eq!(
        g.graph.weights,
        Some(WeightVec::U32(vec![7, 3, 7, 2, 5, 1]))
    );
}

#[test]
fn dimacs_plain_gz_xz() {
    for name in ["small.gr", "small.gr.gz", "small.gr.xz"] {
        check_small_gr(&read(&data(name)));
    }
}

#[test]
fn compression_is_recognised_by_magic_bytes() {
    let dir = scratch();
    let text = std::fs::read(data("small.gr")).unwrap();
    // Compressed data under a plain name, read with an explicit format.
    for (name, bytes) in [("gz-inside.gr", gz(&text)), ("xz-inside.gr", xz(&text))] {
        let path = write_file(&dir, name, &bytes);
        check_small_gr(&read_graph(&path, Format::Dimacs, None).unwrap());
        check_small_gr(&read(&path));
    }
    // A .gz name on plain text is an error, not garbage.
    let path = write_file(&dir, "plain.gr.gz", &text);
    let m = error_at(&path, None);
    assert!(m.contains("gzip"), "{m}");
}

#[test]
fn matrix_market_symmetric_integer() {
    for name in ["sym.mtx", "sym.mtx.gz", "sym.mtx.xz"] {
        let g = read(&data(name));
        assert_eq!(g.format, Format::MatrixMarket);
        assert_eq!(g.vertex_base, 1);
        assert_eq!(g.arcs_in_file, 4);
        assert_eq!(g.graph.num_vertices, 4);
        assert_eq!(edges(&g.graph), [(1, 0), (2, 0), (2, 2), (3, 1)]);
        assert_eq!(
            g.graph.weights,
            Some(WeightVec::I64(vec![10, 4_000_000_000, 6, -5]))
        );
    }
}

#[test]
fn matrix_market_general_real_pairs_entries() {
    for name in ["general.mtx", "general.mtx.gz", "general.mtx.xz"] {
        let g = read(&data(name));
        assert_eq!(g.arcs_in_file, 6);
        assert_eq!(g.graph.num_vertices, 3);
        assert_eq!(edges(&g.graph), [(0, 1), (1, 2), (0, 0)]);
        assert_eq!(
            g.graph.weights,
            Some(WeightVec::F64(vec![1.5, -2000.0, 0.25]))
        );
    }
}

#[test]
fn matrix_market_pattern() {
    let g = read(&data("pattern.mtx"));
    assert_eq!(g.graph.num_vertices, 3);
    assert_eq!(edges(&g.graph), [(1, 0), (2, 1)]);
    assert_eq!(g.graph.weights, None);
    // Upper-triangle symmetric entries are accepted as they are; case does not matter.
    let dir = scratch();
    let p = write_file(
        &dir,
        "upper.mtx",
        b"%%matrixmarket MATRIX Coordinate Pattern Symmetric\n2 2 1\n1 2\n",
    );
    assert_eq!(edges(&read(&p).graph), [(0, 1)]);
}

#[test]
fn edge_lists() {
    for name in ["small.txt", "small.txt.gz", "small.txt.xz"] {
        let g = read(&data(name));
        assert_eq!(g.format, Format::EdgeList);
        assert_eq!(g.vertex_base, 0);
        assert_eq!(g.arcs_in_file, 4);
        assert_eq!(g.graph.num_vertices, 6);
        assert_eq!(edges(&g.graph), [(0, 1), (1, 2), (2, 0), (5, 5)]);
        assert_eq!(g.graph.weights, Some(WeightVec::U32(vec![5, 7, 3, 1])));
    }
    let g = read(&data("unweighted.el"));
    assert_eq!(g.graph.num_vertices, 4);
    assert_eq!(edges(&g.graph), [(0, 1), (1, 2), (3, 1)]);
    assert_eq!(g.graph.weights, None);

    let dir = scratch();
    let empty = write_file(&dir, "empty.txt", b"# nothing\n\n");
    let g = read(&empty);
    assert_eq!((g.graph.num_vertices, g.graph.num_edges()), (0, 0));
    assert_eq!(g.graph.weights, None);
    // CRLF line ends.
    let crlf = write_file(&dir, "crlf.txt", b"0 1 2\r\n1 2 3\r\n");
    let g = read(&crlf);
    assert_eq!(g.graph.weights, Some(WeightVec::U32(vec![2, 3])));
    // The largest id is 2^32 - 1.
    let big = write_file(&dir, "big.txt", b"4294967295 0\n");
    assert_eq!(read(&big).graph.num_vertices, 1 << 32);
}

#[test]
fn edge_list_weight_types() {
    let dir = scratch();
    let cases: &[(&str, WeightVec)] = &[
        ("0 1 0\n1 2 4294967295\n", WeightVec::U32(vec![0, u32::MAX])),
        ("0 1 4294967296\n1 2 1\n", WeightVec::I64(vec![1 << 32, 1])),
        (
            "0 1 -1\n1 2 5000000000\n",
            WeightVec::I64(vec![-1, 5_000_000_000]),
        ),
        ("0 1 -9223372036854775808\n", WeightVec::I64(vec![i64::MIN])),
        (
            "0 1 18446744073709551615\n1 2 7\n",
            WeightVec::U64(vec![u64::MAX, 7]),
        ),
        (
            "0 1 5000000000\n1 2 18446744073709551615\n",
            WeightVec::U64(vec![5_000_000_000, u64::MAX]),
        ),
        (
            "0 1 1\n1 2 1.5\n2 3 inf\n3 4 -inf\n4 5 1e3\n5 6 -0.0\n",
            WeightVec::F64(vec![
                1.0,
                1.5,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1000.0,
                -0.0,
            ]),
        ),
        // An integer no integer type holds with the others is fine in a real file.
        (
            "0 1 -1\n1 2 18446744073709551615\n2 3 0.5\n",
            WeightVec::F64(vec![-1.0, 18446744073709551615.0, 0.5]),
        ),
        (
            "0 1 100000000000000000000\n1 2 0.5\n",
            WeightVec::F64(vec![1e20, 0.5]),
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let p = write_file(&dir, &format!("w{i}.txt"), text.as_bytes());
        assert_eq!(read(&p).graph.weights.as_ref(), Some(want), "{text}");
    }
}

fn check_small_egr(g: &LoadedGraph, weighted: bool) {
    assert_eq!(g.format, Format::Egr);
    assert_eq!(g.vertex_base, 0);
    assert_eq!(g.arcs_in_file, 7);
    assert_eq!(g.graph.num_vertices, 4);
    // CSR order; the lone self-loop entry is an edge of its own.
    assert_eq!(edges(&g.graph), [(0, 1), (0, 1), (1, 2), (3, 3)]);
    let want = weighted.then(|| WeightVec::I32(vec![3, 3, -4, 1]));
    assert_eq!(g.graph.weights, want);
}

#[test]
fn egr_files() {
    for name in ["small.egr", "small.egr.gz", "small.egr.xz"] {
        check_small_egr(&read(&data(name)), true);
    }
    check_small_egr(&read(&data("unweighted.egr")), false);
}

#[test]
fn self_loops_pair_or_stand_alone() {
    let dir = scratch();
    // Three equal self-loop arcs: the first two pair, the third is an edge of its own.
    let p = write_file(
        &dir,
        "loops.gr",
        b"p sp 2 5\na 1 1 4\na 1 1 4\na 1 2 9\na 1 1 4\na 2 1 9\n",
    );
    let g = read(&p);
    assert_eq!(edges(&g.graph), [(0, 0), (0, 1), (0, 0)]);
    assert_eq!(g.graph.weights, Some(WeightVec::U32(vec![4, 9, 4])));
    assert_eq!(g.arcs_in_file, 5);
    // Self-loops with different weights do not pair.
    let p = write_file(&dir, "loops2.gr", b"p sp 1 2\na 1 1 4\na 1 1 5\n");
    assert_eq!(read(&p).graph.weights, Some(WeightVec::U32(vec![4, 5])));
}

#[test]
fn many_parallel_arcs_pair_in_order() {
    // 3 forward arcs first, then the 3 reverse arcs: three edges, numbered by the forward
    // arcs; weights distinguish two groups.
    let dir = scratch();
    let p = write_file(
        &dir,
        "par.gr",
        b"p sp 2 8\na 1 2 1\na 1 2 2\na 1 2 1\na 2 1 1\na 1 2 1\na 2 1 2\na 2 1 1\na 2 1 1\n",
    );
    let g = read(&p);
    assert_eq!(edges(&g.graph), [(0, 1); 4]);
    assert_eq!(g.graph.weights, Some(WeightVec::U32(vec![1, 2, 1, 1])));
}

#[test]
fn long_lines_and_buffer_boundaries() {
    // A 3 MB comment line (the line buffer grows), then arcs straddling buffer refills.
    let mut text = format!("c {}\np sp 3 200000\n", "x".repeat(3 << 20));
    for i in 0..100_000u32 {
        text.push_str(&format!("a 1 2 {i}\na 2 1 {i}\n"));
    }
    let dir = scratch();
    for (name, bytes) in [
        ("long.gr", text.clone().into_bytes()),
        ("long.gr.gz", gz(text.as_bytes())),
    ] {
        let g = read(&write_file(&dir, name, &bytes));
        assert_eq!(g.graph.num_edges(), 100_000, "{name}");
        assert_eq!(g.arcs_in_file, 200_000);
        let Some(WeightVec::U32(w)) = &g.graph.weights else {
            panic!("{name}")
        };
        assert!(w.iter().enumerate().all(|(i, &x)| x == i as u32));
    }
    // Progress on a multi-megabyte file: bounded calls, increasing, ending at the size.
    let calls = RefCell::new(Vec::new());
    let record = |done: u64, total: Option<u64>| calls.borrow_mut().push((done, total));
    let p = dir.join("long.gr");
    read_graph(&p, Format::Auto, Some(&record)).unwrap();
    let calls = calls.into_inner();
    let size = std::fs::metadata(&p).unwrap().len();
    assert!((2..=4).contains(&calls.len()), "{calls:?}");
    assert_eq!(*calls.last().unwrap(), (size, Some(size)));
    assert!(calls.windows(2).all(|w| w[0].0 < w[1].0), "{calls:?}");
}

#[test]
fn progress_reports_bytes_of_the_file() {
    let calls = RefCell::new(Vec::new());
    let record = |done: u64, total: Option<u64>| calls.borrow_mut().push((done, total));
    let path = data("small.gr.xz");
    let size = std::fs::metadata(&path).unwrap().len();
    read_graph(&path, Format::Auto, Some(&record)).unwrap();
    let calls = calls.into_inner();
    assert!(!calls.is_empty());
    assert_eq!(*calls.last().unwrap(), (size, Some(size)));
    assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0), "{calls:?}");
}

// ---------------------------------------------------------------------------------------
// Errors

#[test]
fn missing_file_is_an_invalid_argument() {
    let e = read_graph(Path::new("/nonexistent/dir/g.gr"), Format::Auto, None).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(e.message().contains("/nonexistent/dir/g.gr"), "{e}");
    assert!(e.message().contains("No such file"), "{e}");
    let dir = scratch();
    let e = read_graph(&dir, Format::Auto, None).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(e.message().contains("directory"), "{e}");
}

#[test]
fn dimacs_errors_name_the_line() {
    let cases: &[(&str, u64, &str)] = &[
        ("c x\np sp 3 2\na 1 x 3\na 2 1 3\n", 3, "expected 'a U V W'"),
        ("p sp 3 2\na 1 2\n", 2, "expected 'a U V W'"),
        ("p sp 3 2\na 1 2 3 4\n", 2, "expected 'a U V W'"),
        (
            "p sp 3 2\na 0 2 3\n",
            2,
            "vertex id 0 is out of range 1..=3",
        ),
        ("p sp 3 2\na 1 4 3\n", 2, "vertex id 4 is out of range"),
        ("p sp 3 2\na 1 4294967297 3\n", 2, "out of range"),
        ("p sp 3 2\na 1 2 1.5\n", 2, "integer weight"),
        ("p sp 3 2\na 1 2 -\n", 2, "integer weight"),
        ("p sp 3 1\na 1 2 99999999999999999999999\n", 2, "64-bit"),
        ("c x\na 1 2 3\np sp 3 2\n", 2, "before the 'p sp N M' line"),
        (
            "p sp 3 2\nc\np sp 3 2\n",
            3,
            "second 'p' line (the first is line 1)",
        ),
        ("p sp x 2\n", 1, "expected 'p sp N M'"),
        ("p max 3 2\n", 1, "expected 'p sp N M'"),
        ("p sp 8589934592 2\n", 1, "32-bit"),
        (
            "p sp 3 2\nx 1 2 3\n",
            2,
            "expected a 'c', 'p sp N M' or 'a U V W' line",
        ),
        (
            "p sp 3 2\na 1 2 3\na 2 1 3\na 2 3 1\n",
            4,
            "more arcs than the 2 declared",
        ),
        (
            "p sp 3 4\na 1 2 3\na 2 1 3\na 2 3 1\n",
            4,
            "ends after 3 arcs but the header declares 4",
        ),
        ("c only comments\n", 1, "without a 'p sp N M' line"),
        ("", 1, "without a 'p sp N M' line"),
        // 2 -> 3 (line 4) is never matched; 1 -> 2 pairs with 2 -> 1.
        (
            "c\np sp 3 4\na 1 2 3\na 2 3 1\na 2 1 3\na 3 2 2\n",
            4,
            "arc 2 -> 3 has no partner 3 -> 2",
        ),
        // Mismatched weights leave both arcs unpaired: the error names the first.
        (
            "p sp 3 2\na 1 2 3\na 2 1 4\n",
            2,
            "arc 1 -> 2 has no partner",
        ),
        (
            "p sp 3 3\na 1 2 3\na 2 1 3\na 1 2 3\n",
            4,
            "arc 1 -> 2 has no partner",
        ),
    ];
    for (text, line, needle) in cases {
        let m = error_of("bad.gr", text, Some(*line));
        assert!(m.contains(needle), "{text:?}: expected '{needle}' in: {m}");
    }
}

#[test]
fn huge_declared_counts_do_not_allocate() {
    // 10^12 arcs declared, 3 present: a reservation of the declared size would abort.
    let m = error_of(
        "lie.gr",
        "p sp 3 1000000000000\na 1 2 1\na 2 1 1\na 2 3 4\n",
        Some(4),
    );
    assert!(
        m.contains("ends after 3 arcs but the header declares 1000000000000"),
        "{m}"
    );
    let m = error_of(
        "lie.mtx",
        "%%MatrixMarket matrix coordinate integer general\n4294967296 4294967296 1000000000000\n1 2 1\n",
        Some(3),
    );
    assert!(m.contains("ends after 1 entries"), "{m}");
    // The same lies behind compression.
    let dir = scratch();
    let p = write_file(
        &dir,
        "lie.gr.xz",
        &xz(b"p sp 3 1000000000000\na 1 2 1\na 2 1 1\na 2 3 4\n"),
    );
    assert!(error_at(&p, Some(4)).contains("declares 1000000000000"));

    // An .egr header claiming 2^31 - 1 vertices and arcs in a tiny file.
    let mut bytes = Vec::new();
    for x in [i32::MAX, i32::MAX, 0, 1, 2] {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    let p = write_file(&dir, "lie.egr", &bytes);
    let m = error_at(&p, None);
    assert!(m.contains("the file has 20 bytes"), "{m}");
    let p = write_file(&dir, "lie.egr.gz", &gz(&bytes));
    let m = error_at(&p, None);
    assert!(
        m.contains("ends after 3 of the n + 1 = 2147483648 offsets"),
        "{m}"
    );
    let p = write_file(&dir, "lie2.egr.xz", &xz(&bytes));
    assert!(error_at(&p, None).contains("offsets"));
}

#[test]
fn corrupt_compressed_streams() {
    let dir = scratch();
    // A long enough file that corruption lands in the middle of the data.
    let mut text = String::from("p sp 1000 20000\n");
    for i in 0..10000u32 {
        let (u, v, w) = (i % 1000 + 1, (i * 7) % 1000 + 1, i % 97);
        text.push_str(&format!("a {u} {v} {w}\na {v} {u} {w}\n"));
    }
    let g = write_file(&dir, "ok.gr", text.as_bytes());
    assert_eq!(read(&g).graph.num_edges(), 10000);
    for (ext, bytes) in [("gz", gz(text.as_bytes())), ("xz", xz(text.as_bytes()))] {
        // Truncated.
        let cut = &bytes[..bytes.len() / 2];
        let p = write_file(&dir, &format!("cut.gr.{ext}"), cut);
        let e = read_graph(&p, Format::Auto, None).unwrap_err();
        assert_eq!(e.status(), Status::InvalidGraph, "{e}");
        assert!(e.message().starts_with(&format!("{}:", p.display())), "{e}");
        assert!(
            e.message().chars().filter(|&c| c == ':').count() >= 2,
            "{e}"
        );
        // Garbled in the middle.
        let mut bad = bytes.clone();
        let mid = bad.len() / 2;
        for b in &mut bad[mid..mid + 16] {
            *b ^= 0x5a;
        }
        let p = write_file(&dir, &format!("garbled.gr.{ext}"), &bad);
        let e = read_graph(&p, Format::Auto, None).unwrap_err();
        assert_eq!(e.status(), Status::InvalidGraph, "{ext}: {e}");
        // Cut inside the header of the stream.
        let p = write_file(&dir, &format!("stub.gr.{ext}"), &bytes[..4]);
        let e = read_graph(&p, Format::Auto, None).unwrap_err();
        assert_eq!(e.status(), Status::InvalidGraph, "{ext}: {e}");
    }
    // Error lines are counted in decompressed text.
    let p = write_file(&dir, "bad.gr.gz", &gz(b"p sp 2 2\na 1 2 1\na 1 q 1\n"));
    assert!(error_at(&p, Some(3)).contains("expected 'a U V W'"));
}

#[test]
fn matrix_market_errors_name_the_line() {
    let h = "%%MatrixMarket matrix coordinate integer general\n";
    let cases: Vec<(String, u64, &str)> = vec![
        ("3 3 1\n1 2 3\n".into(), 1, "expected the header"),
        ("".into(), 1, "empty"),
        (
            "%%MatrixMarket matrix array real general\n2 2\n".into(),
            1,
            "'array'",
        ),
        (
            "%%MatrixMarket matrix coordinate complex general\n".into(),
            1,
            "complex",
        ),
        (
            "%%MatrixMarket matrix coordinate real hermitian\n".into(),
            1,
            "'hermitian'",
        ),
        (
            "%%MatrixMarket matrix coordinate real skew-symmetric\n".into(),
            1,
            "'skew-symmetric'",
        ),
        (
            "%%MatrixMarket matrix coordinate real weird\n".into(),
            1,
            "symmetry",
        ),
        (
            "%%MatrixMarket vector coordinate real general\n".into(),
            1,
            "object",
        ),
        (format!("{h}% c\n3 4 2\n"), 3, "3 x 4"),
        (format!("{h}3 3\n"), 2, "size line"),
        (format!("{h}3 3 x\n"), 2, "size line"),
        (
            format!("{h}3 3 2\n1 2 3\n2 1 3\n1 3 1\n"),
            5,
            "more entries than the 2 declared",
        ),
        (
            format!("{h}3 3 3\n1 2 3\n2 1 3\n"),
            4,
            "ends after 2 entries but the header declares 3",
        ),
        (format!("{h}%\n"), 2, "without the size line"),
        (
            format!("{h}3 3 2\n1 2\n"),
            3,
            "expected an entry 'i j value'",
        ),
        (format!("{h}3 3 2\n1 2 3 4\n"), 3, "expected an entry"),
        (
            format!("{h}3 3 2\n0 2 3\n"),
            3,
            "index 0 is out of range 1..=3",
        ),
        (format!("{h}3 3 2\n1 4 3\n"), 3, "index 4 is out of range"),
        (
            format!("{h}3 3 2\n1 2 2.5\n"),
            3,
            "expected an integer value",
        ),
        (
            format!("{h}3 3 2\n1 2 3\n2 1 4\n"),
            3,
            "entry 1 -> 2 has no partner 2 -> 1",
        ),
        (
            format!("{h}3 3 3\n1 2 3\n2 3 1\n2 1 3\n"),
            4,
            "entry 2 -> 3 has no partner",
        ),
        (
            "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n1 2 1\n".into(),
            3,
            "expected an entry 'i j'",
        ),
        (
            "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 2 1\n2 1 nan\n".into(),
            4,
            "NaN",
        ),
        (
            "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 x\n".into(),
            3,
            "expected a real value",
        ),
    ];
    for (text, line, needle) in &cases {
        let m = error_of("bad.mtx", text, Some(*line));
        assert!(m.contains(needle), "{text:?}: expected '{needle}' in: {m}");
    }
}

#[test]
fn edge_list_errors_name_the_line() {
    let cases: &[(&str, u64, &str)] = &[
        (
            "0 1 2\n1 2\n",
            2,
            "has no weight, but the first edge (line 1) has one",
        ),
        (
            "# c\n0 1\n\n1 2 3\n",
            4,
            "has a weight, but the first edge (line 2) has none",
        ),
        ("0 1 2\n1 2 nan\n", 2, "NaN"),
        ("0 1 2\n1 2 NaN\n", 2, "NaN"),
        ("0 1 2\n1 2 3 4\n", 2, "more fields"),
        ("0\n", 1, "expected 'u v' or 'u v w'"),
        ("0 x 1\n", 1, "non-negative integer vertex ids"),
        ("-1 2 1\n", 1, "non-negative integer vertex ids"),
        (
            "0 4294967296 1\n",
            1,
            "vertex id 4294967296 is out of range",
        ),
        ("0 1 abc\n", 1, "expected a number as the weight"),
        (
            "0 1 -1\n1 2 18446744073709551615\n",
            2,
            "does not fit one integer type",
        ),
        (
            "0 1 1\n1 2 -99999999999999999999\n",
            2,
            "outside the 64-bit integer range",
        ),
    ];
    for (text, line, needle) in cases {
        let m = error_of("bad.txt", text, Some(*line));
        assert!(m.contains(needle), "{text:?}: expected '{needle}' in: {m}");
    }
}

fn egr_bytes(n: i32, offsets: &[i32], targets: &[i32], weights: Option<&[i32]>) -> Vec<u8> {
    let mut b = Vec::new();
    let mut put = |x: i32| b.extend_from_slice(&x.to_le_bytes());
    put(n);
    put(targets.len() as i32);
    offsets.iter().for_each(|&x| put(x));
    targets.iter().for_each(|&x| put(x));
    if let Some(w) = weights {
        w.iter().for_each(|&x| put(x));
    }
    b
}

#[test]
fn egr_errors() {
    let dir = scratch();
    let ok = egr_bytes(2, &[0, 1, 2], &[1, 0], Some(&[5, 5]));
    assert_eq!(
        edges(&read(&write_file(&dir, "ok.egr", &ok)).graph),
        [(0, 1)]
    );
    let mut extra_bytes = ok.clone();
    extra_bytes.extend_from_slice(&[1, 2]);
    let mut half_weights = egr_bytes(2, &[0, 1, 2], &[1, 0], None);
    half_weights.extend_from_slice(&5i32.to_le_bytes());
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![1, 0, 0], "too few for the int32 header"),
        (egr_bytes(-1, &[0], &[], None), "non-negative"),
        (egr_bytes(2, &[1, 1, 2], &[1, 0], None), "offsets[0] is 1"),
        (
            egr_bytes(2, &[0, 3, 2], &[1, 0], None),
            "offsets[2] = 2 is less than offsets[1] = 3",
        ),
        (
            egr_bytes(2, &[0, 1, 1], &[1, 0], None),
            "offsets[n] = offsets[2] is 1, but m is 2",
        ),
        (
            egr_bytes(2, &[0, 1, 2], &[1, 2], None),
            "targets[1] = 2 is out of range 0..2",
        ),
        (egr_bytes(2, &[0, 1, 2], &[1, -1], None), "targets[1] = -1"),
        (extra_bytes, "the file has 38 bytes"),
        (half_weights, "the file has 32 bytes"),
        (
            egr_bytes(3, &[0, 1, 2, 2], &[1, 2], Some(&[5, 5])),
            "entry 0 (arc 0 -> 1) has no reverse arc 1 -> 0",
        ),
        (
            egr_bytes(2, &[0, 1, 2], &[1, 0], Some(&[5, 6])),
            "entry 0 (arc 0 -> 1) has no reverse arc",
        ),
    ];
    for (i, (bytes, needle)) in cases.iter().enumerate() {
        for (name, content) in [
            (format!("e{i}.egr"), bytes.clone()),
            (format!("e{i}.egr.gz"), gz(bytes)),
        ] {
            let p = write_file(&dir, &name, &content);
            let m = error_at(&p, None);
            // Size checks only apply where the size is known up front.
            let needle = match (name.ends_with(".gz"), i) {
                (true, 7) => "the file goes on after the last array",
                (true, 8) => "4 bytes follow the targets; expected none (no weights) or 8",
                _ => needle,
            };
            assert!(m.contains(needle), "{name}: expected '{needle}' in: {m}");
        }
    }
}

/// A `.gmst` file as the format's documentation lays it out, written by hand.
fn gmst_bytes(code: u32, n: u64, u: &[u32], v: &[u32], weights: &[u8]) -> Vec<u8> {
    let mut b = b"GPUMSTEL".to_vec();
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&code.to_le_bytes());
    b.extend_from_slice(&n.to_le_bytes());
    b.extend_from_slice(&(u.len() as u64).to_le_bytes());
    for ids in [u, v] {
        ids.iter()
            .for_each(|x| b.extend_from_slice(&x.to_le_bytes()));
        if ids.len() % 2 == 1 {
            b.extend_from_slice(&[0; 4]);
        }
    }
    b.extend_from_slice(weights);
    b
}

#[test]
fn gmst_files_are_read_as_laid_out() {
    let dir = scratch();
    let w: Vec<u8> = [7i64, -2, 9].iter().flat_map(|x| x.to_le_bytes()).collect();
    let bytes = gmst_bytes(3, 5, &[0, 4, 2], &[1, 0, 2], &w);
    assert_eq!(bytes.len(), 32 + 16 + 16 + 24);
    for (name, content) in [
        ("g.gmst", bytes.clone()),
        ("g.gmst.gz", gz(&bytes)),
        ("g.gmst.xz", xz(&bytes)),
        ("named.bin", bytes.clone()),
    ] {
        let p = write_file(&dir, name, &content);
        let format = if name.ends_with(".bin") {
            Format::Gmst
        } else {
            Format::Auto
        };
        let g = read_graph(&p, format, None).unwrap();
        assert_eq!(g.format, Format::Gmst, "{name}");
        assert_eq!(g.vertex_base, 0);
        assert_eq!(g.arcs_in_file, 3);
        assert_eq!(
            g.graph,
            EdgeListGraph {
                num_vertices: 5,
                u: vec![0, 4, 2],
                v: vec![1, 0, 2],
                weights: Some(WeightVec::I64(vec![7, -2, 9])),
            },
            "{name}"
        );
    }
    // No edges, no weights.
    let p = write_file(&dir, "empty.gmst", &gmst_bytes(0, 3, &[], &[], &[]));
    assert_eq!(
        read(&p).graph,
        EdgeListGraph {
            num_vertices: 3,
            u: vec![],
            v: vec![],
            weights: None
        }
    );
}

#[test]
fn gmst_errors() {
    let dir = scratch();
    let w32 = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let ok = gmst_bytes(2, 3, &[0, 1], &[1, 2], &w32(&[5, 6]));
    let mut extra = ok.clone();
    extra.push(0);
    let mut version = ok.clone();
    version[8] = 2;
    let nan: Vec<u8> = [1.0f64, f64::NAN]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            b"GPUMST".to_vec(),
            "does not start with the 8 bytes GPUMSTEL",
        ),
        (
            b"%%MatrixMarket matrix coordinate".to_vec(),
            "not a .gmst file",
        ),
        (ok[..20].to_vec(), "too few for the 32-byte .gmst header"),
        (version, "format version 2; this library reads version 1"),
        (
            gmst_bytes(7, 3, &[0], &[1], &[]),
            "weight type 7 is not one of 0 (none) to 6",
        ),
        (
            gmst_bytes(0, (1 << 32) + 1, &[0], &[1], &[]),
            "at most 2^32",
        ),
        (
            ok[..ok.len() - 4].to_vec(),
            "the file ends after 1 of the 2 weights",
        ),
        (
            ok[..36].to_vec(),
            "the file ends after 1 of the 2 values of u",
        ),
        (extra, "the file goes on after its last array"),
        (
            gmst_bytes(2, 3, &[0, 3], &[1, 2], &w32(&[5, 6])),
            "edge 1 (3 - 2): vertex 3 is out of range 0..3",
        ),
        (
            gmst_bytes(0, 2, &[0, 1, 1], &[1, 0, 9], &[]),
            "edge 2 (1 - 9): vertex 9",
        ),
        (
            gmst_bytes(6, 3, &[0, 1], &[1, 2], &nan),
            "edge 1 has a NaN weight",
        ),
    ];
    for (i, (bytes, needle)) in cases.iter().enumerate() {
        for (name, content) in [
            (format!("e{i}.gmst"), bytes.clone()),
            (format!("e{i}.gmst.xz"), xz(bytes)),
        ] {
            let p = write_file(&dir, &name, &content);
            let m = error_at(&p, None);
            // Plain files are checked against the header's size before any array is read.
            let needle = match (name.ends_with(".xz"), i) {
                (false, 6..=8) => "which take 56 bytes, but the file has",
                _ => needle,
            };
            assert!(m.contains(needle), "{name}: expected '{needle}' in: {m}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Writing

fn sample_graph() -> EdgeListGraph {
    EdgeListGraph {
        num_vertices: 6,
        u: vec![0, 1, 0, 3, 2, 5, 1],
        v: vec![1, 2, 1, 3, 0, 4, 0],
        weights: Some(WeightVec::U32(vec![7, 3, 7, 2, 0, 4_000_000_000, 5])),
    }
}

fn all_names(stem: &str) -> Vec<String> {
    ["", ".gz", ".xz"]
        .iter()
        .map(|c| format!("{stem}{c}"))
        .collect()
}

#[test]
fn round_trips_keep_edges_ids_and_weights() {
    let dir = scratch();
    let g = sample_graph();
    for stem in ["g.gr", "g.mtx", "g.txt"] {
        for name in all_names(stem) {
            let p = dir.join(&name);
            write_graph(&p, Format::Auto, &g).unwrap();
            let back = read(&p);
            assert_eq!(back.graph, g, "{name}");
            let arcs = if stem == "g.txt" { 7 } else { 14 };
            assert_eq!(back.arcs_in_file, arcs, "{name}");
        }
    }
    // Other weight types through the text formats.
    let mut typed = vec![
        WeightVec::I64(vec![-1, 2, i64::MIN, i64::MAX, 0, 5, 6]),
        WeightVec::U64(vec![u64::MAX, 1, 2, 3, 4, 5, 6]),
    ];
    for w in typed.drain(..) {
        let g = EdgeListGraph {
            weights: Some(w),
            ..sample_graph()
        };
        for name in ["t.gr", "t.mtx.gz", "t.txt.xz"] {
            let p = dir.join(name);
            write_graph(&p, Format::Auto, &g).unwrap();
            assert_eq!(read(&p).graph, g, "{name}");
        }
    }
    let reals = EdgeListGraph {
        weights: Some(WeightVec::F64(vec![
            1.5,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
            3.0,
            0.1,
        ])),
        ..sample_graph()
    };
    for name in ["r.mtx", "r.txt.gz"] {
        let p = dir.join(name);
        write_graph(&p, Format::Auto, &reals).unwrap();
        assert_eq!(read(&p).graph, reals, "{name}");
    }
    // f32 weights come back as the equal f64 values.
    let f = [0.1f32, 2.5, -3.0, 1e-30, 7.0, 8.0, f32::MAX];
    let g32 = EdgeListGraph {
        weights: Some(WeightVec::F32(f.to_vec())),
        ..sample_graph()
    };
    let p = dir.join("f.txt");
    write_graph(&p, Format::Auto, &g32).unwrap();
    let want = WeightVec::F64(f.iter().map(|&x| x as f64).collect());
    assert_eq!(read(&p).graph.weights, Some(want));
    // Weightless graphs: Matrix Market pattern and edge lists keep `None`; DIMACS writes 1.
    let bare = EdgeListGraph {
        weights: None,
        ..sample_graph()
    };
    for name in ["b.mtx", "b.txt"] {
        let p = dir.join(name);
        write_graph(&p, Format::Auto, &bare).unwrap();
        assert_eq!(read(&p).graph, bare, "{name}");
    }
    let p = dir.join("b.gr");
    write_graph(&p, Format::Auto, &bare).unwrap();
    assert_eq!(read(&p).graph.weights, Some(WeightVec::U32(vec![1; 7])));
    // `.gmst` keeps every weight type, and no weights, exactly.
    let weight_types = [
        Some(WeightVec::I32(vec![-1, 2, i32::MIN, i32::MAX, 0, 5, 6])),
        Some(WeightVec::U32(vec![7, 3, 7, 2, 0, 4_000_000_000, 5])),
        Some(WeightVec::I64(vec![-1, 2, i64::MIN, i64::MAX, 0, 5, 6])),
        Some(WeightVec::U64(vec![u64::MAX, 1, 2, 3, 4, 5, 6])),
        Some(WeightVec::F32(vec![
            0.1,
            -0.0,
            f32::INFINITY,
            1e-30,
            7.0,
            8.0,
            f32::MAX,
        ])),
        reals.weights.clone(),
        None,
    ];
    for weights in weight_types {
        let g = EdgeListGraph {
            weights,
            ..sample_graph()
        };
        for name in all_names("w.gmst") {
            let p = dir.join(&name);
            write_graph(&p, Format::Auto, &g).unwrap();
            let back = read(&p);
            assert_eq!(back.graph, g, "{name}");
            assert_eq!(back.arcs_in_file, 7, "{name}");
        }
    }
    // An explicit format overrides the name.
    let p = dir.join("explicit.dat");
    write_graph(&p, Format::Dimacs, &g).unwrap();
    assert_eq!(read_graph(&p, Format::Dimacs, None).unwrap().graph, g);
}

#[test]
fn written_files_look_as_documented() {
    let dir = scratch();
    let g = EdgeListGraph {
        num_vertices: 3,
        u: vec![0, 2],
        v: vec![1, 1],
        weights: Some(WeightVec::U32(vec![5, 6])),
    };
    let p = dir.join("g.gr");
    write_graph(&p, Format::Auto, &g).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('c')).collect();
    assert_eq!(
        body,
        ["p sp 3 4", "a 1 2 5", "a 2 1 5", "a 3 2 6", "a 2 3 6"]
    );
    let p = dir.join("g.mtx");
    write_graph(&p, Format::Auto, &g).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("% ")).collect();
    assert_eq!(
        lines,
        [
            "%%MatrixMarket matrix coordinate integer general",
            "3 3 4",
            "1 2 5",
            "2 1 5",
            "3 2 6",
            "2 3 6"
        ]
    );
    let p = dir.join("g.txt");
    write_graph(&p, Format::Auto, &g).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(body, ["0 1 5", "2 1 6"]);
}

/// What reading back an `.egr` gives: edges in CSR order of their first arc, each as
/// (min, max), weights as i32.
fn egr_order(g: &EdgeListGraph) -> EdgeListGraph {
    let mut order: Vec<usize> = (0..g.num_edges()).collect();
    order.sort_by_key(|&i| g.u[i].min(g.v[i]));
    let w = g.weights.as_ref().map(|w| {
        WeightVec::I32(
            order
                .iter()
                .map(|&i| match w {
                    WeightVec::U32(w) => w[i] as i32,
                    WeightVec::I32(w) => w[i],
                    WeightVec::I64(w) => w[i] as i32,
                    _ => unreachable!(),
                })
                .collect(),
        )
    });
    EdgeListGraph {
        num_vertices: g.num_vertices,
        u: order.iter().map(|&i| g.u[i].min(g.v[i])).collect(),
        v: order.iter().map(|&i| g.u[i].max(g.v[i])).collect(),
        weights: w,
    }
}

#[test]
fn egr_round_trips_in_csr_order() {
    let dir = scratch();
    let mut g = sample_graph();
    g.weights = Some(WeightVec::U32(vec![7, 3, 7, 2, 0, 40, 5]));
    for name in all_names("g.egr") {
        let p = dir.join(&name);
        write_graph(&p, Format::Auto, &g).unwrap();
        let back = read(&p);
        assert_eq!(back.graph, egr_order(&g), "{name}");
        assert_eq!(back.arcs_in_file, 14);
    }
    let bare = EdgeListGraph {
        weights: None,
        ..g.clone()
    };
    let p = dir.join("bare.egr");
    write_graph(&p, Format::Auto, &bare).unwrap();
    assert_eq!(read(&p).graph, egr_order(&bare));
    // Generated graphs survive too (with vertices beyond the last edge).
    let r = generate::random(
        1000,
        5000,
        3,
        &WeightSpec::UniformInt { low: -50, high: 50 },
    );
    let p = dir.join("r.egr.xz");
    write_graph(&p, Format::Auto, &r).unwrap();
    assert_eq!(read(&p).graph, egr_order(&r));
}

/// A plain binary file is read by position on all cores, in blocks of 64 MiB and pieces
/// of 4 MiB: a graph whose arrays span several blocks comes back whole, and a bad
/// target or a lone arc late in the file is still the one named.
#[test]
fn large_binary_files_read_in_pieces() {
    let dir = scratch();
    // 9M edges: 18M arcs, 72 MB of targets and of weights (two blocks each).
    let g = generate::random(
        1 << 18,
        9 << 20,
        5,
        &WeightSpec::UniformInt {
            low: -1000,
            high: 1000,
        },
    );
    let p = dir.join("large.egr");
    write_graph(&p, Format::Auto, &g).unwrap();
    let expected = egr_order(&g);
    assert_eq!(read(&p).graph, expected);
    let gmst = dir.join("large.gmst");
    write_graph(&gmst, Format::Auto, &g).unwrap();
    assert_eq!(read(&gmst).graph, g);

    let bytes = std::fs::read(&p).unwrap();
    let n = 1usize << 18;
    let targets_at = 4 * (2 + n + 1);
    let arcs = 2 * g.num_edges();
    // A target out of range in the second block of the targets.
    let late = arcs - 3;
    let mut bad = bytes.clone();
    bad[targets_at + 4 * late..targets_at + 4 * late + 4]
        .copy_from_slice(&(n as i32).to_le_bytes());
    let m = error_at(&write_file(&dir, "bad_target.egr", &bad), None);
    assert!(
        m.contains(&format!("targets[{late}] = {n} is out of range 0..{n}")),
        "{m}"
    );
    // A weight changed in the last piece: that arc has no reverse arc any more.
    let weights_at = targets_at + 4 * arcs;
    let mut lone = bytes;
    let at = weights_at + 4 * (arcs - 1);
    let w = i32::from_le_bytes(lone[at..at + 4].try_into().unwrap());
    lone[at..at + 4].copy_from_slice(&(w + 5000).to_le_bytes());
    let m = error_at(&write_file(&dir, "lone.egr", &lone), None);
    assert!(m.contains("has no reverse arc"), "{m}");
}

#[test]
fn unwritable_graphs_are_refused() {
    let dir = scratch();
    let reals = EdgeListGraph {
        weights: Some(WeightVec::F64(vec![1.0; 7])),
        ..sample_graph()
    };
    let big = EdgeListGraph {
        weights: Some(WeightVec::U32(vec![1, 2, 3, 4, 5, 1 << 31, 7])),
        ..sample_graph()
    };
    for (name, g, needle) in [
        ("x.gr", &reals, "integer weights"),
        ("x.egr", &reals, "int32 weights"),
        ("y.egr", &big, "edge 5 weighs 2147483648"),
    ] {
        let p = dir.join(name);
        let e = write_graph(&p, Format::Auto, g).unwrap_err();
        assert_eq!(e.status(), Status::InvalidArgument);
        assert!(e.message().contains(needle), "{e}");
        assert!(!p.exists(), "{name} was created");
    }
    let broken = EdgeListGraph {
        num_vertices: 2,
        u: vec![0],
        v: vec![2],
        weights: None,
    };
    let e = write_graph(&dir.join("z.txt"), Format::Auto, &broken).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    let nan = EdgeListGraph {
        weights: Some(WeightVec::F64(vec![1.0, 2.0, f64::NAN, 0.0, 0.0, 0.0, 0.0])),
        ..sample_graph()
    };
    let e = write_graph(&dir.join("nan.txt"), Format::Auto, &nan).unwrap_err();
    assert!(e.message().contains("edge 2 has a NaN weight"), "{e}");
    let e = write_graph(
        Path::new("/nonexistent/dir/z.txt"),
        Format::Auto,
        &sample_graph(),
    )
    .unwrap_err();
    assert_eq!(e.status(), Status::InvalidArgument);
    assert!(e.message().contains("/nonexistent/dir/z.txt"), "{e}");
}

#[test]
fn forest_edges_in_file_numbering() {
    let dir = scratch();
    let g = read(&data("small.gr"));
    let p = dir.join("forest.txt");
    write_forest_edges(&p, &g, &[0, 3, 5]).unwrap();
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "1 2 7\n4 4 2\n5 3 1\n"
    );
    let e = read(&data("unweighted.el"));
    let p = dir.join("forest2.txt.gz");
    write_forest_edges(&p, &e, &[1, 2]).unwrap();
    let back = read_graph(&p, Format::EdgeList, None).unwrap();
    assert_eq!(edges(&back.graph), [(1, 2), (3, 1)]);
    let r = read(&data("general.mtx"));
    let p = dir.join("forest3.txt");
    write_forest_edges(&p, &r, &[1]).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "2 3 -2000.0\n");
    let err = write_forest_edges(&p, &r, &[3]).unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument);
}

// ---------------------------------------------------------------------------------------
// Generators

fn in_range(g: &EdgeListGraph) -> bool {
    let n = g.num_vertices as u64;
    g.u.len() == g.v.len() && g.u.iter().chain(&g.v).all(|&x| (x as u64) < n)
}

#[test]
fn rmat_is_deterministic_and_sized() {
    let spec = WeightSpec::UniformInt { low: 1, high: 1000 };
    let a = generate::rmat(12, 8, 42, &spec);
    assert_eq!(a.num_vertices, 4096);
    assert_eq!(a.num_edges(), 8 * 4096);
    assert!(in_range(&a));
    assert_eq!(a, generate::rmat(12, 8, 42, &spec));
    let b = generate::rmat(12, 8, 43, &spec);
    assert_ne!(a.u, b.u);
    // Thread count does not matter.
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let three = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    assert_eq!(one.install(|| generate::rmat(12, 8, 42, &spec)), a);
    assert_eq!(three.install(|| generate::rmat(12, 8, 42, &spec)), a);
    // The same seed gives the same topology whatever the weights.
    let bare = generate::rmat(12, 8, 42, &WeightSpec::None);
    assert_eq!((&bare.u, &bare.v), (&a.u, &a.v));
    assert_eq!(bare.weights, None);
    // Skewed degrees: the busiest vertex has far more than the average of 16.
    let mut degree = vec![0u32; 4096];
    for &x in a.u.iter().chain(&a.v) {
        degree[x as usize] += 1;
    }
    assert!(*degree.iter().max().unwrap() > 200);
    match &a.weights {
        Some(WeightVec::U32(w)) => assert!(w.iter().all(|&x| (1..=1000).contains(&x))),
        other => panic!("{other:?}"),
    }
    let tiny = generate::rmat(0, 3, 1, &WeightSpec::Constant(9));
    assert_eq!(tiny.num_vertices, 1);
    assert_eq!(edges(&tiny), [(0, 0); 3]);
    assert_eq!(tiny.weights, Some(WeightVec::U32(vec![9; 3])));
}

#[test]
fn random_graphs() {
    let spec = WeightSpec::UniformFloat {
        low: -1.0,
        high: 2.0,
    };
    let a = generate::random(100, 200_000, 7, &spec);
    assert_eq!((a.num_vertices, a.num_edges()), (100, 200_000));
    assert!(in_range(&a));
    assert_eq!(a, generate::random(100, 200_000, 7, &spec));
    assert_ne!(a, generate::random(100, 200_000, 8, &spec));
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    assert_eq!(one.install(|| generate::random(100, 200_000, 7, &spec)), a);
    // Every vertex is hit, roughly uniformly.
    let mut degree = vec![0u32; 100];
    for &x in a.u.iter().chain(&a.v) {
        degree[x as usize] += 1;
    }
    assert!(
        degree.iter().all(|&d| (3000..5000).contains(&d)),
        "{degree:?}"
    );
    match &a.weights {
        Some(WeightVec::F64(w)) => assert!(w.iter().all(|&x| (-1.0..2.0).contains(&x))),
        other => panic!("{other:?}"),
    }
    let empty = generate::random(0, 0, 1, &WeightSpec::None);
    assert_eq!((empty.num_vertices, empty.num_edges()), (0, 0));
}

#[test]
fn weight_specs() {
    let w = |spec: WeightSpec| generate::random(10, 10_000, 5, &spec).weights;
    match w(WeightSpec::UniformInt { low: -3, high: 3 }) {
        Some(WeightVec::I64(v)) => {
            assert!(v.iter().all(|&x| (-3..=3).contains(&x)));
            assert!(v.contains(&-3) && v.contains(&3));
        }
        other => panic!("{other:?}"),
    }
    match w(WeightSpec::UniformInt {
        low: 0,
        high: u32::MAX as i64,
    }) {
        Some(WeightVec::U32(_)) => {}
        other => panic!("{other:?}"),
    }
    match w(WeightSpec::UniformInt {
        low: 0,
        high: 1 << 32,
    }) {
        Some(WeightVec::I64(v)) => assert!(v.iter().all(|&x| (0..=1 << 32).contains(&x))),
        other => panic!("{other:?}"),
    }
    match w(WeightSpec::UniformInt {
        low: i64::MIN,
        high: i64::MAX,
    }) {
        Some(WeightVec::I64(v)) => assert!(v.iter().any(|&x| x < 0) && v.iter().any(|&x| x > 0)),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        w(WeightSpec::UniformInt { low: 5, high: 5 }),
        Some(WeightVec::U32(vec![5; 10_000]))
    );
    assert_eq!(
        w(WeightSpec::UniformFloat {
            low: 2.5,
            high: 2.5
        }),
        Some(WeightVec::F64(vec![2.5; 10_000]))
    );
    match w(WeightSpec::UniformFloat {
        low: -f64::MAX,
        high: f64::MAX,
    }) {
        Some(WeightVec::F64(v)) => assert!(v.iter().all(|x| x.is_finite())),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        w(WeightSpec::Constant(4)),
        Some(WeightVec::U32(vec![4; 10_000]))
    );
    assert_eq!(w(WeightSpec::None), None);
    for bad in [
        WeightSpec::UniformInt { low: 2, high: 1 },
        WeightSpec::UniformFloat {
            low: 2.0,
            high: 1.0,
        },
        WeightSpec::UniformFloat {
            low: 0.0,
            high: f64::INFINITY,
        },
        WeightSpec::UniformFloat {
            low: f64::NAN,
            high: 1.0,
        },
    ] {
        assert_eq!(
            bad.validate().unwrap_err().status(),
            Status::InvalidArgument
        );
    }
}

#[test]
fn grids() {
    let g = generate::grid(2, 3, 1, &WeightSpec::None);
    assert_eq!(g.num_vertices, 6);
    assert_eq!(
        edges(&g),
        [(0, 1), (0, 3), (1, 2), (1, 4), (2, 5), (3, 4), (4, 5)]
    );
    for (r, c) in [(1, 1), (1, 5), (5, 1), (7, 9), (300, 200)] {
        let g = generate::grid(r, c, 3, &WeightSpec::UniformInt { low: 0, high: 9 });
        assert_eq!(g.num_vertices, r * c);
        assert_eq!(g.num_edges(), r * (c - 1) + (r - 1) * c);
        assert!(in_range(&g));
        assert!(edges(&g)
            .iter()
            .all(|&(a, b)| b == a + 1 && (b as usize) % c != 0 || b as usize == a as usize + c));
    }
    assert_eq!(generate::grid(0, 5, 1, &WeightSpec::None).num_edges(), 0);
    let a = generate::grid(50, 50, 1, &WeightSpec::Constant(1));
    assert_eq!(a, generate::grid(50, 50, 1, &WeightSpec::Constant(1)));
    let x = generate::grid(50, 50, 1, &WeightSpec::UniformInt { low: 0, high: 99 });
    let y = generate::grid(50, 50, 2, &WeightSpec::UniformInt { low: 0, high: 99 });
    assert_eq!(edges(&x), edges(&y));
    assert_ne!(x.weights, y.weights);
}

#[test]
fn generated_graphs_round_trip_through_files() {
    let dir = scratch();
    let g = generate::rmat(
        10,
        4,
        9,
        &WeightSpec::UniformInt {
            low: 0,
            high: 1 << 20,
        },
    );
    for name in ["r.gr.gz", "r.mtx", "r.txt.xz"] {
        let p = dir.join(name);
        write_graph(&p, Format::Auto, &g).unwrap();
        let back = read(&p).graph;
        assert_eq!(
            (&back.u, &back.v, &back.weights),
            (&g.u, &g.v, &g.weights),
            "{name}"
        );
        if !name.ends_with(".txt.xz") {
            assert_eq!(back.num_vertices, g.num_vertices);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Real data

#[test]
fn new_york_road_network() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/NY.gr.xz");
    if !path.exists() {
        eprintln!(
            "SKIPPED new_york_road_network: {} is absent (shared/data is not checked out \
             beside the crate), so the real-data check did not run",
            path.display()
        );
        return;
    }
    let calls = RefCell::new(0u32);
    let count = |_: u64, _: Option<u64>| *calls.borrow_mut() += 1;
    let g = read_graph(&path, Format::Auto, Some(&count)).unwrap();
    assert_eq!(g.format, Format::Dimacs);
    assert_eq!(g.graph.num_vertices, 264_346);
    assert_eq!(g.graph.num_edges(), 365_050);
    assert_eq!(g.arcs_in_file, 730_100);
    let Some(WeightVec::U32(w)) = &g.graph.weights else {
        panic!(
            "NY weights are not u32: {:?}",
            g.graph.weights.as_ref().map(|w| w.len())
        );
    };
    // The README's synthetic weight rule, w = |1 + ((u*v wrapping i32) rem n)|.
    let n = g.graph.num_vertices as i32;
    for i in (0..g.graph.num_edges()).step_by(997) {
        let (u, v) = (g.graph.u[i] as i32, g.graph.v[i] as i32);
        let want = (1 + u.wrapping_mul(v) % n).unsigned_abs();
        assert_eq!(w[i], want, "edge {i}");
    }
    assert_eq!(w.iter().filter(|&&x| x == 0).count(), 1);
    assert!(*calls.borrow() >= 1);
}
