"""The Python layer calls libgpumst through ctypes declarations that must match
include/gpumst.h exactly: each declaration, constant and struct layout is checked here."""

from __future__ import annotations

import ctypes
import re

import pytest
from conftest import ROOT

from gpumst import _native as C

HEADER = ROOT / "include" / "gpumst.h"


def _header_declarations() -> dict[str, str]:
    text = HEADER.read_text()
    found = {}
    for line in text.splitlines():
        match = re.match(r"^[\w\s\*]*\b(gpumst_\w+)\(.*\);$", line.strip())
        if match and not line.startswith(("#", "//", "typedef")):
            found[match.group(1)] = " ".join(line.split())
    return found


def _header_constants() -> dict[str, str]:
    # <stdint.h>'s limits, which the header uses for "every device" and "no index".
    limits = {"UINT32_MAX": str(2**32 - 1), "UINT64_MAX": str(2**64 - 1)}
    found = re.findall(r"^#define (GPUMST_\w+) (\S+)$", HEADER.read_text(), flags=re.M)
    return {name: limits.get(value, value) for name, value in found}


def test_every_declaration_matches_the_header():
    header = _header_declarations()
    assert len(header) > 30
    for line in C.PROTOTYPES.strip().splitlines():
        name = C.parse_prototype(line)[0]
        assert name in header, f"{name} is not declared in gpumst.h"
        assert " ".join(line.split()) == header[name], f"{name}: the Python declaration differs from gpumst.h"


def test_every_constant_matches_the_header():
    header = _header_constants()
    ours = {k: v for k, v in vars(C).items() if k.startswith("GPUMST_")}
    assert len(ours) > 30
    for name, value in ours.items():
        assert name in header, f"{name} is not defined in gpumst.h"
        assert str(value) == header[name], f"{name} = {value} here but {header[name]} in gpumst.h"


def test_prototypes_parse_into_ctypes():
    name, restype, argtypes = C.parse_prototype(
        "gpumst_status gpumst_argmin(struct gpumst_context *ctx, gpumst_dtype dtype, const void *input, uint64_t n, void *value, uint64_t *index);"
    )
    assert (name, restype) == ("gpumst_argmin", ctypes.c_int32)
    assert argtypes == [
        ctypes.c_void_p,
        ctypes.c_int32,
        ctypes.c_void_p,
        ctypes.c_uint64,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    assert C.parse_prototype("const char *gpumst_version(void);")[1:] == (ctypes.c_char_p, [])
    with pytest.raises(ValueError):
        C.parse_prototype("int main(void);")


def test_struct_layouts_match_the_library():
    # The library's init functions write sizeof() of its own structs and every field.
    options = C.Options()
    assert C.lib.gpumst_options_init(ctypes.byref(options)) == C.GPUMST_OK
    assert options.struct_size == ctypes.sizeof(C.Options)
    assert (options.tier, options.device_index, options.cpu_threads) == (C.GPUMST_TIER_AUTO, 0, 0)
    graph = C.GraphView()
    status = C.lib.gpumst_graph_init_edge_list(ctypes.byref(graph), 7, 11, 0x1000, 0x2000, C.GPUMST_F32, 0x3000)
    assert status == C.GPUMST_OK
    assert graph.struct_size == ctypes.sizeof(C.GraphView)
    assert (graph.kind, graph.weight_type, graph.num_vertices, graph.num_edges) == (
        C.GPUMST_GRAPH_EDGE_LIST,
        C.GPUMST_F32,
        7,
        11,
    )
    assert (graph.u, graph.v, graph.offsets, graph.targets, graph.weights) == (0x1000, 0x2000, None, None, 0x3000)
    status = C.lib.gpumst_graph_init_csr(ctypes.byref(graph), 3, 4, 0x4000, 0x5000, C.GPUMST_U64, None)
    assert status == C.GPUMST_OK
    assert (graph.kind, graph.offsets, graph.targets, graph.u, graph.weights) == (
        C.GPUMST_GRAPH_CSR,
        0x4000,
        0x5000,
        None,
        None,
    )


def test_the_library_is_the_packaged_one():
    import gpumst

    assert gpumst.version() == gpumst.__version__
    assert "_libgpumst" in C.LIBRARY_PATH or "GPUMST_LIBRARY" in __import__("os").environ
