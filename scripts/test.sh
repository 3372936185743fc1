#!/usr/bin/env bash
# Every test of the project: formatting, lints, unit/property/integration tests, the
# generated-header check, the MPI entry point under mpirun, the C/C++ ffi-tests under
# valgrind, the installed library with
# its C (the README's example), C++ and Go consumers (scripts/test_install.sh), and the
# Python package (scripts/test_python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== CUDA kernels: the checked-in PTX is what NVRTC 12.4 makes of kernels/cuda/*.cu"
NVRTC_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/gpumst/nvrtc-12.4.127"
if [ ! -d "$NVRTC_DIR/nvidia/cuda_nvrtc" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$NVRTC_DIR" \
        nvidia-cuda-nvrtc-cu12==12.4.127
fi
PYTHONPATH="$NVRTC_DIR" python3 tools/build_cuda_kernels.py --check
echo "== cargo fmt --check"
cargo fmt --check
echo "== cargo clippy -D warnings"
cargo clippy --all-targets -- -D warnings
echo "== cargo test (unit, property, conformance, header, tier, I/O and CLI tests)"
cargo test --release
echo "== OpenCL conformance with 32-bit atomics only (as on devices without 64-bit ones),"
echo "   the auto MSF's host four rounds ahead of its worklist lengths (the default is one),"
echo "   and its light phases from one edge per vertex (the default is 2.5)"
GPUMST_OPENCL_ATOMICS=32 GPUMST_GPU_LOOKAHEAD=4 GPUMST_GPU_FILTER_FROM=100 cargo test --release --test conformance
echo "== OpenCL primitives with the single-pass scan (PoCL's default is reduce-then-scan),"
echo "   its kept tile states zeroed every 4th scan (the default is every 2^29th); the device"
echo "   graphs' suites with it too (their forest ids then take one launch, rs_ids_one_pass)"
GPUMST_OPENCL_SCAN=single-pass GPUMST_GPU_SCAN_EPOCHS=5 cargo test --release --test primitives \
    --test device_memory --test partitioned
echo "== OpenCL out-of-memory paths (device memory capped at 1 MB)"
GPUMST_OPENCL_MEMORY_LIMIT=1000000 cargo test --release --test conformance out_of_device_memory
echo "== every input-sized allocation refused in turn (fault-injection build), on each tier found"
cargo test --release --features fault-injection --test alloc_failures
echo "== every GPU driver call failed in turn with each injected error (PoCL here; CUDA on the device machine)"
cargo test --release --features fault-injection --test driver_faults
echo "== MPI (feature mpi): the Rust suite and a C program under mpirun with 1 to 4 ranks"
bash scripts/test_mpi.sh
echo "== tiers on this machine (the conformance suite ran on each one found; the others were skipped)"
cargo run --release --quiet --bin gpumst -- info
echo "== ffi-tests (C and C++ against include/gpumst.h, under valgrind)"
bash ffi-tests/run.sh
echo "== installed library: install into a temporary prefix; SONAME, exports, size; C, C++ and Go consumers"
bash scripts/test_install.sh
echo "== Python package (bindings/python): wheel, clean environment, tests, NetworkX's tests"
bash scripts/test_python.sh
