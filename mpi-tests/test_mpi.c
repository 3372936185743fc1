/*
 * gpumst_msf_mpi from C, run by scripts/test_mpi.sh as `mpirun -np P` for P = 1..4
 * against a libgpumst built with the `mpi` feature: every rank generates the same
 * graph, passes its share, and must get the forest gpumst_msf gives for the whole
 * graph (ids, count, total); the root option, explicit ids, and errors that reach
 * every rank. Prints "test_mpi: N checks passed, M failed" per rank.
 */
#include <inttypes.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../ffi-tests/check.h"

enum { N = 500, M = 3000 };

static uint64_t state = 88172645463325252ull;
static uint32_t next_below(uint32_t n)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (uint32_t)(state % n);
}

/* Forest `f` equals `want` edge for edge, with the same total. */
static void same_forest(const gpumst_forest *f, const gpumst_forest *want, const char *what)
{
    CHECK(f != NULL, "%s: no forest", what);
    if (!f)
        return;
    uint64_t count = gpumst_forest_num_edges(f);
    CHECK(count == gpumst_forest_num_edges(want), "%s: %" PRIu64 " edges", what, count);
    CHECK(memcmp(gpumst_forest_edges(f), gpumst_forest_edges(want), count * sizeof(uint64_t)) == 0,
          "%s: edge ids", what);
    CHECK(gpumst_forest_num_components(f) == gpumst_forest_num_components(want), "%s: components", what);
    gpumst_total_weight a, b;
    gpumst_forest_total_weight(f, &a);
    gpumst_forest_total_weight(want, &b);
    CHECK(a.exact_low == b.exact_low && a.exact_high == b.exact_high, "%s: total", what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t world = (int64_t)MPI_Comm_c2f(MPI_COMM_WORLD);

    gpumst_context *ctx = open_cpu_context();
    if (!ctx) {
        MPI_Finalize();
        return check_summary("test_mpi");
    }

    /* The whole graph, alike on every rank, and its forest from one process. */
    static uint32_t u[M], v[M], w[M];
    for (int i = 0; i < M; i++) {
        u[i] = next_below(N);
        v[i] = next_below(N);
        w[i] = next_below(50);
    }
    gpumst_graph whole;
    gpumst_graph_init_edge_list(&whole, N, M, u, v, GPUMST_U32, w);
    gpumst_forest *want = NULL;
    CHECK_STATUS(gpumst_msf(ctx, &whole, GPUMST_ALGORITHM_AUTO, 0, &want), GPUMST_OK);

    /* Contiguous blocks with implicit ids; every rank gets the forest. */
    int start = M * rank / size, end = M * (rank + 1) / size;
    gpumst_graph mine;
    gpumst_graph_init_edge_list(&mine, N, (uint64_t)(end - start), u + start, v + start, GPUMST_U32, w + start);
    gpumst_forest *f = NULL;
    CHECK_STATUS(gpumst_msf_mpi(ctx, world, &mine, NULL, GPUMST_ALGORITHM_AUTO, 0, -1, &f), GPUMST_OK);
    same_forest(f, want, "blocks, every rank");
    gpumst_forest_free(f);

    /* Round robin with explicit ids; only the last rank gets the forest. */
    static uint32_t ru[M], rv[M], rw[M];
    static uint64_t ids[M];
    uint64_t k = 0;
    for (int i = rank; i < M; i += size, k++) {
        ru[k] = u[i], rv[k] = v[i], rw[k] = w[i], ids[k] = (uint64_t)i;
    }
    gpumst_graph_init_edge_list(&mine, N, k, ru, rv, GPUMST_U32, rw);
    f = NULL;
    CHECK_STATUS(gpumst_msf_mpi(ctx, world, &mine, ids, GPUMST_ALGORITHM_BORUVKA, 0, size - 1, &f), GPUMST_OK);
    if (rank == size - 1)
        same_forest(f, want, "round robin, root");
    else
        CHECK(f == NULL, "rank %d is not the root but got a forest", rank);
    gpumst_forest_free(f);

    /* An end out of range on the last rank fails on every rank, naming it. */
    uint32_t bad_v = rank == size - 1 ? N + 4 : 1;
    uint32_t one_u = 0;
    gpumst_graph_init_edge_list(&mine, N, 1, &one_u, &bad_v, GPUMST_U32, w);
    f = NULL;
    CHECK_STATUS(gpumst_msf_mpi(ctx, world, &mine, NULL, GPUMST_ALGORITHM_AUTO, 0, -1, &f), GPUMST_INVALID_GRAPH);
    CHECK(f == NULL, "a failed call leaves no forest");
    char message[512], expected[64];
    gpumst_context_last_error(ctx, message, sizeof message);
    snprintf(expected, sizeof expected, "rank %d: edge 0: v = %d", size - 1, N + 4);
    CHECK_CONTAINS(message, expected);

    /* Arguments checked before any communication (the same on every rank). */
    CHECK_STATUS(gpumst_msf_mpi(ctx, (int64_t)MPI_Comm_c2f(MPI_COMM_NULL), &whole, NULL, GPUMST_ALGORITHM_AUTO, 0, -1, &f),
                 GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_msf_mpi(ctx, world, &whole, NULL, GPUMST_ALGORITHM_AUTO, 0, -2, &f), GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_msf_mpi(ctx, world, &whole, NULL, GPUMST_ALGORITHM_AUTO, 0, size, &f), GPUMST_INVALID_ARGUMENT);
    gpumst_context_last_error(ctx, message, sizeof message);
    CHECK_CONTAINS(message, "is not a rank of this");

    gpumst_forest_free(want);
    gpumst_context_destroy(ctx);
    MPI_Finalize();
    return check_summary("test_mpi");
}
