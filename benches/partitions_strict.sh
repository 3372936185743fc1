#!/usr/bin/env bash
# Issue 21's mark at its strict reading: a graph whose edge bytes are 4x the device
# memory gpumst may use, end to end at >= 50% of the page-locked host-to-device
# bandwidth (edge bytes per second). Uniform random, 2^22 vertices and 2^28 edges
# (3.22 GB of edges as u32 ends and f32 weights, about 12 GB of working set uncapped),
# capped at 1.6 GB (2x) and 800 MB (4x); with OLD_GPUMST the capped calls of both
# builds take turns. Forests are compared edge for edge (md5 of --edges-out).
#
#   bash benches/partitions_strict.sh [GPUMST] [OLD_GPUMST]
#
# Environment: BACKEND (cuda), DIR (/tmp/gpumst-strict, needs ~4 GB free), ROUNDS (2),
# CAPS ("1600000000 800000000"), VERTICES (4194304), EDGES (268435456).
set -euo pipefail
cd "$(dirname "$0")/.."
new=${1:-target/release/gpumst}
old=${2:-}
backend=${BACKEND:-cuda}
dir=${DIR:-/tmp/gpumst-strict}
mkdir -p "$dir"
graph=$dir/random.gmst
if command -v nvcc >/dev/null; then
    nvcc -O2 -o "$dir/pinned_bandwidth" benches/pinned_bandwidth.cu && "$dir/pinned_bandwidth" 1024
fi
"$new" generate random --vertices "${VERTICES:-4194304}" --edges "${EDGES:-268435456}" --seed 1 --out "$graph" >/dev/null
# name, binary, extra arguments: one call (--repeat 3), its timings and forest's md5.
call() {
    local name=$1 bin=$2
    shift 2
    "$bin" msf "$graph" --backend "$backend" --json --repeat 3 --edges-out "$dir/forest.txt" "$@" >"$dir/out.json"
    python3 -c 'import json, sys
j = json.load(open(sys.argv[1])); t = j["timings_ms"]
print("%-22s forest %d  e2e %.1f ms  upload %.1f  compute %.1f  download %.1f  peak %s  edges %.1f GB/s" % (sys.argv[2], j["forest_edges"], t["end_to_end"], t["upload"], t["compute"], t["download"], j.get("device_peak_bytes"), j["input_bytes"] / t["end_to_end"] / 1e6))' "$dir/out.json" "$name"
    echo "    forest md5 $(md5sum <"$dir/forest.txt" | cut -d' ' -f1)"
    rm -f "$dir/forest.txt"
}
call "uncapped" "$new"
for round in $(seq "${ROUNDS:-2}"); do
    for cap in ${CAPS:-1600000000 800000000}; do
        for b in ${old:+old} new; do
            bin=$new
            [ "$b" = old ] && bin=$old
            call "cap $cap, $b" "$bin" --device-memory-limit "$cap"
        done
    done
done
rm -f "$graph"
