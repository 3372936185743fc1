"""Several Python threads on one context: results stay correct, and the GIL is released
while the library works (another thread runs Python code during a long call)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from conftest import kruskal, random_graph

import gpumst


def test_threads_share_one_context(ctx):
    rng = np.random.default_rng(21)
    graphs = []
    for _ in range(8):
        u, v = random_graph(rng, 300, 1200)
        w = rng.integers(0, 100, 1200).astype(np.uint32)
        graphs.append((u, v, w, kruskal(300, u, v, w)))
    x = rng.integers(0, 1000, 100_000).astype(np.int64)
    expected_scan = np.cumsum(x)

    def work(i):
        u, v, w, expected = graphs[i % len(graphs)]
        algorithm = ["auto", "boruvka", "strut", "kruskal"][i % 4]
        f = gpumst.minimum_spanning_forest(u, v, w, num_vertices=300, algorithm=algorithm, context=ctx)
        assert f.edges.tolist() == expected.tolist()
        assert np.array_equal(gpumst.scan(x, context=ctx), expected_scan)
        return True

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert all(pool.map(work, range(48)))


def test_long_calls_release_the_gil(cpu):
    rng = np.random.default_rng(22)
    n, m = 1 << 19, 1 << 22
    u = rng.integers(0, n, m, dtype=np.uint32)
    v = rng.integers(0, n, m, dtype=np.uint32)
    w = rng.random(m)
    span = []
    done = threading.Event()

    def long_call():
        span.append(time.perf_counter())
        gpumst.minimum_spanning_forest(u, v, w, num_vertices=n, algorithm="kruskal", context=cpu)
        span.append(time.perf_counter())
        done.set()

    worker = threading.Thread(target=long_call)
    worker.start()
    ticks = []
    while not done.is_set():
        ticks.append(time.perf_counter())  # Python running beside the library call
    worker.join()
    start, end = span
    assert end - start > 0.05, "the call was too short to tell"
    # Had the call kept the GIL, no Python could have run well inside its span.
    inside = [t for t in ticks if start + 0.01 < t < end - 0.01]
    assert len(inside) > 100, (len(inside), end - start)
