/* test_gpu_check.h — the checks of the GPU tests (test_gpu_kernels.c, test_gpu_pairs_sums.c,
 * test_gpu_scan.c): every check is counted against a case (what is tested, dtype, n, data), a
 * failure prints one line "FAIL case=... dtype=... n=... dist=...: message" (the first
 * MAX_PRINTED), and a failing GPU call prints the backend's last_error; xmalloc for their host
 * buffers. The host unit tests use test_check.h.
 * Include once, in the test's one source file; G is the CUDA backend under test. */
#ifndef TEST_GPU_CHECK_H
#define TEST_GPU_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuprim/kernels.h"

#define MAX_PRINTED 300 /* failure lines printed (all are counted) */

static const gp_backend *G;
static long long g_pass, g_fail, g_printed;

typedef struct tcase {
    const char *name; /* what is tested */
    gp_dtype t;
    int64_t n;
    const char *dist;
} tcase;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void failf(const tcase *c, const char *fmt, ...)
{
    g_fail++;
    if (g_printed++ >= MAX_PRINTED) {
        if (g_printed == MAX_PRINTED + 1) printf("... (further failures not printed)\n");
        return;
    }
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    printf("FAIL case=%s dtype=%s n=%lld dist=%s: %s\n", c->name,
           (unsigned)c->t < GP_NDTYPES ? gp_dtype_name(c->t) : "-", (long long)c->n, c->dist,
           what);
    fflush(stdout);
}

/* Host memory of `bytes` bytes (at least 1), or exit(2) with one line on stderr. */
static inline void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "test: out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

/* Counts a check: passes when cond, else prints a failure line. */
#define CHECK(c, cond, ...)                                                                 \
    do {                                                                                    \
        if (cond) g_pass++;                                                                 \
        else failf((c), __VA_ARGS__);                                                       \
    } while (0)

/* A GP_* call on the GPU backend that must succeed; on failure prints last_error and
 * evaluates the statement `onfail`. */
#define GPU_OK(c, call, onfail)                                                             \
    do {                                                                                    \
        int rc_ = (call);                                                                   \
        if (rc_ != GP_OK) {                                                                 \
            failf((c), "%s returned %d: %s", #call, rc_, G->last_error());                  \
            onfail;                                                                         \
        }                                                                                   \
    } while (0)

#endif /* TEST_GPU_CHECK_H */
