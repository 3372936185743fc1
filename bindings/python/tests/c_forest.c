/*
 * The C API's answer for the Python tests (test_files.py): reads a graph file with
 * gpumst_graph_file_read, computes its forest on the CPU tier with gpumst_msf, and
 * prints the edge count, the exact total weight and every edge id, one per line.
 *
 * Usage: c_forest FILE [maximum]
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpumst.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [maximum]\n", argv[0]);
        return 2;
    }
    char why[1024];
    gpumst_graph_file *file = NULL;
    if (gpumst_graph_file_read(argv[1], GPUMST_FORMAT_AUTO, &file, why, sizeof why) != GPUMST_OK) {
        fprintf(stderr, "%s\n", why);
        return 1;
    }
    gpumst_options options;
    gpumst_options_init(&options);
    options.tier = GPUMST_TIER_CPU;
    gpumst_context *ctx = NULL;
    if (gpumst_context_create(&options, &ctx, why, sizeof why) != GPUMST_OK) {
        fprintf(stderr, "%s\n", why);
        gpumst_graph_file_free(file);
        return 1;
    }
    gpumst_graph graph;
    gpumst_graph_file_view(file, &graph);
    uint32_t flags = argc > 2 && strcmp(argv[2], "maximum") == 0 ? GPUMST_MSF_MAXIMUM : 0;
    gpumst_forest *forest = NULL;
    int rc = 0;
    if (gpumst_msf(ctx, &graph, GPUMST_ALGORITHM_AUTO, flags, &forest) != GPUMST_OK) {
        gpumst_context_last_error(ctx, why, sizeof why);
        fprintf(stderr, "%s\n", why);
        rc = 1;
    } else {
        char total[64];
        gpumst_forest_total_weight_string(forest, total, sizeof total, NULL);
        uint64_t n = gpumst_forest_num_edges(forest);
        const uint64_t *edges = gpumst_forest_edges(forest);
        printf("%" PRIu64 " %s\n", n, total);
        for (uint64_t i = 0; i < n; i++)
            printf("%" PRIu64 "\n", edges[i]);
    }
    gpumst_forest_free(forest);
    gpumst_context_destroy(ctx);
    gpumst_graph_file_free(file);
    return rc;
}
