/*
 * Every primitive through the C API, for all six dtypes, checked against naive
 * references at sizes 0, 1, 5, 1000, 32769 and 100003 (the last two cross the
 * library's internal 32768-element scan chunks and 65536-element reduction tasks).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpumst.h"

#define STRINGIFY2(x) #x
#define STRINGIFY(x) STRINGIFY2(x)

#define PRIM_SIGNED 1
#define PRIM_UNSIGNED 2
#define PRIM_FLOAT 3

static uint64_t next_random(uint64_t *state)
{
    /* splitmix64 */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/*
 * CSR offsets over n elements with empty segments: an empty first segment, fixed
 * boundaries on chunk edges and one segment longer than 65536 elements when n allows,
 * random lengths (a quarter of them 0), and an empty last segment. Returns the number of segments; offsets holds
 * that many + 1 entries (room for max_segments + 1).
 */
static size_t make_offsets(uint64_t *offsets, size_t max_segments, size_t n, uint64_t *rng)
{
    size_t s = 0, pos = 0;
    offsets[0] = 0;
    offsets[++s] = 0;
    if (n > 98304) {
        /* Boundaries on the scan chunks of 8-byte (16384) and 4-byte (32768) elements,
         * empty segments there, and [16384, 98304): longer than a 65536-element task. */
        static const uint64_t fixed[] = {3, 16384, 16384, 98304, 98304};
        for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
            offsets[++s] = fixed[k];
        pos = 98304;
    }
    size_t max_len = n > 1000 ? 9000 : 6;
    while (pos < n && s + 2 < max_segments) {
        uint64_t r = next_random(rng);
        size_t len = r % 4 == 0 ? 0 : 1 + (size_t)((r >> 8) % max_len);
        pos = pos + len < n ? pos + len : n;
        offsets[++s] = pos;
    }
    if (pos < n)
        offsets[++s] = n;
    offsets[++s] = n;
    return s;
}

#define T int32_t
#define SUF i32
#define DT GPUMST_I32
#define KIND PRIM_SIGNED
#define UT uint32_t
#define TMAXV INT32_MAX
#define TMINV INT32_MIN
#include "prim_impl.h"
#undef T
#undef SUF
#undef DT
#undef KIND
#undef UT
#undef TMAXV
#undef TMINV

#define T uint32_t
#define SUF u32
#define DT GPUMST_U32
#define KIND PRIM_UNSIGNED
#define UT uint32_t
#define TMAXV UINT32_MAX
#define TMINV ((uint32_t)0)
#include "prim_impl.h"
#undef T
#undef SUF
#undef DT
#undef KIND
#undef UT
#undef TMAXV
#undef TMINV

#define T int64_t
#define SUF i64
#define DT GPUMST_I64
#define KIND PRIM_SIGNED
#define UT uint64_t
#define TMAXV INT64_MAX
#define TMINV INT64_MIN
#include "prim_impl.h"
#undef T
#undef SUF
#undef DT
#undef KIND
#undef UT
#undef TMAXV
#undef TMINV

#define T uint64_t
#define SUF u64
#define DT GPUMST_U64
#define KIND PRIM_UNSIGNED
#define UT uint64_t
#define TMAXV UINT64_MAX
#define TMINV ((uint64_t)0)
#include "prim_impl.h"
#undef T
#undef SUF
#undef DT
#undef KIND
#undef UT
#undef TMAXV
#undef TMINV

#define T float
#define SUF f32
#define DT GPUMST_F32
#define KIND PRIM_FLOAT
#define UT uint32_t
#define TMAXV INFINITY
#define TMINV (-INFINITY)
#include "prim_impl.h"
#undef T
#undef SUF
#undef DT
#undef KIND
#undef UT
#undef TMAXV
#undef TMINV

#define T double
#define SUF f64
#define DT GPUMST_F64
#define KIND PRIM_FLOAT
#define UT uint64_t
#define TMAXV ((double)INFINITY)
#define TMINV ((double)-INFINITY)
#include "prim_impl.h"
#undef T
#undef SUF
#undef DT
#undef KIND
#undef UT
#undef TMAXV
#undef TMINV

static void run_all(gpumst_context *ctx, const char *label)
{
    static const size_t sizes[] = {0, 1, 5, 1000, 32769, 100003};
    unsigned long failed_before = check_failed;
    test_fixed_i32(ctx);
    test_fixed_u32(ctx);
    test_fixed_i64(ctx);
    test_fixed_u64(ctx);
    test_fixed_f32(ctx);
    test_fixed_f64(ctx);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        test_scans_i32(ctx, n);
        test_scans_u32(ctx, n);
        test_scans_i64(ctx, n);
        test_scans_u64(ctx, n);
        test_scans_f32(ctx, n);
        test_scans_f64(ctx, n);
        test_args_i32(ctx, n);
        test_args_u32(ctx, n);
        test_args_i64(ctx, n);
        test_args_u64(ctx, n);
        test_args_f32(ctx, n);
        test_args_f64(ctx, n);
    }
    printf("test_primitives: %s context: %s\n", label,
           check_failed == failed_before ? "all results match" : "MISMATCHES (see above)");
}

int main(void)
{
    gpumst_options options;
    CHECK_STATUS(gpumst_options_init(&options), GPUMST_OK);
    options.tier = GPUMST_TIER_CPU;
    options.cpu_threads = 4; /* more workers than this machine may have cores: chained carries wait */
    gpumst_context *ctx = NULL;
    char error[256] = "";
    CHECK_STATUS(gpumst_context_create(&options, &ctx, error, sizeof error), GPUMST_OK);
    if (ctx == NULL) {
        fprintf(stderr, "cannot create a CPU context: %s\n", error);
        return check_summary("test_primitives") | 1;
    }
    run_all(ctx, "4-thread");
    gpumst_context_destroy(ctx);

    /* One thread: the library's sequential paths. */
    options.cpu_threads = 1;
    ctx = NULL;
    CHECK_STATUS(gpumst_context_create(&options, &ctx, error, sizeof error), GPUMST_OK);
    if (ctx != NULL) {
        run_all(ctx, "1-thread");
        gpumst_context_destroy(ctx);
    }
    return check_summary("test_primitives");
}
