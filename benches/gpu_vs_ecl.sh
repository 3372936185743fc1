#!/usr/bin/env bash
# gpumst's CUDA tier beside ECL-MST on the same .egr files, in one run (issue 20's table):
# compute, end to end from host arrays, upload, download and file load, forest weights
# compared.
#
#   bash benches/gpu_vs_ecl.sh --ecl ECL_CHECKOUT [--gpumst BIN] [--data DIR] [--work DIR]
#                              [--repeat R] [--graphs "NY BAY grid random rmat"] [--opencl]
#
# ECL_CHECKOUT is a checkout of github.com/burtscher/ECL-MST (fetch it; this repository
# holds none of its code). Its source/ECL-MST_10.cu is copied to WORK, patched there and
# built with `nvcc -O3 -arch=native`: CUDA 13 removed cudaDeviceProp::clockRate and
# memoryClockRate, which its banner prints (printed as 0 instead), and the copy also
# prints the weight of its forest so that the two answers can be compared. ECL-MST runs
# once per process; it is run R times with CUDA_MODULE_LOADING=EAGER (its kernels are
# loaded with the context, before its timer starts) and its own `Dev` time is taken,
# median of R. gpumst: `gpumst msf FILE --backend cuda --repeat R --json` (the run with
# the median end-to-end time: its compute, upload and download; `end_to_end` is the
# library call from host arrays to the forest on the host; `load` reads the file).
# `--device-inputs` adds the call on the same graph already in device memory, forest
# ids written to device memory (`dev_e2e_ms`, and its ratio to the compute time
# `dev_e2e/compute`; `dev_e2e_total_ms` also brings the forest's weights over for its
# total), its forest checked against the host call's. `--opencl` adds the OpenCL tier
# on the same GPU (`--backend opencl`, NVIDIA's platform): its compute time
# (`opencl_compute_ms`, the median run's) and its ratio to the CUDA tier's
# (`opencl/cuda`), its forest weight compared too. An untimed call per tier on the
# first graph comes before the table.
#
# Graphs (benches/table_graphs.sh): NY and BAY road networks from DATA (default
# ../shared/data, *.gr.xz), converted; grid 2048x2048, uniform random 2^22 vertices /
# 2^25 edges, and R-MAT scale 22 (edge factor 16), from `gpumst generate` with seed 1.
# Everything is written as .egr (the format both programs read).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$ROOT/target/release/gpumst" data="$ROOT/../shared/data" work="$ROOT/target/gpu-vs-ecl"
ecl="" repeat=7 graphs="NY BAY grid random rmat" opencl=0
while [ $# -gt 0 ]; do
    case "$1" in
    --ecl) ecl=$2; shift 2 ;;
    --gpumst) bin=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --graphs) graphs=$2; shift 2 ;;
    --opencl) opencl=1; shift ;;
    *) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
[ -n "$ecl" ] && [ -f "$ecl/source/ECL-MST_10.cu" ] || {
    echo "gpu_vs_ecl: --ecl must name a checkout of burtscher/ECL-MST (source/ECL-MST_10.cu)" >&2
    exit 2
}
mkdir -p "$work"

# Build ECL-MST from a patched copy.
cp "$ecl/source/ECL-MST_10.cu" "$ecl/source/ECLgraph.h" "$work/"
sed -i -e 's/deviceProp\.clockRate \* 0\.001/0.0/' -e 's/deviceProp\.memoryClockRate \* 0\.001/0.0/' \
    -e 's/printf("all good\\n\\n");/printf("all good\\nweight: %llu\\n\\n", gpuMSTweight);/' \
    "$work/ECL-MST_10.cu"
grep -q 'weight: %llu' "$work/ECL-MST_10.cu" || { echo "gpu_vs_ecl: could not patch ECL-MST's weight print" >&2; exit 1; }
nvcc -O3 -arch=native -o "$work/ecl-mst" "$work/ECL-MST_10.cu"

# shellcheck source=table_graphs.sh
source "$ROOT/benches/table_graphs.sh"

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# One untimed call per tier on the first graph first, so that its figures are not a
# freshly started machine's (an H100 table once had NY's CUDA compute at 0.287 ms
# against 0.18-0.22 in every other run).
warm=$(table_graph "${graphs%% *}" "$bin" "$data" "$work")
"$bin" msf "$warm" --backend cuda --repeat 3 >/dev/null
[ "$opencl" = 1 ] && "$bin" msf "$warm" --backend opencl --repeat 3 >/dev/null
printf 'graph\tarcs\tecl_ms\tgpumst_compute_ms\tratio\tgpumst_event_ms\tend_to_end_ms\tupload_ms\tdownload_ms\tdev_e2e_ms\tdev_e2e/compute\tdev_e2e_total_ms\tload_ms\tfile_MB\tweights'
[ "$opencl" = 1 ] && printf '\topencl_compute_ms\topencl/cuda'
printf '\n'
for g in $graphs; do
    file=$(table_graph "$g" "$bin" "$data" "$work")
    cat "$file" >/dev/null # into the page cache
    ecl_runs=()
    ecl_weight=""
    for _ in $(seq "$repeat"); do
        out=$(CUDA_MODULE_LOADING=EAGER "$work/ecl-mst" "$file")
        ecl_runs+=("$(echo "$out" | awk '/^Dev[+-]:/ {print $2 * 1000}')")
        ecl_weight=$(echo "$out" | awk '/^weight:/ {print $2}')
        echo "$out" | grep -q "all good" || { echo "gpu_vs_ecl: ECL-MST's own check failed on $g" >&2; echo "$out" >&2; }
    done
    ours=$("$bin" msf "$file" --backend cuda --repeat "$repeat" --json --device-inputs)
    cl="{}"
    [ "$opencl" = 1 ] && cl=$("$bin" msf "$file" --backend opencl --repeat "$repeat" --json)
    python3 - "$g" "$ecl_weight" "$ours" "$cl" "${ecl_runs[@]}" <<'PY'
import json, statistics, sys
g, ecl_weight, ours, cl = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
ecl = [float(x) for x in sys.argv[5:]]
t = ours["timings_ms"]
ecl_ms = statistics.median(ecl)
same = "equal" if str(ours["total_weight"]) == ecl_weight else f"DIFFER ({ours['total_weight']} vs {ecl_weight})"
if cl and cl["total_weight"] != ours["total_weight"]:
    same += f"; OpenCL's DIFFERS ({cl['total_weight']})"
event = ours.get("device_event_compute_ms")
d = ours["device_inputs"]
print(f"{g}\t{2 * ours['edges']}\t{ecl_ms:.3f}\t{t['compute']:.3f}\t{t['compute'] / ecl_ms:.2f}\t"
      f"{event if event is None else round(event, 3)}\t{t['end_to_end']:.2f}\t{t['upload']:.2f}\t"
      f"{t['download']:.2f}\t{d['end_to_end_ms']:.3f}\t{d['end_to_end_ms'] / t['compute']:.2f}\t"
      f"{d['end_to_end_with_total_weight_ms']:.3f}\t{t['load']:.1f}\t{ours['file_bytes'] / 1e6:.1f}\t{same}"
      + (f"\t{cl['timings_ms']['compute']:.3f}\t{cl['timings_ms']['compute'] / t['compute']:.2f}" if cl else ""))
PY
done
