"""Context.minimum_spanning_forest_mpi from Python through mpi4py, run by
scripts/test_mpi.sh as `mpirun -np P python3 mpi-tests/test_mpi.py` with GPUMST_LIBRARY
pointing at a libgpumst built with the `mpi` feature. Every rank must get the forest the
single-process call gives for the whole graph; a failure must raise on every rank."""

import sys

import numpy as np
from mpi4py import MPI

import gpumst

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
ctx = gpumst.Context(backend="cpu", threads=1)
checks = 0


def check(condition, what):
    global checks
    if not condition:
        print(f"test_mpi.py rank {rank}: FAILED: {what}", file=sys.stderr)
        comm.Abort(1)
    checks += 1


# The same graph on every rank: ties in the weights, self-loops, parallel edges.
rng = np.random.default_rng(5)
n, m = 400, 2500
u = rng.integers(0, n, m, dtype=np.uint32)
v = rng.integers(0, n, m, dtype=np.uint32)
for w in (rng.integers(-20, 20, m).astype(np.int64), rng.random(m).astype(np.float32)):
    whole = ctx.minimum_spanning_forest(u, v, w, num_vertices=n, labels=True)
    # Contiguous blocks, implicit ids, every rank gets the forest (labels too).
    lo, hi = m * rank // size, m * (rank + 1) // size
    f = ctx.minimum_spanning_forest_mpi(comm, u[lo:hi], v[lo:hi], w[lo:hi], num_vertices=n, labels=True)
    check(np.array_equal(f.edges, whole.edges), f"blocks {w.dtype}: edges")
    check(f.total_weight == whole.total_weight, f"blocks {w.dtype}: total")
    check(np.array_equal(f.labels, whole.labels), f"blocks {w.dtype}: labels")
    # Round robin with explicit ids, rank 0 gets the forest.
    mine = np.arange(rank, m, size)[::-1]
    f = ctx.minimum_spanning_forest_mpi(comm, u[mine], v[mine], w[mine], num_vertices=n, ids=mine, root=0)
    if rank == 0:
        check(np.array_equal(f.edges, whole.edges), f"round robin {w.dtype}: edges")
    else:
        check(f is None, "only the root gets the forest")

# An end out of range on the last rank raises on every rank, naming it.
bad = np.array([n + 3 if rank == size - 1 else 1], dtype=np.uint32)
try:
    ctx.minimum_spanning_forest_mpi(comm, [0], bad, num_vertices=n)
    check(False, "an end out of range must raise")
except gpumst.InvalidGraph as e:
    check(f"rank {size - 1}: edge 0: v = {n + 3}" in str(e), str(e))

comm.Barrier()
if rank == 0:
    print(f"test_mpi.py: {checks} checks passed on each of {size} rank(s)")
