//! The fuzz targets' bodies (`tests/fuzz_bodies/mod.rs`, shared with `fuzz/`) over the
//! checked-in corpus: every file of `fuzz/corpus/<target>/` (which must not be empty)
//! and of `fuzz/regressions/<target>/` (inputs that once found a bug). Inputs of bugs
//! not fixed yet wait in `fuzz/known-crashes/<target>/`, which this test skips.

mod fuzz_bodies;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// Runs `body` on every file of `fuzz/<kind>/<target>/`; returns how many there were.
fn run_dir(kind: &str, target: &str, body: fn(&[u8]), required: bool) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(kind)
        .join(target);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => return 0,
        Err(e) => panic!("{}: {e}", dir.display()),
    };
    let mut paths: Vec<_> = entries
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    for path in &paths {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if catch_unwind(AssertUnwindSafe(|| body(&data))).is_err() {
            panic!("fuzz input {} fails (message above)", path.display());
        }
    }
    assert!(
        !required || !paths.is_empty(),
        "{} holds no inputs: the corpus is missing",
        dir.display()
    );
    paths.len()
}

fn run(target: &str, body: fn(&[u8])) {
    let corpus = run_dir("corpus", target, body, true);
    let regressions = run_dir("regressions", target, body, false);
    eprintln!("{target}: {corpus} corpus inputs, {regressions} regression inputs");
}

#[test]
fn read_graph_corpus() {
    run("read_graph", fuzz_bodies::read_graph);
}

#[test]
fn msf_edge_list_corpus() {
    run("msf_edge_list", fuzz_bodies::msf_edge_list);
}

#[test]
fn msf_csr_corpus() {
    run("msf_csr", fuzz_bodies::msf_csr);
}

#[test]
fn c_api_corpus() {
    run("c_api", fuzz_bodies::c_api);
}
