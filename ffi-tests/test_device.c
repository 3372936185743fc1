/*
 * Data already in device memory through the C API: gpumst_msf_device (edge lists and
 * symmetric CSR graphs),
 * gpumst_scan_device, gpumst_argmin_device / gpumst_argmax_device,
 * gpumst_segmented_argmin_device / gpumst_segmented_argmax_device and
 * gpumst_context_native, on every GPU tier found (OpenCL on PoCL in CI, CUDA and
 * OpenCL on the device machine). The device memory is made the way an application
 * makes it: OpenCL buffers in the cl_context gpumst_context_native returns, CUDA
 * allocations in the device's primary context. The driver libraries are opened with
 * dlopen, so the test needs no OpenCL or CUDA headers. Results are compared with the
 * host functions on the same data, and errors with the host path's messages.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Device memory made as an application makes it (device_memory.h). */
#define DEVICE_CHECK(cond, what) CHECK(cond, "%s", what)
#include "device_memory.h"

/* ---- the tests ------------------------------------------------------------------ */

/* A random multigraph with self-loops and repeated weights. */
#define N 3000
#define M 20000

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

/* The message after "function: ", to compare a host and a device message. */
static const char *after_function(const char *message)
{
    const char *colon = strstr(message, ": ");
    return colon ? colon + 2 : message;
}

static void forest_matches_the_host_path(gpumst_context *ctx, struct device *d)
{
    static uint32_t u[M], v[M];
    static float w[M];
    uint64_t state = 42;
    for (int e = 0; e < M; e++) {
        u[e] = (uint32_t)(next_random(&state) % N);
        v[e] = (uint32_t)(next_random(&state) % N);
        w[e] = (float)(next_random(&state) % 500) / 4.0f - 20.0f;
    }
    void *du = device_copy(d, u, sizeof u), *dv = device_copy(d, v, sizeof v);
    void *dw = device_copy(d, w, sizeof w);
    void *ids = device_copy(d, NULL, (N - 1) * sizeof(uint64_t));
    static uint64_t got[N - 1];
    gpumst_device_graph dg;
    CHECK_STATUS(gpumst_device_graph_init(&dg, N, M, du, dv, GPUMST_F32, dw), GPUMST_OK);
    gpumst_graph hg;
    CHECK_STATUS(gpumst_graph_init_edge_list(&hg, N, M, u, v, GPUMST_F32, w), GPUMST_OK);
    const gpumst_algorithm algorithms[] = {GPUMST_ALGORITHM_AUTO, GPUMST_ALGORITHM_BORUVKA,
                                           GPUMST_ALGORITHM_PRIM, GPUMST_ALGORITHM_STRUT};
    for (int flags = 0; flags <= GPUMST_MSF_MAXIMUM; flags += GPUMST_MSF_UNWEIGHTED) {
        for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; a++) {
            gpumst_forest *host = NULL;
            CHECK_STATUS(gpumst_msf(ctx, &hg, algorithms[a], (uint32_t)flags, &host), GPUMST_OK);
            uint64_t count = 0, components = 0;
            gpumst_total_weight total, host_total;
            CHECK_STATUS(gpumst_msf_device(ctx, &dg, algorithms[a], (uint32_t)flags, ids, NULL, &count,
                                           &components, &total),
                         GPUMST_OK);
            CHECK(count == gpumst_forest_num_edges(host), "algorithm %d flags %d: %" PRIu64 " edges",
                  (int)algorithms[a], flags, count);
            CHECK(components == gpumst_forest_num_components(host), "components %" PRIu64, components);
            CHECK_STATUS(gpumst_forest_total_weight(host, &host_total), GPUMST_OK);
            CHECK(total.is_float == host_total.is_float && total.value == host_total.value &&
                      total.exact_low == host_total.exact_low,
                  "total %g, host %g", total.value, host_total.value);
            if (count == gpumst_forest_num_edges(host) && count <= N - 1) {
                device_read(d, ids, got, count * sizeof(uint64_t));
                CHECK(memcmp(got, gpumst_forest_edges(host), count * sizeof(uint64_t)) == 0,
                      "algorithm %d flags %d: the device forest differs from the host's",
                      (int)algorithms[a], flags);
            }
            gpumst_forest_free(host);
        }
    }
    /* The counts may be left out, and the total too. */
    CHECK_STATUS(gpumst_msf_device(ctx, &dg, GPUMST_ALGORITHM_AUTO, 0, ids, NULL, NULL, NULL, NULL),
                 GPUMST_OK);

    /* Component labels on the device from the forest's ids, against the host's. */
    uint64_t forest_edges = 0;
    CHECK_STATUS(gpumst_msf_device(ctx, &dg, GPUMST_ALGORITHM_AUTO, 0, ids, NULL, &forest_edges, NULL, NULL),
                 GPUMST_OK);
    void *dlabels = device_copy(d, NULL, N * sizeof(uint32_t));
    CHECK_STATUS(gpumst_forest_labels_device(ctx, &dg, ids, forest_edges, dlabels, NULL), GPUMST_OK);
    static uint32_t labels[N];
    device_read(d, dlabels, labels, sizeof labels);
    gpumst_forest *labelled = NULL;
    CHECK_STATUS(gpumst_msf(ctx, &hg, GPUMST_ALGORITHM_AUTO, GPUMST_MSF_LABELS, &labelled), GPUMST_OK);
    CHECK(labelled && memcmp(labels, gpumst_forest_labels(labelled), sizeof labels) == 0,
          "the device's labels differ from the host's");
    gpumst_forest_free(labelled);
    CHECK_STATUS(gpumst_forest_labels_device(ctx, &dg, ids, forest_edges, NULL, NULL), GPUMST_INVALID_ARGUMENT);
    device_free(d, dlabels);

    /* Errors: the host path's messages; refused flags and algorithms. */
    char host_message[512], device_message[512];
    uint32_t bad = N + 5;
    uint32_t saved = u[777];
    u[777] = bad;
    void *bad_u = device_copy(d, u, sizeof u);
    u[777] = saved;
    gpumst_device_graph bg = dg;
    bg.u = bad_u;
    CHECK_STATUS(gpumst_msf_device(ctx, &bg, GPUMST_ALGORITHM_AUTO, 0, ids, NULL, NULL, NULL, NULL),
                 GPUMST_INVALID_GRAPH);
    gpumst_context_last_error(ctx, device_message, sizeof device_message);
    gpumst_graph bhg = hg;
    u[777] = bad;
    gpumst_forest *none = NULL;
    CHECK_STATUS(gpumst_msf(ctx, &bhg, GPUMST_ALGORITHM_AUTO, 0, &none), GPUMST_INVALID_GRAPH);
    u[777] = saved;
    gpumst_context_last_error(ctx, host_message, sizeof host_message);
    CHECK(strcmp(after_function(device_message), after_function(host_message)) == 0,
          "device: %s / host: %s", device_message, host_message);
    CHECK(strstr(device_message, "edge 777: u = 3005") != NULL, "%s", device_message);
    CHECK_STATUS(gpumst_msf_device(ctx, &dg, GPUMST_ALGORITHM_AUTO, GPUMST_MSF_LABELS, ids, NULL, NULL,
                                   NULL, NULL),
                 GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_msf_device(ctx, &dg, GPUMST_ALGORITHM_KRUSKAL, 0, ids, NULL, NULL, NULL, NULL),
                 GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_msf_device(ctx, NULL, GPUMST_ALGORITHM_AUTO, 0, ids, NULL, NULL, NULL, NULL),
                 GPUMST_INVALID_ARGUMENT);
    /* Room for too few ids: the device allocation's size is checked. */
    void *short_ids = device_copy(d, NULL, 16);
    CHECK_STATUS(gpumst_msf_device(ctx, &dg, GPUMST_ALGORITHM_AUTO, 0, short_ids, NULL, NULL, NULL,
                                   NULL),
                 GPUMST_INVALID_ARGUMENT);
    gpumst_context_last_error(ctx, device_message, sizeof device_message);
    CHECK(strstr(device_message, "the forest's edge ids") != NULL, "%s", device_message);
    device_free(d, short_ids);
    device_free(d, bad_u);
    device_free(d, du);
    device_free(d, dv);
    device_free(d, dw);
    device_free(d, ids);
}

/* A symmetric CSR of a random multigraph (self-loops once, rows in edge order), in
 * device memory: the forest, an asymmetric graph's message, and an edge list given
 * with the struct_size of callers compiled before CSR graphs. */
static void csr_forest_matches_the_host_path(gpumst_context *ctx, struct device *d)
{
    static uint32_t u[M], v[M], targets[2 * M];
    static int64_t w[M], weights[2 * M];
    static uint64_t offsets[N + 1], fill[N], got[N - 1];
    memset(offsets, 0, sizeof offsets); /* called once per tier */
    uint64_t state = 7;
    for (int e = 0; e < M; e++) {
        u[e] = (uint32_t)(next_random(&state) % N);
        v[e] = e % 11 == 0 ? u[e] : (uint32_t)(next_random(&state) % N);
        w[e] = (int64_t)(next_random(&state) % 300) - 100;
        offsets[u[e] + 1]++;
        if (u[e] != v[e])
            offsets[v[e] + 1]++;
    }
    for (int x = 0; x < N; x++) {
        offsets[x + 1] += offsets[x];
        fill[x] = offsets[x];
    }
    for (int e = 0; e < M; e++) {
        targets[fill[u[e]]] = v[e];
        weights[fill[u[e]]++] = w[e];
        if (u[e] != v[e]) {
            targets[fill[v[e]]] = u[e];
            weights[fill[v[e]]++] = w[e];
        }
    }
    const uint64_t entries = offsets[N];
    void *doffsets = device_copy(d, offsets, sizeof offsets);
    void *dtargets = device_copy(d, targets, entries * sizeof targets[0]);
    void *dweights = device_copy(d, weights, entries * sizeof weights[0]);
    void *ids = device_copy(d, NULL, (N - 1) * sizeof(uint64_t));
    gpumst_device_graph dg;
    CHECK_STATUS(gpumst_device_graph_init_csr(&dg, N, entries, doffsets, dtargets, GPUMST_I64, dweights),
                 GPUMST_OK);
    gpumst_graph hg;
    CHECK_STATUS(gpumst_graph_init_csr(&hg, N, entries, offsets, targets, GPUMST_I64, weights), GPUMST_OK);
    for (int flags = 0; flags <= GPUMST_MSF_MAXIMUM; flags += GPUMST_MSF_UNWEIGHTED) {
        gpumst_forest *host = NULL;
        CHECK_STATUS(gpumst_msf(ctx, &hg, GPUMST_ALGORITHM_AUTO, (uint32_t)flags, &host), GPUMST_OK);
        uint64_t count = 0, components = 0;
        gpumst_total_weight total, host_total;
        CHECK_STATUS(gpumst_msf_device(ctx, &dg, GPUMST_ALGORITHM_AUTO, (uint32_t)flags, ids, NULL, &count,
                                       &components, &total),
                     GPUMST_OK);
        CHECK_STATUS(gpumst_forest_total_weight(host, &host_total), GPUMST_OK);
        CHECK(count == gpumst_forest_num_edges(host) && components == gpumst_forest_num_components(host),
              "CSR flags %d: %" PRIu64 " edges, %" PRIu64 " components", flags, count, components);
        CHECK(total.value == host_total.value && total.exact_low == host_total.exact_low,
              "CSR total %g, host %g", total.value, host_total.value);
        if (count == gpumst_forest_num_edges(host) && count <= N - 1) {
            device_read(d, ids, got, count * sizeof(uint64_t));
            CHECK(memcmp(got, gpumst_forest_edges(host), count * sizeof(uint64_t)) == 0,
                  "CSR flags %d: the device forest differs from the host's", flags);
        }
        gpumst_forest_free(host);
    }

    /* One weight changed in one direction: the host path's message. */
    char host_message[512], device_message[512];
    const uint64_t changed = offsets[N / 2];
    weights[changed] += 1;
    void *dbad = device_copy(d, weights, entries * sizeof weights[0]);
    gpumst_device_graph bg = dg;
    bg.weights = dbad;
    CHECK_STATUS(gpumst_msf_device(ctx, &bg, GPUMST_ALGORITHM_AUTO, 0, ids, NULL, NULL, NULL, NULL),
                 GPUMST_INVALID_GRAPH);
    gpumst_context_last_error(ctx, device_message, sizeof device_message);
    gpumst_forest *none = NULL;
    CHECK_STATUS(gpumst_msf(ctx, &hg, GPUMST_ALGORITHM_AUTO, 0, &none), GPUMST_INVALID_GRAPH);
    gpumst_context_last_error(ctx, host_message, sizeof host_message);
    weights[changed] -= 1;
    CHECK(strcmp(after_function(device_message), after_function(host_message)) == 0, "device: %s / host: %s",
          device_message, host_message);
    CHECK(strstr(device_message, "CSR is not symmetric") != NULL, "%s", device_message);
    bg.kind = 7;
    CHECK_STATUS(gpumst_msf_device(ctx, &bg, GPUMST_ALGORITHM_AUTO, 0, ids, NULL, NULL, NULL, NULL),
                 GPUMST_INVALID_ARGUMENT);

    /* A caller compiled before CSR graphs: its struct ends before `kind`. */
    void *du = device_copy(d, u, sizeof u), *dv = device_copy(d, v, sizeof v);
    gpumst_device_graph old;
    CHECK_STATUS(gpumst_device_graph_init(&old, N, M, du, dv, GPUMST_I64, NULL), GPUMST_OK);
    old.struct_size = offsetof(gpumst_device_graph, kind);
    old.kind = GPUMST_GRAPH_CSR; /* beyond the old struct: not read */
    uint64_t count = 0;
    CHECK_STATUS(gpumst_msf_device(ctx, &old, GPUMST_ALGORITHM_AUTO, 0, ids, NULL, &count, NULL, NULL),
                 GPUMST_OK);
    CHECK(count > 0, "the old-size edge list gave %" PRIu64 " edges", count);
    old.struct_size = offsetof(gpumst_device_graph, kind) - 1;
    CHECK_STATUS(gpumst_msf_device(ctx, &old, GPUMST_ALGORITHM_AUTO, 0, ids, NULL, NULL, NULL, NULL),
                 GPUMST_INVALID_ARGUMENT);
    device_free(d, du);
    device_free(d, dv);
    device_free(d, dbad);
    device_free(d, doffsets);
    device_free(d, dtargets);
    device_free(d, dweights);
    device_free(d, ids);
}

static void primitives_match_the_host_functions(gpumst_context *ctx, struct device *d)
{
    enum { n = 50000, segments = 100 };
    static int64_t data[n], scanned[n], expected[n];
    uint64_t state = 7;
    for (int i = 0; i < n; i++)
        data[i] = (int64_t)(next_random(&state) % 2001) - 1000;
    void *in = device_copy(d, data, sizeof data), *out = device_copy(d, NULL, sizeof data);
    CHECK_STATUS(gpumst_scan_device(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_EXCLUSIVE, in, out, n,
                                    d->native.queue),
                 GPUMST_OK);
    device_read(d, out, scanned, sizeof scanned);
    CHECK_STATUS(gpumst_scan(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_EXCLUSIVE, data, expected, n),
                 GPUMST_OK);
    CHECK(memcmp(scanned, expected, sizeof expected) == 0, "exclusive scan differs");
    /* In place. */
    CHECK_STATUS(gpumst_scan_device(ctx, GPUMST_I64, GPUMST_MAX, GPUMST_INCLUSIVE, in, in, n,
                                    NULL),
                 GPUMST_OK);
    device_read(d, in, scanned, sizeof scanned);
    CHECK_STATUS(gpumst_scan(ctx, GPUMST_I64, GPUMST_MAX, GPUMST_INCLUSIVE, data, expected, n),
                 GPUMST_OK);
    CHECK(memcmp(scanned, expected, sizeof expected) == 0, "in-place max scan differs");

    /* Segmented, by device offsets (one empty segment), into another array. */
    static uint64_t seg_offsets[5] = {0, 1000, 1000, 30000, n};
    void *d_seg = device_copy(d, seg_offsets, sizeof seg_offsets);
    void *d_data = device_copy(d, data, sizeof data);
    CHECK_STATUS(gpumst_segmented_scan_offsets_device(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_EXCLUSIVE, d_data,
                                                      out, n, d_seg, 4, NULL),
                 GPUMST_OK);
    device_read(d, out, scanned, sizeof scanned);
    CHECK_STATUS(gpumst_segmented_scan_offsets(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_EXCLUSIVE, data, expected, n,
                                               seg_offsets, 4),
                 GPUMST_OK);
    CHECK(memcmp(scanned, expected, sizeof expected) == 0, "segmented scan differs");
    seg_offsets[2] = 999; /* decreasing: refused as on the host */
    void *d_bad_seg = device_copy(d, seg_offsets, sizeof seg_offsets);
    CHECK_STATUS(gpumst_segmented_scan_offsets_device(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_EXCLUSIVE, d_data,
                                                      d_data, n, d_bad_seg, 4, NULL),
                 GPUMST_INVALID_ARGUMENT);
    seg_offsets[2] = 1000;
    device_free(d, d_bad_seg);
    device_free(d, d_seg);

    /* Segmented, by device head flags (any nonzero byte), in place. */
    static uint8_t heads[n];
    for (uint64_t i = 0; i < n; i++)
        heads[i] = i % 777 == 5 ? (uint8_t)(1 + i % 200) : 0;
    void *d_heads = device_copy(d, heads, sizeof heads);
    void *d_flagged = device_copy(d, data, sizeof data);
    CHECK_STATUS(gpumst_segmented_scan_flags_device(ctx, GPUMST_I64, GPUMST_MAX, GPUMST_INCLUSIVE, d_flagged,
                                                    d_flagged, d_heads, n, NULL),
                 GPUMST_OK);
    device_read(d, d_flagged, scanned, sizeof scanned);
    CHECK_STATUS(gpumst_segmented_scan_flags(ctx, GPUMST_I64, GPUMST_MAX, GPUMST_INCLUSIVE, data, expected,
                                             heads, n),
                 GPUMST_OK);
    CHECK(memcmp(scanned, expected, sizeof expected) == 0, "segmented scan by flags differs");
    CHECK_STATUS(gpumst_segmented_scan_flags_device(ctx, GPUMST_I64, GPUMST_MAX, GPUMST_INCLUSIVE, d_flagged,
                                                    d_flagged, NULL, n, NULL),
                 GPUMST_INVALID_ARGUMENT);
    device_free(d, d_flagged);
    device_free(d, d_heads);
    device_free(d, d_data);

    void *fresh = device_copy(d, data, sizeof data);
    int64_t value = 0, host_value = 0;
    uint64_t index = 0, host_index = 0;
    CHECK_STATUS(gpumst_argmin_device(ctx, GPUMST_I64, fresh, n, NULL, &value, &index), GPUMST_OK);
    CHECK_STATUS(gpumst_argmin(ctx, GPUMST_I64, data, n, &host_value, &host_index), GPUMST_OK);
    CHECK(value == host_value && index == host_index, "argmin %" PRId64 "@%" PRIu64, value, index);
    CHECK_STATUS(gpumst_argmax_device(ctx, GPUMST_I64, fresh, n, NULL, &value, &index), GPUMST_OK);
    CHECK_STATUS(gpumst_argmax(ctx, GPUMST_I64, data, n, &host_value, &host_index), GPUMST_OK);
    CHECK(value == host_value && index == host_index, "argmax %" PRId64 "@%" PRIu64, value, index);
    /* No elements: the host call's answer. */
    CHECK_STATUS(gpumst_argmax_device(ctx, GPUMST_I64, fresh, 0, NULL, &value, &index), GPUMST_OK);
    CHECK_STATUS(gpumst_argmax(ctx, GPUMST_I64, data, 0, &host_value, &host_index), GPUMST_OK);
    CHECK(value == INT64_MIN && index == GPUMST_EMPTY_SEGMENT && value == host_value && index == host_index,
          "argmax of 0 elements %" PRId64 "@%" PRIu64, value, index);
    CHECK_STATUS(gpumst_argmin_device(ctx, GPUMST_I64, NULL, 0, NULL, &value, &index), GPUMST_OK);
    CHECK(value == INT64_MAX && index == GPUMST_EMPTY_SEGMENT, "argmin of 0 elements %" PRId64 "@%" PRIu64, value,
          index);

    static uint64_t offsets[segments + 1], indices[segments], host_indices[segments];
    static int64_t values[segments], host_values[segments];
    for (int s = 0; s <= segments; s++)
        offsets[s] = (uint64_t)s * n / segments;
    offsets[3] = offsets[2]; /* an empty segment */
    void *d_offsets = device_copy(d, offsets, sizeof offsets);
    void *d_values = device_copy(d, NULL, sizeof values);
    void *d_indices = device_copy(d, NULL, sizeof indices);
    CHECK_STATUS(gpumst_segmented_argmin_device(ctx, GPUMST_I64, fresh, n, d_offsets, segments, d_values,
                                                d_indices, NULL),
                 GPUMST_OK);
    device_read(d, d_values, values, sizeof values);
    device_read(d, d_indices, indices, sizeof indices);
    CHECK_STATUS(gpumst_segmented_argmin(ctx, GPUMST_I64, data, n, offsets, segments, host_values,
                                         host_indices),
                 GPUMST_OK);
    CHECK(memcmp(values, host_values, sizeof values) == 0 &&
              memcmp(indices, host_indices, sizeof indices) == 0,
          "segmented argmin differs");
    CHECK_STATUS(gpumst_segmented_argmax_device(ctx, GPUMST_I64, fresh, n, d_offsets, segments, d_values,
                                                d_indices, NULL),
                 GPUMST_OK);
    device_read(d, d_values, values, sizeof values);
    device_read(d, d_indices, indices, sizeof indices);
    CHECK_STATUS(gpumst_segmented_argmax(ctx, GPUMST_I64, data, n, offsets, segments, host_values,
                                         host_indices),
                 GPUMST_OK);
    CHECK(memcmp(values, host_values, sizeof values) == 0 &&
              memcmp(indices, host_indices, sizeof indices) == 0,
          "segmented argmax differs");
    /* Offsets past the data are refused, as on the host. */
    offsets[segments] = n + 1;
    void *bad_offsets = device_copy(d, offsets, sizeof offsets);
    CHECK_STATUS(gpumst_segmented_argmin_device(ctx, GPUMST_I64, fresh, n, bad_offsets, segments,
                                                d_values, d_indices, NULL),
                 GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_segmented_argmax_device(ctx, GPUMST_I64, fresh, n, bad_offsets, segments,
                                                d_values, d_indices, NULL),
                 GPUMST_INVALID_ARGUMENT);
    device_free(d, bad_offsets);
    device_free(d, d_offsets);
    device_free(d, d_values);
    device_free(d, d_indices);
    device_free(d, fresh);
    device_free(d, in);
    device_free(d, out);
}

/* A CUDA application's own context (not the primary one): memory made in it is
 * refused by a gpumst context on the primary context, with a reason, and used by one
 * created on it through options.cuda_context. */
static void adopted_cuda_context(void)
{
    gpumst_options options;
    gpumst_options_init(&options);
    options.tier = GPUMST_TIER_CUDA;
    gpumst_context *primary = NULL;
    char why[512] = "";
    if (gpumst_context_create(&options, &primary, why, sizeof why) != GPUMST_OK) {
        printf("test_device: SKIPPED options.cuda_context: %s\n", why);
        return;
    }
    struct device d;
    CHECK(open_device(&d, primary), "libcuda's functions");
    void *own = NULL;
    CHECK(d.cu_ctx_create && d.cu_ctx_create(&own, 0, 0) == 0 && own != NULL, "cuCtxCreate");
    if (own == NULL) {
        gpumst_context_destroy(primary);
        device_close(&d);
        return;
    }
    /* The test graph's memory, made in the application's context. */
    static const uint32_t u[] = {0, 1, 2, 3, 0}, v[] = {1, 2, 3, 0, 2};
    static const uint32_t w[] = {4, 3, 2, 1, 5};
    CHECK(d.cu_set_current(own) == 0, "cuCtxSetCurrent");
    void *du = device_copy(&d, u, sizeof u), *dv = device_copy(&d, v, sizeof v);
    void *dw = device_copy(&d, w, sizeof w), *ids = device_copy(&d, NULL, 3 * sizeof(uint64_t));
    gpumst_device_graph g;
    gpumst_device_graph_init(&g, 4, 5, du, dv, GPUMST_U32, dw);
    char message[512];
    CHECK_STATUS(gpumst_msf_device(primary, &g, GPUMST_ALGORITHM_AUTO, 0, ids, NULL, NULL, NULL, NULL),
                 GPUMST_INVALID_ARGUMENT);
    gpumst_context_last_error(primary, message, sizeof message);
    CHECK(strstr(message, "another CUDA context") != NULL, "%s", message);

    options.cuda_context = own;
    gpumst_context *adopted = NULL;
    CHECK_STATUS(gpumst_context_create(&options, &adopted, why, sizeof why), GPUMST_OK);
    uint64_t count = 0, got[3] = {0, 0, 0};
    gpumst_total_weight total;
    CHECK_STATUS(gpumst_msf_device(adopted, &g, GPUMST_ALGORITHM_AUTO, 0, ids, NULL, &count, NULL, &total),
                 GPUMST_OK);
    CHECK(d.cu_set_current(own) == 0, "cuCtxSetCurrent");
    device_read(&d, ids, got, sizeof got);
    /* By weight: 3 (1), 2 (2), 1 (3) join all four vertices; total 6. */
    CHECK(count == 3 && got[0] == 1 && got[1] == 2 && got[2] == 3 && total.exact_low == 6,
          "%" PRIu64 " edges: %" PRIu64 " %" PRIu64 " %" PRIu64 ", total %" PRIu64, count, got[0], got[1],
          got[2], total.exact_low);
    gpumst_native native;
    CHECK_STATUS(gpumst_context_native(adopted, &native), GPUMST_OK);
    CHECK(native.context == own, "the adopted context is the one gpumst uses");
    gpumst_context_destroy(adopted);
    CHECK(d.cu_set_current(own) == 0, "cuCtxSetCurrent");
    device_free(&d, du);
    device_free(&d, dv);
    device_free(&d, dw);
    device_free(&d, ids);
    CHECK(d.cu_ctx_destroy(own) == 0, "cuCtxDestroy");
    gpumst_context_destroy(primary);
    device_close(&d);
    printf("test_device: options.cuda_context tested\n");
}

static void cpu_contexts_refuse_device_memory(void)
{
    gpumst_options options;
    gpumst_options_init(&options);
    options.tier = GPUMST_TIER_CPU;
    gpumst_context *ctx = NULL;
    CHECK_STATUS(gpumst_context_create(&options, &ctx, NULL, 0), GPUMST_OK);
    gpumst_native native;
    CHECK_STATUS(gpumst_context_native(ctx, &native), GPUMST_BACKEND_UNAVAILABLE);
    gpumst_device_graph dg;
    gpumst_device_graph_init(&dg, 2, 1, (void *)0x1000, (void *)0x2000, GPUMST_U32, NULL);
    CHECK_STATUS(gpumst_msf_device(ctx, &dg, GPUMST_ALGORITHM_AUTO, 0, (void *)0x3000, NULL, NULL, NULL,
                                   NULL),
                 GPUMST_BACKEND_UNAVAILABLE);
    gpumst_context_destroy(ctx);
}

/* A GPU tier capped by options.device_memory_limit solves a graph larger than the cap a
 * partition of the edges at a time: the forest must be the CPU tier's, edge for edge;
 * a graph whose vertices leave no room under the cap is GPUMST_OUT_OF_MEMORY. */
static void device_memory_limit(void)
{
    gpumst_context *cpu = open_cpu_context();
    if (!cpu)
        return;
    static const gpumst_tier tiers[] = {GPUMST_TIER_OPENCL, GPUMST_TIER_CUDA};
    enum { CAPPED_N = 1000, CAPPED_M = 40000, HUGE_N = 200000 };
    static uint32_t u[CAPPED_M], v[CAPPED_M], w[CAPPED_M];
    uint64_t x = 12345;
    for (size_t e = 0; e < CAPPED_M; e++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        u[e] = (uint32_t)(x % CAPPED_N);
        v[e] = (uint32_t)((x >> 20) % CAPPED_N);
        w[e] = (uint32_t)((x >> 40) % 40);
    }
    gpumst_graph graph;
    CHECK_STATUS(gpumst_graph_init_edge_list(&graph, CAPPED_N, CAPPED_M, u, v, GPUMST_U32, w), GPUMST_OK);
    gpumst_forest *expected = NULL;
    CHECK_STATUS(gpumst_msf(cpu, &graph, GPUMST_ALGORITHM_AUTO, 0, &expected), GPUMST_OK);
    if (!expected) {
        gpumst_context_destroy(cpu);
        return;
    }
    for (size_t t = 0; t < sizeof tiers / sizeof tiers[0]; t++) {
        gpumst_options options;
        gpumst_options_init(&options);
        options.tier = tiers[t];
        options.device_memory_limit = 400000;
        gpumst_context *capped = NULL;
        char why[512];
        if (gpumst_context_create(&options, &capped, why, sizeof why) != GPUMST_OK) {
            printf("test_device: SKIPPED device_memory_limit on tier %d: %s\n", (int)tiers[t], why);
            continue;
        }
        gpumst_forest *forest = NULL;
        CHECK_STATUS(gpumst_msf(capped, &graph, GPUMST_ALGORITHM_AUTO, 0, &forest), GPUMST_OK);
        if (forest) {
            size_t count = gpumst_forest_num_edges(forest);
            CHECK(count == gpumst_forest_num_edges(expected), "tier %d: %zu forest edges", (int)tiers[t], count);
            CHECK(count == gpumst_forest_num_edges(expected) &&
                      memcmp(gpumst_forest_edges(forest), gpumst_forest_edges(expected), count * 8) == 0,
                  "tier %d: the capped forest is the CPU tier's", (int)tiers[t]);
            gpumst_forest_free(forest);
        }
        gpumst_graph huge;
        CHECK_STATUS(gpumst_graph_init_edge_list(&huge, HUGE_N, CAPPED_M, u, v, GPUMST_U32, w), GPUMST_OK);
        forest = NULL;
        CHECK_STATUS(gpumst_msf(capped, &huge, GPUMST_ALGORITHM_AUTO, 0, &forest), GPUMST_OUT_OF_MEMORY);
        gpumst_forest_free(forest);
        char error[512];
        gpumst_context_last_error(capped, error, sizeof error);
        CHECK(strstr(error, "needs about") != NULL, "the message gives the sizes: %s", error);
        gpumst_context_destroy(capped);
    }
    gpumst_forest_free(expected);
    gpumst_context_destroy(cpu);
}

int main(void)
{
    cpu_contexts_refuse_device_memory();
    const gpumst_tier tiers[] = {GPUMST_TIER_OPENCL, GPUMST_TIER_CUDA};
    const char *names[] = {"opencl", "cuda"};
    for (int t = 0; t < 2; t++) {
        gpumst_options options;
        gpumst_options_init(&options);
        options.tier = tiers[t];
        gpumst_context *ctx = NULL;
        char why[512] = "";
        if (gpumst_context_create(&options, &ctx, why, sizeof why) != GPUMST_OK) {
            printf("test_device: SKIPPED the %s tier: %s\n", names[t], why);
            continue;
        }
        struct device d;
        if (!open_device(&d, ctx)) {
            CHECK(0, "the %s tier opened, but its driver library's functions could not be loaded", names[t]);
        } else {
            forest_matches_the_host_path(ctx, &d);
            csr_forest_matches_the_host_path(ctx, &d);
            primitives_match_the_host_functions(ctx, &d);
            printf("test_device: the %s tier tested\n", names[t]);
        }
        gpumst_context_destroy(ctx);
        device_close(&d);
    }
    adopted_cuda_context();
    device_memory_limit();
    return check_summary("test_device");
}
