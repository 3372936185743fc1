"""A graph in device memory as an edge list (without and with component labels) and as a
symmetric CSR (rows in edge order, then sorted by target), through the Python binding on
CUDA arrays: the median of REPEAT calls after a warm one, each forest's total and
component count compared, and the device's labels compared with the host's.

Usage (on a machine with CUDA; see docs/performance-log.md, twenty-fourth session):
    GPUMST_LIBRARY=.../libgpumst.so PYTHONPATH=bindings/python/src \
        python3 benches/device_csr.py REPEAT GRAPH...
"""

import statistics
import sys
import time
from functools import partial

import numpy as np

import gpumst
from gpumst import _device as D

ctx = gpumst.Context(backend="cuda")
native = ctx.native()
repeat = int(sys.argv[1])


def csr_of(n, u, v, w, sort):
    twice = u != v
    src = np.concatenate([u, v[twice]])
    dst = np.concatenate([v, u[twice]])
    ww = np.concatenate([w, w[twice]])
    order = np.lexsort((dst, src)) if sort else np.argsort(src, kind="stable")
    offsets = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(np.bincount(src, minlength=n), out=offsets[1:])
    return offsets, dst[order].astype(np.uint32), ww[order]


def median_ms(call):
    call()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        call()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def device(a):
    return D.DeviceArray.from_host(native.context, a)


def compare(path):
    g = gpumst.load_graph(path)
    n, u, v, w = g.num_vertices, np.asarray(g.u), np.asarray(g.v), np.asarray(g.weights)
    du, dv, dw = device(u), device(v), device(w)
    whole = ctx.minimum_spanning_forest(du, dv, dw, num_vertices=n)
    edge = partial(ctx.minimum_spanning_forest, du, dv, dw, num_vertices=n, total_weight=False)
    row = [f"{path.split('/')[-1]} n={n} m={len(u)}", f"edge list {median_ms(edge):.3f} ms"]
    # The same call with component labels computed on the device (gpumst_forest_labels_device).
    labelled = ctx.minimum_spanning_forest(du, dv, dw, num_vertices=n, labels=True)
    host = ctx.minimum_spanning_forest(u, v, w, num_vertices=n, labels=True)
    assert np.array_equal(labelled.labels.get(), host.labels), "device labels differ from the host's"
    with_labels = partial(ctx.minimum_spanning_forest, du, dv, dw, num_vertices=n, total_weight=False, labels=True)
    row.append(f"with labels {median_ms(with_labels):.3f} ms")
    for sort in (False, True):
        offsets, targets, weights = csr_of(n, u, v, w, sort)
        do, dt, dcw = device(offsets), device(targets), device(weights)
        got = ctx.minimum_spanning_forest_csr(do, dt, dcw)
        assert got.total_weight == whole.total_weight, (got.total_weight, whole.total_weight)
        assert got.num_components == whole.num_components
        csr = partial(ctx.minimum_spanning_forest_csr, do, dt, dcw, total_weight=False)
        rows = "sorted" if sort else "edge-order"
        row.append(f"CSR {rows} rows ({len(targets)} entries) {median_ms(csr):.3f} ms")
    print("; ".join(row), flush=True)


for path in sys.argv[2:]:
    compare(path)
