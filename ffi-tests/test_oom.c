/*
 * Out of memory through the C API: the library must return GPUMST_OUT_OF_MEMORY with
 * a message naming what it could not allocate, never abort the calling program, and
 * the context must keep working. run.sh runs this under `ulimit -v 4000000` (4 GB of
 * address space, without valgrind, which needs more): an edge list declaring 4e9
 * vertices with one edge needs 16 GB of union-find parents.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"

int main(void)
{
    struct rlimit limit;
    CHECK(getrlimit(RLIMIT_AS, &limit) == 0, "getrlimit failed");
    CHECK(limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur <= (rlim_t)8 << 30,
          "run this under `ulimit -v 4000000` (address space limit is %llu bytes)",
          (unsigned long long)limit.rlim_cur);

    gpumst_options options;
    gpumst_options_init(&options);
    options.tier = GPUMST_TIER_CPU;
    gpumst_context *ctx = NULL;
    char error[512];
    CHECK_STATUS(gpumst_context_create(&options, &ctx, error, sizeof error), GPUMST_OK);
    if (!ctx)
        return check_summary("test_oom");

    static const uint32_t u[] = {1}, v[] = {2};
    static const uint32_t w[] = {3};
    gpumst_graph huge;
    CHECK_STATUS(gpumst_graph_init_edge_list(&huge, 4000000000u, 1, u, v, GPUMST_U32, w),
                 GPUMST_OK);
    static const gpumst_algorithm algorithms[] = {
        GPUMST_ALGORITHM_AUTO, GPUMST_ALGORITHM_BORUVKA, GPUMST_ALGORITHM_PRIM,
        GPUMST_ALGORITHM_STRUT, GPUMST_ALGORITHM_KRUSKAL,
    };
    for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; a++) {
        gpumst_forest *forest = NULL;
        gpumst_status status = gpumst_msf(ctx, &huge, algorithms[a], GPUMST_MSF_LABELS, &forest);
        CHECK_STATUS(status, GPUMST_OUT_OF_MEMORY);
        CHECK(forest == NULL, "no forest on failure");
        gpumst_context_last_error(ctx, error, sizeof error);
        printf("test_oom: algorithm %d: %s\n", (int)algorithms[a], error);
        CHECK(strstr(error, "could not allocate") && strstr(error, "bytes"),
              "the message names the allocation and its size: %s", error);
        gpumst_forest_free(forest);

        /* The same context still works. */
        static const uint32_t su[] = {0, 1, 0}, sv[] = {1, 2, 2};
        static const uint32_t sw[] = {5, 1, 2};
        gpumst_graph small;
        gpumst_graph_init_edge_list(&small, 3, 3, su, sv, GPUMST_U32, sw);
        CHECK_STATUS(gpumst_msf(ctx, &small, algorithms[a], 0, &forest), GPUMST_OK);
        if (forest) {
            CHECK(gpumst_forest_num_edges(forest) == 2, "2 edges");
            const uint64_t *edges = gpumst_forest_edges(forest);
            CHECK(edges[0] == 1 && edges[1] == 2, "edges 1 and 2, got %llu %llu",
                  (unsigned long long)edges[0], (unsigned long long)edges[1]);
        }
        gpumst_forest_free(forest);
    }

    gpumst_context_destroy(ctx);
    return check_summary("test_oom");
}
