/*
 * Graph files through the C API: gpumst_graph_file_read with every format and
 * compression the command line reads, the edge-list view over the library's arrays,
 * an MSF of a loaded graph, and the errors (missing file, malformed line, bad format,
 * NULL arguments, a short error buffer).
 *
 * The sample files are those of tests/data (their contents are spelled out in
 * tests/io.rs); run.sh passes the directory in GPUMST_TEST_DATA.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char path_buf[4096];

static const char *data_path(const char *name)
{
    const char *dir = getenv("GPUMST_TEST_DATA");
    snprintf(path_buf, sizeof path_buf, "%s/%s", dir ? dir : "tests/data", name);
    return path_buf;
}

/* small.gr: edges (0,1,7) (1,2,3) (0,1,7) (3,3,2) (1,0,5) (4,2,1) over 5 vertices. */
static const uint32_t GR_U[] = {0, 1, 0, 3, 1, 4};
static const uint32_t GR_V[] = {1, 2, 1, 3, 0, 2};
static const uint32_t GR_W[] = {7, 3, 7, 2, 5, 1};

static void dimacs_every_compression(gpumst_context *ctx)
{
    const char *names[] = {"small.gr", "small.gr.gz", "small.gr.xz"};
    for (size_t i = 0; i < 3; i++) {
        gpumst_graph_file *file = NULL;
        char why[256] = "unchanged";
        CHECK_STATUS(gpumst_graph_file_read(data_path(names[i]), GPUMST_FORMAT_AUTO, &file, why, sizeof why), GPUMST_OK);
        CHECK(why[0] == '\0', "success leaves an empty message, got '%s'", why);
        if (!file)
            continue;
        CHECK(gpumst_graph_file_format(file) == GPUMST_FORMAT_DIMACS, "%s format", names[i]);
        CHECK(gpumst_graph_file_vertex_base(file) == 1, "%s base", names[i]);
        gpumst_graph g;
        CHECK_STATUS(gpumst_graph_file_view(file, &g), GPUMST_OK);
        CHECK(g.kind == GPUMST_GRAPH_EDGE_LIST && g.num_vertices == 5 && g.num_edges == 6, "%s shape", names[i]);
        CHECK(g.weight_type == GPUMST_U32 && g.weights != NULL, "%s weights", names[i]);
        CHECK(memcmp(g.u, GR_U, sizeof GR_U) == 0 && memcmp(g.v, GR_V, sizeof GR_V) == 0, "%s ends", names[i]);
        CHECK(memcmp(g.weights, GR_W, sizeof GR_W) == 0, "%s weight values", names[i]);
        /* The view is an ordinary graph: minimum forest {1,4,5} weighing 9, maximum
         * {0,1,5} weighing 11; vertex 3 is alone. */
        gpumst_forest *f = NULL;
        CHECK_STATUS(gpumst_msf(ctx, &g, GPUMST_ALGORITHM_AUTO, 0, &f), GPUMST_OK);
        const uint64_t *e = gpumst_forest_edges(f);
        CHECK(gpumst_forest_num_edges(f) == 3 && e[0] == 1 && e[1] == 4 && e[2] == 5, "%s forest", names[i]);
        CHECK(gpumst_forest_num_components(f) == 2, "%s components", names[i]);
        gpumst_forest_free(f);
        CHECK_STATUS(gpumst_msf(ctx, &g, GPUMST_ALGORITHM_KRUSKAL, GPUMST_MSF_MAXIMUM, &f), GPUMST_OK);
        e = gpumst_forest_edges(f);
        CHECK(gpumst_forest_num_edges(f) == 3 && e[0] == 0 && e[1] == 1 && e[2] == 5, "%s maximum forest", names[i]);
        gpumst_total_weight t;
        gpumst_forest_total_weight(f, &t);
        CHECK(t.exact_low == 11, "%s maximum total %" PRIu64, names[i], t.exact_low);
        gpumst_forest_free(f);
        gpumst_graph_file_free(file);
    }
}

static void other_formats(void)
{
    struct {
        const char *name;
        gpumst_file_format format;
        gpumst_file_format read_as;
        uint64_t vertices, edges;
        gpumst_dtype weight_type; /* -1: no weights */
    } cases[] = {
        {"sym.mtx.xz", GPUMST_FORMAT_AUTO, GPUMST_FORMAT_MTX, 4, 4, GPUMST_I64},
        {"general.mtx.gz", GPUMST_FORMAT_AUTO, GPUMST_FORMAT_MTX, 0, 0, GPUMST_F64},
        {"pattern.mtx", GPUMST_FORMAT_MTX, GPUMST_FORMAT_MTX, 0, 0, -1},
        {"small.txt", GPUMST_FORMAT_AUTO, GPUMST_FORMAT_EDGELIST, 6, 4, GPUMST_U32},
        {"unweighted.el", GPUMST_FORMAT_EDGELIST, GPUMST_FORMAT_EDGELIST, 4, 3, -1},
        {"small.egr.xz", GPUMST_FORMAT_AUTO, GPUMST_FORMAT_EGR, 0, 0, GPUMST_I32},
        {"unweighted.egr", GPUMST_FORMAT_EGR, GPUMST_FORMAT_EGR, 0, 0, -1},
        {"small.gmst", GPUMST_FORMAT_AUTO, GPUMST_FORMAT_GMST, 5, 6, GPUMST_U32},
        {"general.gmst.gz", GPUMST_FORMAT_GMST, GPUMST_FORMAT_GMST, 0, 0, GPUMST_F64},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpumst_graph_file *file = NULL;
        char why[256];
        CHECK_STATUS(gpumst_graph_file_read(data_path(cases[i].name), cases[i].format, &file, why, sizeof why), GPUMST_OK);
        if (!file) {
            fprintf(stderr, "%s: %s\n", cases[i].name, why);
            continue;
        }
        CHECK(gpumst_graph_file_format(file) == cases[i].read_as, "%s read as %d", cases[i].name, (int)gpumst_graph_file_format(file));
        gpumst_graph g;
        CHECK_STATUS(gpumst_graph_file_view(file, &g), GPUMST_OK);
        if (cases[i].vertices)
            CHECK(g.num_vertices == cases[i].vertices && g.num_edges == cases[i].edges, "%s shape %" PRIu64 " %" PRIu64, cases[i].name, g.num_vertices, g.num_edges);
        if (cases[i].weight_type < 0)
            CHECK(g.weights == NULL, "%s has no weights", cases[i].name);
        else
            CHECK(g.weights != NULL && g.weight_type == cases[i].weight_type, "%s weight type %d", cases[i].name, (int)g.weight_type);
        gpumst_graph_file_free(file);
    }
}

static void errors(void)
{
    char why[512];
    gpumst_graph_file *file = (gpumst_graph_file *)why; /* must be reset to NULL */
    CHECK_STATUS(gpumst_graph_file_read("/nonexistent/graph.gr", GPUMST_FORMAT_AUTO, &file, why, sizeof why), GPUMST_INVALID_ARGUMENT);
    CHECK(file == NULL, "out reset on failure");
    CHECK_CONTAINS(why, "/nonexistent/graph.gr");

    /* A malformed line: the message names the file and the line. */
    char tmp[] = "/tmp/gpumst-test-files-XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) {
        const char text[] = "p sp 3 2\na 1 2 5\na 2 x 5\n";
        CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1), "write");
        close(fd);
        CHECK_STATUS(gpumst_graph_file_read(tmp, GPUMST_FORMAT_DIMACS, &file, why, sizeof why), GPUMST_INVALID_GRAPH);
        CHECK(file == NULL, "no file on a parse error");
        char where[4200];
        snprintf(where, sizeof where, "%s:3:", tmp);
        CHECK_CONTAINS(why, where);
        /* A short buffer gets a truncated, NUL-terminated message. */
        char small[6];
        memset(small, 'x', sizeof small);
        CHECK_STATUS(gpumst_graph_file_read(tmp, GPUMST_FORMAT_DIMACS, &file, small, sizeof small), GPUMST_INVALID_GRAPH);
        CHECK(memchr(small, '\0', sizeof small) != NULL, "truncated message is terminated");
        CHECK_STATUS(gpumst_graph_file_read(tmp, GPUMST_FORMAT_DIMACS, &file, NULL, 0), GPUMST_INVALID_GRAPH);
        unlink(tmp);
    }
    /* A NUL byte quoted from the file is shown escaped, so the message is not cut
     * (found by fuzzing). */
    char nul[] = "/tmp/gpumst-test-files-XXXXXX";
    fd = mkstemp(nul);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) {
        const char text[] = "a\0b 1 2\n";
        CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1), "write");
        close(fd);
        CHECK_STATUS(gpumst_graph_file_read(nul, GPUMST_FORMAT_EDGELIST, &file, why, sizeof why), GPUMST_INVALID_GRAPH);
        CHECK_CONTAINS(why, "'a\\u{0}b 1 2'");
        unlink(nul);
    }
    CHECK_STATUS(gpumst_graph_file_read(data_path("small.gr"), 42, &file, why, sizeof why), GPUMST_INVALID_ARGUMENT);
    CHECK_CONTAINS(why, "format 42");
    CHECK_STATUS(gpumst_graph_file_read(NULL, GPUMST_FORMAT_AUTO, &file, why, sizeof why), GPUMST_INVALID_ARGUMENT);
    CHECK_CONTAINS(why, "path is NULL");
    CHECK_STATUS(gpumst_graph_file_read(data_path("small.gr"), GPUMST_FORMAT_AUTO, NULL, why, sizeof why), GPUMST_INVALID_ARGUMENT);
    gpumst_graph g;
    CHECK_STATUS(gpumst_graph_file_view(NULL, &g), GPUMST_INVALID_ARGUMENT);
    CHECK(gpumst_graph_file_format(NULL) == GPUMST_FORMAT_AUTO && gpumst_graph_file_vertex_base(NULL) == 0, "NULL file");
    CHECK_STATUS(gpumst_graph_file_read(data_path("small.gr"), GPUMST_FORMAT_AUTO, &file, why, sizeof why), GPUMST_OK);
    CHECK_STATUS(gpumst_graph_file_view(file, NULL), GPUMST_INVALID_ARGUMENT);
    gpumst_graph_file_free(file);
    gpumst_graph_file_free(NULL);
}

int main(void)
{
    gpumst_context *ctx = open_cpu_context();
    if (!ctx)
        return check_summary("test_files");
    dimacs_every_compression(ctx);
    other_formats();
    errors();
    gpumst_context_destroy(ctx);
    return check_summary("test_files");
}
