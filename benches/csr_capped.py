"""A CSR graph on the CPU tier, uncapped and under a memory cap (issue 21): median
seconds of `minimum_spanning_forest_csr` and the resident memory the calls add to the
graph's at their peak (Linux: the peak is reset once the graph is built).

    GPUMST_LIBRARY=target/release/libgpumst.so python3 benches/csr_capped.py [CAP_BYTES]

Random graph of 2^20 vertices and 2^24 edges (2^25 CSR entries, u32 weights); CAP_BYTES
0 (the default) runs uncapped.
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bindings", "python", "src"))
import gpumst

cap = int(sys.argv[1]) if len(sys.argv) > 1 else 0
rng = np.random.default_rng(1)
n, m = 1 << 20, 1 << 24
u = rng.integers(0, n, m, dtype=np.uint32)
v = rng.integers(0, n, m, dtype=np.uint32)
w = rng.integers(1, 1_000_000, m, dtype=np.uint32)
sources, targets, weights = np.concatenate([u, v]), np.concatenate([v, u]), np.concatenate([w, w])
order = np.argsort(sources, kind="stable")
indptr = np.zeros(n + 1, dtype=np.uint64)
np.add.at(indptr, sources + 1, 1)
indptr = np.cumsum(indptr).astype(np.uint64)
indices, data = targets[order].astype(np.uint32), weights[order]
del u, v, w, sources, targets, weights, order


def resident_mb(field):
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) / 1024


with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # the peak resident size starts again from here
before = resident_mb("VmRSS")
ctx = gpumst.Context(backend="cpu", device_memory_limit=cap)
times = []
for _ in range(5):
    start = time.perf_counter()
    forest = gpumst.minimum_spanning_forest_csr(indptr, indices, data, context=ctx)
    times.append(time.perf_counter() - start)
print(
    f"cap {cap}: median {sorted(times)[2]:.3f} s, total weight {forest.total_weight}, "
    f"calls' peak {resident_mb('VmHWM') - before:.0f} MB over the graph's {before:.0f} MB"
)
