"""Shared fixtures: a context per tier that opens on this machine (the others are
skipped, saying why), a sequential Kruskal reference, and paths to sample data."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import gpumst

ROOT = Path(__file__).resolve().parents[3]
TEST_DATA = ROOT / "tests" / "data"
# The road graphs with known answers: ../shared/data beside the repository, or where
# GPUMST_DATA_DIR says (the device machine carries them elsewhere).
SHARED_DATA = Path(os.environ.get("GPUMST_DATA_DIR") or ROOT.parent / "shared" / "data")
TIERS = ["cpu", "opencl", "cuda"]

_contexts: dict[str, gpumst.Context | str] = {}


def open_tier(tier: str) -> gpumst.Context:
    """A context forced to `tier` (opened once per session), or a skip with the reason."""
    if tier not in _contexts:
        try:
            _contexts[tier] = gpumst.Context(backend=tier)
        except gpumst.BackendUnavailable as exc:
            _contexts[tier] = str(exc)
    found = _contexts[tier]
    if isinstance(found, str):
        pytest.skip(f"{tier} tier unavailable here: {found}")
    return found


@pytest.fixture(params=TIERS)
def ctx(request) -> gpumst.Context:
    """Every tier this machine has (CPU always; OpenCL through PoCL in CI)."""
    return open_tier(request.param)


@pytest.fixture
def cpu() -> gpumst.Context:
    return open_tier("cpu")


def kruskal(n: int, u, v, w=None, maximum: bool = False) -> np.ndarray:
    """Sequential Kruskal under (weight, edge id) — (weight descending, id) for a
    maximum forest — with a plain union-find: the reference forest, ids ascending."""
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    m = u.shape[0]
    if w is None:
        order = np.arange(m)
    else:
        w = np.asarray(w)
        # Python's sort is stable; -0.0 == 0.0 as for gpumst.
        values = w.tolist()
        order = sorted(range(m), key=lambda e: values[e], reverse=maximum)
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    chosen = []
    for e in order:
        a, b = find(int(u[e])), find(int(v[e]))
        if a != b:
            parent[a] = b
            chosen.append(e)
    return np.array(sorted(chosen), dtype=np.uint64)


def random_graph(rng: np.random.Generator, n: int, m: int):
    """u, v of m random edges over n vertices (self-loops and parallel edges included)."""
    return rng.integers(0, n, m), rng.integers(0, n, m)
