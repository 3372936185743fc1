/*
 * Minimal assertion helpers shared by the ffi-tests programs (C11 and C++17).
 *
 * CHECK(cond, fmt, ...) counts a pass or prints the failure with its location and
 * continues, so one run reports every broken check. Call check_summary() at the end
 * of main: it prints "<name>: N checks passed, M failed" and returns the exit code.
 */
#ifndef GPUMST_FFI_TESTS_CHECK_H
#define GPUMST_FFI_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

#include "gpumst.h"

static unsigned long check_passed;
static unsigned long check_failed;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (cond) {                                                               \
            check_passed++;                                                       \
        } else {                                                                  \
            check_failed++;                                                       \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
        }                                                                         \
    } while (0)

/* A status equals what was expected; prints both names otherwise. */
#define CHECK_STATUS(got, want)                                                   \
    do {                                                                          \
        gpumst_status check_got_ = (got);                                         \
        gpumst_status check_want_ = (want);                                       \
        CHECK(check_got_ == check_want_, "status %d (%s), expected %d (%s)",      \
              (int)check_got_, gpumst_status_string(check_got_),                  \
              (int)check_want_, gpumst_status_string(check_want_));               \
    } while (0)

/* A string contains a substring. */
#define CHECK_CONTAINS(text, needle)                                              \
    do {                                                                          \
        const char *check_text_ = (text);                                         \
        const char *check_needle_ = (needle);                                     \
        CHECK(check_text_ != NULL && strstr(check_text_, check_needle_) != NULL,  \
              "\"%s\" does not contain \"%s\"",                                   \
              check_text_ ? check_text_ : "(null)", check_needle_);               \
    } while (0)

/* A context on the CPU tier with two threads, or NULL (a failed check) if none opens. */
static inline gpumst_context *open_cpu_context(void)
{
    gpumst_options options;
    gpumst_options_init(&options);
    options.tier = GPUMST_TIER_CPU;
    options.cpu_threads = 2;
    gpumst_context *ctx = NULL;
    char why[256];
    CHECK_STATUS(gpumst_context_create(&options, &ctx, why, sizeof why), GPUMST_OK);
    if (!ctx)
        fprintf(stderr, "could not open a CPU context: %s\n", why);
    return ctx;
}

static int check_summary(const char *name)
{
    printf("%s: %lu checks passed, %lu failed\n", name, check_passed, check_failed);
    fflush(stdout);
    return check_failed == 0 && check_passed > 0 ? 0 : 1;
}

#endif /* GPUMST_FFI_TESTS_CHECK_H */
