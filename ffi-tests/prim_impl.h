/*
 * Type-generic part of test_primitives.c, included once per element type with:
 *   T       the C element type            SUF    a suffix for function names
 *   DT      its gpumst_dtype              KIND   PRIM_SIGNED, PRIM_UNSIGNED or PRIM_FLOAT
 *   UT      an unsigned type of T's width (integers: wrapping sums)
 *   TMAXV   the type's maximum (+INFINITY for floats), TMINV its minimum (-INFINITY)
 *
 * Every reference here is a naive sequential loop, independent of the library.
 */

#define PRIM_CAT2(a, b) a##_##b
#define PRIM_CAT(a, b) PRIM_CAT2(a, b)
#define FN(name) PRIM_CAT(name, SUF)

static T FN(add)(T a, T b)
{
#if KIND == PRIM_FLOAT
    return a + b;
#else
    return (T)((UT)a + (UT)b); /* integer sums wrap */
#endif
}

static T FN(identity)(gpumst_scan_op op)
{
    switch (op) {
    case GPUMST_MIN:
        return TMAXV;
    case GPUMST_MAX:
        return TMINV;
    default:
        return (T)0;
    }
}

/* earlier (+) later; ties keep the earlier value; NaN is the extreme and sticks. */
static T FN(combine)(gpumst_scan_op op, T acc, T x)
{
    switch (op) {
    case GPUMST_MIN:
#if KIND == PRIM_FLOAT
        if (isnan(acc))
            return acc;
        if (isnan(x))
            return x;
#endif
        return x < acc ? x : acc;
    case GPUMST_MAX:
#if KIND == PRIM_FLOAT
        if (isnan(acc))
            return acc;
        if (isnan(x))
            return x;
#endif
        return x > acc ? x : acc;
    default:
        return FN(add)(acc, x);
    }
}

/* Values for scans: the full bit range for integers (sums wrap), small exact integers
 * for floats (so sums are exact in any association order: |sum| <= 8 * 100003 < 2^24). */
static T FN(wide)(uint64_t r)
{
#if KIND == PRIM_FLOAT
    return (T)((int)(r % 17) - 8);
#else
    return (T)(UT)r;
#endif
}

/* Values for arg-reductions: 101 distinct values, so the extremes repeat (ties). */
static T FN(small)(uint64_t r)
{
    return (T)((int)(r % 101) - 50);
}

static void FN(print)(FILE *f, T v)
{
#if KIND == PRIM_FLOAT
    fprintf(f, "%.17g", (double)v);
#elif KIND == PRIM_SIGNED
    fprintf(f, "%lld", (long long)v);
#else
    fprintf(f, "%llu", (unsigned long long)v);
#endif
}

/* heads == NULL: one segment; otherwise heads[i] != 0 starts a segment at i. */
static void FN(ref_scan)(const T *in, T *out, size_t n, gpumst_scan_op op, gpumst_scan_kind kind,
                         const uint8_t *heads)
{
    T acc = FN(identity)(op);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || (heads != NULL && heads[i] != 0))
            acc = FN(identity)(op);
        if (kind == GPUMST_INCLUSIVE) {
            acc = FN(combine)(op, acc, in[i]);
            out[i] = acc;
        } else {
            out[i] = acc;
            acc = FN(combine)(op, acc, in[i]);
        }
    }
}

/* First index of the extreme of in[start, end); NaN is the extreme. */
static void FN(ref_arg)(const T *in, size_t start, size_t end, int max, T *value, uint64_t *index)
{
    if (start == end) {
        *value = max ? TMINV : TMAXV;
        *index = GPUMST_EMPTY_SEGMENT;
        return;
    }
    size_t best = start;
    for (size_t i = start + 1; i < end; i++) {
#if KIND == PRIM_FLOAT
        if (isnan(in[best]))
            break;
        if (isnan(in[i])) {
            best = i;
            break;
        }
#endif
        if (max ? in[i] > in[best] : in[i] < in[best])
            best = i;
    }
    *value = in[best];
    *index = best;
}

/* Bitwise comparison; reports the first difference. Returns 1 when equal. */
static int FN(same)(const T *want, const T *got, size_t n, const char *what, size_t size,
                    gpumst_scan_op op, gpumst_scan_kind kind)
{
    if (n == 0 || memcmp(want, got, n * sizeof(T)) == 0)
        return 1;
    size_t i = 0;
    while (memcmp(&want[i], &got[i], sizeof(T)) == 0)
        i++;
    fprintf(stderr, "  %s %s n=%zu op=%d kind=%d: first difference at [%zu]: expected ", what,
            STRINGIFY(SUF), size, (int)op, (int)kind, i);
    FN(print)(stderr, want[i]);
    fprintf(stderr, ", got ");
    FN(print)(stderr, got[i]);
    fputc('\n', stderr);
    return 0;
}

/* All scans at size n, checked against the references. */
static void FN(test_scans)(gpumst_context *ctx, size_t n)
{
    size_t bytes = n * sizeof(T) + 1;
    T *in = malloc(bytes), *saved = malloc(bytes), *out = malloc(bytes), *work = malloc(bytes),
      *want = malloc(bytes);
    uint8_t *flags = malloc(n + 1), *heads = malloc(n + 1), *offset_heads = malloc(n + 1);
    size_t max_segments = 2 * n + 8;
    uint64_t *offsets = malloc((max_segments + 1) * sizeof *offsets);
    CHECK(in && saved && out && work && want && flags && heads && offset_heads && offsets, "malloc");
    if (!(in && saved && out && work && want && flags && heads && offset_heads && offsets))
        goto done;

    uint64_t rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)n ^ ((uint64_t)DT << 40);
    for (size_t i = 0; i < n; i++)
        in[i] = FN(wide)(next_random(&rng));
    if (n > 0)
        memcpy(saved, in, n * sizeof(T));

    /* Head flags: any non-zero byte starts a segment; flags[0] is deliberately 0 (index
     * 0 always starts one). Long segments (crossing the library's chunks) when n is big. */
    uint64_t density = n > 1000 ? 4000 : 4;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next_random(&rng);
        flags[i] = (uint8_t)(r % density == 0 ? 1 + (r >> 32) % 255 : 0);
    }
    if (n > 0)
        flags[0] = 0;
    /* Heads exactly on chunk edges (16384 / 32768 elements), and one just after. */
    if (n > 32768) {
        flags[16384] = 1;
        flags[32768] = 7;
        flags[32769 < n ? 32769 : 32768] = 1;
    }
    for (size_t i = 0; i < n; i++)
        heads[i] = (uint8_t)(i == 0 || flags[i] != 0);

    size_t num_segments = make_offsets(offsets, max_segments, n, &rng);
    memset(offset_heads, 0, n + 1);
    for (size_t s = 0; s < num_segments; s++)
        if (offsets[s] < n)
            offset_heads[offsets[s]] = 1;

    const T *IN = n ? in : NULL; /* n == 0: the library gets NULL pointers */
    T *OUT = n ? out : NULL, *WORK = n ? work : NULL;
    const uint8_t *FLAGS = n ? flags : NULL;
    char what[96];

    for (gpumst_scan_op op = GPUMST_SUM; op <= GPUMST_MAX; op++) {
        for (gpumst_scan_kind kind = GPUMST_INCLUSIVE; kind <= GPUMST_EXCLUSIVE; kind++) {
            /* plain scan, out of place and in place */
            FN(ref_scan)(in, want, n, op, kind, NULL);
            memset(out, 0xA5, bytes);
            CHECK_STATUS(gpumst_scan(ctx, DT, op, kind, IN, OUT, n), GPUMST_OK);
            CHECK(FN(same)(want, out, n, "gpumst_scan", n, op, kind), "gpumst_scan mismatch");
            if (n > 0) {
                T first = kind == GPUMST_EXCLUSIVE ? FN(identity)(op) : in[0];
                CHECK(memcmp(&out[0], &first, sizeof(T)) == 0, "scan out[0] is not %s",
                      kind == GPUMST_EXCLUSIVE ? "the identity" : "in[0]");
            }
            memcpy(work, in, n * sizeof(T));
            CHECK_STATUS(gpumst_scan(ctx, DT, op, kind, WORK, WORK, n), GPUMST_OK);
            CHECK(FN(same)(want, work, n, "gpumst_scan in place", n, op, kind),
                  "in-place gpumst_scan mismatch");

            /* segmented by flags */
            FN(ref_scan)(in, want, n, op, kind, heads);
            memset(out, 0xA5, bytes);
            CHECK_STATUS(gpumst_segmented_scan_flags(ctx, DT, op, kind, IN, OUT, FLAGS, n), GPUMST_OK);
            CHECK(FN(same)(want, out, n, "segmented_scan_flags", n, op, kind),
                  "gpumst_segmented_scan_flags mismatch");
            memcpy(work, in, n * sizeof(T));
            CHECK_STATUS(gpumst_segmented_scan_flags(ctx, DT, op, kind, WORK, WORK, FLAGS, n),
                         GPUMST_OK);
            CHECK(FN(same)(want, work, n, "segmented_scan_flags in place", n, op, kind),
                  "in-place gpumst_segmented_scan_flags mismatch");

            /* segmented by offsets (with empty segments) */
            FN(ref_scan)(in, want, n, op, kind, offset_heads);
            memset(out, 0xA5, bytes);
            CHECK_STATUS(gpumst_segmented_scan_offsets(ctx, DT, op, kind, IN, OUT, n, offsets,
                                                       num_segments),
                         GPUMST_OK);
            snprintf(what, sizeof what, "segmented_scan_offsets (%zu segments)", num_segments);
            CHECK(FN(same)(want, out, n, what, n, op, kind), "gpumst_segmented_scan_offsets mismatch");
            memcpy(work, in, n * sizeof(T));
            CHECK_STATUS(gpumst_segmented_scan_offsets(ctx, DT, op, kind, WORK, WORK, n, offsets,
                                                       num_segments),
                         GPUMST_OK);
            CHECK(FN(same)(want, work, n, "segmented_scan_offsets in place", n, op, kind),
                  "in-place gpumst_segmented_scan_offsets mismatch");
        }
    }
    CHECK(n == 0 || memcmp(in, saved, n * sizeof(T)) == 0, "an out-of-place scan modified its input");

done:
    free(in);
    free(saved);
    free(out);
    free(work);
    free(want);
    free(flags);
    free(heads);
    free(offset_heads);
    free(offsets);
}

/* argmin/argmax and their segmented forms at size n. */
static void FN(test_args)(gpumst_context *ctx, size_t n)
{
    size_t bytes = n * sizeof(T) + 1;
    T *in = malloc(bytes);
    size_t max_segments = 2 * n + 8;
    uint64_t *offsets = malloc((max_segments + 1) * sizeof *offsets);
    T *values = malloc((max_segments + 1) * sizeof(T)), *want_values = malloc((max_segments + 1) * sizeof(T));
    uint64_t *indices = malloc((max_segments + 1) * sizeof(uint64_t));
    uint64_t *want_indices = malloc((max_segments + 1) * sizeof(uint64_t));
    CHECK(in && offsets && values && want_values && indices && want_indices, "malloc");
    if (!(in && offsets && values && want_values && indices && want_indices))
        goto done;

    uint64_t rng = 0xD1B54A32D192ED03ull ^ (uint64_t)n ^ ((uint64_t)DT << 44);
    for (size_t i = 0; i < n; i++)
        in[i] = FN(small)(next_random(&rng));
    const T *IN = n ? in : NULL;

    for (int pass = 0; pass < 3; pass++) {
        if (pass == 2) {
            if (n <= 90000)
                break;
#if KIND == PRIM_FLOAT
            /* NaNs on top of the planted extremes: the first NaN wins both ways. */
            in[90000] = (T)NAN;
            in[70001] = (T)NAN;
#else
            break;
#endif
        }
        if (pass == 1) {
            if (n <= 70000)
                break;
            /* Planted extremes around the library's 65536-element reduction tasks: the
             * first index must win across tasks. */
            for (size_t i = 0; i < n; i++)
                in[i] = (T)(10 + (int)(next_random(&rng) % 100));
            in[99999] = in[65536] = in[70000] = (T)3;
            in[100002] = in[65535] = (T)200;
        }
        for (int max = 0; max <= 1; max++) {
            T want_value, value;
            uint64_t want_index, index = 12345;
            memset(&value, 0x5A, sizeof value);
            FN(ref_arg)(in, 0, n, max, &want_value, &want_index);
            CHECK_STATUS(max ? gpumst_argmax(ctx, DT, IN, n, &value, &index)
                             : gpumst_argmin(ctx, DT, IN, n, &value, &index),
                         GPUMST_OK);
            CHECK(index == want_index, "%s %s n=%zu pass %d: index %llu, expected %llu",
                  max ? "argmax" : "argmin", STRINGIFY(SUF), n, pass, (unsigned long long)index,
                  (unsigned long long)want_index);
            CHECK(memcmp(&value, &want_value, sizeof(T)) == 0, "%s %s n=%zu: wrong value",
                  max ? "argmax" : "argmin", STRINGIFY(SUF), n);
            if (pass >= 1) {
                uint64_t planted = pass == 2 ? 70001u : max ? 65535u : 65536u;
                CHECK(index == planted, "pass %d: planted %s found at %llu, expected %llu", pass,
                      max ? "maximum" : "minimum", (unsigned long long)index,
                      (unsigned long long)planted);
            }
        }

        size_t num_segments = make_offsets(offsets, max_segments, n, &rng);
        for (int max = 0; max <= 1; max++) {
            memset(values, 0x5A, num_segments * sizeof(T));
            memset(indices, 0x5A, num_segments * sizeof(uint64_t));
            size_t empty = 0;
            for (size_t s = 0; s < num_segments; s++) {
                FN(ref_arg)(in, offsets[s], offsets[s + 1], max, &want_values[s], &want_indices[s]);
                empty += offsets[s] == offsets[s + 1];
            }
            CHECK(empty > 0, "the test offsets should contain an empty segment");
            gpumst_status status =
                max ? gpumst_segmented_argmax(ctx, DT, IN, n, offsets, num_segments, values, indices)
                    : gpumst_segmented_argmin(ctx, DT, IN, n, offsets, num_segments, values, indices);
            CHECK_STATUS(status, GPUMST_OK);
            size_t bad = 0;
            for (size_t s = 0; s < num_segments; s++) {
                if (indices[s] != want_indices[s] || memcmp(&values[s], &want_values[s], sizeof(T)) != 0) {
                    if (bad++ == 0) {
                        fprintf(stderr, "  segmented_%s %s n=%zu segment %zu [%llu, %llu): got ",
                                max ? "argmax" : "argmin", STRINGIFY(SUF), n, s,
                                (unsigned long long)offsets[s], (unsigned long long)offsets[s + 1]);
                        FN(print)(stderr, values[s]);
                        fprintf(stderr, " at %llu, expected ", (unsigned long long)indices[s]);
                        FN(print)(stderr, want_values[s]);
                        fprintf(stderr, " at %llu\n", (unsigned long long)want_indices[s]);
                    }
                }
            }
            CHECK(bad == 0, "segmented_%s %s n=%zu: %zu of %zu segments wrong",
                  max ? "argmax" : "argmin", STRINGIFY(SUF), n, bad, num_segments);
        }
    }

done:
    free(in);
    free(offsets);
    free(values);
    free(want_values);
    free(indices);
    free(want_indices);
}

/* Small hand-written cases whose answers are known without a reference. */
static void FN(test_fixed)(gpumst_context *ctx)
{
    /* ties: the first index wins */
    const T ties[6] = {(T)5, (T)2, (T)9, (T)2, (T)9, (T)2};
    T value;
    uint64_t index;
    CHECK_STATUS(gpumst_argmin(ctx, DT, ties, 6, &value, &index), GPUMST_OK);
    CHECK(index == 1 && value == (T)2, "%s argmin ties: index %llu", STRINGIFY(SUF),
          (unsigned long long)index);
    CHECK_STATUS(gpumst_argmax(ctx, DT, ties, 6, &value, &index), GPUMST_OK);
    CHECK(index == 2 && value == (T)9, "%s argmax ties: index %llu", STRINGIFY(SUF),
          (unsigned long long)index);
    /* n == 0: the empty marker and the identity */
    index = 0;
    CHECK_STATUS(gpumst_argmin(ctx, DT, NULL, 0, &value, &index), GPUMST_OK);
    CHECK(index == GPUMST_EMPTY_SEGMENT && value == TMAXV, "%s argmin of nothing", STRINGIFY(SUF));
    index = 0;
    CHECK_STATUS(gpumst_argmax(ctx, DT, ties, 0, &value, &index), GPUMST_OK);
    CHECK(index == GPUMST_EMPTY_SEGMENT && value == TMINV, "%s argmax of nothing", STRINGIFY(SUF));

    /* segmented: {5,2} {} {9,2,9} {} {2} -> empty segments get the identity */
    const uint64_t offsets[6] = {0, 2, 2, 5, 5, 6};
    T values[5];
    uint64_t indices[5];
    CHECK_STATUS(gpumst_segmented_argmin(ctx, DT, ties, 6, offsets, 5, values, indices), GPUMST_OK);
    CHECK(indices[0] == 1 && indices[1] == GPUMST_EMPTY_SEGMENT && indices[2] == 3 &&
              indices[3] == GPUMST_EMPTY_SEGMENT && indices[4] == 5,
          "%s segmented_argmin indices %llu %llu %llu %llu %llu", STRINGIFY(SUF),
          (unsigned long long)indices[0], (unsigned long long)indices[1],
          (unsigned long long)indices[2], (unsigned long long)indices[3],
          (unsigned long long)indices[4]);
    CHECK(values[0] == (T)2 && values[1] == TMAXV && values[2] == (T)2 && values[3] == TMAXV &&
              values[4] == (T)2,
          "%s segmented_argmin values", STRINGIFY(SUF));
    CHECK_STATUS(gpumst_segmented_argmax(ctx, DT, ties, 6, offsets, 5, values, indices), GPUMST_OK);
    CHECK(indices[0] == 0 && indices[1] == GPUMST_EMPTY_SEGMENT && indices[2] == 2 &&
              indices[3] == GPUMST_EMPTY_SEGMENT && indices[4] == 5,
          "%s segmented_argmax indices", STRINGIFY(SUF));
    CHECK(values[0] == (T)5 && values[1] == TMINV && values[2] == (T)9 && values[3] == TMINV &&
              values[4] == (T)2,
          "%s segmented_argmax values", STRINGIFY(SUF));

    /* exclusive scans start with the identity */
    const T three[3] = {(T)4, (T)1, (T)6};
    T out[3];
    CHECK_STATUS(gpumst_scan(ctx, DT, GPUMST_MIN, GPUMST_EXCLUSIVE, three, out, 3), GPUMST_OK);
    CHECK(out[0] == TMAXV && out[1] == (T)4 && out[2] == (T)1, "%s exclusive min", STRINGIFY(SUF));
    CHECK_STATUS(gpumst_scan(ctx, DT, GPUMST_MAX, GPUMST_EXCLUSIVE, three, out, 3), GPUMST_OK);
    CHECK(out[0] == TMINV && out[1] == (T)4 && out[2] == (T)4, "%s exclusive max", STRINGIFY(SUF));
    CHECK_STATUS(gpumst_scan(ctx, DT, GPUMST_SUM, GPUMST_EXCLUSIVE, three, out, 3), GPUMST_OK);
    CHECK(out[0] == (T)0 && out[1] == (T)4 && out[2] == (T)5, "%s exclusive sum", STRINGIFY(SUF));

#if KIND != PRIM_FLOAT
    /* integer sums wrap */
    const T wrap[2] = {TMAXV, (T)1};
    CHECK_STATUS(gpumst_scan(ctx, DT, GPUMST_SUM, GPUMST_INCLUSIVE, wrap, out, 2), GPUMST_OK);
    CHECK(out[0] == TMAXV && out[1] == TMINV, "%s sum does not wrap", STRINGIFY(SUF));
#else
    /* NaN is the extreme for MIN and MAX, and sticks until the segment ends */
    const T nans[5] = {(T)3, (T)NAN, (T)1, (T)NAN, (T)0};
    T scanned[5];
    const uint8_t flags[5] = {0, 0, 1, 0, 1};
    CHECK_STATUS(gpumst_argmin(ctx, DT, nans, 5, &value, &index), GPUMST_OK);
    CHECK(index == 1 && isnan(value), "%s argmin with NaN: index %llu", STRINGIFY(SUF),
          (unsigned long long)index);
    CHECK_STATUS(gpumst_argmax(ctx, DT, nans, 5, &value, &index), GPUMST_OK);
    CHECK(index == 1 && isnan(value), "%s argmax with NaN: index %llu", STRINGIFY(SUF),
          (unsigned long long)index);
    CHECK_STATUS(gpumst_segmented_scan_flags(ctx, DT, GPUMST_MIN, GPUMST_INCLUSIVE, nans, scanned,
                                             flags, 5),
                 GPUMST_OK);
    CHECK(scanned[0] == (T)3 && isnan(scanned[1]) && scanned[2] == (T)1 && isnan(scanned[3]) &&
              scanned[4] == (T)0,
          "%s segmented min scan with NaN", STRINGIFY(SUF));
    CHECK_STATUS(gpumst_scan(ctx, DT, GPUMST_SUM, GPUMST_INCLUSIVE, nans, scanned, 5), GPUMST_OK);
    CHECK(scanned[0] == (T)3 && isnan(scanned[1]) && isnan(scanned[4]), "%s sum with NaN",
          STRINGIFY(SUF));
    /* among equal values the earlier is kept: +0 then -0 */
    const T zeros[3] = {(T)0.0, (T)-0.0, (T)1};
    CHECK_STATUS(gpumst_scan(ctx, DT, GPUMST_MIN, GPUMST_INCLUSIVE, zeros, scanned, 3), GPUMST_OK);
    CHECK(scanned[1] == 0 && !signbit(scanned[1]) && !signbit(scanned[2]),
          "%s min(+0, -0) did not keep +0", STRINGIFY(SUF));
    const T negzeros[2] = {(T)-0.0, (T)0.0};
    CHECK_STATUS(gpumst_scan(ctx, DT, GPUMST_MAX, GPUMST_INCLUSIVE, negzeros, scanned, 2), GPUMST_OK);
    CHECK(signbit(scanned[1]), "%s max(-0, +0) did not keep -0", STRINGIFY(SUF));
#endif
}

#undef FN
#undef PRIM_CAT
#undef PRIM_CAT2
