#!/usr/bin/env bash
# Builds gpumst and installs it the way system libraries are installed:
#
#   PREFIX/lib/libgpumst.so.X.Y.Z           the shared library (SONAME libgpumst.so.0.Y while
#   PREFIX/lib/libgpumst.so.0.Y -> ...       the version is 0.x, as cargo-c names them;
#   PREFIX/lib/libgpumst.so -> ...           libgpumst.so.X from 1.0), stripped
#   PREFIX/lib/libgpumst.a                   the static library
#   PREFIX/include/gpumst.h, gpumst.hpp      the C API and the C++ wrapper
#   PREFIX/lib/pkgconfig/gpumst.pc           pkg-config --cflags --libs gpumst
#   PREFIX/lib/cmake/gpumst/                 find_package(gpumst) -> gpumst::gpumst
#   PREFIX/bin/gpumst                        the command
#
# Usage: bash scripts/install.sh [--prefix DIR] [--no-build]
#   --prefix DIR   where (default /usr/local); the .pc and CMake files name it
#   DESTDIR=DIR    stage the files under DIR instead (packaging), as with make install
#   --no-build     install what target/release holds (after a run of this script)
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX=/usr/local
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --prefix) PREFIX="$2"; shift 2 ;;
        --prefix=*) PREFIX="${1#--prefix=}"; shift ;;
        --no-build) BUILD=0; shift ;;
        -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[[ "$PREFIX" == /* ]] || { echo "install.sh: --prefix must be an absolute path, got '$PREFIX'" >&2; exit 2; }
PREFIX="${PREFIX%/}"

VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
IFS=. read -r MAJOR MINOR PATCH <<<"$VERSION"
if [[ "$MAJOR" == 0 ]]; then SOVERSION="0.$MINOR"; else SOVERSION="$MAJOR"; fi
REAL="libgpumst.so.$VERSION"
SONAME="libgpumst.so.$SOVERSION"

if [[ $BUILD == 1 ]]; then
    echo "install.sh: building gpumst $VERSION (SONAME $SONAME)"
    GPUMST_SONAME="$SONAME" cargo build --release --quiet -p gpumst --lib
    cargo build --release --quiet -p gpumst-cli
fi
for built in target/release/libgpumst.so target/release/libgpumst.a target/release/gpumst; do
    [[ -f "$built" ]] || { echo "install.sh: $built was not built" >&2; exit 1; }
done
if ! readelf -d target/release/libgpumst.so | grep -q "SONAME.*\[$SONAME\]"; then
    echo "install.sh: target/release/libgpumst.so lacks the SONAME $SONAME (run without --no-build)" >&2
    exit 1
fi

DEST="${DESTDIR:-}$PREFIX"
LIBDIR="$DEST/lib"
install -d "$LIBDIR/pkgconfig" "$LIBDIR/cmake/gpumst" "$DEST/include" "$DEST/bin"
# Debug info and the static symbol table stay behind (the dynamic symbols, and the unwind
# tables that catch panics at the C boundary, remain).
install -m 0755 target/release/libgpumst.so "$LIBDIR/$REAL"
strip --strip-all "$LIBDIR/$REAL"
ln -sfn "$REAL" "$LIBDIR/$SONAME"
ln -sfn "$SONAME" "$LIBDIR/libgpumst.so"
install -m 0644 target/release/libgpumst.a "$LIBDIR/libgpumst.a"
strip --strip-debug "$LIBDIR/libgpumst.a"
install -m 0644 include/gpumst.h include/gpumst.hpp "$DEST/include/"
install -m 0755 target/release/gpumst "$DEST/bin/gpumst"
strip --strip-all "$DEST/bin/gpumst"

# A Rust static library needs the system libraries the standard library uses.
STATIC_LIBS="-lpthread -ldl -lm"
cat >"$LIBDIR/pkgconfig/gpumst.pc" <<EOF
prefix=$PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: gpumst
Description: Minimum spanning forests and data-parallel primitives on CUDA, OpenCL or all CPU cores
Version: $VERSION
Libs: -L\${libdir} -lgpumst
Libs.private: $STATIC_LIBS
Cflags: -I\${includedir}
EOF

cat >"$LIBDIR/cmake/gpumst/gpumstConfig.cmake" <<EOF
# gpumst $VERSION: find_package(gpumst) gives the imported targets gpumst::gpumst (the
# shared library) and gpumst::gpumst_static, with include/gpumst.h and gpumst.hpp.
get_filename_component(_gpumst_prefix "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET gpumst::gpumst)
  add_library(gpumst::gpumst SHARED IMPORTED)
  set_target_properties(gpumst::gpumst PROPERTIES
    IMPORTED_LOCATION "\${_gpumst_prefix}/lib/$REAL"
    IMPORTED_SONAME "$SONAME"
    INTERFACE_INCLUDE_DIRECTORIES "\${_gpumst_prefix}/include")
endif()
if(NOT TARGET gpumst::gpumst_static)
  find_package(Threads REQUIRED)
  add_library(gpumst::gpumst_static STATIC IMPORTED)
  set_target_properties(gpumst::gpumst_static PROPERTIES
    IMPORTED_LOCATION "\${_gpumst_prefix}/lib/libgpumst.a"
    INTERFACE_INCLUDE_DIRECTORIES "\${_gpumst_prefix}/include"
    INTERFACE_LINK_LIBRARIES "Threads::Threads;\${CMAKE_DL_LIBS};m")
endif()
set(gpumst_VERSION "$VERSION")
unset(_gpumst_prefix)
EOF

# 0.x releases are compatible only within one minor version, later ones within a major.
cat >"$LIBDIR/cmake/gpumst/gpumstConfigVersion.cmake" <<EOF
set(PACKAGE_VERSION "$VERSION")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif("$MAJOR" STREQUAL "0")
  if(PACKAGE_FIND_VERSION_MAJOR STREQUAL "0" AND PACKAGE_FIND_VERSION_MINOR STREQUAL "$MINOR")
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  else()
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  endif()
elseif(PACKAGE_FIND_VERSION_MAJOR STREQUAL "$MAJOR")
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
else()
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
endif()
if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
EOF

echo "install.sh: installed gpumst $VERSION into ${DESTDIR:+$DESTDIR (staging for) }$PREFIX"
ls -l "$LIBDIR"/libgpumst* "$DEST/bin/gpumst"
