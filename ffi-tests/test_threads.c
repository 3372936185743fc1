/*
 * Concurrency: 4 pthreads call gpumst_scan (and a few other functions) on the same
 * context at once, each with its own data, released together by a barrier. Every
 * result is checked against a sequential reference.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpumst.h"

#define THREADS 4
#define ITERATIONS 4

static gpumst_context *ctx;
static pthread_barrier_t barrier;

struct job {
    int id;
    size_t n;
    unsigned long failures; /* counted per thread, merged after join (CHECK is not thread-safe) */
    char first_failure[256];
};

static void fail(struct job *job, const char *fmt, size_t a, size_t b)
{
    if (job->failures++ == 0)
        snprintf(job->first_failure, sizeof job->first_failure, fmt, a, b);
}

static int64_t min64(int64_t a, int64_t b) { return b < a ? b : a; }
static int64_t max64(int64_t a, int64_t b) { return b > a ? b : a; }

static void *worker(void *arg)
{
    struct job *job = arg;
    size_t n = job->n;
    int64_t *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out), *want = malloc(n * sizeof *want);
    if (in == NULL || out == NULL || want == NULL) {
        fail(job, "malloc of %zu elements failed (%zu)", n, 0);
        pthread_barrier_wait(&barrier);
        goto done;
    }
    uint64_t state = 0x1234567ull * (uint64_t)(job->id + 1);
    for (size_t i = 0; i < n; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        in[i] = (int64_t)(state >> 3) - (int64_t)(UINT64_C(1) << 59) + job->id;
    }

    pthread_barrier_wait(&barrier);
    for (int iter = 0; iter < ITERATIONS; iter++) {
        gpumst_scan_op op = (gpumst_scan_op)((job->id + iter) % 3);
        gpumst_scan_kind kind = (gpumst_scan_kind)(iter % 2);
        /* reference */
        uint64_t sum = 0;
        int64_t acc = op == GPUMST_MIN ? INT64_MAX : op == GPUMST_MAX ? INT64_MIN : 0;
        for (size_t i = 0; i < n; i++) {
            int64_t next = op == GPUMST_SUM   ? (int64_t)(sum += (uint64_t)in[i])
                           : op == GPUMST_MIN ? min64(acc, in[i])
                                              : max64(acc, in[i]);
            want[i] = kind == GPUMST_INCLUSIVE ? next : acc;
            acc = next;
        }
        memset(out, 0, n * sizeof *out);
        int in_place = iter == ITERATIONS - 1;
        if (in_place)
            memcpy(out, in, n * sizeof *out);
        gpumst_status status =
            gpumst_scan(ctx, GPUMST_I64, op, kind, in_place ? out : in, out, (uint64_t)n);
        if (status != GPUMST_OK)
            fail(job, "gpumst_scan returned %zu (iteration %zu)", (size_t)status, (size_t)iter);
        else if (memcmp(out, want, n * sizeof *out) != 0) {
            size_t i = 0;
            while (out[i] == want[i])
                i++;
            fail(job, "scan result differs at index %zu (iteration %zu)", i, (size_t)iter);
        }

        /* interleave an arg-reduction and a failing call */
        int64_t value = 0;
        uint64_t index = 0;
        if (gpumst_argmax(ctx, GPUMST_I64, in, (uint64_t)n, &value, &index) != GPUMST_OK)
            fail(job, "gpumst_argmax failed (n=%zu, iteration %zu)", n, (size_t)iter);
        else {
            size_t best = 0;
            for (size_t i = 1; i < n; i++)
                if (in[i] > in[best])
                    best = i;
            if (index != best || value != in[best])
                fail(job, "argmax index %zu, expected %zu", (size_t)index, best);
        }
        if (gpumst_scan(ctx, 100 + job->id, GPUMST_SUM, GPUMST_INCLUSIVE, in, out, (uint64_t)n) !=
            GPUMST_INVALID_ARGUMENT)
            fail(job, "bad dtype accepted (thread %zu, iteration %zu)", (size_t)job->id, (size_t)iter);
    }
done:
    free(in);
    free(out);
    free(want);
    return NULL;
}

int main(void)
{
    char error[256] = "";
    /* Default options: tier AUTO (the CPU here), all cores. */
    CHECK_STATUS(gpumst_context_create(NULL, &ctx, error, sizeof error), GPUMST_OK);
    if (ctx == NULL) {
        fprintf(stderr, "cannot create a context: %s\n", error);
        return check_summary("test_threads") | 1;
    }
    CHECK(pthread_barrier_init(&barrier, NULL, THREADS) == 0, "pthread_barrier_init");

    pthread_t threads[THREADS];
    struct job jobs[THREADS];
    for (int t = 0; t < THREADS; t++) {
        memset(&jobs[t], 0, sizeof jobs[t]);
        jobs[t].id = t;
        jobs[t].n = 100003 - (size_t)t * 7919; /* different lengths: all cross chunk boundaries */
        CHECK(pthread_create(&threads[t], NULL, worker, &jobs[t]) == 0, "pthread_create %d", t);
    }
    for (int t = 0; t < THREADS; t++) {
        CHECK(pthread_join(threads[t], NULL) == 0, "pthread_join %d", t);
        CHECK(jobs[t].failures == 0, "thread %d: %lu failures, first: %s", t, jobs[t].failures,
              jobs[t].first_failure);
    }
    pthread_barrier_destroy(&barrier);

    /* The concurrent failing calls left one of their messages. */
    char message[256];
    gpumst_context_last_error(ctx, message, sizeof message);
    CHECK_CONTAINS(message, "is not a gpumst_dtype");
    CHECK_CONTAINS(message, "gpumst_scan");

    gpumst_context_destroy(ctx);
    return check_summary("test_threads");
}
