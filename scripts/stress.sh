#!/usr/bin/env bash
# The load test (tests/stress.rs): 16 threads on one shared context per tier, plus 2
# threads creating and dropping their own contexts, every result checked against the
# references; RSS sampled every second and required flat after the warm-up.
#
#   bash scripts/stress.sh [SECONDS [TIERS]]   build here (cargo test --release) and run
#                                              SECONDS per tier (default 8) on TIERS (a
#                                              comma list of cpu, opencl, cuda; default
#                                              every tier that opens)
#   bash scripts/stress.sh pack DIR            build here; put the stripped test binary
#                                              (xz) and this script into DIR, for a
#                                              machine without Rust (the device machine)
#   bash DIR/stress.sh [SECONDS [TIERS]]       there: runs the packed binary
#
# Environment: GPUMST_STRESS_SEED (replay a run), GPUMST_STRESS_THREADS (16),
# GPUMST_STRESS_CHURN_THREADS (2), GPUMST_TEST_REQUIRE (tiers that must open); the rest
# is described at the top of tests/stress.rs. For a leak hunt, fix glibc's mmap threshold
# (GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072): its default dynamic threshold keeps
# freed large blocks in the threads' arenas, which makes RSS climb for minutes under this
# load without any leak (docs/reliability.md, 2026-11-25 third run). The log goes to $OUT (the device tool's
# folder) or the current directory as stress-TIERS.log; on an NVIDIA machine the GPU's
# memory use is sampled every 10 s into gpu-memory-TIERS.csv beside it. The summary
# (calls per kind, RSS start/max/end, slope) is printed at the end.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

build() {
    # Prints the path of the stress test binary.
    (cd "$HERE/.." && cargo test --release --no-run --test stress --message-format=json 2>/dev/null) |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "stress":
        print(m["executable"])'
}

if [ "${1:-}" = pack ]; then
    dir="${2:?usage: stress.sh pack DIR}"
    mkdir -p "$dir"
    bin=$(build)
    [ -n "$bin" ] || { echo "stress.sh: the build failed (cargo test --release --no-run --test stress)" >&2; exit 1; }
    cp "$bin" "$dir/stress"
    strip "$dir/stress"
    rm -f "$dir/stress.xz"
    xz -T0 "$dir/stress"
    cp "$HERE/stress.sh" "$dir/"
    # The folder ignores itself (it may sit in a checkout: nothing in it is source).
    echo '*' >"$dir/.gitignore"
    ls -la "$dir"
    exit 0
fi

seconds="${1:-8}"
tiers="${2:-}"
if [ -e "$HERE/stress.xz" ] || [ -e "$HERE/stress" ]; then
    # Packed: no Rust here.
    [ -e "$HERE/stress" ] || xz -dk "$HERE/stress.xz"
    bin="$HERE/stress"
    # NVIDIA's OpenCL driver may be installed without being registered with the ICD
    # loader (as scripts/device.sh does).
    if command -v nvidia-smi >/dev/null && [ -w /etc ] && [ ! -f /etc/OpenCL/vendors/nvidia.icd ]; then
        driver=$(ldconfig -p | awk '/libnvidia-opencl.so.1 /{print $NF; exit}')
        if [ -n "$driver" ]; then
            mkdir -p /etc/OpenCL/vendors
            echo "$driver" >/etc/OpenCL/vendors/nvidia.icd
        fi
    fi
else
    bin=$(build)
    [ -n "$bin" ] || { echo "stress.sh: the build failed (cargo test --release --no-run --test stress)" >&2; exit 1; }
fi

out="${OUT:-.}"
mkdir -p "$out"
name="${tiers:-all}"
name="${name//,/-}"
log="$out/stress-$name.log"
sampler=""
if command -v nvidia-smi >/dev/null && [ "$tiers" != cpu ]; then
    nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv,noheader -l 10 \
        >"$out/gpu-memory-$name.csv" 2>&1 &
    sampler=$!
fi
echo "stress.sh: $seconds s per tier on ${tiers:-every tier that opens}; $(nproc) cores; $(uname -srm)" | tee "$log"
status=0
# An empty GPUMST_TEST_TIERS would select no tier: set it only when tiers are named.
env GPUMST_STRESS_SECONDS="$seconds" ${tiers:+GPUMST_TEST_TIERS="$tiers"} RUST_BACKTRACE=1 \
    "$bin" --nocapture --test-threads 1 2>&1 | tee -a "$log" || status=$?
[ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
if [ -n "$sampler" ] && [ -s "$out/gpu-memory-$name.csv" ]; then
    echo "stress.sh: GPU memory used (first, max, last sample every 10 s):" | tee -a "$log"
    awk -F', ' '{gsub(/ MiB/, "", $2); if (NR == 1) first = $2; if ($2 + 0 > max) max = $2 + 0; last = $2}
        END {print "stress.sh:   " first " MiB, " max " MiB, " last " MiB (" NR " samples)"}' \
        "$out/gpu-memory-$name.csv" | tee -a "$log"
fi
echo "== summary" | tee -a "$log"
grep -E '^stress: ' "$log" | tee "$out/stress-$name-summary.txt" || true
echo "stress.sh: exit status $status" | tee -a "$log"
exit "$status"
