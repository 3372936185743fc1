//! `cargo fuzz run c_api`: the body is `c_api` in tests/fuzz_bodies/mod.rs (shared with
//! the corpus test tests/fuzz_corpus.rs).
#![no_main]

#[path = "../../tests/fuzz_bodies/mod.rs"]
mod bodies;
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::run(data, bodies::c_api));
