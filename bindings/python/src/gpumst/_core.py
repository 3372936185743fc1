"""Contexts, errors, minimum spanning forests, graph files and the primitives: a thin
layer over the C API (see _native)."""

from __future__ import annotations

import ctypes
import json
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from . import _device as D
from . import _native as C
from ._arrays import (
    DTYPES,
    address,
    element_array,
    flags_array,
    library_array,
    offsets_array,
    output_array,
    vertex_ids,
)

lib = C.lib

# ---- errors -------------------------------------------------------------------------


class Error(Exception):
    """A failed gpumst call. `status` is the C API's status code; the message is the
    library's, saying what was wrong and where."""

    status: int = C.GPUMST_INTERNAL

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidArgument(Error, ValueError):
    """An argument (length, pointer, option, enum value) is not acceptable."""

    status = C.GPUMST_INVALID_ARGUMENT


class InvalidGraph(Error, ValueError):
    """Graph data failed validation; the message names the first offending index."""

    status = C.GPUMST_INVALID_GRAPH


class BackendUnavailable(Error, RuntimeError):
    """The requested tier is missing on this machine or lacks the operation."""

    status = C.GPUMST_BACKEND_UNAVAILABLE


class OutOfMemory(Error, MemoryError):
    """Host or device memory could not be allocated."""

    status = C.GPUMST_OUT_OF_MEMORY


class DeviceError(Error, RuntimeError):
    """A GPU driver or runtime call failed."""

    status = C.GPUMST_DEVICE_ERROR


class InternalError(Error, RuntimeError):
    """A bug in gpumst."""

    status = C.GPUMST_INTERNAL


_ERRORS = {
    cls.status: cls
    for cls in (InvalidArgument, InvalidGraph, BackendUnavailable, OutOfMemory, DeviceError, InternalError)
}


def _error(status: int, message: str) -> Error:
    cls = _ERRORS.get(status, InternalError)
    return cls(message or lib.gpumst_status_string(status).decode(), status)


# ---- names --------------------------------------------------------------------------

TIERS = {
    "auto": C.GPUMST_TIER_AUTO,
    "cpu": C.GPUMST_TIER_CPU,
    "opencl": C.GPUMST_TIER_OPENCL,
    "cuda": C.GPUMST_TIER_CUDA,
}
_TIER_NAMES = {v: k for k, v in TIERS.items()}
ALGORITHMS = {
    "auto": C.GPUMST_ALGORITHM_AUTO,
    "boruvka": C.GPUMST_ALGORITHM_BORUVKA,
    "prim": C.GPUMST_ALGORITHM_PRIM,
    "strut": C.GPUMST_ALGORITHM_STRUT,
    "kruskal": C.GPUMST_ALGORITHM_KRUSKAL,
}
_OPS = {"sum": C.GPUMST_SUM, "min": C.GPUMST_MIN, "max": C.GPUMST_MAX}
FORMATS = {
    "auto": C.GPUMST_FORMAT_AUTO,
    "dimacs": C.GPUMST_FORMAT_DIMACS,
    "mtx": C.GPUMST_FORMAT_MTX,
    "edgelist": C.GPUMST_FORMAT_EDGELIST,
    "egr": C.GPUMST_FORMAT_EGR,
    "gmst": C.GPUMST_FORMAT_GMST,
}
_FORMAT_NAMES = {v: k for k, v in FORMATS.items()}
_DTYPE_OF_CODE = {code: dtype for dtype, code in DTYPES.items()}


def _choice(kind: str, value: Any, table: dict) -> int:
    key = value.lower() if isinstance(value, str) else value
    if key not in table:
        raise ValueError(f"unknown {kind} {value!r}: expected one of {', '.join(table)}")
    return table[key]


def _edge_list_view(u: Any, v: Any, w: Any, num_vertices: int | None) -> tuple[C.GraphView, tuple]:
    """A gpumst_graph over the arrays of an edge list, and those arrays (hold them for
    as long as the view is used). The C API trusts the arrays to hold num_edges entries
    each: the lengths are checked here."""
    u = vertex_ids("u", u)
    v = vertex_ids("v", v)
    weights = None if w is None else element_array("w", w)
    if u.shape != v.shape:
        raise ValueError(f"u has {u.shape[0]} entries but v has {v.shape[0]}")
    if weights is not None and weights.shape != u.shape:
        raise ValueError(f"w has {weights.shape[0]} entries but there are {u.shape[0]} edges")
    if num_vertices is None:
        num_vertices = int(max(u.max(), v.max())) + 1 if u.size else 0
    if not 0 <= num_vertices < 2**64:
        raise ValueError(f"num_vertices = {num_vertices} is negative or too large")
    graph = C.GraphView()
    lib.gpumst_graph_init_edge_list(
        ctypes.byref(graph),
        num_vertices,
        u.shape[0],
        address(u),
        address(v),
        DTYPES[weights.dtype] if weights is not None else C.GPUMST_U32,
        address(weights),
    )
    return graph, (u, v, weights)


def _msf_code_and_flags(algorithm: str, labels: bool, maximum: bool) -> tuple[int, int]:
    """The C algorithm code and gpumst_msf flags for these options."""
    code = _choice("algorithm", algorithm, ALGORITHMS)
    flags = (C.GPUMST_MSF_LABELS if labels else 0) | (C.GPUMST_MSF_MAXIMUM if maximum else 0)
    return code, flags


def _read_string(fill) -> str:
    """A string from a C function with the (buffer, capacity, length) convention."""
    length = ctypes.c_size_t(0)
    status = fill(None, 0, ctypes.byref(length))
    if status != C.GPUMST_OK:
        raise _error(status, "")
    buffer = ctypes.create_string_buffer(length.value + 1)
    status = fill(buffer, len(buffer), None)
    if status != C.GPUMST_OK:
        raise _error(status, "")
    return buffer.value.decode("utf-8", "replace")


def version() -> str:
    """The version of the loaded libgpumst ("MAJOR.MINOR.PATCH")."""
    return lib.gpumst_version().decode()


def info() -> dict:
    """What the run-time probe found: the CUDA and OpenCL drivers tried, the devices
    seen, and why each tier is or is not usable (as `gpumst info --json` prints)."""
    return json.loads(_read_string(lib.gpumst_probe_report))


# ---- contexts -----------------------------------------------------------------------


class Context:
    """An opened gpumst context: a compute tier and its device.

    ``backend``: "auto" (CUDA, then an OpenCL GPU, then all CPU cores; the
    ``GPUMST_BACKEND`` environment variable can force one), "cpu", "opencl" or "cuda".
    A forced tier that cannot be used raises :class:`BackendUnavailable` saying why.
    ``device``: the index of the GPU of that tier; ``threads``: CPU worker threads
    (0: all cores). ``device_memory_limit``: the most device memory (bytes) a GPU
    tier may use for one call (0: the device's); a minimum spanning forest larger
    than it is computed a partition of the edges at a time, giving the same forest.
    On the CPU tier it caps the memory a forest's working arrays take (0: no cap).
    ``devices``: several GPUs of the tier, as a list of indices (the first replaces
    ``device``) or ``"all"`` (every usable one like ``device``). Everything runs on the
    first; a forest is split across them (the same forest) where the environment
    variable ``GPUMST_SPLIT_MIN_EDGES`` asks for it. The CPU tier ignores it.

    Every method may be called from several Python threads at once; the GIL is released
    while the library works. ``close()`` (or leaving a ``with`` block) releases the
    context after calls in flight have finished.
    """

    def __init__(
        self,
        backend: str = "auto",
        device: int = 0,
        threads: int = 0,
        device_memory_limit: int = 0,
        devices: Sequence[int] | str | None = None,
    ):
        options = C.Options()
        lib.gpumst_options_init(ctypes.byref(options))
        options.tier = _choice("backend", backend, TIERS)
        if not 0 <= device < 2**32 or not 0 <= threads < 2**32:
            raise ValueError(f"device ({device}) and threads ({threads}) must be between 0 and 2^32 - 1")
        if not 0 <= device_memory_limit < 2**64:
            raise ValueError(f"device_memory_limit ({device_memory_limit}) must be between 0 and 2^64 - 1 bytes")
        options.device_index = device
        options.cpu_threads = threads
        options.device_memory_limit = device_memory_limit
        if devices == "all":
            options.device_count = C.GPUMST_ALL_DEVICES
        elif devices is not None:
            if (
                isinstance(devices, str)
                or len(devices) == 0
                or not all(isinstance(d, int) and 0 <= d < 2**32 for d in devices)
            ):
                raise ValueError(f"devices ({devices!r}) must be 'all' or a non-empty list of device indices")
            listed = (ctypes.c_uint32 * len(devices))(*devices)  # alive until the call returns
            options.devices = ctypes.cast(listed, ctypes.POINTER(ctypes.c_uint32))
            options.device_count = len(devices)
        handle = ctypes.c_void_p()
        why = ctypes.create_string_buffer(2048)
        status = lib.gpumst_context_create(ctypes.byref(options), ctypes.byref(handle), why, len(why))
        if status != C.GPUMST_OK:
            raise _error(status, why.value.decode("utf-8", "replace"))
        self._handle: int | None = handle.value
        self._in_flight = 0
        self._idle = threading.Condition()

    @contextmanager
    def _use(self) -> Iterator[int]:
        with self._idle:
            if self._handle is None:
                raise ValueError("this gpumst Context is closed")
            self._in_flight += 1
            handle = self._handle
        try:
            yield handle
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    def _check(self, handle: int, status: int) -> None:
        if status != C.GPUMST_OK:
            buffer = ctypes.create_string_buffer(4096)
            lib.gpumst_context_last_error(handle, buffer, len(buffer))
            raise _error(status, buffer.value.decode("utf-8", "replace"))

    def close(self) -> None:
        """Releases the context, waiting for calls in flight on other threads."""
        with self._idle:
            while self._in_flight:
                self._idle.wait()
            handle, self._handle = self._handle, None
        if handle is not None:
            lib.gpumst_context_destroy(handle)

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and lib is not None:
            lib.gpumst_context_destroy(handle)
            self._handle = None

    @property
    def tier(self) -> str:
        """The tier this context runs on: "cpu", "opencl" or "cuda"."""
        with self._use() as h:
            tier = ctypes.c_int32()
            self._check(h, lib.gpumst_context_tier(h, ctypes.byref(tier)))
            return _TIER_NAMES[tier.value]

    @property
    def device_name(self) -> str:
        with self._use() as h:
            return _read_string(lambda b, c, n: lib.gpumst_context_device_name(h, b, c, n))

    @property
    def device_memory(self) -> int:
        """Bytes of memory of the context's device (system memory for the CPU tier)."""
        with self._use() as h:
            value = ctypes.c_uint64()
            self._check(h, lib.gpumst_context_device_memory(h, ctypes.byref(value)))
            return value.value

    @property
    def device_count(self) -> int:
        """How many devices of its GPU tier the context uses (1 on the CPU tier)."""
        with self._use() as h:
            value = ctypes.c_uint32()
            self._check(h, lib.gpumst_context_device_count(h, ctypes.byref(value)))
            return value.value

    def __repr__(self) -> str:
        if self._handle is None:
            return "<gpumst.Context (closed)>"
        return f"<gpumst.Context {self.tier}: {self.device_name}>"

    # -- minimum spanning forests ------------------------------------------------------

    def minimum_spanning_forest(
        self,
        u: Any,
        v: Any,
        w: Any = None,
        *,
        num_vertices: int | None = None,
        algorithm: str = "auto",
        labels: bool = False,
        maximum: bool = False,
        total_weight: bool = True,
    ) -> Forest | DeviceForest:
        """See :func:`gpumst.minimum_spanning_forest`."""
        if any(D.is_device_array(a) for a in (u, v, w)):
            return self._msf_device(u, v, w, num_vertices, algorithm, labels, maximum, total_weight)
        graph, _arrays = _edge_list_view(u, v, w, num_vertices)
        return self._msf(graph, algorithm, labels, maximum)

    def minimum_spanning_forest_mpi(
        self,
        comm: Any,
        u: Any,
        v: Any,
        w: Any = None,
        *,
        num_vertices: int,
        ids: Any = None,
        root: int | None = None,
        algorithm: str = "auto",
        labels: bool = False,
        maximum: bool = False,
    ) -> Forest | None:
        """The forest of a graph whose edges are spread over the ranks of an MPI
        communicator; every rank calls it with its share (``u``, ``v``, ``w``).

        ``comm``: an mpi4py communicator (its ``py2f()`` handle is passed) or a Fortran
        communicator handle (int). ``num_vertices``: the whole graph's, the same on every
        rank, as are the weights' dtype and the options. ``ids``: each local edge's global
        id (unique across ranks); None numbers the shares in rank order, as if
        concatenated. ``root``: the rank that gets the forest (the others get None); None:
        every rank gets it. The forest is the one :func:`minimum_spanning_forest` gives
        for all the edges. A failure on any rank raises on every rank, naming the rank.
        Needs a libgpumst built with the ``mpi`` feature.
        """
        handle = comm.py2f() if hasattr(comm, "py2f") else int(comm)
        graph, arrays = _edge_list_view(u, v, w, num_vertices)
        edge_ids = None if ids is None else np.ascontiguousarray(ids, dtype=np.uint64)
        if edge_ids is not None and edge_ids.shape != arrays[0].shape:
            raise ValueError(f"ids has {edge_ids.shape[0]} entries but there are {arrays[0].shape[0]} edges")
        code, flags = _msf_code_and_flags(algorithm, labels, maximum)
        forest = ctypes.c_void_p()
        with self._use() as h:
            status = lib.gpumst_msf_mpi(
                h,
                handle,
                ctypes.byref(graph),
                address(edge_ids),
                code,
                flags,
                -1 if root is None else root,
                ctypes.byref(forest),
            )
            self._check(h, status)
        if not forest.value:
            return None
        return Forest(_ForestHandle(forest.value), algorithm.lower(), bool(maximum))

    def minimum_spanning_forest_csr(
        self,
        indptr: Any,
        indices: Any,
        data: Any = None,
        *,
        algorithm: str = "auto",
        labels: bool = False,
        maximum: bool = False,
        total_weight: bool = True,
    ) -> Forest | DeviceForest:
        """See :func:`gpumst.minimum_spanning_forest_csr`."""
        if any(D.is_device_array(a) for a in (indptr, indices, data)):
            return self._msf_csr_device(indptr, indices, data, algorithm, labels, maximum, total_weight)
        offsets = offsets_array("indptr", indptr)
        targets = vertex_ids("indices", indices)
        weights = None if data is None else element_array("data", data)
        if offsets.shape[0] == 0:
            raise ValueError("indptr is empty: it needs num_vertices + 1 entries (at least [0])")
        if weights is not None and weights.shape != targets.shape:
            raise ValueError(f"data has {weights.shape[0]} entries but indices has {targets.shape[0]}")
        graph = C.GraphView()
        lib.gpumst_graph_init_csr(
            ctypes.byref(graph),
            offsets.shape[0] - 1,
            targets.shape[0],
            address(offsets),
            address(targets),
            DTYPES[weights.dtype] if weights is not None else C.GPUMST_U32,
            address(weights),
        )
        return self._msf(graph, algorithm, labels, maximum)

    def native(self) -> D.Native:
        """The native objects of the context's GPU tier (``tier``, ``context``, ``queue``,
        ``device`` as integers): :class:`BackendUnavailable` on a CPU context."""
        native = D.Native()
        with self._use() as h:
            self._check(h, lib.gpumst_context_native(h, ctypes.byref(native)))
        return native

    @staticmethod
    def _device_weights(view: D.DeviceView | None, length: int, lengths_of: str) -> int:
        """The dtype code of GPU weights (one per entry of `lengths_of`), or U32 for none."""
        if view is None:
            return C.GPUMST_U32
        if view.length != length:
            raise ValueError(f"w has {view.length} entries but {lengths_of} has {length}")
        dtype = np.dtype(view.dtype).newbyteorder("=")
        if dtype not in DTYPES:
            raise TypeError(f"w has dtype {view.dtype}: use int32, uint32, int64, uint64, float32 or float64")
        return DTYPES[dtype]

    def _msf_device(self, u, v, w, num_vertices, algorithm, labels, maximum, total_weight) -> DeviceForest:
        """gpumst_msf_device on CUDA arrays; the forest's ids come back as a DeviceArray."""
        native = self._cuda_native()
        if num_vertices is None:
            raise ValueError("num_vertices is required when the edges are in GPU memory")
        with D.device_views(("u", "v", "w"), (u, v, w), native.queue or 0) as (du, dv, dw):
            for name, view in (("u", du), ("v", dv)):
                if view.dtype != np.uint32:
                    raise TypeError(f"{name} must be uint32 in GPU memory, got {view.dtype}")
            if dv.length != du.length or (dw is not None and dw.length != du.length):
                lengths = [du.length, dv.length] + ([dw.length] if dw is not None else [])
                raise ValueError(f"u, v and w must have one entry per edge, got lengths {lengths}")
            weight_type = self._device_weights(dw, du.length, "u")
            graph = D.DeviceGraphView()
            lib.gpumst_device_graph_init(
                ctypes.byref(graph),
                num_vertices,
                du.length,
                du.address,
                dv.address,
                weight_type,
                dw.address if dw is not None else None,
            )
            room = min(max(num_vertices - 1, 0), du.length)
            return self._solve_device(native, graph, (du, dv, dw), room, algorithm, labels, maximum, total_weight)

    def _msf_csr_device(self, indptr, indices, data, algorithm, labels, maximum, total_weight) -> DeviceForest:
        """gpumst_msf_device on a CSR in CUDA arrays (checked there, symmetry too)."""
        native = self._cuda_native()
        names = ("indptr", "indices", "data")
        with D.device_views(names, (indptr, indices, data), native.queue or 0) as (offsets, targets, dw):
            if offsets.dtype != np.uint64 or offsets.length == 0:
                raise TypeError(
                    f"indptr must be a non-empty uint64 array in GPU memory, got {offsets.length} x {offsets.dtype}"
                    " (cupy: indptr.astype(cupy.uint64))"
                )
            if targets.dtype != np.uint32:
                raise TypeError(
                    f"indices must be uint32 in GPU memory, got {targets.dtype} (cupy: indices.astype(cupy.uint32))"
                )
            weight_type = self._device_weights(dw, targets.length, "indices")
            num_vertices = offsets.length - 1
            graph = D.DeviceGraphView()
            lib.gpumst_device_graph_init_csr(
                ctypes.byref(graph),
                num_vertices,
                targets.length,
                offsets.address,
                targets.address or None,
                weight_type,
                dw.address if dw is not None else None,
            )
            room = min(max(num_vertices - 1, 0), targets.length // 2)
            views = (offsets, targets, dw)
            return self._solve_device(native, graph, views, room, algorithm, labels, maximum, total_weight)

    def _solve_device(self, native, graph, views, room, algorithm, labels, maximum, total_weight) -> DeviceForest:
        """Runs gpumst_msf_device on a filled graph view (`views`: its arrays, whose
        streams are followed); the ids land in a new DeviceArray with `room` entries."""
        streams = sorted({x.stream for x in views if x is not None and x.stream})
        for extra in streams[1:]:
            D.synchronize(extra)
        edges = D.DeviceArray(native.context, room, np.uint64)
        code = _choice("algorithm", algorithm, ALGORITHMS)
        flags = C.GPUMST_MSF_MAXIMUM if maximum else 0
        vertices = graph.num_vertices
        component_labels = D.DeviceArray(native.context, vertices, np.uint32) if labels else None
        count, components, total = ctypes.c_uint64(), ctypes.c_uint64(), C.TotalWeight()
        with self._use() as h:
            status = lib.gpumst_msf_device(
                h,
                ctypes.byref(graph),
                code,
                flags,
                edges.address or None,
                streams[0] if streams else None,
                ctypes.byref(count),
                ctypes.byref(components),
                ctypes.byref(total) if total_weight else None,
            )
            self._check(h, status)
            if component_labels is not None:
                status = lib.gpumst_forest_labels_device(
                    h, ctypes.byref(graph), edges.address or None, count.value, component_labels.address or None, None
                )
                self._check(h, status)
        edges._shorten(count.value)
        weight = None
        if total_weight:
            weight = total.value if total.is_float else total.exact_high * 2**64 + total.exact_low
        forest = DeviceForest(edges, vertices, components.value, weight, algorithm.lower(), bool(maximum))
        forest.labels = component_labels
        return forest

    def _msf(self, graph: C.GraphView, algorithm: str, labels: bool, maximum: bool) -> Forest:
        """Runs gpumst_msf on a graph view (its arrays are held by the caller's frame)."""
        code, flags = _msf_code_and_flags(algorithm, labels, maximum)
        handle = ctypes.c_void_p()
        with self._use() as h:
            # ctypes releases the GIL for the call.
            status = lib.gpumst_msf(h, ctypes.byref(graph), code, flags, ctypes.byref(handle))
            self._check(h, status)
        return Forest(_ForestHandle(handle.value), algorithm.lower(), bool(maximum))

    # -- primitives --------------------------------------------------------------------

    def scan(self, a: Any, op: str = "sum", *, exclusive: bool = False, out: np.ndarray | None = None) -> np.ndarray:
        """See :func:`gpumst.scan`."""
        if D.is_device_array(a):
            return self._scan_device(a, op, exclusive, out)
        x = element_array("a", a)
        out = self._scan_output(x, out)
        op_code = _choice("op", op, _OPS)
        kind = C.GPUMST_EXCLUSIVE if exclusive else C.GPUMST_INCLUSIVE
        with self._use() as h:
            self._check(h, lib.gpumst_scan(h, DTYPES[x.dtype], op_code, kind, address(x), address(out), x.shape[0]))
        return out

    def segmented_scan(
        self,
        a: Any,
        *,
        flags: Any = None,
        offsets: Any = None,
        op: str = "sum",
        exclusive: bool = False,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """See :func:`gpumst.segmented_scan`."""
        if (flags is None) == (offsets is None):
            raise ValueError("give exactly one of flags= (segment heads) or offsets= (CSR offsets)")
        if any(D.is_device_array(b) for b in (a, flags, offsets)):
            return self._segmented_scan_device(a, flags, offsets, op, exclusive, out)
        x = element_array("a", a)
        out = self._scan_output(x, out)
        op_code = _choice("op", op, _OPS)
        kind = C.GPUMST_EXCLUSIVE if exclusive else C.GPUMST_INCLUSIVE
        dtype = DTYPES[x.dtype]
        with self._use() as h:
            if flags is not None:
                f = flags_array("flags", flags, x.shape[0])
                status = lib.gpumst_segmented_scan_flags(
                    h, dtype, op_code, kind, address(x), address(out), address(f), x.shape[0]
                )
            else:
                o = offsets_array("offsets", offsets)
                if o.shape[0] == 0:
                    raise ValueError("offsets is empty: it needs num_segments + 1 entries (at least [0])")
                status = lib.gpumst_segmented_scan_offsets(
                    h, dtype, op_code, kind, address(x), address(out), x.shape[0], address(o), o.shape[0] - 1
                )
            self._check(h, status)
        return out

    # -- primitives on CUDA arrays: results stay on the GPU ------------------------------

    def _cuda_native(self) -> D.Native:
        native = self.native()
        if native.tier != C.GPUMST_TIER_CUDA:
            raise BackendUnavailable(f"GPU arrays from Python need the CUDA tier; this context uses {self.tier}")
        return native

    @staticmethod
    def _device_output(native: D.Native, name: str, out: Any, length: int, dtype: np.dtype) -> tuple[Any, D.DeviceView]:
        """`out` (a CUDA array of `length` x `dtype`) or a new DeviceArray, and its view."""
        if out is None:
            out = D.DeviceArray(native.context, length, dtype)
        with D.device_views((name,), (out,), 0) as (view,):
            if view.length != length or np.dtype(view.dtype) != np.dtype(dtype):
                raise ValueError(f"{name} must hold {length} x {np.dtype(dtype)}, got {view.length} x {view.dtype}")
        return out, view

    @staticmethod
    def _device_element(view: D.DeviceView, name: str) -> int:
        dtype = np.dtype(view.dtype).newbyteorder("=")
        if dtype not in DTYPES:
            raise TypeError(f"{name} has dtype {view.dtype}: use int32, uint32, int64, uint64, float32 or float64")
        return DTYPES[dtype]

    def _scan_device(self, a: Any, op: str, exclusive: bool, out: Any) -> Any:
        native = self._cuda_native()
        with D.device_views(("a",), (a,), native.queue or 0) as (x,):
            dtype = self._device_element(x, "a")
            out, y = self._device_output(native, "out", out, x.length, x.dtype)
            op_code = _choice("op", op, _OPS)
            kind = C.GPUMST_EXCLUSIVE if exclusive else C.GPUMST_INCLUSIVE
            with self._use() as h:
                status = lib.gpumst_scan_device(
                    h, dtype, op_code, kind, x.address or None, y.address or None, x.length, x.stream or None
                )
                self._check(h, status)
        return out

    def _segmented_scan_device(self, a: Any, flags: Any, offsets: Any, op: str, exclusive: bool, out: Any) -> Any:
        native = self._cuda_native()
        by_flags = flags is not None
        name, segments = ("flags", flags) if by_flags else ("offsets", offsets)
        with D.device_views(("a", name), (a, segments), native.queue or 0) as (x, s):
            dtype = self._device_element(x, "a")
            if by_flags:
                if np.dtype(s.dtype) not in (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.bool_)):
                    raise TypeError(f"flags must hold one byte per element (uint8, int8, bool), not {s.dtype}")
                if s.length != x.length:
                    raise ValueError(f"flags has {s.length} entries but the input has {x.length}")
            elif np.dtype(s.dtype) != np.uint64 or s.length == 0:
                raise TypeError(f"offsets must be a non-empty uint64 GPU array, got {s.length} x {s.dtype}")
            out, y = self._device_output(native, "out", out, x.length, x.dtype)
            op_code = _choice("op", op, _OPS)
            kind = C.GPUMST_EXCLUSIVE if exclusive else C.GPUMST_INCLUSIVE
            streams = sorted({t for t in (x.stream, s.stream) if t})
            for extra in streams[1:]:
                D.synchronize(extra)
            stream = streams[0] if streams else None
            data = (dtype, op_code, kind, x.address or None, y.address or None)
            with self._use() as h:
                if by_flags:
                    status = lib.gpumst_segmented_scan_flags_device(h, *data, s.address or None, x.length, stream)
                else:
                    segments = s.length - 1
                    status = lib.gpumst_segmented_scan_offsets_device(h, *data, x.length, s.address, segments, stream)
                self._check(h, status)
        return out

    def _arg_device(self, a: Any, function, name: str) -> ArgResult:
        native = self._cuda_native()
        with D.device_views(("a",), (a,), native.queue or 0) as (x,):
            dtype = self._device_element(x, "a")
            if x.length == 0:
                raise ValueError(f"{name} of an empty array")
            value = np.empty(1, dtype=x.dtype)
            index = ctypes.c_uint64()
            with self._use() as h:
                status = function(h, dtype, x.address, x.length, x.stream or None, address(value), ctypes.byref(index))
                self._check(h, status)
        return ArgResult(value[0], index.value)

    def _segmented_arg_device(self, a: Any, offsets: Any, out: Any, function) -> SegmentedArgResult:
        native = self._cuda_native()
        with D.device_views(("a", "offsets"), (a, offsets), native.queue or 0) as (x, o):
            dtype = self._device_element(x, "a")
            if np.dtype(o.dtype) != np.uint64 or o.length == 0:
                raise TypeError(f"offsets must be a non-empty uint64 GPU array, got {o.length} x {o.dtype}")
            segments = o.length - 1
            outs = (None, None) if out is None else out
            values, v = self._device_output(native, "out[0] (values)", outs[0], segments, x.dtype)
            indices, i = self._device_output(native, "out[1] (indices)", outs[1], segments, np.uint64)
            streams = sorted({s for s in (x.stream, o.stream) if s})
            for extra in streams[1:]:
                D.synchronize(extra)
            with self._use() as h:
                status = function(
                    h,
                    dtype,
                    x.address or None,
                    x.length,
                    o.address,
                    segments,
                    v.address or None,
                    i.address or None,
                    streams[0] if streams else None,
                )
                self._check(h, status)
        return SegmentedArgResult(values, indices)

    @staticmethod
    def _scan_output(x: np.ndarray, out: np.ndarray | None) -> np.ndarray:
        if out is None:
            return np.empty_like(x)
        return output_array("out", out, x.dtype, x.shape)

    def argmin(self, a: Any) -> ArgResult:
        """See :func:`gpumst.argmin`."""
        if D.is_device_array(a):
            return self._arg_device(a, lib.gpumst_argmin_device, "argmin")
        return self._arg(a, lib.gpumst_argmin, "argmin")

    def argmax(self, a: Any) -> ArgResult:
        """See :func:`gpumst.argmax`."""
        if D.is_device_array(a):
            return self._arg_device(a, lib.gpumst_argmax_device, "argmax")
        return self._arg(a, lib.gpumst_argmax, "argmax")

    def _arg(self, a: Any, function, name: str) -> ArgResult:
        x = element_array("a", a)
        if x.shape[0] == 0:
            raise ValueError(f"{name} of an empty array")
        value = np.empty(1, dtype=x.dtype)
        index = ctypes.c_uint64()
        with self._use() as h:
            self._check(h, function(h, DTYPES[x.dtype], address(x), x.shape[0], address(value), ctypes.byref(index)))
        return ArgResult(value[0], index.value)

    def segmented_argmin(
        self, a: Any, offsets: Any, *, out: tuple[np.ndarray, np.ndarray] | None = None
    ) -> SegmentedArgResult:
        """See :func:`gpumst.segmented_argmin`."""
        if D.is_device_array(a) or D.is_device_array(offsets):
            return self._segmented_arg_device(a, offsets, out, lib.gpumst_segmented_argmin_device)
        return self._segmented_arg(a, offsets, out, lib.gpumst_segmented_argmin)

    def segmented_argmax(
        self, a: Any, offsets: Any, *, out: tuple[np.ndarray, np.ndarray] | None = None
    ) -> SegmentedArgResult:
        """See :func:`gpumst.segmented_argmax`."""
        if D.is_device_array(a) or D.is_device_array(offsets):
            return self._segmented_arg_device(a, offsets, out, lib.gpumst_segmented_argmax_device)
        return self._segmented_arg(a, offsets, out, lib.gpumst_segmented_argmax)

    def _segmented_arg(self, a, offsets, out, function) -> SegmentedArgResult:
        x = element_array("a", a)
        o = offsets_array("offsets", offsets)
        if o.shape[0] == 0:
            raise ValueError("offsets is empty: it needs num_segments + 1 entries (at least [0])")
        segments = o.shape[0] - 1
        if out is None:
            values = np.empty(segments, dtype=x.dtype)
            indices = np.empty(segments, dtype=np.int64)
        else:
            values, indices = out
            output_array("out[0] (values)", values, x.dtype, (segments,))
            output_array("out[1] (indices)", indices, np.dtype(np.int64), (segments,))
        with self._use() as h:
            # Indices are written as uint64; an empty segment's UINT64_MAX reads as -1.
            status = function(
                h, DTYPES[x.dtype], address(x), x.shape[0], address(o), segments, address(values), address(indices)
            )
            self._check(h, status)
        return SegmentedArgResult(values, indices)


class ArgResult(NamedTuple):
    """The extreme value and the first index holding it."""

    value: Any
    index: int


class SegmentedArgResult(NamedTuple):
    """Per segment: the extreme value and the index (into the whole input) of its first
    occurrence; -1 for an empty segment (whose value is the type's identity)."""

    values: np.ndarray
    indices: np.ndarray


# ---- forests ------------------------------------------------------------------------


class _ForestHandle:
    """Owns a gpumst_forest; arrays viewing its memory keep this alive."""

    def __init__(self, handle: int):
        self.handle = handle

    def __del__(self) -> None:
        if self.handle and lib is not None:
            lib.gpumst_forest_free(self.handle)
            self.handle = None


class Forest:
    """A minimum (or maximum) spanning forest computed by gpumst.

    ``edges``: the forest's edge ids, ascending (numpy uint64, a read-only view of the
    library's buffer: no copy). ``labels``: per vertex, the smallest vertex id of its
    component (uint32, read-only), when asked for. ``total_weight``: exact (a Python
    int for integer weights, summed in 128 bits; a float for float weights).
    """

    def __init__(self, handle: _ForestHandle, algorithm: str, maximum: bool):
        h = handle.handle
        self._handle = handle
        self.algorithm = algorithm
        self.maximum = maximum
        self.num_vertices: int = lib.gpumst_forest_num_vertices(h)
        self.num_components: int = lib.gpumst_forest_num_components(h)
        self.tier: str = _TIER_NAMES[lib.gpumst_forest_tier(h)]
        self.edges: np.ndarray = library_array(
            handle, lib.gpumst_forest_edges(h), lib.gpumst_forest_num_edges(h), np.uint64
        )
        labels = lib.gpumst_forest_labels(h)
        self.labels: np.ndarray | None = (
            None if labels is None else library_array(handle, labels, self.num_vertices, np.uint32)
        )
        total = C.TotalWeight()
        status = lib.gpumst_forest_total_weight(h, ctypes.byref(total))
        if status != C.GPUMST_OK:
            raise _error(status, "reading the forest's total weight")
        self.total_weight: int | float = total.value if total.is_float else total.exact_high * 2**64 + total.exact_low

    def __len__(self) -> int:
        return self.edges.shape[0]

    def __repr__(self) -> str:
        kind = "maximum" if self.maximum else "minimum"
        return (
            f"<gpumst.Forest ({kind}, {self.algorithm} on {self.tier}): {len(self)} edges, "
            f"{self.num_components} components, total weight {self.total_weight}>"
        )


class DeviceForest:
    """A spanning forest of a graph given in GPU memory.

    ``edges``: the forest's edge ids, ascending, as a :class:`DeviceArray` of uint64 in
    CUDA memory (``cupy.asarray(forest.edges)`` or ``torch.as_tensor(forest.edges,
    device="cuda")`` view it without a copy; ``forest.edges.get()`` copies it to numpy).
    ``total_weight``: as :class:`Forest` gives it, or None when not asked for.
    ``labels``: with ``labels=True``, per vertex the smallest vertex id of its
    component, as a :class:`DeviceArray` of uint32 in CUDA memory (computed there from
    the forest); else None.
    """

    def __init__(self, edges, num_vertices, num_components, total_weight, algorithm, maximum):
        self.edges = edges
        self.num_vertices = num_vertices
        self.num_components = num_components
        self.total_weight = total_weight
        self.algorithm = algorithm
        self.maximum = maximum
        self.tier = "cuda"
        self.labels = None

    def __len__(self) -> int:
        return len(self.edges)

    def __repr__(self) -> str:
        kind = "maximum" if self.maximum else "minimum"
        return (
            f"<gpumst.DeviceForest ({kind}, {self.algorithm} on cuda): {len(self)} edges in GPU memory, "
            f"{self.num_components} components, total weight {self.total_weight}>"
        )


# ---- graph files --------------------------------------------------------------------


class _FileHandle:
    def __init__(self, handle: int):
        self.handle = handle

    def __del__(self) -> None:
        if self.handle and lib is not None:
            lib.gpumst_graph_file_free(self.handle)
            self.handle = None


class GraphFile:
    """A graph read by the library's own readers. ``u``, ``v`` (uint32) and ``weights``
    (the file's type, or None) are read-only views of the library's arrays (no copy);
    edge i is the i-th edge of the file. ``vertex_base`` is what to add to a vertex id
    to get the file's own numbering (1 for DIMACS and Matrix Market)."""

    def __init__(self, path: str, handle: _FileHandle):
        self.path = path
        self._handle = handle
        h = handle.handle
        view = C.GraphView()
        status = lib.gpumst_graph_file_view(h, ctypes.byref(view))
        if status != C.GPUMST_OK:
            raise _error(status, "viewing a graph file")
        self.format: str = _FORMAT_NAMES[lib.gpumst_graph_file_format(h)]
        self.vertex_base: int = lib.gpumst_graph_file_vertex_base(h)
        self.num_vertices: int = view.num_vertices
        self.num_edges: int = view.num_edges
        self.u = library_array(handle, view.u, view.num_edges, np.uint32)
        self.v = library_array(handle, view.v, view.num_edges, np.uint32)
        self.weights = (
            None
            if not view.weights
            else library_array(handle, view.weights, view.num_edges, _DTYPE_OF_CODE[view.weight_type])
        )

    def minimum_spanning_forest(self, **options: Any) -> Forest:
        """The forest of this graph; options as for :func:`gpumst.minimum_spanning_forest`."""
        return minimum_spanning_forest(self.u, self.v, self.weights, num_vertices=self.num_vertices, **options)

    def __repr__(self) -> str:
        w = "unweighted" if self.weights is None else f"{self.weights.dtype} weights"
        size = f"{self.num_vertices} vertices, {self.num_edges} edges"
        return f"<gpumst.GraphFile {self.path!r} ({self.format}): {size}, {w}>"


def load_graph(path: str | os.PathLike, format: str = "auto") -> GraphFile:
    """Reads a graph file with gpumst's readers, as ``gpumst msf`` does: DIMACS ``.gr``,
    Matrix Market ``.mtx``, plain edge lists (``u v [w]`` lines), ECL ``.egr``, gpumst ``.gmst``, each
    optionally ``.gz`` or ``.xz`` compressed (recognised by name or magic bytes).
    ``format``: "auto" (from the name), "dimacs", "mtx", "edgelist", "egr" or
    "gmst".

    Raises FileNotFoundError for a missing file, :class:`InvalidGraph` (a ValueError)
    naming the file and line for malformed contents."""
    code = _choice("format", format, FORMATS)
    fspath = os.fspath(path)
    if not os.path.exists(fspath):
        raise FileNotFoundError(2, "No such file or directory", fspath)
    raw = os.fsencode(fspath)
    handle = ctypes.c_void_p()
    why = ctypes.create_string_buffer(4096)
    status = lib.gpumst_graph_file_read(raw, code, ctypes.byref(handle), why, len(why))
    if status != C.GPUMST_OK:
        raise _error(status, why.value.decode("utf-8", "replace"))
    return GraphFile(os.fsdecode(raw), _FileHandle(handle.value))


# ---- the default context and module-level functions ---------------------------------

_default: Context | None = None
_default_lock = threading.Lock()


def default_context() -> Context:
    """The module's context, opened on first use with backend="auto"."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Context()
        return _default


def _ctx(context: Context | None) -> Context:
    return default_context() if context is None else context


def minimum_spanning_forest(
    u: Any,
    v: Any,
    w: Any = None,
    *,
    num_vertices: int | None = None,
    algorithm: str = "auto",
    labels: bool = False,
    maximum: bool = False,
    total_weight: bool = True,
    context: Context | None = None,
) -> Forest | DeviceForest:
    """The minimum spanning forest of an undirected edge list.

    Edge ``i`` joins ``u[i]`` and ``v[i]`` (integer vertex ids below ``num_vertices``,
    which defaults to the largest id + 1) and weighs ``w[i]`` (int32, uint32, int64,
    uint64, float32 or float64; narrower types are widened; None: unweighted). Edges are
    ordered by (weight, edge id), under which the forest is unique: every algorithm on
    every tier returns the same edges. Self-loops are ignored, parallel edges allowed,
    -0.0 equals +0.0, ±inf and negative weights are fine; NaN is an error.

    ``maximum=True`` gives the maximum spanning forest, ordered by (weight descending,
    edge id). ``labels=True`` adds, per vertex, the smallest vertex of its component.
    ``algorithm``: "auto" (fastest), "boruvka", "prim", "strut" or "kruskal".

    Arrays that are already contiguous uint32 (ids) and of a supported weight dtype are
    not copied; int32 ids are reinterpreted; other integer ids are range-checked and
    converted once. Errors raise :class:`InvalidGraph` / :class:`InvalidArgument` (both
    ValueError) naming the offending index, :class:`OutOfMemory` (MemoryError),
    :class:`BackendUnavailable` or :class:`DeviceError`.

    Arrays in GPU memory (CuPy, PyTorch, Numba, JAX: anything with
    ``__cuda_array_interface__`` or a CUDA ``__dlpack__``) are used where they are, on a
    CUDA context: u and v must be uint32, ``num_vertices`` must be given, validation runs
    on the GPU, and the result is a :class:`DeviceForest` whose ``edges`` stay in GPU
    memory. ``total_weight=False`` skips bringing the forest's weights to the host for
    the total; ``labels=True`` computes the labels on the GPU into
    ``DeviceForest.labels`` (uint32, in GPU memory).

    >>> import gpumst
    >>> f = gpumst.minimum_spanning_forest([0, 1, 2, 0], [1, 2, 0, 3], [5, -2, 7, 1])
    >>> f.edges.tolist(), f.total_weight, f.num_components
    ([0, 1, 3], 4, 1)
    """
    return _ctx(context).minimum_spanning_forest(
        u,
        v,
        w,
        num_vertices=num_vertices,
        algorithm=algorithm,
        labels=labels,
        maximum=maximum,
        total_weight=total_weight,
    )


def minimum_spanning_forest_csr(
    indptr: Any,
    indices: Any,
    data: Any = None,
    *,
    algorithm: str = "auto",
    labels: bool = False,
    maximum: bool = False,
    total_weight: bool = True,
    context: Context | None = None,
) -> Forest | DeviceForest:
    """The minimum spanning forest of a symmetric CSR graph (for instance a scipy
    ``csr_array``'s ``indptr``, ``indices`` and ``data``): every edge listed in both
    directions with the same weight. An edge's id is the CSR position of its u < v
    entry. Symmetry is validated; otherwise as :func:`minimum_spanning_forest`.

    CUDA arrays (a CuPy ``csr_matrix``'s arrays as uint64 ``indptr`` and uint32
    ``indices``, or any ``__cuda_array_interface__`` / DLPack producer) stay on the GPU:
    offsets, range and symmetry are checked there, and the result is a
    :class:`DeviceForest` as for edge lists (``total_weight=False`` skips bringing the
    forest's weights to the host; ``labels=True`` fills ``DeviceForest.labels`` on the
    GPU)."""
    return _ctx(context).minimum_spanning_forest_csr(
        indptr, indices, data, algorithm=algorithm, labels=labels, maximum=maximum, total_weight=total_weight
    )


def scan(
    a: Any, op: str = "sum", *, exclusive: bool = False, out: np.ndarray | None = None, context: Context | None = None
) -> np.ndarray:
    """Inclusive (default) or exclusive prefix scan of a 1-D array with "sum", "min" or
    "max". Integer sums wrap; float sums are IEEE, associated in fixed chunks so the
    result is the same on every tier and run; min and max propagate NaN. An exclusive
    scan starts with the identity (0, the type's max, the type's min). ``out`` may be
    the input itself (in place). Returns ``out`` (a new array if None).

    A CUDA array (``__cuda_array_interface__`` or DLPack, on a CUDA context) is scanned
    where it is, into ``out`` (a CUDA array) or a new :class:`DeviceArray`;
    ``segmented_scan``, ``argmin``, ``argmax``, ``segmented_argmin`` and
    ``segmented_argmax`` take CUDA arrays too (offsets as a uint64 CUDA array, head
    flags as a one-byte one: uint8, int8 or bool; the segmented results stay on the
    GPU, an empty segment's index as UINT64_MAX).

    >>> import gpumst
    >>> gpumst.scan([3, 1, 4, 1, 5], exclusive=True).tolist()
    [0, 3, 4, 8, 9]
    """
    return _ctx(context).scan(a, op, exclusive=exclusive, out=out)


def segmented_scan(
    a: Any,
    *,
    flags: Any = None,
    offsets: Any = None,
    op: str = "sum",
    exclusive: bool = False,
    out: np.ndarray | None = None,
    context: Context | None = None,
) -> np.ndarray:
    """A scan restarted at every segment: give ``flags`` (non-zero where a segment
    starts; index 0 always starts one) or CSR ``offsets`` (segment s covers
    ``offsets[s]:offsets[s+1]``; empty segments allowed). Otherwise as :func:`scan`.

    >>> import gpumst
    >>> gpumst.segmented_scan([1, 2, 3, 4], offsets=[0, 2, 4]).tolist()
    [1, 3, 3, 7]
    """
    return _ctx(context).segmented_scan(a, flags=flags, offsets=offsets, op=op, exclusive=exclusive, out=out)


def argmin(a: Any, *, context: Context | None = None) -> ArgResult:
    """(value, index) of the minimum of a non-empty 1-D array; the first index on ties,
    and the first NaN if there is one.

    >>> import gpumst
    >>> tuple(gpumst.argmin([3.0, -1.0, -1.0]))
    (np.float64(-1.0), 1)
    """
    return _ctx(context).argmin(a)


def argmax(a: Any, *, context: Context | None = None) -> ArgResult:
    """(value, index) of the maximum; as :func:`argmin`."""
    return _ctx(context).argmax(a)


def segmented_argmin(
    a: Any, offsets: Any, *, out: tuple[np.ndarray, np.ndarray] | None = None, context: Context | None = None
) -> SegmentedArgResult:
    """Per CSR segment ``offsets[s]:offsets[s+1]`` of ``a``: the minimum and the index of
    its first occurrence in ``a`` (int64; -1 for an empty segment). ``out``: an optional
    (values, indices) pair of arrays to fill."""
    return _ctx(context).segmented_argmin(a, offsets, out=out)


def segmented_argmax(
    a: Any, offsets: Any, *, out: tuple[np.ndarray, np.ndarray] | None = None, context: Context | None = None
) -> SegmentedArgResult:
    """As :func:`segmented_argmin`, for the maximum."""
    return _ctx(context).segmented_argmax(a, offsets, out=out)
