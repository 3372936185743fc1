#!/usr/bin/env bash
# The C++ interface (include/gpumst.hpp) built the way outside projects build it, against
# an installed gpumst only (never the source tree's target/ build):
#
#   1. CMake: find_package(gpumst) from PREFIX; the GoogleTest suite of bindings/cpp/ and
#      the quick-start (shared and static); runs them.
#   2. pkg-config only: the same tests, and the quick-start as C++17 and C++20; runs them.
#      The tests also compile as C++20.
#   3. The pkg-config tests under valgrind: memory errors, definite and indirect leaks.
#   4. The tests built with AddressSanitizer and UndefinedBehaviorSanitizer (and leaks).
#   5. Misuse that must not compile: each bindings/cpp/compile_fail/*.cpp fails with the
#      message on its "// expect:" line.
#
# Usage: bash scripts/test_cpp.sh PREFIX          (scripts/test_install.sh runs it)
#   PREFIX is an installed gpumst (scripts/install.sh --prefix PREFIX); its
#   include/gpumst.hpp must be this tree's (install again, or copy it there).
# Environment:
#   GPUMST_TEST_TIER=cpu|opencl|cuda|auto   the tier the tests run on (default cpu); where
#                                           it does not open, the tests skip and say why
#   GPUMST_NO_VALGRIND=1                    leave out step 3 (reported as left out)
#   CXX                                     the compiler (default g++)
# Builds go to target/cpp-test/. Any failure exits non-zero.
set -euo pipefail

if [[ $# -ne 1 || "$1" == -h || "$1" == --help ]]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
fi
[[ -d "$1" ]] || { echo "test_cpp: PREFIX '$1' is not a directory" >&2; exit 2; }
PREFIX="$(cd "$1" && pwd)"
cd "$(dirname "$0")/.."
ROOT="$PWD"
SRC="$ROOT/bindings/cpp"
OUT="$ROOT/target/cpp-test"
CXX="${CXX:-g++}"
JOBS="$(nproc 2>/dev/null || echo 2)"
START=$SECONDS
SUMMARY=()

say() { echo "== test_cpp: $*"; }
fail() {
    echo "test_cpp: FAIL: $*" >&2
    exit 1
}

# ---- what is tested, with what ---------------------------------------------------------
for f in include/gpumst.h include/gpumst.hpp lib/libgpumst.so lib/libgpumst.a lib/pkgconfig/gpumst.pc \
    lib/cmake/gpumst/gpumstConfig.cmake; do
    [[ -e "$PREFIX/$f" ]] ||
        fail "$PREFIX/$f is missing: is PREFIX an installed gpumst (scripts/install.sh --prefix PREFIX)?"
done
cmp -s "$PREFIX/include/gpumst.hpp" include/gpumst.hpp ||
    fail "$PREFIX/include/gpumst.hpp is not this tree's include/gpumst.hpp: install again, or copy it there"
for tool in "$CXX" cmake pkg-config; do
    command -v "$tool" >/dev/null || fail "$tool is not installed"
done
use_valgrind=1
if [[ "${GPUMST_NO_VALGRIND:-}" == 1 ]]; then
    use_valgrind=0
elif ! command -v valgrind >/dev/null; then
    fail "valgrind is not installed (install it, or set GPUMST_NO_VALGRIND=1 to leave that step out)"
fi
# Only PREFIX's package, whatever else this machine has installed.
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
[[ "$(pkg-config --variable=prefix gpumst)" == "$PREFIX" ]] ||
    fail "gpumst.pc in $PREFIX/lib/pkgconfig names prefix '$(pkg-config --variable=prefix gpumst)'"
say "PREFIX $PREFIX (gpumst $(pkg-config --modversion gpumst)), $("$CXX" --version | head -1)," \
    "tier ${GPUMST_TEST_TIER:-cpu}"

rm -rf "$OUT"
mkdir -p "$OUT"
WARNINGS=(-Wall -Wextra -Wpedantic -Werror)
TEST_SOURCES=(test_support test_basics test_primitives test_msf test_files test_device)

# The binary loads libgpumst from PREFIX (an LD_LIBRARY_PATH could point elsewhere).
expect_prefix_library() {
    local resolved
    resolved="$(ldd "$1" | awk '/libgpumst/ {print $3}')"
    [[ "$resolved" == "$PREFIX/lib/"* ]] || fail "$1 loads libgpumst from '${resolved:-nowhere}', not $PREFIX/lib"
}

# run_tests LABEL COMMAND...: runs a test binary (GoogleTest's brief output), records the
# counts from its summary.
run_tests() {
    local label="$1" log="$OUT/$1.log" t0=$SECONDS rc
    shift
    say "run $label"
    set +e
    timeout -k 10 600 "$@" --gtest_brief=1 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    local passed skipped
    passed="$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\./\1/p' "$log")"
    skipped="$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?.*/\1/p' "$log")"
    if [[ $rc != 0 ]]; then
        case $rc in
            99) fail "$label: valgrind found memory errors or leaks (log: $OUT/valgrind.log, end below)
$(tail -n 80 "$OUT/valgrind.log")" ;;
            124 | 137) fail "$label: timed out" ;;
            *) fail "$label: exit status $rc (output: $log)" ;;
        esac
    fi
    [[ -n "$passed" ]] || fail "$label: no GoogleTest summary in its output"
    SUMMARY+=("$(printf '%-34s %4s passed, %s skipped  (%ss)' "$label" "$passed" "${skipped:-0}" $((SECONDS - t0)))")
}

# The quick-start prints "<tier>: weight 4, edges 0 2 4".
run_quickstart() {
    local label="$1" output
    shift
    say "run $label"
    output="$("$@")" || fail "$label: exit status $?"
    echo "$output"
    [[ "$output" =~ ^[a-z]+:\ weight\ 4,\ edges\ 0\ 2\ 4$ ]] || fail "$label printed '$output'"
    SUMMARY+=("$(printf '%-34s %s' "$label" "$output")")
}

# compile_tests DIR FLAGS...: the test sources through pkg-config, $JOBS at a time, then linked.
compile_tests() {
    local dir="$1" failed=0 name objects=()
    shift
    mkdir -p "$dir"
    for name in "${TEST_SOURCES[@]}"; do
        objects+=("$dir/$name.o")
        while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || failed=1; done
        # shellcheck disable=SC2046 # pkg-config's words are separate arguments
        "$CXX" -std=c++17 "${WARNINGS[@]}" "$@" -DGPUMST_SOURCE_DIR="\"$ROOT\"" -I"$ROOT/ffi-tests" $(pkg-config --cflags gpumst) \
            -c "$SRC/$name.cpp" -o "$dir/$name.o" &
    done
    while (($(jobs -rp | wc -l) > 0)); do wait -n || failed=1; done
    [[ $failed == 0 ]] || fail "compiling the tests into $dir failed"
    # shellcheck disable=SC2046
    "$CXX" "$@" "${objects[@]}" $(pkg-config --libs gpumst) -lgtest -lgtest_main -pthread \
        -Wl,-rpath,"$PREFIX/lib" -o "$dir/gpumst_cpp_tests"
}

# ---- 1. CMake package --------------------------------------------------------------------
t0=$SECONDS
# Optimized as users build, so that warnings only the optimizer finds show up; without
# debug information, which would double the compile time of these GoogleTest sources.
say "1. CMake: find_package(gpumst 0.1) with CMAKE_PREFIX_PATH=$PREFIX (-O2)"
cmake -S "$SRC" -B "$OUT/cmake" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_CXX_COMPILER="$CXX" >"$OUT/cmake-configure.log" 2>&1 ||
    fail "cmake configure failed: $(cat "$OUT/cmake-configure.log")"
found="$(sed -n 's/^gpumst_DIR:PATH=//p' "$OUT/cmake/CMakeCache.txt")"
[[ "$found" == "$PREFIX/lib/cmake/gpumst" ]] || fail "CMake found gpumst in '$found', not $PREFIX/lib/cmake/gpumst"
cmake --build "$OUT/cmake" -j "$JOBS" >"$OUT/cmake-build.log" 2>&1 ||
    fail "cmake build failed (log: $OUT/cmake-build.log)
$(grep -E 'error|warning' "$OUT/cmake-build.log" | head -40)"
SUMMARY+=("$(printf '%-34s %ss' "build: CMake package" $((SECONDS - t0)))")
expect_prefix_library "$OUT/cmake/gpumst_cpp_tests"
if readelf -d "$OUT/cmake/gpumst_cpp_quickstart_static" | grep -q 'NEEDED.*libgpumst'; then
    fail "gpumst_cpp_quickstart_static still needs libgpumst.so"
fi
run_tests cmake-tests "$OUT/cmake/gpumst_cpp_tests"
run_quickstart cmake-quickstart-shared "$OUT/cmake/gpumst_cpp_quickstart"
run_quickstart cmake-quickstart-static "$OUT/cmake/gpumst_cpp_quickstart_static"

# ---- 2. pkg-config -------------------------------------------------------------------------
t0=$SECONDS
# -O1 runs three times faster under valgrind than -O0; -g1 keeps file:line in its stacks.
say "2. pkg-config: $(pkg-config --cflags --libs gpumst) (-O1 -g1)"
compile_tests "$OUT/pkgconfig" -O1 -g1
for std in c++17 c++20; do
    # shellcheck disable=SC2046
    "$CXX" -std=$std "${WARNINGS[@]}" -O2 "$SRC/quickstart.cpp" $(pkg-config --cflags --libs gpumst) \
        -Wl,-rpath,"$PREFIX/lib" -o "$OUT/pkgconfig/quickstart-$std"
done
SUMMARY+=("$(printf '%-34s %ss' "build: pkg-config" $((SECONDS - t0)))")
t0=$SECONDS
say "2. also: the tests compile as C++20 (-fsyntax-only)"
for name in "${TEST_SOURCES[@]}"; do
    # shellcheck disable=SC2046
    "$CXX" -std=c++20 "${WARNINGS[@]}" -fsyntax-only -DGPUMST_SOURCE_DIR="\"$ROOT\"" -I"$ROOT/ffi-tests" $(pkg-config --cflags gpumst) \
        "$SRC/$name.cpp" &
done
failed=0
while (($(jobs -rp | wc -l) > 0)); do wait -n || failed=1; done
[[ $failed == 0 ]] || fail "the tests do not compile as C++20"
SUMMARY+=("$(printf '%-34s %ss' "compile as C++20" $((SECONDS - t0)))")
expect_prefix_library "$OUT/pkgconfig/gpumst_cpp_tests"
run_tests pkgconfig-tests "$OUT/pkgconfig/gpumst_cpp_tests"
run_quickstart pkgconfig-quickstart-c++17 "$OUT/pkgconfig/quickstart-c++17"
run_quickstart pkgconfig-quickstart-c++20 "$OUT/pkgconfig/quickstart-c++20"

# ---- 3. valgrind -----------------------------------------------------------------------------
if [[ $use_valgrind == 1 ]]; then
    # GPUMST_TEST_QUICK=1 leaves out the road graph and shrinks the largest random graphs.
    # The suppressions are the C tests' (a glibc loader false positive). libgpumst's rayon
    # workers exit unjoined, so their thread-local blocks are "possibly lost" at exit:
    # only definite and indirect leaks count.
    say "3. valgrind (GPUMST_TEST_QUICK=1; definite and indirect leaks are errors)"
    run_tests valgrind-tests env GPUMST_TEST_QUICK=1 valgrind --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect --num-callers=40 \
        --suppressions="$ROOT/ffi-tests/valgrind.supp" --log-file="$OUT/valgrind.log" "$OUT/pkgconfig/gpumst_cpp_tests"
    grep -E 'ERROR SUMMARY|definitely lost|indirectly lost' "$OUT/valgrind.log" | sed 's/^==[0-9]*== */valgrind: /'
else
    say "3. valgrind LEFT OUT (GPUMST_NO_VALGRIND=1): no memory-error or leak checking"
    SUMMARY+=("$(printf '%-34s %s' valgrind-tests "LEFT OUT (GPUMST_NO_VALGRIND=1)")")
fi

# ---- 4. AddressSanitizer + UndefinedBehaviorSanitizer ------------------------------------------
t0=$SECONDS
SANITIZE=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
say "4. AddressSanitizer + UndefinedBehaviorSanitizer: ${SANITIZE[*]} (-O0 -g1)"
compile_tests "$OUT/asan" -O0 -g1 "${SANITIZE[@]}"
SUMMARY+=("$(printf '%-34s %ss' "build: sanitizers" $((SECONDS - t0)))")
run_tests asan-ubsan-tests env ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$OUT/asan/gpumst_cpp_tests"

# ---- 5. misuse that must not compile ----------------------------------------------------------
say "5. compile_fail/: misuse stops at a static_assert with a clear message"
for file in "$SRC"/compile_fail/*.cpp; do
    expect="$(sed -n 's|^// expect: ||p' "$file")"
    [[ -n "$expect" ]] || fail "$file has no '// expect: ' line"
    log="$OUT/compile_fail-$(basename "$file" .cpp).log"
    # shellcheck disable=SC2046
    if "$CXX" -std=c++17 -fsyntax-only $(pkg-config --cflags gpumst) "$file" >"$log" 2>&1; then
        fail "$file compiled, but must not"
    fi
    grep -qF "$expect" "$log" || fail "$file did not fail with '$expect':
$(grep error "$log" | head -10)"
    echo "$(basename "$file"): refused with \"$expect\""
done
SUMMARY+=("$(printf '%-34s %s' compile-fail "$(ls "$SRC"/compile_fail/*.cpp | wc -l) programs refused as expected")")

# ---- summary ----------------------------------------------------------------------------------
say "summary (PREFIX $PREFIX, tier ${GPUMST_TEST_TIER:-cpu})"
printf '  %s\n' "${SUMMARY[@]}"
say "all passed in $((SECONDS - START))s"
