//! Link settings of libgpumst (the cdylib): an installed copy carries the SONAME that
//! scripts/install.sh passes in GPUMST_SONAME (development builds have none, so
//! programs linked against target/release find the library by its plain name).
//! Exports need no setting: rustc exports exactly the `#[no_mangle] extern "C"`
//! functions, the C API's `gpumst_*` (scripts/test_install.sh checks that list against the
//! header).

fn main() {
    println!("cargo:rerun-if-env-changed=GPUMST_SONAME");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    if let Some(soname) = std::env::var("GPUMST_SONAME")
        .ok()
        .filter(|s| linux && !s.is_empty())
    {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
    if links_with_lld() {
        // Identical code folding: monomorphized copies that compile to the same bytes
        // (i32 and u32 weights, say) are kept once. The installed library has a 5 MB
        // mark; this takes ~30 KB off. Rust promises no unique function addresses, and
        // gpumst compares none.
        println!("cargo:rustc-cdylib-link-arg=-Wl,--icf=all");
    }
}

/// Whether rustc links this build with its own lld, which takes `--icf`: the default
/// on x86_64 Linux from Rust 1.90, unless the flags choose a linker. (GNU ld, rustc's
/// linker before, rejects the option; older toolchains build without it.)
fn links_with_lld() -> bool {
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    if std::env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") {
        return false;
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.contains("linker") || flags.contains("fuse-ld") {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc).arg("--version").output() else {
        return false;
    };
    // "rustc 1.95.0 (...)": the minor version.
    let version = String::from_utf8_lossy(&out.stdout);
    version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|minor| minor.parse::<u32>().ok())
        .is_some_and(|minor| minor >= 90)
}
