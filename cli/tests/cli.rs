//! The `gpumst` command as a user runs it: the main job on real graphs, forests written
//! to files, generators, conversion, and malformed input (a message naming the line,
//! a non-zero exit, never a panic).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gpumst(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpumst"))
        .args(args)
        .env_remove("GPUMST_BACKEND")
        .output()
        .expect("gpumst runs")
}

/// `gpumst msf PATH --json --algorithm ALGORITHM`, parsed.
fn msf_json(path: &Path, algorithm: &str) -> serde_json::Value {
    json_of(&gpumst(&[
        "msf",
        path.to_str().unwrap(),
        "--json",
        "--algorithm",
        algorithm,
    ]))
}

fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "gpumst failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("--json prints JSON")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn assert_clean_failure(out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "expected failure, got success: {stderr}"
    );
    assert!(
        stderr.contains(needle),
        "stderr should mention {needle:?}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "no panic: {stderr}");
}

/// The road graphs with the answers in ../shared/data/README.md, every algorithm.
#[test]
fn road_graphs_give_the_published_forests() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    for (name, vertices, edges, forest, weight) in [
        ("NY", 264_346u64, 365_050u64, 264_345u64, 27_253_492_594u64),
        ("BAY", 321_270, 397_415, 321_269, 44_047_422_157),
    ] {
        let path = data.join(format!("{name}.gr.xz"));
        if !path.exists() {
            eprintln!(
                "SKIPPED road_graphs_give_the_published_forests for {name}: {} not found",
                path.display()
            );
            continue;
        }
        for algorithm in ["auto", "boruvka", "prim", "strut", "kruskal"] {
            let r = msf_json(&path, algorithm);
            assert_eq!(r["vertices"], vertices, "{name} {algorithm}");
            assert_eq!(r["edges"], edges, "{name} {algorithm}");
            assert_eq!(r["forest_edges"], forest, "{name} {algorithm}");
            assert_eq!(r["components"], 1, "{name} {algorithm}");
            assert_eq!(r["total_weight"], weight, "{name} {algorithm}");
            assert_eq!(r["backend"], "cpu");
            assert_eq!(r["algorithm"], algorithm);
            for t in ["load", "upload", "compute", "download"] {
                assert!(r["timings_ms"][t].as_f64().is_some(), "timing {t}");
            }
        }
    }
}

#[test]
fn the_shipped_road_graph_gives_its_known_answer() {
    // data/NY.gr.xz ships with the repository (the README's first command runs on it).
    let ny = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/NY.gr.xz");
    let r = json_of(&gpumst(&["msf", ny.to_str().unwrap(), "--json"]));
    assert_eq!(r["vertices"], 264_346);
    assert_eq!(r["edges"], 365_050);
    assert_eq!(r["forest_edges"], 264_345);
    assert_eq!(r["components"], 1);
    assert_eq!(r["total_weight"], 27_253_492_594u64);
}

#[test]
fn forest_edges_are_written_in_the_files_numbering() {
    let small = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/small.gr");
    let out_path = scratch("small-forest.txt");
    let out = gpumst(&[
        "msf",
        small.to_str().unwrap(),
        "--edges-out",
        out_path.to_str().unwrap(),
        "--json",
    ]);
    let r = json_of(&out);
    // Edges by first appearance: 0 (1-2,7) 1 (2-3,3) 2 (1-2,7) 3 (4-4,2) 4 (2-1,5) 5 (5-3,1).
    assert_eq!(r["vertices"], 5);
    assert_eq!(r["edges"], 6);
    assert_eq!(r["forest_edges"], 3);
    assert_eq!(r["components"], 2);
    assert_eq!(r["total_weight"], 9);
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert_eq!(text, "2 3 3\n2 1 5\n5 3 1\n");
    // The human-readable form says the same.
    let out = gpumst(&["msf", small.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("3 edges, 2 component(s), total weight 9"),
        "{stdout}"
    );
}

#[test]
fn maximum_forests_from_the_command_line() {
    let small = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/small.gr");
    let out_path = scratch("small-maximum.txt");
    for algorithm in ["auto", "boruvka", "prim", "strut", "kruskal"] {
        let out = gpumst(&[
            "msf",
            small.to_str().unwrap(),
            "--maximum",
            "--algorithm",
            algorithm,
            "--edges-out",
            out_path.to_str().unwrap(),
            "--json",
        ]);
        let r = json_of(&out);
        // Heaviest first: 0 (1-2,7) joins, 2 (1-2,7) and 4 (2-1,5) close cycles, then
        // 1 (2-3,3) and 5 (5-3,1) join.
        assert_eq!(r["maximum"], true);
        assert_eq!(r["forest_edges"], 3, "{algorithm}");
        assert_eq!(r["total_weight"], 11, "{algorithm}");
        let text = std::fs::read_to_string(&out_path).unwrap();
        assert_eq!(text, "1 2 7\n2 3 3\n5 3 1\n", "{algorithm}");
    }
    let out = gpumst(&["msf", small.to_str().unwrap(), "--maximum"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("maximum spanning forest") && stdout.contains("total weight 11"),
        "{stdout}"
    );
}

#[test]
fn generated_graphs_round_trip_and_agree_across_algorithms() {
    for (kind, args, file) in [
        (
            "rmat",
            vec!["--scale", "12", "--edge-factor", "8"],
            "g.gr.gz",
        ),
        (
            "random",
            vec!["--vertices", "3000", "--edges", "9000"],
            "g.mtx",
        ),
        ("grid", vec!["--rows", "50", "--cols", "60"], "g.txt.xz"),
    ] {
        let path = scratch(&format!("{kind}-{file}"));
        let mut generate = vec![
            "generate",
            kind,
            "--out",
            path.to_str().unwrap(),
            "--seed",
            "7",
        ];
        generate.extend(&args);
        let out = gpumst(&generate);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let reference = msf_json(&path, "kruskal");
        for algorithm in ["auto", "boruvka", "prim", "strut"] {
            let r = msf_json(&path, algorithm);
            for key in ["forest_edges", "components", "total_weight", "edges"] {
                assert_eq!(r[key], reference[key], "{kind} {algorithm} {key}");
            }
        }
        // Converting to .egr keeps the forest's size and weight.
        let egr = scratch(&format!("{kind}.egr"));
        let out = gpumst(&["convert", path.to_str().unwrap(), egr.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = json_of(&gpumst(&["msf", egr.to_str().unwrap(), "--json"]));
        assert_eq!(
            r["forest_edges"], reference["forest_edges"],
            "{kind} via egr"
        );
        assert_eq!(
            r["total_weight"], reference["total_weight"],
            "{kind} via egr"
        );
    }
    // Unweighted spanning forest of a connected grid: every vertex but one.
    let grid = scratch("grid-unweighted.txt");
    let out = gpumst(&[
        "generate",
        "grid",
        "--rows",
        "20",
        "--cols",
        "30",
        "--weights",
        "none",
        "--out",
        grid.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let r = json_of(&gpumst(&[
        "msf",
        grid.to_str().unwrap(),
        "--json",
        "--unweighted",
    ]));
    assert_eq!(r["forest_edges"], 599);
}

#[test]
fn malformed_files_fail_with_the_line() {
    let cases: [(&str, &str, &str); 6] = [
        ("bad.gr", "p sp 3 2\na 1 2 5\na 2 x 5\n", ":3"),
        (
            "unpaired.gr",
            "p sp 3 2\na 1 2 5\na 2 3 5\n",
            ":2: arc 1 -> 2 has no partner",
        ),
        ("short.gr", "p sp 3 4\na 1 2 5\na 2 1 5\n", "header"),
        ("range.gr", "p sp 3 2\na 1 9 5\na 9 1 5\n", ":2"),
        ("nan.txt", "0 1 2.5\n1 2 nan\n", ":2"),
        (
            "huge.gr",
            "p sp 3 1000000000000\na 1 2 5\na 2 1 5\n",
            "header",
        ),
    ];
    for (name, text, needle) in cases {
        let path = scratch(name);
        std::fs::write(&path, text).unwrap();
        let out = gpumst(&["msf", path.to_str().unwrap()]);
        assert_clean_failure(&out, needle);
        assert_clean_failure(&out, name);
    }
    // Garbled compression, a missing file, bad options.
    let garbled = scratch("garbled.gr.xz");
    std::fs::write(&garbled, b"\xfd7zXZ\x00garbage garbage garbage").unwrap();
    assert_clean_failure(
        &gpumst(&["msf", garbled.to_str().unwrap()]),
        "garbled.gr.xz",
    );
    assert_clean_failure(
        &gpumst(&["msf", "/nonexistent/graph.gr"]),
        "/nonexistent/graph.gr",
    );
    assert_clean_failure(
        &gpumst(&["msf", "x.gr", "--algorithm", "dijkstra"]),
        "unknown algorithm",
    );
    assert_clean_failure(&gpumst(&["generate", "rmat", "--out", "x.gr"]), "--scale");
    assert_clean_failure(
        &gpumst(&[
            "generate",
            "grid",
            "--rows",
            "3",
            "--cols",
            "3",
            "--weights",
            "int:5:1",
            "--out",
            "x.gr",
        ]),
        "weights",
    );
}

#[test]
fn forced_backends_on_msf() {
    let small = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/small.txt");
    let r = json_of(&gpumst(&[
        "msf",
        small.to_str().unwrap(),
        "--json",
        "--backend",
        "cpu",
        "--threads",
        "1",
    ]));
    assert_eq!(r["backend"], "cpu");
    let out = Command::new(env!("CARGO_BIN_EXE_gpumst"))
        .args(["msf", small.to_str().unwrap(), "--backend", "cuda"])
        .env("GPUMST_CUDA_LIBRARY", "/nonexistent/libcuda.so.1")
        .output()
        .unwrap();
    assert_clean_failure(&out, "CUDA tier is unavailable");
}

/// `--device-inputs` on the OpenCL tier (PoCL in CI): the graph in device memory gives
/// the host call's forest; on the CPU tier it is refused with a reason.
#[test]
fn device_inputs_give_the_same_forest() {
    let small = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/small.txt");
    let out = gpumst(&[
        "msf",
        small.to_str().unwrap(),
        "--backend",
        "cpu",
        "--device-inputs",
    ]);
    assert_clean_failure(&out, "--device-inputs needs a GPU tier");
    let path = scratch("device_inputs.txt");
    let generated = gpumst(&[
        "generate",
        "random",
        "--vertices",
        "3000",
        "--edges",
        "20000",
        "--seed",
        "5",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(generated.status.success(), "{generated:?}");
    let out = gpumst(&[
        "msf",
        path.to_str().unwrap(),
        "--backend",
        "opencl",
        "--json",
        "--repeat",
        "2",
        "--device-inputs",
    ]);
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("unavailable") {
        eprintln!(
            "SKIPPED device inputs on OpenCL: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let r = json_of(&out);
    assert_eq!(
        r["device_inputs"]["forest_matches_host_inputs"], true,
        "{r}"
    );
    assert!(
        r["device_inputs"]["end_to_end_ms"].as_f64().unwrap() > 0.0,
        "{r}"
    );
}

/// The issue-18 reproduction: a file declaring 2^32 vertices and one edge. Under a
/// 4 GB address-space limit the command reports what it could not allocate and exits
/// with status 1 (no abort); without the limit it computes the forest (isolated
/// vertices cost address space, not memory).
#[test]
fn a_huge_declared_vertex_count_fails_cleanly_or_works() {
    let path = scratch("huge.gr");
    std::fs::write(&path, "p sp 4294967296 2\na 1 2 3\na 2 1 3\n").unwrap();
    let out = Command::new("bash")
        .args(["-c", "ulimit -v 4000000 && exec \"$0\" msf \"$1\""])
        .arg(env!("CARGO_BIN_EXE_gpumst"))
        .arg(&path)
        .env("GPUMST_BACKEND", "cpu")
        .output()
        .expect("bash runs");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_clean_failure(&out, "out of memory: could not allocate");
    assert_clean_failure(&out, "bytes of host memory for the union-find parents");

    let out = gpumst(&["msf", path.to_str().unwrap(), "--json", "--backend", "cpu"]);
    let json = json_of(&out);
    assert_eq!(json["forest_edges"], 1, "{json}");
    assert_eq!(json["components"], 4294967295u64, "{json}");
    assert_eq!(json["total_weight"], 3, "{json}");
}

/// Compiles C source `code` into a shared library named `name` in the scratch area.
fn fake_driver(name: &str, code: &str) -> PathBuf {
    let source = scratch(&format!("{name}.c"));
    let library = scratch(name);
    std::fs::write(&source, code).unwrap();
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-o"])
        .arg(&library)
        .arg(&source)
        .status()
        .expect("a C compiler runs");
    assert!(status.success(), "compiling {name}");
    library
}

/// Driver libraries that load but misbehave: the probe reports what went wrong,
/// `auto` falls back to the CPU, and a forced tier fails with the reason.
#[test]
fn misbehaving_drivers_are_reported_and_auto_falls_back() {
    // Every symbol the probe needs, but cuInit fails (CUDA_ERROR_NO_DEVICE = 100).
    let init_fails = fake_driver(
        "libcuda-init-fails.so",
        "int cuInit(unsigned f) { (void)f; return 100; }\n\
         int cuDriverGetVersion(int *v) { *v = 12040; return 0; }\n\
         int cuDeviceGetCount(int *n) { *n = 1; return 0; }\n\
         int cuDeviceGet(int *d, int o) { *d = o; return 0; }\n\
         int cuDeviceGetName(char *s, int n, int d) { (void)d; if (n) s[0] = 0; return 0; }\n\
         int cuDeviceTotalMem_v2(unsigned long *b, int d) { (void)d; *b = 0; return 0; }\n\
         int cuDeviceGetAttribute(int *v, int a, int d) { (void)a; (void)d; *v = 9; return 0; }\n",
    );
    // A library without the driver API's symbols.
    let symbols_missing = fake_driver(
        "libcuda-symbols-missing.so",
        "int cuInit(unsigned f) { (void)f; return 0; }\n",
    );
    // An OpenCL loader whose clGetPlatformIDs fails (CL_OUT_OF_HOST_MEMORY = -6).
    let opencl_fails = fake_driver(
        "libOpenCL-fails.so",
        "typedef void *h;\n\
         int clGetPlatformIDs(unsigned n, h *p, unsigned *c) { (void)n; (void)p; if (c) *c = 1; return -6; }\n\
         int clGetPlatformInfo(h p, unsigned i, unsigned long s, void *v, unsigned long *r) \
         { (void)p; (void)i; (void)s; (void)v; (void)r; return -6; }\n\
         int clGetDeviceIDs(h p, unsigned long t, unsigned n, h *d, unsigned *c) \
         { (void)p; (void)t; (void)n; (void)d; (void)c; return -6; }\n\
         int clGetDeviceInfo(h d, unsigned i, unsigned long s, void *v, unsigned long *r) \
         { (void)d; (void)i; (void)s; (void)v; (void)r; return -6; }\n",
    );
    let small = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/small.txt");
    let run = |cuda: &Path, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_gpumst"))
            .args(args)
            .env_remove("GPUMST_BACKEND")
            .env("GPUMST_CUDA_LIBRARY", cuda)
            .env("GPUMST_OPENCL_LIBRARY", &opencl_fails)
            .output()
            .expect("gpumst runs")
    };
    for (cuda, reason) in [
        (&init_fails, "cuInit returned CUDA error 100"),
        (&symbols_missing, "cuDriverGetVersion"),
    ] {
        let info = json_of(&run(cuda, &["info", "--json"]));
        let cuda_error = info["probe"]["cuda"]["error"].as_str().unwrap_or_default();
        assert!(cuda_error.contains(reason), "{info}");
        let opencl_error = info["probe"]["opencl"]["error"]
            .as_str()
            .unwrap_or_default();
        assert!(opencl_error.contains("-6"), "{info}");

        let auto = json_of(&run(cuda, &["msf", small.to_str().unwrap(), "--json"]));
        assert_eq!(auto["backend"], "cpu", "{auto}");

        let forced = run(cuda, &["msf", small.to_str().unwrap(), "--backend", "cuda"]);
        assert_clean_failure(&forced, reason);
        let forced = run(
            cuda,
            &["msf", small.to_str().unwrap(), "--backend", "opencl"],
        );
        assert_clean_failure(&forced, "-6");
    }
}

/// `--device-memory-limit` on the CPU tier: a graph whose working memory is over the cap
/// is solved a part at a time, the same forest written out; a cap below the vertices'
/// arrays is a clean failure with the sizes.
#[test]
fn a_cpu_memory_cap_gives_the_same_forest() {
    let graph = scratch("capped.gmst");
    let graph = graph.to_str().unwrap();
    let out = gpumst(&[
        "generate",
        "random",
        "--vertices",
        "2000",
        "--edges",
        "200000",
        "--seed",
        "5",
        "--out",
        graph,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = |cap: &str, forest: &Path| {
        json_of(&gpumst(&[
            "msf",
            graph,
            "--backend",
            "cpu",
            "--threads",
            "2",
            "--json",
            "--device-memory-limit",
            cap,
            "--edges-out",
            forest.to_str().unwrap(),
        ]))
    };
    let (whole, parts) = (scratch("uncapped.txt"), scratch("capped.txt"));
    let uncapped = run("0", &whole);
    // ~3.3 MB of working memory uncapped (`auto`, 16 bytes an edge at this size).
    let capped = run("1000000", &parts);
    assert_eq!(capped["forest_edges"], uncapped["forest_edges"]);
    assert_eq!(capped["total_weight"], uncapped["total_weight"]);
    assert_eq!(
        std::fs::read(&parts).unwrap(),
        std::fs::read(&whole).unwrap(),
        "the forests written out"
    );
    let out = gpumst(&[
        "msf",
        graph,
        "--backend",
        "cpu",
        "--device-memory-limit",
        "100000",
    ]);
    assert_clean_failure(&out, "memory cap of 100000 bytes is too small");
}
