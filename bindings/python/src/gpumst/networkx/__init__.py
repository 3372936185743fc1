"""gpumst as a NetworkX backend (NetworkX >= 3.5).

Installed with the package; NetworkX finds it through the ``networkx.backends`` and
``networkx.backend_info`` entry points::

    import networkx as nx
    T = nx.minimum_spanning_tree(G, backend="gpumst")
    nx.config.backend_priority = ["gpumst"]          # or for every call

It implements ``minimum_spanning_edges``, ``maximum_spanning_edges``,
``minimum_spanning_tree``, ``maximum_spanning_tree``, ``kruskal_mst_edges``,
``prim_mst_edges``, ``boruvka_mst_edges`` and ``partition_spanning_tree`` with the
results NetworkX gives, edge for edge and in its order (see ``_mst``). What it cannot
reproduce exactly raises NotImplementedError, so that NetworkX falls back to its own
implementation (automatically when the backend was chosen through
``nx.config.backend_priority``; with ``backend="gpumst"`` NetworkX reports the error):
weights that are not int/float numbers held exactly in 64 bits, and Prim or Borůvka
on graphs whose equal weights leave the forest ambiguous.

The tier is the package's default context (``GPUMST_BACKEND`` forces one).
"""

from __future__ import annotations

import atexit
import json
import os
from typing import Any

import networkx as nx

from ._graph import GpumstGraph, Unsupported
from ._mst import FUNCTIONS, calls

__all__ = ["GpumstGraph", "Unsupported", "backend_interface", "get_info"]


def get_info() -> dict:
    """What NetworkX shows about this backend (the ``networkx.backend_info`` entry point)."""
    docs = (
        "Kruskal (the default algorithm) runs on gpumst on any graph with int or float "
        "weights; Prim and Borůvka run on gpumst when equal weights leave only one "
        "forest, and raise NotImplementedError otherwise so NetworkX can fall back."
    )
    return {
        "backend_name": "gpumst",
        "project": "gpumst",
        "package": "gpumst",
        "short_summary": "Minimum spanning forests on CUDA, OpenCL or all CPU cores.",
        "functions": {name: {"additional_docs": docs} for name in FUNCTIONS},
        "default_config": {},
    }


class BackendInterface:
    """The object the ``networkx.backends`` entry point names."""

    def __init__(self) -> None:
        for name, function in FUNCTIONS.items():
            setattr(self, name, function)

    @staticmethod
    def convert_from_nx(
        G: nx.Graph,
        edge_attrs: Any = None,
        node_attrs: Any = None,
        preserve_edge_attrs: bool = False,
        preserve_node_attrs: bool = False,
        preserve_graph_attrs: bool = False,
        name: str | None = None,
        graph_name: str | None = None,
        **ignored: Any,
    ) -> GpumstGraph:
        """A NetworkX graph's structure as arrays. Edge attribute dicts are referenced
        (not copied), so results carry NetworkX's own objects; node and graph attributes
        are kept when asked for."""
        return GpumstGraph(
            G,
            node_attrs=bool(preserve_node_attrs or node_attrs),
            graph_attrs=bool(preserve_graph_attrs),
        )

    @staticmethod
    def convert_to_nx(obj: Any, *, name: str | None = None) -> Any:
        """Results are NetworkX graphs or plain Python objects already; a gpumst graph
        goes back to the NetworkX class it came from."""
        if isinstance(obj, GpumstGraph):
            return obj.to_networkx()
        return obj

    @staticmethod
    def can_run(name: str, args: tuple, kwargs: dict) -> bool | str:
        # Whether a call can be done exactly depends on the weights, read during the
        # call: it raises NotImplementedError (Unsupported) then.
        return name in FUNCTIONS or f"gpumst does not implement {name}"

    @staticmethod
    def should_run(name: str, args: tuple, kwargs: dict) -> bool:
        return True


backend_interface = BackendInterface()


def _write_call_log() -> None:
    path = os.environ.get("GPUMST_NX_CALL_LOG")
    if path:
        with open(path, "w") as f:
            json.dump(dict(calls), f, indent=1, sort_keys=True)


# For counting, in NetworkX's own test suite, the calls that really ran on gpumst.
if os.environ.get("GPUMST_NX_CALL_LOG"):
    atexit.register(_write_call_log)
