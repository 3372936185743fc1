#!/usr/bin/env bash
# The Python package (bindings/python), as a user gets it, after its lints (ruff): `pip wheel` builds the wheel
# (cargo builds libgpumst into it), the wheel goes into a clean virtual environment with
# the pinned test dependencies, and from outside the source tree its pytest suite runs
# (every tier that opens: CPU, and OpenCL where a platform such as PoCL is installed;
# the README's Python examples), then NetworkX's own spanning-tree tests run through
# the gpumst backend, with NetworkX 3.6.1 and with 3.5, the oldest release supported;
# those runs fail unless the backend really computed the spanning-tree tests.
#
# Usage: bash scripts/test_python.sh      (scripts/test.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
WORK="$ROOT/target/python"
VENV="$WORK/venv"
PIP=(--quiet --disable-pip-version-check)

# setuptools builds in bindings/python/build: start from nothing, as a fresh clone does.
rm -rf "$WORK" bindings/python/build
mkdir -p "$WORK"
echo "== Python: a clean virtual environment with bindings/python/requirements-test.txt"
python3 -m venv "$VENV"
"$VENV/bin/pip" install "${PIP[@]}" -r bindings/python/requirements-test.txt
echo "== Python: ruff check and ruff format --check (bindings/python)"
BENCHES=(../../benches/python_vs_peers.py ../../benches/device_csr.py ../../benches/stream_filter_sim.py ../../benches/csr_capped.py)
(cd bindings/python && "$VENV/bin/ruff" check --no-cache . "${BENCHES[@]}" &&
    "$VENV/bin/ruff" format --no-cache --check . "${BENCHES[@]}")
echo "== Python: pip wheel ./bindings/python, installed into that environment"
"$VENV/bin/pip" wheel "${PIP[@]}" --no-deps -w "$WORK/wheels" ./bindings/python
ls -l "$WORK"/wheels/gpumst-*.whl
"$VENV/bin/pip" install "${PIP[@]}" --no-deps "$WORK"/wheels/gpumst-*.whl
cd "$WORK"
"$VENV/bin/python" -c 'import gpumst, sys; assert gpumst.__file__.startswith(sys.prefix), gpumst.__file__; print("gpumst", gpumst.version(), "from", gpumst.__file__)'

echo "== Python: the package's tests (pytest bindings/python/tests)"
"$VENV/bin/python" -m pytest -q -rs -p no:cacheprovider "$ROOT/bindings/python/tests"

nx_suite() { # label, extra PYTHONPATH entries
    echo "== Python: NetworkX's own tests of networkx.algorithms.tree through the gpumst backend ($1)"
    GPUMST_NX_MIN_TESTS=50 GPUMST_NX_TALLY="$WORK/nx-tally-$1.json" \
        NETWORKX_TEST_BACKEND=gpumst NETWORKX_FALLBACK_TO_NX=True \
        PYTHONPATH="$2$ROOT/bindings/python/tests" \
        "$VENV/bin/python" -m pytest -q -p no:cacheprovider -p nx_backend_counter --pyargs networkx.algorithms.tree
}
nx_suite "networkx-3.6.1" ""
echo "== Python: NetworkX 3.5 (the oldest supported): the backend's tests and NetworkX's own"
"$VENV/bin/pip" install "${PIP[@]}" --target "$WORK/networkx-3.5" networkx==3.5
PYTHONPATH="$WORK/networkx-3.5" "$VENV/bin/python" -c 'import networkx; assert networkx.__version__ == "3.5", networkx.__version__'
PYTHONPATH="$WORK/networkx-3.5" "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$ROOT/bindings/python/tests/test_networkx.py"
nx_suite "networkx-3.5" "$WORK/networkx-3.5:"
