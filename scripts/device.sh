#!/usr/bin/env bash
# The GPU tiers on the device machine (no Rust there): build here, carry, run there.
#
#   bash scripts/device.sh build     # here: release build, test and benchmark binaries
#                                    # and the road graphs into device-carry/ (git-ignored)
#   bash scripts/device.sh test      # there: gpumst info, then the conformance and
#                                    # primitive suites on every tier found (CPU, OpenCL,
#                                    # CUDA), the CUDA-specific checks (compute-sanitizer,
#                                    # NVRTC hidden, C ffi-tests) and both tiers' variants
#   bash scripts/device.sh bench     # there: benches/device.rs on OpenCL and on CUDA
#                                    # (primitives vs device copy, MSF device and
#                                    # end-to-end time vs CPU tier), and CUB (nvcc there)
#   bash scripts/device.sh cuda      # there: the CUDA checks and benchmarks only
#   bash scripts/device.sh all       # there: test, then bench
#   bash scripts/device.sh scans     # there: primitive suite and primitive timings only
#   bash scripts/device.sh tune      # there: scan tile-shape sweep at 2^28 (OpenCL), and
#                                    # segmented argmin lanes thresholds (both tiers)
#   bash scripts/device.sh lookahead # there: auto MSF on CUDA, host 0/1/2/4 rounds ahead
#   bash scripts/device.sh profile   # there: ncu on the CUDA primitives and an NY MSF
#   bash scripts/device.sh test-bench-tune  # there: test, MSF bench, tune
#   bash scripts/device.sh suites-bench # there: primitive and conformance suites, the
#                                    # CUDA argmin sweep, then bench on both tiers
#   bash scripts/device.sh primitives # there: primitive suite, primitive timings on both
#                                    # tiers, argmin and segmented argmin sweeps
#   bash scripts/device.sh python    # there: the Python package's tests (bindings/python)
#                                    # on every tier found, CUDA included, with the carried
#                                    # libgpumst and the machine's own numpy/scipy/networkx
#   bash scripts/device.sh transfers # there: CUDA suites, memcheck and upload/download
#                                    # timings (OLD="binaries" of builds to compare with)
#   bash scripts/device.sh partitions # there: graphs over the device-memory cap (suite,
#                                    # memcheck, 1 MB cap, R-MAT/random capped vs not)
#   bash scripts/device.sh devices   # there: forests split across GPUs (suite on every
#                                    # tier, memcheck on CUDA; then R-MAT and random
#                                    # graphs on one GPU against a split over all of
#                                    # them: GRAPHS (also dense22, rmat26), CAPS (device
#                                    # memory caps), ROUNDS, REPEAT; SUITES=0 skips the
#                                    # suite and memcheck); kind nvidia-h200-x2 (or -x4)
#   bash scripts/device.sh resident  # there: graphs and primitives in device memory:
#                                    # tests/device_memory.rs on both GPU tiers (CUDA also
#                                    # under compute-sanitizer memcheck), ffi-tests (C,
#                                    # test_device among them) on CUDA, and NY/BAY from
#                                    # device memory through the command line
#   bash scripts/device.sh variants  # there: CUDA primitive timings at 2^28 and the scan
#                                    # and arg-reduction tests with each kernel variant in
#                                    # device-carry/variants/*.ptx.xz (GPUMST_CUDA_KERNELS;
#                                    # made here by tools/build_cuda_kernels.py --variant)
#
# The device tool's call: command "bash scripts/device.sh test" (then "... bench": "all"
# runs past one call's 10 minutes), carry ["device-carry"], kind nvidia-h200.
# Logs go to $OUT (or device-carry/logs when $OUT is unset).
set -euo pipefail
cd "$(dirname "$0")/.."
CARRY=device-carry

build() {
    rm -rf "$CARRY"
    mkdir -p "$CARRY/bin" "$CARRY/data"
    cargo build --release --bin gpumst --lib
    local tests
    tests=$(cargo test --release --no-run --message-format=json --test conformance --test primitives --test device_memory --test partitioned --test devices 2>/dev/null |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["target"]["name"], m["executable"])')
    local bench
    bench=$(cargo bench --no-run --bench device --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "device":
        print(m["executable"])')
    cp target/release/gpumst "$CARRY/bin/"
    while read -r name path; do cp "$path" "$CARRY/bin/$name"; done <<<"$tests"
    cp "$bench" "$CARRY/bin/device-bench"
    strip "$CARRY"/bin/*
    mkdir -p "$CARRY/libgpumst"
    cp target/release/libgpumst.so target/release/libgpumst.a "$CARRY/libgpumst/"
    strip --strip-debug "$CARRY"/libgpumst/*
    # The carry is limited to 64 MiB with the working tree, and every binary holds the
    # PTX bundle: all of them travel compressed and setup_there unpacks them.
    xz -T0 "$CARRY"/bin/* "$CARRY"/libgpumst/*
    cp ../shared/data/NY.gr.xz ../shared/data/BAY.gr.xz "$CARRY/data/"
    # The Python package as a wheel (cp39-abi3: it installs on the machine's Python).
    rm -rf bindings/python/build
    python3 -m pip wheel --quiet --no-deps -w "$CARRY/wheels" ./bindings/python
    # An ICD loader in case the device machine has none (used only there if so).
    mkdir -p "$CARRY/lib" "$CARRY/deb"
    (cd "$CARRY/deb" && apt-get download ocl-icd-libopencl1 >/dev/null 2>&1) &&
        dpkg -x "$CARRY"/deb/ocl-icd-libopencl1_*.deb "$CARRY/deb/x" &&
        cp -L "$CARRY"/deb/x/usr/lib/x86_64-linux-gnu/libOpenCL.so.1 "$CARRY/lib/" ||
        echo "device.sh: could not fetch ocl-icd-libopencl1 (the device must have its own loader)"
    rm -rf "$CARRY/deb"
    du -sh "$CARRY"
}

setup_there() {
    OUT="${OUT:-$CARRY/logs}"
    mkdir -p "$OUT"
    for f in "$CARRY"/bin/*.xz "$CARRY"/libgpumst/*.xz; do
        [ -e "$f" ] && xz -dkf "$f"
    done
    # NVIDIA's OpenCL driver is installed but not registered with the ICD loader.
    mkdir -p /etc/OpenCL/vendors
    if [ ! -f /etc/OpenCL/vendors/nvidia.icd ]; then
        local driver
        driver=$(ldconfig -p | awk '/libnvidia-opencl.so.1 /{print $NF; exit}')
        [ -n "$driver" ] || driver=$(find /usr/local/nvidia /usr/lib /usr/lib64 -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
        echo "${driver:-libnvidia-opencl.so.1}" >/etc/OpenCL/vendors/nvidia.icd
    fi
    echo "device.sh: nvidia.icd -> $(cat /etc/OpenCL/vendors/nvidia.icd)" | tee -a "$OUT/test.log"
    if ! ldconfig -p | grep -q 'libOpenCL.so.1 '; then
        echo "device.sh: no OpenCL ICD loader installed; using the carried one" | tee -a "$OUT/test.log"
        export LD_LIBRARY_PATH="$PWD/$CARRY/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
    export GPUMST_DATA_DIR="$PWD/$CARRY/data"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
}

# NY and BAY with every algorithm through the command line on one GPU tier; prints the
# forest size and weight to compare with the published answers.
road_graphs_cli() {
    local status=0
    for g in NY BAY; do
        for a in auto boruvka prim strut; do
            "$CARRY/bin/gpumst" msf "$CARRY/data/$g.gr.xz" --backend "$1" --algorithm "$a" --repeat 5 --json |
                python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["file"].split("/")[-1], j["algorithm"], j["backend"], j["forest_edges"], j["total_weight"], j["timings_ms"])' || status=1
        done
    done
    return $status
}

test_there() {
    local status=0
    {
        "$CARRY/bin/gpumst" info
        for suite in conformance primitives partitioned; do
            echo "== $suite (every tier found)"
            timeout -k 5 240 "$CARRY/bin/$suite" --nocapture --test-threads 4 2>&1 | grep -vE '^test .* ok$' || status=1
        done
        echo "== conformance with 32-bit atomics only"
        GPUMST_OPENCL_ATOMICS=32 timeout -k 5 120 "$CARRY/bin/conformance" 2>&1 | tail -3 || status=1
        echo "== primitives with the reduce-then-scan fallback"
        GPUMST_OPENCL_SCAN=reduce-then-scan timeout -k 5 120 "$CARRY/bin/primitives" 2>&1 | tail -3 || status=1
        echo "== primitives with the portable work-group scan (no warp shuffles)"
        GPUMST_OPENCL_SHUFFLE=0 timeout -k 5 120 "$CARRY/bin/primitives" 2>&1 | tail -3 || status=1
        echo "== out-of-memory paths (device memory capped at 1 MB)"
        GPUMST_OPENCL_MEMORY_LIMIT=1000000 timeout -k 5 60 "$CARRY/bin/conformance" out_of_device_memory 2>&1 | tail -3 || status=1
        echo "== NY and BAY through the command line on the OpenCL tier"
        road_graphs_cli opencl || status=1
    } 2>&1 | tee -a "$OUT/test.log"
    cuda_tests_there || status=1
    return $status
}

# The CUDA tier's own checks (the shared suites above already ran on it), and the
# one-launch switch on both GPU tiers.
cuda_tests_there() {
    local status=0
    {
        echo "== CUDA: primitives with the reduce-then-scan scan"
        GPUMST_CUDA_SCAN=reduce-then-scan timeout -k 5 120 "$CARRY/bin/primitives" 2>&1 | tail -3 || status=1
        # `auto` runs a phase's rounds in one launch from 2^20 edges (CUDA, and OpenCL
        # on NVIDIA's platform); the suite's graphs are smaller, so it runs again with
        # launches per round only, and with a switch to the one launch after some rounds.
        for tier in cuda opencl; do
            for below in 0 1000; do
                echo "== $tier: conformance with GPUMST_GPU_RESIDENT_BELOW=$below"
                GPUMST_TEST_TIERS=$tier GPUMST_GPU_RESIDENT_BELOW=$below timeout -k 5 240 "$CARRY/bin/conformance" 2>&1 | tail -3 || status=1
            done
        done
        echo "== CUDA: out-of-memory paths (device memory capped at 1 MB)"
        GPUMST_CUDA_MEMORY_LIMIT=1000000 timeout -k 5 60 "$CARRY/bin/conformance" out_of_device_memory --nocapture 2>&1 | grep -E "tier|test result" || status=1
        echo "== CUDA: first call with a cold JIT cache (context + first MSF of a small graph)"
        GPUMST_BACKEND=cuda CUDA_CACHE_DISABLE=1 "$CARRY/bin/gpumst" msf tests/data/small.gr --json |
            python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["backend"], j["forest_edges"], j["timings_ms"])' || status=1
        /usr/bin/time -f "wall %e s for process start, context, JIT and MSF" env CUDA_CACHE_DISABLE=1 \
            "$CARRY/bin/gpumst" msf tests/data/small.gr --backend cuda >/dev/null || status=1
        echo "== CUDA: NY and BAY through the command line"
        road_graphs_cli cuda || status=1
        echo "== CUDA: NVRTC hidden (every libnvrtc on this machine replaced by /dev/null in a private mount namespace)"
        unshare -m bash -c '
            for f in $(find /usr /opt -name "libnvrtc*.so*" 2>/dev/null); do mount --bind /dev/null "$f"; done
            echo "hidden: $(find /usr /opt -name "libnvrtc*.so*" 2>/dev/null | wc -l) file(s)"
            GPUMST_BACKEND=cuda '"$CARRY"'/bin/conformance road_graphs 2>&1 | tail -2
            LD_DEBUG=libs '"$CARRY"'/bin/gpumst msf tests/data/small.gr --backend cuda 2>&1 | grep -c "nvrtc" | sed "s/^/libraries named nvrtc the process looked for: /"
        ' || status=1
        echo "== CUDA: compute-sanitizer on the small graphs and primitives"
        # racecheck is about 50x slower than memcheck: it gets fewer tests.
        for tool in memcheck racecheck; do
            if [ "$tool" = memcheck ]; then
                msf_tests=(special_weights bad_graphs grids)
                primitive_tests=(every_small_size chunk_boundary segmented_arg buffers_scan)
            else
                msf_tests=(special_weights)
                primitive_tests=(segmented_arg buffers_scan)
            fi
            echo "-- $tool: conformance ${msf_tests[*]}; primitives ${primitive_tests[*]}"
            GPUMST_TEST_TIERS=cuda timeout -k 5 300 compute-sanitizer --tool "$tool" --error-exitcode 9 \
                "$CARRY/bin/conformance" --test-threads 1 "${msf_tests[@]}" 2>&1 | tail -4 || status=1
            GPUMST_TEST_TIERS=cuda timeout -k 5 300 compute-sanitizer --tool "$tool" --error-exitcode 9 \
                "$CARRY/bin/primitives" --test-threads 1 "${primitive_tests[@]}" 2>&1 | tail -4 || status=1
        done
        echo "== CUDA: C and C++ ffi-tests against the CUDA tier (auto picks it)"
        GPUMST_FFI_EXPECT_TIER=cuda GPUMST_FFI_LIBDIR="$CARRY/libgpumst" GPUMST_NO_VALGRIND=1 bash ffi-tests/run.sh 2>&1 | grep -E "FAIL|passed|failed" || status=1
    } 2>&1 | tee -a "$OUT/test.log"
    return $status
}

# The Python package (the carried wheel, with the machine's own numpy, scipy, networkx and
# pytest): its tests on every tier found, CUDA included, then NetworkX's own tree tests
# through the backend.
python_there() {
    local site=/tmp/gpumst-site status=0
    {
        python3 -c 'import sys, numpy, scipy, networkx, pytest; print(sys.version.split()[0], "numpy", numpy.__version__, "scipy", scipy.__version__, "networkx", networkx.__version__)'
        python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "$CARRY"/wheels/gpumst-*.whl
        PYTHONPATH="$site" timeout -k 5 400 python3 -m pytest -q -rs -p no:cacheprovider bindings/python/tests || status=1
        GPUMST_NX_MIN_TESTS=50 NETWORKX_TEST_BACKEND=gpumst NETWORKX_FALLBACK_TO_NX=True \
            PYTHONPATH="$site:$PWD/bindings/python/tests" timeout -k 5 120 \
            python3 -m pytest -q -p no:cacheprovider -p nx_backend_counter --pyargs networkx.algorithms.tree || status=1
    } 2>&1 | tee -a "$OUT/python.log"
    return $status
}

bench_there() {
    timeout -k 5 420 "$CARRY/bin/device-bench" --data "$CARRY/data" "$@" 2>&1 | tee -a "$OUT/bench.log"
}

# CUB on the same primitive inputs (built here with nvcc).
cub_there() {
    local nvcc
    nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
    if [ -z "$nvcc" ]; then
        echo "device.sh: no nvcc: CUB comparison skipped" | tee -a "$OUT/bench.log"
        return 0
    fi
    "$nvcc" -O3 -std=c++17 -Wno-deprecated-declarations -o "$CARRY/bin/cub_bench" benches/cub/cub_bench.cu &&
        timeout -k 5 300 "$CARRY/bin/cub_bench" "${1:-20}" 28 21 2>&1 | tee -a "$OUT/bench.log"
}

# One line of primitive timings at 2^28 u32 (the bench's own arguments may add a tier);
# the environment passed in picks the variant under test.
primitives_2_28() {
    timeout -k 5 60 "$CARRY/bin/device-bench" --skip-msf --min-log2 28 --repeat 15 "$@" 2>&1 | tail -1
}

# Scan tuning sweep: tile bytes per work-item x work-group size (single pass, 2^28 u32),
# each combination small enough for 48 KiB of local memory.
tune_there() {
    for combo in 128:256 64:256 64:128 128:128 256:128 64:512 32:512 32:1024; do
        bytes=${combo%:*} group=${combo#*:}
        echo "== GPUMST_OPENCL_TILE_BYTES=$bytes GPUMST_OPENCL_GROUP_SIZE=$group"
        GPUMST_OPENCL_TILE_BYTES=$bytes GPUMST_OPENCL_GROUP_SIZE=$group primitives_2_28
    done 2>&1 | tee -a "$OUT/tune.log"
    tune_arg_there opencl cuda
    tune_lanes_there opencl cuda
}

# Argmin on the given tiers: groups for 1, 2 or 8 waves of the device's resident groups.
tune_arg_there() {
    for tier in "$@"; do
        for waves in 1 2 8; do
            echo "== GPUMST_GPU_ARG_WAVES=$waves ($tier)"
            GPUMST_GPU_ARG_WAVES=$waves primitives_2_28 --tier "$tier"
        done
    done 2>&1 | tee -a "$OUT/tune.log"
}

# Segmented argmin on the given tiers: lanes per segment from 8, 16 or 64 elements on
# average (below: one work-item per segment), each lane folding 4 to 32 elements.
tune_lanes_there() {
    for tier in "$@"; do
        for from in 64 16 8; do
            for items in 4 8 16 32; do
                echo "== GPUMST_GPU_LANES_FROM=$from GPUMST_GPU_ITEMS_PER_LANE=$items ($tier)"
                GPUMST_GPU_LANES_FROM=$from GPUMST_GPU_ITEMS_PER_LANE=$items \
                    primitives_2_28 --tier "$tier"
            done
        done
    done 2>&1 | tee -a "$OUT/tune.log"
}

# Each kernel variant bundle in $CARRY/variants (xz-compressed): the scan and arg tests
# on CUDA, then the primitive timings at 2^28, beside the shipped kernels' timings.
variants_there() {
    echo "== shipped kernels"
    primitives_2_28 --tier cuda
    for packed in "$CARRY"/variants/*.ptx.xz; do
        [ -e "$packed" ] || continue
        xz -dkf "$packed"
        local bundle=${packed%.xz}
        echo "== $(basename "$bundle" .ptx)"
        GPUMST_CUDA_KERNELS="$bundle" GPUMST_TEST_TIERS=cuda timeout -k 5 120 "$CARRY/bin/primitives" \
            chunk_boundary scans_ arg_reductions buffers_scan 2>&1 | grep -E "^test result|FAILED|panicked" | tail -5 || true
        GPUMST_CUDA_KERNELS="$bundle" primitives_2_28 --tier cuda || true
    done 2>&1 | tee -a "$OUT/variants.log"
}

# The auto MSF on CUDA with the host 0, 1, 2 and 4 rounds ahead of the worklist lengths.
lookahead_there() {
    for k in 0 1 2 4; do
        echo "== GPUMST_GPU_LOOKAHEAD=$k"
        GPUMST_GPU_LOOKAHEAD=$k bench_there --tier cuda --skip-primitives --algorithms auto | tail -5
    done 2>&1 | tee -a "$OUT/lookahead.log"
}

# Nsight Compute on the CUDA tier: the primitive kernels at 2^28 u32 (throughput, memory,
# stall reasons, occupancy) and the kernel times of one auto MSF of NY; full reports
# under $OUT, the headline lines printed.
find_ncu() {
    ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
    [ -n "$ncu" ] || echo "device.sh: no ncu: profile skipped"
    [ -n "$ncu" ]
}

profile_primitives_there() {
    local ncu
    find_ncu || return 0
    timeout -k 5 300 "$ncu" --kernel-name regex:'scan_single_pass|arg_partial|segmented_arg' \
        --launch-count 12 --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --section WarpStateStats --section Occupancy --section LaunchStats \
        "$CARRY/bin/device-bench" --tier cuda --skip-msf --min-log2 28 --max-log2 28 --repeat 1 \
        >"$OUT/ncu-primitives.txt" 2>&1 || echo "device.sh: ncu on the primitives failed"
    grep -E '^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Shared Memory Config|Stall|One or More' \
        "$OUT/ncu-primitives.txt" | head -150
}

profile_there() {
    local ncu
    find_ncu || return 0
    profile_primitives_there
    GPUMST_BACKEND=cuda timeout -k 5 120 "$ncu" --metrics gpu__time_duration.sum --print-summary per-kernel \
        "$CARRY/bin/gpumst" msf "$CARRY/data/NY.gr.xz" --backend cuda --repeat 1 \
        >"$OUT/ncu-msf-ny.txt" 2>&1 || echo "device.sh: ncu on the NY MSF failed"
    grep -E '^  [a-z_]+|gpu__time_duration.sum' "$OUT/ncu-msf-ny.txt" | head -80
    # The random graph's auto MSF (a warm-up and one timed run, summed per kernel).
    timeout -k 5 240 "$ncu" --metrics gpu__time_duration.sum --print-summary per-kernel \
        "$CARRY/bin/device-bench" --tier cuda --skip-primitives --graphs random-22-25 \
        --algorithms auto --msf-repeat 1 >"$OUT/ncu-msf-random.txt" 2>&1 ||
        echo "device.sh: ncu on the random MSF failed"
    grep -E '^  [a-z_]+|gpu__time_duration.sum' "$OUT/ncu-msf-random.txt" | head -80
}

# Large host-device copies through page-locked buffers: the shared suites on the CUDA
# tier, memcheck on the tests with the largest buffers, then upload, download and end to
# end on NY, BAY, a grid and a random graph, with an older build (OLD=path) beside.
transfers_there() {
    local status=0 old=${OLD:-}
    {
        for suite in conformance primitives partitioned; do
            echo "== $suite (CUDA tier)"
            GPUMST_TEST_TIERS=cuda timeout -k 5 240 "$CARRY/bin/$suite" --test-threads 4 2>&1 | grep -vE '^test .* ok$' || status=1
        done
        echo "== compute-sanitizer memcheck: conformance grids road_graphs; primitives buffers_scan chunk_boundary"
        GPUMST_TEST_TIERS=cuda timeout -k 5 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
            "$CARRY/bin/conformance" --test-threads 1 grids road_graphs 2>&1 | tail -4 || status=1
        GPUMST_TEST_TIERS=cuda timeout -k 5 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
            "$CARRY/bin/primitives" --test-threads 1 buffers_scan chunk_boundary 2>&1 | tail -4 || status=1
        local work=/tmp/transfers
        mkdir -p "$work"
        "$CARRY/bin/gpumst" generate grid --rows 2048 --cols 2048 --seed 1 --out "$work/grid.gmst" >/dev/null
        "$CARRY/bin/gpumst" generate random --vertices 4194304 --edges 33554432 --seed 1 --out "$work/random.gmst" >/dev/null
        for f in "$CARRY/data/NY.gr.xz" "$CARRY/data/BAY.gr.xz" "$work/grid.gmst" "$work/random.gmst"; do
            for bin in "$CARRY/bin/gpumst" $old; do
                "$bin" msf "$f" --backend cuda --repeat 7 --json | python3 -c 'import json,sys
j = json.load(sys.stdin); t = j["timings_ms"]
print(sys.argv[1].split("/")[-1], sys.argv[2], j["input_bytes"], j["total_weight"], " ".join(f"{k} {t[k]:.3f}" for k in ("upload", "compute", "download", "end_to_end")))' "$f" "$bin" || status=1
            done
        done
    } 2>&1 | tee -a "$OUT/transfers.log"
    return $status
}

# Data already in device memory: the suite on both GPU tiers, memcheck on CUDA, the C
# API's test_device, and the command line's --device-inputs on the road graphs.
resident_there() {
    local status=0
    {
        echo "== device_memory suite (CUDA and OpenCL tiers)"
        timeout -k 5 300 "$CARRY/bin/device_memory" --nocapture 2>&1 | grep -vE '^test .* ok$' | grep -v "^device memory: .* skipped: not in" || status=1
        echo "== compute-sanitizer memcheck: device_memory on CUDA"
        GPUMST_TEST_TIERS=cuda timeout -k 5 400 compute-sanitizer --tool memcheck --error-exitcode 9 \
            "$CARRY/bin/device_memory" --test-threads 1 2>&1 | tail -4 || status=1
        echo "== C ffi-tests on the CUDA tier (test_device makes cuMemAlloc memory)"
        GPUMST_FFI_EXPECT_TIER=cuda GPUMST_FFI_LIBDIR="$CARRY/libgpumst" GPUMST_NO_VALGRIND=1 bash ffi-tests/run.sh 2>&1 | grep -E "test_device|FAIL|passed|failed" || status=1
        for tier in cuda opencl; do
            for g in NY BAY; do
                "$CARRY/bin/gpumst" msf "$CARRY/data/$g.gr.xz" --backend "$tier" --repeat 7 --json --device-inputs |
                    python3 -c 'import json,sys; j=json.load(sys.stdin); t=j["timings_ms"]; d=j["device_inputs"]
print(j["file"].split("/")[-1], j["backend"], j["forest_edges"], j["total_weight"], "host-input e2e %.3f compute %.3f | device-input e2e %.3f (compute %.3f, with total %.3f) ratio %.2f" % (t["end_to_end"], t["compute"], d["end_to_end_ms"], d["compute_ms"], d["end_to_end_with_total_weight_ms"], d["end_to_end_ms"] / t["compute"]))' || status=1
            done
        done
    } 2>&1 | tee -a "$OUT/resident.log"
    return $status
}

# Graphs larger than the device memory gpumst may use: the partitioned suite on both GPU
# tiers (memcheck on CUDA), the 1 MB cap's conformance check on CUDA, then R-MAT 22 and
# the random graph end to end uncapped and capped (R-MAT: a quarter of its working set).
partitions_there() {
    local status=0
    {
        echo "== partitioned suite (CUDA and OpenCL tiers)"
        timeout -k 5 300 "$CARRY/bin/partitioned" --nocapture 2>&1 | grep -vE '^test .* ok$' || status=1
        echo "== compute-sanitizer memcheck: partitioned on CUDA"
        GPUMST_TEST_TIERS=cuda timeout -k 5 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
            "$CARRY/bin/partitioned" --test-threads 1 2>&1 | tail -4 || status=1
        echo "== partitioned on CUDA with 1 MiB transfer and staging blocks (chunks cut to whole blocks)"
        GPUMST_TEST_TIERS=cuda GPUMST_CUDA_TRANSFER_CHUNK_BYTES=1048576 timeout -k 5 300 \
            "$CARRY/bin/partitioned" 2>&1 | grep -E "test result|FAILED|panicked" || status=1
        echo "== CUDA: device memory capped at 1 MB (conformance out_of_device_memory)"
        GPUMST_CUDA_MEMORY_LIMIT=1000000 timeout -k 5 120 "$CARRY/bin/conformance" out_of_device_memory --nocapture 2>&1 | grep -E "tier|test result" || status=1
        local work=/tmp/partitions
        mkdir -p "$work"
        "$CARRY/bin/gpumst" generate rmat --scale 22 --edge-factor 16 --seed 1 --out "$work/rmat.gmst" >/dev/null
        "$CARRY/bin/gpumst" generate random --vertices 4194304 --edges 33554432 --seed 1 --out "$work/random.gmst" >/dev/null
        for run in "rmat 0" "rmat 860000000" "random 0" "random 900000000"; do
            set -- $run
            "$CARRY/bin/gpumst" msf "$work/$1.gmst" --backend cuda --repeat 3 --json --device-memory-limit "$2" | python3 -c 'import json,sys
j = json.load(sys.stdin); t = j["timings_ms"]
print(sys.argv[1], "cap", sys.argv[2], j["input_bytes"], "bytes", j["total_weight"], " ".join(f"{k} {t[k]:.2f}" for k in ("upload", "compute", "download", "end_to_end")), "| %.1f GB/s of edge bytes end to end" % (j["input_bytes"] / t["end_to_end"] / 1e6))' "$1" "$2" || status=1
        done
    } 2>&1 | tee -a "$OUT/partitions.log"
    return $status
}

# Forests split across the machine's GPUs: the suite (which lists device 0 several
# times, then every device), memcheck, then the command line on generated graphs with
# one GPU and with all of them, taking turns, uncapped and capped.
devices_there() {
    local status=0
    {
        nvidia-smi topo -m || true
        if [ "${SUITES:-1}" != 0 ]; then
            echo "== devices suite (CUDA and OpenCL tiers)"
            timeout -k 5 300 "$CARRY/bin/devices" --nocapture 2>&1 | grep -vE '^test .* ok$' || status=1
            echo "== compute-sanitizer memcheck: devices on CUDA"
            GPUMST_TEST_TIERS=cuda timeout -k 5 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
                "$CARRY/bin/devices" --test-threads 1 2>&1 | tail -4 || status=1
        fi
        local work=/tmp/devices
        mkdir -p "$work"
        local gen=(
            "rmat22 rmat --scale 22 --edge-factor 16"
            "random22 random --vertices 4194304 --edges 33554432"
            "rmat24 rmat --scale 24 --edge-factor 16"
            "random24 random --vertices 16777216 --edges 134217728"
            "dense22 random --vertices 4194304 --edges 268435456"
            "rmat26 rmat --scale 26 --edge-factor 16"
        )
        local graphs=${GRAPHS:-rmat22 random22 rmat24 random24}
        for g in "${gen[@]}"; do
            set -- $g
            local name=$1
            shift
            [[ " $graphs " == *" $name "* ]] || continue
            [ -s "$work/$name.gmst" ] || "$CARRY/bin/gpumst" generate "$@" --seed 1 --out "$work/$name.gmst" >/dev/null
        done
        local all
        all=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
        echo "== one GPU (--devices 0) against all ($all), turns of ${ROUNDS:-2}; ms"
        for round in $(seq "${ROUNDS:-2}"); do
            for name in $graphs; do
                for cap in ${CAPS:-0}; do
                    for devices in 0 "$all"; do
                        # Split every graph here (the library splits from 2^24 edges
                        # a device unless SPLIT_MIN_EDGES says otherwise).
                        GPUMST_SPLIT_MIN_EDGES="${SPLIT_MIN_EDGES:-1}" "$CARRY/bin/gpumst" msf "$work/$name.gmst" --backend cuda --repeat "${REPEAT:-5}" --json \
                            --devices "$devices" --device-memory-limit "$cap" | python3 -c 'import json,sys
j = json.load(sys.stdin); t = j["timings_ms"]
print(sys.argv[1], "devices", sys.argv[2], "cap", sys.argv[3], j["edges"], "edges", j["total_weight"], " ".join(f"{k} {t[k]:.2f}" for k in ("upload", "compute", "download", "end_to_end")))' "$name" "$devices" "$cap" || status=1
                    done
                done
            done
        done
    } 2>&1 | tee -a "$OUT/devices.log"
    return $status
}

case "${1:-}" in
devices) setup_there && { devices_there || echo "device.sh: multi-device checks FAILED"; } ;;
partitions) setup_there && { partitions_there || echo "device.sh: partition checks FAILED"; } ;;
resident) setup_there && { resident_there || echo "device.sh: device-memory checks FAILED"; } ;;
tune) setup_there && tune_there ;;
transfers) setup_there && { transfers_there || echo "device.sh: transfer checks FAILED"; } ;;
profile) setup_there && profile_there ;;
variants) setup_there && variants_there ;;
lookahead) setup_there && lookahead_there ;;
primitives)
    setup_there
    echo "== primitives suite (every tier)"
    timeout -k 5 120 "$CARRY/bin/primitives" 2>&1 | tail -3
    bench_there --skip-msf --min-log2 24
    bench_there --tier cuda --skip-msf --min-log2 24
    tune_arg_there cuda opencl
    tune_lanes_there cuda
    ;;
suites-bench)
    setup_there
    for suite in primitives conformance; do
        echo "== $suite suite (every tier)"
        timeout -k 5 120 "$CARRY/bin/$suite" 2>&1 | tail -3
    done
    tune_arg_there cuda
    bench_there
    bench_there --tier cuda
    ;;
scans)
    setup_there
    echo "== primitives (single pass on NVIDIA)"
    timeout -k 5 120 "$CARRY/bin/primitives" 2>&1 | tail -3
    bench_there --skip-msf --min-log2 20
    ;;
test-bench-tune)
    setup_there && { test_there || echo "device.sh: tests FAILED"; }
    bench_there --skip-primitives
    tune_there
    ;;
cuda)
    setup_there && { cuda_tests_there || echo "device.sh: CUDA tests FAILED"; }
    bench_there --tier cuda
    cub_there 24
    ;;
build) build ;;
test) setup_there && test_there ;;
python) setup_there && python_there ;;
bench) shift; setup_there && bench_there "$@" && bench_there --tier cuda "$@" && cub_there ;;
all)
    setup_there && { test_there || echo "device.sh: tests FAILED"; }
    bench_there
    bench_there --tier cuda
    cub_there
    echo "== scans with the reduce-then-scan fallback, for comparison"
    GPUMST_OPENCL_SCAN=reduce-then-scan bench_there --skip-msf --min-log2 24
    echo "== scans with the portable (Hillis-Steele) work-group scan, for comparison"
    GPUMST_OPENCL_SHUFFLE=0 bench_there --skip-msf --min-log2 24
    ;;
*)
    sed -n '2,28p' "$0"
    exit 2
    ;;
esac
