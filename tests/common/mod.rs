//! Test code shared by the integration tests (each test crate that says `mod common;`
//! compiles all of it and uses a part).
#![allow(dead_code)]

pub mod msf;
pub mod primitives;

use gpumst::Tier;

/// Whether `GPUMST_TEST_TIERS` (a comma list such as "cuda", for running one tier under
/// compute-sanitizer) lets the suites use `tier`; unset means every tier.
pub fn tier_selected(tier: Tier) -> bool {
    std::env::var("GPUMST_TEST_TIERS").map_or(true, |list| {
        list.split(',')
            .any(|t| t.trim().eq_ignore_ascii_case(tier.name()))
    })
}
