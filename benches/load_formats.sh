#!/usr/bin/env bash
# How fast gpumst reads each graph file format, at the given thread counts (issue 20's
# loading marks: binary formats >= 2 GB/s, text formats >= 300 MB/s on 16 cores).
#
#   bash benches/load_formats.sh [--gpumst BIN] [--base BIN] [--work DIR]
#                                [--threads "2 16"] [--formats "gmst egr gr mtx txt"]
#                                [--graph "random|rmat|grid ..."] [--repeat R]
#
# Writes one graph (seed 1; by default uniform random, 2^22 vertices, 2^25 edges;
# --graph takes `gpumst generate` arguments, e.g. "rmat --scale 22" or "grid --rows 2048
# --cols 2048") in every format with `gpumst convert`, reads the page cache warm once,
# then times `gpumst msf FILE --json` R times per format and thread count (the `load`
# timing: the file read, parsed and validated into the arrays the library takes; the
# median is reported) with the reading pool capped by RAYON_NUM_THREADS. With --base,
# a second build's runs take turns with the first's, on the same files. Prints MB/s of
# file read and checks that every format and build gives the same forest weight.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$ROOT/target/release/gpumst" base_bin="" work="$ROOT/target/load-bench" threads="2 16"
graph="random --vertices 4194304 --edges 33554432" formats="gmst egr gr mtx txt" repeat=3
while [ $# -gt 0 ]; do
    case "$1" in
    --gpumst) bin=$2; shift 2 ;;
    --base) base_bin=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --formats) formats=$2; shift 2 ;;
    --graph) graph=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
mkdir -p "$work"
base="$work/$(echo "$graph" | tr -c 'A-Za-z0-9\n' '-')"
# shellcheck disable=SC2086 # the generator's arguments, split on purpose
[ -s "$base.gmst" ] || "$bin" generate $graph --seed 1 --out "$base.gmst" >&2
for ext in $formats; do
    [ -s "$base.$ext" ] || "$bin" convert "$base.gmst" "$base.$ext" >&2
done
builds=("$bin")
[ -z "$base_bin" ] || builds+=("$base_bin")
echo "$(nproc) cores: $(lscpu | sed -n 's/^Model name: *//p' | head -1); graph: $graph"
printf 'format\tthreads\tbuild\tfile_MB\tload_ms\tMB_per_s\tforest_weight\n'
for ext in $formats; do
    file="$base.$ext"
    cat "$file" >/dev/null # into the page cache
    for t in $threads; do
        declare -A runs=()
        for _ in $(seq "$repeat"); do
            for b in "${!builds[@]}"; do
                runs[$b]+="$(RAYON_NUM_THREADS=$t "${builds[$b]}" msf "$file" --backend cpu --threads "$t" --json | tr -d '\n')"$'\n'
            done
        done
        for b in "${!builds[@]}"; do
            name=$([ "$b" = 0 ] && echo this || echo base)
            RUNS="${runs[$b]}" python3 - "$ext" "$t" "$name" <<'PY'
import json, os, statistics, sys
ext, t, name = sys.argv[1:4]
runs = [json.loads(line) for line in os.environ["RUNS"].splitlines() if line.strip()]
ms = statistics.median(r["timings_ms"]["load"] for r in runs)
mb = runs[0]["file_bytes"] / 1e6
assert len({r["total_weight"] for r in runs}) == 1, "forest weights differ"
print(f"{ext}\t{t}\t{name}\t{mb:.1f}\t{ms:.1f}\t{mb / ms * 1e3:.0f}\t{runs[0]['total_weight']}")
PY
        done
        unset runs
    done
done
