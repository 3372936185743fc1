//! include/gpumst.h must be exactly what the pinned cbindgen (Cargo.lock) generates
//! from src/ffi/mod.rs. To regenerate: GPUMST_BLESS_HEADER=1 cargo test --test header

use std::path::Path;

#[test]
fn header_matches_the_rust_source() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/ffi/mod.rs"))
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("header is UTF-8");
    let path = root.join("include/gpumst.h");
    if std::env::var_os("GPUMST_BLESS_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write include/gpumst.h");
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/gpumst.h is stale: regenerate it with `GPUMST_BLESS_HEADER=1 cargo test --test header` and commit it"
    );
    for needed in [
        "gpumst_context_create",
        "GPUMST_VERSION_MAJOR",
        "gpumst_segmented_argmin",
        "typedef struct gpumst_context gpumst_context",
    ] {
        assert!(generated.contains(needed), "header lacks {needed}");
    }
}
