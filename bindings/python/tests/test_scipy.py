"""gpumst.scipy.minimum_spanning_tree against scipy.sparse.csgraph.minimum_spanning_tree:
the same matrix (class, structure, entries) for every input type scipy takes."""

from __future__ import annotations

import numpy as np
import pytest

sp = pytest.importorskip("scipy.sparse")
from conftest import SHARED_DATA  # noqa: E402
from scipy.sparse.csgraph import minimum_spanning_tree as scipy_mst  # noqa: E402

import gpumst  # noqa: E402
from gpumst.scipy import minimum_spanning_tree  # noqa: E402


def assert_same(expected, got):
    assert type(got) is type(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    np.testing.assert_array_equal(got.data, expected.data)


def random_matrix(rng, n, density, kind):
    A = rng.random((n, n))
    A[rng.random((n, n)) > density] = 0
    if kind == "ties":
        A = np.round(A * 3)  # equal weights, and zeros that are not edges
    elif kind == "negative":
        A = -A
    elif kind == "symmetric":
        A = np.triu(A) + np.triu(A, 1).T
    return A


@pytest.mark.parametrize("kind", ["distinct", "ties", "negative", "symmetric"])
def test_random_matrices_of_every_input_type(ctx, kind):
    rng = np.random.default_rng(11)
    for _ in range(40):
        A = random_matrix(rng, int(rng.integers(1, 40)), rng.random(), kind)
        for make in (np.asarray, sp.csr_matrix, sp.csr_array, sp.coo_array, sp.csc_matrix, sp.lil_matrix, sp.dok_array):
            assert_same(scipy_mst(make(A)), minimum_spanning_tree(make(A), context=ctx))


def test_infinities_and_nan(cpu):
    rng = np.random.default_rng(12)
    for _ in range(30):
        A = random_matrix(rng, 20, 0.4, "ties")
        A[rng.random((20, 20)) < 0.05] = np.inf
        A[rng.random((20, 20)) < 0.05] = np.nan
        # Dense: inf and NaN are "no edge"; sparse: NaN entries are edges sorted last.
        assert_same(scipy_mst(A), minimum_spanning_tree(A, context=cpu))
        assert_same(scipy_mst(sp.csr_matrix(A)), minimum_spanning_tree(sp.csr_matrix(A), context=cpu))


def test_explicit_zeros_duplicates_and_unsorted_indices(cpu):
    # Explicit zeros are edges of weight 0 that the result drops, as scipy does;
    # duplicate entries are separate edges; unsorted column indices stay in place.
    data = np.array([0.0, 2.0, -1.0, 2.0, 2.0, 0.5, 3.0])
    indices = np.array([1, 3, 2, 3, 0, 1, 0])
    indptr = np.array([0, 3, 5, 6, 7])
    M = sp.csr_matrix((data, indices, indptr), shape=(4, 4))
    assert not M.has_sorted_indices
    assert_same(scipy_mst(M.copy()), minimum_spanning_tree(M.copy(), context=cpu))


def test_overwrite_reuses_the_input_like_scipy(cpu):
    A = sp.csr_matrix(np.array([[0, 1.0, 4.0], [0, 0, 2.0], [0, 0, 0]]))
    theirs, ours = A.copy(), A.copy()
    assert_same(scipy_mst(theirs, overwrite=True), minimum_spanning_tree(ours, overwrite=True, context=cpu))
    np.testing.assert_array_equal(theirs.data, ours.data)
    B = A.copy()
    minimum_spanning_tree(B, context=cpu)
    np.testing.assert_array_equal(B.data, A.data)  # not overwritten by default


def test_the_same_errors_as_scipy(cpu):
    for bad in (np.zeros((2, 3)), np.zeros(3)):
        with pytest.raises(ValueError) as theirs:
            scipy_mst(bad)
        with pytest.raises(ValueError) as ours:
            minimum_spanning_tree(bad, context=cpu)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["NY.gr.xz", "BAY.gr.xz"])
def test_road_graphs(name):
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    g = gpumst.load_graph(path)
    n = g.num_vertices
    # Each road once, in the upper triangle (the file's first direction may be either).
    lo, hi = np.minimum(g.u, g.v), np.maximum(g.u, g.v)
    A = sp.csr_array((g.weights.astype(np.float64), (lo, hi)), shape=(n, n))
    expected = scipy_mst(A)
    got = minimum_spanning_tree(A)
    assert_same(expected, got)
    # scipy drops the zero-weight road from its forest, so one edge fewer than gpumst's.
    assert got.nnz == len(g.minimum_spanning_forest()) - 1
