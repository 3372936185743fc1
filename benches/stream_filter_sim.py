"""Issue 21's streaming under a memory cap, simulated on the host: how many edges (and
solves) each way of streaming costs, with the forest checked against the whole graph's.

- carried (today's GPU path): each partition solves the forest F carried so far together
  with the next P edges of the list, so F (up to n - 1 edges) is solved again per
  partition.
- filtered: each next chunk (P / 4 edges) is first filtered against F: an edge whose
  ends are joined in F by edges all lighter than it is the heaviest on a cycle and in no
  minimum spanning forest, so it is dropped. The test uses F's component labels at B
  weight thresholds (labels_b of the F edges lighter than t_b; an edge of weight w is
  dropped when labels_b agree at its ends for the largest t_b <= w). Survivors gather in
  the room a partition has (P + n - 1 edges) and are solved with F only when it fills.
  Thresholds: quantiles 2^-1 .. 2^-B of a 4096-edge sample of the whole list (fixed for
  the run, `--thresholds sample`), or B quantiles of F's weights after each solve
  (`--thresholds forest`).

The forests are the library's CPU tier's (one thread); the answer is compared edge for
edge with the whole graph's forest at the end of each scheme.

Usage:
    GPUMST_LIBRARY=target/release/libgpumst.so PYTHONPATH=bindings/python/src \\
        python3 benches/stream_filter_sim.py GRAPH [--partitions 38] [--buckets 8]
        [--thresholds sample|forest]
(GRAPH: any file gpumst reads, e.g. `gpumst generate random --vertices 65536 --edges
4194304 --out rand16.gmst` or `gpumst generate rmat --scale 16 --edge-factor 64 --out
rmat16.gmst`; 38 partitions is what a 4x cap made of the random 2^22 / 2^28 graph on
the H200, see docs/performance-log.md.)
"""

import argparse

import numpy as np

import gpumst

parser = argparse.ArgumentParser()
parser.add_argument("graph")
parser.add_argument("--partitions", type=int, default=38)
parser.add_argument("--buckets", type=int, default=8)
parser.add_argument("--thresholds", choices=("sample", "forest"), default="sample")
args = parser.parse_args()

ctx = gpumst.Context(backend="cpu", threads=1)
g = gpumst.load_graph(args.graph)
n, u, v = g.num_vertices, np.asarray(g.u), np.asarray(g.v)
w = np.asarray(g.weights).astype(np.uint64)
m = len(u)
ids = np.arange(m, dtype=np.uint64)
truth = np.asarray(ctx.minimum_spanning_forest(u, v, w, num_vertices=n).edges, dtype=np.uint64)
part = m // args.partitions
room = part + n - 1  # a partition's edges: the largest carried forest and P new ones
sample = w[np.random.default_rng(1).integers(0, m, 4096)]
EMPTY = (u[:0], v[:0], w[:0], ids[:0])


def solve(edges):
    """The forest of the given edges (u, v, w, id), as the same four arrays."""
    eu, ev, ew, _ids = edges
    # Ties in weight are broken by list position, as the library breaks them by id.
    chosen = ctx.minimum_spanning_forest(eu, ev, ew, num_vertices=n).edges
    return tuple(a[chosen] for a in edges)


def check(forest, scheme):
    assert np.array_equal(np.sort(forest[3]), truth), f"{scheme}: not the whole graph's forest"


def carried():
    forest, solved, solves = EMPTY, 0, 0
    for start in range(0, m, part):
        rows = slice(start, min(m, start + part))
        edges = tuple(np.concatenate([f, a[rows]]) for f, a in zip(forest, (u, v, w, ids)))
        solved, solves = solved + len(edges[0]), solves + 1
        forest = solve(edges)
    check(forest, "carried")
    return solves, solved, 1.0


def thresholds_for(forest):
    b = args.buckets
    if args.thresholds == "sample":
        return np.unique(np.quantile(sample, [2.0 ** -(k + 1) for k in range(b)]).astype(np.uint64))
    if len(forest[2]) == 0:
        return np.zeros(0, np.uint64)
    return np.unique(np.quantile(forest[2], np.linspace(0, 1, b + 1)[1:]).astype(np.uint64) + 1)


def labels_at(forest, thresholds):
    """Per threshold t, the component labels of the forest's edges lighter than t."""
    return [
        ctx.minimum_spanning_forest(forest[0][light], forest[1][light], num_vertices=n, labels=True).labels
        for light in (forest[2] < t for t in thresholds)
    ]


def filtered():
    forest, solved, solves, kept = EMPTY, 0, 0, 0
    pending, held = [], 0
    thresholds, labels = np.zeros(0, np.uint64), []
    chunk = max(1, part // 4)
    for start in range(0, m, chunk):
        rows = slice(start, min(m, start + chunk))
        cu, cv, cw, cid = u[rows], v[rows], w[rows], ids[rows]
        bucket = np.searchsorted(thresholds, cw, side="right") - 1  # the largest t_b <= w
        drop = np.zeros(len(cu), bool)
        for b, lb in enumerate(labels):
            at = bucket == b
            drop[at] = lb[cu[at]] == lb[cv[at]]
        survivors = tuple(a[~drop] for a in (cu, cv, cw, cid))
        kept += len(survivors[0])
        pending.append(survivors)
        held += len(survivors[0])
        if len(forest[0]) + held + chunk > room or start + chunk >= m:
            edges = tuple(np.concatenate([forest[k]] + [p[k] for p in pending]) for k in range(4))
            solved, solves = solved + len(edges[0]), solves + 1
            forest = solve(edges)
            pending, held = [], 0
            thresholds = thresholds_for(forest)
            labels = labels_at(forest, thresholds)
    check(forest, "filtered")
    return solves, solved, kept / m


print(f"{args.graph}: n={n} m={m}, {args.partitions} partitions of {part} edges")
for name, scheme in (
    ("carried", carried),
    (f"filtered, {args.buckets} thresholds ({args.thresholds})", filtered),
):
    solves, solved, kept = scheme()
    print(f"  {name}: {solves} solves, {solved / m:.2f} x m edges solved, {kept:.3f} of the edges kept")
