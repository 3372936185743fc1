#!/usr/bin/env bash
# The CPU tier under a memory cap (issue 21): `gpumst msf --backend cpu
# --device-memory-limit` beside the uncapped call on the same graph, per algorithm:
# compute time (median of --repeat), the process's peak resident memory (the loaded
# graph included, so the difference between two calls is their working memory), and
# the forests compared edge for edge (md5 of --edges-out).
#
#   bash benches/cpu_capped.sh [GPUMST]
#
# GPUMST defaults to target/release/gpumst. Environment: DIR (/tmp/gpumst-cpu-capped),
# SCALE (20: 2^SCALE vertices, 64x as many edges), REPEAT (3), THREADS (0: all cores).
# glibc's mmap threshold is fixed at 128 KiB (MALLOC_MMAP_THRESHOLD_) for every call,
# so that freed large arrays go back to the kernel and the peak resident memory
# follows what is allocated (by default glibc raises the threshold after a free and
# keeps later arrays of that size in its heap). Loading the graph takes its own share
# of the peak (the same in every call on one graph).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/gpumst}
dir=${DIR:-/tmp/gpumst-cpu-capped}
scale=${SCALE:-20}
repeat=${REPEAT:-3}
threads=${THREADS:-0}
mkdir -p "$dir"
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-131072}
n=$((1 << scale))
m=$((64 << scale))
"$bin" generate random --vertices "$n" --edges "$m" --seed 1 --out "$dir/random.gmst" >/dev/null
"$bin" generate rmat --scale "$scale" --edge-factor 64 --seed 1 --out "$dir/rmat.gmst" >/dev/null
# graph, algorithm, cap (0: none): one line of compute ms, peak RSS, forest md5.
run() {
    python3 - "$bin" "$1" "$2" "$3" "$repeat" "$threads" "$dir" <<'EOF'
import hashlib, json, resource, subprocess, sys
bin, graph, algorithm, cap, repeat, threads, d = sys.argv[1:]
out = subprocess.run([bin, "msf", graph, "--backend", "cpu", "--algorithm", algorithm,
                      "--device-memory-limit", cap, "--repeat", repeat, "--threads", threads,
                      "--json", "--edges-out", d + "/forest.txt"],
                     check=True, capture_output=True, text=True).stdout
j = json.loads(out)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
md5 = hashlib.md5(open(d + "/forest.txt", "rb").read()).hexdigest()
label = "uncapped" if cap == "0" else "cap %d MB" % (int(cap) >> 20)
print("  %-8s %-12s compute %9.1f ms  peak RSS %7.0f MB  forest %d edges, md5 %s"
      % (algorithm, label, j["timings_ms"]["compute"], rss, j["forest_edges"], md5[:12]))
EOF
}
for graph in random rmat; do
    echo "== $graph: 2^$scale vertices, $m edges ($threads threads, 0 = all)"
    # Caps at a quarter to a half of each algorithm's uncapped working memory.
    for pair in auto:$((160 << scale)) kruskal:$((256 << scale)) boruvka:$((768 << scale)); do
        algorithm=${pair%%:*}
        cap=${pair#*:}
        run "$dir/$graph.gmst" "$algorithm" 0
        run "$dir/$graph.gmst" "$algorithm" "$cap"
    done
done
rm -f "$dir/forest.txt"
