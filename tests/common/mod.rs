//! Test code shared by the integration tests (each test crate that says `mod common;`
//! compiles all of it and uses a part).
#![allow(dead_code)]

pub mod msf;
pub mod on_device;
pub mod primitives;

use gpumst::{Context, Options, Tier};

/// Whether `GPUMST_TEST_TIERS` (a comma list such as "cuda", for running one tier under
/// compute-sanitizer) lets the suites use `tier`; unset means every tier.
pub fn tier_selected(tier: Tier) -> bool {
    std::env::var("GPUMST_TEST_TIERS").map_or(true, |list| {
        list.split(',')
            .any(|t| t.trim().eq_ignore_ascii_case(tier.name()))
    })
}

/// Contexts of the GPU tiers this machine has, opened with `options` (its tier set to
/// each); absent or deselected tiers are reported as skipped under `suite`'s name.
pub fn gpu_contexts(suite: &str, options: Options) -> Vec<Context> {
    let mut contexts = Vec::new();
    for tier in [Tier::OpenCl, Tier::Cuda] {
        if !tier_selected(tier) {
            eprintln!("{suite}: {tier} tier skipped: not in GPUMST_TEST_TIERS");
            continue;
        }
        match Context::new(&Options {
            tier,
            ..options.clone()
        }) {
            Ok(c) => contexts.push(c),
            Err(e) => eprintln!("{suite}: {tier} tier skipped: {}", e.message()),
        }
    }
    if contexts.is_empty() {
        eprintln!("SKIPPED {suite} tests: this machine has no GPU tier");
    }
    contexts
}
