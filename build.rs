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
}
