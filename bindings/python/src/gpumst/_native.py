"""The C ABI of libgpumst, reached through ctypes.

Every call of this package goes through the functions declared in ``include/gpumst.h``
(the same ABI C, C++, Go and Julia users get). ``PROTOTYPES`` below copies, verbatim,
the declarations this package uses; ``tests/test_abi.py`` checks each one against the
header, so a changed signature fails the tests instead of corrupting memory. ctypes
releases the GIL for the duration of every foreign call, so long calls run
concurrently from several Python threads.
"""

from __future__ import annotations

import ctypes
import os
import re
from pathlib import Path

# Declarations copied from include/gpumst.h (checked by tests/test_abi.py).
PROTOTYPES = """
const char *gpumst_version(void);
const char *gpumst_status_string(gpumst_status status);
const char *gpumst_tier_name(gpumst_tier tier);
gpumst_status gpumst_options_init(struct gpumst_options *options);
gpumst_status gpumst_context_create(const struct gpumst_options *options, struct gpumst_context **out, char *error, size_t error_capacity);
void gpumst_context_destroy(struct gpumst_context *ctx);
gpumst_status gpumst_context_tier(const struct gpumst_context *ctx, gpumst_tier *tier);
gpumst_status gpumst_context_device_name(const struct gpumst_context *ctx, char *buffer, size_t capacity, size_t *length);
gpumst_status gpumst_context_device_memory(const struct gpumst_context *ctx, uint64_t *bytes);
gpumst_status gpumst_context_device_count(const struct gpumst_context *ctx, uint32_t *count);
size_t gpumst_context_last_error(const struct gpumst_context *ctx, char *buffer, size_t capacity);
gpumst_status gpumst_probe_report(char *buffer, size_t capacity, size_t *length);
gpumst_status gpumst_scan(struct gpumst_context *ctx, gpumst_dtype dtype, gpumst_scan_op op, gpumst_scan_kind kind, const void *input, void *output, uint64_t n);
gpumst_status gpumst_segmented_scan_flags(struct gpumst_context *ctx, gpumst_dtype dtype, gpumst_scan_op op, gpumst_scan_kind kind, const void *input, void *output, const uint8_t *flags, uint64_t n);
gpumst_status gpumst_segmented_scan_offsets(struct gpumst_context *ctx, gpumst_dtype dtype, gpumst_scan_op op, gpumst_scan_kind kind, const void *input, void *output, uint64_t n, const uint64_t *offsets, uint64_t num_segments);
gpumst_status gpumst_argmin(struct gpumst_context *ctx, gpumst_dtype dtype, const void *input, uint64_t n, void *value, uint64_t *index);
gpumst_status gpumst_argmax(struct gpumst_context *ctx, gpumst_dtype dtype, const void *input, uint64_t n, void *value, uint64_t *index);
gpumst_status gpumst_segmented_argmin(struct gpumst_context *ctx, gpumst_dtype dtype, const void *input, uint64_t n, const uint64_t *offsets, uint64_t num_segments, void *values, uint64_t *indices);
gpumst_status gpumst_segmented_argmax(struct gpumst_context *ctx, gpumst_dtype dtype, const void *input, uint64_t n, const uint64_t *offsets, uint64_t num_segments, void *values, uint64_t *indices);
gpumst_status gpumst_graph_file_read(const char *path, gpumst_file_format format, struct gpumst_graph_file **out, char *error, size_t error_capacity);
void gpumst_graph_file_free(struct gpumst_graph_file *file);
gpumst_status gpumst_graph_file_view(const struct gpumst_graph_file *file, struct gpumst_graph *graph);
gpumst_file_format gpumst_graph_file_format(const struct gpumst_graph_file *file);
uint32_t gpumst_graph_file_vertex_base(const struct gpumst_graph_file *file);
gpumst_status gpumst_graph_init_edge_list(struct gpumst_graph *graph, uint64_t num_vertices, uint64_t num_edges, const uint32_t *u, const uint32_t *v, gpumst_dtype weight_type, const void *weights);
gpumst_status gpumst_graph_init_csr(struct gpumst_graph *graph, uint64_t num_vertices, uint64_t num_entries, const uint64_t *offsets, const uint32_t *targets, gpumst_dtype weight_type, const void *weights);
gpumst_status gpumst_msf(struct gpumst_context *ctx, const struct gpumst_graph *graph, gpumst_algorithm algorithm, uint32_t flags, struct gpumst_forest **forest);
gpumst_status gpumst_msf_mpi(struct gpumst_context *ctx, int64_t comm, const struct gpumst_graph *local, const uint64_t *edge_ids, gpumst_algorithm algorithm, uint32_t flags, int32_t root, struct gpumst_forest **forest);
void gpumst_forest_free(struct gpumst_forest *forest);
uint64_t gpumst_forest_num_edges(const struct gpumst_forest *forest);
const uint64_t *gpumst_forest_edges(const struct gpumst_forest *forest);
gpumst_tier gpumst_forest_tier(const struct gpumst_forest *forest);
uint64_t gpumst_forest_num_vertices(const struct gpumst_forest *forest);
uint64_t gpumst_forest_num_components(const struct gpumst_forest *forest);
const uint32_t *gpumst_forest_labels(const struct gpumst_forest *forest);
gpumst_status gpumst_forest_total_weight(const struct gpumst_forest *forest, struct gpumst_total_weight *total);
gpumst_status gpumst_device_graph_init(struct gpumst_device_graph *graph, uint64_t num_vertices, uint64_t num_edges, void *u, void *v, gpumst_dtype weight_type, void *weights);
gpumst_status gpumst_device_graph_init_csr(struct gpumst_device_graph *graph, uint64_t num_vertices, uint64_t num_entries, void *offsets, void *targets, gpumst_dtype weight_type, void *weights);
gpumst_status gpumst_context_native(struct gpumst_context *ctx, struct gpumst_native *native);
gpumst_status gpumst_scan_device(struct gpumst_context *ctx, gpumst_dtype dtype, gpumst_scan_op op, gpumst_scan_kind kind, const void *input, void *output, uint64_t n, void *stream);
gpumst_status gpumst_argmin_device(struct gpumst_context *ctx, gpumst_dtype dtype, const void *input, uint64_t n, void *stream, void *value, uint64_t *index);
gpumst_status gpumst_segmented_argmin_device(struct gpumst_context *ctx, gpumst_dtype dtype, const void *input, uint64_t n, const void *offsets, uint64_t num_segments, void *values, void *indices, void *stream);
gpumst_status gpumst_segmented_scan_flags_device(struct gpumst_context *ctx, gpumst_dtype dtype, gpumst_scan_op op, gpumst_scan_kind kind, const void *input, void *output, const void *flags, uint64_t n, void *stream);
gpumst_status gpumst_segmented_scan_offsets_device(struct gpumst_context *ctx, gpumst_dtype dtype, gpumst_scan_op op, gpumst_scan_kind kind, const void *input, void *output, uint64_t n, const void *offsets, uint64_t num_segments, void *stream);
gpumst_status gpumst_argmax_device(struct gpumst_context *ctx, gpumst_dtype dtype, const void *input, uint64_t n, void *stream, void *value, uint64_t *index);
gpumst_status gpumst_segmented_argmax_device(struct gpumst_context *ctx, gpumst_dtype dtype, const void *input, uint64_t n, const void *offsets, uint64_t num_segments, void *values, void *indices, void *stream);
gpumst_status gpumst_msf_device(struct gpumst_context *ctx, const struct gpumst_device_graph *graph, gpumst_algorithm algorithm, uint32_t flags, void *edge_ids, void *stream, uint64_t *num_edges, uint64_t *num_components, struct gpumst_total_weight *total);
gpumst_status gpumst_forest_labels_device(struct gpumst_context *ctx, const struct gpumst_device_graph *graph, const void *edge_ids, uint64_t num_edges, void *labels, void *stream);
"""

# Constants from include/gpumst.h (tests/test_abi.py checks every GPUMST_* name here).
GPUMST_MSF_LABELS = 1
GPUMST_MSF_UNWEIGHTED = 2
GPUMST_MSF_MAXIMUM = 4
GPUMST_OK = 0
GPUMST_INVALID_ARGUMENT = 1
GPUMST_INVALID_GRAPH = 2
GPUMST_BACKEND_UNAVAILABLE = 3
GPUMST_OUT_OF_MEMORY = 4
GPUMST_DEVICE_ERROR = 5
GPUMST_INTERNAL = 6
GPUMST_ALL_DEVICES = 0xFFFFFFFF
GPUMST_TIER_AUTO = 0
GPUMST_TIER_CPU = 1
GPUMST_TIER_OPENCL = 2
GPUMST_TIER_CUDA = 3
GPUMST_I32 = 0
GPUMST_U32 = 1
GPUMST_I64 = 2
GPUMST_U64 = 3
GPUMST_F32 = 4
GPUMST_F64 = 5
GPUMST_SUM = 0
GPUMST_MIN = 1
GPUMST_MAX = 2
GPUMST_INCLUSIVE = 0
GPUMST_EXCLUSIVE = 1
GPUMST_FORMAT_AUTO = 0
GPUMST_FORMAT_DIMACS = 1
GPUMST_FORMAT_MTX = 2
GPUMST_FORMAT_EDGELIST = 3
GPUMST_FORMAT_EGR = 4
GPUMST_FORMAT_GMST = 5
GPUMST_GRAPH_EDGE_LIST = 0
GPUMST_GRAPH_CSR = 1
GPUMST_ALGORITHM_AUTO = 0
GPUMST_ALGORITHM_BORUVKA = 1
GPUMST_ALGORITHM_PRIM = 2
GPUMST_ALGORITHM_STRUT = 3
GPUMST_ALGORITHM_KRUSKAL = 4


class Options(ctypes.Structure):
    """struct gpumst_options."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("tier", ctypes.c_int32),
        ("device_index", ctypes.c_uint32),
        ("cpu_threads", ctypes.c_uint32),
        ("cuda_context", ctypes.c_void_p),
        ("device_memory_limit", ctypes.c_uint64),
        ("devices", ctypes.POINTER(ctypes.c_uint32)),
        ("device_count", ctypes.c_uint32),
    ]


class GraphView(ctypes.Structure):
    """struct gpumst_graph."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("kind", ctypes.c_int32),
        ("weight_type", ctypes.c_int32),
        ("num_vertices", ctypes.c_uint64),
        ("num_edges", ctypes.c_uint64),
        ("u", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("offsets", ctypes.c_void_p),
        ("targets", ctypes.c_void_p),
        ("weights", ctypes.c_void_p),
    ]


class TotalWeight(ctypes.Structure):
    """struct gpumst_total_weight."""

    _fields_ = [
        ("is_float", ctypes.c_int32),
        ("value", ctypes.c_double),
        ("exact_high", ctypes.c_int64),
        ("exact_low", ctypes.c_uint64),
    ]


# How each C type of PROTOTYPES crosses into ctypes. Every enum is an int32_t typedef.
_SCALARS = {
    "void": None,
    "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64,
    "int32_t": ctypes.c_int32,
    "int64_t": ctypes.c_int64,
    "size_t": ctypes.c_size_t,
    "gpumst_status": ctypes.c_int32,
    "gpumst_tier": ctypes.c_int32,
    "gpumst_dtype": ctypes.c_int32,
    "gpumst_scan_op": ctypes.c_int32,
    "gpumst_scan_kind": ctypes.c_int32,
    "gpumst_algorithm": ctypes.c_int32,
    "gpumst_file_format": ctypes.c_int32,
}

_DECLARATION = re.compile(r"^(?P<ret>[\w\s\*]+?)\s*\b(?P<name>gpumst_\w+)\((?P<params>.*)\);$")


def _ctype(declared: str):
    """The ctypes type for a C type (a parameter's name already removed)."""
    declared = " ".join(declared.replace("*", " * ").split())
    if "*" not in declared:
        return _SCALARS[declared.replace("const ", "")]
    if declared == "const char *":
        return ctypes.c_char_p
    # Every other pointer travels as an address: arrays are numpy buffers, handles
    # and out-parameters are ctypes objects passed by reference.
    return ctypes.c_void_p


def parse_prototype(line: str):
    """(name, restype, argtypes) of one declaration of PROTOTYPES."""
    match = _DECLARATION.match(line.strip())
    if match is None:
        raise ValueError(f"not a gpumst declaration: {line!r}")
    params = match["params"].strip()
    argtypes = []
    if params != "void":
        for param in params.split(","):
            # Drop the parameter's name: the last identifier.
            declared = re.sub(r"\w+\s*$", "", param.strip())
            argtypes.append(_ctype(declared))
    return match["name"], _ctype(match["ret"]), argtypes


def _library_path() -> str:
    """libgpumst: GPUMST_LIBRARY if set, else the copy built into this package."""
    override = os.environ.get("GPUMST_LIBRARY")
    if override:
        return override
    here = Path(__file__).resolve().parent
    found = sorted(
        p for p in here.iterdir() if p.name.startswith("_libgpumst") and p.suffix in (".so", ".dylib", ".pyd", ".dll")
    )
    if not found:
        raise ImportError(
            f"the gpumst package in {here} carries no libgpumst (expected _libgpumst*.so): "
            "install it with `pip install ./bindings/python`, or point GPUMST_LIBRARY at a built libgpumst.so"
        )
    return str(found[0])


def _load():
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as exc:
        raise ImportError(f"cannot load libgpumst from {path}: {exc}") from exc
    for line in PROTOTYPES.strip().splitlines():
        name, restype, argtypes = parse_prototype(line)
        try:
            function = getattr(lib, name)
        except AttributeError as exc:
            raise ImportError(
                f"{path} lacks {name}: it is older than this Python package (version {lib_version(lib)})"
            ) from exc
        function.restype = restype
        function.argtypes = argtypes
    return lib, path


def lib_version(lib) -> str:
    try:
        f = lib.gpumst_version
        f.restype = ctypes.c_char_p
        return f().decode()
    except AttributeError:
        return "unknown"


lib, LIBRARY_PATH = _load()
