#!/usr/bin/env bash
# The MPI entry points (Cargo feature `mpi`): the library's unit tests of its MPI code,
# the Rust suite (tests/mpi.rs), a C program
# (mpi-tests/test_mpi.c, built with mpicc against the feature's libgpumst.so) and the
# Python binding through mpi4py (mpi-tests/test_mpi.py),
# each run under mpirun with 1, 2, 3 and 4 ranks (oversubscribed on small machines).
# Every rank must get the single-process forest, and every failure must reach every
# rank. Needs an MPI implementation with its compiler wrapper (.ci/run installs Open
# MPI) and libclang (the `mpi` crate's bindings are generated at build time).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
    echo "test_mpi: SKIPPED: no mpirun/mpicc on this machine (install Open MPI or MPICH: apt-get install libopenmpi-dev openmpi-bin libclang-dev)"
    exit 0
fi
# Open MPI refuses root and more ranks than cores unless told; MPICH ignores these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# A target directory of its own: the feature changes the library, and the other
# suites' libgpumst.so must stay the default build.
target=target/mpi
cargo build --release --features mpi --lib --target-dir "$target"
suite=$(cargo test --release --features mpi --test mpi --no-run --target-dir "$target" \
    --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if d.get("reason") == "compiler-artifact" and d["target"]["name"] == "mpi" and d.get("executable"):
        print(d["executable"])')
mkdir -p "$target/c"
mpicc -std=c11 -O1 -g -Wall -Wextra -Werror -Iinclude mpi-tests/test_mpi.c \
    -L"$target/release" -lgpumst -Wl,-rpath,"$PWD/$target/release" -o "$target/c/test_mpi"

# Python through mpi4py: the system interpreter, whose mpi4py (Debian's python3-mpi4py)
# is built against the system MPI that the library links.
python=/usr/bin/python3
if ! "$python" -c 'import mpi4py, numpy' 2>/dev/null; then
    echo "test_mpi: the Python part is SKIPPED: $python cannot import mpi4py and numpy (apt-get install python3-mpi4py python3-numpy)"
    python=""
fi
# The library's own unit tests of the MPI code (the forests' merge), no ranks needed.
cargo test --release --features mpi --lib --target-dir "$target" distributed::
for ranks in 1 2 3 4; do
    echo "-- $ranks rank(s)"
    timeout 300 mpirun -np "$ranks" "$suite"
    timeout 300 mpirun -np "$ranks" "$target/c/test_mpi"
    if [ -n "$python" ]; then
        GPUMST_LIBRARY="$PWD/$target/release/libgpumst.so" PYTHONPATH="$PWD/bindings/python/src" \
            timeout 300 mpirun -np "$ranks" "$python" mpi-tests/test_mpi.py
    fi
done
echo "test_mpi: passed with 1 to 4 ranks"
