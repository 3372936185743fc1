#!/usr/bin/env python3
"""Counts the work of the GPU tiers' edge-centric Borůvka (`auto`) under different
light-edge filters, on the host, to choose the filter without a GPU.

Each phase runs Borůvka rounds over the edges whose weights lie in its range, starting
from the trees the earlier phases built (as src/tier/gpu/msf.rs does); a round keeps the
edges between different trees, each tree takes its lightest, and the chosen edges join
trees. The work is counted in edge-rounds: the worklist lengths summed over all rounds.

    python3 tools/simulate_filter_phases.py GRAPH.egr

GRAPH.egr comes from `gpumst generate random|rmat ... --out GRAPH.egr` (int32 weights).
Needs numpy and scipy.
"""
import sys

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

# Filters to compare: upper ends of the light phases, in multiples of n.
FILTERS = [[], [2], [1], [0.5, 1, 2], [0.5, 1, 2, 4], [0.25, 0.5, 1, 2, 4]]
SAMPLE = 4096


def load_egr(path):
    raw = np.fromfile(path, dtype=np.int32)
    n, m = int(raw[0]), int(raw[1])
    offsets = raw[2 : 2 + n + 1]
    targets = raw[3 + n : 3 + n + m]
    weights = raw[3 + n + m : 3 + n + 2 * m]
    if len(weights) != m:
        sys.exit(f"{path}: no weights")
    sources = np.repeat(np.arange(n), np.diff(offsets))
    once = sources < targets  # one of the two arcs of each edge, self-loops dropped
    return n, sources[once], targets[once], weights[once].astype(np.int64)


def phase(n, u, v, order, selected, label):
    """Borůvka rounds over the selected edges; returns the new labels and edge-rounds."""
    worklist = np.nonzero(selected)[0]
    edge_rounds = rounds = 0
    while True:
        ru, rv = label[u[worklist]], label[v[worklist]]
        apart = ru != rv
        worklist, ru, rv = worklist[apart], ru[apart], rv[apart]
        if len(worklist) == 0:
            return label, edge_rounds, rounds
        edge_rounds += len(worklist)
        rounds += 1
        best = np.full(n, np.iinfo(np.int64).max)
        np.minimum.at(best, ru, order[worklist])
        np.minimum.at(best, rv, order[worklist])
        chosen = (best[ru] == order[worklist]) | (best[rv] == order[worklist])
        joins = coo_matrix(
            (np.ones(chosen.sum()), (ru[chosen], rv[chosen])), shape=(n, n)
        )
        label = connected_components(joins, directed=False)[1][label]


def main():
    n, u, v, w = load_egr(sys.argv[1])
    m = len(u)
    order = w * m + np.arange(m)  # (weight, position): a strict order
    sample = np.sort(w[:: max(1, m // SAMPLE)][:SAMPLE])
    print(f"{sys.argv[1]}: {n} vertices, {m} edges")
    for filt in FILTERS:
        label, lowest = np.arange(n), -1
        total = rounds = 0
        for f in filt + [None]:
            highest = (
                sample[min(len(sample) - 1, int(len(sample) * f * n) // m)]
                if f is not None
                else np.iinfo(np.int64).max
            )
            selected = (w > lowest) & (w <= highest)
            label, t, r = phase(n, u, v, order, selected, label)
            total, rounds, lowest = total + t, rounds + r, highest
        print(f"light phases up to {filt} x n: {total} edge-rounds in {rounds} rounds")


if __name__ == "__main__":
    main()
