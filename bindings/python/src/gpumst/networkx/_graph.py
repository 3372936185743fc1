"""The backend's graph: a NetworkX graph's structure as numpy arrays, converted in bulk.

Edges are numbered in ``G.edges()`` order (the order NetworkX's Kruskal breaks ties
by), and every edge keeps a reference to its attribute dict in ``G``, so results can
yield exactly the objects NetworkX would. Weights are read per attribute name on first
use and cached.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import chain, repeat
from typing import Any

import networkx as nx
import numpy as np

from .._arrays import order_keys


class Unsupported(NotImplementedError):
    """What the backend cannot do exactly; NetworkX then runs its own code (when it is
    allowed to fall back) instead of this backend returning something different."""


# How many objects a paused section must leave in the young generation before they are
# moved to the oldest one (see `gc_paused`); smaller results are left as they are.
AGE_AFTER_OBJECTS = 100_000


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pauses the cyclic garbage collector while millions of acyclic objects (tuples,
    lists of references) are made: with a large graph alive, each automatic collection
    would walk all of its dicts, and such runs otherwise dominate the conversion.

    When the section leaves many objects in the young generation (a result of 250,000
    edge tuples, a tree's dicts), they are moved to the oldest generation before the
    collector resumes: the next young collections would otherwise walk every one of
    them, only to find them alive (a third of `minimum_spanning_edges`' time on a
    converted 1M-edge graph). ``gc.freeze(); gc.unfreeze()`` is that move; it ages
    the caller's young objects too (their cycles are then found by the next full
    collection instead of a young one), and it is skipped when the caller has frozen
    objects of its own, which ``unfreeze`` would release."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_count()[0] >= AGE_AFTER_OBJECTS and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


class Weights:
    """One weight attribute of every edge: `values` (int32/uint32/int64/uint64/float64,
    exact), `keys` (uint64, ordered like the values; NaN last) and `nan` (a mask, or
    None when there is no NaN)."""

    def __init__(self, values: np.ndarray):
        self.values = values
        nan = np.isnan(values) if values.dtype.kind == "f" else None
        self.nan = nan if nan is not None and nan.any() else None
        self.keys = order_keys(values)


def _exact_array(values: list) -> np.ndarray:
    """The weights as an exact numpy array; Unsupported when some weight is not a
    number gpumst holds exactly (Decimal, Fraction, str, huge ints mixed with floats)."""
    types = set(map(type, values))
    if types <= {int, bool} or all(issubclass(t, (int, np.integer)) for t in types):
        for dtype in (np.int64, np.uint64):
            try:
                return np.array(values, dtype=dtype)
            except OverflowError:
                continue
        raise Unsupported("integer weights beyond 64 bits")
    exact_float = (float, np.float64, np.float32, np.float16)
    if all(issubclass(t, exact_float) for t in types):
        return np.array(values, dtype=np.float64)
    if all(issubclass(t, exact_float + (int, np.integer)) for t in types):
        array = np.array(values, dtype=np.float64)
        # Integers mixed with floats must survive the trip through float64.
        for i, (x, y) in enumerate(zip(values, array.tolist())):
            if isinstance(x, (int, np.integer)) and x != y:
                raise Unsupported(f"integer weight {x} (edge {i}) mixed with float weights is not exact as a float")
        return array
    odd = sorted(t.__name__ for t in types if not issubclass(t, exact_float + (int, np.integer)))
    raise Unsupported(f"weights of type {', '.join(odd)} are not numbers gpumst holds exactly")


def _narrowest(values: np.ndarray) -> np.ndarray:
    """Integer weights in 32 bits when they fit (same order, faster priorities)."""
    if values.dtype.kind in "iu" and values.size:
        low, high = int(values.min()), int(values.max())
        if 0 <= low and high < 2**32:
            return values.astype(np.uint32)
        if -(2**31) <= low and high < 2**31:
            return values.astype(np.int32)
    return values


class GpumstGraph:
    """A NetworkX graph as gpumst sees it (made by ``convert_from_nx``).

    Arcs are the adjacency entries in ``G._adj`` order (for multigraphs one per key):
    ``arc_offsets`` (per node), ``arc_targets`` (node index), ``arc_data`` (the edge's
    attribute dict in ``G``) and ``arc_keys`` (multigraphs). Edges are the arcs of
    ``G.edges()``: ``edge_arc`` (their arc), ``u`` and ``v`` (node indices, in the
    orientation ``G.edges()`` yields).
    """

    __networkx_backend__ = "gpumst"

    def __init__(self, G: nx.Graph, *, node_attrs: bool = True, graph_attrs: bool = True):
        self.graph_class = G.__class__
        self.directed = G.is_directed()
        self.multigraph = G.is_multigraph()
        adj = G._adj
        self.nodes = list(G._node)
        if self.nodes != list(adj):
            raise Unsupported("the graph's node and adjacency dicts list nodes in different orders")
        n = len(self.nodes)
        if n >= 2**32:
            raise Unsupported(f"{n} nodes: gpumst's vertex ids are 32-bit")
        self.graph_attrs = G.graph if graph_attrs else {}
        self.node_data = list(G._node.values()) if node_attrs else None
        with gc_paused():
            self._read_arcs(adj, n)
        self._weights: dict[Any, Weights] = {}
        self._arc_ids: np.ndarray | None = None
        self._columns: dict[str, np.ndarray] = {}

    def _read_arcs(self, adj: dict, n: int) -> None:
        # Node objects to indices; graphs whose nodes are 0..n-1 in order skip the dict.
        self.identity = self.nodes == list(range(n)) and set(map(type, self.nodes)) <= {int}
        index = None if self.identity else dict(zip(self.nodes, range(n)))
        if self.multigraph:
            # One arc per (neighbour, key): expand each neighbour by its key count.
            keydicts = list(chain.from_iterable(map(dict.values, adj.values())))
            keys_per_pair = np.fromiter(map(len, keydicts), dtype=np.int64, count=len(keydicts))
            pairs_per_node = np.fromiter(map(len, adj.values()), dtype=np.int64, count=n)
            pair_sources = np.repeat(np.arange(n), pairs_per_node)
            degree = np.bincount(pair_sources, weights=keys_per_pair, minlength=n).astype(np.int64)
            targets = self._indices(list(chain.from_iterable(adj.values())), index)
            self.arc_targets = np.repeat(targets, keys_per_pair)
            self.arc_data = list(chain.from_iterable(map(dict.values, keydicts)))
            self.arc_keys = list(chain.from_iterable(keydicts))
        else:
            degree = np.fromiter(map(len, adj.values()), dtype=np.int64, count=n)
            self.arc_targets = self._indices(list(chain.from_iterable(adj.values())), index)
            self.arc_data = list(chain.from_iterable(map(dict.values, adj.values())))
            self.arc_keys = None
        self.arc_offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(degree, out=self.arc_offsets[1:])
        sources = np.repeat(np.arange(n, dtype=np.uint32), degree)
        # G.edges() yields an arc when its target has not been passed yet: target >= source.
        self.edge_arc = np.flatnonzero(self.arc_targets >= sources)
        self.u = sources[self.edge_arc]
        self.v = self.arc_targets[self.edge_arc]

    @staticmethod
    def _indices(objects: list, index: dict | None) -> np.ndarray:
        if index is None:
            return np.array(objects, dtype=np.uint32)
        return np.array(list(map(index.__getitem__, objects)), dtype=np.uint32)

    # -- what NetworkX asks of a graph ---------------------------------------------------

    def is_directed(self) -> bool:
        return self.directed

    def is_multigraph(self) -> bool:
        return self.multigraph

    def number_of_nodes(self) -> int:
        return len(self.nodes)

    def number_of_edges(self) -> int:
        return self.edge_arc.shape[0]

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes)

    def __repr__(self) -> str:
        size = f"{len(self.nodes)} nodes, {self.number_of_edges()} edges"
        return f"<gpumst.networkx.GpumstGraph ({self.graph_class.__name__}): {size}>"

    # -- edges, weights ------------------------------------------------------------------

    def _column(self, name: str) -> np.ndarray:
        """Per edge (or node) Python objects as a numpy object array, made on first
        use: picking from one is a C loop (`column[indices].tolist()`)."""
        column = self._columns.get(name)
        if column is None:
            if name == "nodes":
                items = self.nodes
            else:
                arcs = self.arc_data if name == "data" else self.arc_keys
                items = map(arcs.__getitem__, self.edge_arc.tolist())
            count = len(self.nodes) if name == "nodes" else self.number_of_edges()
            column = self._columns[name] = np.fromiter(items, dtype=object, count=count)
        return column

    def edge_data(self, edges: np.ndarray) -> list:
        """The attribute dicts (objects of the original graph) of these edges."""
        return self._column("data")[edges].tolist()

    def edge_keys(self, edges: np.ndarray) -> list:
        return self._column("keys")[edges].tolist()

    def node_objects(self, indices: np.ndarray) -> list:
        """The node objects at these indices."""
        return indices.tolist() if self.identity else self._column("nodes")[indices].tolist()

    def weights(self, weight: Any) -> Weights:
        """Every edge's ``d.get(weight, 1)``, as NetworkX's MST code reads it."""
        cached = self._weights.get(weight)
        if cached is None:
            values = list(map(dict.get, self._column("data"), repeat(weight), repeat(1)))
            cached = self._weights[weight] = Weights(_narrowest(_exact_array(values)))
        return cached

    def arc_ids(self) -> np.ndarray:
        """id() of every arc's attribute dict: both arcs of an edge share that dict, so
        it names the edge (checked: as many distinct dicts as edges)."""
        if self._arc_ids is None:
            ids = np.fromiter(map(id, self.arc_data), dtype=np.uint64, count=len(self.arc_data))
            if np.unique(ids).shape[0] != self.number_of_edges():
                raise Unsupported("some edges share one attribute dict")
            self._arc_ids = ids
        return self._arc_ids

    # -- back to NetworkX --------------------------------------------------------------

    def new_graph(self, edges: Iterable[tuple]) -> nx.Graph:
        """A graph of the class this one was converted from, with its graph and node
        attributes and then `edges` ((u, v[, key], data) tuples), built as NetworkX's
        ``T.graph.update(G.graph); T.add_nodes_from(G.nodes.items());
        T.add_edges_from(edges)`` builds it (the same dicts, orders and copies)."""
        T = self.graph_class()
        T.graph.update(self.graph_attrs)
        with gc_paused():
            if type(T) is nx.Graph:
                _fill_plain_graph(T, self.nodes, self.node_data, edges)
            else:
                T.add_nodes_from(self.nodes if self.node_data is None else zip(self.nodes, self.node_data))
                T.add_edges_from(edges)
        return T

    def to_networkx(self) -> nx.Graph:
        """The graph as NetworkX's own class (the class it was converted from)."""
        every = np.arange(self.number_of_edges())
        columns = [self.node_objects(self.u), self.node_objects(self.v)]
        if self.multigraph:
            columns.append(self.edge_keys(every))
        columns.append(self.edge_data(every))
        return self.new_graph(zip(*columns))


def _fill_plain_graph(T: nx.Graph, nodes: list, node_data: list | None, edges: Iterable[tuple]) -> None:
    """What add_nodes_from and add_edges_from do to an empty nx.Graph, without their
    per-item checks: each node's attribute dict copied, each edge's data dict copied
    once and shared by both directions, neighbours in the order edges arrive."""
    attributes = repeat((), len(nodes)) if node_data is None else node_data
    T._node.update(zip(nodes, map(dict, attributes)))
    adj = T._adj
    adj.update(zip(nodes, map(dict, repeat((), len(nodes)))))
    for u, v, data in edges:
        copy = dict(data)
        adj[u][v] = copy
        adj[v][u] = copy


def is_nan(x: Any) -> bool:
    try:
        return math.isnan(x)
    except TypeError:
        return False
