"""Arrays in GPU memory (``__cuda_array_interface__``, DLPack) and DLPack host arrays.

The CUDA tests run where the CUDA tier opens (the device machine: scripts/device.sh
python) and are skipped elsewhere, saying why; the rest runs everywhere."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from conftest import open_tier

import gpumst
from gpumst import _device as D
from gpumst import _native as C


def _graph(n: int, m: int, seed: int):
    rng = np.random.default_rng(seed)
    u = rng.integers(0, n, m, dtype=np.uint32)
    v = rng.integers(0, n, m, dtype=np.uint32)
    return u, v, rng.integers(0, 50, m)


def test_device_graph_struct_matches_the_library():
    graph = D.DeviceGraphView()
    status = C.lib.gpumst_device_graph_init(ctypes.byref(graph), 9, 4, 0x1000, 0x2000, C.GPUMST_F64, 0x3000)
    assert status == C.GPUMST_OK
    assert graph.struct_size == ctypes.sizeof(D.DeviceGraphView)
    assert (graph.weight_type, graph.num_vertices, graph.num_edges) == (C.GPUMST_F64, 9, 4)
    assert (graph.u, graph.v, graph.weights) == (0x1000, 0x2000, 0x3000)
    assert graph.kind == C.GPUMST_GRAPH_EDGE_LIST
    status = C.lib.gpumst_device_graph_init_csr(ctypes.byref(graph), 5, 8, 0x4000, 0x5000, C.GPUMST_I32, None)
    assert status == C.GPUMST_OK
    assert (graph.kind, graph.num_vertices, graph.num_edges) == (C.GPUMST_GRAPH_CSR, 5, 8)
    assert (graph.offsets, graph.targets, graph.weights, graph.u) == (0x4000, 0x5000, None, None)


class _HostDLPack:
    """Only the DLPack protocol, over a numpy array (as a CPU tensor of another library)."""

    def __init__(self, array: np.ndarray):
        self._array = array

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_host_dlpack_arrays_give_the_numpy_forest():
    u, v, w = _graph(300, 2000, 1)
    w = w.astype(np.float32)
    expected = gpumst.minimum_spanning_forest(u, v, w, num_vertices=300)
    got = gpumst.minimum_spanning_forest(_HostDLPack(u), _HostDLPack(v), _HostDLPack(w), num_vertices=300)
    assert got.edges.tolist() == expected.edges.tolist()
    assert got.total_weight == expected.total_weight


def test_dlpack_capsules_are_read_in_place():
    a = np.arange(10, 30, dtype=np.int64)
    view = D.parse_dlpack("a", a.__dlpack__())
    assert (view.address, view.length, view.dtype) == (a.ctypes.data, 20, np.dtype(np.int64))
    with pytest.raises(ValueError, match="one-dimensional"):
        D.parse_dlpack("b", np.zeros((2, 3), dtype=np.float32).__dlpack__())
    with pytest.raises(ValueError, match="contiguous"):
        D.parse_dlpack("c", np.arange(10, dtype=np.uint32)[::2].__dlpack__())


class _FakeCuda:
    """A __cuda_array_interface__ that points nowhere: refused before it is read."""

    __cuda_array_interface__ = {"version": 3, "shape": (4,), "typestr": "<u4", "data": (0x1000, False)}


def test_device_arrays_need_a_cuda_context():
    cpu = gpumst.Context(backend="cpu")
    fake = _FakeCuda()
    with pytest.raises(gpumst.BackendUnavailable, match="GPU tier"):
        cpu.minimum_spanning_forest(fake, fake, num_vertices=5)
    with pytest.raises(gpumst.BackendUnavailable, match="GPU tier"):
        cpu.scan(fake)
    with pytest.raises(gpumst.BackendUnavailable, match="GPU tier"):
        cpu.segmented_scan(fake, offsets=[0, 4])
    with pytest.raises(gpumst.BackendUnavailable, match="GPU tier"):
        cpu.segmented_scan(fake, flags=fake)
    with pytest.raises(gpumst.BackendUnavailable, match="GPU tier"):
        cpu.argmax(fake)
    with pytest.raises(gpumst.BackendUnavailable, match="GPU tier"):
        cpu.segmented_argmax(fake, [0, 4])
    assert D.is_device_array(fake) and not D.is_device_array(np.zeros(3))


class _CudaDLPack:
    """A DLPack producer over gpumst's own DeviceArray: a CUDA tensor as CuPy or PyTorch
    would export it (legacy "dltensor" capsule without a deleter)."""

    def __init__(self, array: gpumst.DeviceArray):
        self._array = array
        self._shape = (ctypes.c_int64 * 1)(len(array))
        codes = {"i": 0, "u": 1, "f": 2}
        self._managed = D._DLManagedTensor()
        t = self._managed.dl_tensor
        t.data = array.address
        t.device = D._DLDevice(D._DL_CUDA, 0)
        t.ndim = 1
        t.dtype = D._DLDataType(codes[array.dtype.kind], array.dtype.itemsize * 8, 1)
        t.shape = self._shape
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._managed), b"dltensor", None)

    def __dlpack_device__(self):
        return (D._DL_CUDA, 0)


@pytest.fixture
def cuda():
    return open_tier("cuda")


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.uint64, np.int64, np.float32, np.float64])
def test_cuda_arrays_give_the_host_forest(cuda, dtype):
    n = 2000
    u, v, w = _graph(n, 30_000, 7)
    w = (w - 20).astype(dtype) if np.dtype(dtype).kind != "u" else w.astype(dtype)
    native = cuda.native()
    du, dv, dw = (D.DeviceArray.from_host(native.context, a) for a in (u, v, w))
    for maximum in (False, True):
        host = cuda.minimum_spanning_forest(u, v, w, num_vertices=n, maximum=maximum)
        for algorithm in ("auto", "boruvka", "prim", "strut"):
            got = cuda.minimum_spanning_forest(du, dv, dw, num_vertices=n, algorithm=algorithm, maximum=maximum)
            assert isinstance(got, gpumst.DeviceForest)
            assert got.edges.get().tolist() == host.edges.tolist(), (algorithm, maximum)
            assert (got.num_components, got.total_weight) == (host.num_components, host.total_weight)
    # Through DLPack: the producer is asked to order its work before gpumst's stream.
    producers = [_CudaDLPack(a) for a in (du, dv, dw)]
    got = cuda.minimum_spanning_forest(*producers, num_vertices=n, total_weight=False)
    host = cuda.minimum_spanning_forest(u, v, w, num_vertices=n)
    assert got.edges.get().tolist() == host.edges.tolist() and got.total_weight is None
    assert producers[0].streams == [native.queue]
    face = got.edges.__cuda_array_interface__
    assert face["shape"] == (len(host.edges),) and face["typestr"] == "<u8"


def _symmetric_csr(n, u, v, w):
    """A symmetric CSR of an edge list: rows in edge order, self-loops once."""
    twice = u != v
    src, dst = np.concatenate([u, v[twice]]), np.concatenate([v, u[twice]])
    order = np.argsort(src, kind="stable")
    offsets = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(np.bincount(src, minlength=n), out=offsets[1:])
    return offsets, dst[order].astype(np.uint32), np.concatenate([w, w[twice]])[order]


@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_cuda_csr_arrays_give_the_host_forest(cuda, dtype):
    n = 1500
    u, v, w = _graph(n, 20_000, 9)
    offsets, targets, weights = _symmetric_csr(n, u, v, w.astype(dtype))
    native = cuda.native()
    device = [D.DeviceArray.from_host(native.context, a) for a in (offsets, targets, weights)]
    for maximum in (False, True):
        host = cuda.minimum_spanning_forest_csr(offsets, targets, weights, maximum=maximum)
        got = cuda.minimum_spanning_forest_csr(*device, maximum=maximum)
        assert isinstance(got, gpumst.DeviceForest)
        assert got.edges.get().tolist() == host.edges.tolist(), maximum
        assert (got.num_components, got.total_weight) == (host.num_components, host.total_weight)
    unweighted = cuda.minimum_spanning_forest_csr(device[0], device[1])
    assert unweighted.edges.get().tolist() == cuda.minimum_spanning_forest_csr(offsets, targets).edges.tolist()
    # One direction of one edge reweighted: the host's message, found on the device.
    bad = weights.copy()
    bad[int(offsets[n // 2])] += 1
    with pytest.raises(gpumst.InvalidGraph) as on_device:
        cuda.minimum_spanning_forest_csr(device[0], device[1], D.DeviceArray.from_host(native.context, bad))
    with pytest.raises(gpumst.InvalidGraph) as on_host:
        cuda.minimum_spanning_forest_csr(offsets, targets, bad)
    assert str(on_device.value).split(": ", 1)[1] == str(on_host.value).split(": ", 1)[1]
    assert "not symmetric" in str(on_device.value)
    wide = D.DeviceArray.from_host(native.context, offsets.astype(np.int64))
    with pytest.raises(TypeError, match="uint64"):
        cuda.minimum_spanning_forest_csr(wide, device[1])
    with pytest.raises(TypeError, match="host memory"):
        cuda.minimum_spanning_forest_csr(device[0], targets)


def test_cuda_labels_are_computed_on_the_gpu(cuda):
    n = 3000
    u, v, w = _graph(n, 2500, 21)  # fewer edges than vertices: many components
    native = cuda.native()
    device = [D.DeviceArray.from_host(native.context, a) for a in (u, v, w)]
    host = cuda.minimum_spanning_forest(u, v, w, num_vertices=n, labels=True)
    got = cuda.minimum_spanning_forest(*device, num_vertices=n, labels=True)
    assert isinstance(got.labels, gpumst.DeviceArray) and got.labels.dtype == np.uint32
    assert got.labels.get().tolist() == host.labels.tolist()
    assert cuda.minimum_spanning_forest(*device, num_vertices=n).labels is None
    offsets, targets, weights = _symmetric_csr(n, u, v, w)
    csr = [D.DeviceArray.from_host(native.context, a) for a in (offsets, targets, weights)]
    got = cuda.minimum_spanning_forest_csr(*csr, labels=True, maximum=True)
    assert got.labels.get().tolist() == host.labels.tolist()


def test_cuda_inputs_are_validated_on_the_device(cuda):
    u, v, w = _graph(100, 500, 3)
    u[123] = 100
    native = cuda.native()
    du, dv = D.DeviceArray.from_host(native.context, u), D.DeviceArray.from_host(native.context, v)
    with pytest.raises(gpumst.InvalidGraph) as on_device:
        cuda.minimum_spanning_forest(du, dv, num_vertices=100)
    with pytest.raises(gpumst.InvalidGraph) as on_host:
        cuda.minimum_spanning_forest(u, v, num_vertices=100)
    assert str(on_device.value).split(": ", 1)[1] == str(on_host.value).split(": ", 1)[1]
    with pytest.raises(ValueError, match="num_vertices is required"):
        cuda.minimum_spanning_forest(du, dv)
    wide = D.DeviceArray.from_host(native.context, u.astype(np.int64))
    with pytest.raises(TypeError, match="uint32"):
        cuda.minimum_spanning_forest(wide, dv, num_vertices=100)
    with pytest.raises(TypeError, match="host memory"):
        cuda.minimum_spanning_forest(du, v, num_vertices=100)


@pytest.mark.parametrize("dtype", [np.int32, np.uint64, np.float32, np.float64])
def test_cuda_primitives_keep_their_results_on_the_gpu(cuda, dtype):
    rng = np.random.default_rng(3)
    a = (rng.integers(0, 1000, 100_000) - (0 if np.dtype(dtype).kind == "u" else 500)).astype(dtype)
    native = cuda.native()
    da = D.DeviceArray.from_host(native.context, a)
    for op in ("sum", "min", "max"):
        for exclusive in (False, True):
            got = cuda.scan(da, op, exclusive=exclusive)
            assert isinstance(got, gpumst.DeviceArray)
            np.testing.assert_array_equal(got.get(), cuda.scan(a, op, exclusive=exclusive))
    # Into a given device array, and from a DLPack producer.
    out = D.DeviceArray(native.context, len(a), dtype)
    assert cuda.scan(_CudaDLPack(da), "sum", out=out) is out
    np.testing.assert_array_equal(out.get(), cuda.scan(a, "sum"))
    assert tuple(cuda.argmin(da)) == tuple(cuda.argmin(a))
    assert tuple(cuda.argmax(da)) == tuple(cuda.argmax(a))
    offsets = np.array([0, 10, 10, 5000, 99_999, 100_000], dtype=np.uint64)
    doffsets = D.DeviceArray.from_host(native.context, offsets)
    for name in ("segmented_argmin", "segmented_argmax"):
        result = getattr(cuda, name)(da, doffsets)
        host = getattr(cuda, name)(a, offsets)
        np.testing.assert_array_equal(result.values.get(), host.values, err_msg=name)
        # Indices are uint64 on the GPU: an empty segment's is UINT64_MAX (-1 on the host).
        np.testing.assert_array_equal(result.indices.get().astype(np.int64), host.indices, err_msg=name)
    for op in ("sum", "max"):
        got = cuda.segmented_scan(da, offsets=doffsets, op=op, exclusive=True)
        assert isinstance(got, gpumst.DeviceArray)
        np.testing.assert_array_equal(got.get(), cuda.segmented_scan(a, offsets=offsets, op=op, exclusive=True))
    # By head flags on the GPU (any nonzero byte; bool arrays too), in place.
    heads = (np.arange(len(a)) % 997 == 3).astype(np.uint8) * 7
    for flags in (heads, heads.astype(bool)):
        dflags = D.DeviceArray.from_host(native.context, flags)
        inplace = D.DeviceArray.from_host(native.context, a)
        assert cuda.segmented_scan(inplace, flags=dflags, op="min", out=inplace) is inplace
        np.testing.assert_array_equal(inplace.get(), cuda.segmented_scan(a, flags=flags, op="min"))
    with pytest.raises(ValueError, match="flags has 10 entries"):
        cuda.segmented_scan(da, flags=D.DeviceArray.from_host(native.context, heads[:10]))
    with pytest.raises(TypeError, match="one byte per element"):
        cuda.segmented_scan(da, flags=D.DeviceArray.from_host(native.context, heads.astype(np.uint32)))
    with pytest.raises(TypeError, match="host memory"):
        cuda.segmented_scan(da, flags=heads)
    bad = D.DeviceArray.from_host(native.context, np.array([0, 20, 10, 100_000], dtype=np.uint64))
    with pytest.raises(gpumst.InvalidArgument):
        cuda.segmented_scan(da, offsets=bad)
    with pytest.raises(ValueError, match="must hold"):
        cuda.scan(da, "sum", out=D.DeviceArray(native.context, 5, dtype))
