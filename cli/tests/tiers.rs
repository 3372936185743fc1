//! Tier selection from the `gpumst` command: a machine without CUDA or OpenCL gets the
//! CPU tier from `auto`, and a clear error (never a silent fallback) from a forced GPU
//! tier.
//!
//! The driver library names are replaced through GPUMST_CUDA_LIBRARY /
//! GPUMST_OPENCL_LIBRARY with paths that do not exist, so these tests mean "no GPU"
//! on any machine. They run the command in a child process because the probe report is
//! cached per process (the library's own tier tests are in the top-level tests/tiers.rs).

use std::process::{Command, Output};

const MISSING_CUDA: &str = "/nonexistent/gpumst-test/libcuda.so.1";
const MISSING_OPENCL: &str = "/nonexistent/gpumst-test/libOpenCL.so.1";

fn gpumst_without_gpu(args: &[&str], backend: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gpumst"));
    command
        .args(args)
        .env("GPUMST_CUDA_LIBRARY", MISSING_CUDA)
        .env("GPUMST_OPENCL_LIBRARY", MISSING_OPENCL)
        .env_remove("GPUMST_BACKEND");
    if let Some(backend) = backend {
        command.env("GPUMST_BACKEND", backend);
    }
    command.output().expect("gpumst runs")
}

#[test]
fn auto_picks_the_cpu_without_gpu_drivers() {
    let out = gpumst_without_gpu(&["info", "--json"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("info --json is JSON");
    assert_eq!(report["selected"]["tier"], "cpu");
    assert!(report["selected"]["memory_bytes"].as_u64().unwrap() > 0);
    for (tier, path) in [("cuda", MISSING_CUDA), ("opencl", MISSING_OPENCL)] {
        let attempts = report["probe"][tier]["attempts"].as_array().unwrap();
        assert_eq!(
            attempts.len(),
            1,
            "{tier}: only the overriding path is tried"
        );
        assert_eq!(attempts[0]["path"], path);
        let why = attempts[0]["error"].as_str().unwrap();
        assert!(
            why.contains("No such file"),
            "{tier}: loader message kept: {why}"
        );
        assert!(report["probe"][tier]["library"].is_null());
    }
    let skipped = report["skipped"].as_array().unwrap();
    assert_eq!(
        skipped.len(),
        2,
        "both GPU tiers are reported as skipped: {skipped:?}"
    );
}

#[test]
fn forced_gpu_tier_without_a_driver_is_an_error_that_says_why() {
    for (backend, name, path) in [
        ("cuda", "CUDA", MISSING_CUDA),
        ("opencl", "OpenCL", MISSING_OPENCL),
    ] {
        let out = gpumst_without_gpu(&["info"], Some(backend));
        assert!(
            !out.status.success(),
            "GPUMST_BACKEND={backend} must not fall back to the CPU"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("backend unavailable"), "{stderr}");
        assert!(
            stderr.contains(&format!("the {name} tier is unavailable")),
            "{stderr}"
        );
        assert!(
            stderr.contains(path),
            "names the library it tried: {stderr}"
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("selected: cpu"), "{stdout}");
    }
}

#[test]
fn forced_cpu_and_bad_backend_values() {
    let out = gpumst_without_gpu(&["info"], Some("cpu"));
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("selected: cpu tier"));
    let out = gpumst_without_gpu(&["info"], Some("tpu"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("GPUMST_BACKEND='tpu'"), "{stderr}");
}
