#!/usr/bin/env bash
# gpumst_msf_mpi's merge, timed with 1, 2 and 4 ranks (or RANKS="..."): builds
# benches/mpi.rs with the `mpi` feature and runs it under mpirun for each rank count;
# each run prints one JSON line (total, local reduction, per-round communication,
# delivery, and the single-process time on the same graph; forests checked equal).
#
#   bash benches/mpi.sh [benches/mpi.rs options, e.g. --graph rmat --log2-vertices 20]
#
# On a machine with fewer cores than ranks x --threads the ranks share cores, so the
# times show the communication's volume and share, not a speedup.
#
# GPU_PER_RANK=1 gives each rank one GPU of its host (CUDA_VISIBLE_DEVICES = its local
# rank), as MPI jobs on hosts with several GPUs run; otherwise the ranks share them.
# MPI_BENCH=PATH runs a benchmark built elsewhere (machines without cargo).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
bench=${MPI_BENCH:-$(cargo bench --features mpi --bench mpi --no-run --target-dir target/mpi \
    --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if d.get("reason") == "compiler-artifact" and d["target"]["name"] == "mpi" and d.get("executable"):
        print(d["executable"])')}
launch=("$bench")
if [ "${GPU_PER_RANK:-0}" = 1 ]; then
    launch=(bash -c 'CUDA_VISIBLE_DEVICES=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-0}} exec "$0" "$@"' "$bench")
fi
for ranks in ${RANKS:-1 2 4}; do
    mpirun ${MPIRUN_OPTIONS:-} -np "$ranks" "${launch[@]}" "$@"
done
