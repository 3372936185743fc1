//! Test hooks in the C ABI, compiled only with the `fault-injection` feature (never in
//! an installed library; not in `include/gpumst.h`: tests declare them themselves).

/// Makes the `n`-th input-sized allocation from now fail (0 = the next one); a
/// negative `n` disarms. Process wide. Resets the count read by
/// `gpumst_testing_injected_failures`.
#[no_mangle]
pub extern "C" fn gpumst_testing_fail_allocation_after(n: i64) {
    crate::testing::fail_allocation_after(u64::try_from(n).ok());
}

/// Allocations refused on purpose since the last `gpumst_testing_fail_allocation_after`
/// (0 or 1).
#[no_mangle]
pub extern "C" fn gpumst_testing_injected_failures() -> u64 {
    crate::testing::failures()
}
