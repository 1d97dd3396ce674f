/* test_check.h — the one CHECK of the host unit tests (tests/test_*.c), one translation unit
 * each:
 *   - CHECK(cond, printf-args...): an expression, 1 when cond holds (counted in g_pass),
 *     else 0, counted in g_fail, with one line on stdout, "FAIL file:line: [context]
 *     message" (the first GP_CHECK_PRINT_MAX failures; the count goes on);
 *   - CTX(printf-args...): the context (g_ctx) printed with the failures that follow, such as
 *     the case or the rank; empty at the start;
 *   - xmalloc(bytes): zeroed memory, or exit 2;
 *   - main() ends with gp_check_done(NAME): "NAME: N passed, N failed" (NAME may be NULL),
 *     and exits with what it returns, 1 when a check failed, else 0.
 * The fuzz targets (tests/fuzz/) abort on the first broken invariant instead, and the GPU
 * tests (test_gpu_*.c) name each failure's case with their own CHECK(case, cond, ...). */
#ifndef GP_TEST_CHECK_H
#define GP_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef GP_CHECK_PRINT_MAX
#define GP_CHECK_PRINT_MAX 200
#endif

static long g_fail, g_pass;

/* zeroed memory of `bytes` bytes (at least 1), or exit(2) with one line on stderr */
static inline void *xmalloc(size_t bytes)
{
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p) {
        fprintf(stderr, "test: out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}
static char g_ctx[200];

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline int gp_check_at(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        g_pass++;
        return 1;
    }
    if (++g_fail <= GP_CHECK_PRINT_MAX) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        printf("FAIL %s:%d: %s%s%s%s\n", file, line, g_ctx[0] ? "[" : "", g_ctx,
               g_ctx[0] ? "] " : "", msg);
        fflush(stdout);
    }
    return 0;
}

/* Prints the counts ("NAME: N passed, N failed"; without "NAME: " for NULL); 1 when a
 * check failed, else 0. */
static inline int gp_check_done(const char *name)
{
    printf("%s%s%ld passed, %ld failed\n", name ? name : "", name ? ": " : "", g_pass, g_fail);
    return g_fail ? 1 : 0;
}

#define CHECK(cond, ...) gp_check_at((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)
#define CTX(...) snprintf(g_ctx, sizeof g_ctx, __VA_ARGS__)

#endif /* GP_TEST_CHECK_H */
