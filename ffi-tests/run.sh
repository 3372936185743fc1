#!/usr/bin/env bash
# Builds libgpumst, compiles the C and C++ programs in ffi-tests/ against
# include/gpumst.h and the built library (shared, and once static), and runs each
# under valgrind: a failed check, a valgrind error or a definite leak fails the run.
#
# Usage: bash ffi-tests/run.sh          (from any directory)
# Environment:
#   GPUMST_NO_VALGRIND=1      run the programs without valgrind (also the only way to
#                             run where valgrind is not installed)
#   GPUMST_FFI_TEST_TIMEOUT   seconds allowed per program (default 300)
#   CC, CXX                   compilers (default gcc, g++)
#   CARGO_TARGET_DIR          honoured when locating the built library
#   GPUMST_FFI_LIBDIR         a directory holding a prebuilt libgpumst.so and .a: no
#                             cargo build (scripts/device.sh uses it on the GPU machine)
#   GPUMST_FFI_FAULT_LIBDIR   the same for a libgpumst.so built with the fault-injection
#                             feature (test_alloc_failures); without GPUMST_FFI_LIBDIR it
#                             is built into target/fault-injection
#
# test_oom runs under `ulimit -v 4000000` and without valgrind (which needs more address
# space than that); test_alloc_failures links the fault-injection build. test_device
# (device memory on the GPU tiers; PoCL's OpenCL in CI) runs without valgrind: under
# it PoCL's LLVM kernel compiler takes 3.5 minutes and reports its own leaks.
#
# The last line is "ffi-tests: N passed, M failed"; the exit status is non-zero if
# anything failed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BUILD="$HERE/build"
CC="${CC:-gcc}"
CXX="${CXX:-g++}"
TIMEOUT_S="${GPUMST_FFI_TEST_TIMEOUT:-300}"
start_time=$SECONDS

# ---- valgrind --------------------------------------------------------------------
use_valgrind=1
if [[ "${GPUMST_NO_VALGRIND:-}" == "1" ]]; then
    use_valgrind=0
    echo "ffi-tests: GPUMST_NO_VALGRIND=1: running the tests WITHOUT valgrind (no memory-error or leak checking)"
elif ! command -v valgrind >/dev/null 2>&1; then
    echo "ffi-tests: error: valgrind is not installed, and these tests run under it to catch memory errors and leaks." >&2
    echo "ffi-tests: install valgrind (e.g. apt-get install valgrind), or set GPUMST_NO_VALGRIND=1 to run without it." >&2
    exit 2
fi

# ---- the library -----------------------------------------------------------------
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
[[ "$TARGET_DIR" == /* ]] || TARGET_DIR="$ROOT/$TARGET_DIR"
LIBDIR="${GPUMST_FFI_LIBDIR:-$TARGET_DIR/release}"
[[ "$LIBDIR" == /* ]] || LIBDIR="$PWD/$LIBDIR"

# The test programs, in run order (test_api_static is test_api.c linked against libgpumst.a).
TESTS=(test_api test_api_static test_errors test_primitives test_threads test_msf test_files test_cpp
       test_device test_oom test_alloc_failures)

if [[ -n "${GPUMST_FFI_LIBDIR:-}" ]]; then
    echo "ffi-tests: using the prebuilt library in $LIBDIR"
elif echo "ffi-tests: cargo build --release --lib (in $ROOT)" && ! (cd "$ROOT" && cargo build --release --lib); then
    echo "ffi-tests: error: cargo build --release --lib failed" >&2
    echo "ffi-tests: 0 passed, ${#TESTS[@]} failed"
    exit 1
fi
# The fault-injection build (test hooks that refuse the N-th allocation).
FAULT_LIBDIR="${GPUMST_FFI_FAULT_LIBDIR:-}"
if [[ -z "$FAULT_LIBDIR" && -z "${GPUMST_FFI_LIBDIR:-}" ]]; then
    FAULT_TARGET="$TARGET_DIR/fault-injection"
    echo "ffi-tests: cargo build --release --lib --features fault-injection (into $FAULT_TARGET)"
    if (cd "$ROOT" && cargo build --release --lib --features fault-injection --target-dir "$FAULT_TARGET"); then
        FAULT_LIBDIR="$FAULT_TARGET/release"
    else
        echo "ffi-tests: error: the fault-injection build failed" >&2
    fi
fi
for lib in libgpumst.so libgpumst.a; do
    if [[ ! -f "$LIBDIR/$lib" ]]; then
        echo "ffi-tests: error: $LIBDIR/$lib was not built" >&2
        echo "ffi-tests: 0 passed, ${#TESTS[@]} failed"
        exit 1
    fi
done

# ---- compile ---------------------------------------------------------------------
mkdir -p "$BUILD"
CFLAGS=(-std=c11 -Wall -Wextra -Werror -g -O1 -I "$ROOT/include")
CXXFLAGS=(-std=c++17 -Wall -Wextra -Werror -g -O1 -I "$ROOT/include")
SHARED_LINK=(-L "$LIBDIR" "-Wl,-rpath,$LIBDIR" -lgpumst -lpthread -lm)
STATIC_LINK=("$LIBDIR/libgpumst.a" -lpthread -ldl -lm)

declare -A compiled=()
compile() { # name, then the compiler command line (without -o)
    local name="$1"
    shift
    rm -f "$BUILD/$name"
    echo "ffi-tests: compile $name"
    if "$@" -o "$BUILD/$name"; then
        compiled[$name]=1
    else
        echo "ffi-tests: FAIL $name: compilation failed" >&2
    fi
}

compile test_api "$CC" "${CFLAGS[@]}" "$HERE/test_api.c" "${SHARED_LINK[@]}"
compile test_api_static "$CC" "${CFLAGS[@]}" "$HERE/test_api.c" "${STATIC_LINK[@]}"
compile test_errors "$CC" "${CFLAGS[@]}" "$HERE/test_errors.c" "${SHARED_LINK[@]}"
compile test_primitives "$CC" "${CFLAGS[@]}" "$HERE/test_primitives.c" "${SHARED_LINK[@]}"
compile test_threads "$CC" "${CFLAGS[@]}" "$HERE/test_threads.c" "${SHARED_LINK[@]}"
compile test_msf "$CC" "${CFLAGS[@]}" "$HERE/test_msf.c" "${SHARED_LINK[@]}" -lm
compile test_files "$CC" "${CFLAGS[@]}" -D_POSIX_C_SOURCE=200809L "$HERE/test_files.c" "${SHARED_LINK[@]}"
compile test_cpp "$CXX" "${CXXFLAGS[@]}" "$HERE/test_cpp.cpp" "${SHARED_LINK[@]}"
compile test_device "$CC" "${CFLAGS[@]}" "$HERE/test_device.c" "${SHARED_LINK[@]}" -ldl
compile test_oom "$CC" "${CFLAGS[@]}" "$HERE/test_oom.c" "${SHARED_LINK[@]}"
skipped_names=()
if [[ -n "$FAULT_LIBDIR" && -f "$FAULT_LIBDIR/libgpumst.so" ]]; then
    compile test_alloc_failures "$CC" "${CFLAGS[@]}" "$HERE/test_alloc_failures.c" \
        -L "$FAULT_LIBDIR" "-Wl,-rpath,$FAULT_LIBDIR" -lgpumst -lpthread -lm
elif [[ -n "${GPUMST_FFI_LIBDIR:-}" && -z "${GPUMST_FFI_FAULT_LIBDIR:-}" ]]; then
    skipped_names+=("test_alloc_failures (GPUMST_FFI_LIBDIR given without GPUMST_FFI_FAULT_LIBDIR)")
fi

# The static binary must not need libgpumst.so at run time.
if [[ -n "${compiled[test_api_static]:-}" ]] && command -v readelf >/dev/null 2>&1; then
    if readelf -d "$BUILD/test_api_static" | grep -q 'libgpumst'; then
        echo "ffi-tests: FAIL test_api_static: it still depends on libgpumst.so" >&2
        unset 'compiled[test_api_static]'
    fi
fi

# ---- run -------------------------------------------------------------------------
# Context creation must not be steered by the caller's environment, except where a
# test sets it on purpose.
unset GPUMST_BACKEND GPUMST_CUDA_LIBRARY GPUMST_OPENCL_LIBRARY
# The sample graph files test_files reads.
export GPUMST_TEST_DATA="$ROOT/tests/data"

VALGRIND=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
          --show-leak-kinds=definite --num-callers=30
          --suppressions="$HERE/valgrind.supp")
TIMEOUT=()
if command -v timeout >/dev/null 2>&1; then
    TIMEOUT=(timeout -k 10 "$TIMEOUT_S")
fi

passed=0
failed=0
failed_names=()
for name in "${TESTS[@]}"; do
    if [[ "$name" == test_alloc_failures && ${#skipped_names[@]} -gt 0 ]]; then
        echo "ffi-tests: SKIP ${skipped_names[0]}"
        continue
    fi
    if [[ -z "${compiled[$name]:-}" ]]; then
        failed=$((failed + 1))
        failed_names+=("$name (not built)")
        continue
    fi
    env_vars=()
    if [[ "$name" == test_errors ]]; then
        # Hide any GPU driver this machine may have: the missing-GPU paths are tested.
        env_vars=(GPUMST_CUDA_LIBRARY=/nonexistent/libcuda.so.1
                  GPUMST_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1)
    fi
    log="$BUILD/$name.valgrind.log"
    rm -f "$log"
    cmd=("$BUILD/$name")
    if [[ "$name" == test_oom ]]; then
        # 4 GB of address space; valgrind cannot run inside that.
        cmd=(bash -c 'ulimit -v 4000000 && exec "$0"' "$BUILD/$name")
    elif [[ "$name" == test_device ]]; then
        echo "ffi-tests: test_device runs without valgrind (PoCL's kernel compiler under it: minutes, and its own leaks)"
    elif [[ $use_valgrind == 1 ]]; then
        cmd=("${VALGRIND[@]}" "--log-file=$log" "${cmd[@]}")
    fi
    echo "ffi-tests: run $name${env_vars[*]:+ with ${env_vars[*]}}"
    t0=$SECONDS
    if env "${env_vars[@]}" "${TIMEOUT[@]}" "${cmd[@]}"; then
        rc=0
    else
        rc=$?
    fi
    elapsed=$((SECONDS - t0))
    if [[ $rc == 0 ]]; then
        passed=$((passed + 1))
        echo "ffi-tests: PASS $name (${elapsed}s)"
    else
        failed=$((failed + 1))
        case $rc in
            99) why="valgrind reported memory errors or definite leaks" ;;
            124 | 137) why="timed out after ${TIMEOUT_S}s" ;;
            *) why="exit status $rc" ;;
        esac
        failed_names+=("$name ($why)")
        echo "ffi-tests: FAIL $name: $why (${elapsed}s)" >&2
        # A plain check failure (exit 1) explains itself above; show valgrind's log
        # for everything else (its errors, leaks, crashes with their stacks).
        if [[ $rc != 1 && -s "$log" ]]; then
            echo "---- $log (last 60 lines) ----" >&2
            tail -n 60 "$log" >&2
            echo "----" >&2
        fi
    fi
done

echo "ffi-tests: total time $((SECONDS - start_time))s$([[ $use_valgrind == 1 ]] || echo ' (without valgrind)')"
for f in "${failed_names[@]+"${failed_names[@]}"}"; do
    echo "ffi-tests: failed: $f"
done
for f in "${skipped_names[@]+"${skipped_names[@]}"}"; do
    echo "ffi-tests: skipped (not counted as passed): $f"
done
echo "ffi-tests: $passed passed, $failed failed"
[[ $failed == 0 ]]
