#!/usr/bin/env python3
"""Compiles kernels/cuda/*.cu to PTX with NVRTC and writes the bundle the CUDA tier embeds.

The library ships this PTX so that a machine with only the NVIDIA driver runs the CUDA
tier (no nvcc or NVRTC at run time). NVRTC comes from PyPI, pinned to an old release so
that its PTX ISA loads on older drivers:

    pip install --target ~/.cache/gpumst/nvrtc-12.4.127 nvidia-cuda-nvrtc-cu12==12.4.127
    export PYTHONPATH=~/.cache/gpumst/nvrtc-12.4.127
    python3 tools/build_cuda_kernels.py           # rewrite kernels/cuda/gpumst.ptx.xz
    python3 tools/build_cuda_kernels.py --check   # fail if the checked-in bundle is stale

(scripts/test.sh installs it there and runs the check.)

The bundle is one text of modules, each introduced by a line
    //@module NAME OPTIONS
naming the module the Rust side asks for and the options it was built with (the Rust
side reads the work-group size and tile length from them). It is stored xz-compressed
(8.4 MB of PTX in 0.3 MB; the library expands it on the CUDA tier's first use); variant
bundles (--variant) are written as plain text.
"""
import argparse
import ctypes
import glob
import lzma
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "kernels")
BUNDLE = os.path.join(KERNELS, "cuda", "gpumst.ptx.xz")
NVRTC_RELEASE = "12.4"

# Compute capability 7.0 (Volta) and newer: independent thread scheduling, which the
# single-pass scan's look-back spin relies on, and every atomic the kernels use.
ARCH = "compute_70"
GROUP = 256  # threads per block
TILE_BYTES = 128  # bytes per thread in a scan tile
DTYPE_SIZES = [4, 4, 8, 8, 4, 8]  # i32 u32 i64 u64 f32 f64, DType's discriminants
SCAN_OPS = 3  # sum min max, ScanOp's discriminants


# Defines of the primitives the host also reads (gpu::Device::built_with): argmin's
# last block folds the partial results (one launch instead of two).
PRIMITIVE_DEFAULTS = {"ARG_LAST_GROUP": "1"}


def modules(group=GROUP, tile_bytes=TILE_BYTES, extra=()):
    """(name, source, options) for every module the CUDA tier may load; `group`,
    `tile_bytes` and `extra` options make variants for GPUMST_CUDA_KERNELS (an extra
    -DNAME=VALUE replaces a default of PRIMITIVE_DEFAULTS)."""
    overridden = {e[2:].split("=")[0] for e in extra if e.startswith("-D")}
    defaults = [f"-D{k}={v}" for k, v in PRIMITIVE_DEFAULTS.items() if k not in overridden]
    for dtype, size in enumerate(DTYPE_SIZES):
        for op in range(SCAN_OPS):
            for segmented in (0, 1):
                options = [
                    f"-DDTYPE={dtype}",
                    f"-DSCAN_OP={op}",
                    f"-DSEGMENTED={segmented}",
                    "-DSINGLE_PASS=1",
                    "-DNV_SHUFFLE=1",
                    f"-DWG={group}",
                    f"-DITEMS={tile_bytes // size}",
                    *defaults,
                    *extra,
                ]
                yield f"primitives_d{dtype}_o{op}_s{segmented}", "primitives.cu", options
    for keys in range(3):
        options = ["-DDTYPE=1", "-DSCAN_OP=0", f"-DKEYS={keys}", "-DATOM64=1", f"-DWG={group}", "-DITEMS=8", *extra]
        yield f"msf_k{keys}", "msf.cu", options


def load_nvrtc():
    candidates = []
    try:
        import nvidia.cuda_nvrtc  # the PyPI wheel

        for base in nvidia.cuda_nvrtc.__path__:
            candidates += glob.glob(os.path.join(base, "lib", "libnvrtc.so*"))
    except ImportError:
        pass
    if not candidates:
        sys.exit(
            "NVRTC not found: pip install nvidia-cuda-nvrtc-cu12==12.4.127 "
            "(the pinned release; see this file's docstring)"
        )
    nvrtc = ctypes.CDLL(sorted(candidates)[0])
    major, minor = ctypes.c_int(), ctypes.c_int()
    nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    version = f"{major.value}.{minor.value}"
    if version != NVRTC_RELEASE:
        sys.exit(f"NVRTC {version} found, but the bundle is built with NVRTC {NVRTC_RELEASE}")
    nvrtc.nvrtcGetErrorString.restype = ctypes.c_char_p
    return nvrtc


def compile_ptx(nvrtc, name, source_file, options):
    path = os.path.join(KERNELS, "cuda", source_file)
    with open(path, "rb") as f:
        source = f.read()
    program = ctypes.c_void_p()
    check(nvrtc, nvrtc.nvrtcCreateProgram(ctypes.byref(program), source, source_file.encode(), 0, None, None), name)
    flags = [
        f"--gpu-architecture={ARCH}",
        "--std=c++17",
        "--device-as-default-execution-space",
        f"--include-path={os.path.join(KERNELS, 'cuda')}",
        *options,
    ]
    argv = (ctypes.c_char_p * len(flags))(*[f.encode() for f in flags])
    status = nvrtc.nvrtcCompileProgram(program, len(flags), argv)
    log_size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(log_size))
    log = ctypes.create_string_buffer(log_size.value)
    nvrtc.nvrtcGetProgramLog(program, log)
    text = log.value.decode(errors="replace").strip()
    if status != 0:
        sys.exit(f"NVRTC failed on {name} ({' '.join(options)}):\n{text}")
    if text:
        print(f"{name}: {text}", file=sys.stderr)
    size = ctypes.c_size_t()
    check(nvrtc, nvrtc.nvrtcGetPTXSize(program, ctypes.byref(size)), name)
    ptx = ctypes.create_string_buffer(size.value)
    check(nvrtc, nvrtc.nvrtcGetPTX(program, ptx), name)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(program))
    return ptx.value.decode()


def check(nvrtc, status, name):
    if status != 0:
        sys.exit(f"NVRTC call failed on {name}: {nvrtc.nvrtcGetErrorString(status).decode()}")


def bundle(twice=False, variant=None, only=None):
    """The bundle's text; with `twice`, each module is compiled twice and must come out
    the same (CI compares a fresh build with the checked-in one, and NVRTC's output has
    been seen to vary between compiles of some kernel shapes). `variant`: keyword
    arguments of modules(); `only`: a regular expression the module names must match."""
    nvrtc = load_nvrtc()
    parts = [
        "// Generated by tools/build_cuda_kernels.py from kernels/cuda/*.cu with NVRTC "
        f"{NVRTC_RELEASE} for {ARCH}; do not edit.\n"
    ]
    for name, source, options in modules(**(variant or {})):
        if only and not re.fullmatch(only, name):
            continue
        ptx = compile_ptx(nvrtc, name, source, options)
        if twice and compile_ptx(nvrtc, name, source, options) != ptx:
            sys.exit(
                f"NVRTC gave two different PTX for {name}: CI could not reproduce the bundle. "
                "Reshape the kernel code it changed (see CHUNK_AT in kernels/opencl/primitives.cl)."
            )
        parts.append(f"//@module {name} {' '.join(options)}\n")
        parts.append(ptx.rstrip("\n") + "\n")
    return "".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the checked-in bundle")
    parser.add_argument("--variant", metavar="FILE",
                        help="write a variant bundle to FILE (for GPUMST_CUDA_KERNELS) instead")
    parser.add_argument("--group", type=int, default=GROUP, help="variant: threads per block")
    parser.add_argument("--tile-bytes", type=int, default=TILE_BYTES,
                        help="variant: bytes per thread in a scan tile")
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                        help="variant: an extra define (repeatable)")
    parser.add_argument("--only", metavar="REGEX", help="variant: only the modules named so")
    args = parser.parse_args()
    if args.variant:
        variant = {"group": args.group, "tile_bytes": args.tile_bytes,
                   "extra": [f"-D{d}" for d in args.defines]}
        text = bundle(variant=variant, only=args.only)
        with open(args.variant, "w") as f:
            f.write(text)
        print(f"wrote {args.variant} ({len(text)} bytes)")
        return
    text = bundle(twice=not args.check)
    if args.check:
        # The PTX must be what NVRTC makes now (the compressed bytes may differ between
        # xz versions; their contents may not).
        if read_bundle(BUNDLE) != text:
            sys.exit(f"{BUNDLE} is stale: run python3 tools/build_cuda_kernels.py and commit it")
        print(f"{BUNDLE} is up to date")
        return
    packed = lzma.compress(text.encode(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=9)
    with open(BUNDLE, "wb") as f:
        f.write(packed)
    print(f"wrote {BUNDLE} ({len(text)} bytes of PTX in {len(packed)})")


def read_bundle(path):
    """A bundle's text: the shipped one is xz-compressed, variants are plain."""
    with open(path, "rb") as f:
        data = f.read()
    return (lzma.decompress(data) if path.endswith(".xz") else data).decode()


if __name__ == "__main__":
    main()
