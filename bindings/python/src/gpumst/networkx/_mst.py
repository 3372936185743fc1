"""NetworkX's spanning-tree functions, computed by gpumst, with NetworkX's results.

gpumst returns the forest under the (weight, edge id) order. With edges numbered in
``G.edges()`` order that is exactly the forest NetworkX's Kruskal yields (its sort is
stable); its yield order is (weight, edge id) too. NetworkX's Prim and Borůvka break
ties between equal weights by their own visiting order, so their forest is gpumst's
only when the forest is unique; then the order they yield it in is recovered by
replaying their visiting rules on the forest's edges alone (every edge they accept is a
forest edge, and among forest edges their choices keep the same relative order).
Where that does not hold (tied weights that make the forest ambiguous, weights that
are not exact numbers) the functions raise NotImplementedError, and NetworkX runs its
own code when it may fall back.
"""

from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Iterable, Iterator
from heapq import heappop, heappush
from itertools import count, repeat
from typing import Any

import networkx as nx
import numpy as np
from networkx.utils import UnionFind

from .._core import minimum_spanning_forest
from ._graph import GpumstGraph, Unsupported, gc_paused, is_nan

# How often each function ran on gpumst, and how often it declined (NotImplementedError).
calls: Counter = Counter()

_ALGORITHMS = {"kruskal": "kruskal", "prim": "prim", "boruvka": "boruvka", "borůvka": "boruvka"}


def _algorithm(algorithm: Any) -> str:
    try:
        return _ALGORITHMS[algorithm]
    except KeyError:
        raise ValueError(f"{algorithm} is not a valid choice for an algorithm.") from None


def _graph(G: Any) -> GpumstGraph:
    if isinstance(G, GpumstGraph):
        return G
    if isinstance(G, nx.Graph):
        return GpumstGraph(G)
    raise TypeError(f"expected a NetworkX or gpumst graph, got {type(G).__name__}")


def _failing(edges: list, error: Exception) -> Iterator:
    """Yields `edges`, then raises `error`: NetworkX's generators fail at iteration."""
    yield from edges
    raise error


def _nan_message(edge: tuple) -> str:
    return f"NaN found as an edge weight. Edge {edge}"


# ---- edge selections and forests --------------------------------------------------------


def _selection(drop: np.ndarray | None) -> np.ndarray | None:
    """Edge ids that take part (None: all)."""
    if drop is None or not drop.any():
        return None
    return np.flatnonzero(~drop)


def _forest(
    G: GpumstGraph, values: np.ndarray, selected: np.ndarray | None, maximum: bool, reverse: bool = False
) -> np.ndarray:
    """Edge ids (of G, ascending) of the forest of the selected edges under (weight,
    id), or with `reverse` under (weight, descending id)."""
    u, v = G.u, G.v
    if selected is not None:
        u, v, values = u[selected], v[selected], values[selected]
    if reverse:
        u, v, values = u[::-1], v[::-1], values[::-1]
    edges = minimum_spanning_forest(u, v, values, num_vertices=G.number_of_nodes(), maximum=maximum).edges
    edges = edges.astype(np.int64)
    if reverse:
        edges = np.sort(u.shape[0] - 1 - edges)
    return edges if selected is None else selected[edges]


def _unique_forest(
    G: GpumstGraph, values: np.ndarray, selected: np.ndarray | None, maximum: bool, algorithm: str
) -> np.ndarray:
    """The forest, which must be the only one: the forests under both tie orders (by
    ascending and by descending edge id) agree exactly when no tie is left open (a
    greedy basis that both orders pick is the matroid's only one)."""
    forest = _forest(G, values, selected, maximum)
    if not np.array_equal(forest, _forest(G, values, selected, maximum, reverse=True)):
        raise Unsupported(
            f"equal weights leave this graph more than one {'maximum' if maximum else 'minimum'} spanning "
            f"forest, and NetworkX's {algorithm} breaks such ties by its own visiting order"
        )
    return forest


def _tuples(G: GpumstGraph, src: np.ndarray, dst: np.ndarray, edges: np.ndarray, keys: bool, data: bool) -> list:
    """NetworkX's edge tuples: (u, v[, key][, data])."""
    with gc_paused():
        columns = [G.node_objects(src), G.node_objects(dst)]
        if keys:
            columns.append(G.edge_keys(edges))
        if data:
            columns.append(G.edge_data(edges))
        return list(zip(*columns))


# ---- Kruskal ----------------------------------------------------------------------------


def _partition_masks(G: GpumstGraph, partition: Any) -> tuple[np.ndarray, np.ndarray]:
    included_mark, excluded_mark = (
        nx.algorithms.tree.mst.EdgePartition.INCLUDED,
        nx.algorithms.tree.mst.EdgePartition.EXCLUDED,
    )
    m = G.number_of_edges()
    marks = list(map(dict.get, G.edge_data(np.arange(m)), repeat(partition)))
    included = np.fromiter(map(operator.eq, marks, repeat(included_mark)), dtype=bool, count=m)
    excluded = np.fromiter(map(operator.eq, marks, repeat(excluded_mark)), dtype=bool, count=m)
    return included, excluded


def kruskal(
    G: GpumstGraph, minimum: bool, weight: Any, keys: bool, data: bool, ignore_nan: bool, partition: Any = None
) -> Iterator:
    w = G.weights(weight)
    with_keys = G.multigraph and keys
    if w.nan is not None and not ignore_nan:
        # NetworkX reads every edge's weight, in G.edges() order, before yielding.
        e = np.flatnonzero(w.nan)[:1]
        edge = _tuples(G, G.u[e], G.v[e], e, G.multigraph, True)[0]
        return _failing([], ValueError(_nan_message(edge)))
    order_keys = w.keys if minimum else ~w.keys
    drop = w.nan
    included = None
    if partition is not None:
        included, excluded = _partition_masks(G, partition)
        drop = excluded if drop is None else drop | excluded
    selected = _selection(drop)
    if included is not None and included.any():
        # Included edges come first, in G.edges() order; then the open ones by weight.
        ranks = np.zeros(G.number_of_edges(), dtype=np.uint64)
        is_open = ~included
        _, dense = np.unique(order_keys[is_open], return_inverse=True)
        ranks[is_open] = dense.astype(np.uint64) + np.uint64(1)
        order_keys = ranks
        forest = _forest(G, ranks, selected, maximum=False)
    else:
        forest = _forest(G, w.values, selected, maximum=not minimum)
    edges = _by_key(forest, order_keys)
    return iter(_tuples(G, G.u[edges], G.v[edges], edges, with_keys, data))


def _by_key(edges: np.ndarray, order_keys: np.ndarray) -> np.ndarray:
    """`edges` (ascending ids) ordered by (key, id)."""
    keys = order_keys[edges]
    if keys.size:
        keys = keys - keys.min()  # the same order, from 0
    if keys.size and int(keys.max()) < 2**32 and edges.shape[0] < 2**32:
        # One unstable sort of (key, rank) packed in 64 bits: no ties left to keep.
        packed = (keys << np.uint64(32)) | np.arange(edges.shape[0], dtype=np.uint64)
        packed.sort()
        return edges[(packed & np.uint64(0xFFFF_FFFF)).astype(np.int64)]
    return edges[np.argsort(keys, kind="stable")]


# ---- Prim -------------------------------------------------------------------------------


class _TreeArcs:
    """The forest's edges as adjacency lists in G's adjacency order (Python lists, for
    replaying NetworkX's loops): arcs first[x]..first[x+1] leave node x, towards
    target[a], along edge[a], with order key key[a]."""

    def __init__(self, G: GpumstGraph, forest: np.ndarray, order_keys: np.ndarray):
        arc_ids = G.arc_ids()
        forest_ids = arc_ids[G.edge_arc[forest]]
        by_id = np.argsort(forest_ids)
        positions = np.flatnonzero(np.isin(arc_ids, forest_ids))
        edge = forest[by_id[np.searchsorted(forest_ids, arc_ids[positions], sorter=by_id)]]
        self.first = np.searchsorted(positions, G.arc_offsets).tolist()
        self.target = G.arc_targets[positions].tolist()
        self.edge = edge.tolist()
        self.key = order_keys[edge].tolist()


def _nan_arc(G: GpumstGraph, x: int, weight: Any, skip: Any) -> int | None:
    """The first arc of node x (adjacency order) whose weight is NaN and whose target
    `skip` does not reject."""
    targets = G.arc_targets
    for a in range(G.arc_offsets[x], G.arc_offsets[x + 1]):
        if not skip(int(targets[a])) and is_nan(G.arc_data[a].get(weight, 1)):
            return a
    return None


def _arc_tuple(G: GpumstGraph, x: int, a: int) -> tuple:
    x_node, y_node = G.nodes[x], G.nodes[int(G.arc_targets[a])]
    if G.multigraph:
        return (x_node, y_node, G.arc_keys[a], G.arc_data[a])
    return (x_node, y_node, G.arc_data[a])


def prim(G: GpumstGraph, minimum: bool, weight: Any, keys: bool, data: bool, ignore_nan: bool) -> Iterator:
    w = G.weights(weight)
    order_keys = w.keys if minimum else ~w.keys
    forest = _unique_forest(G, w.values, _selection(w.nan), not minimum, "prim")
    arcs = _TreeArcs(G, forest, order_keys)
    # Nodes where NetworkX would meet a NaN weight (unless told to ignore them).
    nan_nodes = set()
    if w.nan is not None and not ignore_nan:
        nan_nodes = set(G.u[w.nan].tolist()) | set(G.v[w.nan].tolist())
    index = None if G.identity else dict(zip(G.nodes, range(len(G.nodes))))
    first, target, edge, key = arcs.first, arcs.target, arcs.edge, arcs.key
    visited = bytearray(len(G.nodes))
    src: list[int] = []
    dst: list[int] = []
    chosen: list[int] = []
    error = None
    counter = count()
    # NetworkX starts each tree at set(G).pop(); the same set, popped and discarded in
    # the same order, gives the same start nodes.
    unvisited = set(G.nodes)
    while unvisited and error is None:
        start = unvisited.pop()
        x = start if index is None else index[start]
        visited[x] = 1
        if x in nan_nodes:
            a = _nan_arc(G, x, weight, lambda y: False)
            if a is not None:
                error = _arc_tuple(G, x, a)
                break
        frontier: list = []
        for a in range(first[x], first[x + 1]):
            heappush(frontier, (key[a], next(counter), x, target[a], edge[a]))
        while unvisited and frontier:
            _, _, x, y, e = heappop(frontier)
            if visited[y]:
                continue
            src.append(x)
            dst.append(y)
            chosen.append(e)
            visited[y] = 1
            unvisited.discard(G.nodes[y])
            if y in nan_nodes:
                a = _nan_arc(G, y, weight, visited.__getitem__)
                if a is not None:
                    error = _arc_tuple(G, y, a)
                    break
            for a in range(first[y], first[y + 1]):
                if not visited[target[a]]:
                    heappush(frontier, (key[a], next(counter), y, target[a], edge[a]))
    as_array = np.array
    found = _tuples(
        G,
        as_array(src, dtype=np.int64),
        as_array(dst, dtype=np.int64),
        as_array(chosen, dtype=np.int64),
        G.multigraph and keys,
        data,
    )
    if error is not None:
        return _failing(found, ValueError(_nan_message(error)))
    return iter(found)


# ---- Borůvka ----------------------------------------------------------------------------


def boruvka(G: GpumstGraph, minimum: bool, weight: Any, keys: bool, data: bool, ignore_nan: bool) -> Iterator:
    if G.multigraph:
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")
    w = G.weights(weight)
    if w.nan is not None and not ignore_nan:
        # NetworkX first scans each node's edges to other nodes, in node order.
        nan_arcs = np.isin(G.arc_ids(), G.arc_ids()[G.edge_arc[w.nan]])
        sources = np.repeat(np.arange(len(G.nodes)), np.diff(G.arc_offsets))
        nan_arcs &= G.arc_targets != sources
        if nan_arcs.any():
            a = int(np.flatnonzero(nan_arcs)[0])
            return _failing([], ValueError(_nan_message(_arc_tuple(G, int(sources[a]), a))))
    # NetworkX's Borůvka only takes an edge lighter than its starting minimum, inf: an
    # edge weighing +inf (for a maximum forest -inf) is never taken.
    drop = w.nan
    if w.values.dtype.kind == "f":
        infinite = np.isposinf(w.values) if minimum else np.isneginf(w.values)
        if infinite.any():
            drop = infinite if drop is None else drop | infinite
    order_keys = w.keys if minimum else ~w.keys
    forest = _unique_forest(G, w.values, _selection(drop), not minimum, "boruvka")
    arcs = _TreeArcs(G, forest, order_keys)
    first, target, edge, key = arcs.first, arcs.target, arcs.edge, arcs.key
    index = None if G.identity else dict(zip(G.nodes, range(len(G.nodes))))
    nodes = G.nodes
    sets = UnionFind(nodes)
    component = [0] * len(nodes)
    src: list[int] = []
    dst: list[int] = []
    chosen: list[int] = []
    while True:
        parts = list(sets.to_sets())
        for c, part in enumerate(parts):
            for node in part:
                component[node if index is None else index[node]] = c
        best = []
        for c, part in enumerate(parts):
            lightest = None
            # NetworkX's edge_boundary walks a set rebuilt from the component's set.
            for node in {n for n in part}:
                x = node if index is None else index[node]
                for a in range(first[x], first[x + 1]):
                    if component[target[a]] != c and (lightest is None or key[a] < lightest[0]):
                        lightest = (key[a], x, target[a], edge[a])
            if lightest is not None:
                best.append(lightest[1:])
        if not best:
            break
        for x, y, e in best:
            if sets[nodes[x]] != sets[nodes[y]]:
                src.append(x)
                dst.append(y)
                chosen.append(e)
                sets.union(nodes[x], nodes[y])
    found = _tuples(
        G, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), np.array(chosen, dtype=np.int64), False, data
    )
    return iter(found)


_RUN = {"kruskal": kruskal, "prim": prim, "boruvka": boruvka}


# ---- the functions NetworkX dispatches to ------------------------------------------------


def _edges(G: Any, algorithm: Any, minimum: bool, weight: Any, keys: bool, data: bool, ignore_nan: bool) -> Iterator:
    G = _graph(G)
    _check_undirected(G)
    name = _algorithm(algorithm)
    return _RUN[name](G, minimum, weight, keys, data, ignore_nan)


def _tree(G: GpumstGraph, edges: Iterable) -> nx.Graph:
    """NetworkX's result graph: G's class, graph and node attributes, then the edges."""
    return G.new_graph(edges)


def _check_undirected(G: GpumstGraph) -> None:
    if G.directed:
        raise nx.NetworkXNotImplemented("not implemented for directed type")


def _counted(function):
    """Counts the calls that ran on gpumst, and those left to NetworkX, by algorithm."""
    name = function.__name__

    @functools.wraps(function)
    def counted(*args, **kwargs):
        algorithm = kwargs.get("algorithm", "")
        if not algorithm and name.endswith("_spanning_edges") and len(args) > 1:
            algorithm = args[1]
        elif not algorithm and name in ("minimum_spanning_tree", "maximum_spanning_tree") and len(args) > 2:
            algorithm = args[2]
        what = f"{name}[{algorithm}]" if algorithm else name
        try:
            result = function(*args, **kwargs)
        except NotImplementedError:
            calls[f"declined {what}"] += 1
            raise
        calls[what] += 1
        return result

    return counted


@_counted
def minimum_spanning_edges(G, algorithm="kruskal", weight="weight", keys=True, data=True, ignore_nan=False):
    return _edges(G, algorithm, True, weight, keys, data, ignore_nan)


@_counted
def maximum_spanning_edges(G, algorithm="kruskal", weight="weight", keys=True, data=True, ignore_nan=False):
    return _edges(G, algorithm, False, weight, keys, data, ignore_nan)


@_counted
def minimum_spanning_tree(G, weight="weight", algorithm="kruskal", ignore_nan=False):
    G = _graph(G)
    _check_undirected(G)
    return _tree(G, _edges(G, algorithm, True, weight, True, True, ignore_nan))


@_counted
def maximum_spanning_tree(G, weight="weight", algorithm="kruskal", ignore_nan=False):
    G = _graph(G)
    _check_undirected(G)
    return _tree(G, _edges(G, algorithm, False, weight, True, True, ignore_nan))


@_counted
def kruskal_mst_edges(G, minimum, weight="weight", keys=True, data=True, ignore_nan=False, partition=None):
    return kruskal(_graph(G), minimum, weight, keys, data, ignore_nan, partition)


@_counted
def prim_mst_edges(G, minimum, weight="weight", keys=True, data=True, ignore_nan=False):
    return prim(_graph(G), minimum, weight, keys, data, ignore_nan)


@_counted
def boruvka_mst_edges(G, minimum=True, weight="weight", keys=False, data=True, ignore_nan=False):
    return boruvka(_graph(G), minimum, weight, keys, data, ignore_nan)


@_counted
def partition_spanning_tree(G, minimum=True, weight="weight", partition="partition", ignore_nan=False):
    G = _graph(G)
    return _tree(G, kruskal(G, minimum, weight, True, True, ignore_nan, partition))


FUNCTIONS = {
    "minimum_spanning_edges": minimum_spanning_edges,
    "maximum_spanning_edges": maximum_spanning_edges,
    "minimum_spanning_tree": minimum_spanning_tree,
    "maximum_spanning_tree": maximum_spanning_tree,
    "kruskal_mst_edges": kruskal_mst_edges,
    "prim_mst_edges": prim_mst_edges,
    "boruvka_mst_edges": boruvka_mst_edges,
    "partition_spanning_tree": partition_spanning_tree,
}
