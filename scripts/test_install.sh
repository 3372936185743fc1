#!/usr/bin/env bash
# gpumst as an installed system library: installs into a temporary prefix (and once more
# staged under DESTDIR), checks what a packager checks (SONAME and links, exactly the C
# API exported, the library's size, the .pc and CMake files), then builds and runs the
# consumers against the installed files only, never the build tree: the README's C
# example (pkg-config, shared and static), the command, the C++ tests (CMake package and
# pkg-config; GoogleTest under valgrind and AddressSanitizer: scripts/test_cpp.sh) and
# the Go package (go vet, go test -race: scripts/test_go.sh).
#
# Usage: bash scripts/test_install.sh      (scripts/test.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
WORK="$ROOT/target/install-test"
PREFIX="$WORK/prefix"
rm -rf "$WORK"
mkdir -p "$WORK"
fail() { echo "test_install: FAIL: $*" >&2; exit 1; }

echo "== install into $PREFIX"
bash scripts/install.sh --prefix "$PREFIX"
LIB="$PREFIX/lib"
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
REAL="libgpumst.so.$VERSION"

echo "== SONAME and symlinks"
soname=$(readelf -d "$LIB/$REAL" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ "$soname" == "libgpumst.so.0.${VERSION#0.}" || "$soname" == libgpumst.so.0.* ]] || fail "SONAME is '$soname'"
[[ "$(readlink "$LIB/$soname")" == "$REAL" ]] || fail "$soname does not point to $REAL"
[[ "$(readlink "$LIB/libgpumst.so")" == "$soname" ]] || fail "libgpumst.so does not point to $soname"
echo "SONAME $soname; libgpumst.so -> $soname -> $REAL"

echo "== exported symbols: exactly the functions gpumst.h declares"
nm -D --defined-only "$LIB/$REAL" | awk '{print $3}' | sed 's/@.*//' | sort -u >"$WORK/exported"
grep -oE '\bgpumst_[a-z0-9_]+\(' include/gpumst.h | tr -d '(' | sort -u >"$WORK/declared"
diff "$WORK/declared" "$WORK/exported" || fail "the library exports something other than the C API (left: header, right: library)"
echo "$(wc -l <"$WORK/exported") symbols, all gpumst_*"

echo "== size of the installed library (mark: at most 5 MB)"
size=$(stat -c %s "$LIB/$REAL")
echo "$REAL: $size bytes"
((size <= 5000000)) || fail "$REAL is $size bytes"
if readelf -S "$LIB/$REAL" | grep -q '\.debug_'; then fail "$REAL still carries debug info"; fi

echo "== DESTDIR staging: files under DESTDIR, contents naming the final prefix"
DESTDIR="$WORK/stage" bash scripts/install.sh --prefix /opt/gpumst --no-build >/dev/null
for f in lib/$REAL lib/libgpumst.a lib/pkgconfig/gpumst.pc lib/cmake/gpumst/gpumstConfig.cmake \
    include/gpumst.h include/gpumst.hpp bin/gpumst; do
    [[ -e "$WORK/stage/opt/gpumst/$f" ]] || fail "staged install lacks $f"
done
grep -q '^prefix=/opt/gpumst$' "$WORK/stage/opt/gpumst/lib/pkgconfig/gpumst.pc" || fail "staged gpumst.pc does not name /opt/gpumst"
[[ ! -e /opt/gpumst ]] || echo "(note: /opt/gpumst exists on this machine; it was not written by this test)"

export PKG_CONFIG_PATH="$LIB/pkgconfig"
echo "== pkg-config: $(pkg-config --modversion gpumst): $(pkg-config --cflags --libs gpumst)"
[[ "$(pkg-config --modversion gpumst)" == "$VERSION" ]] || fail "pkg-config reports another version"

echo "== the README's C example against the installed library (shared, then static)"
awk '/^```c$/{on=1; next} /^```$/{on=0} on' README.md >"$WORK/example.c"
[[ -s "$WORK/example.c" ]] || fail "README.md has no \`\`\`c example"
# shellcheck disable=SC2046 # pkg-config's words are separate arguments
gcc -std=c11 -Wall -Wextra -Werror "$WORK/example.c" $(pkg-config --cflags --libs gpumst) \
    -Wl,-rpath,"$LIB" -o "$WORK/example"
readelf -d "$WORK/example" | grep -q "NEEDED.*\[$soname\]" || fail "the example does not link against $soname"
"$WORK/example"
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Werror "$WORK/example.c" $(pkg-config --cflags gpumst) "$LIB/libgpumst.a" \
    $(pkg-config --static --libs-only-l gpumst | sed 's/-lgpumst//') -o "$WORK/example_static"
if readelf -d "$WORK/example_static" | grep -q libgpumst; then fail "the static example still needs libgpumst.so"; fi
"$WORK/example_static"

echo "== the installed command on the shipped road graph"
"$PREFIX/bin/gpumst" msf data/NY.gr.xz --json >"$WORK/ny.json"
grep -q '"total_weight": 27253492594' "$WORK/ny.json" || fail "gpumst msf data/NY.gr.xz: $(cat "$WORK/ny.json")"
echo "NY: 264345 edges, total weight 27253492594"

echo "== the README's C++ example is bindings/cpp/quickstart.cpp (which scripts/test_cpp.sh builds and runs)"
awk '/^```cpp$/{on=1; next} /^```$/{on=0} on' README.md >"$WORK/quickstart.cpp"
diff "$WORK/quickstart.cpp" bindings/cpp/quickstart.cpp || fail "README.md's \`\`\`cpp example differs from bindings/cpp/quickstart.cpp"

echo "== C++ (include/gpumst.hpp): CMake package and pkg-config builds, GoogleTest, valgrind, ASan"
bash scripts/test_cpp.sh "$PREFIX"

echo "== Go (bindings/go): go vet, go test -race, against the installed library"
bash scripts/test_go.sh "$PREFIX"
