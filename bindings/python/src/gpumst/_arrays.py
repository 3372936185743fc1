"""Turning Python inputs into the arrays the C API takes, without copying when they
already fit (contiguous, aligned, native byte order, a supported dtype), and converting
once, never silently truncating, when they do not."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _native as C
from ._device import host_dlpack, is_device_array

# The six element types of the C API.
DTYPES = {
    np.dtype(np.int32): C.GPUMST_I32,
    np.dtype(np.uint32): C.GPUMST_U32,
    np.dtype(np.int64): C.GPUMST_I64,
    np.dtype(np.uint64): C.GPUMST_U64,
    np.dtype(np.float32): C.GPUMST_F32,
    np.dtype(np.float64): C.GPUMST_F64,
}

# Narrower types widen exactly to a supported one.
_WIDEN = {
    np.dtype(np.bool_): np.dtype(np.uint32),
    np.dtype(np.int8): np.dtype(np.int32),
    np.dtype(np.int16): np.dtype(np.int32),
    np.dtype(np.uint8): np.dtype(np.uint32),
    np.dtype(np.uint16): np.dtype(np.uint32),
    np.dtype(np.float16): np.dtype(np.float32),
}

_UINT32_MAX = 0xFFFF_FFFF


def _one_dimensional(name: str, a: Any) -> np.ndarray:
    if is_device_array(a):
        raise TypeError(
            f"{name} is in GPU memory; this function takes host arrays (minimum_spanning_forest "
            "takes device arrays on a CUDA context)"
        )
    arr = np.asarray(host_dlpack(a))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _native(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("=") if dtype.byteorder not in "=|" else dtype


def _ready(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`arr` as a C-contiguous, aligned, native array of `dtype`: itself when it is one."""
    return np.require(arr, dtype=dtype, requirements=["C", "A"])


def element_array(name: str, a: Any) -> np.ndarray:
    """An input of one of the six element types (narrower types are widened)."""
    arr = _one_dimensional(name, a)
    dtype = _native(arr.dtype)
    if dtype not in DTYPES:
        if dtype not in _WIDEN:
            raise TypeError(
                f"{name} has dtype {arr.dtype}, which gpumst cannot take exactly: use int32, uint32, "
                "int64, uint64, float32 or float64 (bool, 8/16-bit integers and float16 are widened)"
            )
        dtype = _WIDEN[dtype]
    return _ready(arr, dtype)


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _integers(name: str, a: Any, what: str) -> np.ndarray:
    arr = _one_dimensional(name, a)
    if arr.dtype.kind not in "iu":
        if arr.size == 0 and arr.dtype.kind == "f":
            # np.asarray([]) is float64; an empty list of ids is fine.
            return arr.astype(np.int64)
        raise TypeError(f"{name} must hold integer {what}, got dtype {arr.dtype}")
    return arr


def _check_range(name: str, arr: np.ndarray, high: int, what: str) -> None:
    """Raises ValueError naming the first entry outside [0, high]."""
    if arr.size == 0:
        return
    if arr.dtype.kind == "i" and arr.min() < 0:
        i = _first(arr < 0)
        raise ValueError(f"{name}[{i}] = {arr[i]} is negative; {what} are non-negative")
    if high < np.iinfo(arr.dtype).max and arr.max() > high:
        i = _first(arr > high)
        raise ValueError(f"{name}[{i}] = {arr[i]} is too large for {what} (at most {high})")


def vertex_ids(name: str, a: Any) -> np.ndarray:
    """uint32 vertex ids; signed or wider integers are range-checked, never wrapped."""
    arr = _integers(name, a, "vertex ids")
    dtype = _native(arr.dtype)
    if dtype == np.uint32:
        return _ready(arr, dtype)
    _check_range(name, arr, _UINT32_MAX, "32-bit vertex ids")
    if dtype == np.int32:
        # Non-negative int32 has the bits of the same uint32: reinterpret, don't copy.
        return _ready(arr, dtype).view(np.uint32)
    return arr.astype(np.uint32)


def offsets_array(name: str, a: Any) -> np.ndarray:
    """uint64 CSR offsets (int64 offsets are reinterpreted after a sign check)."""
    arr = _integers(name, a, "offsets")
    dtype = _native(arr.dtype)
    if dtype == np.uint64:
        return _ready(arr, dtype)
    _check_range(name, arr, 2**64 - 1, "offsets")
    if dtype == np.int64:
        return _ready(arr, dtype).view(np.uint64)
    return arr.astype(np.uint64)


def flags_array(name: str, a: Any, n: int) -> np.ndarray:
    """One byte per element, non-zero where a segment starts."""
    arr = _one_dimensional(name, a)
    if arr.shape != (n,):
        raise ValueError(f"{name} has {arr.shape[0]} entries but the input has {n}")
    dtype = _native(arr.dtype)
    if dtype in (np.dtype(np.bool_), np.dtype(np.uint8), np.dtype(np.int8)):
        return _ready(arr, dtype).view(np.uint8)
    return (arr != 0).view(np.uint8)


def output_array(name: str, out: Any, dtype: np.dtype, shape: tuple) -> np.ndarray:
    """Checks an `out=` array: the exact dtype and shape, C-contiguous, aligned, writable."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"{name} has dtype {out.dtype}, expected {dtype}")
    if out.shape != shape:
        raise ValueError(f"{name} has shape {out.shape}, expected {shape}")
    if not (out.flags.c_contiguous and out.flags.aligned):
        raise ValueError(f"{name} must be C-contiguous and aligned")
    if not out.flags.writeable:
        raise ValueError(f"{name} is read-only")
    return out


def order_keys(values: np.ndarray) -> np.ndarray:
    """uint64 keys that sort as `values` do under numpy's order: integers by value,
    floats with -0.0 == +0.0 and every NaN after +inf (NaNs equal to each other)."""
    if values.dtype.kind == "u":
        return values.astype(np.uint64)
    if values.dtype.kind == "i":
        return values.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)
    x = values.astype(np.float64) + 0.0  # + 0.0 turns -0.0 into +0.0
    bits = x.view(np.uint64)
    negative = (bits >> np.uint64(63)) == 1
    keys = np.where(negative, ~bits, bits | np.uint64(1 << 63))
    keys[np.isnan(x)] = np.uint64(2**64 - 1)
    return keys


def address(arr: np.ndarray | None) -> int | None:
    """The data pointer the C API takes (NULL for None)."""
    return None if arr is None else arr.ctypes.data


class LibraryArray:
    """Exposes memory owned by the library as a read-only numpy array without copying;
    holding `owner` keeps that memory alive as long as any array made from it."""

    def __init__(self, owner: Any, address: int, length: int, dtype: np.dtype):
        self._owner = owner
        self.__array_interface__ = {
            "version": 3,
            "shape": (length,),
            "typestr": np.dtype(dtype).str,
            "data": (address, True),
        }


def library_array(owner: Any, address: int | None, length: int, dtype: Any) -> np.ndarray:
    if length == 0 or not address:
        out = np.empty(0, dtype=dtype)
        out.flags.writeable = False
        return out
    return np.asarray(LibraryArray(owner, address, length, np.dtype(dtype)))
