#!/usr/bin/env python3
"""gpumst from Python beside the Python MST tools, in one run, on the same graphs.

    cargo build --release && pip install ./bindings/python -r benches/requirements.txt
    python3 benches/python_vs_peers.py [--threads 2] [--repeat 5] [--quick]

Graphs: ../shared/data/NY.gr.xz and BAY.gr.xz (when present), RMAT scale 20 edge factor
16 and a 1024x1024 grid from `gpumst generate` (seed 1, integer weights 1..10^6), each
cleaned once as in benches/msf_vs_peers.py so every tool sees the same simple graph; and
for the NetworkX marks `nx.gnm_random_graph(250000, 1000000, seed=1)` with integer
weights 1..10^6.

Per graph: the gpumst CLI's compute time (`gpumst msf --json --repeat`) and the array API
(`gpumst.minimum_spanning_forest` on the same arrays and weight type), taking turns for
five rounds (the median round of each is reported), gpumst.scipy's
drop-in, scipy.sparse.csgraph.minimum_spanning_tree, rustworkx.minimum_spanning_edges,
python-igraph's spanning_tree, and, for graphs of at most 1M edges, NetworkX's own
minimum_spanning_tree beside `backend="gpumst"` (conversion and result graph included,
then with the converted graph cached). Times are medians of --repeat warm runs (a tool
whose first run takes over 5 s runs once), each after gc.collect(), timed around the call
alone (inputs built beforehand, results released after). Peak memory: the growth of the
process's peak resident set during the call (Linux: VmHWM reset through clear_refs).
Every tool's forest weight is printed; they must agree (scipy drops zero-weight edges).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from msf_vs_peers import GPUMST, prepare, road_graphs, run_gpumst  # noqa: E402

try:
    import igraph
    import networkx as nx
    import numpy as np
    import rustworkx
    import scipy.sparse
    import scipy.sparse.csgraph

    import gpumst
    import gpumst.scipy
    from gpumst.networkx import backend_interface
except ImportError as e:
    sys.exit(f"python_vs_peers: {e}: run `pip install ./bindings/python -r benches/requirements.txt` first")

NX_MAX_EDGES = 1_000_000


def rss_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure(repeat: int, call, collect: bool = True):
    """(median ms, peak MiB growth of the first run, last result). With `collect`, a
    gc.collect() precedes each run (so no tool pays for another's garbage); without,
    runs follow each other as the CLI's --repeat runs do."""
    times, peak, result = [], None, None
    for i in range(repeat):
        result = None
        if collect:
            gc.collect()
        before = rss_kib("VmRSS")
        tracked = reset_peak()
        t = time.perf_counter()
        result = call()
        times.append((time.perf_counter() - t) * 1e3)
        if i == 0 and tracked:
            peak = max(rss_kib("VmHWM") - before, 0) / 1024
        if times[0] > 5000:
            break
    times.sort()
    return times[len(times) // 2], peak, result


class Table:
    def __init__(self):
        print(f"{'graph':<9} {'m':>9}  {'tool':<34} {'ms':>10} {'peak MiB':>9}  {'forest weight':>15}  note")

    def row(self, graph, m, tool, ms, peak, weight, note=""):
        peak_s = f"{peak:.0f}" if peak is not None else "-"
        print(f"{graph:<9} {m:>9}  {tool:<34} {ms:>10.1f} {peak_s:>9}  {weight:>15}  {note}")
        sys.stdout.flush()


def graphs(quick: bool):
    scale, side = (14, 128) if quick else (20, 1024)
    yield from road_graphs()
    yield f"rmat{scale}", ["rmat", "--scale", str(scale), "--edge-factor", "16"]
    yield f"grid{side}", ["grid", "--rows", str(side), "--cols", str(side)]


def networkx_graph(n, u, v, w):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(zip(u.tolist(), v.tolist(), w.tolist()))
    return G


def tree_weight(T):
    return sum(d["weight"] for _, _, d in T.edges(data=True))


def compare_networkx(table, name, G, m, repeat, marks):
    """NetworkX's own MST beside the gpumst backend on the same nx.Graph (the marks, if
    a list is given, are recorded into it)."""
    saved = nx.config.cache_converted_graphs
    nx.config.cache_converted_graphs = False
    nx_ms, nx_peak, T = measure(min(repeat, 3), lambda: nx.minimum_spanning_tree(G, backend="networkx"))
    table.row(name, m, "networkx minimum_spanning_tree", nx_ms, nx_peak, tree_weight(T))
    ours_ms, ours_peak, T2 = measure(repeat, lambda: nx.minimum_spanning_tree(G, backend="gpumst"))
    same = T2._adj == T._adj
    table.row(
        name,
        m,
        "  backend=gpumst (with conversion)",
        ours_ms,
        ours_peak,
        tree_weight(T2),
        f"{nx_ms / ours_ms:.1f}x networkx; same tree: {same}",
    )
    nx.config.cache_converted_graphs = True
    nx.config.warnings_to_ignore.add("cache")
    nx.minimum_spanning_tree(G, backend="gpumst")  # converts once, into G's cache
    cached_ms, cached_peak, T3 = measure(repeat, lambda: nx.minimum_spanning_tree(G, backend="gpumst"))
    table.row(
        name,
        m,
        "  backend=gpumst (graph cached)",
        cached_ms,
        cached_peak,
        tree_weight(T3),
        f"{nx_ms / cached_ms:.1f}x networkx",
    )
    del T, T2, T3
    e_nx_ms, _, E = measure(min(repeat, 3), lambda: list(nx.minimum_spanning_edges(G, backend="networkx")))
    table.row(name, m, "networkx minimum_spanning_edges", e_nx_ms, None, sum(d["weight"] for _, _, d in E))
    B = backend_interface.convert_from_nx(
        G, preserve_edge_attrs=True, preserve_node_attrs=True, preserve_graph_attrs=True
    )
    list(nx.minimum_spanning_edges(B, backend="gpumst"))  # reads the weights once
    e_ms, e_peak, E2 = measure(repeat, lambda: list(nx.minimum_spanning_edges(B, backend="gpumst")))
    table.row(
        name,
        m,
        "  backend=gpumst, converted graph",
        e_ms,
        e_peak,
        sum(d["weight"] for _, _, d in E2),
        f"{e_nx_ms / e_ms:.1f}x networkx; same edges: {E2 == E}",
    )
    nx.config.cache_converted_graphs = saved
    if marks is not None:  # the marks are set on the 1M-edge graph
        marks.append(
            (f"{name}: nx.minimum_spanning_tree(backend='gpumst') >= 3x networkx", nx_ms / ours_ms >= 3 and same)
        )
        marks.append(
            (f"{name}: minimum_spanning_edges on a converted graph >= 50x networkx", e_nx_ms / e_ms >= 50 and E2 == E)
        )


def bench_graph(table, marks, name, source, args, ctx):
    """Every tool on one graph (its arrays and objects live only in this call)."""
    n, u, v, w, path = prepare(name, source)
    m = len(u)
    # The .egr file holds int32 weights: give every tool those numbers.
    u32, v32, w32 = u.astype(np.uint32), v.astype(np.uint32), w.astype(np.int32)
    # The CLI (its own process) and the array API take turns, five rounds, so both
    # see the same machine states (this machine's speed swings up to 2x for seconds).
    cli_runs, api_runs = [], []
    for _ in range(5):
        argv = ["msf", str(path), "--json", "--threads", str(args.threads), "--repeat", str(args.repeat)]
        cli = json.loads(run_gpumst(argv, 600))
        cli_runs.append(cli["timings_ms"]["compute"])
        api_ms, api_peak, f = measure(
            args.repeat, lambda: gpumst.minimum_spanning_forest(u32, v32, w32, num_vertices=n, context=ctx), False
        )
        api_runs.append(api_ms)
    cli_ms, api_ms = sorted(cli_runs)[2], sorted(api_runs)[2]
    table.row(name, m, "gpumst CLI (compute)", cli_ms, None, cli["total_weight"])
    note = f"{api_ms / cli_ms:.2f}x the CLI"
    table.row(name, m, "gpumst.minimum_spanning_forest", api_ms, api_peak, f.total_weight, note)
    marks.append((f"{name}: array API within 10% of the CLI's compute", api_ms <= 1.10 * cli_ms))
    csr = scipy.sparse.csr_matrix((w.astype(np.float64), (u, v)), shape=(n, n))
    scipy_ms, scipy_peak, T = measure(args.repeat, lambda: scipy.sparse.csgraph.minimum_spanning_tree(csr))
    note = f"gpumst array API {scipy_ms / api_ms:.1f}x faster"
    table.row(name, m, "scipy minimum_spanning_tree", scipy_ms, scipy_peak, int(T.sum()), note)
    if name.startswith("rmat"):
        marks.append((f"{name}: array API >= 5x scipy", scipy_ms / api_ms >= 5))
    drop_ms, drop_peak, T2 = measure(args.repeat, lambda: gpumst.scipy.minimum_spanning_tree(csr, context=ctx))
    same = (T2 != T).nnz == 0
    note = f"{scipy_ms / drop_ms:.1f}x scipy; same matrix: {same}"
    table.row(name, m, "  gpumst.scipy drop-in", drop_ms, drop_peak, int(T2.sum()), note)
    marks.append((f"{name}: gpumst.scipy returns scipy's matrix", same))
    g = rustworkx.PyGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(list(zip(u.tolist(), v.tolist(), w.astype(np.float64).tolist())))
    rx_ms, rx_peak, E = measure(args.repeat, lambda: rustworkx.minimum_spanning_edges(g, weight_fn=float))
    note = f"gpumst {rx_ms / api_ms:.1f}x faster"
    table.row(name, m, "rustworkx minimum_spanning_edges", rx_ms, rx_peak, int(sum(e[2] for e in E)), note)
    ig = igraph.Graph(n=n, edges=np.stack([u, v], axis=1).tolist())
    weights = w.astype(np.float64).tolist()
    ig_ms, ig_peak, tree = measure(args.repeat, lambda: ig.spanning_tree(weights=weights, return_tree=False))
    note = f"gpumst {ig_ms / api_ms:.1f}x faster"
    table.row(name, m, "igraph spanning_tree", ig_ms, ig_peak, int(sum(w[i] for i in tree)), note)
    if m <= NX_MAX_EDGES:
        compare_networkx(table, name, networkx_graph(n, u, v, w), m, args.repeat, None)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="small graphs (a smoke run)")
    p.add_argument("--graphs", default="NY,BAY,rmat,grid,gnm", help="which graphs (default: all)")
    args = p.parse_args()
    chosen = set(args.graphs.split(","))
    if not GPUMST.exists():
        sys.exit("python_vs_peers: build first: cargo build --release")
    ctx = gpumst.Context(backend="cpu", threads=args.threads)
    print(
        f"# gpumst {gpumst.version()} ({ctx.device_name}); numpy {np.__version__}, scipy {scipy.__version__}, "
        f"networkx {nx.__version__}, rustworkx {rustworkx.__version__}, igraph {igraph.__version__}"
    )
    table = Table()
    marks = []
    for name, source in graphs(args.quick):
        if name.rstrip("0123456789") in chosen:
            bench_graph(table, marks, name, source, args, ctx)
    if "gnm" in chosen:
        gnm_graph(table, marks, args)
    print()
    for what, ok in marks:
        print(f"{'met ' if ok else 'MISS'}  {what}")


def gnm_graph(table, marks, args):
    """The NetworkX marks' graph: G(n, m) with 250,000 nodes and 1,000,000 edges."""
    n, m = (25_000, 100_000) if args.quick else (250_000, 1_000_000)
    G = nx.gnm_random_graph(n, m, seed=1)
    rng = random.Random(2)
    for _, _, d in G.edges(data=True):
        d["weight"] = rng.randint(1, 1_000_000)
    compare_networkx(table, f"gnm{m // 1000}k", G, m, args.repeat, marks)


if __name__ == "__main__":
    main()
