/*
 * Minimum spanning forests through the C API: edge lists and CSR, every algorithm,
 * labels, unweighted forests, exact totals, and every error path of gpumst_msf.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const gpumst_algorithm ALGORITHMS[] = {
    GPUMST_ALGORITHM_AUTO, GPUMST_ALGORITHM_BORUVKA, GPUMST_ALGORITHM_PRIM,
    GPUMST_ALGORITHM_STRUT, GPUMST_ALGORITHM_KRUSKAL,
};

static void last_error(gpumst_context *ctx, char *buf, size_t cap)
{
    gpumst_context_last_error(ctx, buf, cap);
}

/* A 7-vertex graph: a square with a diagonal, a triangle with a parallel edge and a
 * self-loop, and an isolated vertex (6). */
static const uint32_t U[] = {0, 1, 2, 3, 0, 4, 5, 4, 5, 4};
static const uint32_t V[] = {1, 2, 3, 0, 2, 5, 4, 4, 3, 5};
static const int32_t W[] = {4, 2, 5, 1, 3, 7, -1, 0, 9, -1};
/* By (weight, id): 6(-1) 9(-1) 7(self) 3(1) 1(2) 4(3) 0(4) 2(5) 5(7) 8(9).
 * Kruskal keeps 6 (4-5), skips 9 (parallel 4-5), 3 (3-0), 1 (1-2), 4 (0-2), then 0,2
 * are inside, 5 inside, 8 (5-3) joins the two parts. */
static const uint64_t EXPECTED[] = {1, 3, 4, 6, 8};
/* The maximum forest, by (weight descending, id): 8(9) 5(7) 2(5) 0(4) 4(3) join,
 * 1(2) 3(1) 7(self) 6(-1) 9(-1) close cycles. Total 28. */
static const uint64_t EXPECTED_MAX[] = {0, 2, 4, 5, 8};

static void edge_list_every_algorithm(gpumst_context *ctx)
{
    gpumst_graph g;
    CHECK_STATUS(gpumst_graph_init_edge_list(&g, 7, 10, U, V, GPUMST_I32, W), GPUMST_OK);
    for (size_t a = 0; a < sizeof ALGORITHMS / sizeof ALGORITHMS[0]; a++) {
        gpumst_forest *f = NULL;
        CHECK_STATUS(gpumst_msf(ctx, &g, ALGORITHMS[a], GPUMST_MSF_LABELS, &f), GPUMST_OK);
        CHECK(f != NULL, "algorithm %d gave no forest", (int)ALGORITHMS[a]);
        CHECK(gpumst_forest_num_edges(f) == 5, "edges %" PRIu64, gpumst_forest_num_edges(f));
        const uint64_t *edges = gpumst_forest_edges(f);
        CHECK(edges != NULL && memcmp(edges, EXPECTED, sizeof EXPECTED) == 0, "algorithm %d edges", (int)ALGORITHMS[a]);
        CHECK(gpumst_forest_num_components(f) == 2, "components %" PRIu64, gpumst_forest_num_components(f));
        const uint32_t *labels = gpumst_forest_labels(f);
        CHECK(labels != NULL, "labels requested");
        if (labels) {
            for (int x = 0; x < 6; x++)
                CHECK(labels[x] == 0, "label[%d] = %u", x, labels[x]);
            CHECK(labels[6] == 6, "isolated vertex labels itself: %u", labels[6]);
        }
        gpumst_total_weight t;
        CHECK_STATUS(gpumst_forest_total_weight(f, &t), GPUMST_OK);
        CHECK(t.is_float == 0 && t.exact_high == 0 && t.exact_low == 14 && t.value == 14.0,
              "total %d %" PRId64 " %" PRIu64 " %g", t.is_float, t.exact_high, t.exact_low, t.value);
        char text[8];
        size_t len = 0;
        CHECK_STATUS(gpumst_forest_total_weight_string(f, text, sizeof text, &len), GPUMST_OK);
        CHECK(strcmp(text, "14") == 0 && len == 2, "total text %s", text);
        gpumst_forest_free(f);
    }
}

static void maximum_every_algorithm(gpumst_context *ctx)
{
    gpumst_graph g;
    CHECK_STATUS(gpumst_graph_init_edge_list(&g, 7, 10, U, V, GPUMST_I32, W), GPUMST_OK);
    gpumst_tier tier = GPUMST_TIER_AUTO;
    CHECK_STATUS(gpumst_context_tier(ctx, &tier), GPUMST_OK);
    for (size_t a = 0; a < sizeof ALGORITHMS / sizeof ALGORITHMS[0]; a++) {
        gpumst_forest *f = NULL;
        CHECK_STATUS(gpumst_msf(ctx, &g, ALGORITHMS[a], GPUMST_MSF_MAXIMUM | GPUMST_MSF_LABELS, &f), GPUMST_OK);
        CHECK(gpumst_forest_num_edges(f) == 5, "max edges %" PRIu64, gpumst_forest_num_edges(f));
        const uint64_t *edges = gpumst_forest_edges(f);
        CHECK(edges != NULL && memcmp(edges, EXPECTED_MAX, sizeof EXPECTED_MAX) == 0, "algorithm %d max edges", (int)ALGORITHMS[a]);
        CHECK(gpumst_forest_num_components(f) == 2, "max components");
        CHECK(gpumst_forest_num_vertices(f) == 7, "vertices %" PRIu64, gpumst_forest_num_vertices(f));
        CHECK(gpumst_forest_tier(f) == tier, "forest tier %d, context tier %d", (int)gpumst_forest_tier(f), (int)tier);
        gpumst_total_weight t;
        CHECK_STATUS(gpumst_forest_total_weight(f, &t), GPUMST_OK);
        CHECK(t.is_float == 0 && t.exact_low == 28 && t.exact_high == 0, "max total %" PRIu64, t.exact_low);
        gpumst_forest_free(f);
    }
    /* Equal weights still fall to the lower id; unweighted ignores MAXIMUM. */
    const uint32_t tu[] = {0, 1, 2}, tv[] = {1, 2, 0};
    const double tw[] = {2.0, 2.0, 2.0};
    gpumst_graph_init_edge_list(&g, 3, 3, tu, tv, GPUMST_F64, tw);
    gpumst_forest *f = NULL;
    CHECK_STATUS(gpumst_msf(ctx, &g, GPUMST_ALGORITHM_AUTO, GPUMST_MSF_MAXIMUM, &f), GPUMST_OK);
    const uint64_t *e = gpumst_forest_edges(f);
    CHECK(gpumst_forest_num_edges(f) == 2 && e[0] == 0 && e[1] == 1, "max ties by id");
    gpumst_forest_free(f);
    CHECK(gpumst_forest_tier(NULL) == GPUMST_TIER_AUTO && gpumst_forest_num_vertices(NULL) == 0, "NULL forest");
}

static void csr_and_flags(gpumst_context *ctx)
{
    /* Path 0-1-2 plus 0-2, symmetric CSR; ids are positions of the u < v entries. */
    const uint64_t offsets[] = {0, 2, 4, 6};
    const uint32_t targets[] = {1, 2, 0, 2, 0, 1};
    const double w[] = {1.5, 0.25, 1.5, -0.0, 0.25, 0.0};
    gpumst_graph g;
    CHECK_STATUS(gpumst_graph_init_csr(&g, 3, 6, offsets, targets, GPUMST_F64, w), GPUMST_OK);
    gpumst_forest *f = NULL;
    CHECK_STATUS(gpumst_msf(ctx, &g, GPUMST_ALGORITHM_AUTO, 0, &f), GPUMST_OK);
    /* u<v entries: position 0 (0-1, 1.5), 1 (0-2, 0.25), 3 (1-2, -0.0). Forest: 3, 1. */
    const uint64_t *e = gpumst_forest_edges(f);
    CHECK(gpumst_forest_num_edges(f) == 2 && e[0] == 1 && e[1] == 3, "csr forest");
    CHECK(gpumst_forest_labels(f) == NULL, "no labels unless asked");
    gpumst_total_weight t;
    CHECK_STATUS(gpumst_forest_total_weight(f, &t), GPUMST_OK);
    CHECK(t.is_float == 1 && t.value == 0.25, "float total %g", t.value);
    gpumst_forest_free(f);
    /* Unweighted: lowest ids win: positions 0 and 1. */
    CHECK_STATUS(gpumst_msf(ctx, &g, GPUMST_ALGORITHM_BORUVKA, GPUMST_MSF_UNWEIGHTED, &f), GPUMST_OK);
    e = gpumst_forest_edges(f);
    CHECK(gpumst_forest_num_edges(f) == 2 && e[0] == 0 && e[1] == 1, "unweighted forest");
    gpumst_forest_free(f);
    /* NULL weights mean unweighted too; an empty graph is fine. */
    CHECK_STATUS(gpumst_graph_init_csr(&g, 3, 6, offsets, targets, GPUMST_F64, NULL), GPUMST_OK);
    CHECK_STATUS(gpumst_msf(ctx, &g, GPUMST_ALGORITHM_PRIM, 0, &f), GPUMST_OK);
    CHECK(gpumst_forest_num_edges(f) == 2, "weightless forest");
    gpumst_forest_free(f);
    CHECK_STATUS(gpumst_graph_init_edge_list(&g, 0, 0, NULL, NULL, GPUMST_U32, NULL), GPUMST_OK);
    CHECK_STATUS(gpumst_msf(ctx, &g, GPUMST_ALGORITHM_STRUT, 0, &f), GPUMST_OK);
    CHECK(gpumst_forest_num_edges(f) == 0 && gpumst_forest_num_components(f) == 0, "empty graph");
    gpumst_forest_free(f);
}

static void wide_integer_totals(gpumst_context *ctx)
{
    const uint32_t u[] = {0, 1, 2}, v[] = {1, 2, 3};
    const uint64_t w[] = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
    gpumst_graph g;
    gpumst_graph_init_edge_list(&g, 4, 3, u, v, GPUMST_U64, w);
    gpumst_forest *f = NULL;
    CHECK_STATUS(gpumst_msf(ctx, &g, GPUMST_ALGORITHM_KRUSKAL, 0, &f), GPUMST_OK);
    gpumst_total_weight t;
    gpumst_forest_total_weight(f, &t);
    /* 3 * (2^64 - 1) = 2 * 2^64 + (2^64 - 3). */
    CHECK(t.exact_high == 2 && t.exact_low == UINT64_MAX - 2, "128-bit total %" PRId64 ":%" PRIu64, t.exact_high, t.exact_low);
    char text[64];
    size_t len = 0;
    CHECK_STATUS(gpumst_forest_total_weight_string(f, NULL, 0, &len), GPUMST_OK);
    CHECK(len == 20, "length of 55340232221128654845 is %zu", len);
    CHECK_STATUS(gpumst_forest_total_weight_string(f, text, sizeof text, NULL), GPUMST_OK);
    CHECK(strcmp(text, "55340232221128654845") == 0, "exact total %s", text);
    gpumst_forest_free(f);
}

static void errors(gpumst_context *ctx)
{
    char msg[512];
    gpumst_graph g;
    gpumst_forest *f = (gpumst_forest *)&g; /* must be reset to NULL on failure */
    CHECK_STATUS(gpumst_graph_init_edge_list(NULL, 1, 0, NULL, NULL, GPUMST_U32, NULL), GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_graph_init_csr(NULL, 1, 0, NULL, NULL, GPUMST_U32, NULL), GPUMST_INVALID_ARGUMENT);
    gpumst_graph_init_edge_list(&g, 7, 10, U, V, GPUMST_I32, W);
    CHECK_STATUS(gpumst_msf(NULL, &g, GPUMST_ALGORITHM_AUTO, 0, &f), GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_msf(ctx, NULL, GPUMST_ALGORITHM_AUTO, 0, &f), GPUMST_INVALID_ARGUMENT);
    CHECK(f == NULL, "forest reset on failure");
    last_error(ctx, msg, sizeof msg);
    CHECK_CONTAINS(msg, "graph is NULL");
    /* The default build has no MPI: the entry point exists and says so (its work is
     * tested by mpi-tests/ against the `mpi` feature's build). */
    f = (gpumst_forest *)&g;
    CHECK_STATUS(gpumst_msf_mpi(ctx, 0, &g, NULL, GPUMST_ALGORITHM_AUTO, 0, -1, &f), GPUMST_BACKEND_UNAVAILABLE);
    CHECK(f == NULL, "forest reset on failure");
    last_error(ctx, msg, sizeof msg);
    CHECK_CONTAINS(msg, "built without MPI");
    CHECK_STATUS(gpumst_msf(ctx, &g, GPUMST_ALGORITHM_AUTO, 0, NULL), GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_msf(ctx, &g, 17, 0, &f), GPUMST_INVALID_ARGUMENT);
    last_error(ctx, msg, sizeof msg);
    CHECK_CONTAINS(msg, "algorithm 17");
    CHECK_STATUS(gpumst_msf(ctx, &g, GPUMST_ALGORITHM_AUTO, 0x80, &f), GPUMST_INVALID_ARGUMENT);
    last_error(ctx, msg, sizeof msg);
    CHECK_CONTAINS(msg, "flags");
    gpumst_graph bad = g;
    bad.kind = 5;
    CHECK_STATUS(gpumst_msf(ctx, &bad, GPUMST_ALGORITHM_AUTO, 0, &f), GPUMST_INVALID_ARGUMENT);
    bad = g;
    bad.struct_size = 8;
    CHECK_STATUS(gpumst_msf(ctx, &bad, GPUMST_ALGORITHM_AUTO, 0, &f), GPUMST_INVALID_ARGUMENT);
    last_error(ctx, msg, sizeof msg);
    CHECK_CONTAINS(msg, "struct_size");
    bad = g;
    bad.weight_type = 9;
    CHECK_STATUS(gpumst_msf(ctx, &bad, GPUMST_ALGORITHM_AUTO, 0, &f), GPUMST_INVALID_ARGUMENT);
    bad = g;
    bad.u = NULL;
    CHECK_STATUS(gpumst_msf(ctx, &bad, GPUMST_ALGORITHM_AUTO, 0, &f), GPUMST_INVALID_ARGUMENT);
    last_error(ctx, msg, sizeof msg);
    CHECK_CONTAINS(msg, "graph.u is NULL");
    /* Invalid graphs name the offending index. */
    const uint32_t bad_v[] = {1, 2, 3, 0, 2, 5, 4, 4, 30, 5};
    gpumst_graph_init_edge_list(&bad, 7, 10, U, bad_v, GPUMST_I32, W);
    CHECK_STATUS(gpumst_msf(ctx, &bad, GPUMST_ALGORITHM_AUTO, 0, &f), GPUMST_INVALID_GRAPH);
    last_error(ctx, msg, sizeof msg);
    CHECK_CONTAINS(msg, "edge 8");
    const float nan_w[] = {1, 2, NAN};
    const uint32_t tu[] = {0, 1, 2}, tv[] = {1, 2, 0};
    gpumst_graph_init_edge_list(&bad, 3, 3, tu, tv, GPUMST_F32, nan_w);
    CHECK_STATUS(gpumst_msf(ctx, &bad, GPUMST_ALGORITHM_PRIM, 0, &f), GPUMST_INVALID_GRAPH);
    last_error(ctx, msg, sizeof msg);
    CHECK_CONTAINS(msg, "edge 2 has a NaN weight");
    const uint64_t asym_off[] = {0, 1, 1};
    const uint32_t asym_t[] = {1};
    gpumst_graph_init_csr(&bad, 2, 1, asym_off, asym_t, GPUMST_U32, NULL);
    CHECK_STATUS(gpumst_msf(ctx, &bad, GPUMST_ALGORITHM_AUTO, 0, &f), GPUMST_INVALID_GRAPH);
    last_error(ctx, msg, sizeof msg);
    CHECK_CONTAINS(msg, "not symmetric");
    const uint64_t dec_off[] = {0, 2, 1, 2};
    const uint32_t dec_t[] = {1, 0};
    gpumst_graph_init_csr(&bad, 3, 2, dec_off, dec_t, GPUMST_U32, NULL);
    CHECK_STATUS(gpumst_msf(ctx, &bad, GPUMST_ALGORITHM_AUTO, 0, &f), GPUMST_INVALID_GRAPH);
    last_error(ctx, msg, sizeof msg);
    CHECK_CONTAINS(msg, "offsets[2]");
    /* Accessors on NULL. */
    CHECK(gpumst_forest_num_edges(NULL) == 0 && gpumst_forest_edges(NULL) == NULL, "NULL forest");
    CHECK(gpumst_forest_num_components(NULL) == 0 && gpumst_forest_labels(NULL) == NULL, "NULL forest");
    gpumst_total_weight t;
    CHECK_STATUS(gpumst_forest_total_weight(NULL, &t), GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_forest_total_weight_string(NULL, msg, sizeof msg, NULL), GPUMST_INVALID_ARGUMENT);
    gpumst_forest_free(NULL);
}

int main(void)
{
    gpumst_context *ctx = open_cpu_context();
    if (!ctx)
        return check_summary("test_msf");
    edge_list_every_algorithm(ctx);
    maximum_every_algorithm(ctx);
    csr_and_flags(ctx);
    wide_integer_totals(ctx);
    errors(ctx);
    gpumst_context_destroy(ctx);
    return check_summary("test_msf");
}
