"""A drop-in for ``scipy.sparse.csgraph.minimum_spanning_tree``.

Same arguments, same input types (dense arrays, masked arrays, any scipy sparse matrix
or array, pydata sparse), the same meaning of the input (a zero, and for dense input
an inf or NaN, is no edge; ``csgraph[i, j]`` and ``csgraph[j, i]`` are two candidate
edges between i and j), and the same result: a CSR matrix holding each forest edge
once, at the entry scipy would keep (the first of equal weights in CSR order), with
zero-weight forest edges dropped as scipy drops them.

scipy runs Kruskal over the CSR entries in stable order of their weights; gpumst orders
edges by (weight, edge id), so numbering the entries by CSR position gives the same
forest, computed on whatever tier the context has.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.sparse._sputils import is_pydata_spmatrix
from scipy.sparse.csgraph._validation import validate_graph

from ._arrays import order_keys
from ._core import Context, minimum_spanning_forest

__all__ = ["minimum_spanning_tree"]


def minimum_spanning_tree(csgraph: Any, overwrite: bool = False, *, context: Context | None = None):
    """Return a minimum spanning tree (forest) of an undirected graph, exactly as
    ``scipy.sparse.csgraph.minimum_spanning_tree`` does, computed by gpumst.

    Parameters
    ----------
    csgraph : array_like or sparse matrix, shape (N, N)
        The graph: entry (i, j) is an edge between i and j. Zero entries (and, for dense
        input, inf and NaN) are not edges.
    overwrite : bool
        If true, the input's data may be overwritten (as in scipy), saving a copy.
    context : gpumst.Context, optional
        The tier to run on (default: the module's context).

    Returns
    -------
    span_tree : csr_array or csr_matrix, shape (N, N)
        The forest, each edge once, in the triangle scipy would place it (a csr_matrix
        when the input was a scipy sparse matrix, else a csr_array, as scipy returns).
    """
    is_pydata = is_pydata_spmatrix(csgraph)
    if is_pydata:
        pydata_cls = csgraph.__class__
        pydata_fill_value = csgraph.fill_value
    csgraph = validate_graph(csgraph, True, np.float64, dense_output=False, copy_if_sparse=not overwrite)
    n = csgraph.shape[0]
    data, indices, indptr = csgraph.data, csgraph.indices, csgraph.indptr
    rows = np.repeat(np.arange(n, dtype=np.uint32), np.diff(indptr))
    # scipy sorts NaN weights after all others (they still join trees); gpumst rejects
    # NaN, so order such graphs by keys that put it last.
    weights = order_keys(data) if np.isnan(data).any() else data
    forest = minimum_spanning_forest(rows, indices, weights, num_vertices=n, context=context)
    dropped = np.ones(data.shape[0], dtype=bool)
    dropped[forest.edges] = False
    data[dropped] = 0
    # The validated graph's class: csr_matrix for scipy's sparse matrices, csr_array for
    # everything else (scipy >= 1.15 returns the same).
    sp_tree = type(csgraph)((data, indices, indptr), shape=(n, n))
    sp_tree.eliminate_zeros()
    if is_pydata:
        sp_tree = pydata_cls.from_scipy_sparse(sp_tree, fill_value=pydata_fill_value)
    return sp_tree
