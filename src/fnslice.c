/* fnslice.c — the function job's trapezoid rule in slices, with its progress and its
 * estimate (fnslice.h). */
#define _POSIX_C_SOURCE 200809L
#include "fnslice.h"

#include <stdio.h>
#include <time.h>

#include "progress.h"
#include "psum.h"

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t gp_fn_slice(int64_t slice)
{
    int64_t s = (int64_t)GP_CPU_CHUNK * 2;
    while (s <= slice / 2) s *= 2;
    return s;
}

double gp_fn_estimate(double elapsed, int64_t done, int64_t total)
{
    if (done <= 0 || !(elapsed > 0.0)) return -1.0;
    return elapsed * ((double)total / (double)done);
}

const char *gp_fn_long_warning(char *buf, size_t len, const char *func, int64_t n,
                               double estimate_s, double elapsed, double rate)
{
    char d[32];
    snprintf(buf, len, "--function %s --n %lld would take about %s (estimated from its first "
             "%.1f s: %.1f million points/s on this rank); stop it (Ctrl-C) and lower --n, or "
             "use more ranks", func, (long long)n, gp_progress_duration(estimate_s, d, sizeof d),
             elapsed, rate / 1e6);
    return buf;
}

/* The estimate after a slice: once the sample time has passed, one warning line when the
 * whole would take longer than the limit. Returns 1 when the estimate was made. */
static int estimate(const gp_fn_warn *w, double elapsed, int64_t done, int64_t total)
{
    if (elapsed < w->sample_s && done < total) return 0;
    const double est = gp_fn_estimate(elapsed, done, total);
    if (est > w->limit_s) {
        char line[400];
        fprintf(w->out, "gpuprim_mpi: warning: %s\n",
                gp_fn_long_warning(line, sizeof line, w->func, w->n, est, elapsed,
                                   (double)done / elapsed));
        fflush(w->out);
    }
    return 1;
}

int gp_trap_fn_sliced(const gp_backend *be, gp_func f, double a, double h, int64_t n,
                      int64_t i0, int64_t i1, int64_t slice, const gp_fn_warn *warn,
                      double *wsum)
{
    const int64_t s = gp_fn_slice(slice);
    int lvl = 0; /* a full slice covers 2^lvl chunks */
    while (((int64_t)GP_CPU_CHUNK << lvl) < s) lvl++;
    gp_progress_work(i1 - i0);
    const double t0 = mono();
    int estimated = !warn || !warn->out;
    if (i1 - i0 <= s) { /* one call, as before slices existed */
        const int rc = be->trap_fn(f, a, h, n, i0, i1, wsum);
        gp_progress_add(i1 - i0);
        return rc;
    }
    psum acc;
    psum_init(&acc);
    for (int64_t lo = i0; lo < i1; lo += s) {
        const int64_t hi = i1 - lo > s ? lo + s : i1;
        double w = 0.0;
        const int rc = be->trap_fn(f, a, h, n, lo, hi, &w);
        if (rc != GP_OK) return rc;
        /* a full slice is a piece of 2^lvl chunks; the last, shorter one ends the sum (its
         * own partials are folded already, as one call folds them at its end) */
        psum_push_level(&acc, w, hi - lo == s ? lvl : -1);
        gp_progress_add(hi - lo);
        if (!estimated) estimated = estimate(warn, mono() - t0, hi - i0, i1 - i0);
    }
    *wsum = psum_total(&acc);
    return GP_OK;
}
