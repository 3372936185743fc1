"""Scans, segmented scans and arg-reductions from numpy arrays on every tier, against
naive references; out= and in place; the errors a user can cause."""

from __future__ import annotations

import numpy as np
import pytest

import gpumst

DTYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
SIZES = [0, 1, 2, 31, 257, 4099, 65537]


def sample(rng, dtype, n):
    if np.dtype(dtype).kind == "f":
        return rng.integers(-8, 8, n).astype(dtype) / 2  # sums stay exact
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def reference_scan(x, op, exclusive, heads=None):
    """numpy's sequential accumulations, segment by segment (integer sums wrap)."""
    accumulate = {"sum": np.add.accumulate, "min": np.minimum.accumulate, "max": np.maximum.accumulate}[op]
    identity = {"sum": 0, "min": _highest(x.dtype), "max": _lowest(x.dtype)}[op]
    starts = [0] if heads is None else [0] + [i for i in np.flatnonzero(heads) if i > 0]
    out = np.empty_like(x)
    for lo, hi in zip(starts, starts[1:] + [x.shape[0]]):
        part = accumulate(x[lo:hi], dtype=x.dtype) if hi > lo else x[lo:hi]
        if exclusive and hi > lo:
            out[lo] = identity
            out[lo + 1 : hi] = part[:-1]
        else:
            out[lo:hi] = part
    return out


def _highest(dtype):
    return np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).max


def _lowest(dtype):
    return -np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min


@pytest.mark.parametrize("dtype", DTYPES)
def test_scans_match_the_reference(ctx, dtype):
    rng = np.random.default_rng(1)
    for n in SIZES:
        x = sample(rng, dtype, n)
        for op in ("sum", "min", "max"):
            for exclusive in (False, True):
                got = gpumst.scan(x, op, exclusive=exclusive, context=ctx)
                assert got.dtype == x.dtype
                np.testing.assert_array_equal(got, reference_scan(x, op, exclusive), err_msg=f"{n} {op} {exclusive}")


@pytest.mark.parametrize("dtype", [np.int32, np.uint64, np.float64])
def test_segmented_scans_by_flags_and_offsets(ctx, dtype):
    rng = np.random.default_rng(2)
    for n in SIZES[1:]:
        x = sample(rng, dtype, n)
        heads = rng.random(n) < 0.1
        offsets = np.concatenate([[0], np.flatnonzero(heads[1:]) + 1, [n]])
        for op in ("sum", "max"):
            expected = reference_scan(x, op, True, heads)
            np.testing.assert_array_equal(
                gpumst.segmented_scan(x, flags=heads, op=op, exclusive=True, context=ctx), expected
            )
            np.testing.assert_array_equal(
                gpumst.segmented_scan(x, offsets=offsets, op=op, exclusive=True, context=ctx), expected
            )
    # Empty segments are allowed in offsets.
    got = gpumst.segmented_scan(np.array([1, 2, 3], dtype=np.int64), offsets=[0, 0, 2, 2, 3], context=ctx)
    assert got.tolist() == [1, 3, 3]


def test_in_place_and_out(ctx):
    x = np.arange(10, dtype=np.int64)
    out = np.empty_like(x)
    assert gpumst.scan(x, out=out, context=ctx) is out
    assert out.tolist() == np.cumsum(np.arange(10)).tolist()
    assert gpumst.scan(x, out=x, context=ctx) is x  # in place
    assert x.tolist() == out.tolist()


@pytest.mark.parametrize("dtype", DTYPES)
def test_arg_reductions(ctx, dtype):
    rng = np.random.default_rng(3)
    for n in SIZES[1:]:
        x = sample(rng, dtype, n)
        value, index = gpumst.argmin(x, context=ctx)
        assert (value, index) == (x.min(), int(np.argmin(x)))
        assert type(value) is np.dtype(dtype).type
        assert tuple(gpumst.argmax(x, context=ctx)) == (x.max(), int(np.argmax(x)))


def test_arg_reductions_of_nan_and_ties(ctx):
    x = np.array([3.0, 1.0, np.nan, 1.0, np.nan])
    assert gpumst.argmin(x, context=ctx).index == 2  # the first NaN wins
    assert gpumst.argmax(np.array([5, 1, 5], dtype=np.uint32), context=ctx).index == 0


def test_segmented_arg_reductions(ctx):
    rng = np.random.default_rng(4)
    x = sample(rng, np.float32, 5000)
    cuts = np.sort(rng.integers(0, 5000, 40))
    offsets = np.concatenate([[0], cuts, [5000]])
    values, indices = gpumst.segmented_argmin(x, offsets, context=ctx)
    for s in range(len(offsets) - 1):
        lo, hi = offsets[s], offsets[s + 1]
        if lo == hi:
            assert indices[s] == -1 and values[s] == np.inf
        else:
            assert indices[s] == lo + np.argmin(x[lo:hi]) and values[s] == x[lo:hi].min()
    out = (np.empty(len(offsets) - 1, dtype=np.float32), np.empty(len(offsets) - 1, dtype=np.int64))
    result = gpumst.segmented_argmax(x, offsets, out=out, context=ctx)
    assert result.values is out[0] and result.indices is out[1]
    nonempty = np.diff(offsets) > 0
    assert (out[1][~nonempty] == -1).all()


def test_narrow_types_widen_and_bad_ones_are_refused(cpu):
    assert gpumst.scan(np.array([1, 2, 3], dtype=np.int8), context=cpu).dtype == np.int32
    assert gpumst.scan(np.array([True, True, False]), context=cpu).tolist() == [1, 2, 2]
    x = np.arange(12, dtype=np.float64)[::3]  # not contiguous: converted once
    assert gpumst.scan(x, context=cpu).tolist() == [0, 3, 9, 18]
    with pytest.raises(TypeError, match="complex"):
        gpumst.scan(np.array([1j]), context=cpu)
    with pytest.raises(TypeError, match="object"):
        gpumst.scan(np.array([1, "a"], dtype=object), context=cpu)


def test_errors(cpu):
    x = np.arange(4, dtype=np.int64)
    with pytest.raises(TypeError, match="dtype int32, expected int64"):
        gpumst.scan(x, out=np.empty(4, dtype=np.int32), context=cpu)
    with pytest.raises(ValueError, match="shape"):
        gpumst.scan(x, out=np.empty(5, dtype=np.int64), context=cpu)
    ro = np.empty(4, dtype=np.int64)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gpumst.scan(x, out=ro, context=cpu)
    with pytest.raises(ValueError, match="C-contiguous"):
        gpumst.scan(x, out=np.empty(8, dtype=np.int64)[::2], context=cpu)
    with pytest.raises(gpumst.InvalidArgument, match="overlap"):
        buf = np.zeros(6, dtype=np.int64)
        gpumst.scan(buf[:4], out=buf[2:], context=cpu)
    with pytest.raises(ValueError, match="unknown op 'product'"):
        gpumst.scan(x, "product", context=cpu)
    with pytest.raises(ValueError, match="exactly one"):
        gpumst.segmented_scan(x, context=cpu)
    with pytest.raises(gpumst.InvalidArgument, match="offsets"):
        gpumst.segmented_scan(x, offsets=[0, 3, 2, 4], context=cpu)
    with pytest.raises(ValueError, match="flags has 3 entries"):
        gpumst.segmented_scan(x, flags=[1, 0, 0], context=cpu)
    with pytest.raises(ValueError, match="empty"):
        gpumst.argmin(np.array([], dtype=np.float32), context=cpu)
