#!/usr/bin/env python3
"""What the GPU will run, without a GPU: assembles the shipped PTX bundle
(kernels/cuda/gpumst.ptx.xz) with ptxas, as the driver's JIT would, and reports each
kernel's registers, shared memory, spills and how many 256-work-item blocks fit on one
multiprocessor; or prints one kernel's SASS.

    python3 tools/cuda_kernel_report.py [--arch sm_90] [--module NAME_PREFIX]
    python3 tools/cuda_kernel_report.py --sass primitives_d1_o0_s0 scan_single_pass

ptxas comes from NVIDIA's PyPI wheel nvidia-cuda-nvcc-cu12 (the release of the NVRTC
that builds the bundle) and nvdisasm from nvidia-cuda-nvdisasm; both are fetched once
into ~/.cache/gpumst. The driver's JIT may differ a little from this ptxas.
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile
import zipfile

from build_cuda_kernels import read_bundle  # the shipped bundle is xz, variants plain

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "kernels" / "cuda" / "gpumst.ptx.xz"
CACHE = pathlib.Path.home() / ".cache" / "gpumst"
WHEELS = {
    "ptxas": ("nvidia-cuda-nvcc-cu12==12.4.131", "nvcc-12.4.131"),
    "nvdisasm": ("nvidia-cuda-nvdisasm", "nvdisasm"),
}
# Per-multiprocessor limits of sm_90 (H100/H200): registers, shared memory usable by
# blocks, threads, blocks; and the shared memory each block reserves for the system.
LIMITS = {"registers": 65536, "smem": 228 * 1024, "threads": 2048, "blocks": 32}
BLOCK_RESERVED_SMEM = 1024
BLOCK = 256


def tool(name):
    """The path of ptxas or nvdisasm, fetched from PyPI on first use."""
    spec, folder = WHEELS[name]
    home = CACHE / folder
    found = sorted(home.rglob(name)) if home.exists() else []
    if not found:
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as download:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", download, spec],
                check=True,
            )
            for wheel in pathlib.Path(download).glob("*.whl"):
                zipfile.ZipFile(wheel).extractall(home)
        found = sorted(home.rglob(name))
        if not found:
            sys.exit(f"{spec} holds no {name}")
    found[0].chmod(0o755)
    return str(found[0])


def modules(bundle=BUNDLE):
    """(name, PTX) for every module of the bundle."""
    text = read_bundle(str(bundle))
    parts = re.split(r"^//@module (\S+)[^\n]*\n", text, flags=re.M)
    return list(zip(parts[1::2], parts[2::2]))


def assemble(ptx, arch, work):
    source = pathlib.Path(work) / "module.ptx"
    cubin = pathlib.Path(work) / "module.cubin"
    source.write_text(ptx)
    out = subprocess.run(
        [tool("ptxas"), f"-arch={arch}", "-O3", "-v", str(source), "-o", str(cubin)],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stderr, cubin


def resident_blocks(registers, smem, block=BLOCK):
    by_threads = LIMITS["threads"] // block
    by_registers = LIMITS["registers"] // max(1, registers * block)
    by_smem = LIMITS["smem"] // (smem + BLOCK_RESERVED_SMEM)
    return min(by_threads, by_registers, by_smem, LIMITS["blocks"])


def report(arch, prefix, bundle=BUNDLE, block=BLOCK):
    print(f"{'module':<24} {'kernel':<28} {'regs':>4} {'smem':>6} {'spill':>5} {'blocks/SM':>9}")
    with tempfile.TemporaryDirectory() as work:
        for name, ptx in modules(bundle):
            if not name.startswith(prefix):
                continue
            log, _ = assemble(ptx, arch, work)
            for kernel, body in re.findall(
                r"Compiling entry function '(\w+)'.*?\n(.*?)(?=Compiling entry|\Z)", log, re.S
            ):
                registers = int(re.search(r"Used (\d+) registers", body).group(1))
                smem_match = re.search(r"(\d+) bytes smem", body)
                smem = int(smem_match.group(1)) if smem_match else 0
                spills = sum(int(x) for x in re.findall(r"(\d+) bytes spill", body))
                blocks = resident_blocks(registers, smem, block)
                print(f"{name:<24} {kernel:<28} {registers:>4} {smem:>6} {spills:>5} {blocks:>9}")


def sass(module, kernel, arch, bundle=BUNDLE):
    ptx = dict(modules(bundle)).get(module)
    if ptx is None:
        sys.exit(f"no module {module} in {BUNDLE}")
    with tempfile.TemporaryDirectory() as work:
        _, cubin = assemble(ptx, arch, work)
        out = subprocess.run(
            [tool("nvdisasm"), str(cubin)], capture_output=True, text=True, check=True
        ).stdout
    section = re.search(rf"\.text\.{kernel}:\n(.*?)(?=\n\s*\.section|\Z)", out, re.S)
    if section is None:
        sys.exit(f"no kernel {kernel} in {module}")
    print(section.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--module", default="", help="only modules starting with this")
    parser.add_argument("--sass", nargs=2, metavar=("MODULE", "KERNEL"))
    parser.add_argument("--bundle", default=BUNDLE, help="another bundle (a variant)")
    parser.add_argument("--block", type=int, default=BLOCK, help="threads per block it was built for")
    args = parser.parse_args()
    if args.sass:
        sass(*args.sass, args.arch, args.bundle)
    else:
        report(args.arch, args.module, args.bundle, args.block)


if __name__ == "__main__":
    main()
