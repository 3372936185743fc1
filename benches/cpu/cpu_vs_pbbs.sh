#!/usr/bin/env bash
# The CPU tier beside PBBS's parallel filter-Kruskal and GBBS's Borůvka MSF (issue 19),
# in one run, on the same graphs: gpumst's `auto` (or another algorithm) at each thread
# count, the peers at the thread counts given, forest weights compared (a run whose
# forests differ in weight fails).
#
#   bash benches/cpu/cpu_vs_pbbs.sh --pbbs PBBSBENCH --parlay PARLAYLIB [--gbbs GBBS] [options]
#
#   --pbbs DIR       a checkout of cmuparlay/pbbsbench (its source is built here, with
#                    g++ -O3; nothing of it is kept in this repository)
#   --parlay DIR     a checkout of cmuparlay/parlaylib (pbbsbench's submodule), if the
#                    pbbsbench checkout lacks parlaylib/
#   --gbbs DIR       a checkout of ParAlg/gbbs: its MinimumSpanningForest/Boruvka
#                    benchmark is built here with g++ and the flags of its .bazelrc
#                    (GBBS builds only with Bazel since 2023; its benchmark needs four of
#                    its .cc files), against the parlaylib above
#   --gbbs-threads LIST   GBBS thread counts (default: --pbbs-threads)
#   --gpumst L=BIN[@T,T...]  a gpumst binary and its label (repeatable; default
#                    gpumst=target/release/gpumst), optionally with its own thread
#                    counts instead of --threads
#   --graphs LIST    from NY BAY grid random rmat (default all; grid 2048x2048, random
#                    2^22 vertices / 2^25 edges, RMAT scale 22 with 2^26 edges, seed 1)
#   --threads LIST   gpumst thread counts (default "1 2 4 8 16")
#   --pbbs-threads LIST   PBBS thread counts (default "2 16")
#   --algorithms LIST     gpumst algorithms (default auto)
#   --repeat N       timed runs per measurement, median reported (default 5)
#   --rounds R       measure every program R times, taking turns, and summarise each
#                    by the median of its rounds (default 1; for noisy machines)
#   --work DIR       where graphs and the PBBS build go (default target/cpu-bench)
#   --data DIR       NY.gr.xz and BAY.gr.xz (default ../shared/data)
#
# Timing: gpumst's is `msf --json` compute time (validation and the library call, the
# graph already in memory; median of --repeat after a warm-up run); PBBS's is its own
# timer around `mst()` on the edge array (median of -r rounds after its one-second
# warm-up). Both read the same graph: PBBS a WeightedEdgeArray file written from the
# same edge list that gpumst loads from .egr (each undirected edge once; weights are
# integers below 2^24, exact in PBBS's float). Rows go to stdout and results.tsv.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pbbs="" parlay="" gbbs="" gbbs_threads="" gpumsts=() graphs="NY BAY grid random rmat" threads="1 2 4 8 16"
pbbs_threads="2 16" algorithms=auto repeat=5 rounds=1 work="$ROOT/target/cpu-bench" data="$ROOT/../shared/data"
while [ $# -gt 0 ]; do
    case "$1" in
    --pbbs) pbbs=$2; shift 2 ;;
    --parlay) parlay=$2; shift 2 ;;
    --gbbs) gbbs=$2; shift 2 ;;
    --gbbs-threads) gbbs_threads=$2; shift 2 ;;
    --gpumst) gpumsts+=("$2"); shift 2 ;;
    --graphs) graphs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --pbbs-threads) pbbs_threads=$2; shift 2 ;;
    --algorithms) algorithms=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    *) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
[ ${#gpumsts[@]} -gt 0 ] || gpumsts=("gpumst=$ROOT/target/release/gpumst")
first_bin=${gpumsts[0]#*=} first_bin=${first_bin%@*}
mkdir -p "$work"
work=$(cd "$work" && pwd)
results="$work/results.tsv"
echo "$(nproc) cores: $(lscpu | sed -n 's/^Model name: *//p' | head -1)" >&2

# PBBS, built from the given checkout.
mst=""
if [ -n "$pbbs" ]; then
    build="$work/pbbsbench"
    if [ ! -x "$build/benchmarks/minSpanningForest/parallelFilterKruskal/MST" ]; then
        rm -rf "$build"
        cp -r "$pbbs" "$build"
        if [ ! -e "$build/parlaylib/include/parlay/parallel.h" ]; then
            [ -n "$parlay" ] || { echo "cpu_vs_pbbs: $pbbs has no parlaylib/: pass --parlay" >&2; exit 2; }
            rm -rf "$build/parlaylib"
            cp -r "$parlay" "$build/parlaylib"
        fi
        make -s -C "$build/benchmarks/minSpanningForest/parallelFilterKruskal" \
            CCFLAGS="-mcx16 -O3 -std=c++17 -DNDEBUG -I ." >&2
    fi
    mst="$build/benchmarks/minSpanningForest/parallelFilterKruskal/MST"
    g++ -O2 -o "$work/forest_weight" "$ROOT/benches/cpu/forest_weight.cpp"
fi

# GBBS, built from the given checkout (its Bazel flags: C++20, the homegrown
# scheduler, 16-byte CAS, -march=native, malloc allocation; -O3 for Bazel's opt).
gbbs_msf=""
if [ -n "$gbbs" ]; then
    gbbs_msf="$work/gbbs_msf"
    if [ ! -x "$gbbs_msf" ]; then
        parlay_include=""
        for candidate in "$parlay" "$pbbs/parlaylib"; do
            if [ -n "$candidate" ] && [ -e "$candidate/include/parlay/parallel.h" ]; then
                parlay_include="$(cd "$candidate" && pwd)/include"
                break
            fi
        done
        [ -n "$parlay_include" ] || { echo "cpu_vs_pbbs: GBBS needs parlaylib: pass --parlay" >&2; exit 2; }
        (cd "$gbbs" && g++ -O3 -DNDEBUG -std=c++20 -mcx16 -march=native -DHOMEGROWN -DAMORTIZEDPD \
            -DUSEMALLOC -DPARLAY_USE_STD_ALLOC -pthread -I. -I"$parlay_include" -o "$gbbs_msf" \
            benchmarks/MinimumSpanningForest/Boruvka/MinimumSpanningForest.cc gbbs/graph_io.cc \
            gbbs/io.cc gbbs/helpers/parse_command_line.cc gbbs/encodings/*.cc >"$work/gbbs_build.log" 2>&1) ||
            { grep -A3 error "$work/gbbs_build.log" >&2; echo "cpu_vs_pbbs: building GBBS's MinimumSpanningForest failed ($work/gbbs_build.log)" >&2; exit 2; }
    fi
    g++ -O2 -o "$work/to_gbbs" "$ROOT/benches/cpu/to_gbbs.cpp"
fi
gbbs_threads=${gbbs_threads:-$pbbs_threads}

# shellcheck source=../table_graphs.sh
source "$ROOT/benches/table_graphs.sh"
graph_file() { # NAME -> path of its .egr, made once
    table_graph "$1" "$first_bin" "$data" "$work"
}

peer_file() { # NAME EXT WRITER -> the graph in a peer's format, written once by
    # `WRITER EDGES.el OUT` from the edge list gpumst writes from the .egr
    local out="$work/$1.$2"
    if [ ! -s "$out" ]; then
        "$first_bin" convert "$work/$1.egr" "$work/$1.el" >&2
        "$3" "$work/$1.el" "$out"
        rm -f "$work/$1.el"
    fi
    echo "$out"
}
to_pbbs() { { echo WeightedEdgeArray; grep -v '^#' "$1"; } >"$2"; }
pbbs_file() { peer_file "$1" pbbs to_pbbs; }                # PBBS's WeightedEdgeArray
gbbs_file() { peer_file "$1" adj "$work/to_gbbs"; }         # GBBS's symmetric WeightedAdjacencyGraph

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

printf 'graph\tround\tprogram\talgorithm\tthreads\tms\tforest_edges\tforest_weight\n' | tee "$results"
for name in $graphs; do
    egr=$(graph_file "$name")
    for round in $(seq "$rounds"); do
        for labelled in "${gpumsts[@]}"; do
            label=${labelled%%=*} bin=${labelled#*=} own_threads=$threads
            if [[ $bin == *@* ]]; then own_threads=${bin#*@} own_threads=${own_threads//,/ } bin=${bin%@*}; fi
            for algorithm in $algorithms; do
                for t in $own_threads; do
                    json=$("$bin" msf "$egr" --backend cpu --algorithm "$algorithm" --threads "$t" \
                        --repeat $((repeat + 1)) --json)
                    # Drop the first (cold) run, then the median of the rest.
                    row=$(python3 -c 'import json, statistics, sys
d = json.loads(sys.argv[1]); runs = d["compute_runs_ms"]
print("%.3f\t%d\t%s" % (statistics.median(runs[1:] if len(runs) > 1 else runs), d["forest_edges"], d["total_weight"]))
' "$json")
                    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$round" "$label" "$algorithm" "$t" "$row" | tee -a "$results"
                    if [ -n "${PHASES:-}" ]; then
                        python3 -c 'import json, sys
d = json.loads(sys.argv[1]); p = d.get("phases_ms")
if p: print("  phases:", ", ".join("%s %.2f" % kv for kv in p.items()))' "$json" >&2
                    fi
                done
            done
        done
        if [ -n "$mst" ]; then
            file=$(pbbs_file "$name")
            for t in $pbbs_threads; do
                log=$(PARLAY_NUM_THREADS=$t "$mst" -r "$repeat" -o "$work/$name.ids" "$file")
                ms=$(sed -n 's/^Parlay time: *//p' <<<"$log" | tail -n "$repeat" | awk '{print $1 * 1000}' | median)
                # PBBS times its own steps: show the last round's beside gpumst's phases.
                [ -z "${PHASES:-}" ] || awk '/^Parlay time/ {last = block; block = ""; next} {block = block "  pbbs " $0 "\n"}
                    END {printf "%s", last}' <<<"$log" >&2
                read -r count weight < <("$work/forest_weight" "$file" "$work/$name.ids")
                printf '%s\t%s\tpbbs-filterkruskal\t-\t%s\t%s\t%s\t%s\n' "$name" "$round" "$t" "$ms" "$count" "$weight" | tee -a "$results"
            done
        fi
        if [ -n "$gbbs_msf" ]; then
            file=$(gbbs_file "$name")
            for t in $gbbs_threads; do
                # Its own timer around the MSF call; the first of its rounds dropped.
                log=$(PARLAY_NUM_THREADS=$t "$gbbs_msf" -s -rounds $((repeat + 1)) "$file")
                ms=$(sed -n 's/^### Running Time: *//p' <<<"$log" | tail -n "$repeat" | awk '{print $1 * 1000}' | median)
                count=$(sed -n 's/^#edges in output mst: *//p' <<<"$log" | tail -n 1)
                weight=$(sed -n 's/^total weight = *//p' <<<"$log" | tail -n 1)
                printf '%s\t%s\tgbbs-boruvka\t-\t%s\t%s\t%s\t%s\n' "$name" "$round" "$t" "$ms" "$count" "$weight" | tee -a "$results"
            done
        fi
    done
done
# Every program's forest weighs the same on each graph, or the run fails.
python3 - "$results" <<'PY'
import collections, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])][1:]
weights = collections.defaultdict(set)
for graph, _, program, _, _, _, _, weight in rows:
    weights[graph].add(weight)
bad = {g: w for g, w in weights.items() if len(w) != 1}
for graph, w in bad.items():
    print(f"cpu_vs_pbbs: forest weights differ on {graph}: {sorted(w)}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
if [ "$rounds" -gt 1 ]; then
    # Each measurement's median over the rounds, with the spread of the rounds.
    python3 - "$results" <<'PY' | tee "$work/summary.tsv"
import collections, statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])][1:]
groups = collections.OrderedDict()
for graph, _, program, algorithm, threads, ms, *_ in rows:
    groups.setdefault((graph, program, algorithm, threads), []).append(float(ms))
print("graph\tprogram\talgorithm\tthreads\tmedian_ms\tmin_ms\tmax_ms")
for (graph, program, algorithm, threads), ms in groups.items():
    print(f"{graph}\t{program}\t{algorithm}\t{threads}\t{statistics.median(ms):.1f}\t{min(ms):.1f}\t{max(ms):.1f}")
PY
fi
