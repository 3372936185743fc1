"""gpumst: minimum spanning forests and the data-parallel primitives beneath them
(scan, segmented scan, arg-reductions) on a CUDA or OpenCL GPU found at run time, or on
all CPU cores.

The package carries its own libgpumst and calls it through the C API, releasing the GIL
while the library works.

- Arrays: :func:`minimum_spanning_forest` (edge lists), :func:`minimum_spanning_forest_csr`,
  :func:`load_graph` (graph files), :func:`scan`, :func:`segmented_scan`,
  :func:`argmin` / :func:`argmax`, :func:`segmented_argmin` / :func:`segmented_argmax`.
- scipy: ``gpumst.scipy.minimum_spanning_tree`` replaces
  ``scipy.sparse.csgraph.minimum_spanning_tree`` (same arguments, same result).
- NetworkX: an installed backend, ``nx.minimum_spanning_tree(G, backend="gpumst")``.

Every function takes ``context=`` (a :class:`Context`); without it a module-wide
context opened with ``backend="auto"`` is used.
"""

from ._core import (
    ALGORITHMS,
    ArgResult,
    BackendUnavailable,
    Context,
    DeviceError,
    DeviceForest,
    Error,
    Forest,
    GraphFile,
    InternalError,
    InvalidArgument,
    InvalidGraph,
    OutOfMemory,
    SegmentedArgResult,
    argmax,
    argmin,
    default_context,
    info,
    load_graph,
    minimum_spanning_forest,
    minimum_spanning_forest_csr,
    scan,
    segmented_argmax,
    segmented_argmin,
    segmented_scan,
    version,
)
from ._device import DeviceArray

__version__ = "0.1.0"

__all__ = [
    "ALGORITHMS",
    "ArgResult",
    "BackendUnavailable",
    "Context",
    "DeviceArray",
    "DeviceError",
    "DeviceForest",
    "Error",
    "Forest",
    "GraphFile",
    "InternalError",
    "InvalidArgument",
    "InvalidGraph",
    "OutOfMemory",
    "SegmentedArgResult",
    "argmax",
    "argmin",
    "default_context",
    "info",
    "load_graph",
    "minimum_spanning_forest",
    "minimum_spanning_forest_csr",
    "scan",
    "segmented_argmax",
    "segmented_argmin",
    "segmented_scan",
    "version",
]
