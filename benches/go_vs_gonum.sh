#!/usr/bin/env bash
# gpumst's Go package against gonum's path.Kruskal and path.Prim on the same graphs,
# in one run: a random graph of 250,000 nodes and 1,000,000 edges (integer weights in
# [1, 1e6], as a *simple.WeightedUndirectedGraph and as slices) and a small one.
# Prints each benchmark's median time over COUNT runs and the ratios the issue marks:
# path.Kruskal / gonumgraph.MinimumSpanningForest (conversion from the gonum graph and
# writing dst included; mark >= 3x) and path.Kruskal / gpumst.MinimumSpanningForest
# from slices (mark >= 20x). It also times gonum-api-floor: only the gonum calls every
# adaptor must make (list g's edges, add g's nodes to dst, write a forest known in
# advance into dst), which bounds the first ratio from above.
#
# Usage: bash benches/go_vs_gonum.sh PREFIX [COUNT]      (PREFIX: an installed gpumst)
#        GPUMST_GO_TEST_BINARY=path/to/gonumgraph.test bash benches/go_vs_gonum.sh - [COUNT]
#   runs a test binary built elsewhere (go test -c), e.g. on a machine without Go.
# Pin the cores with taskset and GOMAXPROCS to compare like with like, e.g.
#   taskset -c 0,1 env GOMAXPROCS=2 bash benches/go_vs_gonum.sh PREFIX
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX="${1:?usage: benches/go_vs_gonum.sh PREFIX [COUNT]}"
COUNT="${2:-3}"
[[ "$PREFIX" == - || "$PREFIX" == /* ]] || PREFIX="$PWD/$PREFIX"
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
ARGS=(-test.run '^$' -test.bench 'MSF' -test.benchtime 3x -test.count "$COUNT")
if [[ -n "${GPUMST_GO_TEST_BINARY:-}" ]]; then
    "$GPUMST_GO_TEST_BINARY" "${ARGS[@]}" | tee "$OUT"
else
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" CGO_LDFLAGS="-Wl,-rpath,$PREFIX/lib"
    (cd bindings/go && go test -c -o "$OUT.bin" ./gonumgraph)
    (cd bindings/go/gonumgraph && "$OUT.bin" "${ARGS[@]}") | tee "$OUT"
    rm -f "$OUT.bin"
fi
python3 - "$OUT" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"Benchmark(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        runs.setdefault(m.group(1), []).append(float(m.group(3)) / 1e6)
med = {k: statistics.median(v) for k, v in runs.items()}
for k, v in med.items():
    print(f"{k:32s} {v:10.1f} ms (median of {len(runs[k])})")
for size in ("MSF1M", "MSF40K"):
    k = med.get(f"{size}/gonum-Kruskal")
    if k is None:
        continue
    for name, mark in (("gpumst-gonum", 3), ("gpumst-slices-f64", 20), ("gpumst-slices-u32", 20)):
        if f"{size}/{name}" in med:
            r = k / med[f"{size}/{name}"]
            print(f"{size}: path.Kruskal / {name} = {r:.1f}x (mark {mark}x{'' if size == 'MSF1M' else ', for the 1M graph'})")
    floor = med.get(f"{size}/gonum-api-floor")
    if floor is not None:
        print(f"{size}: path.Kruskal / gonum-api-floor = {k / floor:.1f}x (the most any adaptor can reach: "
              f"gonum's edge listing, AddNode and SetWeightedEdge alone, no computation)")
PY
