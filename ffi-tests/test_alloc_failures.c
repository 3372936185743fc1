/*
 * Every input-sized allocation refused in turn, through the C API (linked against a
 * library built with the fault-injection feature; run under valgrind, so a leak on a
 * failure path fails the run). For each N, the N-th allocation of an MSF (every
 * algorithm, labels on), a scan and a segmented argmin on the CPU tier fails: the
 * call must return GPUMST_OUT_OF_MEMORY with a message, and the next call on the same
 * context must give the undisturbed answer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Test hooks of the fault-injection build (not in gpumst.h). */
void gpumst_testing_fail_allocation_after(int64_t n);
uint64_t gpumst_testing_injected_failures(void);

enum { N = 400, M = 1500, LEN = 200000, SEGMENTS = 100 };
static uint32_t U[M], V[M], W[M];

/* Compares a forest with the reference one (edges and labels). */
static int same_forest(const gpumst_forest *a, const gpumst_forest *b)
{
    uint64_t k = gpumst_forest_num_edges(a);
    if (k != gpumst_forest_num_edges(b))
        return 0;
    if (memcmp(gpumst_forest_edges(a), gpumst_forest_edges(b), k * sizeof(uint64_t)) != 0)
        return 0;
    return memcmp(gpumst_forest_labels(a), gpumst_forest_labels(b), N * sizeof(uint32_t)) == 0;
}

/* Checks one refused call: status, message, nothing returned. */
static void check_refused(gpumst_context *ctx, gpumst_status status, const char *what, int64_t n)
{
    char error[512];
    CHECK_STATUS(status, GPUMST_OUT_OF_MEMORY);
    gpumst_context_last_error(ctx, error, sizeof error);
    CHECK(strstr(error, "injected allocation failure") != NULL, "%s, allocation %lld: %s", what,
          (long long)n, error);
}

static void msf_every_failure(gpumst_context *ctx, gpumst_algorithm algorithm)
{
    gpumst_graph g;
    gpumst_graph_init_edge_list(&g, N, M, U, V, GPUMST_U32, W);
    gpumst_forest *reference = NULL;
    gpumst_testing_fail_allocation_after(-1);
    CHECK_STATUS(gpumst_msf(ctx, &g, algorithm, GPUMST_MSF_LABELS, &reference), GPUMST_OK);
    int64_t n = 0;
    for (;; n++) {
        gpumst_forest *forest = NULL;
        gpumst_testing_fail_allocation_after(n);
        gpumst_status status = gpumst_msf(ctx, &g, algorithm, GPUMST_MSF_LABELS, &forest);
        uint64_t refused = gpumst_testing_injected_failures();
        gpumst_testing_fail_allocation_after(-1);
        if (refused == 0) {
            CHECK_STATUS(status, GPUMST_OK);
            CHECK(forest && reference && same_forest(forest, reference), "algorithm %d", (int)algorithm);
            gpumst_forest_free(forest);
            break;
        }
        check_refused(ctx, status, "msf", n);
        CHECK(forest == NULL, "no forest on failure");
        gpumst_forest *again = NULL;
        CHECK_STATUS(gpumst_msf(ctx, &g, algorithm, GPUMST_MSF_LABELS, &again), GPUMST_OK);
        CHECK(again && reference && same_forest(again, reference), "after failure %lld",
              (long long)n);
        gpumst_forest_free(again);
    }
    CHECK(n > 0, "algorithm %d made no allocation", (int)algorithm);
    printf("test_alloc_failures: msf algorithm %d: %lld allocations, each refused once\n",
           (int)algorithm, (long long)n);
    gpumst_forest_free(reference);
}

static void primitives_every_failure(gpumst_context *ctx)
{
    static int64_t in[LEN], expected[LEN], out[LEN];
    static uint64_t offsets[SEGMENTS + 1], indices[SEGMENTS], want_indices[SEGMENTS];
    static int64_t values[SEGMENTS], want_values[SEGMENTS];
    for (int i = 0; i < LEN; i++)
        in[i] = (i * 7919) % 1013 - 500;
    for (int s = 0; s <= SEGMENTS; s++)
        offsets[s] = (uint64_t)s * (LEN / SEGMENTS);
    gpumst_testing_fail_allocation_after(-1);
    CHECK_STATUS(gpumst_scan(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_EXCLUSIVE, in, expected, LEN),
                 GPUMST_OK);
    CHECK_STATUS(gpumst_segmented_argmin(ctx, GPUMST_I64, in, LEN, offsets, SEGMENTS, want_values,
                                         want_indices),
                 GPUMST_OK);
    for (int64_t n = 0;; n++) {
        gpumst_testing_fail_allocation_after(n);
        gpumst_status status = gpumst_scan(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_EXCLUSIVE, in, out, LEN);
        uint64_t refused = gpumst_testing_injected_failures();
        gpumst_testing_fail_allocation_after(-1);
        if (refused == 0) {
            CHECK_STATUS(status, GPUMST_OK);
            CHECK(memcmp(out, expected, sizeof out) == 0, "scan");
            printf("test_alloc_failures: scan: %lld allocations\n", (long long)n);
            break;
        }
        check_refused(ctx, status, "scan", n);
        CHECK_STATUS(gpumst_scan(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_EXCLUSIVE, in, out, LEN), GPUMST_OK);
        CHECK(memcmp(out, expected, sizeof out) == 0, "scan after failure %lld", (long long)n);
    }
    for (int64_t n = 0;; n++) {
        gpumst_testing_fail_allocation_after(n);
        gpumst_status status =
            gpumst_segmented_argmin(ctx, GPUMST_I64, in, LEN, offsets, SEGMENTS, values, indices);
        uint64_t refused = gpumst_testing_injected_failures();
        gpumst_testing_fail_allocation_after(-1);
        if (refused == 0) {
            CHECK_STATUS(status, GPUMST_OK);
            CHECK(memcmp(indices, want_indices, sizeof indices) == 0, "segmented argmin");
            printf("test_alloc_failures: segmented argmin: %lld allocations\n", (long long)n);
            break;
        }
        check_refused(ctx, status, "segmented argmin", n);
        CHECK_STATUS(gpumst_segmented_argmin(ctx, GPUMST_I64, in, LEN, offsets, SEGMENTS, values,
                                             indices),
                     GPUMST_OK);
        CHECK(memcmp(values, want_values, sizeof values) == 0, "after failure %lld", (long long)n);
    }
}

int main(void)
{
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < M; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        U[i] = (uint32_t)(x % N);
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        V[i] = (uint32_t)(x % N);
        W[i] = (uint32_t)(x >> 40) % 50;
    }
    gpumst_options options;
    gpumst_options_init(&options);
    options.tier = GPUMST_TIER_CPU;
    gpumst_context *ctx = NULL;
    char error[512];
    CHECK_STATUS(gpumst_context_create(&options, &ctx, error, sizeof error), GPUMST_OK);
    if (!ctx)
        return check_summary("test_alloc_failures");
    static const gpumst_algorithm algorithms[] = {
        GPUMST_ALGORITHM_AUTO, GPUMST_ALGORITHM_BORUVKA, GPUMST_ALGORITHM_PRIM,
        GPUMST_ALGORITHM_STRUT, GPUMST_ALGORITHM_KRUSKAL,
    };
    for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; a++)
        msf_every_failure(ctx, algorithms[a]);
    primitives_every_failure(ctx);
    gpumst_context_destroy(ctx);
    return check_summary("test_alloc_failures");
}
