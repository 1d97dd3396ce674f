/* test_fnslice.c — the function job's trapezoid rule in slices (src/fnslice.h): on the CPU
 * backend the sliced sum has the bits of one be->trap_fn call over the same range, for
 * ranges that start anywhere, end anywhere and hold 0 to 40 slices of several sizes, every
 * function, both end weights; the slice size rule; the estimate's arithmetic and the
 * warning's text against hand-worked values; and that the sliced run writes the warning line
 * exactly when its estimate exceeds the limit. No MPI. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnslice.h"
#include "gpuprim/kernels.h"
#include "test_check.h"

/* everything written to f */
static const char *contents(FILE *f)
{
    static char buf[4096];
    fflush(f);
    rewind(f);
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    buf[got] = '\0';
    return buf;
}

static void slice_rule(void)
{
    CHECK(gp_fn_slice(0) == 8192 && gp_fn_slice(8191) == 8192 && gp_fn_slice(8192) == 8192,
          "at least 2 chunks of 4096");
    CHECK(gp_fn_slice(16383) == 8192 && gp_fn_slice(16384) == 16384 &&
              gp_fn_slice(3 * 4096) == 8192, "rounded down to 4096 * 2^k");
    CHECK(gp_fn_slice(GP_FN_SLICE_CPU) == GP_FN_SLICE_CPU &&
              gp_fn_slice(GP_FN_SLICE_GPU) == GP_FN_SLICE_GPU, "the programs' sizes are kept");
}

/* sliced against one call on the CPU backend, bit for bit */
static void same_bits(void)
{
    const gp_backend *be = gp_backend_cpu();
    const int64_t n = 1000003; /* points 0..n; the end weights at 0 and n */
    const double a = -1.25, h = 2.5 / (double)n;
    static const int64_t slices[] = {8192, 16384, 3 * 4096, 65536};
    static const int64_t ranges[][2] = {
        {0, 1000004},       /* the whole rule: both half-weight ends */
        {0, 8192},          /* exactly one slice: one call */
        {0, 8193},          /* one slice and one point */
        {17, 17 + 5 * 8192},/* whole slices, not from 0 */
        {1, 300001},        /* many slices and a partial one */
        {999000, 1000004},  /* the end, shorter than a slice */
        {500000, 500000},   /* empty */
        {123457, 123457 + 40 * 16384 + 4095}};
    for (int f = 0; f < GP_NFUNCS; f++)
        for (size_t si = 0; si < sizeof slices / sizeof slices[0]; si++)
            for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
                const int64_t i0 = ranges[r][0], i1 = ranges[r][1];
                double one = -7.0, sliced = -8.0;
                const int rc1 = be->trap_fn((gp_func)f, a, h, n, i0, i1, &one);
                const int rc2 = gp_trap_fn_sliced(be, (gp_func)f, a, h, n, i0, i1, slices[si], NULL,
                                                  &sliced);
                CHECK(rc1 == GP_OK && rc2 == GP_OK && memcmp(&one, &sliced, sizeof one) == 0,
                      "f %d slice %lld [%lld, %lld): one call %a, sliced %a (rc %d %d)", f,
                      (long long)slices[si], (long long)i0, (long long)i1, one, sliced, rc1, rc2);
            }
    /* a bad range is the backend's error, as one call's */
    double w = 0.0;
    CHECK(gp_trap_fn_sliced(be, GP_FN_SIN, a, h, n, 0, n + 3, 8192, NULL, &w) != GP_OK,
          "a range past n + 1: the backend's error");
}

static void estimate_text(void)
{
    CHECK(gp_fn_estimate(2.0, 25, 100) == 8.0, "a quarter in 2 s: 8 s in all");
    CHECK(gp_fn_estimate(1.0, (int64_t)1 << 26, (int64_t)1 << 53) == (double)((int64_t)1 << 27),
          "2^26 of 2^53 points in 1 s: 2^27 s");
    CHECK(gp_fn_estimate(0.0, 5, 100) == -1.0 && gp_fn_estimate(1.0, 0, 100) == -1.0,
          "no sample: unknown");
    char buf[400];
    gp_fn_long_warning(buf, sizeof buf, "sin", (int64_t)1 << 53, 2.3 * 365.25 * 86400, 1.04, 9.5e7);
    CHECK(strcmp(buf, "--function sin --n 9007199254740992 would take about 2.3 years "
                      "(estimated from its first 1.0 s: 95.0 million points/s on this rank); "
                      "stop it (Ctrl-C) and lower --n, or use more ranks") == 0,
          "the warning: %s", buf);
    gp_fn_long_warning(buf, sizeof buf, "gauss", 5000000000, 5400.0, 1.5, 1e6);
    CHECK(strstr(buf, "--n 5000000000 would take about 90 min ") != NULL, "90 min: %s", buf);
}

/* the sliced run on the CPU backend writes the warning line once when its estimate exceeds
 * the limit (here a sample of 0 s: the first slice), and none when it does not */
static void warning_line(void)
{
    const gp_backend *be = gp_backend_cpu();
    const int64_t n = 400000;
    double w = 0.0;
    FILE *f = tmpfile();
    gp_fn_warn warn = {f, "sin", n, 0.0, 1e-9};
    CHECK(gp_trap_fn_sliced(be, GP_FN_SIN, 0.0, 1.0 / (double)n, n, 0, n + 1, 8192, &warn, &w) ==
              GP_OK, "warned run");
    const char *s = contents(f);
    int lines = 0;
    const char *head = "gpuprim_mpi: warning: --function sin --n 400000 would take about ";
    for (const char *p = strstr(s, head); p; p = strstr(p + 1, "gpuprim_mpi: warning: ")) lines++;
    CHECK(lines == 1 && strstr(s, "million points/s on this rank); stop it (Ctrl-C)") &&
              s[strlen(s) - 1] == '\n', "one warning line:\n%s", s);
    fclose(f);
    f = tmpfile();
    warn = (gp_fn_warn){f, "sin", n, 0.0, 3600.0};
    gp_trap_fn_sliced(be, GP_FN_SIN, 0.0, 1.0 / (double)n, n, 0, n + 1, 8192, &warn, &w);
    CHECK(contents(f)[0] == '\0', "no warning under the limit: %s", contents(f));
    fclose(f);
    f = tmpfile();
    warn = (gp_fn_warn){f, "sin", n, 0.0, 1e-9};
    gp_trap_fn_sliced(be, GP_FN_SIN, 0.0, 1.0 / (double)n, n, 0, 5000, 8192, &warn, &w);
    CHECK(contents(f)[0] == '\0', "no estimate for a range of one call: %s", contents(f));
    fclose(f);
}

int main(void)
{
    slice_rule();
    same_bits();
    estimate_text();
    warning_line();
    return gp_check_done("test_fnslice");
}
