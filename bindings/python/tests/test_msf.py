"""Minimum spanning forests from numpy arrays: every weight type and algorithm on every
tier, checked edge for edge against a sequential Kruskal; edge cases of the input; and
the errors a user can cause."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import kruskal, random_graph

import gpumst

DTYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
ALGORITHMS = ["auto", "boruvka", "prim", "strut", "kruskal"]


def weights_of(rng, dtype, m, spread=50):
    if np.dtype(dtype).kind == "f":
        return (rng.integers(-spread, spread, m) / 4).astype(dtype)
    low = 0 if np.dtype(dtype).kind == "u" else -spread
    return rng.integers(low, spread, m).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("maximum", [False, True])
def test_every_type_and_algorithm_matches_kruskal(ctx, dtype, maximum):
    rng = np.random.default_rng(7)
    for n, m in [(1, 0), (2, 1), (30, 80), (500, 2000)]:
        u, v = random_graph(rng, n, m)
        w = weights_of(rng, dtype, m)
        expected = kruskal(n, u, v, w, maximum=maximum)
        for algorithm in ALGORITHMS:
            f = gpumst.minimum_spanning_forest(
                u, v, w, num_vertices=n, algorithm=algorithm, maximum=maximum, labels=True, context=ctx
            )
            assert f.edges.tolist() == expected.tolist(), (n, m, algorithm)
            assert f.tier == ctx.tier and f.algorithm == algorithm and f.maximum == maximum
            assert f.num_vertices == n and f.num_components == n - len(expected)
            chosen = w[expected.astype(np.int64)]
            if np.dtype(dtype).kind == "f":
                assert isinstance(f.total_weight, float)
                assert f.total_weight == sum(float(x) for x in chosen)
            else:
                assert isinstance(f.total_weight, int)
                assert f.total_weight == sum(int(x) for x in chosen)


def test_labels_name_the_smallest_vertex_of_each_component(ctx):
    # Components {0, 2, 5}, {1, 4}, {3} (isolated), {6}.
    u, v = [5, 4, 2], [2, 1, 0]
    f = gpumst.minimum_spanning_forest(u, v, [1, 1, 1], num_vertices=7, labels=True, context=ctx)
    assert f.labels.tolist() == [0, 1, 0, 3, 1, 0, 6]
    assert f.labels.dtype == np.uint32 and not f.labels.flags.writeable
    assert gpumst.minimum_spanning_forest(u, v, context=ctx).labels is None


def test_special_weights(ctx):
    # -0.0 == +0.0 (ties fall to the lower id), infinities and negative weights are fine.
    u = [0, 1, 2, 0, 1, 3, 4]
    v = [1, 2, 0, 2, 3, 4, 3]
    w = np.array([-0.0, 0.0, 0.0, -np.inf, np.inf, -1e300, 5.0])
    expected = kruskal(5, u, v, w)
    f = gpumst.minimum_spanning_forest(u, v, w, context=ctx)
    assert f.edges.tolist() == expected.tolist() == [0, 3, 4, 5]
    # The forest holds both -inf (edge 3) and +inf (edge 4): an IEEE total of NaN.
    assert np.isnan(f.total_weight)
    assert (
        gpumst.minimum_spanning_forest(u, v, w, maximum=True, context=ctx).edges.tolist()
        == kruskal(5, u, v, w, True).tolist()
    )


def test_exact_integer_totals(ctx):
    big = np.array([2**64 - 1] * 3, dtype=np.uint64)
    f = gpumst.minimum_spanning_forest([0, 1, 2], [1, 2, 3], big, context=ctx)
    assert f.total_weight == 3 * (2**64 - 1)
    neg = np.array([-(2**63)] * 3, dtype=np.int64)
    assert gpumst.minimum_spanning_forest([0, 1, 2], [1, 2, 3], neg, context=ctx).total_weight == -3 * 2**63


def test_shapes_that_are_easy_to_get_wrong(ctx):
    empty = gpumst.minimum_spanning_forest([], [], context=ctx)
    assert (len(empty), empty.num_vertices, empty.num_components) == (0, 0, 0)
    assert empty.edges.dtype == np.uint64
    single = gpumst.minimum_spanning_forest([], [], num_vertices=1, context=ctx)
    assert (len(single), single.num_components) == (0, 1)
    # Self-loops are ignored; parallel edges: the lightest (then the lowest id) wins.
    f = gpumst.minimum_spanning_forest([0, 0, 1, 1, 0], [0, 1, 0, 1, 1], [0, 5, 3, 0, 3], context=ctx)
    assert f.edges.tolist() == [2]
    # Isolated vertices (a large declared count) and disconnected parts.
    f = gpumst.minimum_spanning_forest([0, 10], [1, 11], num_vertices=100_000, context=ctx)
    assert f.edges.tolist() == [0, 1] and f.num_components == 100_000 - 2
    # Unweighted: the spanning forest of lowest edge ids.
    assert gpumst.minimum_spanning_forest([0, 1, 0], [1, 2, 2], context=ctx).edges.tolist() == [0, 1]


def test_inputs_are_not_copied_when_they_fit(cpu):
    u = np.array([0, 1, 2], dtype=np.uint32)
    w = np.array([3.0, 1.0, 2.0])
    assert gpumst._arrays.vertex_ids("u", u) is u
    assert gpumst._arrays.element_array("w", w) is w
    # int32 ids are reinterpreted, not copied; wider ones are converted once.
    signed = np.array([0, 1, 2], dtype=np.int32)
    assert np.shares_memory(gpumst._arrays.vertex_ids("u", signed), signed)
    assert gpumst._arrays.vertex_ids("u", np.array([0, 1], dtype=np.int64)).dtype == np.uint32
    # Read-only, non-contiguous and big-endian inputs work (converted where needed).
    ro = np.array([0, 1, 2, 0], dtype=np.uint32)
    ro.flags.writeable = False
    wide = np.arange(8, dtype=np.int64)[::2]
    swapped = np.array([1.0, 2.0, 3.0, 4.0], dtype=">f8")
    f = gpumst.minimum_spanning_forest(ro, wide % 3, swapped, context=cpu)
    assert f.edges.tolist() == kruskal(3, ro, wide % 3, [1.0, 2.0, 3.0, 4.0]).tolist()
    # Narrow weight types widen exactly.
    for dtype in (np.int8, np.uint16, np.float16, np.bool_):
        w = np.array([1, 0, 1], dtype=dtype)
        assert gpumst.minimum_spanning_forest([0, 1, 0], [1, 2, 2], w, context=cpu).edges.tolist() == [0, 1]


def test_edges_are_a_view_of_the_library_buffer(cpu):
    f = gpumst.minimum_spanning_forest([0, 1], [1, 2], [1, 2], context=cpu)
    edges = f.edges
    assert not edges.flags.writeable and not edges.flags.owndata
    del f  # the array keeps the forest alive
    assert edges.tolist() == [0, 1]


def test_csr_input_matches_the_edge_list(ctx):
    rng = np.random.default_rng(3)
    n, m = 200, 900
    u, v = random_graph(rng, n, m)
    keep = u != v
    u, v = u[keep], v[keep]
    w = rng.integers(0, 20, u.shape[0]).astype(np.int64)
    # Both directions, grouped by source, each vertex's entries in edge-id order.
    src = np.concatenate([u, v])
    dst = np.concatenate([v, u])
    ids = np.concatenate([np.arange(u.shape[0])] * 2)
    order = np.lexsort((ids, src))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))])
    indices, data = dst[order].astype(np.int32), w[ids[order]]
    f = gpumst.minimum_spanning_forest_csr(indptr, indices, data, context=ctx)
    # CSR edge ids are the positions of the u < v entries, in position order.
    rows, cols = src[order], dst[order]
    forward = np.flatnonzero(rows < cols)
    expected = forward[kruskal(n, rows[forward], cols[forward], data[forward]).astype(np.int64)]
    assert f.edges.tolist() == expected.tolist()
    # The same forest weight as the edge list (the weight of a minimum forest is unique).
    assert f.total_weight == gpumst.minimum_spanning_forest(u, v, w, num_vertices=n, context=ctx).total_weight


def test_scipy_csr_arrays_go_in_without_conversion(cpu):
    scipy_sparse = pytest.importorskip("scipy.sparse")
    A = scipy_sparse.csr_array(np.array([[0, 2, 1], [2, 0, 3], [1, 3, 0]], dtype=np.float64))
    f = gpumst.minimum_spanning_forest_csr(A.indptr, A.indices, A.data, context=cpu)
    # u < v entries: position 0 (0-1, 2), 1 (0-2, 1), 3 (1-2, 3).
    assert f.edges.tolist() == [0, 1] and f.total_weight == 3.0


def test_errors_name_what_was_wrong(cpu):
    with pytest.raises(gpumst.InvalidGraph, match="edge 1: v = 7 is out of range for 3 vertices"):
        gpumst.minimum_spanning_forest([0, 1], [1, 7], num_vertices=3, context=cpu)
    with pytest.raises(ValueError, match="edge 2 has a NaN weight"):
        gpumst.minimum_spanning_forest([0, 1, 2], [1, 2, 0], [1.0, 2.0, np.nan], context=cpu)
    with pytest.raises(ValueError, match=r"u\[1\] = -1 is negative"):
        gpumst.minimum_spanning_forest([0, -1], [1, 2], context=cpu)
    with pytest.raises(ValueError, match=r"v\[0\] = 4294967296 is too large"):
        gpumst.minimum_spanning_forest([0], [2**32], context=cpu)
    with pytest.raises(ValueError, match="u has 2 entries but v has 1"):
        gpumst.minimum_spanning_forest([0, 1], [1], context=cpu)
    with pytest.raises(ValueError, match="w has 1 entries but there are 2 edges"):
        gpumst.minimum_spanning_forest([0, 1], [1, 2], [1.0], context=cpu)
    with pytest.raises(TypeError, match="integer vertex ids"):
        gpumst.minimum_spanning_forest([0.5], [1.0], context=cpu)
    with pytest.raises(TypeError, match="complex128"):
        gpumst.minimum_spanning_forest([0], [1], np.array([1j]), context=cpu)
    with pytest.raises(TypeError, match="object"):
        gpumst.minimum_spanning_forest([0], [1], [2**70], context=cpu)
    with pytest.raises(ValueError, match="one-dimensional"):
        gpumst.minimum_spanning_forest([[0]], [[1]], context=cpu)
    with pytest.raises(ValueError, match="unknown algorithm 'fastest'"):
        gpumst.minimum_spanning_forest([0], [1], algorithm="fastest", context=cpu)
    with pytest.raises(gpumst.InvalidGraph, match="not symmetric"):
        gpumst.minimum_spanning_forest_csr([0, 1, 1], [1], context=cpu)
    with pytest.raises(ValueError, match=r"indptr\[1\] = -2 is negative"):
        gpumst.minimum_spanning_forest_csr(np.array([0, -2]), [], context=cpu)
    with pytest.raises(gpumst.InvalidArgument, match="2\\^32"):
        gpumst.minimum_spanning_forest([0], [1], num_vertices=2**40, context=cpu)
    # Every error is a gpumst.Error carrying the C status.
    try:
        gpumst.minimum_spanning_forest([0], [5], num_vertices=2, context=cpu)
    except gpumst.Error as exc:
        assert exc.status == 2 and isinstance(exc, ValueError)


def test_forced_tiers_that_are_missing_say_why():
    for tier in ("opencl", "cuda"):
        try:
            gpumst.Context(backend=tier).close()
        except gpumst.BackendUnavailable as exc:
            assert tier.replace("opencl", "OpenCL").replace("cuda", "CUDA") in str(exc)
            assert isinstance(exc, RuntimeError) and exc.status == 3
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        gpumst.Context(backend="tpu")


def test_context_lifecycle():
    with gpumst.Context(backend="cpu", threads=1) as c:
        assert c.tier == "cpu" and "1 thread" in c.device_name and c.device_memory > 0
        assert "cpu" in repr(c)
    with pytest.raises(ValueError, match="closed"):
        c.scan([1, 2])
    c.close()  # closing twice is harmless
    assert gpumst.default_context() is gpumst.default_context()
    assert set(gpumst.info()) >= {"cuda", "opencl"}


@pytest.mark.parametrize("tier", ["cpu", "opencl", "cuda"])
def test_a_device_memory_cap_gives_the_same_forest_in_partitions(tier):
    # 40,000 edges need ~2 MB of device memory on one call (~0.8 MB of the CPU tier's
    # working memory); capped at 400 KB the tier solves them a part at a time, and the
    # forest must not change.
    try:
        capped = gpumst.Context(backend=tier, device_memory_limit=400_000, threads=2)
    except gpumst.BackendUnavailable as exc:
        pytest.skip(f"{tier} tier unavailable here: {exc}")
    with capped:
        rng = np.random.default_rng(3)
        u, v = random_graph(rng, 1000, 40_000)
        w = rng.integers(0, 40, u.shape[0]).astype(np.float64)
        f = gpumst.minimum_spanning_forest(u, v, w, num_vertices=1000, context=capped)
        assert f.edges.tolist() == kruskal(1000, u, v, w).tolist()
        # The cap reaches the library: 200,000 vertices leave no room under it.
        u, v = random_graph(rng, 200_000, 30_000)
        with pytest.raises(gpumst.OutOfMemory, match="needs about|is too small"):
            gpumst.minimum_spanning_forest(u, v, num_vertices=200_000, context=capped)
    with pytest.raises(ValueError):
        gpumst.Context(backend="cpu", device_memory_limit=-1)


@pytest.mark.parametrize("tier", ["opencl", "cuda"])
def test_a_forest_split_across_devices_is_the_same_forest(tier, monkeypatch):
    # Device 0 listed twice (two queues on one device, as on PoCL in CI), with the
    # split threshold lowered so that this small graph is split.
    monkeypatch.setenv("GPUMST_SPLIT_MIN_EDGES", "1000")
    try:
        split = gpumst.Context(backend=tier, devices=[0, 0])
    except gpumst.BackendUnavailable as exc:
        pytest.skip(f"{tier} tier unavailable here: {exc}")
    with split:
        assert split.device_count == 2
        rng = np.random.default_rng(8)
        u, v = random_graph(rng, 1000, 40_000)
        w = rng.integers(0, 40, u.shape[0]).astype(np.float64)
        f = gpumst.minimum_spanning_forest(u, v, w, num_vertices=1000, context=split)
        assert f.edges.tolist() == kruskal(1000, u, v, w).tolist()


def test_device_lists_are_checked_and_ignored_by_the_cpu_tier():
    with gpumst.Context(backend="cpu", devices=[0, 3]) as c:
        assert c.device_count == 1
    with gpumst.Context(backend="cpu", devices="all") as c:
        assert c.device_count == 1
    for bad in ([], "some", [-1], [2**32]):
        with pytest.raises(ValueError, match="devices"):
            gpumst.Context(backend="cpu", devices=bad)


def test_the_mpi_entry_point_needs_the_mpi_build(cpu):
    # The default build (this package's) has no MPI and says so; a library built with
    # the `mpi` feature, outside MPI_Init, says that instead. Its real runs under mpirun
    # are mpi-tests/test_mpi.py (scripts/test_mpi.sh).
    try:
        cpu.minimum_spanning_forest_mpi(0, [0], [1], num_vertices=2)
    except gpumst.BackendUnavailable as e:
        assert "built without MPI" in str(e)
    except gpumst.InvalidArgument as e:
        assert "MPI is not initialised" in str(e)
    else:
        pytest.fail("a call outside MPI returned a forest")
    with pytest.raises(ValueError, match="ids has 2 entries but there are 1 edges"):
        cpu.minimum_spanning_forest_mpi(0, [0], [1], num_vertices=2, ids=[0, 1])
