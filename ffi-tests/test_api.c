/*
 * The non-primitive C API: version, status and tier names, options, contexts,
 * device queries, the probe report, and every function called with a NULL context.
 *
 * run.sh builds this program twice: against libgpumst.so and against libgpumst.a.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpumst.h"

static void test_version(void)
{
    char expected[64];
    snprintf(expected, sizeof expected, "%d.%d.%d", GPUMST_VERSION_MAJOR, GPUMST_VERSION_MINOR,
             GPUMST_VERSION_PATCH);
    const char *version = gpumst_version();
    CHECK(version != NULL, "gpumst_version() returned NULL");
    if (version != NULL) {
        CHECK(strcmp(version, expected) == 0, "gpumst_version() = \"%s\", header macros say \"%s\"",
              version, expected);
        /* A static string: the same pointer every time. */
        CHECK(gpumst_version() == version, "gpumst_version() is not a stable static string");
    }
}

static void test_status_strings(void)
{
    static const struct {
        gpumst_status status;
        const char *name;
    } known[] = {
        {GPUMST_OK, "ok"},
        {GPUMST_INVALID_ARGUMENT, "invalid argument"},
        {GPUMST_INVALID_GRAPH, "invalid graph"},
        {GPUMST_BACKEND_UNAVAILABLE, "backend unavailable"},
        {GPUMST_OUT_OF_MEMORY, "out of memory"},
        {GPUMST_DEVICE_ERROR, "device error"},
        {GPUMST_INTERNAL, "internal error"},
    };
    CHECK(GPUMST_OK == 0, "GPUMST_OK is %d", GPUMST_OK);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const char *name = gpumst_status_string(known[i].status);
        CHECK(name != NULL && strcmp(name, known[i].name) == 0,
              "gpumst_status_string(%d) = \"%s\", expected \"%s\"", (int)known[i].status,
              name ? name : "(null)", known[i].name);
    }
    const gpumst_status unknown[] = {7, -1, 42, INT32_MAX, INT32_MIN};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *name = gpumst_status_string(unknown[i]);
        CHECK(name != NULL && strcmp(name, "unknown status") == 0,
              "gpumst_status_string(%d) = \"%s\", expected \"unknown status\"", (int)unknown[i],
              name ? name : "(null)");
    }
}

static void test_tier_names(void)
{
    static const struct {
        gpumst_tier tier;
        const char *name;
    } known[] = {
        {GPUMST_TIER_AUTO, "auto"},
        {GPUMST_TIER_CPU, "cpu"},
        {GPUMST_TIER_OPENCL, "opencl"},
        {GPUMST_TIER_CUDA, "cuda"},
        {4, "unknown"},
        {99, "unknown"},
        {-1, "unknown"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const char *name = gpumst_tier_name(known[i].tier);
        CHECK(name != NULL && strcmp(name, known[i].name) == 0,
              "gpumst_tier_name(%d) = \"%s\", expected \"%s\"", (int)known[i].tier,
              name ? name : "(null)", known[i].name);
    }
}

static void test_options_init(void)
{
    gpumst_options options;
    memset(&options, 0xAB, sizeof options);
    CHECK_STATUS(gpumst_options_init(&options), GPUMST_OK);
    CHECK(options.struct_size == sizeof(gpumst_options), "struct_size = %zu, expected %zu",
          options.struct_size, sizeof(gpumst_options));
    CHECK(options.tier == GPUMST_TIER_AUTO, "default tier = %d", (int)options.tier);
    CHECK(options.device_index == 0, "default device_index = %u", (unsigned)options.device_index);
    CHECK(options.cpu_threads == 0, "default cpu_threads = %u", (unsigned)options.cpu_threads);
    CHECK_STATUS(gpumst_options_init(NULL), GPUMST_INVALID_ARGUMENT);
}

/* Device name: length query, full copy, truncation. Returns the full name (malloc'd). */
static char *check_device_name(gpumst_context *ctx)
{
    size_t length = 0;
    CHECK_STATUS(gpumst_context_device_name(ctx, NULL, 0, &length), GPUMST_OK);
    CHECK(length > 0, "device name length is 0");
    /* Length only is optional too. */
    CHECK_STATUS(gpumst_context_device_name(ctx, NULL, 0, NULL), GPUMST_OK);

    char *full = malloc(length + 1);
    CHECK(full != NULL, "malloc");
    if (full == NULL)
        return NULL;
    memset(full, 'X', length + 1);
    size_t length2 = 0;
    CHECK_STATUS(gpumst_context_device_name(ctx, full, length + 1, &length2), GPUMST_OK);
    CHECK(length2 == length, "length changed between calls: %zu vs %zu", length2, length);
    CHECK(full[length] == '\0', "device name not NUL-terminated in an exact-size buffer");
    CHECK(strlen(full) == length, "strlen(name) = %zu, reported length %zu", strlen(full), length);

    /* Truncation: 5 bytes of room -> at most 4 characters and a NUL, nothing beyond. */
    char small[16];
    memset(small, 'X', sizeof small);
    size_t length3 = 0;
    CHECK_STATUS(gpumst_context_device_name(ctx, small, 5, &length3), GPUMST_OK);
    CHECK(length3 == length, "truncated call reported length %zu, expected %zu", length3, length);
    CHECK(memchr(small, '\0', 5) != NULL, "truncated name not NUL-terminated within capacity");
    CHECK(strlen(small) <= 4 && strncmp(small, full, strlen(small)) == 0,
          "truncated name \"%s\" is not a prefix of \"%s\"", small, full);
    if (length >= 4)
        CHECK(strlen(small) == 4 || (unsigned char)full[strlen(small)] >= 0x80,
              "ASCII name truncated to %zu bytes instead of 4", strlen(small));
    CHECK(small[5] == 'X', "device_name wrote past capacity");

    /* Capacity 1: just the NUL. */
    char one[2] = {'X', 'X'};
    CHECK_STATUS(gpumst_context_device_name(ctx, one, 1, NULL), GPUMST_OK);
    CHECK(one[0] == '\0' && one[1] == 'X', "capacity 1 must write only a NUL");

    /* A NULL buffer with a non-zero capacity is an argument error. */
    CHECK_STATUS(gpumst_context_device_name(ctx, NULL, 8, &length3), GPUMST_INVALID_ARGUMENT);
    char message[256];
    gpumst_context_last_error(ctx, message, sizeof message);
    CHECK_CONTAINS(message, "buffer is NULL");
    return full;
}

static void test_default_context(void)
{
    gpumst_context *ctx = NULL;
    char error[256] = "untouched";
    CHECK_STATUS(gpumst_context_create(NULL, &ctx, error, sizeof error), GPUMST_OK);
    CHECK(ctx != NULL, "context_create succeeded but *out is NULL (error: %s)", error);
    if (ctx == NULL)
        return;

    gpumst_tier tier = -1;
    CHECK_STATUS(gpumst_context_tier(ctx, &tier), GPUMST_OK);
    /* AUTO ends on the CPU where there is no GPU; GPUMST_FFI_EXPECT_TIER names the tier
     * it must pick on a machine with one (scripts/device.sh sets "cuda"). */
    const char *expected = getenv("GPUMST_FFI_EXPECT_TIER");
    if (expected == NULL || expected[0] == '\0')
        expected = "cpu";
    CHECK(strcmp(gpumst_tier_name(tier), expected) == 0,
          "default context tier = %d (%s), expected %s", (int)tier, gpumst_tier_name(tier),
          expected);
    CHECK(tier != GPUMST_TIER_AUTO, "context_tier must never be AUTO");

    uint64_t bytes = 0;
    CHECK_STATUS(gpumst_context_device_memory(ctx, &bytes), GPUMST_OK);
    CHECK(bytes > 0, "device memory is 0");
    CHECK(bytes >= (uint64_t)64 << 20, "device memory %llu bytes is implausibly small",
          (unsigned long long)bytes);

    char *name = check_device_name(ctx);
    free(name);

    /* A fresh context has no error: length 0 and an empty string. */
    char message[64];
    memset(message, 'X', sizeof message);
    /* (device_name above failed once on purpose, so use a new context for this.) */
    gpumst_context *fresh = NULL;
    CHECK_STATUS(gpumst_context_create(NULL, &fresh, NULL, 0), GPUMST_OK);
    if (fresh != NULL) {
        CHECK(gpumst_context_last_error(fresh, message, sizeof message) == 0,
              "fresh context has a last error");
        CHECK(message[0] == '\0', "fresh context's last error is not empty: \"%.20s\"", message);
        CHECK(gpumst_context_last_error(fresh, NULL, 0) == 0, "fresh context: length query != 0");
        /* Output pointers NULL are argument errors, not crashes. */
        CHECK_STATUS(gpumst_context_tier(fresh, NULL), GPUMST_INVALID_ARGUMENT);
        gpumst_context_last_error(fresh, message, sizeof message);
        CHECK_CONTAINS(message, "tier is NULL");
        CHECK_STATUS(gpumst_context_device_memory(fresh, NULL), GPUMST_INVALID_ARGUMENT);
        gpumst_context_last_error(fresh, message, sizeof message);
        CHECK_CONTAINS(message, "bytes is NULL");
        gpumst_context_destroy(fresh);
    }
    gpumst_context_destroy(ctx);
}

static void test_cpu_context(void)
{
    gpumst_options options;
    CHECK_STATUS(gpumst_options_init(&options), GPUMST_OK);
    options.tier = GPUMST_TIER_CPU;
    options.cpu_threads = 2;
    gpumst_context *ctx = NULL;
    char error[256] = "";
    CHECK_STATUS(gpumst_context_create(&options, &ctx, error, sizeof error), GPUMST_OK);
    CHECK(ctx != NULL, "CPU context not created: %s", error);
    if (ctx == NULL)
        return;
    gpumst_tier tier = -1;
    CHECK_STATUS(gpumst_context_tier(ctx, &tier), GPUMST_OK);
    CHECK(tier == GPUMST_TIER_CPU, "forced CPU context reports tier %d", (int)tier);
    char *name = check_device_name(ctx);
    /* The CPU tier names its thread count: evidence that cpu_threads was applied. */
    if (name != NULL)
        CHECK_CONTAINS(name, "2 threads");
    free(name);
    uint64_t bytes = 0;
    CHECK_STATUS(gpumst_context_device_memory(ctx, &bytes), GPUMST_OK);
    CHECK(bytes > 0, "device memory is 0");

    /* The context works: a tiny scan. */
    const int32_t in[4] = {1, 2, 3, 4};
    int32_t out[4] = {0, 0, 0, 0};
    CHECK_STATUS(gpumst_scan(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_EXCLUSIVE, in, out, 4), GPUMST_OK);
    CHECK(out[0] == 0 && out[1] == 1 && out[2] == 3 && out[3] == 6, "exclusive sum = %d %d %d %d",
          out[0], out[1], out[2], out[3]);
    gpumst_context_destroy(ctx);

    /* Device index is ignored by the CPU tier. */
    options.device_index = 7;
    options.cpu_threads = 1;
    ctx = NULL;
    CHECK_STATUS(gpumst_context_create(&options, &ctx, NULL, 0), GPUMST_OK);
    CHECK(ctx != NULL, "CPU context with device_index 7 not created");
    gpumst_context_destroy(ctx);

    /* A larger struct_size (a caller built against a newer header) is accepted. */
    struct {
        gpumst_options base;
        uint64_t future_field;
    } bigger;
    memset(&bigger, 0, sizeof bigger);
    CHECK_STATUS(gpumst_options_init(&bigger.base), GPUMST_OK);
    bigger.base.struct_size = sizeof bigger;
    bigger.base.tier = GPUMST_TIER_CPU;
    ctx = NULL;
    CHECK_STATUS(gpumst_context_create(&bigger.base, &ctx, NULL, 0), GPUMST_OK);
    CHECK(ctx != NULL, "context with a larger struct_size not created");
    gpumst_context_destroy(ctx);
}

static void test_probe_report(void)
{
    size_t length = 0;
    CHECK_STATUS(gpumst_probe_report(NULL, 0, &length), GPUMST_OK);
    CHECK(length > 2, "probe report length %zu", length);
    char *json = malloc(length + 1);
    CHECK(json != NULL, "malloc");
    if (json == NULL)
        return;
    size_t length2 = 0;
    CHECK_STATUS(gpumst_probe_report(json, length + 1, &length2), GPUMST_OK);
    CHECK(length2 == length, "probe report length changed: %zu vs %zu", length2, length);
    CHECK(strlen(json) == length, "strlen(report) = %zu, reported %zu", strlen(json), length);
    CHECK(json[0] == '{', "probe report does not start with '{': %.40s", json);
    CHECK(json[length - 1] == '}', "probe report does not end with '}'");
    CHECK_CONTAINS(json, "\"cuda\"");
    CHECK_CONTAINS(json, "\"opencl\"");

    char small[8];
    memset(small, 'X', sizeof small);
    CHECK_STATUS(gpumst_probe_report(small, 4, NULL), GPUMST_OK);
    CHECK(small[3] == '\0' && strncmp(small, json, 3) == 0 && small[4] == 'X',
          "probe report truncated to 4 bytes is wrong: \"%.8s\"", small);
    CHECK_STATUS(gpumst_probe_report(NULL, 0, NULL), GPUMST_OK);
    CHECK_STATUS(gpumst_probe_report(NULL, 16, &length2), GPUMST_INVALID_ARGUMENT);
    free(json);
}

/* Every function taking a context, with NULL: GPUMST_INVALID_ARGUMENT, no crash, no writes. */
static void test_null_context(void)
{
    int32_t in[3] = {3, 1, 2};
    int32_t out[3] = {0, 0, 0};
    uint8_t flags[3] = {1, 0, 1};
    uint64_t offsets[2] = {0, 3};
    int32_t value = 12345;
    uint64_t index = 777;
    int32_t values[1] = {12345};
    uint64_t indices[1] = {777};

    gpumst_tier tier = 12345;
    CHECK_STATUS(gpumst_context_tier(NULL, &tier), GPUMST_INVALID_ARGUMENT);
    CHECK(tier == 12345, "context_tier(NULL) wrote its output");
    char name[16] = "untouched";
    size_t length = 777;
    CHECK_STATUS(gpumst_context_device_name(NULL, name, sizeof name, &length), GPUMST_INVALID_ARGUMENT);
    CHECK(strcmp(name, "untouched") == 0 && length == 777, "device_name(NULL) wrote its outputs");
    uint64_t bytes = 777;
    CHECK_STATUS(gpumst_context_device_memory(NULL, &bytes), GPUMST_INVALID_ARGUMENT);
    CHECK(bytes == 777, "device_memory(NULL) wrote its output");

    CHECK_STATUS(gpumst_scan(NULL, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out, 3),
                 GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_scan(NULL, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, NULL, NULL, 0),
                 GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_segmented_scan_flags(NULL, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                             flags, 3),
                 GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_segmented_scan_offsets(NULL, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                               3, offsets, 1),
                 GPUMST_INVALID_ARGUMENT);
    CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0, "a scan with a NULL context wrote output");
    CHECK_STATUS(gpumst_argmin(NULL, GPUMST_I32, in, 3, &value, &index), GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_argmax(NULL, GPUMST_I32, in, 3, &value, &index), GPUMST_INVALID_ARGUMENT);
    CHECK(value == 12345 && index == 777, "argmin/argmax with a NULL context wrote output");
    CHECK_STATUS(gpumst_segmented_argmin(NULL, GPUMST_I32, in, 3, offsets, 1, values, indices),
                 GPUMST_INVALID_ARGUMENT);
    CHECK_STATUS(gpumst_segmented_argmax(NULL, GPUMST_I32, in, 3, offsets, 1, values, indices),
                 GPUMST_INVALID_ARGUMENT);
    CHECK(values[0] == 12345 && indices[0] == 777, "segmented arg with a NULL context wrote output");

    /* last_error with NULL: no crash, a consistent length, a NUL-terminated message. */
    char message[128];
    memset(message, 'X', sizeof message);
    size_t n = gpumst_context_last_error(NULL, message, sizeof message);
    CHECK(memchr(message, '\0', sizeof message) != NULL, "last_error(NULL) not NUL-terminated");
    CHECK(n == strlen(message), "last_error(NULL) returned %zu for \"%s\"", n, message);
    CHECK(gpumst_context_last_error(NULL, NULL, 0) == n, "last_error(NULL) length query differs");

    gpumst_context_destroy(NULL); /* must be a no-op */
    CHECK(1, "destroy(NULL) returned");
}

int main(void)
{
    test_version();
    test_status_strings();
    test_tier_names();
    test_options_init();
    test_default_context();
    test_cpu_context();
    test_probe_report();
    test_null_context();
    return check_summary("test_api");
}
