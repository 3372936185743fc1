#!/usr/bin/env bash
# Graphs over a GPU tier's (capped) memory, solved in partitions, beside the uncapped
# call and the CPU tier: issue 21's large input. Generates R-MAT graphs with fixed
# seeds, times `gpumst msf --device-memory-limit` (ms end to end, upload, compute,
# download, device peak) and compares the forests edge for edge (md5 of --edges-out).
#
#   bash benches/partitions.sh [GPUMST] [OLD_GPUMST]
#
# GPUMST defaults to target/release/gpumst; with OLD_GPUMST the capped calls of both
# builds take turns (ROUNDS=2). Environment: BACKEND (cuda), DIR (/tmp/gpumst-partitions,
# needs ~14 GB free for scale 26), BIG=0 skips R-MAT 26 (67M vertices, 2^30 edges:
# 12.9 GB of edges, ~50 GB of device working set uncapped, ~15 GB of host memory per
# call; issue 21's mark: end to end at half the page-locked bandwidth or more, in edge
# bytes per second, with a working set 4x the cap), CPU=0 skips the CPU tier's call on it, DEVICE_INPUTS=0 the calls on graphs
# already in device memory.
set -euo pipefail
cd "$(dirname "$0")/.."
new=${1:-target/release/gpumst}
old=${2:-}
backend=${BACKEND:-cuda}
dir=${DIR:-/tmp/gpumst-partitions}
mkdir -p "$dir"
show() {
    python3 -c 'import json, sys
j = json.load(open(sys.argv[1])); t = j["timings_ms"]
print("%-28s forest %d weight %s  e2e %.1f  up %.1f  comp %.1f  down %.1f  peak %s  edges %.1f GB/s" % (sys.argv[2], j["forest_edges"], j["total_weight"], t["end_to_end"], t["upload"], t["compute"], t["download"], j.get("device_peak_bytes"), j["input_bytes"] / t["end_to_end"] / 1e6))
d = j.get("device_inputs")
if d:
    print("%-28s device inputs: e2e %.1f  same forest %s" % ("", d["end_to_end_ms"], d["forest_matches_host_inputs"]))' "$1" "$2"
}
# name, binary, graph, extra arguments: one call, its forest's md5 printed.
call() {
    local name=$1 bin=$2 graph=$3
    shift 3
    "$bin" msf "$graph" --json --edges-out "$dir/forest.txt" "$@" >"$dir/out.json"
    show "$dir/out.json" "$name"
    echo "    forest md5 $(md5sum <"$dir/forest.txt" | cut -d' ' -f1)"
    rm -f "$dir/forest.txt"
}
# The reference of the mark: host-to-device copies from page-locked memory, measured in
# the same run (benches/pinned_bandwidth.cu, where nvcc is found).
if command -v nvcc >/dev/null; then
    nvcc -O2 -o "$dir/pinned_bandwidth" benches/pinned_bandwidth.cu && "$dir/pinned_bandwidth" 1024
fi
"$new" generate rmat --scale 22 --edge-factor 16 --seed 1 --out "$dir/rmat22.gmst" >/dev/null
"$new" generate random --vertices 4194304 --edges 33554432 --seed 1 --out "$dir/random22.gmst" >/dev/null
call "R-MAT 22 uncapped" "$new" "$dir/rmat22.gmst" --backend "$backend" --repeat 5
for round in $(seq "${ROUNDS:-2}"); do
    for b in ${old:+old} new; do
        bin=$new
        [ "$b" = old ] && bin=$old
        call "R-MAT 22 860 MB, $b" "$bin" "$dir/rmat22.gmst" --backend "$backend" --repeat 5 --device-memory-limit 860000000
        call "random 22 900 MB, $b" "$bin" "$dir/random22.gmst" --backend "$backend" --repeat 5 --device-memory-limit 900000000
    done
done
# Graphs already in device memory (`--device-inputs`: uploaded untimed, ids left in
# device memory): the caller's arrays count against the cap, so the caps leave about
# as much beside them as above.
if [ "${DEVICE_INPUTS:-1}" = 1 ]; then
    call "R-MAT 22 device, uncapped" "$new" "$dir/rmat22.gmst" --backend "$backend" --repeat 5 --device-inputs
    call "R-MAT 22 device, 2 GB" "$new" "$dir/rmat22.gmst" --backend "$backend" --repeat 5 --device-inputs --device-memory-limit 2000000000
    call "random 22 device, uncapped" "$new" "$dir/random22.gmst" --backend "$backend" --repeat 5 --device-inputs
    call "random 22 device, 1.3 GB" "$new" "$dir/random22.gmst" --backend "$backend" --repeat 5 --device-inputs --device-memory-limit 1300000000
fi
rm -f "$dir/rmat22.gmst" "$dir/random22.gmst"
if [ "${BIG:-1}" = 1 ]; then
    "$new" generate rmat --scale 26 --edge-factor 16 --seed 1 --out "$dir/rmat26.gmst" >/dev/null
    call "R-MAT 26 uncapped" "$new" "$dir/rmat26.gmst" --backend "$backend" --repeat 3
    for b in ${old:+old} new; do
        bin=$new
        [ "$b" = old ] && bin=$old
        # 12.4 GB: a quarter of the uncapped working set (49.7 GB on the H200).
        call "R-MAT 26 12.4 GB, $b" "$bin" "$dir/rmat26.gmst" --backend "$backend" --repeat 3 --device-memory-limit 12400000000
    done
    [ "${CPU:-1}" = 1 ] && call "R-MAT 26, CPU tier" "$new" "$dir/rmat26.gmst" --backend cpu
    rm -f "$dir/rmat26.gmst"
fi
