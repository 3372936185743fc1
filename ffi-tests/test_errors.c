/*
 * Error paths of context creation and of every primitive.
 *
 * run.sh runs this program with GPUMST_CUDA_LIBRARY=/nonexistent/libcuda.so.1 and
 * GPUMST_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1, so that no GPU driver is found
 * even on a machine that has one; the expected paths are taken from the environment.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpumst.h"

static const char *cuda_path;
static const char *opencl_path;

/* A pointer value that is never a real context: context_create must overwrite it. */
static gpumst_context *sentinel(void)
{
    static int dummy;
    return (gpumst_context *)(void *)&dummy;
}

/* Creates a context that must fail with `want`; checks *out == NULL and returns the message. */
static void expect_create_failure(const gpumst_options *options, gpumst_status want, char *error,
                                  size_t capacity, const char *what)
{
    gpumst_context *ctx = sentinel();
    memset(error, 'X', capacity);
    gpumst_status status = gpumst_context_create(options, &ctx, error, capacity);
    CHECK(status == want, "%s: status %d (%s), expected %d (%s)", what, (int)status,
          gpumst_status_string(status), (int)want, gpumst_status_string(want));
    CHECK(ctx == NULL, "%s: *out was not set to NULL on failure", what);
    CHECK(memchr(error, '\0', capacity) != NULL, "%s: error message not NUL-terminated", what);
    CHECK(strlen(error) > 0, "%s: empty error message", what);
    if (status == GPUMST_OK && ctx != sentinel())
        gpumst_context_destroy(ctx);
}

static void test_create_errors(void)
{
    char error[1024];
    gpumst_options options;

    /* out == NULL */
    memset(error, 'X', sizeof error);
    CHECK_STATUS(gpumst_context_create(NULL, NULL, error, sizeof error), GPUMST_INVALID_ARGUMENT);
    CHECK_CONTAINS(error, "out is NULL");

    /* struct_size too small (and 0, as for an uninitialized struct). */
    CHECK_STATUS(gpumst_options_init(&options), GPUMST_OK);
    options.struct_size = sizeof(gpumst_options) - 1;
    expect_create_failure(&options, GPUMST_INVALID_ARGUMENT, error, sizeof error, "struct_size-1");
    CHECK_CONTAINS(error, "struct_size");
    /* A list of devices must be given where device_count says there is one. */
    CHECK_STATUS(gpumst_options_init(&options), GPUMST_OK);
    options.device_count = 2;
    expect_create_failure(&options, GPUMST_INVALID_ARGUMENT, error, sizeof error, "devices NULL");
    CHECK_CONTAINS(error, "options.devices is NULL");
    /* The CPU tier has no devices to add: a list is taken and ignored. */
    {
        static const uint32_t list[3] = {0, 5, 9};
        gpumst_context *ctx = NULL;
        uint32_t count = 0;
        CHECK_STATUS(gpumst_options_init(&options), GPUMST_OK);
        options.tier = GPUMST_TIER_CPU;
        options.devices = list;
        options.device_count = 3;
        CHECK_STATUS(gpumst_context_create(&options, &ctx, error, sizeof error), GPUMST_OK);
        CHECK_STATUS(gpumst_context_device_count(ctx, &count), GPUMST_OK);
        CHECK(count == 1, "device count %u on the CPU tier", count);
        CHECK_STATUS(gpumst_context_device_count(ctx, NULL), GPUMST_INVALID_ARGUMENT);
        gpumst_context_destroy(ctx);
    }
    CHECK_STATUS(gpumst_options_init(&options), GPUMST_OK);
    options.struct_size = 0;
    expect_create_failure(&options, GPUMST_INVALID_ARGUMENT, error, sizeof error, "struct_size 0");
    CHECK_CONTAINS(error, "gpumst_options_init");

    /* tier value 99, and a negative one */
    CHECK_STATUS(gpumst_options_init(&options), GPUMST_OK);
    options.tier = 99;
    expect_create_failure(&options, GPUMST_INVALID_ARGUMENT, error, sizeof error, "tier 99");
    CHECK_CONTAINS(error, "99");
    CHECK_CONTAINS(error, "tier");
    options.tier = -1;
    expect_create_failure(&options, GPUMST_INVALID_ARGUMENT, error, sizeof error, "tier -1");
    CHECK_CONTAINS(error, "-1");

    /* Forced GPU tiers with no driver: BACKEND_UNAVAILABLE naming the tier and library. */
    CHECK_STATUS(gpumst_options_init(&options), GPUMST_OK);
    options.tier = GPUMST_TIER_CUDA;
    expect_create_failure(&options, GPUMST_BACKEND_UNAVAILABLE, error, sizeof error, "forced CUDA");
    CHECK_CONTAINS(error, "CUDA");
    if (cuda_path)
        CHECK_CONTAINS(error, cuda_path);
    options.device_index = 3; /* irrelevant when there is no driver at all */
    expect_create_failure(&options, GPUMST_BACKEND_UNAVAILABLE, error, sizeof error,
                          "forced CUDA device 3");

    CHECK_STATUS(gpumst_options_init(&options), GPUMST_OK);
    options.tier = GPUMST_TIER_OPENCL;
    expect_create_failure(&options, GPUMST_BACKEND_UNAVAILABLE, error, sizeof error,
                          "forced OpenCL");
    CHECK_CONTAINS(error, "OpenCL");
    if (opencl_path)
        CHECK_CONTAINS(error, opencl_path);

    /* Error buffer NULL, or capacity 0: no crash, nothing written. */
    options.tier = GPUMST_TIER_CUDA;
    gpumst_context *ctx = sentinel();
    CHECK_STATUS(gpumst_context_create(&options, &ctx, NULL, 0), GPUMST_BACKEND_UNAVAILABLE);
    CHECK(ctx == NULL, "*out not NULL (error buffer NULL, capacity 0)");
    ctx = sentinel();
    CHECK_STATUS(gpumst_context_create(&options, &ctx, NULL, 64), GPUMST_BACKEND_UNAVAILABLE);
    CHECK(ctx == NULL, "*out not NULL (error buffer NULL, capacity 64)");
    char untouched[4] = {'X', 'X', 'X', 'X'};
    ctx = sentinel();
    CHECK_STATUS(gpumst_context_create(&options, &ctx, untouched, 0), GPUMST_BACKEND_UNAVAILABLE);
    CHECK(ctx == NULL, "*out not NULL (capacity 0)");
    CHECK(untouched[0] == 'X', "capacity 0 but the error buffer was written");

    /* A small error buffer: truncated, NUL-terminated, nothing past capacity. */
    char full[1024];
    ctx = sentinel();
    CHECK_STATUS(gpumst_context_create(&options, &ctx, full, sizeof full), GPUMST_BACKEND_UNAVAILABLE);
    char small[16];
    memset(small, 'X', sizeof small);
    ctx = sentinel();
    CHECK_STATUS(gpumst_context_create(&options, &ctx, small, 8), GPUMST_BACKEND_UNAVAILABLE);
    CHECK(ctx == NULL, "*out not NULL (small error buffer)");
    CHECK(small[7] == '\0', "8-byte error buffer: byte 7 is not the NUL");
    CHECK(strlen(small) == 7 && strncmp(small, full, 7) == 0,
          "truncated error \"%s\" is not the first 7 bytes of \"%s\"", small, full);
    CHECK(small[8] == 'X', "error buffer written past its capacity");
    char one[2] = {'X', 'X'};
    CHECK_STATUS(gpumst_context_create(&options, &ctx, one, 1), GPUMST_BACKEND_UNAVAILABLE);
    CHECK(one[0] == '\0' && one[1] == 'X', "capacity 1 must write only the NUL");
}

static void test_backend_env(void)
{
    char error[1024];
    gpumst_options options;
    CHECK_STATUS(gpumst_options_init(&options), GPUMST_OK);

    setenv("GPUMST_BACKEND", "cuda", 1);
    expect_create_failure(&options, GPUMST_BACKEND_UNAVAILABLE, error, sizeof error,
                          "GPUMST_BACKEND=cuda, tier AUTO");
    CHECK_CONTAINS(error, "CUDA");
    expect_create_failure(NULL, GPUMST_BACKEND_UNAVAILABLE, error, sizeof error,
                          "GPUMST_BACKEND=cuda, NULL options");

    setenv("GPUMST_BACKEND", "opencl", 1);
    expect_create_failure(&options, GPUMST_BACKEND_UNAVAILABLE, error, sizeof error,
                          "GPUMST_BACKEND=opencl");
    CHECK_CONTAINS(error, "OpenCL");

    setenv("GPUMST_BACKEND", "bogus", 1);
    expect_create_failure(&options, GPUMST_INVALID_ARGUMENT, error, sizeof error,
                          "GPUMST_BACKEND=bogus");
    CHECK_CONTAINS(error, "GPUMST_BACKEND");
    CHECK_CONTAINS(error, "bogus");

    /* A tier forced in the options wins over the variable. */
    options.tier = GPUMST_TIER_CPU;
    gpumst_context *ctx = NULL;
    CHECK_STATUS(gpumst_context_create(&options, &ctx, error, sizeof error), GPUMST_OK);
    CHECK(ctx != NULL, "forced CPU with GPUMST_BACKEND=bogus failed: %s", error);
    gpumst_context_destroy(ctx);

    setenv("GPUMST_BACKEND", "cpu", 1);
    options.tier = GPUMST_TIER_AUTO;
    ctx = NULL;
    CHECK_STATUS(gpumst_context_create(&options, &ctx, error, sizeof error), GPUMST_OK);
    gpumst_tier tier = -1;
    if (ctx != NULL) {
        CHECK_STATUS(gpumst_context_tier(ctx, &tier), GPUMST_OK);
        CHECK(tier == GPUMST_TIER_CPU, "GPUMST_BACKEND=cpu gave tier %d", (int)tier);
    }
    gpumst_context_destroy(ctx);

    unsetenv("GPUMST_BACKEND");
    ctx = NULL;
    CHECK_STATUS(gpumst_context_create(NULL, &ctx, error, sizeof error), GPUMST_OK);
    CHECK(ctx != NULL, "default context after unsetenv failed: %s", error);
    gpumst_context_destroy(ctx);

    /* The probe report of this process names the replaced library paths. */
    size_t length = 0;
    CHECK_STATUS(gpumst_probe_report(NULL, 0, &length), GPUMST_OK);
    char *json = malloc(length + 1);
    if (json != NULL) {
        CHECK_STATUS(gpumst_probe_report(json, length + 1, NULL), GPUMST_OK);
        if (cuda_path)
            CHECK_CONTAINS(json, cuda_path);
        if (opencl_path)
            CHECK_CONTAINS(json, opencl_path);
        free(json);
    }
}

/* ---- primitives ------------------------------------------------------------------- */

static gpumst_context *ctx;
static char message[1024];

/* The call returned `want`, and the context's last error names the function and `needle`. */
static void expect_error(gpumst_status got, gpumst_status want, const char *function,
                         const char *needle, int line)
{
    memset(message, 0, sizeof message);
    size_t length = gpumst_context_last_error(ctx, message, sizeof message);
    CHECK(got == want, "line %d: status %d (%s), expected %d (%s); last error: %s", line, (int)got,
          gpumst_status_string(got), (int)want, gpumst_status_string(want), message);
    CHECK(length == strlen(message), "line %d: last_error returned %zu for a %zu-byte message",
          line, length, strlen(message));
    if (function)
        CHECK(strstr(message, function) != NULL, "line %d: \"%s\" does not name %s", line, message,
              function);
    if (needle)
        CHECK(strstr(message, needle) != NULL, "line %d: \"%s\" does not contain \"%s\"", line,
              message, needle);
}
#define EXPECT_INVALID(call, function, needle) \
    expect_error((call), GPUMST_INVALID_ARGUMENT, function, needle, __LINE__)

static void test_scan_errors(void)
{
    int32_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int32_t out[8] = {0};
    int64_t buf64[9] = {0};
    uint8_t flags[8] = {1, 0, 0, 1, 0, 0, 0, 0};
    const char *S = "gpumst_scan";

    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, NULL, out, 5), S,
                   "input is NULL");
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, NULL, 5), S,
                   "output is NULL");
    /* NULL with n == 0 is fine, for all three scans and every dtype. */
    for (gpumst_dtype d = GPUMST_I32; d <= GPUMST_F64; d++) {
        CHECK_STATUS(gpumst_scan(ctx, d, GPUMST_SUM, GPUMST_INCLUSIVE, NULL, NULL, 0), GPUMST_OK);
        CHECK_STATUS(gpumst_scan(ctx, d, GPUMST_MAX, GPUMST_EXCLUSIVE, in, NULL, 0), GPUMST_OK);
        CHECK_STATUS(gpumst_segmented_scan_flags(ctx, d, GPUMST_MIN, GPUMST_INCLUSIVE, NULL, NULL,
                                                 NULL, 0),
                     GPUMST_OK);
    }
    const uint64_t zero_offsets[1] = {0};
    CHECK_STATUS(gpumst_segmented_scan_offsets(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_INCLUSIVE, NULL,
                                               NULL, 0, zero_offsets, 0),
                 GPUMST_OK);
    const uint64_t empty_segments[3] = {0, 0, 0};
    CHECK_STATUS(gpumst_segmented_scan_offsets(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_INCLUSIVE, NULL,
                                               NULL, 0, empty_segments, 2),
                 GPUMST_OK);

    /* Bad enums. */
    EXPECT_INVALID(gpumst_scan(ctx, 42, GPUMST_SUM, GPUMST_INCLUSIVE, in, out, 5), S, "dtype 42");
    EXPECT_INVALID(gpumst_scan(ctx, -1, GPUMST_SUM, GPUMST_INCLUSIVE, in, out, 5), S, "dtype -1");
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I32, 7, GPUMST_INCLUSIVE, in, out, 5), S, "op 7");
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I32, GPUMST_SUM, 5, in, out, 5), S, "kind 5");
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I32, GPUMST_SUM, -3, in, out, 5), S, "kind -3");
    /* ...even with n == 0 */
    EXPECT_INVALID(gpumst_scan(ctx, 6, GPUMST_SUM, GPUMST_INCLUSIVE, NULL, NULL, 0), S, "dtype 6");
    for (int i = 0; i < 8; i++)
        CHECK(out[i] == 0, "a failed scan wrote output[%d] = %d", i, out[i]);

    /* Misaligned pointers. */
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, (char *)in + 1, out, 5),
                   S, "aligned");
    CHECK(strstr(message, "input") != NULL, "misaligned input: \"%s\" does not name input", message);
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, (char *)out + 1, 5),
                   S, "aligned");
    CHECK(strstr(message, "output") != NULL, "misaligned output: \"%s\" does not name output",
          message);
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_INCLUSIVE, (char *)buf64 + 4,
                               (char *)buf64 + 4, 4),
                   S, "aligned"); /* in place, 4-byte aligned but not 8 */
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_F64, GPUMST_SUM, GPUMST_INCLUSIVE, (char *)buf64 + 4, out, 2),
                   S, "aligned");

    /* Partial overlap of output and input (identical pointers mean in place). */
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, in + 1, 5), S,
                   "overlaps");
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in + 2, in, 5), S,
                   "overlaps");
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_INCLUSIVE, buf64, (char *)buf64 + 8,
                               8),
                   S, "overlaps");
    CHECK(in[0] == 1 && in[1] == 2 && in[7] == 8, "an overlap error still wrote the arrays");
    /* Adjacent, not overlapping: fine. */
    int32_t pair[8] = {1, 2, 3, 4, 0, 0, 0, 0};
    CHECK_STATUS(gpumst_scan(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, pair, pair + 4, 4),
                 GPUMST_OK);
    CHECK(pair[4] == 1 && pair[5] == 3 && pair[6] == 6 && pair[7] == 10, "adjacent scan wrong");

    /* A length larger than memory is refused before anything is touched. */
    EXPECT_INVALID(gpumst_scan(ctx, GPUMST_I64, GPUMST_SUM, GPUMST_INCLUSIVE, buf64, out, UINT64_MAX),
                   S, "larger than memory");

    /* Segmented by flags. */
    const char *F = "gpumst_segmented_scan_flags";
    EXPECT_INVALID(gpumst_segmented_scan_flags(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                               NULL, 5),
                   F, "flags is NULL");
    EXPECT_INVALID(gpumst_segmented_scan_flags(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, NULL, out,
                                               flags, 5),
                   F, "input is NULL");
    EXPECT_INVALID(gpumst_segmented_scan_flags(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, NULL,
                                               flags, 5),
                   F, "output is NULL");
    EXPECT_INVALID(gpumst_segmented_scan_flags(ctx, 9, GPUMST_SUM, GPUMST_INCLUSIVE, in, out, flags, 5),
                   F, "dtype 9");
    EXPECT_INVALID(gpumst_segmented_scan_flags(ctx, GPUMST_I32, 3, GPUMST_INCLUSIVE, in, out, flags, 5),
                   F, "op 3");
    EXPECT_INVALID(gpumst_segmented_scan_flags(ctx, GPUMST_I32, GPUMST_SUM, 2, in, out, flags, 5), F,
                   "kind 2");
    EXPECT_INVALID(gpumst_segmented_scan_flags(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE,
                                               (char *)in + 2, out, flags, 5),
                   F, "aligned");
    EXPECT_INVALID(gpumst_segmented_scan_flags(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, in + 3,
                                               flags, 5),
                   F, "overlaps");
    /* Output over the flags bytes (in place and out of place). */
    union {
        int32_t words[4];
        uint8_t bytes[16];
    } shared = {{0, 0, 0, 0}};
    EXPECT_INVALID(gpumst_segmented_scan_flags(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in,
                                               shared.words, shared.bytes + 4, 4),
                   F, "flags");
    CHECK(strstr(message, "overlaps") != NULL, "output over flags: \"%s\"", message);
    EXPECT_INVALID(gpumst_segmented_scan_flags(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE,
                                               shared.words, shared.words, shared.bytes, 4),
                   F, "overlaps");

    /* Segmented by offsets. */
    const char *O = "gpumst_segmented_scan_offsets";
    const uint64_t good[3] = {0, 2, 5};
    const uint64_t not_zero[3] = {1, 2, 5};
    const uint64_t non_monotone[4] = {0, 3, 2, 5};
    const uint64_t short_last[3] = {0, 2, 4};
    const uint64_t long_last[3] = {0, 2, 6};
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                                 5, NULL, 2),
                   O, "offsets is NULL");
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, NULL,
                                                 NULL, 0, NULL, 0),
                   O, "offsets is NULL"); /* offsets always holds num_segments + 1 entries */
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                                 5, not_zero, 2),
                   O, "offsets[0]");
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                                 5, non_monotone, 3),
                   O, "offsets[2]");
    CHECK(strstr(message, "monotone") != NULL, "non-monotone offsets: \"%s\"", message);
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                                 5, short_last, 2),
                   O, "offsets[2]");
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                                 5, long_last, 2),
                   O, "offsets[2]");
    /* num_segments that does not match the offsets: the last one read is not n. */
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                                 5, good, 1),
                   O, "offsets[1]");
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                                 5, good, 0),
                   O, "offsets[0]");
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                                 5, good, UINT64_MAX),
                   O, "num_segments");
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                                 5, (const uint64_t *)((const char *)buf64 + 4), 2),
                   O, "aligned");
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_F32, GPUMST_MIN, 11, in, out, 5, good, 2),
                   O, "kind 11");
    EXPECT_INVALID(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in,
                                                 (int32_t *)(void *)buf64, 4,
                                                 (const uint64_t *)buf64, 1),
                   O, "offsets");
    CHECK(strstr(message, "overlaps") != NULL, "output over offsets: \"%s\"", message);
    for (int i = 0; i < 8; i++)
        CHECK(out[i] == 0, "a failed call wrote output[%d] = %d", i, out[i]);

    /* The good offsets do work (so the failures above are about what they claim). */
    CHECK_STATUS(gpumst_segmented_scan_offsets(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out,
                                               5, good, 2),
                 GPUMST_OK);
    CHECK(out[0] == 1 && out[1] == 3 && out[2] == 3 && out[3] == 7 && out[4] == 12,
          "offsets {0,2,5} sum = %d %d %d %d %d", out[0], out[1], out[2], out[3], out[4]);
}

static void test_arg_errors(void)
{
    const int32_t in[6] = {4, -2, 7, -2, 9, 0};
    int32_t value = 12345;
    uint64_t index = 777;
    const char *A = "gpumst_argmin";
    const char *X = "gpumst_argmax";

    EXPECT_INVALID(gpumst_argmin(ctx, GPUMST_I32, NULL, 6, &value, &index), A, "input is NULL");
    EXPECT_INVALID(gpumst_argmax(ctx, GPUMST_I32, NULL, 6, &value, &index), X, "input is NULL");
    EXPECT_INVALID(gpumst_argmin(ctx, GPUMST_I32, in, 6, NULL, &index), A, "value is NULL");
    EXPECT_INVALID(gpumst_argmax(ctx, GPUMST_I32, in, 6, &value, NULL), X, "index is NULL");
    EXPECT_INVALID(gpumst_argmin(ctx, 13, in, 6, &value, &index), A, "dtype 13");
    EXPECT_INVALID(gpumst_argmax(ctx, -7, in, 6, &value, &index), X, "dtype -7");
    EXPECT_INVALID(gpumst_argmin(ctx, GPUMST_I32, (const char *)in + 1, 4, &value, &index), A,
                   "aligned");
    int64_t v64[2] = {0, 0};
    EXPECT_INVALID(gpumst_argmax(ctx, GPUMST_I64, v64, 0, (char *)v64 + 4, &index), X, "aligned");
    CHECK(strstr(message, "value") != NULL, "misaligned value: \"%s\"", message);
    /* value / index inside the input */
    int32_t buf[6] = {4, -2, 7, -2, 9, 0};
    EXPECT_INVALID(gpumst_argmin(ctx, GPUMST_I32, buf, 6, &buf[2], &index), A, "overlaps");
    CHECK(value == 12345 && index == 777, "failed arg-reductions wrote their outputs");

    /* n == 0: NULL input is fine, the result is the empty marker. */
    CHECK_STATUS(gpumst_argmin(ctx, GPUMST_I32, NULL, 0, &value, &index), GPUMST_OK);
    CHECK(index == GPUMST_EMPTY_SEGMENT && value == INT32_MAX, "empty argmin i32: %d at %llu", value,
          (unsigned long long)index);
    double dv = 0;
    CHECK_STATUS(gpumst_argmax(ctx, GPUMST_F64, NULL, 0, &dv, &index), GPUMST_OK);
    CHECK(index == GPUMST_EMPTY_SEGMENT && isinf(dv) && dv < 0, "empty argmax f64: %g at %llu", dv,
          (unsigned long long)index);

    /* Segmented arg-reductions. */
    const char *SA = "gpumst_segmented_argmin";
    const char *SX = "gpumst_segmented_argmax";
    const uint64_t offsets[3] = {0, 2, 6};
    const uint64_t non_monotone[4] = {0, 4, 3, 6};
    const uint64_t bad_last[3] = {0, 2, 5};
    int32_t values[3] = {111, 111, 111};
    uint64_t indices[3] = {222, 222, 222};
    EXPECT_INVALID(gpumst_segmented_argmin(ctx, GPUMST_I32, in, 6, offsets, 2, NULL, indices), SA,
                   "values is NULL");
    EXPECT_INVALID(gpumst_segmented_argmax(ctx, GPUMST_I32, in, 6, offsets, 2, values, NULL), SX,
                   "indices is NULL");
    EXPECT_INVALID(gpumst_segmented_argmin(ctx, GPUMST_I32, NULL, 6, offsets, 2, values, indices), SA,
                   "input is NULL");
    EXPECT_INVALID(gpumst_segmented_argmax(ctx, GPUMST_I32, in, 6, NULL, 2, values, indices), SX,
                   "offsets is NULL");
    EXPECT_INVALID(gpumst_segmented_argmin(ctx, GPUMST_I32, in, 6, non_monotone, 3, values, indices),
                   SA, "offsets[2]");
    EXPECT_INVALID(gpumst_segmented_argmax(ctx, GPUMST_I32, in, 6, bad_last, 2, values, indices), SX,
                   "offsets[2]");
    EXPECT_INVALID(gpumst_segmented_argmin(ctx, GPUMST_I32, in, 6, offsets, 1, values, indices), SA,
                   "offsets[1]"); /* num_segments mismatch */
    EXPECT_INVALID(gpumst_segmented_argmin(ctx, GPUMST_I32, in, 6, offsets, UINT64_MAX, values, indices),
                   SA, "num_segments");
    EXPECT_INVALID(gpumst_segmented_argmax(ctx, 6, in, 6, offsets, 2, values, indices), SX, "dtype 6");
    EXPECT_INVALID(gpumst_segmented_argmin(ctx, GPUMST_I32, in, 6, offsets, 2, (char *)values + 1,
                                           indices),
                   SA, "aligned");
    EXPECT_INVALID(gpumst_segmented_argmin(ctx, GPUMST_I32, in, 6, offsets, 2, values,
                                           (uint64_t *)(void *)((char *)indices + 4)),
                   SA, "aligned");
    EXPECT_INVALID(gpumst_segmented_argmin(ctx, GPUMST_I32, buf, 6, offsets, 2, buf + 1, indices), SA,
                   "overlaps");
    uint64_t writable_offsets[3] = {0, 2, 6};
    EXPECT_INVALID(gpumst_segmented_argmax(ctx, GPUMST_I32, in, 6, writable_offsets, 2, values,
                                           writable_offsets),
                   SX, "overlaps");
    for (int i = 0; i < 3; i++)
        CHECK(values[i] == 111 && indices[i] == 222, "a failed segmented arg-reduction wrote slot %d",
              i);

    /* num_segments == 0 with offsets {0}: fine, outputs may be NULL. */
    const uint64_t zero[1] = {0};
    CHECK_STATUS(gpumst_segmented_argmin(ctx, GPUMST_F32, NULL, 0, zero, 0, NULL, NULL), GPUMST_OK);
}

static void test_last_error_buffer(void)
{
    int32_t out[2];
    CHECK_STATUS(gpumst_scan(ctx, 42, GPUMST_SUM, GPUMST_INCLUSIVE, NULL, out, 2),
                 GPUMST_INVALID_ARGUMENT);
    char full[512];
    size_t length = gpumst_context_last_error(ctx, full, sizeof full);
    CHECK(length > 10 && length == strlen(full), "last_error length %zu for \"%s\"", length, full);
    CHECK(gpumst_context_last_error(ctx, NULL, 0) == length, "length query differs");
    CHECK(gpumst_context_last_error(ctx, NULL, 100) == length, "NULL buffer with capacity");
    char small[16];
    memset(small, 'X', sizeof small);
    CHECK(gpumst_context_last_error(ctx, small, 6) == length, "truncated call: wrong length");
    CHECK(small[5] == '\0' && strncmp(small, full, 5) == 0 && small[6] == 'X',
          "last error truncated to 6 bytes is wrong: \"%.16s\"", small);

    /* A successful call keeps the previous message (it is the last *failed* call). */
    const int32_t in[2] = {1, 2};
    CHECK_STATUS(gpumst_scan(ctx, GPUMST_I32, GPUMST_SUM, GPUMST_INCLUSIVE, in, out, 2), GPUMST_OK);
    char after[512];
    gpumst_context_last_error(ctx, after, sizeof after);
    CHECK(strcmp(after, full) == 0, "a successful call changed the last error to \"%s\"", after);
}

int main(void)
{
    cuda_path = getenv("GPUMST_CUDA_LIBRARY");
    opencl_path = getenv("GPUMST_OPENCL_LIBRARY");
    if (cuda_path == NULL || opencl_path == NULL)
        fprintf(stderr, "test_errors: note: GPUMST_CUDA_LIBRARY / GPUMST_OPENCL_LIBRARY not set; "
                        "the missing-GPU checks assume this machine has no GPU driver\n");
    unsetenv("GPUMST_BACKEND");

    test_create_errors();
    test_backend_env();

    gpumst_options options;
    gpumst_options_init(&options);
    options.tier = GPUMST_TIER_CPU;
    char error[256] = "";
    CHECK_STATUS(gpumst_context_create(&options, &ctx, error, sizeof error), GPUMST_OK);
    if (ctx == NULL) {
        fprintf(stderr, "cannot create a CPU context: %s\n", error);
        return check_summary("test_errors") | 1;
    }
    test_scan_errors();
    test_arg_errors();
    test_last_error_buffer();
    gpumst_context_destroy(ctx);
    return check_summary("test_errors");
}
