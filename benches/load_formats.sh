#!/usr/bin/env bash
# How fast gpumst reads each graph file format, at the given thread counts (issue 20's
# loading marks: binary formats >= 2 GB/s, text formats >= 300 MB/s on 16 cores).
#
#   bash benches/load_formats.sh [--gpumst BIN] [--work DIR] [--threads "2 16"]
#                                [--vertices N] [--edges M] [--repeat R]
#
# Writes one random graph (seed 1; default 2^22 vertices, 2^25 edges) in every format
# with `gpumst convert`, reads the page cache warm once, then times `gpumst msf FILE
# --json` R times per format and thread count (the `load` timing: the file read,
# parsed and validated into the arrays the library takes; the median is reported) with
# the reading pool capped by RAYON_NUM_THREADS. Prints MB/s of file read and checks
# that every format gives the same forest weight.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$ROOT/target/release/gpumst" work="$ROOT/target/load-bench" threads="2 16"
vertices=4194304 edges=33554432 repeat=3
while [ $# -gt 0 ]; do
    case "$1" in
    --gpumst) bin=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --vertices) vertices=$2; shift 2 ;;
    --edges) edges=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
mkdir -p "$work"
base="$work/random-$vertices-$edges"
[ -s "$base.gmst" ] || "$bin" generate random --vertices "$vertices" --edges "$edges" --seed 1 --out "$base.gmst" >&2
for ext in egr gr mtx txt; do
    [ -s "$base.$ext" ] || "$bin" convert "$base.gmst" "$base.$ext" >&2
done
echo "$(nproc) cores: $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
printf 'format\tthreads\tfile_MB\tload_ms\tMB_per_s\tforest_weight\n'
for ext in gmst egr gr mtx txt; do
    file="$base.$ext"
    cat "$file" >/dev/null # into the page cache
    for t in $threads; do
        runs=()
        for _ in $(seq "$repeat"); do
            runs+=("$(RAYON_NUM_THREADS=$t "$bin" msf "$file" --backend cpu --threads "$t" --json)")
        done
        python3 - "$ext" "$t" "${runs[@]}" <<'PY'
import json, statistics, sys
ext, t, runs = sys.argv[1], sys.argv[2], [json.loads(r) for r in sys.argv[3:]]
ms = statistics.median(r["timings_ms"]["load"] for r in runs)
mb = runs[0]["file_bytes"] / 1e6
print(f"{ext}\t{t}\t{mb:.1f}\t{ms:.1f}\t{mb / ms * 1e3:.0f}\t{runs[0]['total_weight']}")
PY
    done
done
