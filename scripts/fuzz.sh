#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ for a given time and prints how many inputs each
# executed (summed over its workers, from libFuzzer's own counters).
#
#   scripts/fuzz.sh TARGETS SECONDS [JOBS]
#
# TARGETS: one of read_graph, msf_edge_list, msf_csr, c_api, a comma list of them, or
# `all`; listed targets run at the same time, each with JOBS workers (libFuzzer's
# -fork=JOBS; default 1). Crashes, timeouts and out-of-memory inputs are kept and
# fuzzing goes on (-ignore_crashes etc.); they land in $FUZZ_OUT/artifacts/TARGET/.
#
# Environment:
#   FUZZ_BIN_DIR  prebuilt fuzz binaries (e.g. on a machine without Rust); otherwise
#                 they are built with `cargo +nightly fuzz build --release -a`.
#   FUZZ_OUT      where logs, artifacts and the grown corpora go (default
#                 fuzz/target/fuzz-out); fuzz/corpus/TARGET is only read.
#   FUZZ_ARGS     extra libFuzzer arguments.
# Each worker uses one CPU thread (GPUMST_FUZZ_THREADS, RAYON_NUM_THREADS) and the CPU
# tier only (GPUMST_BACKEND=cpu); memory is capped at 2 GB per process and per malloc.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
all=(read_graph msf_edge_list msf_csr c_api)
if [ "$1" = all ]; then targets=("${all[@]}"); else IFS=, read -r -a targets <<<"$1"; fi
seconds=$2
jobs=${3:-1}
out=${FUZZ_OUT:-fuzz/target/fuzz-out}

if [ -z "${FUZZ_BIN_DIR:-}" ]; then
  (cd fuzz && cargo +nightly fuzz build --release --debug-assertions)
  FUZZ_BIN_DIR=fuzz/target/x86_64-unknown-linux-gnu/release
fi

export GPUMST_FUZZ_THREADS=${GPUMST_FUZZ_THREADS:-1} RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-1}
export GPUMST_BACKEND=cpu
# Known library issues (reported, inputs in fuzz/known-crashes/) that long runs tolerate
# so that they look for new ones; the corpus test enforces every rule.
export GPUMST_FUZZ_KNOWN=${GPUMST_FUZZ_KNOWN-}
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ]; then export TMPDIR=/dev/shm; fi

pids=()
for t in "${targets[@]}"; do
  bin=$FUZZ_BIN_DIR/$t
  [ -x "$bin" ] || { echo "no fuzz binary $bin" >&2; exit 1; }
  mkdir -p "$out/artifacts/$t" "$out/corpus/$t"
  export GPUMST_FUZZ_ARTIFACTS=$out/artifacts/$t
  # The grown corpus goes first (libFuzzer writes new inputs there); the checked-in
  # one is only read.
  # shellcheck disable=SC2086
  "$bin" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -artifact_prefix="$out/artifacts/$t/" ${FUZZ_ARGS:-} \
    "$out/corpus/$t" "fuzz/corpus/$t" >"$out/$t.log" 2>&1 &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done

echo "target executions seconds jobs crashes+timeouts+ooms"
for t in "${targets[@]}"; do
  # Fork mode's status lines: "#EXECS: cov: ... oom/timeout/crash: O/T/C time: ..."
  last=$(grep -E '^#[0-9]+: cov:' "$out/$t.log" | tail -n 1 || true)
  execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
  found=$(find "$out/artifacts/$t" -type f | wc -l)
  echo "$t ${execs:-?} $seconds $jobs $found"
done
exit $status
