"""The NetworkX backend: for random graphs of every kind, each function through
``backend="gpumst"`` returns what NetworkX's own code returns — the same edges, in the
same order, with the same attribute objects — or declines (NotImplementedError) where it
cannot be exact, and NetworkX then falls back to its own code."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

nx = pytest.importorskip("networkx", minversion="3.5")

from gpumst.networkx import GpumstGraph, backend_interface, get_info  # noqa: E402
from gpumst.networkx._mst import calls  # noqa: E402

ALGORITHMS = ["kruskal", "prim", "boruvka"]


@pytest.fixture(autouse=True)
def no_conversion_cache():
    """Each call converts afresh (test_cached_conversion covers the cache)."""
    saved = nx.config.cache_converted_graphs
    nx.config.cache_converted_graphs = False
    yield
    nx.config.cache_converted_graphs = saved


def random_graph(rng, *, multigraph=False, labels="int", weights="distinct", n=None, m=None):
    n = int(rng.integers(1, 40)) if n is None else n
    m = int(rng.integers(0, 3 * n)) if m is None else m
    G = nx.MultiGraph() if multigraph else nx.Graph()
    names = {
        "int": list(range(n)),
        "shuffled": [int(x) for x in rng.permutation(n)],
        "str": [f"v{x}" for x in rng.permutation(n)],
        "mixed": [x if x % 2 else f"s{x}" for x in range(n)],
    }[labels]
    G.add_nodes_from((x, {"color": i % 3}) for i, x in enumerate(names))
    G.graph["name"] = "random"
    distinct = [float(x) for x in rng.permutation(10 * m + 1)[:m]]
    for i in range(m):
        a, b = names[int(rng.integers(n))], names[int(rng.integers(n))]
        attrs = {"label": i}
        if weights == "distinct":
            attrs["weight"] = int(distinct[i])
        elif weights == "float":
            attrs["weight"] = distinct[i] / 8 - 3
        elif weights == "ties":
            attrs["weight"] = int(rng.integers(0, 4))
        elif weights == "mixed":
            attrs["weight"] = int(distinct[i]) if i % 2 else distinct[i] + 0.5
        elif weights == "special":
            attrs["weight"] = [-np.inf, np.inf, -0.0, 0.0, -2.5, 1e300][int(rng.integers(6))]
        elif weights == "nan":
            attrs["weight"] = float("nan") if rng.random() < 0.1 else distinct[i]
        elif weights == "missing":
            if rng.random() < 0.5:
                attrs["weight"] = int(rng.integers(0, 3))
        G.add_edge(a, b, **attrs)
    return G


def run(function, *args, backend, **kwargs):
    """The call's outcome: ("ok", result materialised) or ("error", type, message)."""
    try:
        result = function(*args, backend=backend, **kwargs)
        if not isinstance(result, nx.Graph):
            result = list(result)
        return ("ok", result)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - errors must match too
        return ("error", type(exc), str(exc))


def assert_same_graph(expected, got):
    assert type(got) is type(expected)
    assert got.graph == expected.graph
    assert list(got.nodes(data=True)) == list(expected.nodes(data=True))
    if expected.is_multigraph():
        assert list(got.edges(keys=True, data=True)) == list(expected.edges(keys=True, data=True))
    else:
        assert list(got.edges(data=True)) == list(expected.edges(data=True))
    assert got._adj == expected._adj


def assert_same(expected, got):
    assert got[0] == expected[0], (expected, got)
    if expected[0] == "error":
        assert got[1:] == expected[1:]
    elif isinstance(expected[1], nx.Graph):
        assert_same_graph(expected[1], got[1])
    else:
        assert got[1] == expected[1]
        # The very attribute dicts of the input graph, as NetworkX yields them.
        for e, g in zip(expected[1], got[1]):
            if e and isinstance(e[-1], dict):
                assert g[-1] is e[-1]


def compare(function, G, *args, must_run=False, **kwargs):
    """Runs `function` on NetworkX and on gpumst; returns whether gpumst ran it."""
    expected = run(function, G, *args, backend="networkx", **kwargs)
    try:
        got = run(function, G, *args, backend="gpumst", **kwargs)
    except NotImplementedError:
        assert not must_run, f"gpumst declined {function.__name__}{args}{kwargs}"
        return False
    assert_same(expected, got)
    return True


def edge_variants(G):
    flags = [(True, True), (True, False), (False, True), (False, False)]
    return flags if G.is_multigraph() else flags[::2]


@pytest.mark.parametrize("labels", ["int", "shuffled", "str", "mixed"])
@pytest.mark.parametrize("weights", ["distinct", "float", "ties", "mixed", "special", "missing"])
@pytest.mark.parametrize("multigraph", [False, True])
def test_every_function_equals_networkx(labels, weights, multigraph):
    rng = np.random.default_rng(hash((labels, weights, multigraph)) % 2**32)
    ran = 0
    for _ in range(6):
        G = random_graph(rng, multigraph=multigraph, labels=labels, weights=weights)
        for algorithm in ALGORITHMS:
            # Kruskal always runs on gpumst; Prim and Borůvka where the forest is unique.
            must = algorithm == "kruskal"
            for function in (nx.minimum_spanning_edges, nx.maximum_spanning_edges):
                for keys, data in edge_variants(G):
                    ran += compare(function, G, algorithm=algorithm, keys=keys, data=data, must_run=must)
            for function in (nx.minimum_spanning_tree, nx.maximum_spanning_tree):
                ran += compare(function, G, algorithm=algorithm, must_run=must)
    assert ran > 0


@pytest.mark.parametrize("multigraph", [False, True])
def test_prim_and_boruvka_run_on_gpumst_when_the_forest_is_unique(multigraph):
    rng = np.random.default_rng(5)
    before = calls.copy()
    for _ in range(20):
        G = random_graph(rng, multigraph=multigraph, weights="distinct", labels="str")
        for algorithm in ("prim", "boruvka"):
            if multigraph and algorithm == "boruvka":
                # NetworkX's Borůvka refuses multigraphs; so does the backend, alike.
                compare(nx.minimum_spanning_edges, G, algorithm=algorithm, must_run=True)
                continue
            compare(nx.minimum_spanning_edges, G, algorithm=algorithm, must_run=True)
            compare(nx.maximum_spanning_tree, G, algorithm=algorithm, must_run=True)
    assert (calls - before)["minimum_spanning_edges[prim]"] == 20


def test_ties_that_leave_prim_a_choice_are_declined_and_fall_back():
    # A triangle of equal weights: three minimum spanning trees.
    G = nx.Graph([(0, 1, {"weight": 1}), (1, 2, {"weight": 1}), (0, 2, {"weight": 1})])
    with pytest.raises(NotImplementedError):
        nx.minimum_spanning_tree(G, algorithm="prim", backend="gpumst")
    saved = nx.config.backend_priority.algos, nx.config.backend_priority.generators
    try:
        nx.config.backend_priority.algos = ["gpumst"]
        nx.config.backend_priority.generators = ["gpumst"]
        got = nx.minimum_spanning_tree(G, algorithm="prim")
        expected = nx.minimum_spanning_tree(G, algorithm="prim", backend="networkx")
        assert_same_graph(expected, got)
        # Kruskal takes the backend through the same configuration.
        before = calls["minimum_spanning_tree[kruskal]"]
        nx.minimum_spanning_tree(G)
        assert calls["minimum_spanning_tree[kruskal]"] == before + 1
    finally:
        nx.config.backend_priority.algos, nx.config.backend_priority.generators = saved


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("multigraph", [False, True])
def test_nan_weights_raise_or_are_ignored_as_networkx_does(algorithm, multigraph):
    rng = np.random.default_rng(9)
    ran = 0
    for _ in range(25):
        G = random_graph(rng, multigraph=multigraph, weights="nan", labels="shuffled")
        if rng.random() < 0.3:
            G.add_edge(*list(G)[:1] * 2, weight=float("nan"))  # a NaN self-loop
        for ignore_nan in (False, True):
            for function in (nx.minimum_spanning_edges, nx.maximum_spanning_edges):
                ran += compare(function, G, algorithm=algorithm, ignore_nan=ignore_nan)
            ran += compare(nx.minimum_spanning_tree, G, algorithm=algorithm, ignore_nan=ignore_nan)
    assert ran > 0


def test_errors_are_networkx_errors():
    G = random_graph(np.random.default_rng(1), weights="distinct")
    compare(nx.minimum_spanning_tree, G, algorithm="random")
    D = nx.DiGraph([(0, 1, {"weight": 1})])
    for function in (nx.minimum_spanning_tree, nx.maximum_spanning_tree):
        compare(function, D)
    with pytest.raises(nx.NetworkXNotImplemented):
        list(nx.minimum_spanning_edges(D, backend="gpumst"))
    M = nx.MultiGraph([(0, 1), (0, 1)])
    compare(nx.minimum_spanning_edges, M, algorithm="boruvka")


@pytest.mark.parametrize("weight", ["text", Decimal("1.5"), Fraction(1, 3), 2**70 + 1])
def test_weights_gpumst_cannot_hold_exactly_are_declined(weight):
    G = nx.Graph([(0, 1, {"weight": weight}), (1, 2, {"weight": 1.5})])
    with pytest.raises(NotImplementedError):
        list(nx.minimum_spanning_edges(G, backend="gpumst"))


def test_other_weight_attributes_and_defaults():
    rng = np.random.default_rng(4)
    for _ in range(10):
        G = random_graph(rng, weights="missing")
        for _, _, d in G.edges(data=True):
            d["distance"] = int(rng.integers(0, 5))
        for weight in ("distance", "weight", "absent", None):
            compare(nx.minimum_spanning_tree, G, weight=weight, must_run=True)
            compare(nx.maximum_spanning_edges, G, weight=weight, data=False, must_run=True)


def test_partition_spanning_tree_and_iterator():
    EdgePartition = nx.algorithms.tree.mst.EdgePartition
    rng = np.random.default_rng(8)
    for _ in range(15):
        G = random_graph(rng, weights="ties", n=12, m=30)
        for _, _, d in G.edges(data=True):
            d["partition"] = [EdgePartition.OPEN, EdgePartition.INCLUDED, EdgePartition.EXCLUDED][int(rng.integers(3))]
        for minimum in (True, False):
            compare(nx.partition_spanning_tree, G, minimum, must_run=True)
            compare(nx.algorithms.tree.mst.kruskal_mst_edges, G, minimum, partition="partition", must_run=True)


def test_subclasses_keep_their_class():
    class RoadGraph(nx.Graph):
        pass

    G = RoadGraph([(0, 1, {"weight": 2}), (1, 2, {"weight": 1}), (0, 2, {"weight": 3})])
    T = nx.minimum_spanning_tree(G, backend="gpumst")
    assert type(T) is RoadGraph
    compare(nx.minimum_spanning_tree, G, must_run=True)


def test_cached_conversion():
    nx.config.cache_converted_graphs = True
    G = random_graph(np.random.default_rng(2), weights="distinct", n=30, m=90)
    first = list(nx.minimum_spanning_edges(G, backend="gpumst"))
    cache = G.__networkx_cache__["backends"]["gpumst"]
    assert any(isinstance(g, GpumstGraph) for g in cache.values())
    with pytest.warns(UserWarning, match="cache"):
        again = list(nx.minimum_spanning_edges(G, backend="gpumst"))
    assert again == first
    G.add_edge(0, 1, weight=-5)  # mutating through NetworkX clears the cache
    assert not G.__networkx_cache__.get("backends", {}).get("gpumst")
    compare(nx.minimum_spanning_edges, G, must_run=True)


def test_converted_graphs_round_trip():
    for multigraph in (False, True):
        G = random_graph(np.random.default_rng(3), multigraph=multigraph, labels="str")
        B = backend_interface.convert_from_nx(
            G, preserve_edge_attrs=True, preserve_node_attrs=True, preserve_graph_attrs=True
        )
        assert B.number_of_nodes() == G.number_of_nodes() and B.number_of_edges() == G.number_of_edges()
        assert_same_graph(G, backend_interface.convert_to_nx(B))
        assert backend_interface.convert_to_nx(5) == 5


def test_backend_info():
    info = get_info()
    assert info["backend_name"] == "gpumst"
    for name in ("minimum_spanning_edges", "maximum_spanning_edges", "minimum_spanning_tree", "maximum_spanning_tree"):
        assert name in info["functions"]
        assert backend_interface.can_run(name, (), {}) is True
    assert isinstance(backend_interface.can_run("pagerank", (), {}), str)
    assert "gpumst" in nx.utils.backends.backends


def test_no_numpy_scalars_escape():
    G = random_graph(np.random.default_rng(6), weights="distinct", labels="int")
    for u, v, d in nx.minimum_spanning_edges(G, backend="gpumst"):
        assert type(u) is int and type(v) is int and isinstance(d, dict)


class Cycle:
    """A reference cycle that only the cyclic collector can free."""

    alive = 0

    def __init__(self):
        Cycle.alive += 1
        self.me = self

    def __del__(self):
        Cycle.alive -= 1


@pytest.fixture
def aging(monkeypatch):
    """Results of any size are moved to the oldest generation (normally only large
    ones are), so that small graphs take that path; returns the list of the
    ``gc.freeze`` calls made."""
    import gc

    from gpumst.networkx import _graph

    monkeypatch.setattr(_graph, "AGE_AFTER_OBJECTS", 0)
    freezes = []
    freeze = gc.freeze
    monkeypatch.setattr(gc, "freeze", lambda: (freezes.append(gc.get_freeze_count()), freeze()))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    return freezes


def test_aged_results_leave_the_collector_as_it_was(aging):
    import gc

    G = random_graph(np.random.default_rng(7), weights="distinct")
    Cycle.alive = 0
    young = Cycle()
    compare(nx.minimum_spanning_edges, G, must_run=True)
    compare(nx.minimum_spanning_tree, G, must_run=True)
    assert aging, "the results were not aged"
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert any(o is young for o in gc.get_objects(generation=2)), "the caller's objects are aged too"
    del young
    gc.collect()
    assert Cycle.alive == 0, "the caller's cycles must still be collected"
    gc.disable()
    try:
        list(nx.minimum_spanning_edges(G, backend="gpumst"))
        assert not gc.isenabled(), "a caller's disabled collector must stay disabled"
    finally:
        gc.enable()


def test_callers_frozen_objects_stay_frozen(aging):
    import gc

    G = random_graph(np.random.default_rng(8), weights="distinct")
    keep = [Cycle() for _ in range(3)]
    gc.freeze()
    frozen = gc.get_freeze_count()
    aging.clear()
    try:
        compare(nx.minimum_spanning_edges, G, must_run=True)
        assert gc.get_freeze_count() == frozen and not aging
    finally:
        gc.unfreeze()
    del keep
