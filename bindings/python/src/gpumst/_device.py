"""Arrays in GPU memory, without copies: inputs through ``__cuda_array_interface__``
(CuPy, Numba, PyTorch, JAX) or DLPack (``__dlpack__``; host DLPack arrays are read
as numpy arrays), and :class:`DeviceArray`, the CUDA memory gpumst returns for device
inputs, which CuPy, PyTorch and Numba take through ``__cuda_array_interface__``.

The CUDA driver (libcuda) is opened only when a device array is used: gpumst
allocates and frees result memory with it, in the device's primary context (the one
the CUDA runtime, and so CuPy and PyTorch, use).
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, NamedTuple

import numpy as np

# DLPack's device types and type codes (dlpack.h).
_DL_CPU = 1
_DL_CUDA = 2
_DL_CUDA_HOST = 3
_DL_CUDA_MANAGED = 13
# DLPack type codes gpumst reads (6 is kDLBool: segment head flags).
_DL_CODES = {0: "i", 1: "u", 2: "f", 6: "b"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [
    ("dl_tensor", _DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DELETER),
]

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_rename = ctypes.pythonapi.PyCapsule_SetName
_capsule_rename.restype = ctypes.c_int
_capsule_rename.argtypes = [ctypes.py_object, ctypes.c_char_p]


class DeviceView(NamedTuple):
    """A one-dimensional, contiguous array in CUDA memory, as the C API takes it."""

    address: int
    length: int
    dtype: np.dtype
    # The producer's stream the data is ready on (a CUstream handle's value; 0: ready).
    stream: int


def is_device_array(a: Any) -> bool:
    """Whether `a` lives in GPU memory (CUDA array interface, or a DLPack GPU tensor)."""
    if hasattr(a, "__cuda_array_interface__"):
        return True
    device = getattr(a, "__dlpack_device__", None)
    return device is not None and hasattr(a, "__dlpack__") and device()[0] != _DL_CPU


def host_dlpack(a: Any) -> Any:
    """`a` as numpy when it is a DLPack tensor in host memory (no copy); else `a`."""
    device = getattr(a, "__dlpack_device__", None)
    if device is not None and not isinstance(a, np.ndarray) and device()[0] == _DL_CPU:
        return np.from_dlpack(a)
    return a


def _contiguous(name: str, shape: tuple, strides: tuple | None, itemsize: int) -> int:
    if len(shape) != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {tuple(shape)}")
    if strides is not None and shape[0] > 1 and strides[0] != itemsize:
        raise ValueError(f"{name} must be contiguous (its stride is {strides[0]} bytes, its items {itemsize})")
    return int(shape[0])


def _from_interface(name: str, a: Any) -> DeviceView:
    face = a.__cuda_array_interface__
    dtype = np.dtype(face["typestr"])
    length = _contiguous(name, tuple(face["shape"]), face.get("strides"), dtype.itemsize)
    stream = face.get("stream") or 0
    return DeviceView(int(face["data"][0] or 0), length, dtype, int(stream))


@contextmanager
def _from_dlpack(name: str, a: Any, stream: int) -> Iterator[DeviceView]:
    """Consumes `a`'s DLPack capsule for the block's duration; the producer orders its
    work before `stream` (gpumst's stream), so nothing is left to wait for."""
    device_type, _ = a.__dlpack_device__()
    if device_type not in (_DL_CUDA, _DL_CUDA_MANAGED, _DL_CUDA_HOST):
        raise TypeError(f"{name} is a DLPack tensor on device type {device_type}; gpumst takes CUDA memory")
    capsule = a.__dlpack__(stream=stream or None)
    yield parse_dlpack(name, capsule)
    # Consumed: the capsule's destructor must not free it; the deleter releases it.
    managed = ctypes.cast(_capsule_pointer(capsule, b"dltensor"), ctypes.POINTER(_DLManagedTensor))
    _capsule_rename(capsule, b"used_dltensor")
    if managed.contents.deleter:
        managed.contents.deleter(managed)


def parse_dlpack(name: str, capsule: Any) -> DeviceView:
    """The array a (legacy, "dltensor") DLPack capsule describes."""
    managed = ctypes.cast(_capsule_pointer(capsule, b"dltensor"), ctypes.POINTER(_DLManagedTensor))
    t = managed.contents.dl_tensor
    if t.dtype.lanes != 1 or t.dtype.code not in _DL_CODES:
        raise TypeError(f"{name} has DLPack type code {t.dtype.code} with {t.dtype.lanes} lanes")
    dtype = np.dtype(f"{_DL_CODES[t.dtype.code]}{t.dtype.bits // 8}")
    shape = tuple(t.shape[k] for k in range(t.ndim))
    strides = None if not t.strides else tuple(t.strides[k] * dtype.itemsize for k in range(t.ndim))
    length = _contiguous(name, shape, strides, dtype.itemsize)
    return DeviceView((t.data or 0) + t.byte_offset, length, dtype, 0)


@contextmanager
def device_views(names: tuple, arrays: tuple, stream: int) -> Iterator[list]:
    """DeviceViews of `arrays` (None stays None) for the block's duration."""
    with ExitStack() as stack:
        views = []
        for name, a in zip(names, arrays):
            if a is None:
                views.append(None)
            elif hasattr(a, "__cuda_array_interface__"):
                views.append(_from_interface(name, a))
            elif is_device_array(a):
                views.append(stack.enter_context(_from_dlpack(name, a, stream)))
            else:
                raise TypeError(
                    f"{name} is in host memory while other arrays are on the GPU: pass every array in one place"
                )
        yield views


# ---- CUDA memory gpumst returns -----------------------------------------------------

_driver = None


def cuda_driver():
    """libcuda through ctypes (opened on first use)."""
    global _driver
    if _driver is None:
        try:
            d = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise RuntimeError(f"device arrays need the CUDA driver (libcuda.so.1): {exc}") from exc
        for name, args in {
            "cuCtxSetCurrent": [ctypes.c_void_p],
            "cuMemAlloc_v2": [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t],
            "cuMemFree_v2": [ctypes.c_uint64],
            "cuMemcpyDtoH_v2": [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t],
            "cuMemcpyHtoD_v2": [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t],
            "cuStreamSynchronize": [ctypes.c_void_p],
        }.items():
            f = getattr(d, name)
            f.restype = ctypes.c_int
            f.argtypes = args
        _driver = d
    return _driver


def _cuda(call: str, status: int) -> None:
    if status != 0:
        raise RuntimeError(f"{call} failed with CUDA error {status}")


class DeviceArray:
    """A one-dimensional array in CUDA memory owned by gpumst (freed when the last
    reference goes). ``cupy.asarray(a)``, ``torch.as_tensor(a, device="cuda")`` and
    ``numba.cuda.as_cuda_array(a)`` view it without a copy; :meth:`get` copies it to a
    numpy array.
    """

    def __init__(self, context: int, length: int, dtype: Any):
        self._context = context
        self._dtype = np.dtype(dtype)
        self._length = length
        self._address = 0
        self._bytes = max(length, 1) * self._dtype.itemsize
        d = cuda_driver()
        _cuda("cuCtxSetCurrent", d.cuCtxSetCurrent(context))
        address = ctypes.c_uint64()
        _cuda("cuMemAlloc", d.cuMemAlloc_v2(ctypes.byref(address), self._bytes))
        self._address = address.value

    @classmethod
    def from_host(cls, context: int, data: Any) -> DeviceArray:
        """A device copy of a host array (for tests and examples)."""
        data = np.ascontiguousarray(data)
        array = cls(context, data.shape[0], data.dtype)
        if data.nbytes:
            _cuda("cuMemcpyHtoD", cuda_driver().cuMemcpyHtoD_v2(array._address, data.ctypes.data, data.nbytes))
        return array

    @property
    def address(self) -> int:
        return self._address

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def shape(self) -> tuple:
        return (self._length,)

    def __len__(self) -> int:
        return self._length

    def _shorten(self, length: int) -> None:
        """Uses only the first `length` elements from now on (the memory stays)."""
        self._length = min(length, self._length)

    @property
    def __cuda_array_interface__(self) -> dict:
        return {
            "version": 3,
            "shape": (self._length,),
            "typestr": self._dtype.str,
            "data": (self._address, False),
            "strides": None,
            # gpumst's calls finish before they return: nothing to wait for.
            "stream": None,
        }

    def get(self) -> np.ndarray:
        """A numpy copy."""
        out = np.empty(self._length, dtype=self._dtype)
        if out.nbytes:
            d = cuda_driver()
            _cuda("cuCtxSetCurrent", d.cuCtxSetCurrent(self._context))
            _cuda("cuMemcpyDtoH", d.cuMemcpyDtoH_v2(out.ctypes.data, self._address, out.nbytes))
        return out

    def __repr__(self) -> str:
        return f"<gpumst.DeviceArray {self._dtype} x {self._length} at {self._address:#x}>"

    def __del__(self) -> None:
        if self._address and _driver is not None:
            _driver.cuCtxSetCurrent(self._context)
            _driver.cuMemFree_v2(self._address)
            self._address = 0


def synchronize(stream: int) -> None:
    """Waits for a producer's stream (for arrays beyond the one the C call follows)."""
    d = cuda_driver()
    _cuda("cuStreamSynchronize", d.cuStreamSynchronize(stream))


class DeviceGraphView(ctypes.Structure):
    """struct gpumst_device_graph."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("weight_type", ctypes.c_int32),
        ("num_vertices", ctypes.c_uint64),
        ("num_edges", ctypes.c_uint64),
        ("u", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("weights", ctypes.c_void_p),
        ("kind", ctypes.c_int32),
        ("offsets", ctypes.c_void_p),
        ("targets", ctypes.c_void_p),
    ]


class Native(ctypes.Structure):
    """struct gpumst_native."""

    _fields_ = [
        ("tier", ctypes.c_int32),
        ("context", ctypes.c_void_p),
        ("queue", ctypes.c_void_p),
        ("device", ctypes.c_void_p),
    ]
